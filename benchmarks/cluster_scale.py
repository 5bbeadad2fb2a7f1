"""Offline UXClust at scale: `structcrawl cluster` over a synthetic store of N pages, SQLite and PostgreSQL.

For each backend: fill a store with a synthetic crawl of N demo-site pages
(benchmarks/synthetic_store.py: a real breadth-first crawl of the demo site,
replicated inside the database), then run ``structcrawl cluster --members``
in a child process per grouping (exact XPath, link-collection path) and
report wall time (first run — right after the store was written — and best
of ``--rounds``), pages/s, the clustering process's peak RSS (GNU time), and pairwise
precision/recall against the demo site's truth on the clustered pages.

    python benchmarks/cluster_scale.py [--pages 1000000] [--base-pages 10000] \
        [--backends sqlite,postgresql] [--rounds 2]

Anchor (UXClust Table 3): UXClust clustered 1,076,993 pages in 235 s on a
4-core laptop with MySQL (≈ 4,600 pages/s); the goal here is ≥ 18,000 pages/s
with peak memory under 1 GB.
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
from pathlib import Path

import sqlalchemy as sa

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from structcrawl.analysis.metrics import pairwise_precision_recall  # noqa: E402
from structcrawl.demo.site import DemoSite  # noqa: E402
from synthetic_store import fill, truth_of  # noqa: E402

PG_URL = os.environ.get("STRUCTCRAWL_BENCH_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
STRUCTCRAWL = [sys.executable, "-m", "structcrawl"]


def run_cluster(db: str, out: Path, group_by: str, similarity: float, cutoff: int) -> tuple[float, int, str]:
    """(wall seconds, peak RSS bytes, summary) of one `structcrawl cluster` child process."""
    rss_file = out.with_suffix(".rss")
    # GNU time forks the clustering process from its own small image: a child forked from this (large)
    # process would count this process's memory in its peak RSS until it execs
    cmd = ["/usr/bin/time", "-f", "%M", "-o", str(rss_file), *STRUCTCRAWL, "cluster", "--db", db,
           "--group-by", group_by, "--similarity", str(similarity), "--cutoff", str(cutoff), "--members", "-q",
           "-o", str(out)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, env=env, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"cluster failed: {proc.stderr[-2000:]}")
    return wall, int(rss_file.read_text().split()[-1]) * 1024, proc.stdout


def score(path: Path, site: DemoSite) -> tuple[float, float, int, int]:
    """Pairwise (precision, recall) on the clustered pages, unclustered pages, all pages."""
    truth = truth_of(site)
    with open(path, encoding="utf-8") as fh:
        doc = json.load(fh)
    assigned = {u: c["id"] for c in doc["classes"] for u in c["members"]}
    p, r = pairwise_precision_recall(assigned, {u: truth(u) for u in assigned})
    return p, r, doc["unclustered"]["size"], doc["pages"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=1_000_000)
    ap.add_argument("--base-pages", type=int, default=10_000, help="demo site whose BFS crawl is replicated")
    ap.add_argument("--backends", default="sqlite,postgresql")
    ap.add_argument("--cutoff", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=2, help="runs of each clustering; the best wall time is reported")
    ap.add_argument("--workdir", default=None, help="where the SQLite file and outputs go (default: a temp dir)")
    args = ap.parse_args()
    work = Path(args.workdir or tempfile.mkdtemp(prefix="cluster-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    site = DemoSite(pages=min(args.pages, args.base_pages))
    rows = []
    for backend in args.backends.split(","):
        schema = None
        if backend == "sqlite":
            db = f"sqlite:///{work / 'synthetic.db'}"
            if os.path.exists(work / "synthetic.db"):
                os.unlink(work / "synthetic.db")
        else:
            schema = "scb_" + uuid.uuid4().hex[:10]
            admin = sa.create_engine(PG_URL)
            with admin.begin() as conn:
                conn.exec_driver_sql(f"CREATE SCHEMA {schema}")
            db = f"{PG_URL}{'&' if '?' in PG_URL else '?'}options=-csearch_path%3D{schema}"
        try:
            made = fill(db, args.pages, base_pages=args.base_pages,
                        progress=lambda m: print(f"[{backend}] {m}", file=sys.stderr))  # noqa: B023 - called by fill
            print(f"[{backend}] store: {made.pages:,} pages, {made.links:,} links in {made.seconds:.0f} s",
                  file=sys.stderr)
            for group_by, similarity in (("xpath", 0.8), ("path", 0.9)):
                out = work / f"{backend}-{group_by}.json"
                runs = []
                for _ in range(args.rounds):
                    wall, rss, summary = run_cluster(db, out, group_by, similarity, args.cutoff)
                    runs.append((wall, rss))
                    print(f"[{backend}] {group_by}: {summary.splitlines()[-1]}; peak RSS {rss / 2**20:.0f} MiB",
                          file=sys.stderr)
                p, r, unclustered, pages = score(out, site)
                wall = min(w for w, _ in runs)
                rss = max(m for _, m in runs)
                rows.append((backend, group_by, similarity, pages, made.links, runs[0][0], wall, pages / wall, rss,
                             p, r, unclustered))
        finally:
            if schema:
                with admin.begin() as conn:
                    conn.exec_driver_sql(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
                admin.dispose()
    print("| store | group by | similarity | pages | links | first run s | best s | pages/s (best) | peak RSS | "
          "pair P | pair R | unclustered |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for b, g, s, pages, links, first, wall, rate, rss, p, r, un in rows:
        print(f"| {b} | {g} | {s} | {pages:,} | {links:,} | {first:.1f} | {wall:.1f} | {rate:,.0f} | "
              f"{rss / 2**20:.0f} MiB | {p:.3f} | {r:.3f} | {un:,} ({un / pages:.2%}) |")


if __name__ == "__main__":
    main()
