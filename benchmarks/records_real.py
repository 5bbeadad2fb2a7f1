"""Fields and list records on the real documentation corpora.

    python benchmarks/records_real.py [--corpus geos --corpus ghc …] [--out benchmarks/out]
    python benchmarks/records_real.py --analysis-cost [--corpus …]

For each corpus (``benchmarks/corpora.py``, already unpacked): serve its html
root on 127.0.0.1, learn the model with ``structcrawl crawl`` (stop=stable,
the default ``STRUCTCRAWL_FIELD_PAGES``), then print one row per class: the
truth label of most of its samples, its size, its field count and top field
names, and for list classes the record XPath, the share of informative text
the records hold and records per page (min–max over the kept pages); then,
for three pages of each list class (its first three samples), the records
``structcrawl extract``'s extractor finds on the file — the figures checked
by hand in docs/benchmarks.md.  The models are kept in ``--out``.

``--analysis-cost``: no crawl; the time the export spends on one class's
fields and records in the worst case, the 20 largest pages
(``STRUCTCRAWL_FIELD_PAGES``) of each truth class of each corpus, and the
pages and characters the analysis reads of them (its budget:
``structcrawl.analysis.records.analysed_texts``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import corpora  # noqa: E402
from real_sites import relpath_of, serve, structcrawl  # noqa: E402
from structcrawl.analysis.extract import Extractor  # noqa: E402
from structcrawl.sitemodel import load_model  # noqa: E402

VISIBLE = ("geos", "commons-math3", "ghc", "qtbase", "erlang")


def run_corpus(corpus: str, out: Path) -> None:
    root = corpora.root_dir(corpus)
    if not os.path.isdir(root):
        print(f"{corpus}: not unpacked at {root}, skipped", file=sys.stderr)
        return
    proc, base = serve(root)
    model_path = out / f"{corpus}.fields.model.json"
    try:
        t0 = time.perf_counter()
        res = structcrawl("crawl", base + corpora.CORPORA[corpus]["entry"], "-o", str(model_path), "-L", "WARNING",
                          capture_output=True, text=True)
        seconds = time.perf_counter() - t0
    finally:
        proc.terminate()
        proc.wait()
    if res.returncode != 0:
        print(f"{corpus}: crawl failed: {res.stderr[-2000:]}", file=sys.stderr)
        return
    model = load_model(model_path)
    doc = model.document
    extractor = Extractor(doc)

    def label(url: str) -> str:
        rel = relpath_of(url, base)
        return (corpora.label(corpus, rel) if rel else None) or "?"

    print(f"\n## {corpus} ({corpora.CORPORA[corpus]['generator']}): {doc['crawl']['pages_modelled']} pages modelled, "
          f"{len(doc['classes'])} classes, crawl + fields {seconds:.1f} s")
    print("| class | truth | pages | kept | fields | top fields | records | records/page |")
    print("|---|---|---|---|---|---|---|---|")
    checks = []
    for c in doc["classes"]:
        truth = Counter(label(u) for u in c["samples"]).most_common(1)[0][0]
        rec = c["records"]
        top = ", ".join(f["name"] for f in c["fields"][:4]) or (c.get("fields_note") or "")
        if rec:
            checks.append((c["id"], truth, c["samples"][:3]))
        cells = (f"`…{rec['xpath'][-50:]}` ({rec['coverage']:.2f})", f"{rec['per_page_min']}–{rec['per_page_max']}") \
            if rec else ("–", "–")
        print(f"| {c['id']} | {truth} | {c['size']} | {c['field_pages']} | {len(c['fields'])} | {top} | "
              f"{cells[0]} | {cells[1]} |")
    for cid, truth, urls in checks:
        for url in urls:
            rel = relpath_of(url, base)
            with open(os.path.join(root, rel), "rb") as fh:
                text = fh.read().decode("utf-8", "replace")
            records = extractor.extract(text, cid)["records"] or []
            first = next(iter(records[0].values()), None) if records else None
            print(f"check {corpus} class {cid} ({truth}) {rel}: {len(records)} records; first: {first!r}")


def analysis_cost(corpus: str) -> None:
    from structcrawl.analysis.records import analyse, analysed_texts
    from structcrawl.sitemodel import DEFAULT_FIELD_PAGES

    root = corpora.root_dir(corpus)
    by_class: dict[str, list[str]] = {}
    for rel in corpora.html_pages(corpus):
        by_class.setdefault(corpora.label(corpus, rel) or "?", []).append(rel)
    for name, rels in sorted(by_class.items()):
        largest = sorted(rels, key=lambda r: -os.path.getsize(os.path.join(root, r)))[:DEFAULT_FIELD_PAGES]
        texts = []
        for rel in largest:
            with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as fh:
                texts.append(fh.read())
        t0 = time.perf_counter()
        data = analyse({0: texts})[0]
        read = analysed_texts(texts)
        print(f"| {corpus} | {name} | {len(texts)} | {sum(map(len, texts)) / 1e6:.1f} | {len(read)} | "
              f"{sum(map(len, read)) / 1e6:.1f} | {time.perf_counter() - t0:.1f} | {len(data.fields)} | "
              f"{'yes' if data.records else 'no'} |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", action="append", choices=VISIBLE)
    ap.add_argument("--out", default=str(HERE / "out"))
    ap.add_argument("--analysis-cost", action="store_true", help="time the fields analysis on the largest pages")
    args = ap.parse_args(argv)
    if args.analysis_cost:
        print("| corpus | truth class | pages | MB | pages read | MB read | seconds | fields | records |\n"
              "|---|---|---|---|---|---|---|---|---|")
        for corpus in args.corpus or VISIBLE:
            analysis_cost(corpus)
        return 0
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for corpus in args.corpus or VISIBLE:
        run_corpus(corpus, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
