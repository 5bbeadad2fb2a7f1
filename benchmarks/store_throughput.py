"""Crawl throughput with the crawl store: no store vs SQLite vs PostgreSQL, same site, same run.

    python benchmarks/store_throughput.py [--pages 30000] [--seed 0] [--rounds 1]
        [--postgres postgresql+psycopg://postgres@127.0.0.1:5432/test] [--no-postgres] [-s NAME=VALUE ...]

Serves the demo site on a free loopback port in this process, then runs the
``structure`` spider with ``stop=exhaust`` (every page fetched and modelled),
each run in its own subprocess with the same settings:

(a) ``none``: no store (``STRUCTCRAWL_DB`` unset);
(b) ``sqlite``: ``STRUCTCRAWL_DB=sqlite:///<tmp>/bench.db``;
(c) ``postgresql``: ``STRUCTCRAWL_DB=<--postgres>`` in a fresh schema (dropped after).

and prints pages/s of each (responses / Scrapy's ``elapsed_time_seconds``),
the ratio to (a) (goal >= 0.8), the database size per 1,000 pages, the
reactor-side cost of the store (time spent in the writer's enqueue calls, per
batch), the writer's transactions, and the time ``structcrawl export`` takes to
rebuild the model from each database (a full replay: what a resume costs).
With ``--rounds N`` the three runs alternate N times and the best rate of each
is kept.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))


# --------------------------------------------------------------------------- child


def _child(kind: str, url: str, db: str | None, out: str, overrides: list[str]) -> None:
    from scrapy.crawler import CrawlerProcess

    from structcrawl.crawling.runner import build_settings, parse_setting_overrides
    from structcrawl.spiders.structure import StructureSpider

    settings = parse_setting_overrides(overrides)
    settings.setdefault("LOG_LEVEL", "WARNING")
    settings.setdefault("LOGSTATS_INTERVAL", 0)
    settings.setdefault("STRUCTCRAWL_LOGSTATS_INTERVAL", 0)
    settings["STRUCTCRAWL_MODEL_OUT"] = os.path.join(os.path.dirname(out), f"{kind}.model.json")
    if db:
        settings["STRUCTCRAWL_DB"] = db
    process = CrawlerProcess(build_settings(settings))
    crawler = process.create_crawler(StructureSpider)
    process.crawl(crawler, start_url=url, stop="exhaust", job="bench")
    process.start()
    stats = crawler.stats.get_stats()
    result = {k: v for k, v in stats.items() if k.startswith("structcrawl/store")}
    result.update({
        "kind": kind,
        "responses": stats.get("response_received_count", 0),
        "elapsed": stats.get("elapsed_time_seconds"),
        "reason": stats.get("finish_reason"),
        "modelled": stats.get("structcrawl/pages_modelled"),
        "batches": stats.get("structcrawl/batches"),
        "classes": stats.get("structcrawl/classes"),
    })
    with open(out, "w", encoding="utf-8") as fh:
        json.dump(result, fh, default=str)


# --------------------------------------------------------------------------- parent


def _run(kind: str, url: str, db: str | None, workdir: str, overrides: list[str]) -> dict:
    out = os.path.join(workdir, f"{kind}.json")
    cmd = [sys.executable, os.path.abspath(__file__), "--child", kind, "--url", url, "--out", out]
    if db:
        cmd += ["--db", db]
    for pair in overrides:
        cmd += ["-s", pair]
    subprocess.run(cmd, check=True, cwd=workdir)
    with open(out, encoding="utf-8") as fh:
        return json.load(fh)


def _db_bytes(db: str, schema: str | None) -> int:
    import sqlalchemy as sa

    if db.startswith("sqlite:///"):
        path = db[len("sqlite:///"):]
        return sum(os.path.getsize(path + s) for s in ("", "-wal") if os.path.exists(path + s))
    engine = sa.create_engine(db)
    with engine.connect() as conn:
        size = conn.exec_driver_sql(
            "SELECT sum(pg_total_relation_size(format('%%I.%%I', table_schema, table_name))) "
            "FROM information_schema.tables WHERE table_schema = %(s)s", {"s": schema}
        ).scalar()
    engine.dispose()
    return int(size or 0)


def _export_seconds(db: str, workdir: str) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "structcrawl", "export", "--db", db, "--job", "bench", "-o",
                    os.path.join(workdir, "exported.json")], check=True, cwd=workdir)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=30000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--postgres", default=os.environ.get("STRUCTCRAWL_TEST_POSTGRES_URL",
                                                        "postgresql+psycopg://postgres@127.0.0.1:5432/test"))
    ap.add_argument("--no-postgres", action="store_true")
    ap.add_argument("-s", "--set", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--url", help=argparse.SUPPRESS)
    ap.add_argument("--db", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        _child(args.child, args.url, args.db, args.out, args.set)
        return

    import sqlalchemy as sa

    from structcrawl.demo.server import start_in_thread
    from structcrawl.demo.site import DemoSite

    site = DemoSite(pages=args.pages, seed=args.seed)
    server, base = start_in_thread(site)
    url = base + "/"
    kinds = ["none", "sqlite"] + ([] if args.no_postgres else ["postgresql"])
    results: dict[str, list[dict]] = {k: [] for k in kinds}
    admin = None if args.no_postgres else sa.create_engine(args.postgres)
    try:
        with tempfile.TemporaryDirectory(prefix="structcrawl-store-bench-") as workdir:
            for r in range(args.rounds):
                for kind in kinds:
                    schema = None
                    if kind == "none":
                        db = None
                    elif kind == "sqlite":
                        db = f"sqlite:///{workdir}/bench{r}.db"
                    else:
                        schema = "bench_" + uuid.uuid4().hex[:10]
                        with admin.begin() as conn:
                            conn.exec_driver_sql(f"CREATE SCHEMA {schema}")
                        sep = "&" if "?" in args.postgres else "?"
                        db = f"{args.postgres}{sep}options=-csearch_path%3D{schema}"
                    try:
                        res = _run(kind, url, db, workdir, args.set)
                        if db:
                            res["db_bytes"] = _db_bytes(db if kind == "sqlite" else args.postgres, schema)
                            res["export_s"] = _export_seconds(db, workdir)
                        results[kind].append(res)
                    finally:
                        if schema:
                            with admin.begin() as conn:
                                conn.exec_driver_sql(f"DROP SCHEMA {schema} CASCADE")
    finally:
        server.shutdown()
        server.server_close()
        if admin is not None:
            admin.dispose()

    def rate(r: dict) -> float:
        return r["responses"] / r["elapsed"] if r["elapsed"] else 0.0

    best = {k: max(v, key=rate) for k, v in results.items()}
    base_rate = rate(best["none"])
    print(f"demo site: {len(site)} pages (seed {args.seed}), stop=exhaust, rounds {args.rounds}, "
          f"settings overrides: {args.set or 'none'}")
    print(f"{'store':<11} {'responses':>9} {'seconds':>8} {'pages/s':>8} {'ratio':>6} {'MB/1k pages':>11} "
          f"{'enqueue us/batch':>16} {'txns':>6} {'txn max ms':>10} {'backlog max':>11} {'export s':>8}")
    for kind, r in best.items():
        pages = r["modelled"] or r["responses"] or 1
        mb = r.get("db_bytes", 0) / 1e6 / (pages / 1000) if r.get("db_bytes") else 0.0
        batches = r.get("batches") or 1
        enqueue = r.get("structcrawl/store_enqueue_ms_total", 0.0) * 1000 / batches
        print(f"{kind:<11} {r['responses']:>9} {r['elapsed']:>8.1f} {rate(r):>8.1f} {rate(r) / base_rate:>6.2f} "
              f"{mb:>11.2f} {enqueue:>16.1f} {r.get('structcrawl/store_transactions', 0):>6} "
              f"{r.get('structcrawl/store_txn_max_ms', 0):>10.1f} {r.get('structcrawl/store_backlog_max', 0):>11} "
              f"{r.get('export_s', 0):>8.1f}")
    print("ratio: pages/s against no store (goal >= 0.8); enqueue: reactor-thread time in the store's calls "
          "per batch; export: `structcrawl export` wall time, a full replay (what a resume costs)")
    for kind, r in best.items():
        if kind != "none":
            print(f"{kind}: enqueue max {r.get('structcrawl/store_enqueue_ms_max', 0):.3f} ms, "
                  f"writer busy {r.get('structcrawl/store_txn_total_s', 0):.1f} s, "
                  f"paused top-ups {r.get('structcrawl/store_paused', 0)}, "
                  f"close (final flush) {r.get('structcrawl/store_close_s', 0):.2f} s, "
                  f"{r.get('structcrawl/store_rows', 0)} rows, reason {r['reason']}, "
                  f"{r['modelled']} modelled, {r['classes']} classes")


if __name__ == "__main__":
    main()
