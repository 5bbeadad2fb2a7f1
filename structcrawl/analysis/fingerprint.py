"""Template fingerprints and their union-find merging (UXClust refinement).

Implements the final refinement stage of Grigalis & Čenys, *Using XPaths of
inbound links to cluster template-generated web pages* (UXClust, §3.3, with the
parameter study of §4.5):

* take a few sample pages of each unrefined cluster (the paper uses 5; §4.5
  finds 3 already good) — :func:`sample`;
* a cluster's *fingerprint* is the set of tag paths (root-to-element paths, no
  text: the "bag of paths" of [12]) occurring in at least a fraction 0.3 of the
  sampled pages (§3.3; §4.5 finds 0.2–0.3 best) — :func:`fingerprint`;
* clusters whose fingerprints have a similarity of at least 0.8 are merged,
  "repeated until no new clusters can be formed … basically the union-find
  algorithm" (§3.3; 0.8 is where precision and recall cross in §4.5, Fig. 7) —
  :class:`UnionFind`, :func:`merge_groups`, and :func:`refine_groups` for the
  fixed point with fingerprints recomputed after each merge round.

The similarity is Jaccard's coefficient of the two path sets, optionally
weighted (:func:`jaccard`, :func:`weighted_jaccard`).

Everything here is pure Python and deterministic: no salted ``hash()``, no
dependence on the order of the inputs.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import TypeVar

from structcrawl.core.model import FINGERPRINT_OCCURRENCE, FINGERPRINT_SIMILARITY
from structcrawl.core.unionfind import UnionFind, jaccard

__all__ = [
    "fingerprint",
    "sample",
    "sample_rank",
    "weighted_jaccard",
    "merge_groups",
    "refine_groups",
]

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)

#: Default parameters of UXClust §3.3.
DEFAULT_SAMPLE_SIZE = 5
DEFAULT_OCCURRENCE = FINGERPRINT_OCCURRENCE
DEFAULT_THRESHOLD = FINGERPRINT_SIMILARITY

# Slack used only for *pruning* candidate pairs, so that floating-point
# rounding can never prune a pair whose exact similarity reaches the threshold.
_EPS = 1e-9


# --------------------------------------------------------------------------- #
# Fingerprints and samples
# --------------------------------------------------------------------------- #
def fingerprint(
    tag_path_sets: Iterable[frozenset[str]], occurrence: float = DEFAULT_OCCURRENCE
) -> frozenset[str]:
    """Fingerprint of a cluster from the tag-path sets of its sample pages.

    The fingerprint is the set of tag paths present in at least a fraction
    ``occurrence`` of the given pages (UXClust §3.3: "paths occurring only above
    threshold value of 0.3 are taken to be included into a fingerprint").  The
    comparison is inclusive, ``count / n >= occurrence``, so with 10 pages and
    the default 0.3 a path found in exactly 3 pages is kept.

    Args:
        tag_path_sets: one set of tag paths per sample page (each path counted
            once per page).
        occurrence: the minimum fraction of pages, in ``[0, 1]``.  0 keeps the
            union of all paths, 1 their intersection.

    Returns:
        The fingerprint; empty when there are no pages.
    """
    if not 0.0 <= occurrence <= 1.0:
        raise ValueError(f"occurrence must be in [0, 1], got {occurrence!r}")
    counts: Counter[str] = Counter()
    n = 0
    for paths in tag_path_sets:
        n += 1
        counts.update(set(paths))
    if n == 0:
        return frozenset()
    # count / n is correctly rounded, so e.g. 3 / 10 == 0.3 exactly as literals go.
    return frozenset(p for p, c in counts.items() if c / n >= occurrence)


def sample_rank(seed: int, key: str | bytes) -> bytes:
    """The rank :func:`sample` gives an item of key ``key``: the lowest ranks are sampled."""
    data = key.encode("utf-8", "surrogatepass") if isinstance(key, str) else bytes(key)
    return hashlib.blake2b(
        data, digest_size=16, key=str(int(seed)).encode("ascii"), person=b"sc-sample"
    ).digest()


def sample(
    items: Iterable[T],
    s: int = DEFAULT_SAMPLE_SIZE,
    seed: int = 0,
    key: Callable[[T], str | bytes] = str,
) -> list[T]:
    """A deterministic pseudo-random sample of up to ``s`` items.

    Each item is ranked by a keyed BLAKE2b hash of ``(seed, key(item))`` and the
    ``s`` lowest ranks are returned, in rank order.  The result therefore

    * depends only on the *set* of keys and the seed, not on the input order;
    * is the same in every process (Python's ``hash()`` is salted, BLAKE2b is not);
    * changes with the seed;
    * is "monotone": adding items can only displace sampled ones by better-ranked
      new ones, so a cluster's sample is stable as the cluster grows.

    UXClust samples at random (UXClust §3.3, 5 pages per cluster) and notes in
    §4.5 that results "may differ a few percent on each new run" because of it;
    a seeded, order-free sample makes runs reproducible.

    Args:
        items: the population, e.g. the URLs of a cluster.
        s: the sample size (all items if there are fewer).
        seed: the sampling seed.
        key: a *stable* string (or bytes) identity of an item; the default
            ``str`` suits URLs and ints.  Do not use ``str`` of a set: set
            iteration order is salted.  Items with equal keys are interchangeable
            and keep their input order.

    Returns:
        Up to ``s`` items.
    """
    if s < 0:
        raise ValueError(f"sample size must be >= 0, got {s!r}")
    ranked = sorted(((sample_rank(seed, key(it)), i, it) for i, it in enumerate(items)),
                    key=lambda t: (t[0], t[1]))
    return [it for _, _, it in ranked[:s]]


# --------------------------------------------------------------------------- #
# Similarities
# --------------------------------------------------------------------------- #
def weighted_jaccard(
    a: frozenset[str] | set[str],
    b: frozenset[str] | set[str],
    weight: Callable[[str], float],
) -> float:
    """Weighted Jaccard ``Σ_{x∈a∩b} w(x) / Σ_{x∈a∪b} w(x)`` for weights ``w >= 0``.

    Lets rare, template-specific paths count for more than the boiler-plate
    shared by every page of a site.  When the union weighs nothing the result is
    1.0 for equal sets and 0.0 otherwise.  Sums are exactly rounded
    (``math.fsum``), so the value does not depend on set iteration order.
    """
    wi = math.fsum(weight(x) for x in a & b)
    wu = math.fsum(weight(x) for x in a | b)
    if wu <= 0.0:
        return 1.0 if a == b else 0.0
    return wi / wu


# --------------------------------------------------------------------------- #
# Merging by fingerprint similarity
# --------------------------------------------------------------------------- #
def _canonical_keys(keys: Iterable[K]) -> list[K]:
    keys = list(keys)
    try:
        return sorted(keys)  # type: ignore[type-var]
    except TypeError:
        return sorted(keys, key=lambda k: (type(k).__name__, repr(k)))


def _prefix_len(ids: list[int], w: list[float], total: float, bound: float) -> int:
    """Length of the shortest prefix of ``ids`` leaving a suffix weighing < ``bound``."""
    suffix = total
    for i, p in enumerate(ids):
        if suffix < bound:
            return i
        suffix -= w[p]
    return len(ids)


def merge_groups(
    fingerprints: Mapping[K, frozenset[str]],
    threshold: float = DEFAULT_THRESHOLD,
    weight: Callable[[str], float] | None = None,
) -> list[list[K]]:
    """Merge groups whose fingerprints are similar (UXClust §3.3).

    Every pair of groups whose fingerprint similarity is ``>= threshold`` is
    united with a :class:`UnionFind`, so merging is transitive (a~b and b~c put
    a, b and c together even when a and c are far apart: single linkage).  The
    fingerprints are fixed inputs, so one pass over all similar pairs already
    reaches the paper's fixed point "repeated until no new clusters can be
    formed": the result is the connected components of the similarity graph,
    which do not depend on the order of the mapping.  (To recompute the merged
    groups' fingerprints from their pooled pages and repeat, use
    :func:`refine_groups`.)

    The similar pairs are found without comparing all G² pairs, by an exact
    all-pairs similarity join (the *size* and *prefix* filters of Chaudhuri et
    al. 2006 / Bayardo et al. 2007): with paths ordered globally from rare to
    frequent, two sets with similarity ``>= t`` must share a path among the
    first paths of each set that carry a ``1 - t`` share of its weight (for
    the lighter set of a pair, ``1 - 2t/(1+t)`` suffices, as in PPJoin), and
    their weights must be within a ratio ``t``.  Only pairs sharing such a
    *prefix* path are verified, so the cost grows with the number of truly
    similar pairs, not with G²: 10,000 fingerprints of ~250 paths take about
    two seconds.  Identical fingerprints (including empty ones) are merged
    directly.

    Args:
        fingerprints: group id → fingerprint.  Ids must be hashable; they are
            returned in sorted order (by ``repr`` if not mutually comparable).
        threshold: the minimum similarity, in ``(0, 1]``; 0.8 in the paper.
        weight: optional non-negative path weight for :func:`weighted_jaccard`;
            plain :func:`jaccard` when None.

    Returns:
        The groups, each a sorted list of ids, ordered by their first id.
    """
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"threshold must be in (0, 1], got {threshold!r}")
    keys = _canonical_keys(fingerprints)
    uf: UnionFind[K] = UnionFind(keys)

    # 1. identical fingerprints: similarity 1 whatever the weights.
    by_set: dict[frozenset[str], K] = {}
    for k in keys:
        fp = frozenset(fingerprints[k])
        first = by_set.setdefault(fp, k)
        if first != k:
            uf.union(first, k)

    # 2. paths as ints in the global order of the join: rare paths first.
    df: Counter[str] = Counter()
    for fp in by_set:
        df.update(fp)
    paths = sorted(df, key=lambda p: (df[p], p))
    pid = {p: i for i, p in enumerate(paths)}
    if weight is None:
        w = [1.0] * len(paths)
    else:
        w = [float(weight(p)) for p in paths]
        for p, wp in zip(paths, w):
            if not wp >= 0.0:
                raise ValueError(f"weight({p!r}) must be >= 0, got {wp!r}")

    # 3. prefix-filtered similarity join.
    t = threshold - _EPS
    t_index = 2 * t / (1 + t)
    rank = {k: i for i, k in enumerate(keys)}
    items = []
    for fp, k in by_set.items():
        ids = sorted(map(pid.__getitem__, fp))
        tot = float(len(ids)) if weight is None else math.fsum(map(w.__getitem__, ids))
        items.append((tot, rank[k], ids, fp, k))
    items.sort(key=lambda x: (x[0], x[1]))
    sets: dict[K, frozenset[str]] = {}
    total: dict[K, float] = {}
    index: dict[int, list[K]] = defaultdict(list)
    # Visit by increasing total weight: each probe only meets sets no heavier
    # than itself, which the size filter w(lighter) >= t * w(heavier) prunes.
    for tot, _, ids, fp, k in items:
        sets[k], total[k] = fp, tot
        # Probe prefix: shortest run of paths (in global order) whose remaining
        # suffix weighs < t * w(fp), a lower bound on the overlap with any set
        # similar enough.  Index prefix: suffix < 2t/(1+t) * w(fp), the bound
        # on the overlap with any *heavier* set — all later probes are heavier.
        probe_len = _prefix_len(ids, w, tot, t * tot)
        index_len = _prefix_len(ids, w, tot, t_index * tot)
        candidates: set[K] = set()
        for p in ids[:probe_len]:
            if p in index:
                candidates.update(index[p])
        root = uf.find(k)
        for other in candidates:
            if total[other] < t * tot or uf.find(other) == root:
                continue
            if weight is None:
                sim = jaccard(fp, sets[other])
            else:
                # exactly rounded sums: same value as weighted_jaccard()
                inter = fp & sets[other]
                wu = math.fsum(w[pid[p]] for p in fp | sets[other])
                sim = math.fsum(w[pid[p]] for p in inter) / wu if wu > 0.0 else 0.0
            if sim >= threshold:
                uf.union(k, other)
                root = uf.find(k)
        for p in ids[:index_len]:
            index[p].append(k)

    groups = [sorted(g, key=rank.__getitem__) for g in uf.groups()]
    groups.sort(key=lambda g: rank[g[0]])
    return groups


def refine_groups(
    pages: Mapping[K, Sequence[frozenset[str]]],
    s: int = DEFAULT_SAMPLE_SIZE,
    occurrence: float = DEFAULT_OCCURRENCE,
    threshold: float = DEFAULT_THRESHOLD,
    weight: Callable[[str], float] | None = None,
    seed: int = 0,
) -> list[list[K]]:
    """UXClust refinement to a fixed point, fingerprints recomputed after merging.

    Round 1 fingerprints every group from a sample of up to ``s`` of its pages
    and merges with :func:`merge_groups`.  Each later round re-fingerprints every
    merged group from a fresh sample of its pooled pages and merges again,
    until a round merges nothing (UXClust §3.3: "the process is repeated until
    no new clusters can be formed").  The number of groups strictly decreases
    in every round but the last, so this terminates after at most G rounds
    (in practice two or three).  Sampling is by :func:`sample` keyed on a
    canonical form of each page's path set, so the result does not depend on
    the order of groups or pages.

    Args:
        pages: group id → tag-path sets of (some of) its pages.
        s: pages sampled per group (5 in the paper).
        occurrence: fingerprint occurrence threshold (0.3).
        threshold: merge similarity threshold (0.8).
        weight: optional path weight (see :func:`merge_groups`).
        seed: sampling seed.

    Returns:
        The final groups of ids, as in :func:`merge_groups`.
    """
    keys = _canonical_keys(pages)
    rank = {k: i for i, k in enumerate(keys)}

    key_cache: dict[frozenset[str], str] = {}

    def page_key(paths: frozenset[str]) -> str:
        k = key_cache.get(paths)
        if k is None:
            k = key_cache[paths] = "\n".join(sorted(paths))
        return k

    def fp_of(members: list[K]) -> frozenset[str]:
        pooled = [frozenset(p) for m in members for p in pages[m]]
        return fingerprint(sample(pooled, s, seed=seed, key=page_key), occurrence)

    groups: list[list[K]] = [[k] for k in keys]
    fps: dict[K, frozenset[str]] = {k: fp_of([k]) for k in keys}
    while True:
        merged = merge_groups(fps, threshold=threshold, weight=weight)
        if len(merged) == len(groups):
            return groups
        members_of = {g[0]: g for g in groups}  # representative -> members
        new_groups: list[list[K]] = []
        new_fps: dict[K, frozenset[str]] = {}
        for reps in merged:
            members = sorted((m for r in reps for m in members_of[r]), key=rank.__getitem__)
            new_groups.append(members)
            new_fps[members[0]] = fps[reps[0]] if len(reps) == 1 else fp_of(members)
        groups, fps = new_groups, new_fps
