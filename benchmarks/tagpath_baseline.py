"""Issue 13's simple baseline: every page's tag-path set, sets joined at Jaccard >= 0.8 (union-find).

    python benchmarks/tagpath_baseline.py [--corpus geos …] [--element-paths] [--similarity 0.8]

Issue 13 reports that this baseline, which reads *every* page of a site, beat the crawler on several
held-out sites.  Offline, as ``offline_real.py`` reads a corpus: every page of the truth parsed from its
file (``core.features.extract``), its tag-path set (or, with ``--element-paths``, its element paths:
the same paths with each step's class tokens), identical sets grouped, then every pair of distinct sets
at Jaccard ``--similarity`` or more joined (union-find; a pair whose sizes differ by more than the
similarity allows is never compared).  Printed per corpus: pages, distinct sets, clusters, F* and ARI
against the truth (commons-math3 also with its class-use stubs as their own type, as issue 13 scores
it; pango also with its five callable kinds as one, ``coarse``), to set beside the crawler's figures
from ``order_spread.py`` or ``real_sites.py``, which fetch a fifth of the site or less.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpora  # noqa: E402
from offline_real import BASE  # noqa: E402
from structcrawl.analysis.metrics import evaluate  # noqa: E402
from structcrawl.core.features import extract  # noqa: E402
from structcrawl.core.unionfind import UnionFind  # noqa: E402

#: the issue's threshold
SIMILARITY = 0.8


def join_sets(sets: list[frozenset[str]], similarity: float = SIMILARITY) -> dict[frozenset[str], int]:
    """Each distinct set -> its group: union-find over the pairs at Jaccard ``similarity`` or more."""
    distinct = sorted(set(sets), key=lambda s: (len(s), sorted(s)))
    uf: UnionFind[frozenset[str]] = UnionFind()
    for i, a in enumerate(distinct):
        uf.find(a)
        for b in distinct[i + 1:]:
            if similarity * len(b) > len(a):  # |a ∩ b| / |a ∪ b| <= |a| / |b|: no longer set can reach it
                break
            common = len(a & b)
            if common >= similarity * (len(a) + len(b) - common):
                uf.union(a, b)
    return {s: k for k, group in enumerate(uf.groups()) for s in group}


def run(corpus: str, element_paths: bool, similarity: float) -> dict:
    root = corpora.ensure(corpus, lambda m: print(m, file=sys.stderr))
    truth = {p: c for p in corpora.html_pages(corpus) if (c := corpora.label(corpus, p)) is not None}
    sets = {}
    for p in truth:
        with open(os.path.join(root, p), "rb") as fh:
            feats = extract(fh.read(), BASE + quote(p))
        sets[p] = feats.element_paths if element_paths else feats.tag_paths
    group = join_sets(list(sets.values()), similarity)
    assigned = {p: group[s] for p, s in sets.items()}
    stubs = corpora.stub_truth(corpus, truth)
    coarse = corpora.CORPORA[corpus].get("coarse")
    return dict(corpus=corpus, pages=len(truth), distinct=len(group), clusters=len(set(group.values())),
                res=evaluate(assigned, truth), stubs=evaluate(assigned, stubs) if stubs else None,
                coarse=evaluate(assigned, {p: coarse.get(c, c) for p, c in truth.items()}) if coarse else None)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", action="append", help="default: corpora.defaults(), the extra ones by name")
    ap.add_argument("--element-paths", action="store_true", help="class-annotated element paths, not tag paths")
    ap.add_argument("--similarity", type=float, default=SIMILARITY)
    args = ap.parse_args(argv)
    print("| corpus | pages | distinct sets | clusters | F* | ARI |")
    print("|---|---|---|---|---|---|")
    for corpus in args.corpus or corpora.defaults():
        r = run(corpus, args.element_paths, args.similarity)
        for label, res in ((corpus, r["res"]), (corpus + " (coarse)", r["coarse"]),
                           (corpus + " (stubs apart)", r["stubs"])):
            if res is not None:
                print(f"| {label} | {r['pages']:,} | {r['distinct']:,} | {r['clusters']:,} | "
                      f"{res['fstar']:.3f} | {res['ari']:.3f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
