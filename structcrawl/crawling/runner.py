"""Run the ``structure`` spider in-process (``structcrawl crawl`` / ``structcrawl demo``).

Scrapy's ``CrawlerProcess`` with the settings of :mod:`structcrawl.settings`
plus the caller's overrides; one crawl per process (the Twisted reactor cannot
be restarted).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


class CrawlError(ValueError):
    """Bad crawl arguments or settings (reported before Scrapy starts)."""


@dataclass
class CrawlResult:
    reason: str | None
    stats: dict[str, Any] = field(default_factory=dict)
    model_out: str | None = None
    written: bool = False
    bootstrap_failed: bool = False

    def stat(self, name: str, default: Any = None) -> Any:
        return self.stats.get(name, default)


def parse_setting_overrides(pairs: list[str] | None) -> dict[str, str]:
    """``["NAME=VALUE", …]`` (the ``-s`` options) → dict; CrawlError on a malformed pair."""
    out: dict[str, str] = {}
    for pair in pairs or []:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise CrawlError(f"invalid -s value {pair!r}: use -s NAME=VALUE")
        out[name.strip()] = value
    return out


def build_settings(overrides: Mapping[str, Any] | None = None) -> Any:
    from scrapy.settings import Settings

    settings = Settings()
    settings.setmodule("structcrawl.settings", priority="project")
    if overrides:
        settings.setdict(dict(overrides), priority="cmdline")
    return settings


def check_arguments(spider_args: Mapping[str, Any], settings: Any) -> None:
    """Reject what the spider would reject, with its one-line message, before Scrapy starts."""
    from structcrawl.crawling.arguments import crawl_config

    try:
        crawl_config(spider_args, settings)
    except ValueError as exc:
        raise CrawlError(str(exc)) from None


def run_structure_crawl(
    start_url: str,
    *,
    strategy: str | None = None,
    max_pages: int | None = None,
    batch: int | None = None,
    stop: str | None = None,
    job: str | None = None,
    members: bool | None = None,
    fresh: bool | None = None,
    model_out: str | None = None,
    settings: Mapping[str, Any] | None = None,
) -> CrawlResult:
    """Crawl ``start_url`` with the structure spider; blocks until the crawl closes."""
    overrides = dict(settings or {})
    if model_out:
        overrides["STRUCTCRAWL_MODEL_OUT"] = model_out
    try:
        scrapy_settings = build_settings(overrides)
    except (TypeError, ValueError) as exc:
        raise CrawlError(f"bad setting: {exc}") from None

    from scrapy.crawler import CrawlerProcess

    from structcrawl.crawling.arguments import StartError
    from structcrawl.spiders.structure import StructureSpider

    spider_args: dict[str, Any] = {"start_url": start_url}
    for name, value in (
        ("strategy", strategy),
        ("max_pages", max_pages),
        ("batch", batch),
        ("stop", stop),
        ("job", job),
        ("members", members),
        ("fresh", fresh),
    ):
        if value is not None:
            spider_args[name] = value
    check_arguments(spider_args, scrapy_settings)
    process = CrawlerProcess(scrapy_settings)
    crawler = process.create_crawler(StructureSpider)
    failures: list[Any] = []
    # errors while the crawl starts (a bad setting, a store that cannot be opened) end the
    # Deferred; taking them here keeps Twisted from printing "Unhandled error in Deferred"
    process.crawl(crawler, **spider_args).addErrback(failures.append)
    try:
        process.start()
    except StartError as exc:  # locked or finished job, schema version … (already logged)
        raise CrawlError(exc.message) from None
    if failures:
        exc = failures[0].value
        if isinstance(exc, StartError):
            raise CrawlError(exc.message) from None
        if isinstance(exc, ValueError):
            raise CrawlError(str(exc)) from None
        failures[0].raiseException()
    stats: dict[str, Any] = {}
    if getattr(crawler, "_stats", None) is not None or getattr(crawler, "spider", None) is not None:
        try:
            stats = dict(crawler.stats.get_stats())
        except RuntimeError:
            stats = {}
    if stats.get("structcrawl/store_error"):
        # the model JSON was written from memory, but the job in the database stops at its last commit
        raise CrawlError(
            f"the crawl store failed ({stats['structcrawl/store_error']}); job {stats.get('structcrawl/job')!r} "
            "is kept at its last commit: run the same command again to resume it"
        )
    return CrawlResult(
        reason=stats.get("finish_reason"),
        stats=stats,
        model_out=stats.get("structcrawl/model_out"),
        written=bool(stats.get("structcrawl/model_written")),
        bootstrap_failed=bool(process.bootstrap_failed),
    )


def run_harvest(spider_args: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """Run the harvest spider in-process (``structcrawl harvest``); its stats (empty when it did not start)."""
    try:
        scrapy_settings = build_settings(overrides)
    except (TypeError, ValueError) as exc:
        raise CrawlError(f"bad setting: {exc}") from None
    from scrapy.crawler import CrawlerProcess

    from structcrawl.crawling.arguments import StartError
    from structcrawl.crawling.harvest import harvest_config
    from structcrawl.spiders.harvest import HarvestSpider

    try:
        harvest_config(spider_args, scrapy_settings)  # the spider's one-line messages, before Scrapy starts
    except ValueError as exc:
        raise CrawlError(str(exc)) from None
    process = CrawlerProcess(scrapy_settings)
    crawler = process.create_crawler(HarvestSpider)
    failures: list[Any] = []
    process.crawl(crawler, **spider_args).addErrback(failures.append)
    try:
        process.start()
    except StartError as exc:
        raise CrawlError(exc.message) from None
    if failures:
        exc = failures[0].value
        if isinstance(exc, StartError):
            raise CrawlError(exc.message) from None
        failures[0].raiseException()
    try:
        return dict(crawler.stats.get_stats())
    except RuntimeError:
        return {}
