"""``structcrawl harvest MODEL.json --classes 6,8 -O out.jsonl``: every page of the chosen classes, as Scrapy items.

Runs the ``harvest`` spider (:mod:`structcrawl.spiders.harvest`) in-process with the settings of
:mod:`structcrawl.settings`; ``-O``/``-o`` are Scrapy's feed exports (the format from the file's
extension: ``.jsonl``, ``.csv``, ``.json``, ``.xml``).  Bad arguments, an unreadable model, an unknown
class id or a ``--like`` page that fits no class end in one ``structcrawl: error:`` line, status 2.

With ``--redis URL`` the harvest is shared on Redis (scrapy-redis, :mod:`structcrawl.crawling.distributed`)
and kept in PostgreSQL (``--db``): the command creates the job and seeds its queue, then runs
``--workers N`` worker processes (0: none; start them anywhere with ``scrapy crawl harvest … -s REDIS_URL=…``).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from typing import Any

from structcrawl.commands.crawl import settings_from
from structcrawl.commands.errors import CommandError
from structcrawl.crawling.runner import CrawlError, build_settings, run_harvest


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
        spider_args = {k: v for k, v in spider_args.items() if v != ""}
        if args.redis:
            return _shared(args, spider_args, {**overrides, "REDIS_URL": args.redis})
        if args.workers is not None:
            raise CrawlError("--workers needs --redis URL: workers share a queue on Redis")
        stats = run_harvest(spider_args, overrides)
    except CrawlError as exc:
        raise CommandError(str(exc)) from None
    if not stats:
        raise CommandError("the harvest could not start (see the log above)")
    print(
        f"{stats.get('harvest/close_reason')}: {stats.get('harvest/targets', 0)} target pages harvested, "
        f"{stats.get('harvest/fetched', 0)} pages fetched, {stats.get('harvest/reused', 0)} read from the structure "
        f"crawl's store ({stats.get('harvest/non_target', 0)} fetched not targets, "
        f"{stats.get('harvest/explored', 0)} explored, {stats.get('harvest/failed', 0)} failed)"
    )
    return 0


def _shared(args: argparse.Namespace, spider_args: dict[str, Any], overrides: dict[str, Any]) -> int:
    """Seed the shared job, then run ``--workers`` workers (one in this process, more as subprocesses)."""
    workers = 1 if args.workers is None else args.workers
    if workers < 0:
        raise CrawlError(f"--workers must be 0 or more, got {workers}")
    if workers > 1 and "FEEDS" in overrides:
        raise CrawlError("with --workers N > 1 the items go to the database (sc_harvest_items) only: "
                         "drop -o/-O, or run --workers 1")
    job, seeded = seed(spider_args, overrides)
    print(f"job {job}: {seeded} start URLs queued on {args.redis}", file=sys.stderr)
    rest = {k: v for k, v in spider_args.items() if k != "fresh"}  # the job is started over once, here
    if workers == 0:
        print(f"seeded: harvest job {job} waits for workers")
        return 0
    if workers == 1:
        stats = run_harvest(rest, overrides)
        if not stats:
            raise CrawlError("the harvest worker could not start (see the log above)")
        stored = stats.get("harvest/targets", 0) - stats.get("harvest/duplicates", 0)
        print(f"{stats.get('harvest/close_reason')}: this worker stored {stored} target pages, "
              f"fetched {stats.get('harvest/fetched', 0)} pages")
        return 0
    command = [sys.executable, "-m", "structcrawl", "harvest", args.model, "--redis", args.redis, "--workers", "1",
               "--job", job]
    for name in ("classes", "like"):
        for value in getattr(args, name) or []:
            command += [f"--{name}", value]
    for name, value in (("--db", args.db), ("--max-pages", args.max_pages), ("--loglevel", args.loglevel)):
        if value is not None:
            command += [name, str(value)]
    for pair in args.set:
        command += ["-s", pair]
    children = [subprocess.Popen(command) for _ in range(workers)]
    codes = [child.wait() for child in children]
    failed = sum(code != 0 for code in codes)
    if failed:
        raise CrawlError(f"{failed} of {workers} workers failed (see the log above)")
    print(f"finished: {workers} workers; `structcrawl jobs --db …` shows the job and its workers")
    return 0


def seed(spider_args: dict[str, Any], overrides: dict[str, Any]) -> tuple[str, int]:
    """Create (or start over, with ``fresh``) the shared harvest job in PostgreSQL and queue its start
    URLs on Redis, as a worker would; (job name, URLs newly queued)."""
    import scrapy

    from structcrawl.analysis.harvestplan import Entry
    from structcrawl.crawling.distributed import check_redis, open_queue
    from structcrawl.crawling.harvest import harvest_config
    from structcrawl.spiders.harvest import META_KEY, HarvestSpider
    from structcrawl.store.schema import StoreError
    from structcrawl.store.workers import SharedHarvestStore, check_shared_url

    settings = build_settings(overrides)
    HarvestSpider.update_settings(settings)
    try:
        config = harvest_config(spider_args, settings)
        db = settings.get("STRUCTCRAWL_DB")
        if not db:
            raise ValueError("a harvest shared on Redis keeps its items and state in PostgreSQL: give --db URL")
        check_shared_url(str(db))
        check_redis(settings)
        SharedHarvestStore(str(db), config.job, config.model.start_url, config.store_parameters(), None,
                           fresh=config.fresh).dispose()
    except (ValueError, StoreError) as exc:
        raise CrawlError(str(exc)) from None
    spider = HarvestSpider()  # names the callbacks of the queued requests; it crawls nothing
    spider.job_name = config.job
    queue, dupefilter = open_queue(settings, spider)
    if config.fresh:
        queue.clear()
        dupefilter.clear()
    seeded = 0
    for url in dict.fromkeys((config.model.start_url, *config.like)):
        request = scrapy.Request(url, callback=spider.parse_shared, errback=spider.page_failed,
                                 meta={META_KEY: Entry(url, None, None, False)}, priority=1)
        seeded += queue.push_unseen(request, dupefilter.request_fingerprint(request), dupefilter.key)
    return config.job, seeded


def _format(path: str) -> str:
    ext = path.rsplit(".", 1)[-1].lower() if "." in path else ""
    formats = {"jsonl": "jsonlines", "jl": "jsonlines", "json": "json", "csv": "csv", "xml": "xml"}
    if ext not in formats:
        raise CrawlError(f"cannot tell the feed format of {path!r}: name it .jsonl, .json, .csv or .xml")
    return formats[ext]
