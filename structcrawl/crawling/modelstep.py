"""A completed batch through the explorer: the model step, the trap detector, its stats, its items.

No scrapy import: the crawler is only asked for its stats collector.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from structcrawl.crawling.items import modelled_page
from structcrawl.sitemodel import PageTitles

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from structcrawl.core.explorer import Explorer, StepReport
    from structcrawl.core.features import PageFeatures
    from structcrawl.core.traps import TrapDetector
    from structcrawl.crawling.ledger import BatchState

logger = logging.getLogger(__name__)

#: A model step slower than this is logged.
SLOW_STEP_SECONDS = 0.25


@dataclass
class Step:
    state: BatchState
    report: StepReport
    seconds: float
    merges_before: int  #: explorer.merges before the step (the store records the new ones)
    new: dict[str, int]  #: final URL -> HTTP status of the pages not modelled before the step


class ModelSteps:
    def __init__(self, explorer: Explorer, traps: TrapDetector, crawler: Crawler, stop: str) -> None:
        self.explorer = explorer
        self.traps = traps
        self.crawler = crawler  # its stats exist only once the crawl starts
        self.stop = stop
        self.stable_logged = False
        self.max_seconds = 0.0
        self.total_seconds = 0.0
        self.titles = PageTitles()  #: of every page stepped, for the samples' titles in the model

    @property
    def stats(self) -> StatsCollector:
        return self.crawler.stats

    def complete(self, state: BatchState) -> Step:
        """Run the model step of ``state`` (every URL of it accounted for, every earlier batch stepped)."""
        explorer = self.explorer
        urls = state.batch.urls
        for url in urls:  # redirects first: the final page is then known as issued
            final = state.redirects.get(url)
            if final is not None:
                explorer.redirected(url, final)
        pages = [state.pages[u] for u in urls if u in state.pages]
        new = {state.pages[u].url: state.fetched[u][0] for u in urls
               if u in state.pages and state.pages[u].url not in explorer.model.pages}
        merges = len(explorer.merges)
        t0 = time.perf_counter()
        report = explorer.complete(state.batch, pages, [u for u in urls if u in state.failed])
        step = Step(state, report, time.perf_counter() - t0, merges, new)
        self.observe(pages)
        return step

    def observe(self, pages: Iterable[PageFeatures], log: bool = True) -> None:
        """The pages of a model step, in step order, to the titles and the trap detector (``log=False``:
        a replay)."""
        pages = list(pages)
        self.titles.keep(pages)
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

    def record(self, step: Step, requested: int) -> list[dict[str, Any]]:
        """The step's stats and log lines; its items (one per page that entered the model)."""
        explorer, model, stats = self.explorer, self.explorer.model, self.stats
        self.total_seconds += step.seconds
        self.max_seconds = max(self.max_seconds, step.seconds)
        if step.seconds > SLOW_STEP_SECONDS:
            logger.warning(
                "Slow model step: %.0f ms for batch %s (%d pages, %d classes)",
                step.seconds * 1000, step.state.batch.key, len(step.state.pages), len(model.classes),
            )
        stats.set_value("structcrawl/model_updates", explorer.updates)
        stats.set_value("structcrawl/pages_modelled", len(model.pages))
        stats.set_value("structcrawl/classes", len(model.classes))
        stats.set_value("structcrawl/mdl_bits", round(model.mdl, 1))
        stats.set_value("structcrawl/model_bits", round(model.model_bits, 1))
        stats.set_value("structcrawl/data_bits", round(model.data_bits, 1))
        stats.set_value("structcrawl/quiet_checks", explorer.stability.quiet_checks)
        stats.set_value("structcrawl/stability_window", explorer.stability.window)
        stats.set_value("structcrawl/model_step_max_ms", round(self.max_seconds * 1000, 3))
        stats.set_value("structcrawl/model_step_total_s", round(self.total_seconds, 3))
        for region in step.report.dead_regions:
            stats.set_value("structcrawl/dead_regions", len(explorer.frontier.dead.found))
            logger.info("Dead region %s: %d or more of its URLs failed and none answered; its other URLs are not "
                        "fetched", region, explorer.frontier.dead.failures)
        created = sum(d.action == "new" for d in step.report.decisions)
        if created:
            stats.inc_value("structcrawl/classes_created", created)
        if step.report.stable and not self.stable_logged:
            self.stable_logged = True
            stats.set_value("structcrawl/stable", True)
            stats.set_value("structcrawl/stable_at_pages", len(model.pages))
            stats.set_value("structcrawl/stable_at_requests", requested)
            stats.set_value("structcrawl/stability_reason", explorer.stability.reason)
            logger.info(
                "Model is stable after %d model updates and %d pages requested: %s%s",
                explorer.updates, requested, explorer.stability.reason,
                "" if self.stop == "stable" else " (stop=exhaust: crawling on)",
            )
        return [
            modelled_page(model, url, status, step.state.batch)
            for url, status in step.new.items()
            if url in model.page_class  # not a copy of a page modelled before
        ]
