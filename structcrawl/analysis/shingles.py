"""Vertex page clustering: shingle signatures and masked shingle vectors, vectorised with numpy.

Gulhane et al., *Web-scale information extraction with Vertex* (ICDE 2011),
§III-A "Page Clustering" and Algorithm 1 (seed ``003``):

1. **Shingles.**  The paper slides a window of ``l = 10`` tags over the page's
   tag sequence.  A crawl store keeps each page's set of tag paths (root-to-node
   tag sequences, ``sc_tagsets``), not the sequence, so the shingles are the
   tag paths themselves (``SHINGLE_PATHS`` = 1: each path is a run of tags
   from the root).  Sorted, those paths are a pre-order walk of the page's tag
   tree with repeated siblings listed once; ``--shingle N`` takes windows of N
   consecutive sorted paths instead (:func:`shingles`), the nearer analogue of
   the paper's window.  Measured over four hash seeds (docs/benchmarks.md,
   "Shingles vs UXClust"), windows of 3 suit the demo shop (mean F* 0.85 vs
   0.63: one path per shingle lets the skeleton all its templates share
   decide) and geos (0.74 vs 0.63) but hurt the four other documentation
   corpora (0.40–0.67 vs 0.68–0.78), so the default is the plain tag path.
2. **Signature**: 8 values, ``v[i]`` from hash function ``h_i`` minimised over
   the shingles.  The paper's ``h_i`` map a shingle to one byte and take the
   minimum byte; on a page of hundreds of shingles that minimum is 0 for most
   pages (``1 - (255/256)^200 ≈ 0.54`` per value at 200 shingles), so every
   large page would agree with every other.  Here ``h_i`` is a 64-bit hash
   (eight independent words of one BLAKE2b digest) and ``v[i]`` the low byte
   of the minimising value (b-bit minwise hashing, Li & König, WWW 2010): still
   one byte per value, and ``v[i] = v'[i]`` with probability ``J + (1 - J)/256``
   — the paper's property up to the 1/256 of chance agreement.
3. **Clustering** (Algorithm 1): pages whose signatures share at least
   ``MATCH`` = 6 of the 8 values, through the ``C(8,0) + C(8,1) + C(8,2) = 37``
   masked vectors covering each signature.  First pass: each masked vector's
   count is the number of pages it covers.  Second pass: for each distinct
   signature in increasing order of count, the covering masked vector of
   largest count is kept and the others lose the signature's pages.  Masked
   vectors whose count is under the cut-off are deleted.  Third pass: each page
   goes to the covering masked vector of largest count that is left, or is
   unclustered.  Ties go to the more specific vector (fewer wild cards, then
   wild cards at lower positions), and signatures of equal count are taken
   by value: the result does not depend on input order.

The work is per *distinct* tag-path set (the store shares one row among the
pages of a template) and per distinct signature; pages only cost an array
lookup.  The first and third passes are numpy passes over the 37 masks; the
second is sequential by nature (each choice changes the counts the next one
reads) and loops over distinct signatures only.

No SQL, no Scrapy: :func:`signatures` and :func:`cluster_signatures` work
from tag-path sets and counts (:mod:`structcrawl.store.cluster` reads them
from a store).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

#: Sorted tag paths per shingle (see the module docstring).
SHINGLE_PATHS = 1
#: Values per signature (the paper's 8-byte shingle vector).
SIGNATURE_VALUES = 8
#: Two pages are alike when their signatures agree on at least this many values (§III-A: 6 of 8).
MATCH = 6


def _masks() -> np.ndarray:
    """The 37 masks (bits kept), 8/8 first, then 7/8 and 6/8, each in index order."""
    out = []
    for wild in range(SIGNATURE_VALUES - MATCH + 1):
        for hidden in combinations(range(SIGNATURE_VALUES), wild):
            out.append(sum(0xFF << (8 * i) for i in range(SIGNATURE_VALUES) if i not in hidden))
    return np.array(out, dtype=np.uint64)


MASKS = _masks()


def shingles(tag_paths: Sequence[str], length: int = SHINGLE_PATHS) -> list[str]:
    """The shingles of a page: windows of ``length`` consecutive tag paths in sorted order (all of them as one
    shingle when there are fewer)."""
    paths = sorted(tag_paths)
    if len(paths) <= length:
        return ["\n".join(paths)] if paths else []
    return ["\n".join(paths[i:i + length]) for i in range(len(paths) - length + 1)]


def path_hashes(items: Sequence[str], seed: int = 0) -> np.ndarray:
    """``(len(items), 8)`` uint64: the eight hash values of each shingle (one keyed BLAKE2b digest each)."""
    key = seed.to_bytes(8, "little", signed=True)
    raw = b"".join(hashlib.blake2b(p.encode("utf-8"), digest_size=8 * SIGNATURE_VALUES, key=key).digest()
                   for p in items)
    return np.frombuffer(raw, dtype="<u8").reshape(len(items), SIGNATURE_VALUES)


def signatures(sets: Sequence[Sequence[int]], hashes: np.ndarray) -> np.ndarray:
    """One uint64 per set (8 one-byte values, value ``i`` in byte ``i``): the signature of each set of shingle
    indices into ``hashes`` (:func:`path_hashes`).  An empty set (a page without tags) gets 0."""
    sizes = np.fromiter((len(s) for s in sets), dtype=np.int64, count=len(sets))
    out = np.zeros(len(sets), dtype=np.uint64)
    nonempty = np.flatnonzero(sizes)
    if not len(nonempty):
        return out
    flat = np.fromiter((i for k in nonempty for i in sets[k]), dtype=np.int64, count=int(sizes.sum()))
    starts = np.concatenate(([0], np.cumsum(sizes[nonempty])[:-1]))
    minima = np.minimum.reduceat(hashes[flat], starts, axis=0)  # (sets, 8): the minimum of each h_i
    low = minima & np.uint64(0xFF)  # the low byte: uniform whatever the size of the set (see the module)
    shifts = np.arange(SIGNATURE_VALUES, dtype=np.uint64) * np.uint64(8)
    out[nonempty] = np.bitwise_or.reduce(low << shifts, axis=1)
    return out


def masked_text(value: int, mask: int) -> str:
    """A masked vector as the paper writes it: ``1f.03.*.a0.…`` (values in hex, ``*`` a wild card)."""
    return ".".join(f"{(value >> (8 * i)) & 0xFF:02x}" if (mask >> (8 * i)) & 0xFF else "*"
                    for i in range(SIGNATURE_VALUES))


@dataclass(frozen=True)
class ShingleCluster:
    id: int
    size: int  #: pages
    signature: str  #: its masked shingle vector (:func:`masked_text`)
    importance: int  #: the masked vector's count after the second pass (§III-A)
    signatures: tuple[int, ...]  #: indices of the distinct signatures in it


@dataclass(frozen=True)
class ShingleClustering:
    clusters: tuple[ShingleCluster, ...]  #: largest first; ids 1, 2, … in that order
    assignment: np.ndarray  #: cluster id per distinct signature, 0: unclustered
    unclustered: int  #: pages
    candidates: int  #: distinct masked vectors of the first pass
    kept: int  #: masked vectors left after the cut-off
    cutoff: int

    @property
    def pages(self) -> int:
        return sum(c.size for c in self.clusters) + self.unclustered


def cluster_signatures(values: np.ndarray, counts: np.ndarray, cutoff: int) -> ShingleClustering:
    """Algorithm 1 of Vertex over distinct signatures ``values`` (uint64) carried by ``counts`` pages each.

    ``cutoff``: masked vectors covering fewer pages after the second pass are
    deleted (the paper's threshold of 20 pages on samples of 2,000–20,000).
    """
    if cutoff < 1:
        raise ValueError(f"cutoff must be >= 1, got {cutoff}")
    values = np.asarray(values, dtype=np.uint64)
    counts = np.asarray(counts, dtype=np.int64)
    n = len(values)
    if len(np.unique(values)) != n:
        raise ValueError("signatures must be distinct (add up their pages' counts)")
    # first pass: every masked vector covering a signature, numbered; its count = pages covered
    masked = values[:, None] & MASKS[None, :]
    candidate = np.empty((n, len(MASKS)), dtype=np.int64)
    base = 0
    keys: list[tuple[int, np.ndarray]] = []  # per mask: its distinct masked values (candidate ids in order)
    for m in range(len(MASKS)):
        distinct, inverse = np.unique(masked[:, m], return_inverse=True)
        candidate[:, m] = base + inverse
        keys.append((m, distinct))
        base += len(distinct)
    total = np.bincount(candidate.ravel(), weights=np.repeat(counts, len(MASKS)), minlength=base).astype(np.int64)
    # second pass: distinct signatures by increasing count (value breaks ties), sequential
    live = total.tolist()
    rows = candidate.tolist()
    for k in np.lexsort((values, counts)).tolist():
        row = rows[k]
        best = max(row, key=live.__getitem__)  # first of the largest: the most specific covering vector
        w = int(counts[k])
        for c in row:
            if c != best:
                live[c] -= w
    final = np.array(live, dtype=np.int64)
    kept = final >= cutoff
    # third pass: the covering vector of largest count left, none if all were deleted
    score = np.where(kept, final, -1)[candidate]
    col = np.argmax(score, axis=1)
    chosen = candidate[np.arange(n), col]
    chosen[score[np.arange(n), col] < 0] = -1
    sizes: dict[int, int] = {}
    for c, w in zip(chosen.tolist(), counts.tolist()):
        if c >= 0:
            sizes[c] = sizes.get(c, 0) + w
    order = sorted(sizes, key=lambda c: (-sizes[c], c))
    ids = {c: i for i, c in enumerate(order, 1)}
    assignment = np.array([ids.get(c, 0) for c in chosen.tolist()], dtype=np.int64)
    starts = np.cumsum([0] + [len(d) for _, d in keys])
    clusters = []
    for c in order:
        m = int(np.searchsorted(starts, c, side="right")) - 1
        value = int(keys[m][1][c - starts[m]])
        clusters.append(ShingleCluster(ids[c], sizes[c], masked_text(value, int(MASKS[m])), int(final[c]),
                                       tuple(np.flatnonzero(assignment == ids[c]).tolist())))
    unclustered = int(counts[assignment == 0].sum())
    return ShingleClustering(tuple(clusters), assignment, unclustered, base, int(kept.sum()), cutoff)


def cluster_sets(tag_path_sets: Sequence[Sequence[str]], counts: Sequence[int], cutoff: int, seed: int = 0,
                 length: int = SHINGLE_PATHS) -> tuple[ShingleClustering, np.ndarray]:
    """Vertex over distinct tag-path sets carried by ``counts`` pages each: the clustering (over distinct
    signatures) and each set's cluster id (0: unclustered)."""
    if length < 1:
        raise ValueError(f"shingle length must be >= 1, got {length}")
    pages = [shingles(s, length) for s in tag_path_sets]
    distinct = sorted({x for page in pages for x in page})
    index = {x: i for i, x in enumerate(distinct)}
    sigs = signatures([[index[x] for x in page] for page in pages], path_hashes(distinct, seed))
    values, inverse = np.unique(sigs, return_inverse=True)
    weights = np.bincount(inverse, weights=np.asarray(counts, dtype=np.int64), minlength=len(values))
    result = cluster_signatures(values, weights.astype(np.int64), cutoff)
    return result, result.assignment[inverse]
