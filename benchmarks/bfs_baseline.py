"""Baseline: a full breadth-first crawl + offline UXClust, as UXClust does it (§3.3, §4.1).

``run_baseline(start_url, truth_fn)`` crawls a locally served site with a
plain Scrapy spider — breadth-first (``DEPTH_PRIORITY=1``, FIFO queues), no
structcrawl frontier, every in-site link followed — computes each page's
features with :mod:`structcrawl.core.features`, records for every URL the XPath of
the link it was first seen under (the topmost occurrence on the first page
that links to it: the paper's tuple), and clusters the pages with the
in-memory UXClust (:func:`structcrawl.analysis.uxclust.cluster_pages`).

The crawl runs in a child process (one Twisted reactor per process), which
writes one JSON line per page: final URL, inbound XPath and link-collection
path of its requested URL (null for the start page), tag paths.

    python benchmarks/bfs_baseline.py URL [--cutoff 100] [--group-by xpath|path] [--similarity 0.8]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Callable, Hashable

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

from structcrawl.analysis.metrics import pairwise_precision_recall  # noqa: E402
from structcrawl.analysis.uxclust import Clustering, Parameters, cluster_pages  # noqa: E402


@dataclass
class BaselineResult:
    pages: int  #: HTML pages fetched and clustered
    crawl_seconds: float  #: the breadth-first crawl (Scrapy's elapsed time)
    cluster_seconds: float  #: UXClust in memory
    clustering: Clustering
    assignment: dict[str, int | None]  #: final URL -> cluster id (None: unclustered)
    precision: float | None  #: pairwise, on the clustered pages with a truth (UXClust §4.2)
    recall: float | None


def _crawl_child(url: str, out: str, concurrency: int) -> None:
    import scrapy
    from scrapy.crawler import CrawlerProcess
    from scrapy.http import TextResponse

    from structcrawl.core.features import extract
    from structcrawl.core.urls import normalize_url

    start = normalize_url(url) or url
    host = start.split("//", 1)[1].split("/", 1)[0]
    first: dict[str, tuple[str, str] | None] = {start: None}  # URL -> (xpath, path) of the link it was first seen under
    fh = open(out, "w", encoding="utf-8")

    class BreadthFirst(scrapy.Spider):
        name = "bfs"
        custom_settings = {
            "DEPTH_PRIORITY": 1,
            "SCHEDULER_DISK_QUEUE": "scrapy.squeues.PickleFifoDiskQueue",
            "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.FifoMemoryQueue",
            "CONCURRENT_REQUESTS": concurrency,
            "CONCURRENT_REQUESTS_PER_DOMAIN": concurrency,
            "ROBOTSTXT_OBEY": True,
            "LOG_LEVEL": "WARNING",
            "LOGSTATS_INTERVAL": 0,
            "TELNETCONSOLE_ENABLED": False,
        }

        async def start(self):
            yield scrapy.Request(start, meta={"requested": start})

        def parse(self, response):
            if not isinstance(response, TextResponse):
                return
            feats = extract(response.body, response.url, response.headers.get("Content-Type", b"").decode("latin-1"))
            inbound = first.get(response.meta["requested"])
            fh.write(json.dumps({"url": feats.url, "xpath": inbound and inbound[0], "path": inbound and inbound[1],
                                 "tag_paths": sorted(feats.tag_paths)}) + "\n")
            for link_url, link in feats.inbound().items():  # document order, topmost occurrence of each URL
                if link_url in first or link_url.split("//", 1)[1].split("/", 1)[0] != host:
                    continue
                first[link_url] = (link.xpath, link.path)
                yield scrapy.Request(link_url, meta={"requested": link_url})

    process = CrawlerProcess({"LOG_LEVEL": "WARNING"})
    crawler = process.create_crawler(BreadthFirst)
    process.crawl(crawler)
    process.start()
    fh.close()
    with open(out + ".stats", "w", encoding="utf-8") as sf:
        json.dump({"elapsed": crawler.stats.get_value("elapsed_time_seconds")}, sf)


def crawl_site(start_url: str, concurrency: int = 16) -> tuple[list[dict], float]:
    """Breadth-first crawl of ``start_url``'s whole site in a child process: one record per HTML page
    (``url``, ``xpath``, ``path``, ``tag_paths``) and Scrapy's elapsed seconds."""
    with tempfile.TemporaryDirectory(prefix="bfs-baseline-") as tmp:
        out = os.path.join(tmp, "pages.jsonl")
        env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
        subprocess.run([sys.executable, __file__, start_url, "--crawl-to", out, "--concurrency", str(concurrency)],
                       check=True, env=env)
        with open(out + ".stats", encoding="utf-8") as sf:
            crawl_seconds = float(json.load(sf)["elapsed"])
        with open(out, encoding="utf-8") as fh:
            return [json.loads(line) for line in fh], crawl_seconds


def cluster_crawl(rows: list[dict], crawl_seconds: float, truth_fn: Callable[[str], Hashable | None], *,
                  params: Parameters = Parameters(), group_by: str = "xpath") -> BaselineResult:
    """UXClust over a :func:`crawl_site` crawl, scored with ``truth_fn`` (URL -> class; pages it gives
    None for are left out of the score)."""
    t0 = time.perf_counter()
    clustering, assignment = cluster_pages(
        ((r["url"], r[group_by], frozenset(r["tag_paths"])) for r in rows), params)
    cluster_seconds = time.perf_counter() - t0
    clustered = {u: c for u, c in assignment.items() if c is not None and truth_fn(u) is not None}
    precision = recall = None  # no truth for any clustered page: nothing to score
    if clustered:
        precision, recall = pairwise_precision_recall(clustered, {u: truth_fn(u) for u in clustered})
    return BaselineResult(len(assignment), crawl_seconds, cluster_seconds, clustering, assignment, precision, recall)


def run_baseline(start_url: str, truth_fn: Callable[[str], Hashable | None], *, params: Parameters = Parameters(),
                 group_by: str = "xpath", concurrency: int = 16) -> BaselineResult:
    """Crawl ``start_url``'s whole site breadth-first, cluster it with UXClust, score it with ``truth_fn``."""
    rows, crawl_seconds = crawl_site(start_url, concurrency)
    return cluster_crawl(rows, crawl_seconds, truth_fn, params=params, group_by=group_by)


def main() -> None:
    ap = argparse.ArgumentParser(description="Full breadth-first crawl + offline UXClust of a locally served site.")
    ap.add_argument("url")
    ap.add_argument("--crawl-to", help=argparse.SUPPRESS)  # the child: crawl only, pages to this file
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--cutoff", type=int, default=100)
    ap.add_argument("--similarity", type=float, default=0.8)
    ap.add_argument("--group-by", choices=["xpath", "path"], default="xpath")
    ap.add_argument("--demo-truth", action="store_true", help="score against the default demo site's truth")
    args = ap.parse_args()
    if args.crawl_to:
        _crawl_child(args.url, args.crawl_to, args.concurrency)
        return
    from urllib.parse import urlsplit

    from structcrawl.demo.site import DemoSite

    site = DemoSite() if args.demo_truth else None

    def truth(u: str) -> str | None:
        if site is None:
            return None
        parts = urlsplit(u)
        return site.classify(parts.path + (f"?{parts.query}" if parts.query else ""))

    res = run_baseline(args.url, truth, params=Parameters(cutoff=args.cutoff, similarity=args.similarity),
                       group_by=args.group_by, concurrency=args.concurrency)
    c = res.clustering
    print(f"{res.pages} pages crawled in {res.crawl_seconds:.1f} s, clustered in {res.cluster_seconds:.2f} s: "
          f"{len(c.clusters)} clusters, {c.unclustered} unclustered ({c.unclustered / max(1, c.pages):.1%})"
          + ("" if res.precision is None else f"; pairwise P {res.precision:.3f} R {res.recall:.3f}"))


if __name__ == "__main__":
    main()
