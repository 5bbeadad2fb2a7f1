"""The real-site benchmark offline: the Compute-Model loop over a corpus's files, no HTTP.

    python benchmarks/offline_real.py [--corpus geos] [--strategy densest] [--confusion] [--checks]
        [--inflight 32] [--probe-size 3] [--audit-seed 1]

For fast iteration on the algorithm: ``run_offline`` with a fetcher that reads
the corpus files the way ``python -m http.server`` serves them (query strings
ignored, a directory gives its ``index.html`` or a listing, a directory URL
without a slash redirects), then every page of the site classified with the
crawl's model (``SiteModel.classify``, as ``structcrawl classify`` does with
the exported model) and scored against the URL-regex truth of
``benchmarks/corpora.py``.  ``--confusion`` prints which truth classes went to
which found classes; ``--checks`` every check of the stop rule (design.md item
5).  Figures to quote come from ``benchmarks/real_sites.py``
(the real spider over HTTP); this driver is for diagnosis.
"""

from __future__ import annotations

import argparse
import html
import os
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import corpora  # noqa: E402
from structcrawl.analysis.classify import UnseenGroups  # noqa: E402
from structcrawl.analysis.metrics import evaluate  # noqa: E402
from structcrawl.core.explorer import run_offline  # noqa: E402
from structcrawl.core.features import extract  # noqa: E402

BASE = "http://127.0.0.1:8000/"


def listing(path: str, root: str) -> bytes:
    """A directory listing in the shape of ``http.server``'s."""
    names = sorted(os.listdir(os.path.join(root, path)), key=str.lower)
    items = "".join(f'<li><a href="{quote(n + ("/" if os.path.isdir(os.path.join(root, path, n)) else ""))}">'
                    f"{html.escape(n)}</a></li>\n" for n in names)
    title = html.escape("Directory listing for /" + path)
    return (f"<!DOCTYPE HTML>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{title}</title>\n"
            f"</head>\n<body>\n<h1>{title}</h1>\n<hr>\n<ul>\n{items}</ul>\n<hr>\n</body>\n</html>\n").encode()


def fetcher(root: str, base: str = BASE):
    """url -> (final_url, body) | None, as ``python -m http.server --directory root`` answers."""
    def fetch(url: str):
        if not url.startswith(base):
            return None
        path = unquote(urlsplit(url).path)[len(urlsplit(base).path):]
        full = os.path.join(root, path)
        if os.path.isdir(full):
            if path and not path.endswith("/"):
                return fetch(base + quote(path) + "/")
            index = os.path.join(full, "index.html")
            if os.path.isfile(index):
                with open(index, "rb") as fh:
                    return url, fh.read()
            return url, listing(path, root)
        if not os.path.isfile(full) or not full.lower().endswith((".html", ".htm")):
            return None  # 404, or not HTML (the spider models HTML only)
        with open(full, "rb") as fh:
            return url, fh.read()
    return fetch


def run(corpus: str, strategy: str, confusion: bool = False, inflight: int = 0, **explorer_args) -> dict:
    root = corpora.ensure(corpus, lambda m: print(m, file=sys.stderr))
    pages = corpora.html_pages(corpus)
    truth = {p: corpora.label(corpus, p) for p in pages}
    truth = {p: c for p, c in truth.items() if c is not None}
    fetch = fetcher(root)
    t0 = time.monotonic()
    fetched = Counter()

    def counting(url):
        fetched["n"] += 1
        return fetch(url)

    explorer = run_offline(counting, BASE + corpora.CORPORA[corpus]["entry"], strategy=strategy, inflight=inflight,
                           **explorer_args)
    wall = time.monotonic() - t0
    model = explorer.model
    assigned = {}
    unseen = UnseenGroups(model.reference().skeleton)  # as structcrawl classify groups pages that fit no class
    for p in truth:
        with open(os.path.join(root, p), "rb") as fh:
            feats = extract(fh.read(), BASE + quote(p))
        cid = model.classify(*model.spelled(feats.collections), feats.element_paths)[0]
        assigned[p] = unseen.label(cid, feats.element_paths)
    res = evaluate(assigned, truth)
    # classification agrees with the model's own membership (issue 13: >= 99 %)
    members = {offline_path(u): c for u, c in model.page_class.items()}
    common = [p for p in members if p in assigned]
    agree = sum(1 for p in common if assigned[p] == members[p]) / max(1, len(common))
    out = dict(corpus=corpus, strategy=strategy, site=len(pages), fetched=fetched["n"],
               modelled=len(model.pages), stable=explorer.stable, classes=len(model.classes),
               truth=len(set(truth.values())), wall=wall, updates=explorer.updates, res=res,
               reason=explorer.stability.reason, agree=agree, checks=explorer.stability.checks)
    coarse = corpora.CORPORA[corpus].get("coarse")
    if coarse:
        ct = {p: coarse.get(c, c) for p, c in truth.items()}
        out["coarse"] = evaluate({p: assigned[p] for p in ct}, ct)
    stubs = corpora.stub_truth(corpus, truth)
    if stubs:
        out["stubs"] = evaluate({p: assigned[p] for p in stubs}, stubs)
    if confusion:
        print_confusion(assigned, stubs or truth)
    return out


def offline_path(url: str) -> str:
    """The corpus-relative path of a crawled URL (the truth's key)."""
    return unquote(urlsplit(url).path)[len(urlsplit(BASE).path):]


def print_confusion(assigned: dict, truth: dict, out=sys.stdout) -> None:
    """One line per truth class: its pages, then found class: pages, largest first."""
    table: dict[str, Counter] = defaultdict(Counter)
    for p, t in truth.items():
        table[t][assigned[p]] += 1
    for t in sorted(table, key=lambda t: -sum(table[t].values())):
        row = ", ".join(f"{c}:{n}" for c, n in table[t].most_common())
        print(f"  {t:16s} {sum(table[t].values()):5d}  {row}", file=out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", action="append", choices=sorted(corpora.CORPORA))
    ap.add_argument("--strategy", action="append", choices=["densest", "sparsest"])
    ap.add_argument("--confusion", action="store_true")
    ap.add_argument("--checks", action="store_true",
                    help="print every check of the stop rule: what held the crawl, and when")
    ap.add_argument("--inflight", type=int, default=0,
                    help="URLs popped ahead of the model, as the spider keeps 2 x CONCURRENT_REQUESTS (default 0)")
    ap.add_argument("--audit-seed", type=int, default=0,
                    help="where the audit's hash starts (default 0, the crawl's); another seed draws other "
                         "pages, to see how much the outcome hangs on the draw")
    ap.add_argument("--probe-size", type=int, default=None,
                    help="URLs of a collection's first batch (default: the frontier's, 5); another value "
                         "perturbs the order, to see how much the outcome hangs on it")
    args = ap.parse_args(argv)
    for corpus in args.corpus or ["geos", "commons-math3", "pango"]:
        for strategy in args.strategy or ["densest"]:
            extra = {} if args.probe_size is None else {"probe_size": args.probe_size}
            r = run(corpus, strategy, args.confusion, inflight=args.inflight, audit_seed=args.audit_seed, **extra)
            res = r["res"]
            line = (f"{corpus:14s} {strategy:8s} fetched {r['fetched']:5d}/{r['site']} "
                    f"({100 * r['fetched'] / r['site']:.1f} %) modelled {r['modelled']} "
                    f"{'stable' if r['stable'] else 'finished'} after {r['updates']} updates, "
                    f"F* {res['fstar']:.3f} purity {res['purity']:.3f} pairR {res['pair_recall']:.3f} "
                    f"ARI {res['ari']:.3f} classes {r['classes']}/{r['truth']} agree {r['agree']:.3f} "
                    f"({r['wall']:.1f} s)")
            if "coarse" in r:
                line += f" coarse F* {r['coarse']['fstar']:.3f}"
            if "stubs" in r:
                line += f" stubs-apart F* {r['stubs']['fstar']:.3f}"
            print(line, flush=True)
            if args.checks:
                for c in r["checks"]:
                    print(f"    check at {c.pages:5d} pages: predicted {c.predicted}/{c.new}, moved {c.moved}/"
                          f"{c.earlier}, {c.classes} classes, {c.untried} collections untried", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
