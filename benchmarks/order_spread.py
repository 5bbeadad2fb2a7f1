"""Order sensitivity: F* of the same crawl at 8, 16 and 32 concurrent requests, offline.

    python benchmarks/order_spread.py [--corpus geos …] [--strategy densest …] [--concurrency 8 16 32]
        [--audit-seeds 0 1 2] [--jobs 2] [--save after.json] [--compare before.json]

Issue 13 asks F* to move by at most 0.03 when only CONCURRENT_REQUESTS
changes.  The spider keeps ``2 × CONCURRENT_REQUESTS`` URLs popped ahead of
the model and steps batches in pop order, so ``run_offline(inflight=…)``
replays a crawl over HTTP update by update (``tests/test_spider.py`` checks it
on the demo) with no server: the whole table takes minutes where
``real_sites.py -s CONCURRENT_REQUESTS=N`` takes an hour.  Per corpus and
strategy: F* (commons-math3's class-use stubs scored as their own type, as
the issue asks), ARI and the share of the site fetched at each concurrency,
then the spread of F*.  The crawl's one draw is the audit before the stop
(``Frontier.audit``: ten pending URLs by a fixed hash); ``--audit-seeds``
runs every row once per seed of that hash, the issue's "3 seeds of any
randomness", and the spread is then over every concurrency and seed.  The
frontier's order and the model step are otherwise deterministic.

A change to the model is judged on every row at once: ``--jobs`` runs the
rows in parallel processes, ``--save`` writes each row's figures (F*, ARI,
share fetched, classes, classify = membership, stop) to a JSON file, and
``--compare`` a file saved before the change prints the rows that moved, before
and after (rows are deterministic, so any difference is the change's).
"""

from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import corpora  # noqa: E402
from offline_real import run  # noqa: E402

#: the target of issue 13
SPREAD = 0.03


def row(corpus: str, strategy: str, concurrency: int, seed: int) -> dict:
    """One crawl's figures at ``concurrency`` (``2 ×`` URLs in flight, as the spider keeps them)
    with the audit drawn from ``seed``."""
    r = run(corpus, strategy, inflight=2 * concurrency, audit_seed=seed)
    res = r.get("stubs") or r["res"]
    return dict(fstar=round(res["fstar"], 3), ari=round(res["ari"], 3),
                fetched=round(100 * r["fetched"] / r["site"], 1), classes=r["classes"], truth=r["truth"],
                agree=round(r["agree"], 3), stop="stable" if r["stable"] else "finished")


def _key(corpus: str, strategy: str, concurrency: int, seed: int) -> str:
    return f"{corpus} {strategy} {concurrency}" + (f" seed {seed}" if seed else "")


def _cell(fig: dict) -> str:
    return (f"F* {fig['fstar']:.3f}, ARI {fig['ari']:.3f}, {fig['fetched']:.1f} %, "
            f"{fig['classes']} / {fig['truth']} classes, agree {fig['agree']:.3f}, {fig['stop']}")


def _span(figs: list[dict]) -> str:
    """One concurrency's figures over the seeds: each figure's least and greatest."""
    def span(name: str, fmt: str) -> str:
        lo, hi = min(f[name] for f in figs), max(f[name] for f in figs)
        return format(lo, fmt) if lo == hi else f"{lo:{fmt}}–{hi:{fmt}}"
    return f"{span('fstar', '.3f')} / {span('ari', '.3f')} / {span('fetched', '.1f')} %"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", action="append", choices=sorted(corpora.CORPORA))
    ap.add_argument("--strategy", action="append", choices=["densest", "sparsest"])
    ap.add_argument("--concurrency", type=int, nargs="+", default=[8, 16, 32])
    ap.add_argument("--audit-seeds", type=int, nargs="+", default=[0],
                    help="seeds of the audit's draw, each row run once per seed (default 0, the crawl's)")
    ap.add_argument("--jobs", type=int, default=1, help="rows run at once, one process each")
    ap.add_argument("--save", metavar="FILE", help="write every row's figures to this JSON file")
    ap.add_argument("--compare", metavar="FILE", help="a --save file of an earlier run: print the rows that moved")
    args = ap.parse_args(argv)
    levels = args.concurrency
    seeds = args.audit_seeds
    corpora_run = args.corpus or ["commons-math3", "erlang", "geos", "ghc", "qtbase"]
    keys = [(corpus, strategy, c, seed) for corpus in corpora_run
            for strategy in args.strategy or ["densest", "sparsest"] for c in levels for seed in seeds]
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        figures = dict(zip((_key(*k) for k in keys), pool.map(row, *zip(*keys))))
    print("| corpus | strategy | " + " | ".join(f"F* / ARI / fetched at {c}" for c in levels) + " | F* spread |")
    print("|---|---|" + "---|" * len(levels) + "---|")
    for corpus, strategy in dict.fromkeys(k[:2] for k in keys):
        cells = [[figures[_key(corpus, strategy, c, seed)] for seed in seeds] for c in levels]
        fstars = [f["fstar"] for figs in cells for f in figs]
        spread = max(fstars) - min(fstars)
        mark = "" if spread <= SPREAD else " (> 0.03)"
        print(f"| {corpus} | {strategy} | " + " | ".join(_span(figs) for figs in cells) + f" | {spread:.3f}{mark} |")
    if args.save:
        Path(args.save).write_text(json.dumps(figures, indent=1, sort_keys=True) + "\n")
    if args.compare:
        before = json.loads(Path(args.compare).read_text())
        moved = [k for k in figures if k in before and before[k] != figures[k]]
        print(f"\n{len(moved)} of {sum(1 for k in figures if k in before)} rows moved"
              + (f" ({len(figures) - len(moved)} rows not in {args.compare})" if any(k not in before for k in figures)
                 else ""))
        for k in moved:
            print(f"  {k}: {_cell(before[k])}\n  {' ' * len(k)}  -> {_cell(figures[k])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
