"""The ``harvest`` spider: every page of the chosen classes of a site model, and as few others as it can.

    scrapy crawl harvest -a model=site.model.json -a classes=6,8 [-a like=URL] [-a job=NAME]
        [-a fresh=true] [-a max_pages=N] [-s STRUCTCRAWL_DB=sqlite:///site.db]
        [-s STRUCTCRAWL_HARVEST_BODY=true] -O pages.jsonl

Which URLs to fetch is :class:`structcrawl.analysis.harvestplan.Harvest`'s
(pure); each page is classified as ``structcrawl classify`` does
(:class:`~structcrawl.analysis.classify.Classifier`); the store is
:class:`structcrawl.store.harvest.HarvestStore`.  This module keeps the Scrapy
wiring: requests, callbacks, signals, stats and the items.

One item per target page: ``url``, ``class``, ``cost`` (its classification
cost in bits), ``status``, ``fetched_at`` (UTC, ISO 8601), ``referer`` (the
page it was found on; null for the start URL) and ``via`` (the link-collection
path it was found under), ``fields`` and ``records`` (the class's data, extracted
with the model's XPaths: :mod:`structcrawl.analysis.extract`), plus ``body`` with
``STRUCTCRAWL_HARVEST_BODY``.
Robots.txt, the scope of the model's crawl, spider traps
(:class:`~structcrawl.core.traps.TrapDetector`), ``URLLENGTH_LIMIT``,
``max_pages`` and Scrapy's CLOSESPIDER_* ceilings apply as in the structure spider.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import AsyncIterator, Callable, Iterator
from functools import partial
from typing import TYPE_CHECKING, Any

import scrapy
from scrapy import signals
from scrapy.exceptions import CloseSpider, DontCloseSpider, IgnoreRequest
from scrapy.http import Response
from scrapy.settings import SETTINGS_PRIORITIES
from scrapy.utils.asyncio import run_in_thread

from structcrawl.analysis.classify import Classifier
from structcrawl.analysis.harvestplan import Entry, Harvest, PageOutcome, harvest_collections
from structcrawl.core.explorer import Scope
from structcrawl.core.features import PageFeatures, extract_with_tree
from structcrawl.core.traps import TrapDetector
from structcrawl.core.urls import normalize_url
from structcrawl.crawling.arguments import StartError
from structcrawl.crawling.harvest import (
    continue_csv_feeds,
    flush_feeds,
    harvest_config,
    mend_torn_feeds,
    written_urls,
)
from structcrawl.crawling.refusals import ignored_extensions, refusal
from structcrawl.crawling.responses import is_html
from structcrawl.crawling.sharedplan import PlanStream, Recheck
from structcrawl.files import atomic_write
from structcrawl.report.harvest import SUMMARY_FORMAT
from structcrawl.sitemodel import MDL_DECIMALS
from structcrawl.store.schema import StoreError

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings
    from twisted.python.failure import Failure

    from structcrawl.crawling.sharedplan import Report
    from structcrawl.store.fetched import FetchedPages
    from structcrawl.store.harvest import HarvestStore
    from structcrawl.store.workers import SharedHarvestStore

logger = logging.getLogger(__name__)

META_KEY = "structcrawl_harvest"
#: Items a harvested page gives: its own, or none.
ITEMS_PER_PAGE = 1


class HarvestSpider(scrapy.Spider):
    """Fetch every page of the target classes of a site model, following only the collections that lead there."""

    name = "harvest"

    def __init__(self, **arguments: Any) -> None:
        super().__init__()
        self.arguments = arguments

    @classmethod
    def update_settings(cls, settings: BaseSettings) -> None:
        super().update_settings(settings)
        from structcrawl.crawling.extensions import HarvestLogStats, install_defaults

        install_defaults(settings, HarvestLogStats)
        if settings.getpriority("CONCURRENT_ITEMS") <= SETTINGS_PRIORITIES["default"]:
            # a page gives one item at most: Scrapy starts CONCURRENT_ITEMS item workers (asyncio tasks)
            # for every callback's output, 100 by default — 2.7 ms of the harvest's ~28 ms of CPU a page
            # on geos source listings, for nothing (spider priority: `scrapy crawl` reapplies the defaults)
            settings.set("CONCURRENT_ITEMS", ITEMS_PER_PAGE, priority="spider")
        if settings.get("REDIS_URL"):  # a worker of a harvest shared on Redis: scrapy-redis's components
            for name, value in settings.getdict("STRUCTCRAWL_REDIS_SCHEDULER").items():
                settings.set(name, value, priority="spider")

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> HarvestSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        try:
            spider._configure(crawler)
        except (ValueError, StoreError) as exc:
            logger.error("harvest spider: %s", exc)
            raise StartError(str(exc)) from None
        crawler.signals.connect(spider._on_opened, signal=signals.spider_opened)
        crawler.signals.connect(spider._on_idle, signal=signals.spider_idle)
        crawler.signals.connect(spider._on_dropped, signal=signals.request_dropped)
        return spider

    def _configure(self, crawler: Crawler) -> None:
        settings = self.settings
        config = self.config = harvest_config(self.arguments, settings)
        document = config.model.document
        self.start_url = config.model.start_url
        scope = document.get("parameters", {}).get("scope") or {}
        self.scope = Scope(self.start_url, allow_subdomains=bool(scope.get("allow_subdomains")),
                           extra_domains=tuple(scope.get("extra_domains") or ()))
        self.allowed_domains = [self.scope.host, *self.scope.extra]
        self.classifier = Classifier(config.model)
        self.harvest = Harvest(document, config.targets, explore_share=config.explore_share,
                               explore_min=config.explore_min)
        self.traps = TrapDetector(config.trap_pages)
        self.max_url_length = settings.getint("URLLENGTH_LIMIT")
        self.ignored_extensions = ignored_extensions(settings)
        self.inflight: dict[str, Entry] = {}
        self.hub_inflight = max(1, settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN"))
        self.requested = 0
        self.reused = 0  #: pages read from the structure crawl's store instead of fetched
        self.fetched_before: FetchedPages | None = None
        self.failures = 0
        self._pending: dict[str, int] = {}  #: url of an item handed to Scrapy -> its page's seq in the store
        self.started = time.monotonic()
        for url in (self.start_url, *config.like):
            self.harvest.seed(url)
        self.store: HarvestStore | None = None
        self.shared: SharedHarvestStore | None = None
        self.job_name = config.job  #: the Redis keys' part of a shared harvest (structcrawl.crawling.distributed)
        self.harvest_done = False  #: a shared harvest: nothing queued nor taken by any worker when this one idled
        self.plan: PlanStream | None = None  #: a shared harvest: the pages of every worker (crawling.sharedplan)
        self.elsewhere: set[str] = set()  #: a shared harvest: URLs another worker queued, not to queue again
        self._queued: list[str] = []  #: a shared harvest: URLs this worker queued since its last page report
        self._swept = 0  #: a shared harvest: the re-check round before which it judged the parked requests again
        db = settings.get("STRUCTCRAWL_DB")
        if settings.get("REDIS_URL"):
            from structcrawl.crawling.distributed import check_redis, worker_name
            from structcrawl.store.workers import SharedHarvestStore, check_shared_url

            if not db:
                raise ValueError("a harvest shared on Redis (REDIS_URL) keeps its items and state in PostgreSQL: "
                                 "set STRUCTCRAWL_DB=postgresql+psycopg://…")
            check_shared_url(str(db))
            check_redis(settings)
            self.worker_name = worker_name()
            self.shared = SharedHarvestStore(str(db), config.job, self.start_url, config.store_parameters(),
                                             self.worker_name, fresh=config.fresh)
        elif db:
            from structcrawl.store.harvest import HarvestStore

            self.store = HarvestStore(str(db), config.job, self.start_url, config.store_parameters(),
                                      fresh=config.fresh, stale_after=settings.getfloat("STRUCTCRAWL_DB_LOCK_TIMEOUT"))
            if config.reuse:
                self.fetched_before = self._structure_pages(self.store)
            self._restore(self.store)

    def _structure_pages(self, store: HarvestStore) -> FetchedPages | None:
        """The pages the model's structure crawl fetched, when this store holds that crawl."""
        from structcrawl.store.fetched import FetchedPages

        name = self.config.model.document.get("crawl", {}).get("job")
        pages = FetchedPages.of_job(store.engine, name, self.start_url) if name else None
        if pages is None:
            logger.info("The store holds no structure crawl %r of %s (the model's): every page is fetched", name,
                        self.start_url)
        else:
            logger.info("Reading the %d pages structure crawl %r fetched from the store, but for the targets",
                        len(pages), name)
        return pages

    def _restore(self, store: HarvestStore) -> None:
        """Replay a resumed job's pages into the harvest: the same frontier, nothing fetched again."""
        if store.resumed:
            for path in mend_torn_feeds(self.settings):
                logger.warning("Cut the torn last item a kill left in %s: that item is written again", path)
            continue_csv_feeds(self.settings)
        replayed = 0
        for page in store.restore(partial(written_urls, self.settings)):
            replayed += 1
            self.reused += page.reused
            if page.kind in ("failed", "alias"):
                self.harvest.failed(Entry(page.requested, page.key, page.referer, page.explore), page.kind == "alias")
            else:
                self.harvest.page(page.url, page.key, page.class_id, page.collections, page.explore, page.requested)
        if replayed:
            logger.info("Resumed harvest job %r: %d pages replayed, %d targets already emitted",
                        self.config.job, replayed, self.harvest.harvested)

    def _on_opened(self, spider: scrapy.Spider) -> None:
        # connected now, after the feed exporters (extensions are built after the spider):
        # an item is recorded as emitted only once they have written it
        self.crawler.signals.connect(self._on_item, signal=signals.item_scraped)
        self.crawler.signals.connect(self._on_item, signal=signals.item_dropped)
        self.crawler.stats.set_value("harvest/targets", list(self.config.targets))

    # -- handing out ------------------------------------------------------------------
    async def start(self) -> AsyncIterator[scrapy.Request]:
        if self.shared is not None:
            scheduler = self.crawler.engine.scheduler
            self.plan = PlanStream(scheduler.server, scheduler.queue.plan_key, self.worker_name)
            self._exchange()  # a worker joining late learns what the others did so far
        for request in self._requests():
            yield request

    def _requests(self) -> Iterator[scrapy.Request]:
        # shared on Redis, every URL the plan wants goes to the shared queue at once, ordered there by its
        # priority: a worker's own frontier would die with it
        limit = math.inf if self.shared is not None else self.config.max_inflight
        while len(self.inflight) < limit and self._budget_left():
            # hub pages only while few pages are in flight: those may still show the targets
            # (and the new URLs) that make a hub page unnecessary
            entry = self.harvest.pop(hubs=self.shared is not None or len(self.inflight) < self.hub_inflight)
            if entry is None:
                return
            if entry.url in self.elsewhere:  # fed another worker's page, the plan wants what it queued
                self.elsewhere.discard(entry.url)
                continue
            why = refusal(entry.url, self.max_url_length, self.traps, self.ignored_extensions)
            if why == "trap" and self.harvest.looks_like_target(entry.url):
                # targets first makes a run of target pages that each link fresh pages of their
                # own kind (co-authors) before any listing links them twice, which the trap
                # rule reads as a trap (demo, 30k pages: 1,533 of 3,000 authors refused); a
                # URL of a target class's pattern is fetched, under the page and time ceilings
                why = None
            if why is not None:
                self._failed(entry, why, None)
                continue
            if self.fetched_before is not None and self._read_stored(entry):
                continue
            self.requested += 1
            if self.shared is None:
                self.inflight[entry.url] = entry
            else:
                self._queued.append(entry.url)
            yield self._request(entry)
        if self.shared is not None and self.harvest.parked:
            # hub URLs the plan put aside while the hubs are quiet wait in Redis, where any worker's next
            # new find brings them back (kept in this worker, they would die with it)
            parked, self.harvest.parked = self.harvest.parked, []
            for entry in parked:
                self.crawler.engine.scheduler.park_new(self._request(entry))

    def _request(self, entry: Entry) -> scrapy.Request:
        headers = {"Referer": entry.referer} if entry.referer else None
        # one process: the plan's order, first handed out first (Scrapy's queue of one priority is a stack,
        # which left the first targets handed out under every later request: PostgreSQL's chapters, all
        # listed by the start page, were fetched by request 78 in this order, by 608 in the stack's)
        priority = -self.requested if self.shared is None else self.harvest.priority(entry)
        callback = self.parse_page if self.shared is None else self.parse_shared
        return scrapy.Request(entry.url, callback=callback, errback=self.page_failed, headers=headers,
                              meta={META_KEY: entry}, priority=priority)

    def _top_up(self) -> None:
        for request in self._requests():
            self.crawler.engine.crawl(request)

    def _budget_left(self) -> bool:
        return not self.config.max_pages or self.requested < self.config.max_pages

    # -- pages --------------------------------------------------------------------------
    async def parse_shared(self, response: Response) -> list[dict[str, Any]]:
        """A shared harvest's callback: the page's item is stored in PostgreSQL in a thread (the worker parses
        other pages meanwhile: the insert's round trip was 18 of a page's 43 ms on the reactor, profiled),
        emitted only if this worker stored it first, and then the request is acknowledged."""
        kept = []
        for item in self.parse_page(response):
            if await run_in_thread(self.shared.item, item["url"], item["class"], item):
                kept.append(item)
            else:
                # another worker stored this page (a request re-queued from a dead worker, or another URL
                # redirecting here): the store holds each target once, so its item is not emitted again
                self.crawler.stats.inc_value("harvest/duplicates")
        self._ack(response.request)
        return kept

    def parse_page(self, response: Response) -> list[dict[str, Any]]:
        entry: Entry = response.meta[META_KEY]
        self.inflight.pop(entry.url, None)
        self.crawler.stats.inc_value("harvest/pages_fetched")
        if self.shared is not None:
            self.shared.fetched()
        final = normalize_url(response.url) or entry.url
        if final != entry.url and final in self.harvest.done:
            self._failed(entry, "duplicate", response.status, alias=True)
        elif not self.scope(final):
            self._failed(entry, "off_scope", response.status)
        elif not is_html(response):
            self._failed(entry, "non_html", response.status)
        else:
            return self._page(entry, final, response)
        self._top_up()
        return []

    def _page(self, entry: Entry, final: str, response: Response) -> list[dict[str, Any]]:
        ctype = response.headers.get(b"Content-Type")
        features, tree = extract_with_tree(response.body, final, ctype.decode("latin-1") if ctype else None)
        cls, cost = self.classifier.classify_features(features)
        outcome, seq = self._plan_page(entry, final, features, cls, response.status)
        self._top_up()
        if self.plan is not None:
            self.plan.page(final, entry.key, cls, outcome.new, entry.explore, entry.url, self._take_queued())
        if outcome.kind != "target":
            return []
        cls = outcome.target
        item: dict[str, Any] = {
            "url": final,
            "class": cls,
            "cost": round(cost, MDL_DECIMALS),
            "status": response.status,
            "fetched_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "referer": entry.referer,
            "via": None if entry.key is None else entry.key[1],
            # the fields off the features' tree: one parse a page (parsel's own made a harvest a tenth slower)
            **(self.config.extractor.extract(response.text, cls) if tree is None
               else self.config.extractor.extract_tree(tree, cls)),
        }
        if self.config.body:
            item["body"] = response.text
        if seq is not None:
            self._pending[final] = seq
        return [item]

    def _plan_page(self, entry: Entry, final: str, features: PageFeatures, cls: int | None,
                   status: int | None) -> tuple[PageOutcome, int | None]:
        """Feed the plan a page of class ``cls`` (``status`` None: read from the structure crawl's store);
        its outcome and its row in the harvest store."""
        trap = self.traps.observe(features)
        if trap is not None:
            logger.warning("Spider trap (%s): URLs found only on its pages are not fetched", trap)
            self.crawler.stats.inc_value("harvest/traps")
        speller = self.config.model.site_model.speller
        spelled = {path: [u for u in urls if self.scope(u)]
                   for path, urls in speller.collections(features.collections).items()}
        collections = harvest_collections(features, spelled, speller.spell)
        quiet = self.harvest.hubs_quiet()
        outcome = self.harvest.page(final, entry.key, cls, collections, entry.explore, entry.url)
        if self.shared is not None and quiet and not self.harvest.hubs_quiet():
            # the page showed something new: the requests parked by any worker are worth fetching again
            self.crawler.engine.scheduler.unpark()
        self.crawler.stats.inc_value(f"harvest/pages/{outcome.kind}")
        self.crawler.stats.inc_value(f"harvest/class/{cls}")
        if entry.explore:
            self.crawler.stats.inc_value("harvest/pages_explored")
        seq = None
        if self.store is not None:
            seq = self.store.page(final, cls, entry.key, entry.referer, entry.explore, outcome.kind, status,
                                  outcome.new, requested=entry.url)
        return outcome, seq

    def _read_stored(self, entry: Entry) -> bool:
        """Feed the plan the page the structure crawl fetched at ``entry.url``, if it did and the page is not a
        target (its item is a fresh fetch); False: fetch it."""
        stored = self.fetched_before.take(entry.url)
        if stored is None or not self.scope(stored.url):
            return False
        if stored.url != entry.url and stored.url in self.harvest.done:
            self._failed(entry, "duplicate", None, alias=True)
            return True
        cls, _cost = self.classifier.classify_features(stored)
        if cls in self.harvest.targets or self.harvest.target_by_url(stored.url, cls) is not None:
            return False
        self._plan_page(entry, stored.url, stored, cls, None)
        self.reused += 1
        self.crawler.stats.inc_value("harvest/pages_reused")
        return True

    def page_failed(self, failure: Failure) -> None:
        self._page_failed(failure)
        self._ack(failure.request)

    def _page_failed(self, failure: Failure) -> None:
        entry: Entry | None = failure.request.meta.get(META_KEY)
        if entry is None:
            return
        self.inflight.pop(entry.url, None)
        response = getattr(failure.value, "response", None)
        if response is not None:
            self.crawler.stats.inc_value("harvest/pages_fetched")
            if self.shared is not None:
                self.shared.fetched()
            why = f"http_{response.status}"
        elif failure.check(IgnoreRequest):
            text = str(failure.value).lower()
            why = "robots_txt" if "robots" in text else "offsite" if "offsite" in text else "ignored"
        else:
            why = type(failure.value).__name__
        self._failed(entry, why, None if response is None else response.status)
        self._top_up()

    def _failed(self, entry: Entry, why: str, status: int | None, alias: bool = False) -> None:
        logger.debug("Failed %s: %s", entry.url, why)
        self.failures += 1
        self.crawler.stats.inc_value(f"harvest/failed/{why}")
        self.harvest.failed(entry, alias)
        if self.plan is not None:
            self.plan.failed(entry, alias, self._take_queued())
        if self.store is not None:
            self.store.page(entry.url, None, entry.key, entry.referer, entry.explore, "alias" if alias else "failed",
                            status, (), requested=entry.url)

    def _on_dropped(self, request: scrapy.Request, spider: scrapy.Spider) -> None:
        """The scheduler's dupefilter dropped a request: a redirect to a URL requested already, or a URL
        a redirect requested already."""
        entry = request.meta.get(META_KEY)
        if entry is not None and self.inflight.pop(entry.url, None) is not None:
            # another request fetches that page: this URL is not done (it may be that request's
            # final URL), only this request is
            self.crawler.stats.inc_value("harvest/dropped")
            self._top_up()

    def _on_item(self, item: Any, spider: scrapy.Spider, **kwargs: Any) -> None:
        self.crawler.stats.inc_value("harvest/items")
        seq = self._pending.pop(item.get("url"), None) if isinstance(item, dict) else None
        if seq is None or self.store is None:
            return
        if "exception" not in kwargs:  # item_scraped: it went to the exporters
            flush_feeds(self.crawler)
        self.store.emitted(seq)

    def min_priority(self) -> int | None:
        """A shared harvest: the lowest request priority this worker takes now.  Hub pages only while few
        pages are in flight, as in :meth:`_requests` (those pages may still show the targets and the
        new URLs that make a hub page unnecessary): targets, seeds and probes only otherwise."""
        return 0 if len(self.crawler.engine.downloader.active) >= self.hub_inflight else None

    def defers(self, request: scrapy.Request) -> str | None:
        """A shared harvest: is ``request`` of a collection found dead (WITHDRAW: the plan holds its URL, as
        :meth:`Harvest.pop` does in the one-process harvest, where a re-check finds it), or a hub page while
        the hubs are quiet (PARK: it waits in Redis until a page shows something new)?  URLs queued at once
        in Redis would otherwise all be fetched."""
        from structcrawl.crawling.distributed import PARK, WITHDRAW

        entry: Entry | None = request.meta.get(META_KEY)
        if entry is None:
            return None
        if self.harvest.skipped(entry):
            self.harvest.hold(entry)
            self.elsewhere.discard(entry.url)
            if self.plan is not None:
                self.plan.hold(entry)
                self.plan.send()  # every plan holds it before the queue forgets it
            return WITHDRAW
        return PARK if self.harvest.waits(entry) else None

    def _ack(self, request: scrapy.Request) -> None:
        """A shared harvest: the request's outcome is durable, the scheduler forgets its lease; in the same
        round trip the page goes to the other workers' plans and theirs come to this one's."""
        if self.shared is None:
            return
        scheduler = self.crawler.engine.scheduler
        if self.plan is None:
            scheduler.ack(request)
        else:
            self._exchange(lambda pipe: scheduler.ack(request, pipe))

    def _take_queued(self) -> list[str]:
        queued, self._queued = self._queued, []
        return queued

    def _exchange(self, also: Callable[[Any], object] | None = None) -> None:
        """Send this worker's page reports; feed the plan the other workers' pages (and queue what it wants
        that they did not).  ``also`` adds commands to that round trip's pipeline."""
        if self.plan is None:  # idle before the start requests ran
            return
        reports = self.plan.exchange(also)
        for report in reports:
            self._replay(report)
        if reports:
            self._top_up()

    def _replay(self, report: Report | Recheck) -> None:
        if isinstance(report, Recheck):  # another worker found the job's plan run dry first
            self.harvest.recheck()
            return
        if report.held:
            self.harvest.hold(report.entry())
            self.elsewhere.discard(report.url)
            return
        if report.failed:
            self.harvest.failed(report.entry(), report.alias)
        else:
            self.harvest.page(report.url, report.key, report.cls, report.collections, report.explore,
                              report.requested)
        self.elsewhere.update(report.queued)

    def _on_idle(self, spider: scrapy.Spider) -> None:
        """Nothing is scheduled, downloading or parsed: the URLs that waited for pages on their way go; if
        none does, the plan ran dry, and the skipped collections that lead toward the targets get probes
        again (:meth:`Harvest.recheck`), round after round until a request is in flight or nothing is left
        to try, as ``benchmarks/harvest_replay.py`` does.  A round's probes may all be pages read from the
        structure crawl's store: no request is in flight after them and no idle signal comes, so the next
        round goes at once.  One round a call ended qtbase's class-member harvest over HTTP (one of two runs
        on one model) after a first round of 14 attribution pages (the overview pages' tables), all read from
        the store, before the round that opens the member-list links the class pages held back, among them
        ``qdomdocument-obsolete.html``, the only way to the 13 ``QXml*`` classes: recall 0.984, 1,655
        requests.  Driven in that run's own order, the plan gives 0.984 / 1,658 so, 1.000 / 1,745 looping.
        (A shared harvest's worker raises DontCloseSpider after each round: :meth:`_shared_idle`.)"""
        if self.shared is not None:
            self._shared_idle()
            return
        # what is still "in flight" was dropped silently
        for entry in list(self.inflight.values()):
            logger.warning("Lost request for %s (dropped silently by a Scrapy component)", entry.url)
            del self.inflight[entry.url]
            self._failed(entry, "lost", None)
        self.harvest.idle()
        self._top_up()
        while not self.inflight and self._budget_left() and (self.harvest.idle() or self.harvest.recheck()):
            self._top_up()
        if self.inflight:
            raise DontCloseSpider
        if not self._budget_left():
            raise CloseSpider("max_pages")

    def _shared_idle(self) -> None:
        """Idle, a worker of a shared harvest waits while any worker holds a request or any is queued
        (those may still bring new URLs).  When neither is left the job's plan ran dry: the worker that
        finds it so first re-checks the skipped collections for the whole job (one round, sent on the
        plan stream before its probes are queued: crawling.sharedplan); the harvest is done when that
        opens nothing.

        So a worker leaves only when two reads of the backlog in one call, the plan stream read to its end
        between them, found no request queued and none leased by any worker (no page in flight anywhere: a
        page's new requests are queued before its lease is acknowledged), after it put the parked requests
        back in the queue once in this round.  Requests still parked then are not waited for: each was
        parked again by the worker that popped it, its plan judging it a hub of a quiet class.  Others may
        go on after it: a worker whose plan, fed the same pages in another order, re-checks a collection
        or takes a parked request this one would not, or one that joins later; each leaves by this rule."""
        scheduler = self.crawler.engine.scheduler
        vanished = scheduler.drop_held()  # nothing of this worker is downloading or parsed now
        if vanished:
            logger.warning("Lost %d requests (dropped silently by a Scrapy component)", vanished)
            self.crawler.stats.inc_value("harvest/failed/lost", vanished)
        self._exchange()
        self._top_up()
        self.shared.heartbeat()
        if any(scheduler.backlog()):
            raise DontCloseSpider
        if not self._budget_left():
            raise CloseSpider("max_pages")
        # nothing queued nor leased: every page fetched is acknowledged, so reported; this worker's plan
        # reads them all before it judges the plan dry
        self._exchange()
        if any(scheduler.backlog()):
            raise DontCloseSpider
        if self.harvest.idle():  # no page is on its way now: the URLs that waited for one go
            self._top_up()
            raise DontCloseSpider
        if self._swept <= self.plan.rechecks and scheduler.unpark():
            # once a round, the requests parked in Redis (quiet hubs) are judged again before the re-check:
            # those of a collection found dead since they were parked are withdrawn, held by every plan,
            # where the re-check finds them (Harvest.recheck does the same with the one process's parked URLs)
            self._swept = self.plan.rechecks + 1
            raise DontCloseSpider
        if self.harvest.recheck():
            self.plan.recheck()
            self._exchange()  # the round goes out before its probes are queued
            self._top_up()
            raise DontCloseSpider  # the probes' pages may open more; the next idle looks again
        self.harvest_done = True

    # -- the end ---------------------------------------------------------------------
    def figures(self) -> dict[str, Any]:
        h = self.harvest
        return {
            "targets": h.harvested,
            "estimated_targets": h.estimated_targets(),
            "fetched": h.fetched - self.reused,
            "requested": self.requested,
            "reused": self.reused,
            "non_target": h.fetched - self.reused - h.harvested,
            "explored": h.explored,
            "failed": self.failures,
            "waiting": h.waiting(),
            "parked": len(h.parked),
            "pages": dict(h.kinds),
        }

    def _write_summary(self, path: str, reason: str, figures: dict[str, Any]) -> None:
        """The harvest's figures per class, for ``structcrawl report MODEL --harvest FILE``."""
        document = {"format": SUMMARY_FORMAT, "model": self.config.model_path, "targets": list(self.config.targets),
                    "close_reason": reason, **figures, "classes": self.harvest.summary()}
        try:
            with atomic_write(path) as fh:
                json.dump(document, fh, sort_keys=True, indent=2)
                fh.write("\n")
        except OSError as exc:
            logger.error("could not write the harvest summary to %s: %s", path, exc.strerror or exc)

    def closed(self, reason: str) -> None:
        figures = self.figures()
        stats = self.crawler.stats
        for name, value in figures.items():
            if name != "pages":
                stats.set_value(f"harvest/{name}", value)
        stats.set_value("harvest/close_reason", reason)
        if self.store is not None:
            self.store.close(reason, figures)
        if self.shared is not None:
            self.shared.close(reason, self.harvest_done, figures)
        if self.config.summary:
            self._write_summary(self.config.summary, reason, figures)
        precision = figures["targets"] / figures["fetched"] if figures["fetched"] else 0.0
        logger.info(
            "Harvest closed (%s): %d targets of classes %s harvested, %d pages fetched and %d read from the "
            "structure crawl's store (%d not targets: %s; %d explored, %d failed), precision %.3f, %.1f s",
            reason, figures["targets"], ",".join(map(str, self.config.targets)), figures["fetched"],
            figures["reused"], figures["non_target"] + figures["reused"],
            ", ".join(f"{k} {v}" for k, v in sorted(figures["pages"].items()) if k != "target")
            or "none", figures["explored"], figures["failed"], precision, time.monotonic() - self.started,
        )
