"""Pages whose links are all the site's chrome: could their element paths place them?  (a diagnosis)

    python benchmarks/bare_pages.py [--corpus postgresql …] [--strategy densest] [--inflight 32]
        [--similarity 0.5] [--skeleton 0.99] [--tag-paths]

A page whose only links are the navigation every class shows carries no link
evidence (issue 13's sixth failure); the model gathers such pages in one class
(docs/design.md, item 18), and on PostgreSQL's manual that class holds a fifth
of the site, sections and command pages alike.  This driver runs the
Compute-Model loop offline (``benchmarks/offline_real.py``), classifies every
page of the corpus with the model, and then places each chrome-only page by
its nearest modelled page with links of its own: 1-NN by Jaccard over the
page's *class-annotated element paths* (every element's tag path with its
class tokens, normalised as link-collection paths are, ids dropped, runs
folded), the paths on ≥ ``--skeleton`` of the modelled pages left out (the
site's skeleton: Vertex §III-B, sections every page shows carry no weight),
kept only when that page is ≥ ``--similarity`` alike.  ``--tag-paths``: the
same over the tag paths without classes that the features and the store keep
already (``PageFeatures.tag_paths``).  Prints F* before and
after and where the moved pages went.  It measured the rule before it was
built; the crawler now places such pages itself by element paths
(``structcrawl.core.placement``, docs/design.md item 23), so the model's
members are placed already and "before" is the link code alone on that model.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from pathlib import Path
from urllib.parse import quote

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from lxml import etree  # noqa: E402

import corpora  # noqa: E402
import offline_real  # noqa: E402
from structcrawl.analysis.metrics import evaluate  # noqa: E402
from structcrawl.core.explorer import run_offline  # noqa: E402
from structcrawl.core.features import _step, collapse_runs, extract, parse_html  # noqa: E402
from structcrawl.core.model import site_chrome  # noqa: E402


def element_paths(body: bytes) -> frozenset[str]:
    """Every element's path from the root, each step its tag and sorted class tokens (no ids)."""
    root = parse_html(body)
    if root is None:
        return frozenset()
    path = {root: "html"}
    out = set()
    for el in root.iterdescendants(etree.Element):
        if isinstance(el.tag, str):
            path[el] = path[el.getparent()] + "/" + _step(el.tag, None, el.get("class"))
            out.add(collapse_runs(path[el]))
    return frozenset(out)


def run(corpus: str, strategy: str, inflight: int, similarity: float, skeleton: float, plain: bool) -> str:
    root = corpora.ensure(corpus, lambda m: print(m, file=sys.stderr))
    truth = {p: corpora.label(corpus, p) for p in corpora.html_pages(corpus)}
    truth = {p: c for p, c in truth.items() if c is not None}
    truth = corpora.stub_truth(corpus, truth) or truth
    bodies = {}
    for p in truth:
        with open(os.path.join(root, p), "rb") as fh:
            bodies[p] = fh.read()
    explorer = run_offline(offline_real.fetcher(root), offline_real.BASE + corpora.CORPORA[corpus]["entry"],
                           strategy=strategy, inflight=inflight)
    model = explorer.model
    chrome = site_chrome(model)
    assigned, bare = {}, []
    for p, body in bodies.items():
        schema, urls = model.spelled(extract(body, offline_real.BASE + quote(p)).collections)
        assigned[p] = model.classify(schema, urls)[0]
        if schema <= chrome:
            bare.append(p)
    paths_of = (lambda p: extract(bodies[p], offline_real.BASE + quote(p)).tag_paths) if plain else (
        lambda p: element_paths(bodies[p]))
    reference = []
    for url, cid in model.page_class.items():
        p = offline_real.offline_path(url)
        if p in bodies and not model.pages[url].schema <= chrome:
            reference.append((cid, paths_of(p)))
    counts = Counter(x for _, paths in reference for x in paths)
    skel = {x for x, k in counts.items() if k >= skeleton * len(reference)}
    reference = [(cid, paths - skel) for cid, paths in reference]
    placed, moved = dict(assigned), Counter()
    for p in bare:
        paths = paths_of(p) - skel
        best, best_sim = None, -1.0
        for cid, other in reference:
            sim = len(paths & other) / max(1, len(paths | other))
            if sim > best_sim:
                best, best_sim = cid, sim
        if best_sim >= similarity:
            placed[p] = best
            moved[(truth[p], best)] += 1
    before, after = evaluate(assigned, truth)["fstar"], evaluate(placed, truth)["fstar"]
    where = ", ".join(f"{t}->{c}: {n}" for (t, c), n in moved.most_common(6))
    return (f"{corpus:14s} {strategy:8s} chrome-only pages {len(bare):5d}, placed {sum(moved.values()):5d}; "
            f"F* {before:.3f} -> {after:.3f}  ({where})")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", action="append", choices=sorted(corpora.CORPORA))
    ap.add_argument("--strategy", action="append", choices=["densest", "sparsest"])
    ap.add_argument("--inflight", type=int, default=32)
    ap.add_argument("--similarity", type=float, default=0.5)
    ap.add_argument("--skeleton", type=float, default=0.99)
    ap.add_argument("--tag-paths", action="store_true", help="tag paths without classes (what the store keeps)")
    args = ap.parse_args(argv)
    for corpus in args.corpus or ["postgresql", "commons-math3"]:
        for strategy in args.strategy or ["densest"]:
            print(run(corpus, strategy, args.inflight, args.similarity, args.skeleton, args.tag_paths), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
