"""Scrapy extensions of structcrawl.

``StructureLogStats`` — like Scrapy's LogStats, a periodic progress line of the
structure crawl, every ``STRUCTCRAWL_LOGSTATS_INTERVAL`` seconds (default 10;
0 disables it)::

    Structure: 412 pages fetched (at 380 pages/min), 405 modelled in 9 classes,
    MDL 52311 bits (129.2/page), queue 1203 URLs, 24 in flight, stability 2/3 checks held

It reads the ``structcrawl/…`` values that the ``structure`` spider keeps in
Scrapy's stats collector, so it does no work of its own besides the log line.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy.exceptions import NotConfigured
from scrapy.settings import SETTINGS_PRIORITIES
from scrapy.utils.asyncio import create_looping_call

from structcrawl.crawling.robots import SharedRobotsTxtMiddleware
from structcrawl.settings import STRUCTCRAWL_DEFAULTS

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings
    from scrapy.statscollectors import StatsCollector

logger = logging.getLogger(__name__)


def install_defaults(settings: BaseSettings, progress_extension: type) -> None:
    """A spider's ``update_settings``: every ``STRUCTCRAWL_*`` default, its progress extension and
    the robots.txt middleware that checks every request (:mod:`structcrawl.crawling.robots`), also
    in a Scrapy project whose settings know nothing of structcrawl."""
    for name, value in STRUCTCRAWL_DEFAULTS.items():
        settings.set(name, value, priority="default")
    settings.setdefault_in_component_priority_dict("EXTENSIONS", progress_extension, 500)
    # in the place of Scrapy's (its order, 100), unless the project set Scrapy's (an order, or None: off)
    stock = f"{RobotsTxtMiddleware.__module__}.{RobotsTxtMiddleware.__name__}"
    if not any(name in (RobotsTxtMiddleware, stock) for name in settings.getdict("DOWNLOADER_MIDDLEWARES")):
        settings.setdefault_in_component_priority_dict("DOWNLOADER_MIDDLEWARES", SharedRobotsTxtMiddleware, 100)
        settings.setdefault_in_component_priority_dict("DOWNLOADER_MIDDLEWARES", RobotsTxtMiddleware, None)
    # `scrapy crawl` applies the process settings over the crawler's once more
    # (CrawlerProcess.create_crawler given a crawler): at default priority the
    # project's dicts would replace these, and the progress line be lost
    for name in ("EXTENSIONS", "DOWNLOADER_MIDDLEWARES"):
        if settings.getpriority(name) < SETTINGS_PRIORITIES["spider"]:
            settings.set(name, settings.getdict(name), "spider")


class StructureLogStats:
    def __init__(self, stats: StatsCollector, interval: float) -> None:
        self.stats = stats
        self.interval = interval
        self.multiplier = 60.0 / interval
        self.task: Any = None
        self._prev = 0

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> StructureLogStats:
        interval = crawler.settings.getfloat("STRUCTCRAWL_LOGSTATS_INTERVAL")
        if interval <= 0:
            raise NotConfigured
        ext = cls(crawler.stats, interval)
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        return ext

    def spider_opened(self, spider: Spider) -> None:
        if getattr(spider, "name", None) != "structure" and not hasattr(spider, "explorer"):
            return  # another spider: nothing to report
        self._prev = 0
        self.task = create_looping_call(self.log, spider)
        self.task.start(self.interval, now=False)

    def line(self) -> str:
        get = self.stats.get_value
        fetched = get("structcrawl/pages_fetched", 0)
        rate = (fetched - self._prev) * self.multiplier
        self._prev = fetched
        modelled = get("structcrawl/pages_modelled", 0)
        mdl = get("structcrawl/mdl_bits", 0.0)
        per_page = mdl / modelled if modelled else 0.0
        if get("structcrawl/stable"):
            stability = f"stable at {get('structcrawl/stable_at_pages', 0)} pages"
        else:
            stability = f"{get('structcrawl/quiet_checks', 0)}/{get('structcrawl/stability_window', 0)} checks held"
        return (
            f"Structure: {fetched} pages fetched (at {rate:.0f} pages/min), {modelled} modelled in "
            f"{get('structcrawl/classes', 0)} classes, MDL {mdl:.0f} bits ({per_page:.1f}/page), "
            f"queue {get('structcrawl/queue_urls', 0)} URLs, {get('structcrawl/inflight', 0)} in flight, "
            f"stability {stability}"
        )

    def log(self, spider: Spider) -> None:
        logger.info(self.line(), extra={"spider": spider})

    def spider_closed(self, spider: Spider, reason: str) -> None:
        if self.task is not None and self.task.running:
            self.task.stop()


class HarvestLogStats:
    """The harvest's progress line, every ``STRUCTCRAWL_LOGSTATS_INTERVAL`` seconds (0 disables it)::

        Harvest: 812 targets harvested of ~1490 estimated, 903 pages fetched (91 not targets, 6 explored),
        640 URLs waiting, 95 pages/s, ETA 7 s

    The estimate is the harvest's (the model's link counts refined by what the
    pages turned out to be); the ETA divides the URLs waiting by the fetch rate
    of the last interval.
    """

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self.task: Any = None
        self._prev = 0

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> HarvestLogStats:
        interval = crawler.settings.getfloat("STRUCTCRAWL_LOGSTATS_INTERVAL")
        if interval <= 0:
            raise NotConfigured
        ext = cls(interval)
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        return ext

    def spider_opened(self, spider: Spider) -> None:
        if not hasattr(spider, "harvest"):
            return  # another spider: nothing to report
        self._prev = spider.figures()["fetched"]
        self.task = create_looping_call(self.log, spider)
        self.task.start(self.interval, now=False)

    def line(self, spider: Any) -> str:
        f = spider.figures()
        rate = (f["fetched"] - self._prev) / self.interval
        self._prev = f["fetched"]
        eta = f"{f['waiting'] / rate:.0f} s" if rate > 0 else "unknown"
        return (
            f"Harvest: {f['targets']} targets harvested of ~{f['estimated_targets']} estimated, {f['fetched']} pages "
            f"fetched ({f['non_target']} not targets, {f['explored']} explored), {f['reused']} read from the "
            f"structure crawl's store, {f['waiting']} URLs waiting, "
            f"{rate:.0f} pages/s, ETA {eta}"
        )

    def log(self, spider: Spider) -> None:
        logger.info(self.line(spider), extra={"spider": spider})

    def spider_closed(self, spider: Spider, reason: str) -> None:
        if self.task is not None and self.task.running:
            self.task.stop()
