"""Min-hash shingle signatures with k/8 masking (Vertex page clustering).

Implements §III-A of Gulhane et al., *Web-scale information extraction with
Vertex* (ICDE 2011, seed 003), and the signature half of its §IV-A rule
matching:

* a page is a set ``S`` of *shingles*; the paper's shingles are windows of
  ``l = 10`` consecutive tags (:func:`tag_shingles`), ours by default are the
  page's root-to-element tag paths (each already a run of tags from the root);
* its *shingle vector* has ``k = 8`` entries, ``v[i] = min_{sh∈S} h_i(sh)`` for
  independent hash functions ``h_1..h_8``, so ``P(v[i] = v'[i]) = J(S, S')``
  (:class:`ShingleSignature`);
* two pages are structurally similar when their vectors agree on at least
  6 of the 8 entries; a *k/8 masked* vector keeps k entries and puts the
  wildcard ``*`` (here ``None``) in the others, and *covers* a vector that
  agrees with all its kept entries;
* Algorithm 1 (:func:`cluster_signatures`) groups pages by counting the
  6/8, 7/8 and 8/8 masked vectors covering each page and keeping the best
  supported ones (pruning threshold 20 in the paper);
* every cluster keeps its (masked) signature and an importance score; a new
  page is matched to a cluster through a hash table of masked vectors in O(1)
  expected time, ties going to the most important cluster (§IV-A) —
  :class:`ShingleIndex`.

Deviation from the paper, on purpose: the paper packs each minimum into one
byte (an 8-byte vector).  The minimum of a byte-valued hash over n shingles is
0 with probability ``1 - (255/256)**n`` — 0.86 for n = 500 — so unrelated pages
agree on most entries by accident (note the many zeros in the paper's
Example 3.1).  We keep ``bits = 32`` bits per entry by default (JSON-safe ints);
``bits = 8`` reproduces the paper's vectors.

Hashes are keyed BLAKE2b digests, so signatures are identical in every process
and platform (Python's ``hash()`` is salted).
"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Generic, TypeVar

import numpy as np

__all__ = [
    "ShingleSignature",
    "ShingleIndex",
    "tag_shingles",
    "cluster_signatures",
    "SignatureCluster",
    "masked_variants",
    "agreement",
    "covers",
    "mask",
]

K = TypeVar("K", bound=Hashable)

#: Paper parameters (seed 003 §III-A).
NUM_HASHES = 8  # entries of a shingle vector
MIN_AGREE = 6  # "match on at least 6 out of the 8 byte values"
SHINGLE_LENGTH = 10  # l, tags per shingle
PRUNE_COUNT = 20  # Algorithm 1: masked vectors with counts below this are deleted
DEFAULT_BITS = 32

#: A (possibly masked) signature vector: ints, ``None`` for the wildcard ``*``.
Vector = tuple[int | None, ...]


# --------------------------------------------------------------------------- #
# Shingles and signatures
# --------------------------------------------------------------------------- #
def tag_shingles(tags: Sequence[str], length: int = SHINGLE_LENGTH) -> frozenset[str]:
    """The paper's shingles: all windows of ``length`` consecutive tags.

    Seed 003 §III-A slides a window of ``l = 10`` tags over the page's tag
    sequence (document order of start tags).  A page with fewer tags yields one
    shingle of all its tags; an empty page none.
    """
    if length < 1:
        raise ValueError(f"shingle length must be >= 1, got {length!r}")
    tags = list(tags)
    if not tags:
        return frozenset()
    if len(tags) <= length:
        return frozenset([" ".join(tags)])
    return frozenset(" ".join(tags[i : i + length]) for i in range(len(tags) - length + 1))


def _hash_matrix(strings: Iterable[str], k: int, seed: int) -> np.ndarray:
    """(n, k) uint64 matrix of k independent keyed hashes of each string."""
    blocks = (k + 7) // 8  # one 64-byte BLAKE2b digest gives eight 64-bit hashes
    keys = [f"structcrawl-shingle:{seed}:{b}".encode() for b in range(blocks)]
    buf = bytearray()
    n = 0
    for s in strings:
        data = s.encode("utf-8", "surrogatepass")
        for key in keys:
            buf += hashlib.blake2b(data, digest_size=64, key=key).digest()
        n += 1
    if n == 0:
        return np.empty((0, k), dtype=np.uint64)
    return np.frombuffer(bytes(buf), dtype="<u8").reshape(n, blocks * 8)[:, :k]


@dataclass(frozen=True, slots=True)
class ShingleSignature:
    """A page's min-hash shingle vector, ``v[i] = min_{sh ∈ S} h_i(sh)`` (seed 003 §III-A).

    Build one with :meth:`of`.  ``values`` has ``k`` entries of ``bits`` bits;
    two signatures are only comparable when ``k``, ``bits`` and ``seed`` agree.
    The empty set gets the all-ones vector (the largest value everywhere).

    Example:
        >>> a = ShingleSignature.of({"html/body", "html/body/div", "html/body/div/a"})
        >>> b = ShingleSignature.of(["html/body/div/a", "html/body/div", "html/body"])
        >>> a == b, a.agreement(b), a.matches(b)
        (True, 8, True)
    """

    values: tuple[int, ...]
    bits: int = DEFAULT_BITS
    seed: int = 0

    @classmethod
    def of(
        cls,
        shingles: Iterable[str],
        k: int = NUM_HASHES,
        bits: int = DEFAULT_BITS,
        seed: int = 0,
    ) -> ShingleSignature:
        """Signature of a set of shingles (e.g. a page's tag paths).

        Args:
            shingles: the page's shingles; duplicates and order do not matter.
            k: number of hash functions (8 in the paper).
            bits: bits kept per entry, 1–64 (the paper uses 8; see module doc).
            seed: selects the hash family.
        """
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k!r}")
        if not 1 <= bits <= 64:
            raise ValueError(f"bits must be in 1..64, got {bits!r}")
        m = _hash_matrix(set(shingles), k, seed)
        if m.shape[0] == 0:
            return cls(tuple([(1 << bits) - 1] * k), bits, seed)
        mins = (m >> np.uint64(64 - bits)).min(axis=0)
        return cls(tuple(int(x) for x in mins), bits, seed)

    @property
    def k(self) -> int:
        """Number of entries."""
        return len(self.values)

    def agreement(self, other: ShingleSignature | Vector) -> int:
        """Number of entries equal in both (wildcards never agree)."""
        return agreement(self.values, _vec(other))

    def matches(self, other: ShingleSignature | Vector, min_agree: int = MIN_AGREE) -> bool:
        """True if at least ``min_agree`` entries agree (6 of 8 in the paper)."""
        return self.agreement(other) >= min_agree

    def jaccard(self, other: ShingleSignature) -> float:
        """Estimate of the Jaccard similarity of the two shingle sets."""
        self._check(other)
        return self.agreement(other) / self.k

    def masked(self, positions: Iterable[int]) -> Vector:
        """This vector with wildcards at ``positions``."""
        return mask(self.values, positions)

    def masked_variants(self, min_agree: int = MIN_AGREE) -> Iterator[Vector]:
        """All masked vectors covering this one with at least ``min_agree`` kept entries."""
        return masked_variants(self.values, min_agree)

    def to_list(self) -> list[int]:
        """The entries, for JSON."""
        return list(self.values)

    def _check(self, other: ShingleSignature) -> None:
        if (self.k, self.bits, self.seed) != (other.k, other.bits, other.seed):
            raise ValueError("signatures with different k, bits or seed are not comparable")


def _vec(x: ShingleSignature | Sequence[int | None]) -> Vector:
    return x.values if isinstance(x, ShingleSignature) else tuple(x)


def mask(values: Sequence[int | None], positions: Iterable[int]) -> Vector:
    """``values`` with the wildcard ``None`` at ``positions``."""
    out = list(values)
    for i in positions:
        out[i] = None
    return tuple(out)


def agreement(a: Sequence[int | None], b: Sequence[int | None]) -> int:
    """Number of positions where both vectors hold the same concrete value."""
    if len(a) != len(b):
        raise ValueError("vectors of different lengths")
    return sum(1 for x, y in zip(a, b) if x is not None and x == y)


def covers(masked: Sequence[int | None], v: Sequence[int | None]) -> bool:
    """Seed 003: ``masked`` covers ``v`` if every entry is a wildcard or equal."""
    if len(masked) != len(v):
        raise ValueError("vectors of different lengths")
    return all(m is None or m == x for m, x in zip(masked, v))


def masked_variants(values: Sequence[int | None], min_agree: int = MIN_AGREE) -> Iterator[Vector]:
    """The ``Σ_{i=0}^{k-min_agree} C(k, i)`` masked vectors covering ``values``.

    For k = 8 and 6/8 masking: 1 + 8 + 28 = 37 vectors (0, 1 or 2 wildcards),
    as in Algorithm 1's first pass.  Positions already wildcards in ``values``
    count towards the masked ones.  Order: fewer wildcards first, then
    lexicographic positions.
    """
    values = tuple(values)
    k = len(values)
    fixed = [i for i, v in enumerate(values) if v is None]
    free = [i for i, v in enumerate(values) if v is not None]
    for extra in range(0, k - min_agree - len(fixed) + 1):
        for pos in combinations(free, extra):
            yield mask(values, pos)


def _key_masks(k: int, min_agree: int) -> list[tuple[int, ...]]:
    return list(combinations(range(k), k - min_agree))


# --------------------------------------------------------------------------- #
# O(1) lookup of a page's cluster
# --------------------------------------------------------------------------- #
class ShingleIndex(Generic[K]):
    """Hash table from masked shingle vectors to clusters (seed 003 §III-A, §IV-A).

    Each cluster is added with its signature — a full shingle vector (e.g. the
    signature of the cluster's fingerprint) or a masked one from
    :func:`cluster_signatures` — and an importance score.  A page *matches* a
    cluster when the two vectors agree on at least ``min_agree`` concrete
    entries (wildcards never count as agreement).  For a full cluster vector
    that is the paper's "match on at least 6 out of the 8 values"; for a 6/8
    masked vector it is the paper's "covers".

    Both sides are keyed by every way of masking exactly ``k - min_agree``
    positions (C(8, 2) = 28 keys), the cluster's own wildcards included, so a
    lookup is 28 dictionary probes whatever the number of clusters: O(1)
    expected time.  Among matching clusters :meth:`lookup` returns the one with
    the most agreeing entries, then the highest importance (§IV-A: "the
    cluster importance score is used to select the best rule"), then the
    earliest added.

    Example:
        >>> idx = ShingleIndex()
        >>> idx.add("product", (1, 2, 3, 4, 5, 6, 7, 8))
        >>> idx.lookup((1, 2, 3, 4, 5, 6, 0, 0)), idx.lookup((1, 2, 3, 4, 5, 0, 0, 0))
        ('product', None)
    """

    def __init__(self, k: int = NUM_HASHES, min_agree: int = MIN_AGREE) -> None:
        if not 1 <= min_agree <= k:
            raise ValueError(f"need 1 <= min_agree <= k, got min_agree={min_agree!r}, k={k!r}")
        self.k = k
        self.min_agree = min_agree
        self._masks = _key_masks(k, min_agree)
        self._table: dict[Vector, list[K]] = {}
        self._clusters: dict[K, tuple[Vector, float, int]] = {}  # signature, importance, rank
        self._added = 0

    def add(
        self, key: K, signature: ShingleSignature | Sequence[int | None], importance: float = 1.0
    ) -> None:
        """Index cluster ``key`` (replacing a previous signature of the same key)."""
        vec = _vec(signature)
        if len(vec) != self.k:
            raise ValueError(f"signature has {len(vec)} entries, index expects {self.k}")
        wild = {i for i, v in enumerate(vec) if v is None}
        if self.k - len(wild) < self.min_agree:
            raise ValueError(
                f"signature keeps {self.k - len(wild)} entries, fewer than min_agree={self.min_agree}"
            )
        if key in self._clusters:
            self.remove(key)
        self._clusters[key] = (vec, float(importance), self._added)
        self._added += 1
        for m in self._masks:
            if wild.issubset(m):
                self._table.setdefault(mask(vec, m), []).append(key)

    def remove(self, key: K) -> None:
        """Forget cluster ``key`` (KeyError if absent)."""
        vec, _, _ = self._clusters.pop(key)
        wild = {i for i, v in enumerate(vec) if v is None}
        for m in self._masks:
            if wild.issubset(m):
                mk = mask(vec, m)
                bucket = self._table[mk]
                bucket.remove(key)
                if not bucket:
                    del self._table[mk]

    def candidates(self, signature: ShingleSignature | Sequence[int | None]) -> list[K]:
        """All matching clusters, best first (agreement, importance, age)."""
        vec = _vec(signature)
        if len(vec) != self.k:
            raise ValueError(f"signature has {len(vec)} entries, index expects {self.k}")
        wild = {i for i, v in enumerate(vec) if v is None}
        found: dict[K, None] = {}
        for m in self._masks:
            if wild.issubset(m):
                for key in self._table.get(mask(vec, m), ()):
                    found[key] = None

        def rank(key: K) -> tuple[int, float, int]:
            sig, importance, added = self._clusters[key]
            return (-agreement(sig, vec), -importance, added)

        return sorted(found, key=rank)

    def lookup(self, signature: ShingleSignature | Sequence[int | None]) -> K | None:
        """The best matching cluster, or None when no cluster matches."""
        c = self.candidates(signature)
        return c[0] if c else None

    def signature(self, key: K) -> Vector:
        """The indexed signature of cluster ``key``."""
        return self._clusters[key][0]

    def importance(self, key: K) -> float:
        """The importance score of cluster ``key``."""
        return self._clusters[key][1]

    def __contains__(self, key: object) -> bool:
        return key in self._clusters

    def __len__(self) -> int:
        return len(self._clusters)

    def __iter__(self) -> Iterator[K]:
        return iter(self._clusters)


# --------------------------------------------------------------------------- #
# Algorithm 1: clustering pages by masked shingle vectors
# --------------------------------------------------------------------------- #
@dataclass(frozen=True, slots=True)
class SignatureCluster:
    """One cluster of Algorithm 1: its masked signature, importance (count) and page indices."""

    signature: Vector
    count: int
    members: tuple[int, ...]


def _vec_order(v: Vector) -> tuple[tuple[int, int], ...]:
    # total order on masked vectors (None sorts first) for deterministic ties
    return tuple((0, 0) if x is None else (1, x) for x in v)


def cluster_signatures(
    signatures: Sequence[ShingleSignature | Sequence[int]],
    min_agree: int = MIN_AGREE,
    min_count: int = PRUNE_COUNT,
) -> list[SignatureCluster]:
    """Vertex's Algorithm 1, Cluster_Pages (seed 003 §III-A), deterministically.

    1. Count, for every page vector, each 6/8, 7/8 and 8/8 masked vector
       covering it (37 per page for k = 8).
    2. For each distinct 8/8 vector in increasing order of count, pick the
       covering masked vector with the largest count and decrement the others
       covering it by the 8/8 vector's count.  Delete masked vectors whose
       count is below ``min_count`` (20 in the paper).
    3. Assign each page to the surviving covering masked vector with the largest
       count.  Pages covered by none stay unassigned.

    The paper breaks ties "arbitrarily"; here ties go to fewer wildcards, then
    to the smaller vector (wildcards first), and 8/8 vectors of equal count are
    visited in vector order, so the result is independent of page order.

    Args:
        signatures: one full signature per page.
        min_agree: entries kept by the most masked vectors (6 of 8).
        min_count: pruning threshold of the second pass.

    Returns:
        Clusters by decreasing count (then vector order); ``count`` is the
        importance score, ``members`` the page indices in increasing order.
    """
    vecs = [_vec(s) for s in signatures]
    if not vecs:
        return []
    k = len(vecs[0])
    if any(len(v) != k or any(x is None for x in v) for v in vecs):
        raise ValueError("cluster_signatures needs full signatures of equal length")
    counts: dict[Vector, int] = {}
    full: dict[Vector, int] = {}
    for v in vecs:  # first pass
        full[v] = full.get(v, 0) + 1
        for mv in masked_variants(v, min_agree):
            counts[mv] = counts.get(mv, 0) + 1

    def best(cands: list[Vector]) -> Vector:
        return min(cands, key=lambda mv: (-counts[mv], sum(x is None for x in mv), _vec_order(mv)))

    # second pass: 8/8 vectors in increasing order of count
    for v in sorted(full, key=lambda v: (counts[v], _vec_order(v))):
        cands = list(masked_variants(v, min_agree))
        chosen = best(cands)
        for mv in cands:
            if mv != chosen:
                counts[mv] -= full[v]
    kept = {mv: c for mv, c in counts.items() if c >= min_count}

    # third pass
    members: dict[Vector, list[int]] = {}
    for i, v in enumerate(vecs):
        cands = [mv for mv in masked_variants(v, min_agree) if mv in kept]
        if cands:
            chosen = min(cands, key=lambda mv: (-kept[mv], sum(x is None for x in mv), _vec_order(mv)))
            members.setdefault(chosen, []).append(i)
    out = [SignatureCluster(mv, kept[mv], tuple(m)) for mv, m in members.items()]
    out.sort(key=lambda c: (-c.count, _vec_order(c.signature)))
    return out
