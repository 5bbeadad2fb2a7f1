"""Placing a page whose links are all the site's chrome by its element paths (issue 13's sixth failure).

A page whose only link collections are the site's chrome (a stub, "No usage of
X", a section of prose with no link of its own) carries no link evidence of its
template: the §3.2 code of Crescenzi et al. puts it in whichever class asks
least.  Its element structure still shows its template.  Such a page goes to the
class of its nearest modelled page *with* links of its own: 1-nearest-neighbour
by Jaccard similarity of *element paths* (every element's root path, each step
its tag and class tokens normalised as in collection paths, ids dropped, runs
folded; ``PageFeatures.element_paths``), kept when the similarity reaches
``PLACE_SIMILARITY``.  The model's chrome-only members are grouped by kind
first (``similar_groups``: single linkage at the same similarity) and each
group placed as a whole, one group to a class (``split._place_bare``); a page
like one of them goes where it is, a page near no such page goes with the
chrome-only members nearest it (stubs stay together, where the model gathered
them), else where the link code puts it.  docs/design.md, items 23 and 28.

Class tokens, not bare tags: QDoc's licence pages have three tag paths beyond
the skeleton, all on its overview pages, and joined them; their classes tell
them apart (issue 13: nearest-neighbour type agreement 99 % on class-annotated
paths).  The paths on nearly every reference page (``SKELETON_SHARE``: the
html/head/body frame, the navigation bar) are left out of the comparison, as
Chakrabarti & Mehta drop template paths before comparing pages (§3.4): with
them, Javadoc's "No usage of" stubs (a header, a footer and one sentence) were
nearest to the package summaries at Jaccard ≥ 0.8 and joined them.  Measured
in docs/design.md, item 23.  "Nearly every" is read over the pages inside the
site's frame — those carrying some of its chrome links — when the caller says
which (``skeleton``): a frames Javadoc's frameset and frame listings have no
navigation bar, three of them among 281 pages put it under 99 %, and the stubs
were nearest the class tree at 0.66 (docs/design.md, item 47).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from structcrawl.core.unionfind import UnionFind

#: A path on this share of the reference pages or more is the site's skeleton, left out.
SKELETON_SHARE = 0.99
#: Jaccard similarity (skeleton left out) to the nearest reference page for a page to be placed.
PLACE_SIMILARITY = 0.5
#: Answers kept per reference (pages of one template share their set; a long harvest meets many).
MEMO_SETS = 4096
#: Rows of the similarity matrix ``similar_groups`` holds at once.
GROUP_ROWS = 512


class PathReference:
    """The distinct path sets of the pages with links of their own, each with the classes
    holding pages of that set and how many; ``nearest`` answers the class of a page's nearest set.

    Stored as a boolean matrix over a path dictionary (numpy), so that one page is compared
    with every set in O(sets × its paths) array operations.  ``sets`` (paths -> class counts)
    is what the model file carries (``to_document`` / ``from_document``).
    """

    def __init__(self, sets: Mapping[frozenset[str], Mapping[int, int]],
                 skeleton: frozenset[str] | None = None) -> None:
        """``skeleton``: the paths left out (default: those on ``SKELETON_SHARE`` of the pages)."""
        self.sets = {paths: Counter(classes) for paths, classes in sets.items() if classes}
        occurs: Counter = Counter()
        for paths, classes in self.sets.items():
            n = sum(classes.values())
            for p in paths:
                occurs[p] += n
        if skeleton is None:
            skeleton = skeleton_of((paths, sum(classes.values())) for paths, classes in self.sets.items())
        self.skeleton = frozenset(skeleton)
        self.paths = sorted(p for p in occurs if p not in self.skeleton)
        index = {p: i for i, p in enumerate(self.paths)}
        ordered = sorted(self.sets, key=lambda s: sorted(s))  # fixed row order: ties break alike every run
        self._rows = ordered
        self._matrix = np.zeros((len(ordered), len(self.paths)), dtype=bool)
        for r, paths in enumerate(ordered):
            self._matrix[r, [index[p] for p in paths if p in index]] = True
        self._sizes = self._matrix.sum(axis=1)
        self._index = index
        #: the class each row stands for: the one holding most of its pages, then the smaller id
        self._classes = [min(self.sets[s].items(), key=lambda kv: (-kv[1], kv[0]))[0] for s in ordered]
        self._weights = np.array([sum(self.sets[s].values()) for s in ordered])
        self._memo: dict[tuple[frozenset[str], float], int | None] = {}  # pages of a template share their set

    @classmethod
    def of_pages(cls, pages: Iterable[tuple[frozenset[str], int, bool]]) -> "PathReference":
        """From (path set, class id, inside the site's frame) of each reference page: the
        skeleton is read over the pages inside the frame (over all when none is)."""
        sets: dict[frozenset[str], Counter] = {}
        framed: Counter = Counter()
        for paths, cid, inside in pages:
            if paths:
                sets.setdefault(paths, Counter())[cid] += 1
                framed[paths] += inside
        return cls(sets, skeleton_of(framed.items()) if any(framed.values()) else None)

    def nearest(self, page_paths: frozenset[str], least: float = PLACE_SIMILARITY) -> int | None:
        """The class of the reference set most like ``page_paths`` (ties: the set more pages
        share, then the first in path order), or None when none reaches ``least``."""
        key = (page_paths, least)
        if key not in self._memo:
            if len(self._memo) >= MEMO_SETS:
                self._memo.clear()
            self._memo[key] = self._nearest(page_paths, least)
        return self._memo[key]

    def nearest_similarity(self, page_paths: frozenset[str]) -> tuple[int | None, float]:
        """(``nearest``'s class, its similarity) — (None, similarity) when under PLACE_SIMILARITY."""
        if not self._rows or not page_paths:
            return None, 0.0
        best, sim = self._best(page_paths)
        return (self._classes[best] if sim >= PLACE_SIMILARITY else None), sim

    def _nearest(self, page_paths: frozenset[str], least: float) -> int | None:
        if not self._rows or not page_paths:
            return None
        best, sim = self._best(page_paths)
        return self._classes[best] if sim >= least else None

    def _best(self, page_paths: frozenset[str]) -> tuple[int, float]:
        cols = [self._index[p] for p in page_paths if p in self._index]
        size = sum(1 for p in page_paths if p not in self.skeleton)
        shared = self._matrix[:, cols].sum(axis=1) if cols else np.zeros(len(self._rows), dtype=int)
        union = self._sizes + size - shared
        sim = np.where(union > 0, shared / np.maximum(union, 1), 1.0)
        top = np.flatnonzero(sim == sim.max())
        best = int(top[np.argmax(self._weights[top])])  # argmax: the first of equal weights
        return best, float(sim[best])


def skeleton_of(path_sets: Iterable[tuple[frozenset[str], int]]) -> frozenset[str]:
    """The paths on ``SKELETON_SHARE`` of the pages or more, of (path set, pages having it) pairs."""
    occurs: Counter = Counter()
    pages = 0
    for paths, n in path_sets:
        pages += n
        for p in paths:
            occurs[p] += n
    return frozenset(p for p, n in occurs.items() if n >= SKELETON_SHARE * pages)


def similar_groups(path_sets: Sequence[frozenset[str]], pages: Sequence[int] | None = None,
                   least: float = PLACE_SIMILARITY) -> list[list[int]]:
    """The indices of ``path_sets`` (distinct sets, ``pages`` having each; one when None) grouped
    by single linkage: two sets within ``least`` of each other (Jaccard, the paths on
    ``SKELETON_SHARE`` of the pages or more left out, as ``PathReference`` compares) are in one
    group.  Groups in order of their first index, each in index order.  O(sets² × paths) time."""
    pages = [1] * len(path_sets) if pages is None else pages
    skeleton = skeleton_of(zip(path_sets, pages))
    index = {p: i for i, p in enumerate(sorted({p for paths in path_sets for p in paths} - skeleton))}
    matrix = np.zeros((len(path_sets), len(index)), dtype=np.float32)  # BLAS: exact below 2**24 paths
    for r, paths in enumerate(path_sets):
        matrix[r, [index[p] for p in paths if p in index]] = 1
    sizes = matrix.sum(axis=1)
    groups = UnionFind(range(len(path_sets)))
    for start in range(0, len(path_sets), GROUP_ROWS):  # GROUP_ROWS × sets at a time, not sets²
        shared = matrix[start:start + GROUP_ROWS] @ matrix.T
        union = sizes[start:start + GROUP_ROWS, None] + sizes[None, :] - shared
        near = np.where(union > 0, shared / np.maximum(union, 1), 1.0) >= least
        for a, b in zip(*np.nonzero(near)):
            if start + a < b:
                groups.union(int(start + a), int(b))
    return groups.groups()


def to_document(reference: PathReference, bare: PathReference) -> dict:
    """JSON-ready: every path once (sorted); the sets of each reference as indices into them,
    with their class counts (``[class id, pages]``); ``reference``'s skeleton likewise (read over
    the pages inside the frame, which the sets do not tell)."""
    every = sorted({p for ref in (reference, bare) for s in ref.sets for p in s} | reference.skeleton)
    index = {p: i for i, p in enumerate(every)}

    def sets(ref: PathReference) -> list[dict]:
        return sorted(({"paths": sorted(index[p] for p in s),
                        "classes": [[int(c), int(n)] for c, n in sorted(ref.sets[s].items())]} for s in ref.sets),
                      key=lambda e: e["paths"])
    return {"paths": every, "sets": sets(reference), "bare": sets(bare),
            "skeleton": sorted(index[p] for p in reference.skeleton)}


def from_document(doc: Mapping) -> tuple[PathReference, PathReference]:
    """(reference, bare) of a ``to_document`` object (``unplaced``: a model written before the
    regroup placed chrome-only pages by kind, which kept only those placed nowhere; no
    ``skeleton``: one written before it was read inside the frame, read over all its pages)."""
    every = doc["paths"]

    def ref(sets: list, skeleton: frozenset[str] | None = None) -> PathReference:
        return PathReference({frozenset(every[i] for i in e["paths"]): {int(c): int(n) for c, n in e["classes"]}
                              for e in sets}, skeleton)
    skeleton = frozenset(every[i] for i in doc["skeleton"]) if "skeleton" in doc else None
    return ref(doc["sets"], skeleton), ref(doc["bare"] if "bare" in doc else doc["unplaced"])
