"""The ``structure`` spider: the Compute-Model loop of Crescenzi et al. behind Scrapy.

    scrapy crawl structure -a start_url=http://127.0.0.1:8000/ [-a strategy=densest|sparsest]
        [-a max_pages=N] [-a batch=10] [-a stop=stable|exhaust] [-a job=NAME] [-a members=true]
        [-a fresh=true] -s STRUCTCRAWL_MODEL_OUT=model.json [-s STRUCTCRAWL_DB=sqlite:///shop.db]

How the crawl is driven
-----------------------
The :class:`~structcrawl.core.explorer.Explorer` (pure core) owns the site model and
the frontier; this spider only turns its batches into Requests and responses
into page features.  Everything is event-driven, on Scrapy's own mechanisms:

* **Requests** are handed to the engine (``crawler.engine.crawl``) as soon as
  the frontier pops a batch — the seed comes from :meth:`start`.  Each request
  gets ``priority = -batch_number``, so Scrapy's scheduler (its priority queue)
  downloads the frontier's choices in the order the frontier made them, and
  carries ``meta["structcrawl"] = (batch_number, url)``.
* **Keeping the downloader busy**: batches are popped while fewer than
  ``STRUCTCRAWL_MAX_INFLIGHT`` (default 2 × CONCURRENT_REQUESTS) popped URLs
  are still waiting to go into the model, so several link collections are in
  flight at once; Scrapy's concurrency limits, download delays and AutoThrottle
  decide how fast they are actually fetched.
* **Model updates in frontier order**: a batch's model step
  (``Explorer.complete``) runs when every one of its URLs is accounted for and
  every earlier batch has had its step; pages enter the model in the order
  the frontier listed them, and the in-flight budget is topped up right after
  each step.  What the frontier hands out thus depends only on the steps so
  far, so the model evolves the same way whatever order the network answers
  in (barring races between a redirect and a direct link to one page).
* **Every issued URL is accounted for exactly once**: the callback (HTML page,
  or non-HTML: skipped), the errback (HTTP errors, download errors, robots.txt
  and offsite ``IgnoreRequest``, max redirections), the ``request_dropped``
  signal (the dupefilter dropped a redirect to an already-seen page, or a
  second spelling of one), and this spider's ``request_scheduled`` handler,
  which refuses redirects out of scope with ``IgnoreRequest`` (the offsite
  middleware would drop them silently).  As a last resort, on ``spider_idle``
  — when nothing is left in Scrapy at all — URLs still unaccounted for are
  marked failed, so a batch can never block the crawl.
* **Idle and close**: ``spider_idle`` tops up and raises ``DontCloseSpider``
  while there is work; once the stability rule fires (``stop=stable``) the
  spider closes with reason ``model_stable`` (``CloseSpider`` from a callback,
  or ``engine.close_spider_async`` from a signal handler) and logs why; an
  empty frontier ends with Scrapy's ``finished``; ``max_pages`` with
  ``max_pages``; Scrapy's CLOSESPIDER_* extensions work as usual.  On close the
  model is written as JSON (:mod:`structcrawl.sitemodel`).

Crawl state in a database (``STRUCTCRAWL_DB``)
----------------------------------------------
With ``-s STRUCTCRAWL_DB=URL`` (``sqlite:///shop.db``, a bare file path, or
``postgresql+psycopg://…``) the crawl is a *job* (``-a job=NAME``, default the
start URL's host) in that database (:mod:`structcrawl.store`): every batch
handed out and every model step's pages, links, failures and redirects are
written by the store's writer thread — the reactor only queues references,
and each drain of the queue is one transaction — so a crash or kill -9 leaves
a consistent job.  The same command again resumes it: the committed history is
replayed into the explorer (same model, frontier and stability state), the
batches that were in flight are handed out again, and nothing committed is
fetched again (redirects to pages fetched by an earlier run are dropped as the
dupefilter would).  A finished job (``model_stable``, ``finished``) says so
and exits; ``-a fresh=true`` starts it over; one stopped by a ceiling
(``max_pages``, ``closespider_timeout``) resumes.  A database that fails
mid-crawl (after STRUCTCRAWL_DB_RETRIES retries) closes the crawl with reason
``store_error``: the job keeps its last commit and the same command resumes it.  A job
crawled by another live process is refused (the lock survives crashes: a dead
process's lock, or one without heartbeat for ``STRUCTCRAWL_DB_LOCK_TIMEOUT``
seconds, is taken over).  Those start-up errors are one ERROR line and exit
status 2.  Without ``STRUCTCRAWL_DB`` nothing is stored.

Stats (Scrapy's stats collector)
--------------------------------
``structcrawl/pages_requested`` (URLs handed to Scrapy), ``/pages_fetched``
(responses), ``/pages_refused`` (refused with no download: robots.txt, offsite, traps, URLLENGTH_LIMIT), ``/pages_modelled``, ``/pages_failed`` and ``/failed/<why>``
(``http_404``, ``robots_txt``, ``non_html``, ``redirect_off_site``,
``offsite``, ``trap``, ``url_too_long``, ``lost``, download error names …),
``/trap_shapes`` and ``/trap_echo_chains`` (spider traps found, see
:mod:`structcrawl.core.traps`; their URLs are refused, never downloaded), ``/redirects``,
``/duplicates`` (dropped by the dupefilter), ``/batches``,
``/model_updates``, ``/classes``, ``/classes_created``, ``/mdl_bits``,
``/model_bits``, ``/data_bits``, ``/queue_urls``, ``/inflight``,
``/quiet_checks``, ``/stability_window``, ``/stable``, ``/stable_at_pages``,
``/stable_at_requests``, ``/stability_reason``, ``/model_step_max_ms``,
``/model_step_total_s``, ``/close_reason``, ``/model_out``,
``/model_written`` (or ``/export_error``), and the run's ``/start_url``,
``/strategy``, ``/stop``.  With a store: ``/store_enqueue_ms_total`` and
``/store_enqueue_ms_max`` (reactor-thread time in the store's calls),
``/store_transactions``, ``/store_rows``, ``/store_txn_max_ms``,
``/store_txn_total_s``, ``/store_backlog_max`` (operations queued for the
writer), ``/store_paused`` (top-ups skipped because more than
STRUCTCRAWL_DB_MAX_BACKLOG operations were queued), ``/store_close_s`` (the
final flush), ``/store_error``; on a resume
``/resumed_batches``, ``/resumed_pages``, ``/resume_s`` and
``/reissued_batches`` (in flight when the last run stopped).  ``structcrawl.crawling.extensions.StructureLogStats`` logs
a progress line from them every STRUCTCRAWL_LOGSTATS_INTERVAL seconds.

Cost of a model step
--------------------
One step handles one batch of at most ``n`` (``batch``) pages: candidate
selection is O(n² · |schema|) for the schema groups, the model update
O(candidates × classes × |schema|) — each MDL delta is computed from a
class's sufficient statistics, never by re-encoding pages — and the next
``frontier.pop`` is a scan over the link collections with pending URLs.  With
the defaults (n = 10, tens of classes, schemas of tens of paths, thousands of
collections) a step takes about a millisecond; it runs in the reactor thread
between responses.  The longest step is in the stats
(``structcrawl/model_step_max_ms``) and a step over 250 ms is logged.
"""

from __future__ import annotations

import logging
import time
from typing import Any, AsyncIterator
from urllib.parse import urlsplit

import scrapy
from scrapy import signals
from scrapy.exceptions import CloseSpider, DontCloseSpider, IgnoreRequest
from scrapy.http import HtmlResponse, Response
from scrapy.utils.defer import deferred_from_coro

from structcrawl.core.explorer import Explorer, Scope
from structcrawl.core.features import extract
from structcrawl.core.frontier import STRATEGIES, Batch
from structcrawl.core.model import Costs
from structcrawl.core.stability import StabilityRule
from structcrawl.core.traps import TrapDetector
from structcrawl.core.urls import normalize_url
from structcrawl.settings import STRUCTCRAWL_DEFAULTS
from structcrawl.sitemodel import TagPathSamples, model_document, write_model

logger = logging.getLogger(__name__)

META_KEY = "structcrawl"
STOPS = ("stable", "exhaust")
#: A model step slower than this is logged.
SLOW_STEP_SECONDS = 0.25
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def _parse_bool(value: Any, what: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError(f"{what} must be true or false, got {value!r}")


def _parse_int(value: Any, what: str, minimum: int) -> int:
    try:
        number = int(str(value).strip())
    except ValueError:
        raise ValueError(f"{what} must be an integer, got {value!r}") from None
    if number < minimum:
        raise ValueError(f"{what} must be >= {minimum}, got {number}")
    return number


def check_start_url(value: Any) -> str:
    """The normalised start URL, or ValueError with a message for the user."""
    if not value or not str(value).strip():
        raise ValueError("the start_url spider argument is required, e.g. -a start_url=http://127.0.0.1:8000/")
    text = str(value).strip()
    parts = urlsplit(text)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ValueError(f"start_url must be an absolute http(s) URL, got {text!r}")
    url = normalize_url(text)
    if url is None:
        raise ValueError(f"start_url is not a valid http(s) URL: {text!r}")
    return url


class StoreStartError(SystemExit):
    """The crawl store refused to start the job (locked, finished, schema version …).

    A ``SystemExit`` (status 2) so that ``scrapy crawl`` ends with the one ERROR
    line already logged and no traceback; ``message`` says what to do.
    """

    def __init__(self, message: str) -> None:
        super().__init__(2)
        self.message = message


def default_job(start_url: str) -> str:
    """Default job name: the start URL's host[:port], safe as a file name."""
    return urlsplit(start_url).netloc.replace(":", "_") or "structure"


class _BatchState:
    """One popped batch: which of its URLs are still out, what came back."""

    __slots__ = ("seq", "batch", "outstanding", "pages", "failed", "redirects", "fetched")

    def __init__(self, seq: int, batch: Batch) -> None:
        self.seq = seq
        self.batch = batch
        self.outstanding: set[str] = set(batch.urls)
        self.pages: dict[str, Any] = {}  #: requested URL -> PageFeatures (of the final URL)
        self.failed: dict[str, str] = {}  #: requested URL -> why
        self.redirects: dict[str, str] = {}  #: requested URL -> final URL
        self.fetched: dict[str, tuple[int, float]] = {}  #: requested URL -> (HTTP status, time) of its page


class StructureSpider(scrapy.Spider):
    """Learn a site's page classes from one start URL; stop when the model is stable."""

    name = "structure"

    def __init__(
        self,
        start_url: str | None = None,
        strategy: str | None = None,
        max_pages: str | int | None = None,
        batch: str | int | None = None,
        stop: str | None = None,
        job: str | None = None,
        members: str | bool | None = None,
        fresh: str | bool | None = None,
        *args: Any,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        try:
            self.start_url = check_start_url(start_url)
        except ValueError as exc:
            logger.error("structure spider: %s", exc)
            raise
        self._args = {"strategy": strategy, "max_pages": max_pages, "batch": batch, "stop": stop, "members": members,
                      "fresh": fresh}
        self.job = job or default_job(self.start_url)
        # set by _configure() once the settings are known
        self.explorer: Explorer | None = None

    # -- set-up ---------------------------------------------------------------
    @classmethod
    def update_settings(cls, settings: Any) -> None:
        super().update_settings(settings)
        from structcrawl.crawling.extensions import StructureLogStats

        # the progress line and stats, also in projects whose settings lack them
        settings.setdefault_in_component_priority_dict("EXTENSIONS", StructureLogStats, 500)

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> "StructureSpider":
        spider = super().from_crawler(crawler, *args, **kwargs)
        try:
            spider._configure(crawler)
        except ValueError as exc:
            logger.error("structure spider: %s", exc)
            raise
        except StoreStartError as exc:
            logger.error("structure spider: %s", exc.message)
            raise
        crawler.signals.connect(spider._on_opened, signal=signals.spider_opened)
        crawler.signals.connect(spider._on_idle, signal=signals.spider_idle)
        crawler.signals.connect(spider._on_dropped, signal=signals.request_dropped)
        crawler.signals.connect(spider._on_scheduled, signal=signals.request_scheduled)
        return spider

    def _setting(self, name: str) -> Any:
        return self.settings.get(name, STRUCTCRAWL_DEFAULTS[name])

    def _configure(self, crawler: Any) -> None:
        s = self._setting
        strategy = self._args["strategy"] or s("STRUCTCRAWL_STRATEGY")
        if strategy not in STRATEGIES:
            raise ValueError(f"strategy must be one of {', '.join(STRATEGIES)}, got {strategy!r}")
        stop = self._args["stop"] or s("STRUCTCRAWL_STOP")
        if stop not in STOPS:
            raise ValueError(f"stop must be one of {', '.join(STOPS)}, got {stop!r}")
        batch_size = _parse_int(
            self._args["batch"] if self._args["batch"] is not None else s("STRUCTCRAWL_BATCH_SIZE"), "batch", 1
        )
        max_pages = _parse_int(
            self._args["max_pages"] if self._args["max_pages"] is not None else s("STRUCTCRAWL_MAX_PAGES"),
            "max_pages",
            0,
        )
        members = self._args["members"]
        self.export_members = _parse_bool(
            members if members is not None else self.settings.getbool(
                "STRUCTCRAWL_EXPORT_MEMBERS", STRUCTCRAWL_DEFAULTS["STRUCTCRAWL_EXPORT_MEMBERS"]
            ),
            "members",
        )
        costs_overrides = self.settings.getdict("STRUCTCRAWL_COSTS") or {}
        unknown = set(costs_overrides) - set(Costs.__dataclass_fields__)
        if unknown:
            raise ValueError(f"STRUCTCRAWL_COSTS: unknown cost(s) {sorted(unknown)}")
        costs = Costs(**{k: float(v) for k, v in costs_overrides.items()})
        stability = StabilityRule(
            window=self.settings.getint("STRUCTCRAWL_STABILITY_WINDOW", STRUCTCRAWL_DEFAULTS["STRUCTCRAWL_STABILITY_WINDOW"]),
            epsilon=self.settings.getfloat(
                "STRUCTCRAWL_STABILITY_EPSILON", STRUCTCRAWL_DEFAULTS["STRUCTCRAWL_STABILITY_EPSILON"]
            ),
            min_pages=self.settings.getint(
                "STRUCTCRAWL_STABILITY_MIN_PAGES", STRUCTCRAWL_DEFAULTS["STRUCTCRAWL_STABILITY_MIN_PAGES"]
            ),
        )
        allow_sub = self.settings.getbool(
            "STRUCTCRAWL_ALLOW_SUBDOMAINS", STRUCTCRAWL_DEFAULTS["STRUCTCRAWL_ALLOW_SUBDOMAINS"]
        )
        extra = [d.strip().lower() for d in self.settings.getlist("STRUCTCRAWL_ALLOWED_DOMAINS") if d.strip()]
        self.scope = Scope(self.start_url, allow_subdomains=allow_sub, extra_domains=extra)
        # Scrapy's OffsiteMiddleware: a second guard (it allows subdomains of these).
        self.allowed_domains = [self.scope.host, *extra]
        dt = self.settings.getfloat("STRUCTCRAWL_DT", STRUCTCRAWL_DEFAULTS["STRUCTCRAWL_DT"])
        self.explorer = Explorer(
            self.start_url,
            strategy=strategy,
            batch_size=batch_size,
            costs=costs,
            dt=dt,
            stability=stability,
            scope=self.scope,
        )
        self.strategy, self.stop, self.batch_size, self.max_pages = strategy, stop, batch_size, max_pages
        inflight = self.settings.getint("STRUCTCRAWL_MAX_INFLIGHT", 0)
        self.max_inflight = inflight if inflight > 0 else 2 * max(1, self.settings.getint("CONCURRENT_REQUESTS", 16))
        out = self.settings.get("STRUCTCRAWL_MODEL_OUT") or f"{self.job}.model.json"
        self.model_out = str(out)
        self.fingerprint_pages = self.settings.getint(
            "STRUCTCRAWL_FINGERPRINT_PAGES", STRUCTCRAWL_DEFAULTS["STRUCTCRAWL_FINGERPRINT_PAGES"]
        )
        # Member tag paths for samples and fingerprints: the explorer's own when it
        # keeps them, else a bounded store of ours.
        own = getattr(self.explorer, "tag_paths", None)
        self.samples = None if isinstance(own, dict) else TagPathSamples(self.fingerprint_pages)
        self.n_samples = self.settings.getint("STRUCTCRAWL_SAMPLES", STRUCTCRAWL_DEFAULTS["STRUCTCRAWL_SAMPLES"])
        self.occurrence = self.settings.getfloat(
            "STRUCTCRAWL_FINGERPRINT_OCCURRENCE", STRUCTCRAWL_DEFAULTS["STRUCTCRAWL_FINGERPRINT_OCCURRENCE"]
        )
        # bookkeeping
        self._batches: dict[int, _BatchState] = {}
        self._order: list[int] = []  # popped batches whose step has not run, pop order
        self._head = 0  # index into _order of the first such batch
        self._seq = 0
        self._uncompleted = 0  # popped URLs not yet taken into the model
        self._outstanding = 0  # popped URLs not yet accounted for
        self.requested = 0
        self.refused = 0  # requested URLs refused before any download (robots.txt, offsite, traps, length)
        self._at_ceiling = False  # a popped batch did not fit under max_pages
        self.fetched = 0
        self._closing = False
        self._stable_logged = False
        self.close_reason: str | None = None
        self.started_at: str | None = None
        self.finished_at: str | None = None
        self._step_max = 0.0
        self._step_total = 0.0
        # the crawl store (STRUCTCRAWL_DB)
        self.fresh = _parse_bool(self._args["fresh"] if self._args["fresh"] is not None else False, "fresh")
        self.session: Any = None
        self.writer: Any = None
        self.resumed = False
        self._store_ms_total = 0.0
        self._store_ms_max = 0.0
        self._idle_noted: int | None = None
        self._resume_stats: dict[str, Any] = {}
        self.store_backlog = int(s("STRUCTCRAWL_DB_MAX_BACKLOG"))
        # spider traps (structcrawl.core.traps), rebuilt from the replayed pages on a resume
        self.traps = TrapDetector(_parse_int(s("STRUCTCRAWL_TRAP_PAGES"), "STRUCTCRAWL_TRAP_PAGES", 0))
        # Scrapy's UrlLengthMiddleware only sees requests returned by callbacks, not engine.crawl()'s
        self.max_url_length = self.settings.getint("URLLENGTH_LIMIT", 2083)
        db = self.settings.get("STRUCTCRAWL_DB")
        if db:
            self._open_store(str(db))

    # -- the crawl store ----------------------------------------------------------
    def _store_parameters(self) -> dict[str, Any]:
        """What the job is: the model parameters (a resume must match them) and the export's."""
        from dataclasses import asdict

        explorer = self.explorer
        stability = explorer.stability
        return {
            "strategy": self.strategy,
            "batch_size": self.batch_size,
            "dt": explorer.dt,
            "costs": asdict(explorer.model.costs),
            "stability": {"window": stability.window, "epsilon": stability.epsilon, "min_pages": stability.min_pages},
            "scope": self._scope_parameters(),
            "stop": self.stop,
            "max_pages": self.max_pages,
            "document": {
                "parameters": self._document_parameters(),
                "members": self.export_members,
                "samples": self.n_samples,
                "fingerprint_pages": self.fingerprint_pages,
                "occurrence": self.occurrence,
            },
        }

    def _open_store(self, db: str) -> None:
        """Create or resume the job in the database; StoreStartError when it cannot be crawled now."""
        from structcrawl.store import CrawlStore, StoreError
        from structcrawl.store.schema import redact

        s = self._setting
        retries = _parse_int(s("STRUCTCRAWL_DB_RETRIES"), "STRUCTCRAWL_DB_RETRIES", 0)
        try:
            store = CrawlStore(db)
        except StoreError as exc:
            raise StoreStartError(str(exc)) from None
        try:
            session = store.open(
                self.job, self.start_url, self._store_parameters(), fresh=self.fresh,
                stale_after=float(s("STRUCTCRAWL_DB_LOCK_TIMEOUT")), heartbeat=float(s("STRUCTCRAWL_DB_HEARTBEAT")),
                retries=retries,
            )
        except StoreError as exc:
            store.dispose()
            raise StoreStartError(str(exc)) from None
        where = redact(store.url)
        if session.lease.took_over:
            logger.warning("Job %r: took over the lock of %s", self.job, session.lease.took_over)
        t0 = time.perf_counter()
        try:
            result = session.restore(self.explorer, on_step=self._replayed_step)
        except StoreError as exc:
            session.close("stopped", "resume_failed")
            store.dispose()
            raise StoreStartError(f"job {self.job!r} in {where} cannot be resumed: {exc}") from None
        elapsed = time.perf_counter() - t0
        self.session, self.writer = session, session.writer
        self._seq = session.next_seq
        self.resumed = session.resumed
        if not session.resumed:
            logger.info("Job %r: %s in %s", self.job, "started afresh" if self.fresh else "new", where)
            return
        counters = (session.job.crawl or {}).get("counters") or {}
        figures = (session.job.crawl or {}).get("document") or {}
        self.requested = int(counters.get("requested", 0))
        self.fetched = int(counters.get("fetched", 0))
        self.refused = int(counters.get("refused", 0))
        self.started_at = figures.get("started")
        explorer = self.explorer
        self._resume_stats = {
            "structcrawl/resumed_batches": result.completed,
            "structcrawl/resumed_pages": len(explorer.model.pages),
            "structcrawl/resume_s": round(elapsed, 3),
            "structcrawl/reissued_batches": session.dropped_in_flight,
        }
        if self.traps.traps or self.traps.echo_chains:
            self._resume_stats["structcrawl/trap_shapes"] = len(self.traps.traps)
            self._resume_stats["structcrawl/trap_echo_chains"] = self.traps.echo_chains
        if result.stable_at_pages is not None:
            self._stable_logged = True
            self._resume_stats.update({
                "structcrawl/stable": True,
                "structcrawl/stable_at_pages": result.stable_at_pages,
                "structcrawl/stability_reason": explorer.stability.reason,
            })
            if figures.get("stable_at_pages") is not None:
                self._resume_stats["structcrawl/stable_at_pages"] = figures["stable_at_pages"]
        logger.info(
            "Resuming job %r from %s (run %d): %d model updates replayed in %.2f s — %d pages modelled in %d "
            "classes, %d pages requested so far; %d batch(es) in flight when it stopped are handed out again",
            self.job, where, session.job.runs, result.completed, elapsed, len(explorer.model.pages),
            len(explorer.model.classes), self.requested, session.dropped_in_flight,
        )

    def _replayed_step(self, stored: Any, report: Any) -> None:
        if self.samples is not None:
            self.samples.keep(stored.pages, self.explorer.model.page_class)
        self._observe_traps(stored.pages, log=False)

    def _observe_traps(self, pages: list[Any], log: bool = True) -> None:
        """The pages of a model step, in step order, to the trap detector."""
        traps = self.traps
        if not traps.pages:
            return
        for feats in pages:
            found = traps.observe(feats)
            if found is None or not log:  # a replay: its figures go into the resume stats
                continue
            self.stats.set_value("structcrawl/trap_shapes", len(traps.traps))
            self.stats.set_value("structcrawl/trap_echo_chains", traps.echo_chains)
            if found in traps.traps:
                logger.warning(
                    "Spider trap: %d pages of URL shape %s each linked to fresh URLs of that shape and none of "
                    "them was linked twice; URLs of that shape found only on trap pages are not fetched",
                    traps.pages, found,
                )
            else:
                logger.warning(
                    "Spider trap: %d pages in a row each an echo of the page that linked it (%s): the URLs "
                    "first found there are not fetched", traps.pages, found,
                )

    def _store_figures(self, reason: str | None = None) -> dict[str, Any]:
        return {
            "document": self._crawl_figures(reason),
            "counters": {"requested": self.requested, "fetched": self.fetched, "refused": self.refused},
        }

    def _stored(self, t0: float) -> None:
        ms = (time.perf_counter() - t0) * 1000
        self._store_ms_total += ms
        if ms > self._store_ms_max:
            self._store_ms_max = ms

    def _close_store(self, reason: str) -> None:
        from structcrawl.store import status_for
        from structcrawl.store.writer import LockLostError, one_line

        writer, stats = self.writer, self.stats
        status = status_for(reason)
        t0 = time.perf_counter()
        ok = self.session.close(status, reason, self._store_figures(reason))
        stats.set_value("structcrawl/store_close_s", round(time.perf_counter() - t0, 3))
        for key, value in writer.stats().items():
            stats.set_value(f"structcrawl/store_{key}", value)
        stats.set_value("structcrawl/store_enqueue_ms_total", round(self._store_ms_total, 3))
        stats.set_value("structcrawl/store_enqueue_ms_max", round(self._store_ms_max, 3))
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

    @property
    def stats(self) -> Any:
        return self.crawler.stats

    def _on_opened(self, spider: scrapy.Spider) -> None:
        stats = self.stats
        stats.set_value("structcrawl/start_url", self.start_url)
        stats.set_value("structcrawl/strategy", self.strategy)
        stats.set_value("structcrawl/stop", self.stop)
        stats.set_value("structcrawl/model_out", self.model_out)
        stats.set_value("structcrawl/stability_window", self.explorer.stability.window)
        for key, value in self._resume_stats.items():
            stats.set_value(key, value)
        if self.session is not None:
            stats.set_value("structcrawl/job", self.job)

    # -- the loop ------------------------------------------------------------------
    async def start(self) -> AsyncIterator[Any]:
        if not self.started_at:  # a resumed job keeps its first start
            self.started_at = _utc_now()
        assert self.explorer is not None
        if self.resumed:
            await self._robots_first()
        seed = self.explorer.next_batch()
        for request in self._requests_for(seed):
            yield request

    async def _robots_first(self) -> None:
        """Fetch robots.txt before a resumed job's first batch goes out.

        Scrapy's RobotsTxtMiddleware lets through all but the first requests that
        wait together for a robots.txt being downloaded (they get ``None`` from
        the shared Deferred instead of the parser).  A fresh crawl starts with
        the seed alone, so robots.txt is parsed before any batch; a resumed one
        starts with a whole batch, so the parser is loaded first.
        """
        try:
            from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware

            middlewares = self.crawler.engine.downloader.middleware.middlewares
        except (AttributeError, ImportError):
            return
        for mw in middlewares:
            if isinstance(mw, RobotsTxtMiddleware):
                await mw.robot_parser(scrapy.Request(self.start_url))

    def _requests_for(self, batch: Batch | None) -> list[scrapy.Request]:
        if batch is None:
            return []
        if self.writer is not None:  # as the frontier handed it out, before any max_pages cut
            t0 = time.perf_counter()
            self.writer.issue(self._seq, batch.key, batch.urls, self.explorer.updates)
            self._stored(t0)
        seq = self._seq
        self._seq += 1
        if self.max_pages and len(batch.urls) > self.max_pages - (self.requested - self.refused):
            # over the page ceiling: not fetched, left in flight — a resume with a higher
            # ceiling hands it out again (a cut batch would lose the rest of its URLs)
            self._at_ceiling = True
            return []
        state = _BatchState(seq, batch)
        self._batches[seq] = state
        self._order.append(seq)
        n = len(batch.urls)
        self._uncompleted += n
        self._outstanding += n
        self.requested += n
        self.stats.inc_value("structcrawl/batches")
        requests = []
        for url in batch.urls:
            why = self._refusal(url)
            if why is None:
                requests.append(scrapy.Request(url, callback=self.parse_page, errback=self.page_failed,
                                               priority=-seq, meta={META_KEY: (seq, url)}))
                continue
            # never downloaded: failed at once, like a robots.txt refusal; _advance runs its step
            logger.debug("Refused %s: %s", url, why)
            self.refused += 1
            self.stats.inc_value("structcrawl/pages_refused")
            self._fail(state, url, why)
        return requests

    def _refusal(self, url: str) -> str | None:
        """Why a URL the frontier handed out is not fetched (None: it is)."""
        if self.max_url_length and len(url) > self.max_url_length:
            return "url_too_long"
        if self.traps.refuses(url):
            return "trap"
        return None

    def _budget_left(self) -> bool:
        """max_pages counts URLs that may reach the network: refusals (robots.txt, offsite, traps) do not."""
        return not self.max_pages or (not self._at_ceiling and self.requested - self.refused < self.max_pages)

    def _top_up(self) -> None:
        """Pop batches while the in-flight budget allows; hand their requests to the engine."""
        assert self.explorer is not None
        engine = self.crawler.engine
        popped = False
        if self.writer is not None and self.writer.backlog > self.store_backlog:
            # the store's writer is behind: hand out nothing more until it catches up
            # (bounded memory); the next step or the idle signal tops up again
            self.stats.inc_value("structcrawl/store_paused")
            return
        while self._uncompleted < self.max_inflight and self._budget_left():
            batch = self.explorer.next_batch()
            if batch is None:
                # nothing pending right now (more may come when in-flight batches complete)
                if self.writer is not None and self._idle_noted != self.explorer.updates:
                    self._idle_noted = self.explorer.updates
                    self.writer.idle(self.explorer.updates)
                break
            popped = True
            for request in self._requests_for(batch):
                engine.crawl(request)
        if popped:
            self._set_progress_stats()

    def _advance(self) -> str | None:
        """Run the model steps that are due, in pop order, each followed by a top-up; the close reason, if any.

        Topping up right after each step (not after a run of steps) makes what
        the frontier hands out depend only on the model steps so far, never on
        which responses happened to arrive together.
        """
        if self._closing:
            return None
        if self.writer is not None and self.writer.error is not None:
            return self._begin_close("store_error")
        while self._head < len(self._order):
            seq = self._order[self._head]
            state = self._batches[seq]
            if state.outstanding:
                break
            self._head += 1
            del self._batches[seq]
            self._model_step(state)
            if self.explorer.stable and self.stop == "stable":
                return self._begin_close("model_stable")
            self._top_up()
        if self._head > 1024:  # compact the pop-order list now and then
            del self._order[: self._head]
            self._head = 0
        if self._uncompleted == 0 and not self._budget_left():
            return self._begin_close("max_pages")
        return None

    def _model_step(self, state: _BatchState) -> None:
        explorer = self.explorer
        assert explorer is not None
        urls = state.batch.urls
        for url in urls:  # redirects first: the final page is then known as issued
            final = state.redirects.get(url)
            if final is not None:
                explorer.redirected(url, final)
        pages = [state.pages[u] for u in urls if u in state.pages]
        failed = [u for u in urls if u in state.failed]
        merges = len(explorer.merges)
        t0 = time.perf_counter()
        report = explorer.complete(state.batch, pages, failed)
        elapsed = time.perf_counter() - t0
        self._observe_traps(pages)
        if self.writer is not None:
            self._store_step(state, merges)
        self._uncompleted -= len(urls)
        if self.samples is not None:
            self.samples.keep(pages, explorer.model.page_class)
        self._step_total += elapsed
        if elapsed > self._step_max:
            self._step_max = elapsed
        if elapsed > SLOW_STEP_SECONDS:
            logger.warning(
                "Slow model step: %.0f ms for batch %s (%d pages, %d classes)",
                elapsed * 1000, state.batch.key, len(pages), len(explorer.model.classes),
            )
        stats = self.stats
        model = explorer.model
        stats.set_value("structcrawl/model_updates", explorer.updates)
        stats.set_value("structcrawl/pages_modelled", len(model.pages))
        stats.set_value("structcrawl/classes", len(model.classes))
        stats.set_value("structcrawl/mdl_bits", round(model.mdl, 1))
        stats.set_value("structcrawl/model_bits", round(model.model_bits, 1))
        stats.set_value("structcrawl/data_bits", round(model.data_bits, 1))
        stats.set_value("structcrawl/quiet_checks", explorer.stability.quiet_checks)
        stats.set_value("structcrawl/stability_window", explorer.stability.window)
        stats.set_value("structcrawl/model_step_max_ms", round(self._step_max * 1000, 3))
        stats.set_value("structcrawl/model_step_total_s", round(self._step_total, 3))
        created = sum(d.action == "new" for d in report.decisions)
        if created:
            stats.inc_value("structcrawl/classes_created", created)
        if report.stable and not self._stable_logged:
            self._stable_logged = True
            stats.set_value("structcrawl/stable", True)
            stats.set_value("structcrawl/stable_at_pages", len(model.pages))
            stats.set_value("structcrawl/stable_at_requests", self.requested)
            stats.set_value("structcrawl/stability_reason", explorer.stability.reason)
            logger.info(
                "Model is stable after %d model updates and %d pages requested: %s%s",
                explorer.updates, self.requested, explorer.stability.reason,
                "" if self.stop == "stable" else " (stop=exhaust: crawling on)",
            )

    def _store_step(self, state: _BatchState, merges: int) -> None:
        """Queue the step for the store: every page handed to it, failures, redirects, merges."""
        from structcrawl.store import PageRecord

        t0 = time.perf_counter()
        explorer = self.explorer
        page_class = explorer.model.page_class
        records = []
        for pos, url in enumerate(state.batch.urls):
            feats = state.pages.get(url)
            if feats is not None:
                status, at = state.fetched.get(url, (None, None))
                records.append(PageRecord(pos, url, feats, page_class.get(feats.url), status, at))
        self.writer.complete(
            state.seq,
            records,
            [(u, state.failed[u]) for u in state.batch.urls if u in state.failed],
            [(u, state.redirects[u]) for u in state.batch.urls if u in state.redirects],
            self._store_figures(),
            [(m.kept, m.merged) for m in explorer.merges[merges:]],
        )
        self._stored(t0)

    def _set_progress_stats(self) -> None:
        stats = self.stats
        stats.set_value("structcrawl/pages_requested", self.requested)
        stats.set_value("structcrawl/inflight", self._uncompleted)
        frontier = self.explorer.frontier
        stats.set_value("structcrawl/queue_urls", frontier.pending_urls())

    def _begin_close(self, reason: str) -> str:
        self._closing = True
        self.close_reason = reason
        if reason == "model_stable":
            logger.info("Closing: the site model is stable — %s", self.explorer.stability.reason)
        elif reason == "max_pages":
            logger.info(
                "Closing: max_pages=%d reached (%d URLs requested, %d of them refused by robots.txt/offsite)",
                self.max_pages, self.requested, self.refused,
            )
        elif reason == "store_error":
            from structcrawl.store.writer import one_line

            self.stats.set_value("structcrawl/store_error", one_line(self.writer.error))
            logger.error("Closing: the crawl store failed: %s", one_line(self.writer.error))
        return reason

    def _close_now(self, reason: str) -> None:
        """Close from a signal handler (where CloseSpider cannot be raised)."""
        deferred_from_coro(self.crawler.engine.close_spider_async(reason=reason))

    # -- accounting -------------------------------------------------------------
    def _state_for(self, request: scrapy.Request) -> tuple[_BatchState, str] | None:
        tag = request.meta.get(META_KEY)
        if not tag:
            return None
        seq, url = tag
        state = self._batches.get(seq)
        if state is None or url not in state.outstanding:
            return None
        return state, url

    def _account(self, state: _BatchState, url: str) -> None:
        state.outstanding.discard(url)
        self._outstanding -= 1

    def _fail(self, state: _BatchState, url: str, why: str) -> None:
        state.failed[url] = why
        self.stats.inc_value("structcrawl/pages_failed")
        self.stats.inc_value(f"structcrawl/failed/{why}")
        self._account(state, url)

    def parse_page(self, response: Response) -> None:
        """Callback: the page's features go into its batch; due model steps run."""
        found = self._state_for(response.request)
        self.fetched += 1
        self.stats.inc_value("structcrawl/pages_fetched")
        if found is None:
            return None
        state, url = found
        final = url
        if response.meta.get("redirect_urls"):
            final = normalize_url(response.url) or response.url
            if final != url:
                state.redirects[url] = final
                self.stats.inc_value("structcrawl/redirects")
        if not self.scope(final):  # e.g. a subdomain the offsite middleware lets through
            self._fail(state, url, "off_scope")
        elif not _is_html(response):
            ctype = response.headers.get(b"Content-Type", b"").decode("latin-1") or "none"
            logger.info("Skipped non-HTML page %s (Content-Type: %s)", response.url, ctype)
            self._fail(state, url, "non_html")
        else:
            ctype = response.headers.get(b"Content-Type")
            state.pages[url] = extract(response.body, final, ctype.decode("latin-1") if ctype else None)
            state.fetched[url] = (response.status, time.time())
            self._account(state, url)
        reason = self._advance()
        if reason:
            raise CloseSpider(reason)
        return None

    def page_failed(self, failure: Any) -> None:
        """Errback: HTTP errors, download errors, robots.txt, offsite, max redirects."""
        request = failure.request
        found = self._state_for(request)
        response = getattr(failure.value, "response", None)
        if response is not None:
            self.fetched += 1
            self.stats.inc_value("structcrawl/pages_fetched")
        if found is None:
            return None
        state, url = found
        if response is not None:
            why = f"http_{response.status}"
        elif failure.check(IgnoreRequest):
            text = str(failure.value).lower()
            why = "robots_txt" if "robots" in text else "offsite" if "offsite" in text else "ignored"
            if why != "ignored":
                self.refused += 1
                self.stats.inc_value("structcrawl/pages_refused")
        else:
            why = type(failure.value).__name__
        logger.debug("Failed %s: %s", url, why)
        self._fail(state, url, why)
        reason = self._advance()
        if reason:
            raise CloseSpider(reason)
        return None

    def _on_scheduled(self, request: scrapy.Request, spider: scrapy.Spider) -> None:
        """Refuse redirects out of scope (before the offsite middleware drops them silently);
        in a resumed job, drop redirects to URLs an earlier run fetched, as the dupefilter would."""
        if not request.meta.get("redirect_urls"):
            return
        final = normalize_url(request.url)
        if final is not None and self.scope(final):
            if self.resumed and final in self.explorer.frontier.issued:
                self._on_dropped(request, spider)
                raise IgnoreRequest(f"redirect to a page fetched before: {request.url}")
            return
        found = self._state_for(request)
        if found is not None:
            state, url = found
            self._fail(state, url, "redirect_off_site")
            reason = self._advance()
            if reason:
                self._close_now(reason)
        raise IgnoreRequest(f"redirect out of the crawl scope: {request.url}")

    def _on_dropped(self, request: scrapy.Request, spider: scrapy.Spider) -> None:
        """The scheduler (dupefilter) dropped a request: its page is, or will be, fetched by another one."""
        found = self._state_for(request)
        if found is None:
            return
        state, url = found
        if request.meta.get("redirect_urls"):
            final = normalize_url(request.url)
            if final and final != url:
                state.redirects[url] = final  # the link still counts
                self.stats.inc_value("structcrawl/redirects")
        self.stats.inc_value("structcrawl/duplicates")
        self._account(state, url)
        reason = self._advance()
        if reason:
            self._close_now(reason)

    def _on_idle(self, spider: scrapy.Spider) -> None:
        """Nothing left in Scrapy: top up, or let the spider close (``finished``)."""
        if self._closing:
            return
        if self.writer is not None and self.writer.backlog > self.store_backlog:
            # idle only because the store's writer is behind: nothing is in flight,
            # so waiting for it here stalls no download
            self.writer.flush(timeout=300)
        if self._outstanding:
            # Nothing is scheduled, downloading or being parsed, so these URLs
            # will never come back (a component dropped them silently).
            for seq in self._order[self._head :]:
                state = self._batches[seq]
                for url in sorted(state.outstanding):
                    logger.warning("Lost request for %s (dropped silently by a Scrapy component)", url)
                    self._fail(state, url, "lost")
        reason = self._advance()
        if reason:
            raise CloseSpider(reason)
        if self._outstanding:
            raise DontCloseSpider
        self.close_reason = "finished"

    # -- close: export ------------------------------------------------------------
    def closed(self, reason: str) -> None:
        self.finished_at = _utc_now()
        self.close_reason = reason
        explorer = self.explorer
        stats = self.stats
        stats.set_value("structcrawl/close_reason", reason)
        if explorer is None:
            return
        self._set_progress_stats()
        # also when no step ran in this run (a resume that closed at once)
        stats.set_value("structcrawl/pages_modelled", len(explorer.model.pages))
        stats.set_value("structcrawl/classes", len(explorer.model.classes))
        document = self.model_document(reason)
        try:
            write_model(document, self.model_out)
        except OSError as exc:
            stats.set_value("structcrawl/export_error", f"{exc.strerror or exc}")
            logger.error("Could not write the site model to %s: %s", self.model_out, exc.strerror or exc)
        else:
            stats.set_value("structcrawl/model_written", self.model_out)
            logger.info(
                "Wrote the site model (%d classes, %d pages modelled) to %s",
                len(explorer.model.classes), len(explorer.model.pages), self.model_out,
            )
        if self.session is not None:
            self._close_store(reason)
        why = explorer.stability.reason if explorer.stable else "the model did not reach the stability rule"
        logger.info(
            "Crawl closed (%s): %d pages requested, %d fetched, %d modelled, %d classes, MDL %.1f bits; %s",
            reason, self.requested, self.fetched, len(explorer.model.pages), len(explorer.model.classes),
            explorer.model.mdl, why,
        )

    def _crawl_figures(self, reason: str | None = None) -> dict[str, Any]:
        """The ``crawl`` section's figures the explorer does not know."""
        return {
            "job": self.job,
            "pages_requested": self.requested,
            "pages_fetched": self.fetched,
            "stop_reason": reason or self.close_reason,
            "stable_at_pages": self.stats.get_value("structcrawl/stable_at_pages"),
            "started": self.started_at,
            "finished": self.finished_at,
        }

    def _scope_parameters(self) -> dict[str, Any]:
        return {
            "host": self.scope.host,
            "allow_subdomains": self.scope.allow_subdomains,
            "extra_domains": sorted(self.scope.extra),
        }

    def _document_parameters(self) -> dict[str, Any]:
        """The ``parameters`` the document adds to the explorer's own."""
        return {"stop": self.stop, "max_pages": self.max_pages or None, "scope": self._scope_parameters()}

    def model_document(self, reason: str | None = None) -> dict[str, Any]:
        """The JSON-ready site model of the crawl state (see ``docs/model-format.md``)."""
        explorer = self.explorer
        return model_document(
            explorer,
            crawl=self._crawl_figures(reason),
            parameters=self._document_parameters(),
            tag_paths=self.samples,  # None: the explorer's
            members=self.export_members,
            samples=self.n_samples,
            fingerprint_pages=self.fingerprint_pages,
            occurrence=self.occurrence,
        )


_SNIFFED_TYPES = (b"", b"text/plain", b"application/octet-stream", b"binary/octet-stream")
_HTML_STARTS = (b"<!doctype html", b"<html", b"<head", b"<body", b"<frameset")


def _is_html(response: Response) -> bool:
    """HTML by Content-Type, or — when the type says nothing useful (none, text/plain,
    octet-stream) — by the first bytes of the body (WHATWG-style sniffing)."""
    if isinstance(response, HtmlResponse):
        return True
    ctype = response.headers.get(b"Content-Type", b"").split(b";")[0].strip().lower()
    if b"html" in ctype:
        return True
    if ctype not in _SNIFFED_TYPES:
        return False
    head = response.body[:1024].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    return head.startswith(_HTML_STARTS)


def _utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
