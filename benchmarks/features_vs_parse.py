"""Feature extraction cost against a bare lxml parse of the same bytes, same run.

    python benchmarks/features_vs_parse.py [--pages 2000] [--rounds 5]

Renders the first N pages of the default demo site (every class), then times,
interleaved round by round, (a) ``lxml.html.fromstring(body)`` and (b)
``structcrawl.core.features.extract(body, url)`` over all of them, and prints the
best-of-rounds times and the ratio b/a.  Goal (issue #2): ratio ≤ 2.5.
"""

from __future__ import annotations

import argparse
import time

import lxml.html

from structcrawl.core.features import extract
from structcrawl.demo.site import DemoSite


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()

    site = DemoSite()
    docs = []
    for path, _cls in site.truth():
        status, _headers, body = site.render(path)
        if status == 200:
            docs.append(("http://127.0.0.1:8000" + path, body))
        if len(docs) == args.pages:
            break

    bare, feats = [], []
    for _ in range(args.rounds):
        t0 = time.perf_counter()
        for _url, body in docs:
            lxml.html.fromstring(body)
        t1 = time.perf_counter()
        for url, body in docs:
            extract(body, url)
        t2 = time.perf_counter()
        bare.append(t1 - t0)
        feats.append(t2 - t1)
    a, b = min(bare), min(feats)
    size = sum(len(body) for _u, body in docs) / len(docs)
    print(f"pages: {len(docs)} (mean {size / 1024:.1f} KiB), best of {args.rounds} rounds")
    print(f"bare lxml.html.fromstring: {a * 1000:8.1f} ms  ({a / len(docs) * 1e6:6.0f} us/page)")
    print(f"features.extract:          {b * 1000:8.1f} ms  ({b / len(docs) * 1e6:6.0f} us/page)")
    print(f"ratio features/parse:      {b / a:8.2f}  (goal <= 2.5)")


if __name__ == "__main__":
    main()
