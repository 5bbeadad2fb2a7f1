"""The structure spider's link to the crawl store (``STRUCTCRAWL_DB``): open or resume a job, record each step, close.

A component built with :meth:`StoreLink.from_crawler` that reads its settings
once and raises ``NotConfigured`` without ``STRUCTCRAWL_DB`` (as
``scrapy/extensions/closespider.py`` does).  The reactor thread only queues
references for the store's writer thread (:mod:`structcrawl.store.writer`);
the time spent in these calls is measured (``structcrawl/store_enqueue_ms_*``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import NotConfigured

from structcrawl.crawling.arguments import StartError

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from structcrawl.core.explorer import Explorer
    from structcrawl.core.frontier import Batch
    from structcrawl.core.traps import TrapDetector
    from structcrawl.crawling.ledger import BatchState
    from structcrawl.store import JobSession
    from structcrawl.store.history import ReplayResult, StepHook
    from structcrawl.store.writer import StoreWriter

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Resumed:
    """What an earlier run of the job left: its replay and its counters."""

    result: ReplayResult
    seconds: float
    counters: Mapping[str, Any]
    figures: Mapping[str, Any]  #: the ``crawl`` figures of its last commit
    runs: int
    reissued: int  #: batches in flight when it stopped, handed out again

    def stats(self, explorer: Explorer, traps: TrapDetector) -> dict[str, Any]:
        """The ``structcrawl/…`` stats a resumed run starts with."""
        stats: dict[str, Any] = {
            "structcrawl/resumed_batches": self.result.completed,
            "structcrawl/resumed_pages": len(explorer.model.pages),
            "structcrawl/resume_s": round(self.seconds, 3),
            "structcrawl/reissued_batches": self.reissued,
        }
        if traps.traps or traps.echo_chains:
            stats["structcrawl/trap_shapes"] = len(traps.traps)
            stats["structcrawl/trap_echo_chains"] = traps.echo_chains
        if self.result.stable_at_pages is not None:
            at = self.figures.get("stable_at_pages")
            stats.update({
                "structcrawl/stable": True,
                "structcrawl/stable_at_pages": self.result.stable_at_pages if at is None else at,
                "structcrawl/stability_reason": explorer.stability.reason,
            })
        return stats


class StoreLink:
    def __init__(self, crawler: Crawler, db: str, *, lock_timeout: float, heartbeat: float, retries: int,
                 max_backlog: int) -> None:
        self.crawler = crawler  # its stats exist only once the crawl starts
        self.db = db
        self.lock_timeout = lock_timeout
        self.heartbeat = heartbeat
        self.retries = retries
        self.max_backlog = max_backlog
        self.session: JobSession | None = None
        self.writer: StoreWriter | None = None
        self.job = ""
        self._ms_total = 0.0
        self._ms_max = 0.0
        self._idle_noted: int | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> StoreLink:
        settings = crawler.settings
        db = settings.get("STRUCTCRAWL_DB")
        if not db:
            raise NotConfigured
        retries = settings.getint("STRUCTCRAWL_DB_RETRIES")
        if retries < 0:
            raise ValueError(f"STRUCTCRAWL_DB_RETRIES must be >= 0, got {retries}")
        return cls(
            crawler, str(db), lock_timeout=settings.getfloat("STRUCTCRAWL_DB_LOCK_TIMEOUT"),
            heartbeat=settings.getfloat("STRUCTCRAWL_DB_HEARTBEAT"), retries=retries,
            max_backlog=settings.getint("STRUCTCRAWL_DB_MAX_BACKLOG"),
        )

    # -- open / resume -------------------------------------------------------------
    def open(self, job: str, start_url: str, parameters: Mapping[str, Any], explorer: Explorer, *, fresh: bool,
             on_step: StepHook) -> Resumed | None:
        """Create or resume the job, replaying its history into ``explorer``; None for a new job.

        StartError when it cannot be crawled now (locked, finished, other parameters …).
        """
        from structcrawl.store import CrawlStore, StoreError
        from structcrawl.store.schema import redact

        self.job = job
        try:
            store = CrawlStore(self.db)
        except StoreError as exc:
            raise StartError(str(exc)) from None
        try:
            session = store.open(job, start_url, parameters, fresh=fresh, stale_after=self.lock_timeout,
                                 heartbeat=self.heartbeat, retries=self.retries)
        except StoreError as exc:
            store.dispose()
            raise StartError(str(exc)) from None
        where = redact(store.url)
        if session.lease.took_over:
            logger.warning("Job %r: took over the lock of %s", job, session.lease.took_over)
        t0 = time.perf_counter()
        try:
            result = session.restore(explorer, on_step=on_step)
        except StoreError as exc:
            session.close("stopped", "resume_failed")
            store.dispose()
            raise StartError(f"job {job!r} in {where} cannot be resumed: {exc}") from None
        elapsed = time.perf_counter() - t0
        self.session, self.writer = session, session.writer
        if not session.resumed:
            logger.info("Job %r: %s in %s", job, "started afresh" if fresh else "new", where)
            return None
        crawl = session.job.crawl or {}
        logger.info(
            "Resuming job %r from %s (run %d): %d model updates replayed in %.2f s — %d pages modelled in %d "
            "classes, %d pages requested so far; %d batch(es) in flight when it stopped are handed out again",
            job, where, session.job.runs, result.completed, elapsed, len(explorer.model.pages),
            len(explorer.model.classes), int((crawl.get("counters") or {}).get("requested", 0)),
            session.dropped_in_flight,
        )
        return Resumed(result, elapsed, crawl.get("counters") or {}, crawl.get("document") or {},
                       session.job.runs, session.dropped_in_flight)

    @property
    def next_seq(self) -> int:
        return self.session.next_seq

    # -- per-step records ------------------------------------------------------------
    @property
    def error(self) -> BaseException | None:
        return self.writer.error

    @property
    def behind(self) -> bool:
        """More operations queued for the writer than STRUCTCRAWL_DB_MAX_BACKLOG: hand out nothing new."""
        return self.writer.backlog > self.max_backlog

    def catch_up(self) -> None:
        """Wait for the writer (only when nothing is in flight: no download is stalled)."""
        self.writer.flush(timeout=300)

    def issue(self, seq: int, batch: Batch, updates: int) -> None:
        t0 = time.perf_counter()
        self.writer.issue(seq, batch.key, batch.urls, updates)
        self._timed(t0)

    def idle(self, updates: int) -> None:
        """The frontier had nothing to hand out after ``updates`` model updates (recorded once per update)."""
        if self._idle_noted != updates:
            self._idle_noted = updates
            self.writer.idle(updates)

    def step(self, state: BatchState, explorer: Explorer, merges_before: int, figures: Mapping[str, Any]) -> None:
        """Queue a model step: every page handed to it, failures, redirects, the merges it made."""
        from structcrawl.store import PageRecord

        t0 = time.perf_counter()
        page_class = explorer.model.page_class
        urls = state.batch.urls
        records = []
        for pos, url in enumerate(urls):
            feats = state.pages.get(url)
            if feats is not None:
                status, at = state.fetched.get(url, (None, None))
                records.append(PageRecord(pos, url, feats, page_class.get(feats.url), status, at))
        self.writer.complete(
            state.seq,
            records,
            [(u, state.failed[u]) for u in urls if u in state.failed],
            [(u, state.redirects[u]) for u in urls if u in state.redirects],
            dict(figures),
            [(m.kept, m.merged) for m in explorer.merges[merges_before:]],
        )
        self._timed(t0)

    def save_bodies(self, rows: list[tuple[str, str]]) -> None:
        """Store the texts of pages just chosen for the fields (a few per class, written at once: see
        :mod:`structcrawl.store.bodies`); a failure is logged and costs the stored model those fields only."""
        if not rows:
            return
        import sqlalchemy as sa

        from structcrawl.store import bodies

        t0 = time.perf_counter()
        try:
            bodies.save(self.session.store.engine, self.session.job.id, rows)
        except sa.exc.SQLAlchemyError as exc:
            logger.warning("Job %r: could not store %d page text(s) for the fields: %s", self.job, len(rows),
                           str(exc).splitlines()[0])
        self._timed(t0)

    def load_bodies(self, urls) -> dict[str, str]:
        """The stored texts of those of ``urls`` a run before this one chose."""
        from structcrawl.store import bodies

        return bodies.load(self.session.store.engine, self.session.job.id, urls)

    def _timed(self, t0: float) -> None:
        ms = (time.perf_counter() - t0) * 1000
        self._ms_total += ms
        self._ms_max = max(self._ms_max, ms)

    # -- close -------------------------------------------------------------------------
    def close(self, reason: str, figures: Mapping[str, Any]) -> None:
        """Close the job (status from the close reason), flush the writer, its figures into the stats."""
        from structcrawl.store import status_for
        from structcrawl.store.writer import LockLostError, one_line

        writer, stats = self.writer, self.crawler.stats
        status = status_for(reason)
        t0 = time.perf_counter()
        ok = self.session.close(status, reason, dict(figures))
        stats.set_value("structcrawl/store_close_s", round(time.perf_counter() - t0, 3))
        for key, value in writer.stats().items():
            stats.set_value(f"structcrawl/store_{key}", value)
        stats.set_value("structcrawl/store_enqueue_ms_total", round(self._ms_total, 3))
        stats.set_value("structcrawl/store_enqueue_ms_max", round(self._ms_max, 3))
        self.session.store.dispose()
        if ok:
            logger.info(
                "Job %r is %s (%s) in the crawl store: %d transactions, %d rows%s",
                self.job, status, reason, writer.transactions, writer.rows,
                "" if status == "finished" else "; the same command resumes it",
            )
            return
        error = one_line(writer.error)
        stats.set_value("structcrawl/store_error", error)
        if isinstance(writer.error, LockLostError):
            logger.error("Job %r: %s", self.job, writer.error)
        else:
            logger.error(
                "Job %r: the crawl store failed (%s); the job ends at its last commit and the same command "
                "resumes from there", self.job, error,
            )
