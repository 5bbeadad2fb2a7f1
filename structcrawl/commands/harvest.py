"""``structcrawl harvest MODEL.json --classes 6,8 -O out.jsonl``: every page of the chosen classes, as Scrapy items.

Runs the ``harvest`` spider (:mod:`structcrawl.spiders.harvest`) in-process with the settings of
:mod:`structcrawl.settings`; ``-O``/``-o`` are Scrapy's feed exports (the format from the file's
extension: ``.jsonl``, ``.csv``, ``.json``, ``.xml``).  Bad arguments, an unreadable model, an unknown
class id or a ``--like`` page that fits no class end in one ``structcrawl: error:`` line, status 2.
"""

from __future__ import annotations

import argparse

from structcrawl.commands.crawl import settings_from
from structcrawl.commands.errors import CommandError
from structcrawl.crawling.runner import CrawlError, run_harvest


def run(args: argparse.Namespace) -> int:
    try:
        overrides = settings_from(args)
        feeds = {}
        for path, overwrite in [(p, True) for p in args.overwrite_output] + [(p, False) for p in args.output]:
            feeds[path] = {"format": _format(path), "overwrite": overwrite}
        if feeds:
            overrides["FEEDS"] = feeds
        spider_args = {"model": args.model, "classes": ",".join(args.classes or []), "like": ",".join(args.like or [])}
        for name, value in (("job", args.job), ("fresh", "true" if args.fresh else None),
                            ("max_pages", args.max_pages)):
            if value is not None:
                spider_args[name] = value
        stats = run_harvest({k: v for k, v in spider_args.items() if v != ""}, overrides)
    except CrawlError as exc:
        raise CommandError(str(exc)) from None
    if not stats:
        raise CommandError("the harvest could not start (see the log above)")
    print(
        f"{stats.get('harvest/close_reason')}: {stats.get('harvest/targets', 0)} target pages harvested, "
        f"{stats.get('harvest/fetched', 0)} pages fetched ({stats.get('harvest/non_target', 0)} not targets, "
        f"{stats.get('harvest/explored', 0)} explored, {stats.get('harvest/failed', 0)} failed)"
    )
    return 0


def _format(path: str) -> str:
    ext = path.rsplit(".", 1)[-1].lower() if "." in path else ""
    formats = {"jsonl": "jsonlines", "jl": "jsonlines", "json": "json", "csv": "csv", "xml": "xml"}
    if ext not in formats:
        raise CrawlError(f"cannot tell the feed format of {path!r}: name it .jsonl, .json, .csv or .xml")
    return formats[ext]
