"""Focused-harvest benchmark: every page of chosen page types, against a breadth-first crawl, same run.

    python benchmarks/harvest.py [--demo-pages 30000] [--corpus geos …] [--truth class …] [--no-corpora] [--no-demo]
        [--keep DIR] [--models DIR]

Per site (the demo bookshop and the real corpora of ``benchmarks/corpora.py``,
each served on 127.0.0.1 by a server that counts every request it answers):

1. a structure crawl learns the model (``structcrawl crawl``, stop=stable) into a SQLite store, which
   the harvests then use (the pages that crawl fetched are read from it, not fetched again);
2. a plain breadth-first Scrapy spider crawls the whole site
   (``benchmarks/bfs_baseline.py``): the requests it needs until it has every
   target page of a case is its best case (a BFS crawler that stops at full recall);
3. per target choice (``--truth``, or three chosen by size), ``structcrawl harvest`` with the model classes that hold
   the truth class's pages (by the model's members, majority) as targets.

Per case: target pages in the truth that the BFS reaches, recall of the
harvest's items, harvest requests, structure-crawl requests, BFS requests to
full recall, the ratio (structure + harvest) / BFS, precision (targets /
harvest requests), the best precision the site's links allow (targets / (targets + the fewest
non-target pages that reach them all, :func:`harvest_replay.bound`, computed offline on the same
pages), and throughput: the harvest's requests per second of
Scrapy's elapsed time over a plain Scrapy spider's fetching the very URLs the
harvest requested, in the same order, with the same settings (every page run
through ``LinkExtractor`` as a ``CrawlSpider`` does, nothing followed) — all
requests counted on the server's side.
Writes the Markdown table to stdout.  Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from collections import Counter
from pathlib import Path
from urllib.parse import unquote, urlsplit

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import corpora  # noqa: E402
from bfs_baseline import crawl_site  # noqa: E402
from harvest_replay import Site, bound, link_graph  # noqa: E402
from structcrawl.analysis.classify import Classifier  # noqa: E402
from structcrawl.demo import server as demo_server  # noqa: E402
from structcrawl.demo.site import DemoSite  # noqa: E402
from structcrawl.sitemodel import load_model  # noqa: E402

BIN = Path(sys.executable).parent
#: Demo target choices: one entity type, two entity types, a listing type (truth class names).
DEMO_CASES = (("book",), ("author", "publisher"), ("category",))


class Log:
    """Requests a server answered, in order (thread-safe): (path?query, status)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.entries: list[tuple[str, int]] = []

    def __call__(self, method: str, path_qs: str, status: int) -> None:
        with self.lock:
            self.entries.append((path_qs, status))

    def mark(self) -> int:
        with self.lock:
            return len(self.entries)

    def since(self, mark: int) -> list[tuple[str, int]]:
        with self.lock:
            return [e for e in self.entries[mark:] if e[0] != "/robots.txt"]


def serve_dir(root: str, log: Log, port: int = 0):
    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_request(self, code="-", size="-"):
            log("GET", self.path, int(code) if str(code).isdigit() else 0)

        def log_message(self, *args):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", port), functools.partial(Handler, directory=root))
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, f"http://127.0.0.1:{srv.server_address[1]}/"


def structcrawl(*args: str) -> subprocess.CompletedProcess:
    exe = BIN / "structcrawl"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "structcrawl"]
    return subprocess.run(cmd + list(args), capture_output=True, text=True)


def elapsed(stderr: str) -> float:
    m = re.search(r"'elapsed_time_seconds': ([\d.]+)", stderr)
    return float(m.group(1)) if m else float("nan")


def run_site(name: str, base: str, entry: str, log: Log, label, cases, tmp: Path, out, corpus: str | None = None,
             demo_pages: int = 0, reuse: Path | None = None) -> list[dict]:
    """Structure crawl, BFS, one harvest per case; table rows.  ``corpus``/``demo_pages``: the site's pages
    offline, for the bound its links set (:func:`harvest_replay.bound`).  ``reuse``: a model kept by an
    earlier run (the site served at its address), its crawl's pages fetched as the structure requests."""
    model = tmp / f"{name}.model.json"
    # the structure crawl's store: the harvests read its pages instead of fetching them again
    store = tmp / f"{name}.db"
    if reuse is not None:
        doc = json.loads(reuse.read_text(encoding="utf-8"))
        if reuse.resolve() != model.resolve():
            model.write_text(reuse.read_text(encoding="utf-8"), encoding="utf-8")
            kept = reuse.with_name(store.name)
            if kept.exists():
                shutil.copyfile(kept, store)
        if not store.exists():
            out(f"   {name}: no store kept beside the model, the harvests fetch every page")
        structure_requests = int(doc["crawl"]["pages_fetched"])
    else:
        mark = log.mark()
        res = structcrawl("crawl", base + entry, "-o", str(model), "--members", "-L", "WARNING",
                          "--db", f"sqlite:///{store}", "--fresh")
        if res.returncode != 0:
            raise SystemExit(f"structure crawl of {name} failed:\n{res.stderr[-3000:]}")
        structure_requests = len(log.since(mark))
        doc = json.loads(model.read_text(encoding="utf-8"))
    # the pages the structure crawl stored (a model's members): a harvest with its store reads them
    stored = {u for c in doc["classes"] for u in c["members"]} if store.exists() else set()
    # model class of each member, and the truth class of each
    votes: dict[str, Counter] = {}
    for c in doc["classes"]:
        for u in c["members"]:
            t = label(u)
            if t is not None:
                votes.setdefault(t, Counter())[c["id"]] += 1
    majority: dict[int, str] = {}
    per_class: dict[int, Counter] = {}
    for t, cnt in votes.items():
        for cid, n in cnt.items():
            per_class.setdefault(cid, Counter())[t] += n
    for cid, cnt in per_class.items():
        majority[cid] = cnt.most_common(1)[0][0]

    mark = log.mark()
    rows, bfs_seconds = crawl_site(base + entry)
    bfs_log = log.since(mark)
    bfs_order = [p for p, _s in bfs_log]
    reached = {r["url"] for r in rows}
    out(f"   {name}: structure crawl {structure_requests} requests, model {len(doc['classes'])} classes; "
        f"BFS {len(bfs_log)} requests, {len(reached)} pages in {bfs_seconds:.1f} s")
    loaded = load_model(str(model))
    offline = Site(loaded, Classifier(loaded), corpus, demo_pages)
    graph = link_graph(offline, loaded.start_url)
    if cases is None:  # a real corpus: choose among the truth classes some model class holds
        cases = corpus_cases(Counter(label(u) for u in reached if label(u) in majority.values()), len(reached))
    table = []
    for case in cases:
        targets = sorted(cid for cid, t in majority.items() if t in case)
        truth_pages = {u for u in reached if label(u) in case}
        if not targets or not truth_pages:
            out(f"   {name} {'+'.join(case)}: no model class holds these pages, skipped")
            continue
        paths = {_path(u) for u in truth_pages}
        last = max(i for i, p in enumerate(bfs_order) if p in paths)
        feed = tmp / f"{name}-{'-'.join(case)}.jsonl"
        mark = log.mark()
        on_store = ("--db", f"sqlite:///{store}", "--job", f"harvest-{'-'.join(case)}", "--fresh") \
            if store.exists() else ()
        res = structcrawl("harvest", str(model), "--classes", ",".join(map(str, targets)), "-O", str(feed), *on_store,
                          "-s", "STRUCTCRAWL_LOGSTATS_INTERVAL=0",
                          "-s", f"STRUCTCRAWL_HARVEST_SUMMARY={feed.with_suffix('.summary.json')}")
        if res.returncode != 0:
            raise SystemExit(f"harvest of {name} {case} failed:\n{res.stderr[-3000:]}")
        harvest_requests = len(log.since(mark))
        items = [json.loads(line) for line in feed.read_text(encoding="utf-8").splitlines() if line.strip()]
        got = {i["url"] for i in items}
        found = len(truth_pages & got)
        harvest_seconds = elapsed(res.stderr)
        plain_rate = plain_rate_on(base, [p for p, _s in log.since(mark)], tmp, log)
        share = len(truth_pages) / max(1, len(reached))
        best = bound(graph, loaded.start_url, {u for u in graph if label(u) in case})
        row = dict(site=name, case="+".join(case), classes=",".join(map(str, targets)), truth=len(truth_pages),
                   share=share, recall=found / len(truth_pages), harvest=harvest_requests,
                   structure=structure_requests, bfs=last + 1,
                   ratio=(structure_requests + harvest_requests) / (last + 1),
                   # what the site's links allow after this structure crawl: its hubs and targets only,
                   # the hubs it stored read from the store
                   best_ratio=(structure_requests + best.requests - len(set(best.hubs) & stored)) / (last + 1),
                   precision=found / max(1, harvest_requests),
                   throughput=(harvest_requests / harvest_seconds) / plain_rate, hubs=len(best.hubs),
                   best=best.precision)
        out(f"   {name} {row['case']}: recall {row['recall']:.3f}, harvest {harvest_requests} requests, "
            f"ratio {row['ratio']:.2f}, precision {row['precision']:.2f} (the links allow {row['best']:.2f}: "
            f"{row['hubs']} hubs)")
        table.append(row)
    return table


def _kept(models: str | None, name: str) -> Path | None:
    """The model a run with ``--keep`` left in ``models`` for site ``name`` (None: learn one)."""
    if not models:
        return None
    path = Path(models) / f"{name}.model.json"
    if not path.exists():
        raise SystemExit(f"no kept model {path}")
    return path


def _port(model: Path | None) -> int:
    """The port of the address a kept model was learnt at (0: any free port)."""
    if model is None:
        return 0
    start = json.loads(model.read_text(encoding="utf-8"))["site"]["start_url"]
    return urlsplit(start).port or 80


def plain_rate_on(base: str, paths: list[str], tmp: Path, log: Log) -> float:
    """Requests per second of Scrapy's elapsed time of a plain spider fetching ``paths`` (site-relative,
    as the server logged them) with structcrawl's settings, in a child process."""
    urls = tmp / "plain-urls.txt"
    urls.write_text("\n".join(base.rstrip("/") + p for p in paths), encoding="utf-8")
    mark = log.mark()
    res = subprocess.run([sys.executable, __file__, "--plain-urls", str(urls)], capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit(f"plain spider failed:\n{res.stderr[-3000:]}")
    return len(log.since(mark)) / float(res.stdout.strip())


def _plain_child(path: str) -> None:
    """Fetch the URLs of ``path`` (one a line) with a plain Scrapy spider; print Scrapy's elapsed seconds."""
    import scrapy
    from scrapy.crawler import CrawlerProcess
    from scrapy.linkextractors import LinkExtractor

    from structcrawl.crawling.runner import build_settings

    urls = Path(path).read_text(encoding="utf-8").split()
    extractor = LinkExtractor()

    class Plain(scrapy.Spider):
        name = "plain"
        custom_settings = {"LOG_LEVEL": "WARNING", "LOGSTATS_INTERVAL": 0}

        async def start(self):
            for url in urls:
                yield scrapy.Request(url, dont_filter=True)

        def parse(self, response):
            if isinstance(response, scrapy.http.TextResponse):
                extractor.extract_links(response)  # the work a CrawlSpider does per page

    process = CrawlerProcess(build_settings({"LOG_LEVEL": "WARNING"}))
    crawler = process.create_crawler(Plain)
    process.crawl(crawler)
    process.start()
    print(crawler.stats.get_value("elapsed_time_seconds"))


def _path(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def corpus_cases(sizes: Counter, pages: int) -> list[tuple[str, ...]]:
    """Up to three truth classes of 20 pages or more: the largest, the largest of at most 40 % of the
    site, and the largest of at most 10 %."""
    picks: list[tuple[str, ...]] = []
    for limit in (1.0, 0.4, 0.1):
        for name, n in sizes.most_common():
            if n >= 20 and n / pages <= limit and (name,) not in picks:
                picks.append((name,))
                break
    return picks


def table(rows: list[dict]) -> str:
    head = ("| site | targets (truth class) | model classes | target pages | share of site | recall | "
            "harvest requests | structure requests | BFS requests to full recall | (structure + harvest) / BFS "
            "| at best (structure + hubs not stored + targets) / BFS "
            "| precision | best precision (hubs the links need) | throughput vs plain spider, same pages |")
    lines = [head, "|" + "---|" * 14]
    for r in rows:
        lines.append(
            f"| {r['site']} | {r['case']} | {r['classes']} | {r['truth']:,} | {r['share']:.1%} | {r['recall']:.3f} | "
            f"{r['harvest']:,} | {r['structure']:,} | {r['bfs']:,} | {r['ratio']:.2f} | {r['best_ratio']:.2f} | "
            f"{r['precision']:.2f} | "
            f"{r['best']:.2f} ({r['hubs']:,}) | "
            f"{r['throughput']:.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--demo-pages", type=int, default=30000)
    ap.add_argument("--corpus", action="append", choices=sorted(corpora.CORPORA), help="repeatable; default all")
    ap.add_argument("--no-demo", action="store_true")
    ap.add_argument("--no-corpora", action="store_true")
    ap.add_argument("--keep", metavar="DIR", help="keep the models, feeds and harvest summaries in DIR")
    ap.add_argument("--models", metavar="DIR", help="harvest with the models an earlier run kept in DIR (--keep), "
                                                    "each site served at its model's address, instead of learning "
                                                    "new ones: the same models before and after a change")
    ap.add_argument("--truth", action="append", metavar="CLASS",
                    help="a corpus's truth class to harvest, repeatable (default: the largest, the largest of at "
                         "most 40 %% and of at most 10 %% of the site that a model class holds)")
    args = ap.parse_args(argv)

    def out(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="harvest-bench-") as tmpdir:
        tmp = Path(args.keep or tmpdir)
        tmp.mkdir(parents=True, exist_ok=True)
        if not args.no_demo:
            site = DemoSite(pages=args.demo_pages)
            log = Log()
            name = f"demo ({len(site):,} pages)"
            reuse = _kept(args.models, name)
            srv, base = demo_server.start_in_thread(site, port=_port(reuse), access_log=log)
            truth = dict(site.truth())
            try:
                rows += run_site(name, base, "", log, lambda u: truth.get(_path(u)), DEMO_CASES, tmp, out,
                                 demo_pages=args.demo_pages, reuse=reuse)
            finally:
                srv.shutdown()
                srv.server_close()
        for corpus in ([] if args.no_corpora else (args.corpus or corpora.defaults())):
            root = corpora.ensure(corpus, out)
            pages = corpora.html_pages(corpus)
            truth = {p: c for p in pages if (c := corpora.label(corpus, p)) is not None}
            log = Log()
            reuse = _kept(args.models, corpus)
            srv, base = serve_dir(root, log, _port(reuse))
            base_path = urlsplit(base).path

            def label(url: str, truth=truth, base=base, base_path=base_path) -> str | None:
                if not url.startswith(base) or "?" in url:  # a static file's query names no other page
                    return None
                rel = unquote(urlsplit(url).path)[len(base_path):] or "index.html"
                return truth.get(rel)

            try:
                cases = [(t,) for t in args.truth] if args.truth else None
                rows += run_site(corpus, base, corpora.CORPORA[corpus]["entry"], log, label, cases, tmp, out,
                                 corpus=corpus, reuse=reuse)
            finally:
                srv.shutdown()
                srv.server_close()
    print(table(rows))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    if sys.argv[1:2] == ["--plain-urls"]:
        _plain_child(sys.argv[2])
        sys.exit(0)
    sys.exit(main())
