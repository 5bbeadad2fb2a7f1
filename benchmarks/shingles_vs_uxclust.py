"""Shingles (Vertex) vs UXClust: `structcrawl cluster` by both methods over the same stored crawls, in one run.

    python benchmarks/shingles_vs_uxclust.py [--stores DIR] [--corpus geos …] [--pages 1000000]
        [--base-pages 10000] [--no-synthetic] [--no-demo] [--seeds N]

Stores (kept in ``--stores`` and reused when already there):

* ``demo.db``: the default demo site crawled to its end (``--stop exhaust``) over HTTP on 127.0.0.1
  (``demo-N.db`` with ``--demo-pages N``: the issue's 30k full crawl is ``--demo-pages 30000``);
* ``<corpus>.db``: every visible corpus unpacked under the corpora cache, crawled whole
  (``benchmarks/offline_cluster.py``'s crawl);
* ``synthetic-<N>.db``: the N-page synthetic store of ``benchmarks/synthetic_store.py``.

Each method runs as ``structcrawl cluster --members`` in a child process under GNU time (wall seconds
including writing every member URL, peak RSS), at its defaults; clusters are scored against the truth
(F*, pairwise precision/recall; unclustered pages count as singletons), and F* once more with a corpus's
stub pages as a class of their own where it has them (commons-math3's "No usage of" class-use pages:
``corpora.stub_truth``).  Prints one table.

``--many-sets PAGES``: no store; the in-memory clustering timed on PAGES pages of four templates with
optional paths, nearly each page its own tag-path set.

``--confusion SEED``: no child processes; per store, which truth classes land in which shingle clusters at
that hash seed (in this process, as ``--seeds``), and the classes in each cluster.

``--seeds N``: no child processes; the shingle clustering of each store computed in this process
(:func:`structcrawl.store.cluster.shingle_cluster_store`, what ``structcrawl cluster --method shingles`` runs)
with hash seeds 0 … N-1, and F* per seed and their mean (commons-math3 with its stubs apart: the structural
truth).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402

import corpora  # noqa: E402
from offline_cluster import crawl as crawl_corpus  # noqa: E402
from real_sites import relpath_of, structcrawl  # noqa: E402
from structcrawl.analysis.metrics import evaluate  # noqa: E402
from structcrawl.analysis.shingles import cluster_sets  # noqa: E402
from structcrawl.analysis.uxclust import relative_cutoff  # noqa: E402
from structcrawl.demo import server  # noqa: E402
from structcrawl.demo.site import DemoSite  # noqa: E402
from structcrawl.store.cluster import shingle_cluster_store  # noqa: E402
from synthetic_store import fill, truth_of  # noqa: E402

METHODS = ("uxclust", "shingles")


def run_method(db: str, method: str, out: Path) -> tuple[float, int, str]:
    """(wall seconds, peak RSS bytes, summary's last line) of one `structcrawl cluster --members` child."""
    rss_file = out.with_suffix(".rss")
    cmd = ["/usr/bin/time", "-f", "%M", "-o", str(rss_file), sys.executable, "-m", "structcrawl", "cluster",
           "--db", db, "--method", method, "--members", "-q", "-o", str(out)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, env=env, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"cluster --method {method} of {db} failed:\n{proc.stderr[-3000:]}")
    return wall, int(rss_file.read_text().split()[-1]) * 1024, proc.stdout.strip().splitlines()[-1]


def score(out: Path, truth, stubs=None) -> dict:
    """Scores of a clusters file against ``truth`` (URL -> label), and against ``stubs`` when given (the same
    truth with a corpus's stub pages as a class of their own: ``corpora.stub_truth``)."""
    with open(out, encoding="utf-8") as fh:
        doc = json.load(fh)
    assigned: dict[str, int | None] = {u: c["id"] for c in doc["classes"] for u in c["members"]}
    assigned.update((u, None) for u in doc["unclustered"]["members"])
    labels = {u: x for u in assigned if (x := truth(u)) is not None}
    res = evaluate({u: assigned[u] for u in labels}, labels)
    res_stubs = None
    if stubs is not None:
        apart = {u: x for u in assigned if (x := stubs(u)) is not None}
        res_stubs = evaluate({u: assigned[u] for u in apart}, apart)
    return dict(pages=doc["pages"], clusters=len(doc["classes"]), unclustered=doc["unclustered"]["size"], res=res,
                res_stubs=res_stubs)


def demo_store(stores: Path, pages: int | None = None) -> tuple[str, DemoSite]:
    site = DemoSite() if pages is None else DemoSite(pages=pages)
    path = stores / ("demo.db" if pages is None else f"demo-{pages}.db")
    if not path.exists():
        part = path.with_suffix(".part")
        srv, base = server.start_in_thread(site)
        try:
            proc = structcrawl("crawl", base + "/", "--db", f"sqlite:///{part}", "--job", "demo", "--stop", "exhaust",
                               "--fresh", "-L", "WARNING", "-o", str(path.with_suffix(".model.json")),
                               capture_output=True, text=True)
        finally:
            srv.shutdown()
            srv.server_close()
        if proc.returncode != 0:
            raise SystemExit(f"crawl of the demo site failed:\n{proc.stderr[-3000:]}")
        part.rename(path)
    return f"sqlite:///{path}", site


def demo_truth(site: DemoSite):
    def truth(url: str) -> str | None:
        p = urlsplit(url)
        return site.classify(p.path + (f"?{p.query}" if p.query else ""))

    return truth


def _corpus_base(corpus: str, db: str) -> str:
    import sqlalchemy as sa

    engine = sa.create_engine(db)
    with engine.connect() as conn:
        start = conn.execute(sa.text("SELECT seed_url FROM sc_jobs")).scalar_one()
    engine.dispose()
    return start[:-len(corpora.CORPORA[corpus]["entry"])]


def corpus_truth(corpus: str, db: str):
    base = _corpus_base(corpus, db)

    def truth(url: str) -> str | None:
        p = relpath_of(url, base)
        return corpora.label(corpus, p) if p else None

    return truth


def corpus_stubs(corpus: str, db: str):
    """The corpus truth with its stub pages as a class of their own (``corpora.stub_truth``), None when the
    corpus has none."""
    spec = corpora.CORPORA[corpus].get("stubs")
    if not spec:
        return None
    cls, stub, marker = spec
    base, root = _corpus_base(corpus, db), corpora.root_dir(corpus)

    def truth(url: str) -> str | None:
        p = relpath_of(url, base)
        label = corpora.label(corpus, p) if p else None
        if label != cls:
            return label
        with open(os.path.join(root, p), "rb") as fh:
            return stub if marker in fh.read() else label

    return truth


def labelled_members(db: str, truth, seed: int) -> list[tuple[int, str | None]]:
    """Each page of the store (one per URL) as (its shingle cluster at hash ``seed``, 0: unclustered; its
    label): the clustering of ``structcrawl cluster --method shingles``, in this process; a URL's label is
    looked up once per path (the synthetic store's copies share it)."""
    stored = shingle_cluster_store(db, seed=seed, members=True)
    label_of: dict[str, str | None] = {}
    pages = []
    for cid, urls in stored.members.items():
        for url in urls:
            parts = urlsplit(url)
            key = parts.path + "?" + parts.query
            if key not in label_of or not parts.hostname.endswith(".demo.test"):
                label_of[key] = truth(url)
            pages.append((cid, label_of[key]))
    return pages


def seeds_row(db: str, truth, seeds: int) -> list[float]:
    """F* of the shingle clustering of a store's pages at hash seeds 0 … ``seeds``-1."""
    out = []
    for seed in range(seeds):
        pages = [(cid, label) for cid, label in labelled_members(db, truth, seed) if label is not None]
        out.append(evaluate({str(k): cid or None for k, (cid, _) in enumerate(pages)},
                            {str(k): label for k, (_, label) in enumerate(pages)})["fstar"])
    return out


def confusion(db: str, truth, seed: int) -> list[str]:
    """Lines: each truth class, its pages, and the shingle clusters they land in at hash ``seed`` (``c0``:
    unclustered), largest first; then each cluster's classes the same way."""
    cells = Counter((label, cid) for cid, label in labelled_members(db, truth, seed))
    lines = []
    for axis, other, name in ((0, 1, "class"), (1, 0, "cluster")):
        for key in sorted({k[axis] for k in cells}, key=lambda k: (str(k).zfill(9) if axis else str(k))):
            row = sorted(((k[other], n) for k, n in cells.items() if k[axis] == key), key=lambda x: (-x[1], str(x[0])))
            label = f"c{key}" if axis else key
            lines.append(f"  {name} {label}: {sum(n for _, n in row):,} pages -> "
                         + ", ".join(f"{'c' if other else ''}{k} {n:,}" for k, n in row))
    return lines


def many_sets(pages: int, seed: int = 1) -> str:
    """Seconds of :func:`cluster_sets` in memory on ``pages`` pages of four templates of 30 tag paths each
    with 5-30 of their 40 optional paths: nearly every page its own distinct set (the many-parts case a
    real site's million pages can have), cut-off 0.13 % as in ``structcrawl cluster``."""
    rng = random.Random(seed)
    templates = [([f"html/body/div{t}/core{i}" for i in range(30)], [f"html/body/div{t}/opt{i}/x" for i in range(40)])
                 for t in range(4)]
    carried: Counter[frozenset[str]] = Counter()
    for n in range(pages):
        core, optional = templates[n % 4]
        carried[frozenset(core + rng.sample(optional, rng.randint(5, 30)))] += 1
    sets, counts = list(carried), list(carried.values())
    t0 = time.perf_counter()
    res, _ = cluster_sets([sorted(x) for x in sets], counts, relative_cutoff(pages))
    took = time.perf_counter() - t0
    return (f"{pages:,} pages, {len(sets):,} distinct sets: {took:.2f} s, {len(res.clusters)} clusters, "
            f"{res.unclustered:,} unclustered")


def table(rows: list[dict]) -> str:
    head = ("store", "pages", "method", "clusters", "unclustered", "F*", "pair P", "pair R", "F* stubs apart",
            "wall s", "pages/s", "peak RSS")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        res = r["res"]
        lines.append(f"| {r['store']} | {r['pages']:,} | {r['method']} | {r['clusters']} | "
                     f"{r['unclustered']:,} ({r['unclustered'] / r['pages']:.1%}) | {res['fstar']:.3f} | "
                     f"{res['pair_precision']:.3f} | {res['pair_recall']:.3f} | "
                     f"{'–' if r['res_stubs'] is None else format(r['res_stubs']['fstar'], '.3f')} | {r['wall']:.1f} | "
                     f"{r['pages'] / r['wall']:,.0f} | {r['rss'] / 2**20:.0f} MiB |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--stores", type=Path, help="keep the SQLite stores here and reuse those already there")
    ap.add_argument("--corpus", action="append", choices=sorted(corpora.CORPORA),
                    help="corpora to run (default: every corpus unpacked under the corpora cache)")
    ap.add_argument("--pages", type=int, default=1_000_000, help="pages of the synthetic store")
    ap.add_argument("--base-pages", type=int, default=10_000, help="demo site whose crawl the synthetic store copies")
    ap.add_argument("--no-synthetic", action="store_true")
    ap.add_argument("--no-demo", action="store_true")
    ap.add_argument("--demo-pages", type=int, help="pages of the demo site (default: the demo's default, ~3,000)")
    ap.add_argument("--seeds", type=int, help="in-memory shingles F* at hash seeds 0 … N-1 instead of the table")
    ap.add_argument("--many-sets", type=int, metavar="PAGES",
                    help="only time the in-memory clustering of PAGES pages of four variable templates")
    ap.add_argument("--confusion", type=int, metavar="SEED",
                    help="in-memory: which truth classes land in which shingle clusters at this hash seed, per store")
    args = ap.parse_args(argv)
    if args.many_sets:
        print(many_sets(args.many_sets))
        return 0
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="shingles-vs-uxclust-") as tmp:
        stores = args.stores or Path(tmp)
        stores.mkdir(parents=True, exist_ok=True)
        todo: list[tuple[str, str, object, object]] = []
        if not args.no_demo:
            db, site = demo_store(stores, args.demo_pages)
            todo.append(("demo", db, demo_truth(site), None))
        for corpus in args.corpus or [c for c in corpora.defaults() if corpora.html_pages(c)]:
            path = stores / f"{corpus}.db"
            if not path.exists():
                crawl_corpus(corpus, path, Path(tmp))
            db = f"sqlite:///{path}"
            todo.append((corpus, db, corpus_truth(corpus, db), corpus_stubs(corpus, db)))
        if not args.no_synthetic:
            path = stores / f"synthetic-{args.pages}.db"
            if not path.exists():
                part = path.with_suffix(".part")
                part.unlink(missing_ok=True)
                fill(f"sqlite:///{part}", args.pages, base_pages=args.base_pages,
                     progress=lambda m: print(f"[synthetic] {m}", file=sys.stderr))
                part.rename(path)
            todo.append((f"synthetic {args.pages:,}", f"sqlite:///{path}",
                         truth_of(DemoSite(pages=min(args.pages, args.base_pages))), None))
        if args.confusion is not None:
            for name, db, truth, stubs in todo:
                print(f"{name} (hash seed {args.confusion}):")
                print("\n".join(confusion(db, stubs or truth, args.confusion)), flush=True)
            return 0
        if args.seeds:
            print("| store | " + " | ".join(f"seed {s}" for s in range(args.seeds)) + " | mean |")
            print("|---|" + "---|" * (args.seeds + 1))
            for name, db, truth, stubs in todo:
                scores = seeds_row(db, stubs or truth, args.seeds)
                print(f"| {name} | " + " | ".join(f"{x:.3f}" for x in scores) + f" | {np.mean(scores):.3f} |",
                      flush=True)
            return 0
        for name, db, truth, stubs in todo:
            for method in METHODS:
                out = Path(tmp) / f"{name.replace(' ', '-')}.{method}.json"
                wall, rss, summary = run_method(db, method, out)
                print(f"[{name}] {method}: {summary}; peak RSS {rss / 2**20:.0f} MiB", file=sys.stderr)
                rows.append(dict(store=name, method=method, wall=wall, rss=rss, **score(out, truth, stubs)))
                print(table(rows[-1:]).splitlines()[-1], file=sys.stderr)
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
