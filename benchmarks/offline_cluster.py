"""Offline clustering at its defaults: `structcrawl cluster` over a full crawl of each real corpus.

    python benchmarks/offline_cluster.py [--corpus geos --corpus qtbase …] [--stores DIR]

For each corpus of ``benchmarks/corpora.py`` whose files are already unpacked
(nothing is downloaded): serve its html root with ``python -m http.server`` on
127.0.0.1, crawl the whole site with the structure spider (``structcrawl crawl
--stop exhaust``) into a SQLite store, run ``structcrawl cluster --members`` at
its defaults and score the clusters against the corpus's URL ground truth: F*,
ARI, pairwise precision/recall (unclustered pages count as singletons), the
unclustered share and clusters found vs truth classes.  ``--stores DIR`` keeps
the stores and reuses one already there, so the clustering can be re-scored
without crawling again.  Prints one table.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import corpora  # noqa: E402
from real_sites import relpath_of, serve, structcrawl  # noqa: E402
from structcrawl.analysis.metrics import evaluate  # noqa: E402


def crawl(corpus: str, store: Path, tmp: Path) -> float:
    """Crawl ``corpus`` to its end into the SQLite file ``store`` (renamed there once complete); wall seconds."""
    part = store.with_suffix(".part")
    server, base = serve(corpora.root_dir(corpus))
    try:
        t0 = time.monotonic()
        proc = structcrawl("crawl", base + corpora.CORPORA[corpus]["entry"], "--stop", "exhaust",
                           "--db", f"sqlite:///{part}", "--job", corpus, "--fresh", "-L", "WARNING",
                           "-o", str(tmp / f"{corpus}.model.json"),
                           capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"crawl of {corpus} failed:\n{proc.stderr[-3000:]}")
        part.rename(store)
        return time.monotonic() - t0
    finally:
        server.terminate()
        server.wait()


def score(corpus: str, db: str, out: Path) -> dict:
    """`structcrawl cluster` at its defaults over the stored crawl of ``corpus``, scored."""
    proc = structcrawl("cluster", "--db", db, "--job", corpus, "--members", "-q", "-o", str(out),
                       capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"cluster of {corpus} failed:\n{proc.stderr[-3000:]}")
    doc = json.loads(out.read_text(encoding="utf-8"))
    base = doc["site"]["start_url"][:-len(corpora.CORPORA[corpus]["entry"])]
    # every crawled page counts, by URL (index.html?a/B.html and index.html are two pages of one file)
    assigned: dict[str, int | None] = {u: cls["id"] for cls in doc["classes"] for u in cls["members"]}
    assigned.update((u, None) for u in doc["unclustered"]["members"])
    truth = {u: c for u in assigned if (p := relpath_of(u, base)) and (c := corpora.label(corpus, p)) is not None}
    res = evaluate({u: assigned[u] for u in truth}, truth)
    return dict(corpus=corpus, pages=doc["pages"], clusters=len(doc["classes"]), truth=res["classes"],
                unclustered=doc["unclustered"]["size"] / doc["pages"], cutoff=doc["parameters"]["cutoff"], res=res)


def table(rows: list[dict]) -> str:
    head = ("corpus", "pages", "cut-off", "F*", "ARI", "pair P", "pair R", "unclustered", "clusters/true")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        res = r["res"]
        lines.append(f"| {r['corpus']} | {r['pages']:,} | {r['cutoff']} | {res['fstar']:.3f} | {res['ari']:.3f} | "
                     f"{res['pair_precision']:.3f} | {res['pair_recall']:.3f} | {r['unclustered']:.1%} | "
                     f"{r['clusters']}/{r['truth']} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", action="append", choices=sorted(corpora.CORPORA),
                    help="corpora to run (default: every corpus unpacked under the corpora cache)")
    ap.add_argument("--stores", type=Path, help="keep the SQLite stores here and reuse those already there")
    args = ap.parse_args(argv)
    names = args.corpus or [c for c in corpora.defaults() if corpora.html_pages(c)]
    if not names:
        raise SystemExit(f"no corpus unpacked under {corpora.BASE}: run benchmarks/real_sites.py once")
    rows = []
    with tempfile.TemporaryDirectory(prefix="offline-cluster-") as tmp:
        stores = args.stores or Path(tmp)
        stores.mkdir(parents=True, exist_ok=True)
        for corpus in names:
            path = stores / f"{corpus}.db"
            if not path.exists():
                seconds = crawl(corpus, path, Path(tmp))
                print(f"{corpus}: crawled in {seconds:.0f} s", file=sys.stderr)
            rows.append(score(corpus, f"sqlite:///{path}", Path(tmp) / f"{corpus}.clusters.json"))
            print(table(rows[-1:]).splitlines()[-1], file=sys.stderr)
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
