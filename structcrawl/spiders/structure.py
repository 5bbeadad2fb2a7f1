"""The ``structure`` spider: the Compute-Model loop of Crescenzi et al. behind Scrapy.

    scrapy crawl structure -a start_url=http://127.0.0.1:8000/ [-a strategy=densest|sparsest]
        [-a max_pages=N] [-a batch=10] [-a stop=stable|exhaust] [-a job=NAME] [-a members=true]
        [-a fresh=true] -s STRUCTCRAWL_MODEL_OUT=model.json [-s STRUCTCRAWL_DB=sqlite:///shop.db]
        [-O pages.jsonl]

The :class:`~structcrawl.core.explorer.Explorer` (pure core) owns the site
model and the frontier; this spider turns its batches into Requests and
responses into page features, and keeps only Scrapy wiring: callbacks, signal
handlers, stats.  Its helpers live in :mod:`structcrawl.crawling`: the
arguments (:mod:`~structcrawl.crawling.arguments`), the batch ledger
(:mod:`~structcrawl.crawling.ledger`), the crawl store link
(:mod:`~structcrawl.crawling.storelink`) and the items it yields
(:mod:`~structcrawl.crawling.items`).  How the crawl is driven, the stats it
keeps and what a model step costs: ``docs/spider.md``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any

import scrapy
from scrapy import signals
from scrapy.exceptions import CloseSpider, DontCloseSpider, IgnoreRequest, NotConfigured
from scrapy.http import Response
from scrapy.utils.defer import deferred_from_coro

from structcrawl.core.features import extract
from structcrawl.core.traps import TrapDetector
from structcrawl.core.urls import normalize_url
from structcrawl.crawling.arguments import StartError, crawl_config
from structcrawl.crawling.ledger import BatchLedger, BatchState
from structcrawl.crawling.modelstep import ModelSteps
from structcrawl.crawling.refusals import ignored_extensions, refusal
from structcrawl.crawling.responses import is_html
from structcrawl.crawling.storelink import StoreLink
from structcrawl.sitemodel import PageBodies, model_document, storable_text, write_model

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings
    from scrapy.statscollectors import StatsCollector
    from twisted.python.failure import Failure

    from structcrawl.core.explorer import StepReport
    from structcrawl.core.frontier import Batch
    from structcrawl.crawling.storelink import Resumed
    from structcrawl.store.history import StoredBatch

logger = logging.getLogger(__name__)

META_KEY = "structcrawl"


class StructureSpider(scrapy.Spider):
    """Learn a site's page classes from one start URL; stop when the model is stable."""

    name = "structure"

    def __init__(self, **arguments: Any) -> None:
        # not passed on: Scrapy's Spider would make each one an attribute, misspelt ones included
        super().__init__()
        self.arguments = arguments

    # -- set-up ---------------------------------------------------------------
    @classmethod
    def update_settings(cls, settings: BaseSettings) -> None:
        super().update_settings(settings)
        from structcrawl.crawling.extensions import StructureLogStats, install_defaults

        install_defaults(settings, StructureLogStats)

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> StructureSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        try:
            spider._configure(crawler)
        except ValueError as exc:
            logger.error("structure spider: %s", exc)
            raise StartError(str(exc)) from None
        except StartError as exc:
            logger.error("structure spider: %s", exc.message)
            raise
        crawler.signals.connect(spider._on_opened, signal=signals.spider_opened)
        crawler.signals.connect(spider._on_idle, signal=signals.spider_idle)
        crawler.signals.connect(spider._on_dropped, signal=signals.request_dropped)
        crawler.signals.connect(spider._on_scheduled, signal=signals.request_scheduled)
        return spider

    def _configure(self, crawler: Crawler) -> None:
        settings = self.settings
        config = crawl_config(self.arguments, settings)
        self.config = config
        self.start_url, self.job = config.start_url, config.job
        self.strategy, self.stop = config.explorer.strategy, config.stop
        self.batch_size, self.max_pages = config.explorer.batch_size, config.max_pages
        self.explorer = config.explorer.build()
        self.scope = self.explorer.scope
        # Scrapy's OffsiteMiddleware: a second guard (it allows subdomains of these)
        self.allowed_domains = [self.scope.host, *config.explorer.extra_domains]
        self.max_inflight, self.model_out = config.max_inflight, config.model_out
        # spider traps (structcrawl.core.traps), rebuilt from the replayed pages on a resume
        self.traps = TrapDetector(config.trap_pages)
        self.steps = ModelSteps(self.explorer, self.traps, crawler, self.stop)
        # Scrapy's UrlLengthMiddleware only sees requests returned by callbacks, not engine.crawl()'s
        self.max_url_length = settings.getint("URLLENGTH_LIMIT")
        self.ignored_extensions = ignored_extensions(settings)
        self.ledger = BatchLedger()
        # the HTML of a few members per class, for the model's fields and records; texts of pages
        # waiting for their model step are held until it chooses among them
        self.bodies = PageBodies(config.field_pages)
        self._texts: dict[str, str] = {}
        self._seq = 0
        self.requested = 0
        self.refused = 0  # requested URLs refused before any download (robots.txt, offsite, traps, length)
        self.fetched = 0
        self._at_ceiling = False  # a popped batch did not fit under max_pages
        #: requests of batches handed out while the URLs sent already bring the check that may
        #: stop the crawl its pages (``Explorer.pages_to_a_possible_stop``): sent once it ran
        #: and did not stop the crawl, never if it did
        self._held: list[scrapy.Request] = []
        self._held_urls = 0
        self._closing = False
        self.close_reason: str | None = None
        self.started_at: str | None = None
        self.finished_at: str | None = None
        self._resume_stats: dict[str, Any] = {}
        #: items of the model steps run since the last callback returned (see _output)
        self._items: list[dict[str, Any]] = []
        self._closing_after_items = False
        try:
            self.store: StoreLink | None = StoreLink.from_crawler(crawler)
        except NotConfigured:
            self.store = None
        self.resumed = False
        if self.store is not None:
            self._open_store(self.store)

    # -- the crawl store ----------------------------------------------------------
    def _open_store(self, store: StoreLink) -> None:
        resumed = store.open(self.job, self.start_url, self.config.store_parameters(), self.explorer,
                             fresh=self.config.fresh, on_step=self._replayed_step)
        self._seq = store.next_seq
        if resumed is not None:
            self._take_over(resumed)
            self.bodies.texts.update(store.load_bodies(self.bodies.texts))

    def _take_over(self, resumed: Resumed) -> None:
        """Counters and stats of the runs before this one."""
        self.resumed = True
        self.requested = int(resumed.counters.get("requested", 0))
        self.fetched = int(resumed.counters.get("fetched", 0))
        self.refused = int(resumed.counters.get("refused", 0))
        self.started_at = resumed.figures.get("started")
        self._resume_stats = resumed.stats(self.explorer, self.traps)
        self.steps.stable_logged = resumed.result.stable_at_pages is not None

    def _replayed_step(self, stored: StoredBatch, report: StepReport) -> None:
        self.steps.observe(stored.pages, log=False)
        self.bodies.keep([f.url for f in stored.pages], self.explorer.model.page_class)

    def _store_figures(self, reason: str | None = None) -> dict[str, Any]:
        return {
            "document": self._crawl_figures(reason),
            "counters": {"requested": self.requested, "fetched": self.fetched, "refused": self.refused},
        }

    @property
    def stats(self) -> StatsCollector:
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
        if self.store is not None:
            stats.set_value("structcrawl/job", self.job)

    # -- the loop ------------------------------------------------------------------
    async def start(self) -> AsyncIterator[scrapy.Request]:
        if not self.started_at:  # a resumed job keeps its first start
            self.started_at = _utc_now()
        if self.resumed:
            await self._robots_first()
        for request in self._requests_for(self.explorer.next_batch()):
            yield request

    async def _robots_first(self) -> None:
        """Fetch robots.txt before a resumed job's first batch goes out.

        Scrapy's RobotsTxtMiddleware lets through all but the first requests that
        wait together for a robots.txt being downloaded (they get ``None`` from
        the shared Deferred instead of the parser).  A fresh crawl starts with
        the seed alone, so robots.txt is parsed before any batch; a resumed one
        starts with a whole batch, so the parser is loaded first.
        """
        from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware

        for mw in self.crawler.engine.downloader.middleware.middlewares:
            if isinstance(mw, RobotsTxtMiddleware):
                await mw.robot_parser(scrapy.Request(self.start_url))

    def _requests_for(self, batch: Batch | None) -> list[scrapy.Request]:
        if batch is None:
            return []
        if self.store is not None:  # as the frontier handed it out, before any max_pages cut
            self.store.issue(self._seq, batch, self.explorer.updates)
        seq = self._seq
        self._seq += 1
        if self.max_pages and len(batch.urls) > self.max_pages - (self.requested - self.refused):
            # over the page ceiling: not fetched, left in flight — a resume with a higher
            # ceiling hands it out again (a cut batch would lose the rest of its URLs)
            self._at_ceiling = True
            return []
        state = self.ledger.open(seq, batch)
        self.requested += len(batch.urls)
        self.stats.inc_value("structcrawl/batches")
        requests = []
        for url in batch.urls:
            self.ledger.requesting(state, url, url)
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
        return refusal(url, self.max_url_length, self.traps, self.ignored_extensions)

    def _budget_left(self) -> bool:
        """max_pages counts URLs that may reach the network: refusals (robots.txt, offsite, traps) do not."""
        return not self.max_pages or (not self._at_ceiling and self.requested - self.refused < self.max_pages)

    def _top_up(self) -> None:
        """Pop batches while the in-flight budget allows; hand their requests to the engine."""
        engine = self.crawler.engine
        popped = False
        if self.store is not None and self.store.behind:
            # hand out nothing more until the writer catches up (bounded memory);
            # the next step or the idle signal tops up again
            self.stats.inc_value("structcrawl/store_paused")
            return
        while self.ledger.uncompleted < self.max_inflight and self._budget_left():
            hold = bool(self._held) or self._sending_waits()
            batch = self.explorer.next_batch()
            if batch is None:
                # nothing pending right now (more may come when in-flight batches complete)
                if self.store is not None:
                    self.store.idle(self.explorer.updates)
                break
            popped = True
            opened = self.ledger.uncompleted
            requests = self._requests_for(batch)
            if batch is self.explorer.audit:  # its check waits for its pages, and they for the held ones
                self._send_held(force=True)
            elif hold:
                self._held.extend(requests)
                self._held_urls += self.ledger.uncompleted - opened
                continue
            for request in requests:
                engine.crawl(request)
        if popped:
            self._set_progress_stats()

    def _sending_waits(self) -> bool:
        """The URLs sent and not yet modelled bring the check that may stop the crawl its pages."""
        if self.stop != "stable":
            return False
        needed = self.explorer.pages_to_a_possible_stop()
        sent = self.ledger.uncompleted - self._held_urls
        return needed is not None and sent > 0 and sent >= needed

    def _send_held(self, force: bool = False) -> None:
        """Send the held requests once the check they waited for ran and the crawl goes on."""
        if self._held and (force or not self._sending_waits()):
            held, self._held, self._held_urls = self._held, [], 0
            for request in held:
                self.crawler.engine.crawl(request)

    def _advance(self) -> str | None:
        """Run the model steps that are due, in pop order, each followed by a top-up; the close reason, if any.

        Topping up right after each step (not after a run of steps) makes what
        the frontier hands out depend only on the model steps so far, never on
        which responses happened to arrive together.
        """
        if self._closing:
            return None
        if self.store is not None and self.store.error is not None:
            return self._begin_close("store_error")
        while (state := self.ledger.next_due()) is not None:
            self._model_step(state)
            if self.explorer.stable and self.stop == "stable":
                return self._begin_close("model_stable")
            self._send_held()
            self._top_up()
        if self.ledger.uncompleted == 0 and not self._budget_left():
            return self._begin_close("max_pages")
        return None

    def _model_step(self, state: BatchState) -> None:
        step = self.steps.complete(state)
        stepped = [state.pages[u].url for u in state.batch.urls if u in state.pages]  # batch order, as replayed
        chosen = self.bodies.keep(stepped, self.explorer.model.page_class, self._texts)
        for url in stepped:
            self._texts.pop(url, None)
        if self.store is not None:
            self.store.save_bodies([(url, self.bodies.texts[url]) for url in chosen])
            self.store.step(state, self.explorer, step.merges_before, self._store_figures())
        self.ledger.stepped(state)
        self._items.extend(self.steps.record(step, self.requested))

    def _set_progress_stats(self) -> None:
        stats = self.stats
        stats.set_value("structcrawl/pages_requested", self.requested)
        stats.set_value("structcrawl/inflight", self.ledger.uncompleted)
        stats.set_value("structcrawl/queue_urls", self.explorer.frontier.pending_urls())

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

            self.stats.set_value("structcrawl/store_error", one_line(self.store.error))
            logger.error("Closing: the crawl store failed: %s", one_line(self.store.error))
        return reason

    def _output(self, reason: str | None) -> Iterator[dict[str, Any]]:
        """A callback's output: the items of the steps run so far, then the close, if due.

        Items go out as callback output, which Scrapy processes before it
        counts the response done, so a close waits for them.
        """
        items, self._items = self._items, []

        def output() -> Iterator[dict[str, Any]]:
            yield from items
            if reason:
                raise CloseSpider(reason)

        return output()

    def _close_now(self, reason: str) -> None:
        """Close from a signal handler (where CloseSpider cannot be raised), after the items not yet out."""
        self._closing_after_items = True
        items, self._items = self._items, []

        async def close() -> None:
            scraper = self.crawler.engine.scraper
            for item in items:
                await scraper.start_itemproc_async(item, response=None)
            await self.crawler.engine.close_spider_async(reason=reason)

        deferred_from_coro(close())

    # -- callbacks and signals: every issued URL is accounted for exactly once ---------
    def _fail(self, state: BatchState, url: str, why: str) -> None:
        self.stats.inc_value("structcrawl/pages_failed")
        self.stats.inc_value(f"structcrawl/failed/{why}")
        self.ledger.fail(state, url, why)

    def parse_page(self, response: Response) -> Iterator[dict[str, Any]]:
        """Callback: the page's features go into its batch; due model steps run."""
        found = self.ledger.find(response.request.meta.get(META_KEY))
        self.fetched += 1
        self.stats.inc_value("structcrawl/pages_fetched")
        if found is None:
            return iter(())
        state, url = found
        final = url
        if response.meta.get("redirect_urls"):
            final = normalize_url(response.url) or response.url
            if final != url:
                state.redirects[url] = final
                self.stats.inc_value("structcrawl/redirects")
        if not self.scope(final):  # e.g. a subdomain the offsite middleware lets through
            self._fail(state, url, "off_scope")
        elif not is_html(response):
            ctype = response.headers.get(b"Content-Type", b"").decode("latin-1") or "none"
            logger.info("Skipped non-HTML page %s (Content-Type: %s)", response.url, ctype)
            self._fail(state, url, "non_html")
        else:
            ctype = response.headers.get(b"Content-Type")
            features = extract(response.body, final, ctype.decode("latin-1") if ctype else None)
            if self.bodies.per_class:
                self._texts[features.url] = storable_text(response.text)
            self.ledger.page(state, url, features, response.status, time.time())
        return self._output(self._advance())

    def page_failed(self, failure: Failure) -> Iterator[dict[str, Any]]:
        """Errback: HTTP errors, download errors, robots.txt, offsite, max redirects."""
        found = self.ledger.find(failure.request.meta.get(META_KEY))
        response = getattr(failure.value, "response", None)
        if response is not None:
            self.fetched += 1
            self.stats.inc_value("structcrawl/pages_fetched")
        if found is None:
            return iter(())
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
        return self._output(self._advance())

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
            found = self.ledger.find(request.meta.get(META_KEY))
            if found is not None:
                self.ledger.requesting(*found, final)
            return
        found = self.ledger.find(request.meta.get(META_KEY))
        if found is not None:
            self._fail(*found, "redirect_off_site")
            reason = self._advance()
            if reason:
                self._close_now(reason)
        raise IgnoreRequest(f"redirect out of the crawl scope: {request.url}")

    def _on_dropped(self, request: scrapy.Request, spider: scrapy.Spider) -> None:
        """The scheduler (dupefilter) dropped a request: its page is, or will be, fetched by another one
        (the ledger gives it to the earlier batch of the two)."""
        found = self.ledger.find(request.meta.get(META_KEY))
        if found is None:
            return
        state, url = found
        target = url
        if request.meta.get("redirect_urls"):
            final = normalize_url(request.url)
            if final and final != url:
                state.redirects[url] = final  # the link still counts
                self.stats.inc_value("structcrawl/redirects")
                target = final
        self.stats.inc_value("structcrawl/duplicates")
        self.ledger.duplicate(state, url, target)
        reason = self._advance()
        if reason:
            self._close_now(reason)

    def _on_idle(self, spider: scrapy.Spider) -> None:
        """Nothing left in Scrapy: top up, or let the spider close (``finished``)."""
        if self._closing_after_items:
            raise DontCloseSpider  # _close_now closes once its items are out
        if self._closing:
            return
        if self.store is not None and self.store.behind:
            # idle only because the store's writer is behind: nothing is in flight
            self.store.catch_up()
        if self._held:  # nothing sent is left to wait for
            self._send_held(force=True)
            raise DontCloseSpider
        # Nothing is scheduled, downloading or being parsed, so these URLs
        # will never come back (a component dropped them silently).
        for state, url in list(self.ledger.unaccounted()):
            logger.warning("Lost request for %s (dropped silently by a Scrapy component)", url)
            self._fail(state, url, "lost")
        reason = self._advance()
        if not reason and self.ledger.outstanding:
            raise DontCloseSpider
        reason = reason or "finished"
        self.close_reason = reason
        if self._items:
            self._close_now(reason)
            raise DontCloseSpider
        if reason != "finished":
            raise CloseSpider(reason)

    # -- close: export ------------------------------------------------------------
    def closed(self, reason: str) -> None:
        self.finished_at = _utc_now()
        self.close_reason = reason
        explorer = self.explorer
        stats = self.stats
        stats.set_value("structcrawl/close_reason", reason)
        self._set_progress_stats()
        # also when no step ran in this run (a resume that closed at once)
        stats.set_value("structcrawl/pages_modelled", len(explorer.model.pages))
        stats.set_value("structcrawl/classes", len(explorer.model.classes))
        try:
            write_model(self.model_document(reason), self.model_out)
        except OSError as exc:
            stats.set_value("structcrawl/export_error", f"{exc.strerror or exc}")
            logger.error("Could not write the site model to %s: %s", self.model_out, exc.strerror or exc)
        else:
            stats.set_value("structcrawl/model_written", self.model_out)
            logger.info(
                "Wrote the site model (%d classes, %d pages modelled) to %s",
                len(explorer.model.classes), len(explorer.model.pages), self.model_out,
            )
        if self.store is not None:
            self.store.close(reason, self._store_figures(reason))
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

    def model_document(self, reason: str | None = None) -> dict[str, Any]:
        """The JSON-ready site model of the crawl state (see ``docs/model-format.md``)."""
        config = self.config
        return model_document(
            self.explorer,
            crawl=self._crawl_figures(reason),
            parameters=config.document_parameters(),
            members=config.members,
            samples=config.samples,
            fingerprint_pages=config.fingerprint_pages,
            occurrence=config.occurrence,
            bodies=self.bodies,
            field_pages=config.field_pages,
            titles=self.steps.titles,
        )


def _utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
