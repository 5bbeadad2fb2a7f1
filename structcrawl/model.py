"""The site model: page classes scored by MDL, and the class links between them.

Seed 001 (Crescenzi, Merialdo, Missier 2005):

* §2 — a page is its schema (set of link-collection paths) plus the URLs under
  each path; a page class has the union of its members' schemas; a class link
  ``C1 --path--> C2`` exists when links under ``path`` in C1's pages lead to
  pages of C2.
* §3.2 — the MDL cost.  Model part: every path of every class schema costs
  ``c_p``.  Data part, a page p given its class C: an index for every path of
  C's schema (``c_i``), an "empty" code for each class path missing on the page
  (``c_miss``), the path itself for each page path not in the schema (``c_p``),
  and every URL (``c_u``).

Because a class schema is the union of its members' schemas, a member never
has a path outside it, so a class's whole data cost follows from four numbers
(members, schema size, summed page-schema sizes, URLs): merging a candidate
into a class or adding a class costs time proportional to the candidate and
that class, never to the site (``PageClass`` keeps these sufficient
statistics; ``SiteModel`` keeps the totals).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Sequence


@dataclass(frozen=True)
class Costs:
    """Weights of the MDL code (seed 001 §3.2, footnote 7)."""

    c_u: float = 1.0  #: a URL
    c_p: float = 1.0  #: a path written out in full
    c_i: float = 0.8  #: an index into a class schema
    c_miss: float = 1.0  #: the empty code of a class path missing on a page


@dataclass(frozen=True, slots=True)
class Page:
    """What the model keeps of a page: its URL, schema and URL count."""

    url: str
    schema: frozenset[str]
    url_count: int
    tag_paths: frozenset[str] = frozenset()


def encoding_cost(schema: frozenset[str], url_count: int, class_schema: frozenset[str] | set[str] | dict,
                  costs: Costs) -> float:
    """enc(p|C) of seed 001 §3.2 for a page with ``schema`` against a class schema.

    Example of the paper: p = {path1 (2 URLs), path3 (3), path4 (2)} against
    C_A = {path1, path2, path3} costs 3·c_i + 7·c_u + 1·c_p + 1·c_miss.
    """
    shared = sum(1 for p in schema if p in class_schema)
    size = len(class_schema)
    return (
        costs.c_i * size
        + costs.c_miss * (size - shared)
        + costs.c_p * (len(schema) - shared)
        + costs.c_u * url_count
    )


def singleton_cost(schema: frozenset[str], url_count: int, costs: Costs) -> float:
    """Model + data cost of a page as the only member of a class of its own."""
    return costs.c_p * len(schema) + encoding_cost(schema, url_count, schema, costs)


def _distance(schema: frozenset[str], class_schema: dict) -> float:
    """|A Δ B| / |A ∪ B| (seed 001 §3.1) without building the union."""
    shared = sum(1 for p in schema if p in class_schema)
    union = len(schema) + len(class_schema) - shared
    return (union - shared) / union if union else 0.0


#: Two page groups whose tag-path fingerprints are this similar (Jaccard) come
#: from one template even when their link collections differ.
TWIN_SIMILARITY = 0.95
FINGERPRINT_OCCURRENCE = 0.3


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    union = len(a | b)
    return len(a & b) / union if union else 1.0


@dataclass
class PageClass:
    """A page class: members and the sufficient statistics of its MDL cost."""

    id: int
    members: list[str] = field(default_factory=list)
    path_counts: Counter = field(default_factory=Counter)  #: path -> members having it
    schema_total: int = 0  #: Σ |schema(p)| over members
    url_total: int = 0  #: Σ URLs over members
    tag_counts: Counter = field(default_factory=Counter)  #: tag path -> members having it

    @property
    def size(self) -> int:
        return len(self.members)

    @property
    def schema(self) -> frozenset[str]:
        return frozenset(self.path_counts)

    def add(self, pages: Iterable[Page]) -> None:
        for page in pages:
            self.members.append(page.url)
            self.path_counts.update(page.schema)
            self.schema_total += len(page.schema)
            self.url_total += page.url_count
            self.tag_counts.update(page.tag_paths)

    def fingerprint(self, occurrence: float = FINGERPRINT_OCCURRENCE) -> frozenset[str]:
        """Tag paths present on at least ``occurrence`` of the members (seed 002 §3.3)."""
        least = occurrence * self.size
        return frozenset(p for p, c in self.tag_counts.items() if c >= least)

    def model_bits(self, costs: Costs) -> float:
        return costs.c_p * len(self.path_counts)

    def data_bits(self, costs: Costs) -> float:
        return _data_bits(self.size, len(self.path_counts), self.schema_total, self.url_total, costs)


def _data_bits(n: int, schema_size: int, schema_total: int, url_total: int, costs: Costs) -> float:
    # Σ over members of enc(p|C) when every member's schema is inside the class schema.
    return (
        (costs.c_i + costs.c_miss) * n * schema_size
        - costs.c_miss * schema_total
        + costs.c_u * url_total
    )


@dataclass
class Candidate:
    """Pages proposed together to the model (one result of candidate selection)."""

    pages: list[Page]

    def __post_init__(self) -> None:
        self.schema = frozenset().union(*(p.schema for p in self.pages))
        self.schema_total = sum(len(p.schema) for p in self.pages)
        self.url_total = sum(p.url_count for p in self.pages)
        counts = Counter()
        for p in self.pages:
            counts.update(p.tag_paths)
        least = FINGERPRINT_OCCURRENCE * len(self.pages)
        self.fingerprint = frozenset(p for p, c in counts.items() if c >= least)

    @property
    def size(self) -> int:
        return len(self.pages)


@dataclass(frozen=True)
class Decision:
    """What the model update did with one candidate, and the MDL figures behind it."""

    action: str  #: "merge" or "new"
    class_id: int
    pages: int
    merge_delta: float | None  #: MDL increase of the best merge (None: no class yet)
    new_delta: float  #: MDL increase of a new class


class SiteModel:
    """Page classes plus MDL totals; the model-update phase of seed 001 Fig. 5."""

    def __init__(self, costs: Costs | None = None) -> None:
        self.costs = costs or Costs()
        self.classes: dict[int, PageClass] = {}
        self.page_class: dict[str, int] = {}
        self.pages: dict[str, Page] = {}
        self.model_bits = 0.0
        self.data_bits = 0.0
        self._next_id = 0

    # -- MDL -----------------------------------------------------------------
    @property
    def mdl(self) -> float:
        return self.model_bits + self.data_bits

    def new_delta(self, cand: Candidate) -> float:
        c = self.costs
        size = len(cand.schema)
        return c.c_p * size + _data_bits(cand.size, size, cand.schema_total, cand.url_total, c)

    def merge_delta(self, cand: Candidate, cls: PageClass) -> float:
        c = self.costs
        grown = sum(1 for p in cand.schema if p not in cls.path_counts)
        size = len(cls.path_counts) + grown
        after = _data_bits(cls.size + cand.size, size, cls.schema_total + cand.schema_total,
                           cls.url_total + cand.url_total, c)
        return c.c_p * grown + after - cls.data_bits(c)

    # -- updates -------------------------------------------------------------
    def update(self, cand: Candidate, dt: float = 0.0) -> Decision:
        """Merge ``cand`` into its cheapest class or make it a new class, whichever MDL prefers.

        Two rules come first, each absorbing the candidate whatever MDL says:

        * a class whose link schema is within ``dt`` of the candidate's (the
          distance of candidate selection, §3.1): the collapse rule of one batch
          applied across batches, with the model's classes as the large
          authoritative groups.  Under the union-schema code every member pays
          for each path its class gains, so without it a class built from one
          batch could never take pages whose optional sections (reviews,
          awards, a pager) that batch happened to lack;
        * a class whose tag-path fingerprint is a twin of the candidate's
          (Jaccard ≥ ``TWIN_SIMILARITY``): the same DOM structure means the same
          template even when the links inside differ (source listings whose
          code links vary by the symbols they mention).
        """
        new = self.new_delta(cand)
        best: PageClass | None = None
        best_delta = None
        near: tuple[float, float, int] | None = None  # (link distance, -twin similarity, id)
        for cls in self.classes.values():
            delta = self.merge_delta(cand, cls)
            if best_delta is None or delta < best_delta:
                best, best_delta = cls, delta
            dist = _distance(cand.schema, cls.path_counts)
            twin = _jaccard(cand.fingerprint, cls.fingerprint()) if cand.fingerprint else 0.0
            if dist < dt or twin >= TWIN_SIMILARITY:
                near = min(near or (dist, -twin, cls.id), (dist, -twin, cls.id))
        if near is not None:
            target = self.classes[near[2]]
            delta = self.merge_delta(cand, target)
            self._add_to(target, cand.pages)
            return Decision("merge", target.id, cand.size, delta, new)
        if best is not None and best_delta < new:
            self._add_to(best, cand.pages)
            return Decision("merge", best.id, cand.size, best_delta, new)
        cls = self.new_class()
        self._add_to(cls, cand.pages)
        return Decision("new", cls.id, cand.size, best_delta, new)

    def new_class(self) -> PageClass:
        cls = PageClass(self._next_id)
        self._next_id += 1
        self.classes[cls.id] = cls
        return cls

    def _add_to(self, cls: PageClass, pages: Sequence[Page]) -> None:
        c = self.costs
        self.model_bits -= cls.model_bits(c)
        self.data_bits -= cls.data_bits(c)
        cls.add(pages)
        for page in pages:
            self.pages[page.url] = page
            self.page_class[page.url] = cls.id
        self.model_bits += cls.model_bits(c)
        self.data_bits += cls.data_bits(c)

    def merge_classes(self, keep: int, gone: int) -> None:
        """Fold class ``gone`` into ``keep`` (refinement); ids of other classes stay."""
        a, b = self.classes[keep], self.classes.pop(gone)
        c = self.costs
        for cls in (a, b):
            self.model_bits -= cls.model_bits(c)
            self.data_bits -= cls.data_bits(c)
        a.members.extend(b.members)
        a.path_counts.update(b.path_counts)
        a.schema_total += b.schema_total
        a.url_total += b.url_total
        a.tag_counts.update(b.tag_counts)
        for url in b.members:
            self.page_class[url] = keep
        self.model_bits += a.model_bits(c)
        self.data_bits += a.data_bits(c)

    # -- classification (seed 001 §4.1) -------------------------------------
    def classify(self, schema: frozenset[str], url_count: int = 0) -> tuple[int | None, float]:
        """The class with the shortest code for the page, or None when no class fits.

        Seed 001 §4.1 assigns p to the class minimising enc(p|C).  With the flat
        §3.2 weights every absent class path costs c_i + c_miss however rare it
        is in the class, so a page lacking an optional section drifts to any
        small class whose schema happens to omit it.  Here enc(p|C) sizes the
        same index/empty codes by how often each path occurs among C's members
        (Krichevsky–Trofimov estimate, ``_ALPHA`` = 0.5): a path every member
        has is free, a rare optional one is cheap to miss, a path the class
        never showed costs log2((n + 1) / 0.5) bits; plus log2(N / n) for the
        class label.  None when that beats no class: spelling the page's paths
        out as a class of its own (log2 of the known paths each) plus a new label.
        """
        total = len(self.pages)
        if not self.classes or not schema:
            return (None, 0.0) if not self.classes else self._best_class(schema, total)
        best, cost = self._best_class(schema, total)
        known = len(frozenset().union(*(c.path_counts.keys() for c in self.classes.values())) | schema)
        alone = len(schema) * math.log2(max(2, known)) + math.log2(total + 1)
        return (best, cost) if cost <= alone else (None, alone)

    def _best_class(self, schema: frozenset[str], total: int) -> tuple[int | None, float]:
        best, best_cost = None, math.inf
        for cls in self.classes.values():
            cost = class_code_length(schema, cls, total)
            if cost < best_cost:
                best, best_cost = cls.id, cost
        return best, best_cost


_ALPHA = 0.5


def class_code_length(schema: frozenset[str], cls: PageClass, total: int) -> float:
    """Bits to say "p is in C" and which of C's paths p has (see ``SiteModel.classify``)."""
    n = cls.size
    denom = n + 2 * _ALPHA
    bits = math.log2(max(total, n) / n)
    counts = cls.path_counts
    for path, cnt in counts.items():
        if path in schema:
            bits -= math.log2((cnt + _ALPHA) / denom)
        else:
            bits -= math.log2((n - cnt + _ALPHA) / denom)
    unseen = sum(1 for p in schema if p not in counts)
    return bits + unseen * math.log2(denom / _ALPHA)
