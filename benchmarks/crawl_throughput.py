"""Crawl throughput: the structure spider against a plain Scrapy CrawlSpider, same site, same run.

    python benchmarks/crawl_throughput.py [--pages 30000] [--seed 0] [--rounds 1] [--stable-only] [-s NAME=VALUE ...]

Serves the demo site (``--pages`` pages) on a free loopback port in this
process, then runs, each in its own subprocess (one Twisted reactor per
process) and with the same settings (``structcrawl.settings`` plus
``-s`` overrides, so the same CONCURRENT_REQUESTS, per-domain limit,
robots.txt, log level):

(a) ``plain``: a ``CrawlSpider`` whose one rule follows every in-site link
    (``LinkExtractor()``, ``allowed_domains`` = the demo host);
(b) ``exhaust``: the ``structure`` spider with ``stop=exhaust`` (it models
    every page it fetches and runs until its frontier is empty);
(c) ``stable``: the ``structure`` spider with ``stop=stable``, once per
    strategy (densest, sparsest).

and prints pages/s of (a) and (b) (responses received / Scrapy's
``elapsed_time_seconds``), the ratio b/a (goal ≥ 0.85), and for (c) the pages
fetched, the wall time to the stop and the peak RSS of the crawl process.
With ``--rounds N`` (a) and (b) alternate N times and the best rate of each is
kept; ``--stable-only`` runs (c) alone.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


# --------------------------------------------------------------------------- child


def _child(kind: str, url: str, out: str, overrides: list[str]) -> None:
    import resource

    from scrapy.crawler import CrawlerProcess
    from scrapy.linkextractors import LinkExtractor
    from scrapy.spiders import CrawlSpider, Rule

    from structcrawl.crawling.runner import build_settings, parse_setting_overrides
    from structcrawl.spiders.structure import StructureSpider

    settings = parse_setting_overrides(overrides)
    settings.setdefault("LOG_LEVEL", "WARNING")
    settings.setdefault("LOGSTATS_INTERVAL", 0)
    settings.setdefault("STRUCTCRAWL_LOGSTATS_INTERVAL", 0)
    model_out = os.path.join(os.path.dirname(out), f"{kind}.model.json")
    settings["STRUCTCRAWL_MODEL_OUT"] = model_out
    process = CrawlerProcess(build_settings(settings))
    host = url.split("//", 1)[1].split("/", 1)[0].split(":")[0]

    if kind == "plain":

        class PlainSpider(CrawlSpider):
            name = "plain"
            allowed_domains = [host]
            start_urls = [url]
            rules = (Rule(LinkExtractor(), follow=True),)

        crawler = process.create_crawler(PlainSpider)
        process.crawl(crawler)
    else:
        crawler = process.create_crawler(StructureSpider)
        stop, _, strategy = kind.partition("-")
        process.crawl(crawler, start_url=url, stop=stop, strategy=strategy or "densest")
    wall0 = time.perf_counter()
    process.start()
    wall = time.perf_counter() - wall0
    stats = crawler.stats.get_stats()
    result = {
        "kind": kind,
        "responses": stats.get("response_received_count", 0),
        "elapsed": stats.get("elapsed_time_seconds"),
        "wall": wall,
        "reason": stats.get("finish_reason"),
        "modelled": stats.get("structcrawl/pages_modelled"),
        "classes": stats.get("structcrawl/classes"),
        "step_total_s": stats.get("structcrawl/model_step_total_s"),
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,  # KiB on Linux
    }
    with open(out, "w", encoding="utf-8") as fh:
        json.dump(result, fh)


# --------------------------------------------------------------------------- parent


def _run(kind: str, url: str, workdir: str, overrides: list[str]) -> dict:
    out = os.path.join(workdir, f"{kind}.json")
    cmd = [sys.executable, os.path.abspath(__file__), "--child", kind, "--url", url, "--out", out]
    for pair in overrides:
        cmd += ["-s", pair]
    subprocess.run(cmd, check=True, cwd=workdir)
    with open(out, encoding="utf-8") as fh:
        return json.load(fh)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=30000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--stable-only", action="store_true", help="only the stop=stable runs (c)")
    ap.add_argument("-s", "--set", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--url", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        _child(args.child, args.url, args.out, args.set)
        return

    from structcrawl.demo.server import start_in_thread
    from structcrawl.demo.site import DemoSite

    site = DemoSite(pages=args.pages, seed=args.seed)
    server, base = start_in_thread(site)
    url = base + "/"
    try:
        with tempfile.TemporaryDirectory(prefix="structcrawl-bench-") as workdir:
            plain, exhaust = [], []
            for _ in range(0 if args.stable_only else args.rounds):
                plain.append(_run("plain", url, workdir, args.set))
                exhaust.append(_run("exhaust", url, workdir, args.set))
            stable = {s: _run(f"stable-{s}", url, workdir, args.set) for s in ("densest", "sparsest")}
    finally:
        server.shutdown()
        server.server_close()

    def rate(r: dict) -> float:
        return r["responses"] / r["elapsed"] if r["elapsed"] else 0.0

    print(f"demo site: {len(site)} pages (seed {args.seed}), settings overrides: {args.set or 'none'}")
    if plain:
        a = max(plain, key=rate)
        b = max(exhaust, key=rate)
        print(f"{'run':<34} {'responses':>9} {'seconds':>8} {'pages/s':>8}  close reason")
        print(f"{'(a) CrawlSpider, every link':<34} {a['responses']:>9} {a['elapsed']:>8.1f} {rate(a):>8.1f}"
              f"  {a['reason']}")
        print(
            f"{'(b) structure, stop=exhaust':<34} {b['responses']:>9} {b['elapsed']:>8.1f} {rate(b):>8.1f}"
            f"  {b['reason']}  ({b['modelled']} modelled, {b['classes']} classes,"
            f" model steps {b['step_total_s']:.1f} s, peak RSS {b['rss_mb']:.0f} MB)"
        )
        print(f"ratio b/a: {rate(b) / rate(a):.2f}  (goal >= 0.85)")
    for strategy, c in stable.items():
        print(
            f"(c) structure, stop=stable, {strategy}: {c['responses']} pages fetched "
            f"({c['responses'] / len(site):.1%} of the site), {c['wall']:.1f} s wall "
            f"({c['elapsed']:.1f} s in Scrapy), {c['classes']} classes, close reason {c['reason']}, "
            f"peak RSS {c['rss_mb']:.0f} MB"
        )


if __name__ == "__main__":
    main()
