"""Order sensitivity: F* of the same crawl at 8, 16 and 32 concurrent requests, offline.

    python benchmarks/order_spread.py [--corpus geos …] [--strategy densest …] [--concurrency 8 16 32]

Issue 13 asks F* to move by at most 0.03 when only CONCURRENT_REQUESTS
changes.  The spider keeps ``2 × CONCURRENT_REQUESTS`` URLs popped ahead of
the model and steps batches in pop order, so ``run_offline(inflight=…)``
replays a crawl over HTTP update by update (``tests/test_spider.py`` checks it
on the demo) with no server: the whole table takes minutes where
``real_sites.py -s CONCURRENT_REQUESTS=N`` takes an hour.  Per corpus and
strategy: F* (commons-math3's class-use stubs scored as their own type, as
the issue asks), ARI and the share of the site fetched at each concurrency,
then the spread of F*.  The crawl has no other randomness: the frontier's
order and the model step are deterministic.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import corpora  # noqa: E402
from offline_real import run  # noqa: E402

#: the target of issue 13
SPREAD = 0.03


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", action="append", choices=sorted(corpora.CORPORA))
    ap.add_argument("--strategy", action="append", choices=["densest", "sparsest"])
    ap.add_argument("--concurrency", type=int, nargs="+", default=[8, 16, 32])
    args = ap.parse_args(argv)
    levels = args.concurrency
    print("| corpus | strategy | " + " | ".join(f"F* / ARI / fetched at {c}" for c in levels) + " | F* spread |")
    print("|---|---|" + "---|" * len(levels) + "---|")
    for corpus in args.corpus or ["commons-math3", "erlang", "geos", "ghc", "qtbase"]:
        for strategy in args.strategy or ["densest", "sparsest"]:
            cells, scores = [], []
            for c in levels:
                r = run(corpus, strategy, inflight=2 * c)
                res = r.get("stubs") or r["res"]
                scores.append(res["fstar"])
                cells.append(f"{res['fstar']:.3f} / {res['ari']:.3f} / {100 * r['fetched'] / r['site']:.1f} %")
            spread = max(scores) - min(scores)
            mark = "" if spread <= SPREAD else " (> 0.03)"
            print(f"| {corpus} | {strategy} | " + " | ".join(cells) + f" | {spread:.3f}{mark} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
