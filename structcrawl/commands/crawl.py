"""``structcrawl crawl URL``: crawl a site with the structure spider and write its site model."""

from __future__ import annotations

import argparse

from structcrawl.commands.errors import CommandError
from structcrawl.crawling.runner import CrawlError, CrawlResult, parse_setting_overrides, run_structure_crawl
from structcrawl.report.table import class_table
from structcrawl.sitemodel import ModelFormatError, load_model


def settings_from(args: argparse.Namespace) -> dict:
    """The Scrapy settings a crawling command's options give: ``-s``, ``--loglevel``, ``--db``."""
    overrides = parse_setting_overrides(args.set)
    if args.loglevel:
        overrides["LOG_LEVEL"] = args.loglevel.upper()
    if args.db:
        overrides["STRUCTCRAWL_DB"] = args.db
    return overrides


def run(args: argparse.Namespace) -> int:
    try:
        overrides = settings_from(args)
        result = run_structure_crawl(
            args.url,
            strategy=args.strategy,
            max_pages=args.max_pages,
            batch=args.batch,
            stop=args.stop,
            job=args.job,
            members=True if args.members else None,
            fresh=True if args.fresh else None,
            model_out=args.output,
            settings=overrides,
        )
    except CrawlError as exc:
        raise CommandError(str(exc)) from None
    check_crawl_result(result)
    print(
        f"{result.reason}: {result.stat('structcrawl/pages_requested', 0)} pages requested, "
        f"{result.stat('structcrawl/pages_modelled', 0)} modelled, {result.stat('structcrawl/classes', 0)} classes; "
        f"model written to {result.model_out}"
    )
    try:
        model = load_model(result.model_out)
    except ModelFormatError as exc:
        raise CommandError(str(exc)) from None
    print()
    print("\n".join(class_table(model)))
    return 0


def check_crawl_result(result: CrawlResult) -> None:
    """A crawl that could not start, write its model or model any page is a :class:`CommandError`."""
    if result.bootstrap_failed and not result.stats:
        raise CommandError("the crawl could not start (see the log above)")
    if result.stat("structcrawl/export_error"):
        raise CommandError(
            f"could not write the site model to {result.model_out}: {result.stat('structcrawl/export_error')}"
        )
    if not result.stat("structcrawl/pages_modelled"):
        failures = sorted(k.split("/", 2)[2] for k in result.stats if k.startswith("structcrawl/failed/"))
        why = f" (failures: {', '.join(failures)})" if failures else ""
        raise CommandError(f"no page could be modelled, the start URL gave nothing usable{why}")
