"""Extraction latency: one page's fields and records with the model's XPaths (parsel), on the demo site.

    python benchmarks/extract.py [--pages 3000] [--sample 2000] [--seed 0]

Serves the demo site on 127.0.0.1, learns its model with ``structcrawl crawl``
(stop=stable), then for ``--sample`` pages spread over the site (every class
in its share): renders the page, classifies it with the model, and times
:meth:`structcrawl.analysis.extract.Extractor.extract` (parse + every field
and record XPath) and, separately, classification + extraction.  Prints
p50/p95/max per page overall and per class, in milliseconds.  The goal
(issue 16): p95 of extraction under 5 ms.  Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from structcrawl.analysis.classify import Classifier
from structcrawl.analysis.extract import Extractor
from structcrawl.demo import server
from structcrawl.demo.site import DemoSite
from structcrawl.sitemodel import load_model


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=3000)
    ap.add_argument("--sample", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    site = DemoSite(args.pages, args.seed)
    srv, base = server.start_in_thread(site)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "demo.model.json"
            res = subprocess.run([sys.executable, "-m", "structcrawl", "crawl", base + "/", "-o", str(out),
                                  "-L", "WARNING"], capture_output=True, text=True)
            if res.returncode != 0:
                print(res.stderr[-3000:], file=sys.stderr)
                return 1
            model = load_model(out)
    finally:
        srv.shutdown()
        srv.server_close()
    extractor, classifier = Extractor(model.document), Classifier(model)
    urls = [u for u, _c in site.truth()]
    random.Random(args.seed).shuffle(urls)
    extract_ms: dict[str, list[float]] = defaultdict(list)
    total_ms: list[float] = []
    records = 0
    for path in urls[: args.sample]:
        status, headers, body = site.render(path)
        if status != 200:
            continue
        t0 = time.perf_counter()
        cid, _cost = classifier.classify(body, base + path, headers.get("Content-Type"))
        t1 = time.perf_counter()
        out = extractor.extract(body.decode("utf-8"), cid)
        t2 = time.perf_counter()
        records += len(out["records"] or ())
        extract_ms[site.classify(path) or "?"].append((t2 - t1) * 1000)
        total_ms.append((t2 - t0) * 1000)
    every = [x for xs in extract_ms.values() for x in xs]
    print(f"demo site {len(site):,} pages, model {sum(1 for c in model.document['classes'] if c['fields'])} "
          f"classes with fields; {len(every)} pages extracted, {records:,} records")
    print(f"{'':16} {'pages':>6} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
    for name, xs in sorted(extract_ms.items()):
        print(f"{name:16} {len(xs):6d} {statistics.median(xs):8.2f} {percentile(xs, 0.95):8.2f} {max(xs):8.2f}")
    print(f"{'extract, all':16} {len(every):6d} {statistics.median(every):8.2f} {percentile(every, 0.95):8.2f} "
          f"{max(every):8.2f}")
    print(f"{'classify+extract':16} {len(total_ms):6d} {statistics.median(total_ms):8.2f} "
          f"{percentile(total_ms, 0.95):8.2f} {max(total_ms):8.2f}")
    print(json.dumps({"extract_p95_ms": round(percentile(every, 0.95), 3),
                      "classify_extract_p95_ms": round(percentile(total_ms, 0.95), 3)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
