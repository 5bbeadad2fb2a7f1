"""The crawl store: crawl state in a database (SQLAlchemy 2.x; SQLite file or PostgreSQL).

Pure Python, no Scrapy import.  What is stored is the crawl's *history* —
every batch the frontier handed out and, for the completed ones, the pages
(features: links with exact XPaths and link-collection paths, tag paths),
failures and redirects that went into its model step — because the model step
is deterministic: replaying the history rebuilds the model, the frontier and
the stability state exactly (:mod:`structcrawl.store.history`).

Typical use (what the ``structure`` spider does)::

    store = CrawlStore("sqlite:///shop.db")
    session = store.open("shop", seed_url, parameters)      # creates the job or takes its lock
    explorer = explorer_for(seed_url, parameters)
    result = session.restore(explorer)                       # resume: replay the committed history
    writer = session.writer                                  # then, per batch:
    writer.issue(seq, batch.key, batch.urls, explorer.updates)
    ... explorer.complete(...) ...
    writer.complete(seq, [PageRecord(...)], failed, redirects, crawl_figures)
    session.close("finished", "model_stable", crawl_figures)

and ``CrawlStore(url).export_document("shop")`` gives the site model JSON of
the stored state, the same document the spider writes at close.
"""

from __future__ import annotations

from typing import Any, Mapping

import sqlalchemy as sa

from structcrawl.store import schema
from structcrawl.store.history import (
    ReplayError,
    ReplayResult,
    StoredBatch,
    Vocabulary,
    explorer_for,
    iter_batches,
    replay,
)
from structcrawl.store.jobs import (
    DEFAULT_HEARTBEAT,
    DEFAULT_STALE_AFTER,
    FINISHED,
    FINISHED_REASONS,
    HARVEST_KIND,
    RUNNING,
    STOPPED,
    JobFinishedError,
    JobInfo,
    JobLockedError,
    JobMismatchError,
    Lease,
    NoSuchJobError,
    acquire,
    get_job,
    job_counts,
    list_jobs,
    lock_state,
)
from structcrawl.store.schema import SCHEMA_VERSION, SchemaVersionError, StoreError, make_engine, redact
from structcrawl.store.writer import DEFAULT_RETRIES, LockLostError, PageRecord, StoreWriter

__all__ = [
    "CrawlStore", "JobSession", "PageRecord", "StoreWriter", "StoreError", "SchemaVersionError",
    "JobLockedError", "JobFinishedError", "JobMismatchError", "NoSuchJobError", "LockLostError", "ReplayError",
    "ReplayResult", "StoredBatch", "JobInfo", "explorer_for", "replay", "status_for", "SCHEMA_VERSION",
    "RUNNING", "STOPPED", "FINISHED", "DEFAULT_STALE_AFTER", "DEFAULT_HEARTBEAT", "lock_state",
]


def status_for(reason: str | None) -> str:
    """Job status after a crawl closed with ``reason``: finished, or stopped (resumable)."""
    return FINISHED if reason in FINISHED_REASONS else STOPPED


def find_job(conn: sa.Connection, url: str, name: str | None) -> JobInfo:
    """The job called ``name`` in the database ``url`` (for messages); without a name, its only
    structure crawl: a harvest job beside it (``structcrawl harvest --db``) has no site model to
    export or cluster."""
    if name is None:
        jobs = schema.jobs
        names = list(conn.execute(sa.select(jobs.c.name).where(jobs.c.strategy != HARVEST_KIND)
                                  .order_by(jobs.c.name)).scalars())
        if len(names) != 1:
            what = "no structure crawls" if not names else f"{len(names)} structure crawls ({', '.join(names)})"
            raise NoSuchJobError(f"{redact(url)} holds {what}: name one with --job")
        name = names[0]
    info = get_job(conn, name)
    if info is None:
        raise NoSuchJobError(f"no job {name!r} in {redact(url)} (see `structcrawl jobs --db URL`)")
    return info


class CrawlStore:
    """A database holding crawl jobs."""

    def __init__(self, url: str, *, create: bool = True) -> None:
        self.url = schema.normalize_db_url(url)
        self.engine = make_engine(self.url)
        try:
            schema.ensure_schema(self.engine, create=create)
        except BaseException:
            self.engine.dispose()
            raise

    def __repr__(self) -> str:
        return f"CrawlStore({redact(self.url)!r})"

    def dispose(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> "CrawlStore":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.dispose()

    # -- jobs ------------------------------------------------------------------------
    def jobs(self) -> list[JobInfo]:
        return list_jobs(self.engine)

    def job(self, name: str | None = None) -> JobInfo:
        """The job called ``name``; without a name, the only job of the database."""
        with self.engine.connect() as conn:
            info = find_job(conn, self.url, name)
            info.counts = job_counts(conn, info.id)
        return info

    def open(self, name: str, seed_url: str, parameters: Mapping[str, Any], *, fresh: bool = False,
             stale_after: float = DEFAULT_STALE_AFTER, heartbeat: float = DEFAULT_HEARTBEAT,
             retries: int = DEFAULT_RETRIES) -> "JobSession":
        """Create job ``name`` or take its lock (resume); see :func:`structcrawl.store.jobs.acquire`.
        ``retries``: how often the writer retries a transaction the database refused."""
        lease = acquire(self.engine, name, seed_url, parameters, fresh=fresh, stale_after=stale_after)
        return JobSession(self, lease, heartbeat=heartbeat, retries=retries)

    # -- reading -------------------------------------------------------------------------
    def rebuild(self, name: str | None = None, *, include_issued: bool = True, on_step=None):
        """(job, explorer, replay result) of the stored state, without taking the lock."""
        info = self.job(name)
        if info.parameters.get("kind") == HARVEST_KIND:
            raise StoreError(f"job {info.name!r} is a harvest, not a structure crawl: it has no site model "
                             "(its pages went to its feed)")
        explorer = explorer_for(info.seed_url, info.parameters)
        with self.engine.connect() as conn:
            vocab = Vocabulary(conn, info.id)
            idle = conn.execute(sa.select(schema.jobs.c.idle_after).where(schema.jobs.c.id == info.id)).scalar()
            result = replay(explorer, iter_batches(conn, info.id, vocab), include_issued=include_issued,
                            idle_after=idle, on_step=on_step(explorer) if on_step else None)
        return info, explorer, result

    def export_document(self, name: str | None = None, members: bool | None = None) -> dict[str, Any]:
        """The site model document of the stored state: what the spider's export gives for that state.

        ``members``: include member URLs; None means as the job was configured.
        The crawl figures are those of the job's last commit (``sc_jobs.crawl``:
        ``{"document": …, "counters": …}``); the export knobs and the extra
        parameters come from the job's parameters (``"document"``).
        """
        from structcrawl.sitemodel import DEFAULT_FIELD_PAGES, PageBodies, PageTitles, TagPathSamples, model_document
        from structcrawl.store import bodies as stored_bodies

        info = self.job(name)
        doc = dict(info.parameters.get("document") or {})
        samples = TagPathSamples(int(doc.get("fingerprint_pages", 100)))
        field_pages = int(doc.get("field_pages", DEFAULT_FIELD_PAGES))
        chosen = PageBodies(field_pages)
        titles = PageTitles()
        own: list[bool] = []

        def hook(explorer):
            # as the spider does: the explorer's own member tag paths when it keeps them
            own.append(isinstance(getattr(explorer, "tag_paths", None), dict))

            def keep(sb: StoredBatch, _report) -> None:
                # read at every step, as the spider does: a model step may replace the page -> class map
                # (a reference taken once went stale, and the export chose other pages than the crawl)
                page_class = explorer.model.page_class
                titles.keep(sb.pages)
                if not own[0]:
                    samples.keep(sb.pages, page_class)
                chosen.keep([f.url for f in sb.pages], page_class)

            return keep

        info, explorer, result = self.rebuild(info.name, include_issued=True, on_step=hook)
        crawl = dict((info.crawl or {}).get("document") or {})
        crawl.setdefault("job", info.name)
        kwargs: dict[str, Any] = {}
        for key in ("samples", "fingerprint_pages", "occurrence"):
            if key in doc:
                kwargs[key] = doc[key]
        texts = stored_bodies.load(self.engine, info.id, chosen.texts)
        return model_document(
            explorer,
            crawl=crawl,
            parameters=doc.get("parameters"),
            tag_paths=None if own and own[0] else samples,
            members=bool(doc.get("members", False)) if members is None else members,
            bodies=texts,
            field_pages=field_pages,
            titles=titles,
            **kwargs,
        )


class JobSession:
    """A job whose lock this process holds: restore its state, then write through :attr:`writer`."""

    def __init__(self, store: CrawlStore, lease: Lease, heartbeat: float = DEFAULT_HEARTBEAT,
                 retries: int = DEFAULT_RETRIES) -> None:
        self.store = store
        self.lease = lease
        self.job = lease.job
        self.resumed = lease.resumed
        # the writer starts at once: its heartbeat keeps the lock fresh during a long replay
        self.writer = StoreWriter(store.engine, lease.job.id, lease.token, heartbeat=heartbeat, retries=retries)
        self.next_seq = 0
        self.dropped_in_flight = 0  #: batches in flight when the last run stopped (handed out again)

    @property
    def name(self) -> str:
        return self.job.name

    def restore(self, explorer, on_step=None) -> ReplayResult:
        """Bring a fresh ``explorer`` to the committed state of the job (nothing to do for a new job).

        Batches left ``issued`` (in flight when the last run stopped) are deleted first,
        so the frontier hands their URLs out again.
        """
        engine, job_id = self.store.engine, self.job.id
        b = schema.batches
        with engine.begin() as conn:
            ours = conn.execute(
                sa.select(schema.jobs.c.lock_token).where(schema.jobs.c.id == job_id)
            ).scalar() == self.lease.token
            if not ours:
                raise LockLostError(f"job {self.name!r}: lost the lock before restoring it")
            self.dropped_in_flight = conn.execute(
                sa.delete(b).where(b.c.job_id == job_id, b.c.state == "issued")
            ).rowcount or 0
            # the empty pop it recorded saw those batches popped: forget it
            conn.execute(sa.update(schema.jobs).where(schema.jobs.c.id == job_id).values(idle_after=None))
        with engine.connect() as conn:
            vocab = Vocabulary(conn, job_id)
            result = replay(explorer, iter_batches(conn, job_id, vocab), include_issued=False, on_step=on_step)
        self.writer.set_dictionaries(vocab.dictionaries(), vocab.next_page_id)
        self.next_seq = result.last_seq + 1
        return result

    def close(self, status: str, stop_reason: str | None, crawl: Mapping[str, Any] | None = None,
              timeout: float | None = None) -> bool:
        """Commit what is queued, set the job's status and release the lock."""
        return self.writer.close(status, stop_reason, crawl, timeout=timeout)
