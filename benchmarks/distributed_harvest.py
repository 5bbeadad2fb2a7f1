"""Scale-out benchmark: the focused harvest on scrapy-redis with 1, 2 and 4 workers, against scrapy-redis itself.

    python benchmarks/distributed_harvest.py [--demo-pages 30000] [--latency 0.2] [--concurrency 4]
        [--warmup 600] [--window 2000] [--workers 1,2,4] [--memory-urls 1000000]

1. The demo bookshop (29,482 pages at 30,000) is served on 127.0.0.1 by a threaded server that waits
   ``--latency`` seconds before each answer, like a remote site (it sleeps: the server's own CPU is
   measured and printed, it must not be the bottleneck).  A structure crawl learns the model first
   (no latency).
2. ``scrapy crawl harvest`` of the book pages, shared on Redis (127.0.0.1:6379) with its items in
   PostgreSQL (a schema of its own, dropped at the end), by 1, 2 and 4 worker processes, each with
   ``CONCURRENT_REQUESTS = --concurrency``: pages/s on the server's side over ``--window`` requests
   after ``--warmup`` (steady state: process start-up and the seed's narrow frontier excluded), then
   the workers are stopped.  Also one harvest process without Redis (the cost of sharing).
3. The anchor: scrapy-redis's own ``RedisSpider`` (``benchmarks/redis_anchor.py``) with the same
   workers and settings, fed the very URLs the one-worker harvest requested, measured the same way.
4. Redis memory per million queued harvest requests (this scheduler's JSON) and per million
   dupefilter fingerprints, measured at ``--memory-urls`` in a private redis-server; and of the
   workers' plan stream per page fetched (``MEMORY USAGE`` after each run).

Writes Markdown tables to stdout.  Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import redis  # noqa: E402
import sqlalchemy as sa  # noqa: E402

from structcrawl.demo import server as demo_server  # noqa: E402
from structcrawl.demo.site import DemoSite  # noqa: E402

BIN = Path(sys.executable).parent
REDIS_URL = os.environ.get("STRUCTCRAWL_BENCH_REDIS", "redis://127.0.0.1:6379/0")
PG_URL = os.environ.get("STRUCTCRAWL_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
QUIET = ["-s", "LOG_LEVEL=WARNING", "-s", "STRUCTCRAWL_LOGSTATS_INTERVAL=0"]


class SlowSite:
    """A DemoSite whose every answer waits ``latency`` seconds (a remote site's round trip)."""

    def __init__(self, site: DemoSite) -> None:
        self.site = site
        self.latency = 0.0

    def render(self, target: str):
        if self.latency:
            time.sleep(self.latency)
        return self.site.render(target)


class Log:
    """GETs answered (robots.txt aside), with their time, thread-safe."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.entries: list[tuple[float, str]] = []

    def __call__(self, method: str, path_qs: str, status: int) -> None:
        if method == "GET" and path_qs != "/robots.txt":
            with self.lock:
                self.entries.append((time.monotonic(), path_qs))

    def count(self) -> int:
        with self.lock:
            return len(self.entries)

    def since(self, mark: int) -> list[tuple[float, str]]:
        with self.lock:
            return list(self.entries[mark:])


def book_class(model: Path) -> int:
    doc = json.loads(model.read_text(encoding="utf-8"))
    votes = Counter(c["id"] for c in doc["classes"] for u in c["samples"] if re.search(r"//[^/]+/book/", u))
    return votes.most_common(1)[0][0]


def measure(procs_cmd: list[list[str]], log: Log, warmup: int, window: int, cwd: Path) -> dict:
    """Start the processes, time ``window`` requests after ``warmup`` on the server, stop them."""
    mark = log.count()
    cpu0, wall0 = time.process_time(), time.monotonic()
    procs = [subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
             for cmd in procs_cmd]
    deadline = time.monotonic() + 1800
    try:
        while log.count() - mark < warmup + window:
            if all(p.poll() is not None for p in procs):
                break  # all done before the window is full: measured on what there is
            if time.monotonic() > deadline:
                raise SystemExit("benchmark: no progress for 30 minutes")
            time.sleep(0.2)
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGKILL)
        errors = [p.communicate()[1] for p in procs]
    cpu, wall = time.process_time() - cpu0, time.monotonic() - wall0
    got = log.since(mark)
    if len(got) <= warmup + 1:
        raise SystemExit("benchmark: the workers fetched too little:\n" + "\n".join(e[-2000:] for e in errors))
    part = got[warmup:warmup + window]
    rate = (len(part) - 1) / (part[-1][0] - part[0][0])
    return {"rate": rate, "pages": len(part), "server_cpu": cpu / wall, "paths": [p for _t, p in got]}


def harvest_cmds(model: Path, books: int, workers: int, job: str | None, db: str | None, concurrency: int):
    common = [str(BIN / "scrapy"), "crawl", "harvest", "-a", f"model={model}", "-a", f"classes={books}", *QUIET,
              "-s", f"CONCURRENT_REQUESTS={concurrency}", "-s", f"CONCURRENT_REQUESTS_PER_DOMAIN={concurrency}"]
    if job is None:
        return [common]
    return [[*common, "-a", f"job={job}", "-s", f"STRUCTCRAWL_DB={db}", "-s", f"REDIS_URL={REDIS_URL}"]
            for _ in range(workers)]


def anchor_cmds(key: str, workers: int, concurrency: int):
    return [[str(BIN / "scrapy"), "runspider", str(HERE / "redis_anchor.py"), *QUIET,
             "-s", f"REDIS_URL={REDIS_URL}", "-s", f"REDIS_START_URLS_KEY={key}:start_urls",
             "-s", "SCHEDULER=scrapy_redis.scheduler.Scheduler",
             "-s", "DUPEFILTER_CLASS=scrapy_redis.dupefilter.RFPDupeFilter",
             "-s", f"SCHEDULER_QUEUE_KEY={key}:requests", "-s", f"SCHEDULER_DUPEFILTER_KEY={key}:dupefilter",
             "-s", "SCHEDULER_PERSIST=True", "-s", "ROBOTSTXT_OBEY=True",
             "-s", f"CONCURRENT_REQUESTS={concurrency}", "-s", f"CONCURRENT_REQUESTS_PER_DOMAIN={concurrency}"]
            for _ in range(workers)]


def drop_keys(server: redis.Redis, prefix: str) -> None:
    keys = list(server.scan_iter(f"{prefix}*"))
    if keys:
        server.delete(*keys)


def memory_at(n: int) -> dict:
    """Bytes of Redis memory per queued harvest request and per dupefilter fingerprint, ``n`` of each, in a
    private redis-server (nothing else in it)."""
    import scrapy

    from structcrawl.analysis.harvestplan import Entry
    from structcrawl.crawling import redisjson
    from structcrawl.spiders.harvest import META_KEY, HarvestSpider

    binary = shutil.which("redis-server")
    if not binary:
        raise SystemExit("benchmark: redis-server not found")
    with tempfile.TemporaryDirectory() as tmp:
        sock = f"{tmp}/redis.sock"
        proc = subprocess.Popen([binary, "--port", "0", "--unixsocket", sock, "--dir", tmp, "--save", "",
                                 "--appendonly", "no"], stdout=subprocess.DEVNULL)
        try:
            server = redis.Redis(unix_socket_path=sock)
            for _ in range(100):
                try:
                    server.ping()
                    break
                except redis.ConnectionError:
                    time.sleep(0.05)
            spider = HarvestSpider()
            key = (6, "html/body/div/ul/li/a")

            def used() -> int:
                return int(server.info("memory")["used_memory"])

            base = used()
            chunk = 10_000
            for start in range(0, n, chunk):
                pipe = server.pipeline(transaction=False)
                for i in range(start, min(n, start + chunk)):
                    url = f"http://shop.example.com/book/{i}.html"
                    referer = f"http://shop.example.com/category/c{i % 97}"
                    request = scrapy.Request(url, callback=spider.parse_shared, errback=spider.page_failed,
                                             headers={"Referer": referer},
                                             meta={META_KEY: Entry(url, key, referer, False)})
                    pipe.zadd("q", {redisjson.dumps(request.to_dict(spider=spider)): 0})
                pipe.execute()
            queued = used() - base
            base = used()
            for start in range(0, n, chunk):
                pipe = server.pipeline(transaction=False)
                for i in range(start, min(n, start + chunk)):
                    pipe.sadd("d", hashlib.sha1(str(i).encode()).hexdigest())
                pipe.execute()
            fingerprints = used() - base
            sample = len(server.zrange("q", 0, 0)[0])
        finally:
            proc.kill()
            proc.wait()
    return {"n": n, "queued": queued, "fingerprints": fingerprints, "request_bytes": sample}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--demo-pages", type=int, default=30000)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--warmup", type=int, default=600)
    ap.add_argument("--window", type=int, default=2000)
    ap.add_argument("--workers", default="1,2,4")
    ap.add_argument("--memory-urls", type=int, default=1_000_000, help="0: skip the memory measurement")
    args = ap.parse_args()
    counts = [int(w) for w in args.workers.split(",")]

    site = SlowSite(DemoSite(pages=args.demo_pages, seed=0))
    log = Log()
    srv, base = demo_server.start_in_thread(site, access_log=log)
    schema = "scb_" + uuid.uuid4().hex[:10]
    admin = sa.create_engine(PG_URL)
    with admin.begin() as conn:
        conn.exec_driver_sql(f"CREATE SCHEMA {schema}")
    db = f"{PG_URL}?options=-csearch_path%3D{schema}"
    server = redis.Redis.from_url(REDIS_URL)
    run = uuid.uuid4().hex[:8]
    rows = []
    plan_reports: list[tuple[int, int]] = []  #: (page reports, bytes) of each run's plan stream
    try:
        with tempfile.TemporaryDirectory() as tmp:
            model = Path(tmp) / "demo.model.json"
            res = subprocess.run([sys.executable, "-m", "structcrawl", "crawl", base + "/", "-o", str(model),
                                  "-L", "WARNING"], capture_output=True, text=True)
            if res.returncode != 0:
                raise SystemExit(res.stderr[-3000:])
            books = book_class(model)
            site.latency = args.latency
            project = HERE.parent
            print(f"# demo site: {len(site.site)} pages, latency {args.latency * 1000:.0f} ms, "
                  f"CONCURRENT_REQUESTS={args.concurrency} per worker, window {args.window} requests after "
                  f"{args.warmup}\n", flush=True)
            alone = measure(harvest_cmds(model, books, 1, None, None, args.concurrency), log, args.warmup,
                            args.window, project)
            rows.append(("harvest, one process, no Redis", 1, alone, None))
            first_paths = None
            for n in counts:
                job = f"bench-{run}-{n}"
                got = measure(harvest_cmds(model, books, n, job, db, args.concurrency), log, args.warmup,
                              args.window, project)
                plan_key = f"structcrawl:{job}:requests:plan"
                plan_reports.append((server.xlen(plan_key), server.memory_usage(plan_key) or 0))
                drop_keys(server, f"structcrawl:{job}:")
                if first_paths is None:
                    first_paths = got["paths"]
                rows.append(("harvest on scrapy-redis", n, got, None))
            for n in counts:
                key = f"bench-anchor-{run}-{n}"
                server.rpush(f"{key}:start_urls", *(json.dumps({"url": base + p}) for p in first_paths))
                got = measure(anchor_cmds(key, n, args.concurrency), log, args.warmup, args.window, Path(tmp))
                drop_keys(server, f"{key}:")
                rows.append(("scrapy-redis RedisSpider (anchor)", n, got, None))
    finally:
        srv.shutdown()
        srv.server_close()
        with admin.begin() as conn:
            conn.exec_driver_sql(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        admin.dispose()

    one = {name: r["rate"] for name, n, r, _ in rows if n == 1}
    print("| what | workers | pages/s | speed-up | per worker vs anchor | server CPU |")
    print("|---|---|---|---|---|---|")
    anchor = {n: r["rate"] for name, n, r, _ in rows if name.startswith("scrapy-redis")}
    for name, n, r, _ in rows:
        speed = r["rate"] / one[name]
        versus = f"{r['rate'] / anchor[n]:.2f}" if n in anchor and not name.startswith("scrapy-redis") else "-"
        print(f"| {name} | {n} | {r['rate']:.1f} | {speed:.2f}× | {versus} | {r['server_cpu'] * 100:.0f} % |")
    reports, size = map(sum, zip(*plan_reports))
    print(f"\nPlan stream (crawling/sharedplan.py): {size / max(1, reports):.0f} bytes per page report "
          f"({reports:,} reports), {size / max(1, reports) * 1_000_000 / 2**20:.0f} MiB per million pages fetched")
    if args.memory_urls:
        mem = memory_at(args.memory_urls)
        scale = 1_000_000 / mem["n"]
        print(f"\nRedis memory at {mem['n']:,}: {mem['queued'] * scale / 2**20:.0f} MiB per million queued "
              f"requests ({mem['request_bytes']} bytes of JSON each), {mem['fingerprints'] * scale / 2**20:.0f} MiB "
              "per million dupefilter fingerprints")
    return 0


if __name__ == "__main__":
    sys.exit(main())
