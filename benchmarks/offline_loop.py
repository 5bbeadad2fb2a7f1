"""The Compute-Model loop offline (no HTTP) on demo sites of growing size.

    python benchmarks/offline_loop.py [--sizes 3000 30000 100000] [--exhaust-pages 6000]

For each size, in a fresh subprocess: run the loop densest-first until the
stability rule fires and print pages fetched, model updates, updates/s of the
model step alone (feature extraction excluded) and the peak RSS.  Then, to
show that one update does not get dearer as the model grows, run with
stop=exhaust for ``--exhaust-pages`` pages and compare the mean model-step
time of the first and the last 100 updates.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time


def child(size: int, stop: str, max_pages: int | None) -> dict:
    from structcrawl.core.explorer import Explorer
    from structcrawl.core.features import extract
    from structcrawl.core.urls import normalize_url
    from structcrawl.demo.site import DemoSite, fetcher

    base = "http://127.0.0.1:8000"
    site = DemoSite(pages=size)
    fetch = fetcher(site, base)
    explorer = Explorer(base + "/")
    step_times, fetched = [], 0
    t0 = time.perf_counter()
    while not (stop == "stable" and explorer.stable):
        batch = explorer.next_batch()
        if batch is None or (max_pages and fetched >= max_pages):
            break
        pages, failed = [], []
        for url in batch.urls:
            got = fetch(url)
            fetched += 1
            if got is None:
                failed.append(url)
                continue
            final = normalize_url(got[0]) or got[0]
            if final != url:
                explorer.redirected(url, final)
            pages.append(extract(got[1], final))
        s = time.perf_counter()
        explorer.complete(batch, pages, failed)
        step_times.append(time.perf_counter() - s)
    wall = time.perf_counter() - t0
    first, last = step_times[:100], step_times[-100:]
    return {
        "size": len(site),
        "stop": stop,
        "fetched": len(explorer.model.pages),
        "classes": len(explorer.model.classes),
        "updates": explorer.updates,
        "updates_per_s": explorer.updates / sum(step_times),
        "wall_s": wall,
        "first100_ms": 1000 * sum(first) / len(first),
        "last100_ms": 1000 * sum(last) / len(last),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        print(json.dumps(child(int(sys.argv[2]), sys.argv[3], int(sys.argv[4]) or None)))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[3000, 30000, 100000])
    ap.add_argument("--exhaust-pages", type=int, default=6000)
    args = ap.parse_args()
    runs = [(n, "stable", 0) for n in args.sizes] + [(max(args.sizes), "exhaust", args.exhaust_pages)]
    print(f"{'site':>8} {'stop':>8} {'fetched':>8} {'%':>6} {'classes':>7} {'updates':>7} "
          f"{'upd/s':>7} {'first100':>9} {'last100':>8} {'wall s':>7} {'RSS MB':>7}")
    for size, stop, cap in runs:
        out = subprocess.run([sys.executable, __file__, "--child", str(size), stop, str(cap)],
                             check=True, capture_output=True, text=True).stdout
        r = json.loads(out)
        print(f"{r['size']:>8} {stop:>8} {r['fetched']:>8} {100 * r['fetched'] / r['size']:>5.1f}% "
              f"{r['classes']:>7} {r['updates']:>7} {r['updates_per_s']:>7.0f} {r['first100_ms']:>7.2f}ms "
              f"{r['last100_ms']:>6.2f}ms {r['wall_s']:>7.1f} {r['peak_rss_mb']:>7.0f}")


if __name__ == "__main__":
    main()
