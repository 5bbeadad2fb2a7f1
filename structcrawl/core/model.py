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
from typing import Container, Iterable, Mapping, Sequence

from structcrawl.core.placement import PathReference
from structcrawl.core.spelling import PathSpeller


@dataclass(frozen=True)
class Costs:
    """Weights of the MDL code (Crescenzi et al. §3.2, footnote 7)."""

    c_u: float = 1.0  #: a URL
    c_p: float = 1.0  #: a path written out in full
    c_i: float = 0.8  #: an index into a class schema
    c_miss: float = 1.0  #: the empty code of a class path missing on a page


@dataclass(frozen=True, slots=True)
class Page:
    """What the model keeps of a page: its URL, schema and URL count, tag and element paths."""

    url: str
    schema: frozenset[str]
    url_count: int
    tag_paths: frozenset[str] = frozenset()
    element_paths: frozenset[str] = frozenset()


def encoding_cost(schema: frozenset[str], url_count: int, class_schema: frozenset[str] | set[str] | dict,
                  costs: Costs) -> float:
    """enc(p|C) of Crescenzi et al. §3.2 for a page with ``schema`` against a class schema.

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
    """|A Δ B| / |A ∪ B| (Crescenzi et al. §3.1) without building the union."""
    shared = sum(1 for p in schema if p in class_schema)
    union = len(schema) + len(class_schema) - shared
    return (union - shared) / union if union else 0.0


#: Two page groups whose tag-path fingerprints are this similar (Jaccard) come
#: from one template even when their link collections differ.
TWIN_SIMILARITY = 0.95
#: A tag path on this share of a class's pages is in its fingerprint (UXClust §3.3; §4.5 finds 0.2-0.3 best).
FINGERPRINT_OCCURRENCE = 0.3
#: Fingerprints this similar (Jaccard) are one template's (UXClust §3.3).
FINGERPRINT_SIMILARITY = 0.8
#: Members of one class with a page's very schema for the model to count it placed there
#: (``SiteModel.update``, ``split._join_lone_twins``): one is no evidence, as for the merge veto.
TWIN_EVIDENCE = 2


#: A path on at least this share of a group's pages is one of its sections (see ``told_apart``).
SECTION_SHARE = 0.9
#: Sections the rest of a class shows on nearly every page and the group never does,
#: for a group to leave: one missing section is an optional one (erl_docgen chapters
#: with or without a "scope" heading), a template of its own lacks the class's frame
#: (a QDoc members page has none of the class page's summary, contents or details).
#: The same count makes an audited page one its class does not describe (``Explorer.check``).
MISSING_SECTIONS = 2
#: A path on at least this share of a class's members is one of its core sections.
CORE_SHARE = 0.5
#: A core section of this share of the classes or more is the site's chrome, not the class's.
CHROME_SHARE = 0.5
#: Classes for the chrome to be the site's, not one class's own core: below it no page
#: counts as one without links of its own (``with_links_of_their_own``, ``split.bare_members``).
CHROME_CLASSES = 3
#: Growth of the modelled pages a crawl's predictions let ``reference`` lag behind: rebuilt at every
#: model step that brings a chrome-only page, it made such steps O(pages) (docs/design.md, item 23).
REFERENCE_LAG = 0.1
#: Schemas whose nearest class a model remembers at most (a bound on a long harvest's memory).
NEAREST_CACHE = 4096


def core_sections(cls: "PageClass") -> frozenset[str]:
    least = CORE_SHARE * cls.size
    return frozenset(p for p, k in cls.path_counts.items() if k >= least)


def site_chrome(model: "SiteModel") -> set[str]:
    """The core sections of ``CHROME_SHARE`` of the classes or more: the site's chrome."""
    cores = [core_sections(cls) for cls in model.classes.values()]
    return {p for p, n in Counter(p for c in cores for p in c).items() if n >= CHROME_SHARE * len(cores)}


def told_apart(a_counts: Counter, a_size: int, b_counts: Counter, b_size: int, evidence: int = 2,
               chrome: set[str] | frozenset[str] | None = None) -> bool:
    """Each group has sections the other never shows — link collections on ≥ ``SECTION_SHARE``
    of its pages, present ``evidence`` times or more in all (one section on two pages, or two
    sections on one page): two templates, not one with optional sections (the demo's news
    index with its pager vs the month archive with its month list).

    With the site's ``chrome`` known, the groups must also share fewer sections beyond it than
    they show alone.  Templates lay out parts by a property of the item: rustdoc's pages of
    unstable items carry a badge and a bare source link where stable ones show a version, so
    the two groups each have sections of their own, yet they share dozens more (the impl
    lists, the method blocks); two templates framed alike share the chrome and little else
    (the demo's author and publisher pages: a book list).  Measured in docs/design.md, item 12."""
    def exclusive(x: Counter, n: int, y: Counter) -> bool:
        return sum(c for p, c in x.items() if c >= SECTION_SHARE * n and p not in y) >= evidence
    if not (exclusive(a_counts, a_size, b_counts) and exclusive(b_counts, b_size, a_counts)):
        return False
    if chrome is None:
        return True
    core_a = {p for p, c in a_counts.items() if c >= SECTION_SHARE * a_size}
    core_b = {p for p, c in b_counts.items() if c >= SECTION_SHARE * b_size}
    alone = sum(1 for p in core_a if p not in b_counts) + sum(1 for p in core_b if p not in a_counts)
    shared = sum(1 for p in core_a & core_b if p not in chrome)
    return shared <= alone


def told_apart_group(schemas: Mapping[str, frozenset[str]], path_counts: Counter,
                     chrome: set[str] | frozenset[str]) -> list[str] | None:
    """Pages of one class (url -> schema, in member order; ``path_counts`` their path counts)
    that are told apart from the rest of it, or None.

    The candidate groups are the pages having one path that at most half of
    the class has (the minority side of a section); the largest group told apart
    from the rest (``told_apart``, the site's ``chrome`` given), and lacking
    ``MISSING_SECTIONS`` of the rest's sections, is returned, ties broken by the
    path, so that replaying a crawl splits the same way.  O(Σ schema sizes).
    """
    n = len(schemas)
    if n < 4:
        return None
    best: tuple[int, str] | None = None
    for path, k in sorted(path_counts.items()):
        if k < 2 or 2 * k > n or (best is not None and k <= best[0]):
            continue
        inside: Counter = Counter()
        for schema in schemas.values():
            if path in schema:
                inside.update(schema)
        outside = path_counts - inside
        if missing_sections(outside, n - k, inside) >= MISSING_SECTIONS and told_apart(inside, k, outside, n - k,
                                                                               chrome=chrome):
            best = (k, path)
    if best is None:
        return None
    return [url for url, schema in schemas.items() if best[1] in schema]


def with_links_of_their_own(model: "SiteModel", members: Sequence[str], chrome: set[str] | frozenset[str]
                            ) -> tuple[dict[str, frozenset[str]], Counter | None]:
    """The schemas of ``members`` but the pages whose links are all the site's ``chrome``, and
    their path counts (None when no page was left out).  Such a page is no evidence for or
    against a section: a Doxygen source listing without links, placed with the directory
    pages, took their own section below ``SECTION_SHARE`` of the class, and neither the
    regroup nor refinement's veto saw two templates (docs/design.md, item 19)."""
    schemas = {url: model.pages[url].schema for url in members}
    if len(model.classes) < CHROME_CLASSES:
        return schemas, None
    kept = {u: s for u, s in schemas.items() if not s <= chrome}
    if len(kept) == len(schemas):
        return schemas, None
    return kept, Counter(p for s in kept.values() for p in s)


def missing_sections(counts: Counter, n: int, group: Container[str]) -> int:
    """Sections on nearly every page of a class (``SECTION_SHARE``; ``counts`` its path counts,
    ``n`` its pages) that a group of pages (their paths) never shows."""
    return sum(1 for p, c in counts.items() if c >= SECTION_SHARE * n and p not in group)


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
    _absent: tuple[int, float] = (-1, 0.0)  #: (size, Σ absent-path bits) cache of ``absent_bits``
    #: size at which ``split.mixed_members`` last found the class one template (it only grows)
    unmixed_at: int = -1

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
        """Tag paths present on at least ``occurrence`` of the members (UXClust §3.3)."""
        least = occurrence * self.size
        return frozenset(p for p, c in self.tag_counts.items() if c >= least)

    def model_bits(self, costs: Costs) -> float:
        return costs.c_p * len(self.path_counts)

    def absent_bits(self) -> float:
        """Bits a page having none of the class's paths pays for their absence (adaptive
        code of ``class_code_length``); cached until the class changes (it only grows)."""
        n = self.size
        if self._absent[0] != n:
            denom = n + 2 * _ALPHA
            self._absent = (n, -math.fsum(math.log2((n - k + _ALPHA) / denom) for k in self.path_counts.values()))
        return self._absent[1]

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
        self.path_counts = Counter()  #: path -> candidate pages having it
        for p in self.pages:
            self.path_counts.update(p.schema)
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
    """What the model update did with one candidate, and the code lengths behind it."""

    action: str  #: "merge" or "new"
    class_id: int
    pages: int
    merge_bits: float | None  #: bits of the candidate in its cheapest class (None: no class yet)
    new_bits: float  #: bits of the candidate as a class of its own


class SiteModel:
    """Page classes plus MDL totals; the model-update phase of Crescenzi et al. Fig. 5."""

    def __init__(self, costs: Costs | None = None) -> None:
        self.costs = costs or Costs()
        self.classes: dict[int, PageClass] = {}
        self.page_class: dict[str, int] = {}
        self.pages: dict[str, Page] = {}
        self.model_bits = 0.0
        self.data_bits = 0.0
        self.known_paths: set[str] = set()  #: every path of every class schema
        self.speller = PathSpeller()  #: how pages' collection paths are spelled (``spelling``)
        #: distinct member schema -> class id -> members with it: what ``classify`` compares a page with
        self.schema_classes: dict[frozenset[str], Counter] = {}
        #: page schema -> ``_nearest_class``'s answer while ``schema_classes`` stays as it is: a harvest
        #: classifies thousands of pages with a model that does not change, 70 % of them a schema met before
        self._nearest: dict[frozenset[str], int] = {}
        self._next_id = 0
        #: the site's chrome and the tag paths of the pages with links beyond it, built when first
        #: needed after a change (``chrome``, ``reference``; or read from a model file)
        self._chrome: set[str] | None = None
        self._reference: PathReference | None = None
        self._bare: PathReference | None = None
        #: the class ids, chrome and page count ``_reference`` was built on; whether no page came since
        self._reference_built: tuple[frozenset[int], frozenset[str], int] = (frozenset(), frozenset(), 0)
        self._reference_current = False

    @classmethod
    def from_assignment(cls, pages: Iterable[Page], assignment: Mapping[str, int], costs: Costs,
                        speller: PathSpeller | None = None) -> "SiteModel":
        """A model whose classes are ``assignment`` (url -> class id) of ``pages``, members in page order."""
        model = cls(costs)
        if speller is not None:
            model.speller = speller
        by_class: dict[int, list[Page]] = {}
        for page in pages:
            by_class.setdefault(assignment[page.url], []).append(page)
        for cid in sorted(by_class):
            model.classes[cid] = PageClass(cid)
            model._add_to(model.classes[cid], by_class[cid])
        model._next_id = max(by_class, default=-1) + 1
        return model

    def spelled(self, collections: Mapping[str, tuple[str, ...]]) -> tuple[frozenset[str], int]:
        """(schema, URL count) of a page's raw collections under the model's spelling."""
        spelled = self.speller.collections(collections)
        return frozenset(spelled), sum(len(u) for u in spelled.values())

    # -- MDL -----------------------------------------------------------------
    @property
    def mdl(self) -> float:
        return self.model_bits + self.data_bits

    def new_delta(self, cand: Candidate) -> float:
        """Increase of the §3.2 MDL total if ``cand`` became a class of its own."""
        c = self.costs
        size = len(cand.schema)
        return c.c_p * size + _data_bits(cand.size, size, cand.schema_total, cand.url_total, c)

    def merge_delta(self, cand: Candidate, cls: PageClass) -> float:
        """Increase of the §3.2 MDL total if ``cand`` joined ``cls``."""
        c = self.costs
        grown = sum(1 for p in cand.schema if p not in cls.path_counts)
        size = len(cls.path_counts) + grown
        after = _data_bits(cls.size + cand.size, size, cls.schema_total + cand.schema_total,
                           cls.url_total + cand.url_total, c)
        return c.c_p * grown + after - cls.data_bits(c)

    def _path_bits(self, cand: Candidate) -> float:
        """Bits to spell a path out in a class schema: an index among the known paths."""
        known = len(self.known_paths) + sum(1 for p in cand.schema if p not in self.known_paths)
        return math.log2(max(2, known))

    def merge_bits(self, cand: Candidate, cls: PageClass, path_bits: float,
                   known: set[str] | frozenset[str] | None = None) -> float:
        """Bits of ``cand``'s pages coded in ``cls`` (``class_code_length`` of each page
        against the class as it is) plus spelling out the paths the class schema gains.
        A path no class has and only one page of the candidate shows is not evidence
        (``new_bits`` leaves it out too): one page's own ids or sections cost the same
        whichever class it joins, and would otherwise pull it away from large classes,
        whose escape code for an unseen path is the longest.
        O(candidate paths): the class's share comes from its cached ``absent_bits``.
        Sums are ``math.fsum``: exact whatever the order of the terms, which follows
        the set order of path strings and so changes with the process's hash seed;
        a resumed crawl must replay to the very same decisions.
        ``known``: the paths that count as seen elsewhere (default: every class's)."""
        n, m = cls.size, cand.size
        escape = math.log2((n + 2 * _ALPHA) / _ALPHA)
        counts = cls.path_counts
        terms = [m * math.log2(max(len(self.pages), n) / n), m * cls.absent_bits()]
        known = self.known_paths if known is None else known
        for path, j in cand.path_counts.items():
            k = counts.get(path)
            if k is None:
                if j > 1 or path in known:
                    terms.append(j * escape + path_bits)
            else:  # present instead of absent on j pages
                terms.append(j * math.log2((n - k + _ALPHA) / (k + _ALPHA)))
        return math.fsum(terms)

    def new_bits(self, cand: Candidate, path_bits: float, known: set[str] | frozenset[str] | None = None) -> float:
        """Bits of ``cand`` as a class of its own: its schema spelled out, each path's
        presence over its pages (Krichevsky–Trofimov), the class label of each page."""
        m = cand.size
        known = self.known_paths if known is None else known
        evidence = [j for p, j in cand.path_counts.items() if j > 1 or p in known]
        bits = m * math.log2((len(self.pages) + m) / m) + path_bits * len(evidence)
        return bits + math.fsum(kt_bits(j, m) for j in evidence)

    # -- updates -------------------------------------------------------------
    def update(self, cand: Candidate, dt: float = 0.0) -> Decision:
        """Merge ``cand`` into its cheapest class or make it a new class, whichever code is shorter.

        Two rules come first, each absorbing the candidate whatever the code says:

        * a class whose link schema is within ``dt`` of the candidate's (the
          distance of candidate selection, §3.1): the collapse rule of one batch
          applied across batches, with the model's classes as the large
          authoritative groups;
        * a class whose tag-path fingerprint is a twin of the candidate's
          (Jaccard ≥ ``TWIN_SIMILARITY``): the same DOM structure means the same
          template even when the links inside differ (source listings whose
          code links vary by the symbols they mention) —
          unless the two are ``told_apart``: the demo's author and publisher
          pages are tag-path twins from one frame, told apart by their own
          sections (co-authors vs imprints and website) — a page arriving alone
          by the paths of it that other pages confirm; and unless they share
          no link path at all, not even the chrome's: rustdoc spells each page
          kind into every path (``body.fn``, ``body.derive``), and a one-page
          class of derive macros, which no ``told_apart`` can guard, took a
          function page against a code 4 × shorter in the functions' class, and
          the function pages the crawl never fetched followed it (rust-std
          densest at 64 URLs in flight F* 0.915 -> 0.996; docs/design.md, item 36).

        Otherwise merge-or-new is decided by two-part code lengths, as in §3.2,
        but with the adaptive data code of ``class_code_length`` (the one
        classification uses) instead of the flat c_i/c_miss weights: joining
        class C costs the candidate's pages their code in C plus the paths C's
        schema gains; a new class costs its whole schema spelled out plus its
        pages' code in it.  Under the flat code every member of C pays c_i +
        c_miss for each path C gains, so a 300-page class could never take a
        page with one path it had not seen (an optional section, a per-page id
        in a path), and real sites broke into dozens of one-page fragments
        (geos, Doxygen: 22 classes for 9 templates, the crawl never stable).
        The adaptive code charges a rare path once, by how rare it is; a batch
        of pages of another template still pays its differences on every page
        and becomes a class of its own.  The code never merges groups that are
        ``told_apart`` (each has a section the other never shows).  The §3.2
        totals (``mdl``) are kept as the paper's measure of the model.

        A candidate the code would make a class of its own joins instead the class
        that already holds ``TWIN_EVIDENCE`` members of each of its pages' very schemas,
        when those schemas are only core sections of that class (``_holding_class``):
        ``classify`` puts such pages there, and refinement folds their class back into
        it, so a class of their own was founded by one batch and undone at the next
        check, batch after batch.  Modern Javadoc's "No usage of" pages, whose only
        links are the class-use pages' navigation, held commons-lang3's sparsest crawl
        that way until the site ran out (docs/design.md, item 30).
        """
        path_bits = self._path_bits(cand)
        new = self.new_bits(cand, path_bits)
        chrome = self.chrome()
        best_bits = None
        near: tuple[float, float, int] | None = None  # (link distance, -twin similarity, id)
        costs_by_class: list[tuple[float, int]] = []
        # a page alone has sections of its own only where other pages confirm them: the demo's
        # author page and the publishers' are tag-path twins, and an author page arriving alone
        # joined the publishers' class (8 x the code of the authors') until the next check
        confirmed = Counter({p: n for p, n in cand.path_counts.items() if p in self.known_paths})
        for cls in self.classes.values():
            bits = self.merge_bits(cand, cls, path_bits)
            costs_by_class.append((bits, cls.id))
            if best_bits is None or bits < best_bits:
                best_bits = bits
            dist = _distance(cand.schema, cls.path_counts)
            twin = _jaccard(cand.fingerprint, cls.fingerprint()) if cand.fingerprint else 0.0
            apart = (told_apart(cand.path_counts, cand.size, cls.path_counts, cls.size, chrome=chrome)
                     if min(cand.size, cls.size) >= 2 else
                     cls.size >= 2 and told_apart(confirmed, 1, cls.path_counts, cls.size, chrome=chrome))
            if (dist < dt or (twin >= TWIN_SIMILARITY and dist < 1.0)) and not apart:
                near = min(near or (dist, -twin, cls.id), (dist, -twin, cls.id))
        if near is not None:
            target = self.classes[near[2]]
            bits = self.merge_bits(cand, target, path_bits)
            self._add_to(target, cand.pages)
            return Decision("merge", target.id, cand.size, bits, new)
        # the cheapest class the candidate is not told apart from: a veto against the
        # cheapest leaves the next-cheapest in the running, not a class of its own
        for bits, cls_id in sorted(costs_by_class):
            if bits >= new:
                break
            cls = self.classes[cls_id]
            if not told_apart(cand.path_counts, cand.size, cls.path_counts, cls.size, chrome=chrome):
                self._add_to(cls, cand.pages)
                return Decision("merge", cls.id, cand.size, bits, new)
        held = self._holding_class(cand, chrome)
        if held is not None:
            target = self.classes[held]
            self._add_to(target, cand.pages)
            return Decision("merge", target.id, cand.size, self.merge_bits(cand, target, path_bits), new)
        cls = self.new_class()
        self._add_to(cls, cand.pages)
        return Decision("new", cls.id, cand.size, best_bits, new)

    def _holding_class(self, cand: Candidate, chrome: set[str]) -> int | None:
        """The class holding most members of each candidate page's very schema, when that is one
        class for every page, holding ``TWIN_EVIDENCE`` of them or more, and each schema is only
        core sections of it, with links beyond the ``chrome``; else None."""
        homes = set()
        for page in cand.pages:
            counts = self.schema_classes.get(page.schema)
            if not counts or page.schema <= chrome:
                return None
            cid, n = min(counts.items(), key=lambda kv: (-kv[1], kv[0]))
            if n < TWIN_EVIDENCE or not page.schema <= core_sections(self.classes[cid]):
                return None
            homes.add(cid)
        return homes.pop() if len(homes) == 1 else None

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
        self._chrome = None
        self._reference_current = False
        self._nearest.clear()
        for page in pages:
            self.schema_classes.setdefault(page.schema, Counter())[cls.id] += 1
            self.known_paths.update(page.schema)
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
        self._chrome = self._reference = self._bare = None
        for url in b.members:
            self.page_class[url] = keep
        self._nearest.clear()
        for counts in self.schema_classes.values():
            if gone in counts:
                counts[keep] += counts.pop(gone)
        self.model_bits += a.model_bits(c)
        self.data_bits += a.data_bits(c)

    # -- classification -------------------------------------------------------------
    def chrome(self) -> set[str]:
        """``site_chrome`` of the model as it stands (cached until it changes)."""
        if self._chrome is None:
            self._chrome = site_chrome(self)
        return self._chrome

    def reference(self, lagging: bool = False) -> PathReference:
        """The element paths of the members with links beyond the chrome, by class: where a page
        whose links are all the chrome is placed (``structcrawl.core.placement``).

        ``lagging``: one built on the same classes and chrome and on no fewer than
        1 / (1 + ``REFERENCE_LAG``) of the pages will do (a crawl's predictions at each step)."""
        chrome = self.chrome()
        if self._reference is None or not (self._reference_current or lagging and self._lag_ok(chrome)):
            self._reference = PathReference.of_pages(
                (page.element_paths, self.page_class[url], bool(page.schema & chrome))
                for url, page in self.pages.items() if not page.schema <= chrome)
            self._bare = None
            self._reference_built = (frozenset(self.classes), frozenset(chrome), len(self.pages))
            self._reference_current = True
        return self._reference

    def _lag_ok(self, chrome: set[str]) -> bool:
        ids, built_chrome, built_pages = self._reference_built
        return (len(self.pages) <= (1 + REFERENCE_LAG) * built_pages and ids == self.classes.keys()
                and built_chrome == chrome)

    def bare(self, lagging: bool = False) -> PathReference:
        """The element paths of the members whose links are all the chrome, by class: where a page
        like them goes first (its kind, which the regroup placed; ``split._place_bare``)."""
        self.reference(lagging)  # built on the same pages: rebuilt with it
        if self._bare is None:
            chrome = self.chrome()
            self._bare = PathReference.of_pages(
                (page.element_paths, self.page_class[url], True) for url, page in self.pages.items()
                if page.schema <= chrome)
        return self._bare

    def set_references(self, reference: PathReference, bare: PathReference) -> None:
        """Use these (read from a model file, which does not keep its members' pages)."""
        self._reference, self._bare = reference, bare
        self._reference_current = True

    def classify(self, schema: frozenset[str], url_count: int = 0, element_paths: frozenset[str] | None = None,
                 lagging: bool = False) -> tuple[int | None, float]:
        """The class of the member most like the page, or None when no class fits;
        with the page's code length in that class.

        Crescenzi et al. §4.1 assign p to the class minimising enc(p|C).  A class
        built by merges (optional sections, refinement) is a mixture: its path
        frequencies describe no single member, and a page of it can code shorter
        in a small tight class — on erl_docgen reference pages only 55 % of the
        members classified into their own class that way.  The member schemas
        themselves do not blur: the page goes to the class of the member schema
        with the highest Jaccard similarity (ties: the schema more members share,
        then the smaller class id), which puts every member in its own class
        unless two classes hold its very schema.  enc(p|C) still decides whether
        any class fits: adaptive presence codes (Krichevsky–Trofimov, ``_ALPHA``)
        plus log2(N / n) for the label, against spelling the page's paths out as
        a class of its own (log2 of the known paths each) plus a new label.  A
        path no class has costs the same in every class and in none: it says
        nothing about which class the page belongs to.  A page with a member's very schema
        fits that member's class whatever its code length: the model already placed such a
        page there (a loose class's member could otherwise be answered "no class": 3 of the
        Doxygen namespace pages in one crawl, its classification agreeing with the model on
        98.7 % of the members).  A page whose links are all the site's chrome, given its
        ``element_paths``, goes with the nearest such member (``structcrawl.core.placement``),
        else where the members with links of their own place it, else with the nearest such
        member however far, once there are ``CHROME_CLASSES`` classes; the model's regroup
        placed such members by kind (``split._place_bare``).
        A page every link path of which the model knows, but so few of its nearest class's
        that it codes shorter alone, goes where its element paths place it, if anywhere:
        Haddock's modules that only re-export others show the module template with three
        link paths (25 of ghc's 1,247 module pages were "no class", docs/design.md item 26).
        ``lagging``: the placement may lag the model's latest pages (``reference``).
        """
        total = len(self.pages)
        if not self.classes:
            return None, 0.0
        known = self.known_paths
        seen = frozenset(p for p in schema if p in known)
        if element_paths and len(self.classes) >= CHROME_CLASSES and schema <= self.chrome():
            placed = self.bare(lagging).nearest(element_paths)
            if placed is None:
                placed = self.reference(lagging).nearest(element_paths)
            if placed is None:
                placed = self.bare(lagging).nearest(element_paths, least=0.0)
            if placed is not None:
                return placed, class_code_length(seen, self.classes[placed], total)
        best = self._nearest_class(seen)
        cost = class_code_length(seen, self.classes[best], total)
        if not schema or schema in self.schema_classes:
            return best, cost
        spell = math.log2(max(2, len(known) + len(schema) - len(seen)))
        cost += (len(schema) - len(seen)) * spell
        alone = len(schema) * spell + math.log2(total + 1)
        if cost <= alone:
            return best, cost
        if element_paths and len(seen) == len(schema) and len(self.classes) >= CHROME_CLASSES:
            placed = self.reference(lagging).nearest(element_paths)
            if placed is not None:
                return placed, class_code_length(seen, self.classes[placed], total)
        return None, alone

    def _nearest_class(self, schema: frozenset[str]) -> int:
        best = self._nearest.get(schema)
        if best is None:
            if len(self._nearest) >= NEAREST_CACHE:
                self._nearest.clear()
            best = self._nearest[schema] = self._nearest_member_class(schema)
        return best

    def _nearest_member_class(self, schema: frozenset[str]) -> int:
        best_key, best = None, min(self.classes)
        for member, counts in self.schema_classes.items():
            union = len(schema | member)
            sim = len(schema & member) / union if union else 1.0
            cid, n = min(counts.items(), key=lambda kv: (-kv[1], kv[0]))
            key = (sim, n, -cid)
            if best_key is None or key > best_key:
                best_key, best = key, cid
        return best


_ALPHA = 0.5


def kt_bits(k: int, n: int) -> float:
    """Krichevsky–Trofimov code length of a binary sequence of length n with k ones:
    -log2(Γ(k+½)·Γ(n−k+½) / (π·Γ(n+1))); 1 bit for one symbol."""
    return (math.lgamma(n + 1) + math.log(math.pi) - math.lgamma(k + _ALPHA)
            - math.lgamma(n - k + _ALPHA)) / math.log(2)


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
