"""Quality measures for a computed page clustering.

Pure Python, no Scrapy import.  Two families of measures:

**Clustering against a reference classification** (page id → class), all
computed from one sparse confusion matrix (:class:`Contingency`), so a million
pages take seconds; pair counts come from sums of ``n choose 2`` over its cells,
never from a loop over pairs.

Notation: ``C_1..C_n`` are the reference classes (from the truth), ``Ĉ_1..Ĉ_m``
the computed clusters, ``N`` the number of evaluated pages and
``e_ij = |C_i ∩ Ĉ_j|``.

* **F\\*** (Crescenzi, Merialdo, Missier 2005, Crescenzi et al. §4.1)::

      P(C_i, Ĉ_j) = e_ij / |Ĉ_j|        R(C_i, Ĉ_j) = e_ij / |C_i|
      F_i = max_j 2PR / (P + R)  ( = max_j 2 e_ij / (|C_i| + |Ĉ_j|) )
      F*  = Σ_i F_i · |C_i| / N                       in [0, 1], higher is better

  (The paper's typography swaps the indices in the confusion-matrix form of P
  and R; the definitions above are the intended, standard ones.)
* **Entropy** (Crescenzi et al. §4.1), in **bits** (log base 2)::

      H(Ĉ_j) = − Σ_i P(C_i, Ĉ_j) · log2 P(C_i, Ĉ_j)
      H      = Σ_j H(Ĉ_j) · |Ĉ_j| / N                  ≥ 0, lower is better

  (The paper writes the overall sum with a stray minus sign; H is non-negative.)
* **Purity** (Crescenzi et al. §4.1): ``Σ_j max_i e_ij / N``, in (0, 1], higher is
  better.  Entropy and purity only measure precision: all-singleton clusters
  score perfectly on both.
* **Adjusted Rand index** (Chakrabarti & Mehta, Chakrabarti & Mehta §4, after Hubert &
  Arabie 1985).  Over the ``N(N−1)/2`` pairs of pages, ``a`` = together in both
  clusterings, ``b`` = together in the truth only, ``c`` = together in the
  computed clustering only, ``d`` = apart in both::

      ARI = 2(ad − bc) / ((a + b)(b + d) + (a + c)(c + d))

  1 for identical partitions (also when both are trivial, where the formula is
  0/0), about 0 for a random clustering, can be negative.
* **Pairwise precision / recall** (Grigalis & Čenys, UXClust, UXClust §4.2,
  eq. 4): a true positive puts two pages of the same class in the same cluster,
  a false positive two pages of different classes in the same cluster, a false
  negative two pages of the same class in different clusters;
  ``P = TP / (TP + FP)``, ``R = TP / (TP + FN)``.  When there is no pair to judge
  (no two pages share a cluster, resp. a class) the value is vacuously 1.0: no
  wrong decision was made.

Evaluation is over the pages of the truth.  A truth page that is missing from
the assignments, or assigned ``None``, forms a singleton cluster of its own
(unassigned pages are *not* lumped into one "None" cluster).  Assigned pages
that are not in the truth are ignored and counted (``ignored``).

**Schema-based quality** for tracking a crawl (Crescenzi et al. §4.3), see
:func:`schema_quality`: ``F``, ``RevF`` and their harmonic mean ``Q``.

Reading assignments and truth files is the ``structcrawl evaluate`` command's
(:mod:`structcrawl.commands.evaluate`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence, Set
from dataclasses import dataclass
from typing import NamedTuple

__all__ = [
    "Contingency",
    "Unassigned",
    "contingency",
    "fstar",
    "entropy",
    "purity",
    "pair_counts",
    "adjusted_rand_index",
    "pairwise_precision_recall",
    "evaluate",
    "schema_f",
    "schema_similarity",
    "schema_quality",
]


# --------------------------------------------------------------------------
# Confusion matrix
# --------------------------------------------------------------------------


class Unassigned(NamedTuple):
    """Cluster label of a truth page that was not assigned (missing or None):
    each such page is a singleton cluster of its own."""

    page: str


@dataclass(frozen=True)
class Contingency:
    """Sparse confusion matrix between reference classes and computed clusters.

    ``counts[(i, j)]`` = number of pages of reference class ``classes[i]``
    assigned to computed cluster ``clusters[j]`` (only non-zero cells are kept).
    ``unassigned`` truth pages each got their own singleton cluster labelled
    :class:`Unassigned`; ``ignored`` assigned pages were not in the truth.
    """

    counts: Mapping[tuple[int, int], int]
    class_sizes: tuple[int, ...]
    cluster_sizes: tuple[int, ...]
    classes: tuple[Hashable, ...]
    clusters: tuple[Hashable, ...]
    unassigned: int = 0
    ignored: int = 0

    @property
    def n(self) -> int:
        """Number of evaluated pages (= pages in the truth)."""
        return sum(self.class_sizes)

    def matrix(self) -> list[list[int]]:
        """Dense ``len(classes) × len(clusters)`` matrix (for small cases, tests, display)."""
        rows = [[0] * len(self.clusters) for _ in self.classes]
        for (i, j), e in self.counts.items():
            rows[i][j] = e
        return rows


def contingency(assigned: Mapping[str, Hashable | None], truth: Mapping[str, Hashable]) -> Contingency:
    """Confusion matrix of ``assigned`` (page id → cluster label or None) against
    ``truth`` (page id → class label), over the pages of ``truth``.

    Truth pages absent from ``assigned`` or assigned ``None`` become singleton
    clusters; pages of ``assigned`` not in ``truth`` are counted as ``ignored``.
    Raises ``ValueError`` if a truth class is ``None``.
    """
    class_index: dict[Hashable, int] = {}
    cluster_index: dict[Hashable, int] = {}
    classes: list[Hashable] = []
    clusters: list[Hashable] = []
    class_sizes: list[int] = []
    cluster_sizes: list[int] = []
    counts: Counter[tuple[int, int]] = Counter()
    unassigned = 0
    get = assigned.get
    for page, cls in truth.items():
        i = class_index.get(cls)
        if i is None:
            if cls is None:
                raise ValueError(f"truth class of page {page!r} is None")
            i = class_index[cls] = len(classes)
            classes.append(cls)
            class_sizes.append(0)
        class_sizes[i] += 1
        label = get(page)
        if label is None:
            unassigned += 1
            j = len(clusters)
            clusters.append(Unassigned(page))
            cluster_sizes.append(1)
        else:
            j = cluster_index.get(label)
            if j is None:
                j = cluster_index[label] = len(clusters)
                clusters.append(label)
                cluster_sizes.append(0)
            cluster_sizes[j] += 1
        counts[(i, j)] += 1
    ignored = sum(1 for page in assigned if page not in truth)
    return Contingency(
        counts=dict(counts),
        class_sizes=tuple(class_sizes),
        cluster_sizes=tuple(cluster_sizes),
        classes=tuple(classes),
        clusters=tuple(clusters),
        unassigned=unassigned,
        ignored=ignored,
    )


def _table(x: Contingency | Mapping[str, Hashable | None], truth: Mapping[str, Hashable] | None) -> Contingency:
    if isinstance(x, Contingency):
        if truth is not None:
            raise TypeError("pass either a Contingency or (assigned, truth), not both")
        table = x
    else:
        if truth is None:
            raise TypeError("truth is required when the first argument is an assignment mapping")
        table = contingency(x, truth)
    if table.n == 0:
        raise ValueError("no pages to evaluate: the truth is empty")
    return table


# --------------------------------------------------------------------------
# Measures on the confusion matrix (Crescenzi et al. §4.1)
# Each accepts a Contingency, or the (assigned, truth) mappings.
# --------------------------------------------------------------------------


def fstar(table: Contingency | Mapping[str, Hashable | None], truth: Mapping[str, Hashable] | None = None) -> float:
    """F*: class-size-weighted best F-measure of each reference class (higher is better)."""
    t = _table(table, truth)
    best = [0.0] * len(t.classes)
    cs, ks = t.class_sizes, t.cluster_sizes
    for (i, j), e in t.counts.items():
        f = 2.0 * e / (cs[i] + ks[j])  # harmonic mean of P = e/|Ĉj| and R = e/|Ci|
        if f > best[i]:
            best[i] = f
    return math.fsum(f * s for f, s in zip(best, cs)) / t.n


def entropy(table: Contingency | Mapping[str, Hashable | None], truth: Mapping[str, Hashable] | None = None) -> float:
    """Size-weighted entropy of the clusters' class distributions, in bits (lower is better)."""
    t = _table(table, truth)
    ks = t.cluster_sizes
    # Σ_j |Ĉj|/N · (−Σ_i p_ij log2 p_ij) with p_ij = e_ij/|Ĉj|  =  −(1/N) Σ_ij e_ij log2(e_ij/|Ĉj|)
    h = -math.fsum(e * math.log2(e / ks[j]) for (i, j), e in t.counts.items() if e != ks[j])
    return max(0.0, h / t.n)


def purity(table: Contingency | Mapping[str, Hashable | None], truth: Mapping[str, Hashable] | None = None) -> float:
    """Fraction of pages that belong to the majority class of their cluster (higher is better)."""
    t = _table(table, truth)
    best = [0] * len(t.clusters)
    for (_i, j), e in t.counts.items():
        if e > best[j]:
            best[j] = e
    return sum(best) / t.n


# --------------------------------------------------------------------------
# Pair-counting measures (Chakrabarti & Mehta §4, UXClust §4.2)
# --------------------------------------------------------------------------


def _pairs(k: int) -> int:
    return k * (k - 1) // 2


class PairCounts(NamedTuple):
    """Counts over the N(N−1)/2 page pairs (Chakrabarti & Mehta §4 notation; UXClust names)."""

    together_both: int  # a  = TP: same class, same cluster
    together_truth_only: int  # b  = FN: same class, different clusters
    together_computed_only: int  # c  = FP: different classes, same cluster
    apart_both: int  # d  = TN


def pair_counts(
    table: Contingency | Mapping[str, Hashable | None], truth: Mapping[str, Hashable] | None = None
) -> PairCounts:
    """Pair confusion counts (a, b, c, d) from the contingency, in O(cells) (exact Python ints)."""
    t = _table(table, truth)
    a = sum(_pairs(e) for e in t.counts.values())
    same_class = sum(_pairs(s) for s in t.class_sizes)
    same_cluster = sum(_pairs(s) for s in t.cluster_sizes)
    b = same_class - a
    c = same_cluster - a
    d = _pairs(t.n) - a - b - c
    return PairCounts(a, b, c, d)


def adjusted_rand_index(
    table: Contingency | Mapping[str, Hashable | None], truth: Mapping[str, Hashable] | None = None
) -> float:
    """Adjusted Rand index, 2(ad − bc) / ((a+b)(b+d) + (a+c)(c+d)); 1.0 for identical partitions."""
    a, b, c, d = pair_counts(_table(table, truth))
    den = (a + b) * (b + d) + (a + c) * (c + d)
    if den == 0:  # only when b = c = 0, i.e. the two partitions are identical
        return 1.0
    return 2 * (a * d - b * c) / den


def pairwise_precision_recall(
    table: Contingency | Mapping[str, Hashable | None], truth: Mapping[str, Hashable] | None = None
) -> tuple[float, float]:
    """(TP/(TP+FP), TP/(TP+FN)) over page pairs, UXClust eq. 4; vacuously 1.0 with no pair to judge."""
    a, b, c, _ = pair_counts(_table(table, truth))
    precision = a / (a + c) if a + c else 1.0
    recall = a / (a + b) if a + b else 1.0
    return precision, recall


def evaluate(
    assigned: Mapping[str, Hashable | None] | Contingency, truth: Mapping[str, Hashable] | None = None
) -> dict:
    """All clustering measures at once.

    Returns ``{"fstar", "entropy", "purity", "ari", "pair_precision",
    "pair_recall"}`` (floats; entropy in bits) and ``{"pages", "clusters",
    "classes", "unassigned", "ignored"}`` (ints).  ``clusters`` counts each
    unassigned truth page as one cluster.  Raises ``ValueError`` on an empty truth.
    """
    t = _table(assigned, truth)
    precision, recall = pairwise_precision_recall(t)
    return {
        "fstar": fstar(t),
        "entropy": entropy(t),
        "purity": purity(t),
        "ari": adjusted_rand_index(t),
        "pair_precision": precision,
        "pair_recall": recall,
        "pages": t.n,
        "clusters": len(t.clusters),
        "classes": len(t.classes),
        "unassigned": t.unassigned,
        "ignored": t.ignored,
    }


# --------------------------------------------------------------------------
# Schema-based quality, for tracking a crawl (Crescenzi et al. §4.3)
# --------------------------------------------------------------------------


def schema_f(page_schema: Set[str], class_schema: Set[str]) -> float:
    """F(σ_p, σ_C): harmonic mean of P = |σp∩σC|/|σp| and R = |σp∩σC|/|σC|.

    Equals ``2|σp∩σC| / (|σp| + |σC|)``; 1.0 when both schemas are empty.
    """
    total = len(page_schema) + len(class_schema)
    if total == 0:
        return 1.0
    return 2.0 * len(page_schema & class_schema) / total


def schema_similarity(reference_schema: Set[str], member_schemas: Iterable[Set[str]]) -> float:
    """sim(C, Ĉ): mean of F(σ_p, σ_C) over the member pages p of a computed class Ĉ (0.0 if no member)."""
    groups = Counter(frozenset(s) for s in member_schemas)
    k = sum(groups.values())
    if k == 0:
        return 0.0
    return math.fsum(n * schema_f(s, reference_schema) for s, n in groups.items()) / k


def schema_quality(
    computed: Sequence[Iterable[Set[str]]] | Mapping[Hashable, Iterable[Set[str]]],
    reference: Sequence[Set[str]] | Mapping[Hashable, Set[str]],
) -> dict:
    """Schema-based quality F, RevF and Q of a (possibly partial) computed model.

    ``computed``: one entry per computed class Ĉ_j, the schemas σ_p (sets of
    link-collection paths) of its member pages — a list of lists, or a mapping
    class id → schemas.  A class known only by its class schema can be passed
    as a one-element list.
    ``reference``: the schema σ_C of each reference class C_i (a list, or a
    mapping class id → schema).

    With sim(C_i, Ĉ_j) = mean over p ∈ Ĉ_j of F(σ_p, σ_{C_i}) (:func:`schema_similarity`)::

        F    = Σ_i max_j sim(C_i, Ĉ_j) / n     (each reference class finds its best computed class)
        RevF = Σ_j max_i sim(C_i, Ĉ_j) / m     (each computed class finds its best reference class)
        Q    = 2 · F · RevF / (F + RevF)

    F alone tolerates spurious computed classes (they are never anybody's best
    match); RevF averages over computed classes, so spurious ones lower it.  A
    single class lumping all pages is penalised through the averaging in sim
    and F.  Returns ``{"F", "RevF", "Q", "reference_classes", "computed_classes",
    "best_computed", "best_reference"}``; ``best_computed`` maps each reference
    class id (index for a list) to its best computed class id (None if there is
    no computed class), ``best_reference`` the reverse.  With no computed class
    F = RevF = Q = 0.  Raises ``ValueError`` if ``reference`` is empty.
    """
    ref_items = list(reference.items()) if isinstance(reference, Mapping) else list(enumerate(reference))
    comp_items = list(computed.items()) if isinstance(computed, Mapping) else list(enumerate(computed))
    if not ref_items:
        raise ValueError("schema_quality needs at least one reference class")
    n, m = len(ref_items), len(comp_items)
    # Group identical member schemas once per computed class: sim is then O(distinct schemas).
    comp_groups = [Counter(frozenset(s) for s in members) for _, members in comp_items]
    sim = [[0.0] * m for _ in range(n)]
    for i, (_, ref_schema) in enumerate(ref_items):
        ref_schema = frozenset(ref_schema)
        for j, groups in enumerate(comp_groups):
            k = sum(groups.values())
            if k:
                sim[i][j] = math.fsum(c * schema_f(s, ref_schema) for s, c in groups.items()) / k

    best_computed: dict[Hashable, Hashable | None] = {}
    f_terms = []
    for i, (ref_id, _) in enumerate(ref_items):
        if m:
            j = max(range(m), key=lambda j: sim[i][j])
            best_computed[ref_id] = comp_items[j][0]
            f_terms.append(sim[i][j])
        else:
            best_computed[ref_id] = None
            f_terms.append(0.0)
    best_reference: dict[Hashable, Hashable] = {}
    rev_terms = []
    for j, (comp_id, _) in enumerate(comp_items):
        i = max(range(n), key=lambda i: sim[i][j])
        best_reference[comp_id] = ref_items[i][0]
        rev_terms.append(sim[i][j])

    f = math.fsum(f_terms) / n
    rev = math.fsum(rev_terms) / m if m else 0.0
    q = 2 * f * rev / (f + rev) if f + rev else 0.0
    return {
        "F": f,
        "RevF": rev,
        "Q": q,
        "reference_classes": n,
        "computed_classes": m,
        "best_computed": best_computed,
        "best_reference": best_reference,
    }
