"""Online refinement: merge classes that are one template split over several
link collections (UXClust §3.3, UXClust's fingerprint merge, during the crawl).

Link-collection grouping splits a template when its pages vary in their link
sections (Doxygen class pages with or without protected members) or are
reached from many places.  Two classes are merged when

1. their **tag-path fingerprints** (paths on ≥ ``occurrence`` of the members)
   have Jaccard similarity ≥ ``similarity`` (UXClust: 0.3 and 0.8) — the same
   DOM skeleton — and their link collections share a core section beyond the
   site's chrome (rustdoc writes every item kind on one skeleton, and its type
   alias and constant pages share only the chrome), or else one's core
   sections are nested in the other's and the fingerprints are at least
   ``NESTED_SIMILARITY`` alike (erl_docgen's chapters nest in the reference
   pages by their links, not by their skeleton: 0.29–0.34 alike, where the
   nested pairs of one type scored 0.42 and more), or at least that alike
   with every content section of both under one element named after the
   page's kind (``kind_wrappers``: makeinfo's sections with or without
   function definitions share only their ``div.section``'s header).  Where
   most classes' cores are all the site's chrome, that chrome is one type's
   core (Node.js's Markdown pages: one template, split by optional blocks),
   and two such classes merge on skeletons alike without a content section;
   and
2. some link collection **co-cites** them — its links point to modelled pages
   of both — which is Crescenzi et al.'s assumption that the links of one collection
   lead to one class; and
3. they are **not each the sole target of a collection of their own**.  A
   collection whose fetched pages (at least ``support``) went ``share`` or more
   to one class vouches for that class being a class: when both classes have
   such a collection they were told apart by the site's own links, and the
   merge is vetoed; and
4. they are **not told apart by their own link collections**: when each has a
   collection on ≥ 90 % of its members that the other never shows (twice or
   more in all: ``model.told_apart``, the rule the model update obeys too),
   they are two templates, not one with optional sections (the demo's news
   index with its pager vs the month archive, fingerprints 0.82 alike) — unless
   both lie under one kind's wrapper (``one_kind``), where the generator names
   the kind and sections of their own are where prose put its links; and
5. the class they would make holds **no group the next check would split
   off again** (``told_apart_group``, the regroup's rule).  The veto above
   compares the two classes as they stand; one stray page in the smaller
   (a Doxygen source listing without links, placed with the directory pages)
   takes a section below 90 % of its pages, the merge passes, and the next
   check splits the directories off again: the crawl swings, and a stop
   between the two keeps the merge (docs/design.md, item 17).

Classes with fewer than ``min_members`` members merge only as twins
(Jaccard ≥ 0.95): a menu's single destinations carry too little evidence.

The demo site's author and publisher pages share a skeleton (Jaccard 0.88) but
are never linked from one collection and each is the only target of the
book pages' "by" and "publisher" links: they stay apart.  A class fingerprint
uses all members' tag-path counts (the limit of UXClust's sampling; exact and
cheap with per-class counts).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import combinations

from structcrawl.core.frontier import Frontier
from structcrawl.core.model import (
    FINGERPRINT_OCCURRENCE,
    FINGERPRINT_SIMILARITY,
    TWIN_SIMILARITY,
    SiteModel,
    core_sections,
    site_chrome,
    told_apart,
    told_apart_group,
    with_links_of_their_own,
)
from structcrawl.core.unionfind import UnionFind, jaccard

#: Shared core sections, chrome aside, that make one class's sections a part of the other's.
NESTED_EVIDENCE = 2
#: Core sections of the smaller class the larger may lack: one optional section each way …
NESTED_SLACK = 1
#: … or this share of the smaller class's core sections beyond the chrome, where a template has
#: many optional ones (rustdoc's module pages: one section per item kind; docs/design.md, item 16).
NESTED_SLACK_SHARE = 0.25
#: Fingerprints at least this alike (Jaccard) for nested cores to merge: one template's skeleton
#: (docs/design.md, item 14).
NESTED_SIMILARITY = 0.4
#: Pages of the smaller class, at least, for one shared section to count as nesting (a core read
#: off fewer pages is a loose class's chance; the frontier's saturation support; docs/design.md,
#: item 22).
ONE_SECTION_PAGES = 10
#: Share of the classes (of ``min_members`` pages) whose cores are all the site's chrome for the
#: chrome to be the core of one type that makes most of the site, not a frame around several
#: (docs/design.md, item 45).
FRAME_ONLY_SHARE = 0.5
#: Sections the larger core may have beyond a one-section core it nests: DocBook reference pages
#: whose prose holds cross-references only, and the same pages with linked option lists and
#: external links besides (PostgreSQL's refentries, two classes at 64 URLs in flight); types
#: differ by three or more (QDoc's class pages from its overviews, gtk-doc's command pages from
#: its reference pages; docs/design.md, item 22).
ONE_SECTION_SLACK = 2


def nested(a: frozenset[str], b: frozenset[str], chrome: set[str], pages: int = 0) -> bool:
    """The smaller class's core sections, chrome aside, are the other's but for
    ``NESTED_SLACK`` (or ``NESTED_SLACK_SHARE`` of them, when that is more), and they
    share ``NESTED_EVIDENCE`` of them: one template whose optional sections split it
    (Haddock modules with or without instances; erl_docgen reference pages with or
    without a data-types section, which also show one of their own; rustdoc modules
    with or without structs, traits, functions …), not two types (a stub page whose
    only links are the chrome shares no section with any class and is not taken).
    Across the five corpora, pairs of classes of two types lacked two or three of
    each other's core sections.

    A core of one section is nested too when it is all the other's but
    ``ONE_SECTION_SLACK`` sections more, and the smaller class has ``pages`` ≥
    ``ONE_SECTION_PAGES``: prose pages whose only links of their own are
    cross-references, and the same pages with external links besides (DocBook's
    sections in PostgreSQL's manual: one type in three classes, F* 0.76), or with
    linked option lists too (its reference pages).  Not three more: a class page shows
    an overview's prose links and three sections more (QDoc), a command's page a
    reference page's see-also list and seven more (gtk-doc).  Nor when that one section
    is spelled in bare tags below the body (``html/body/p/a``): any page that writes links in its
    paragraphs shows it, and SQLite's C API pages and release notes, two types of one
    generator, met in one class that way (docs/design.md, item 24).
    """
    a, b = a - chrome, b - chrome
    small, large = (a, b) if len(a) <= len(b) else (b, a)
    if len(small & large) >= NESTED_EVIDENCE:
        return len(small - large) <= max(NESTED_SLACK, int(NESTED_SLACK_SHARE * len(small)))
    return (pages >= ONE_SECTION_PAGES and bool(small) and small <= large
            and len(large - small) <= ONE_SECTION_SLACK and all(map(_annotated, small)))


def _annotated(path: str) -> bool:
    """Some step of the collection path below the body carries a class or an id (``tag.class``,
    ``tag#id``); a class on the body names the site's frame, as on every path of PostgreSQL's manual."""
    return any("." in step or "#" in step for step in path.split("/")[2:])


def _wrapper(path: str) -> str | None:
    """The path up to its first step below ``html`` that carries a class (``html/body/div.section``,
    ``html/body.rustdoc.struct``), or None."""
    steps = path.split("/")
    for i, step in enumerate(steps[1:], 1):
        if "." in step.split("#", 1)[0]:
            return "/".join(steps[:i + 1])
    return None


def kind_wrapper(core: frozenset[str], chrome: set[str]) -> str | None:
    """The one classed element every core section beyond the chrome lies under, or None."""
    found = {_wrapper(p) for p in core - chrome}
    return found.pop() if len(found) == 1 else None


def kind_wrappers(cores: Iterable[frozenset[str]], chrome: set[str]) -> set[str]:
    """The wrappers (``kind_wrapper``) that name a page's kind: those of a depth at which the
    site's classes show two or more.  A generator that wraps a page's whole content in an element
    named after the page's kind (makeinfo's ``div.section`` / ``div.chapter``, DocBook's
    ``div.sect1`` / ``div.refentry``, rustdoc's and JDK 17 Javadoc's body classes) says so on every
    page; one wrapper on every page (Doxygen's ``div.contents``) names nothing.  Two classes under
    one kind's wrapper differ by optional sections unless ``told_apart`` says otherwise
    (docs/design.md, item 44)."""
    depths: dict[int, set[str]] = defaultdict(set)
    for core in cores:
        w = kind_wrapper(core, chrome)
        if w is not None:
            depths[w.count("/")].add(w)
    return {w for found in depths.values() if len(found) >= 2 for w in found}


def one_kind(a: frozenset[str], b: frozenset[str], chrome: set[str], kinds: set[str]) -> bool:
    """Both cores lie under one kind's wrapper (``kind_wrappers``), whatever content sections they
    share: the generator names the kind, prose puts its links where it likes (docs/design.md, item 48)."""
    w = kind_wrapper(a, chrome)
    return w is not None and w in kinds and w == kind_wrapper(b, chrome)


@dataclass(frozen=True)
class Merge:
    """One class folded into another by refinement, and why."""

    kept: int
    merged: int
    similarity: float  #: Jaccard of the two fingerprints
    update: int  #: model update after which it happened


class Refiner:
    """Merges classes that are one template split over several classes.

    * ``pairs(model, frontier)`` -> [(a, b, similarity)]: the class pairs the
      rules of the module docstring approve, a < b.
    * ``refine(model, frontier, update)`` -> [Merge]: merges every approved pair
      transitively (union-find), in the model and the frontier; the oldest class
      id is kept.  Deterministic: a replayed crawl refines the same way.
    """

    def __init__(self, similarity: float = FINGERPRINT_SIMILARITY, occurrence: float = FINGERPRINT_OCCURRENCE,
                 support: int = 10,
                 share: float = 0.9, min_members: int = 2) -> None:
        self.similarity = similarity
        self.occurrence = occurrence
        self.support = support
        self.share = share
        self.min_members = min_members

    def pairs(self, model: SiteModel, frontier: Frontier) -> list[tuple[int, int, float]]:
        """Class pairs (a < b) that should merge, with their fingerprint similarity.

        Fingerprints first (a few dozen classes); the collections — every known
        link — are scanned only when some pair is alike enough to need it.
        """
        classes = model.classes
        prints = {cid: cls.fingerprint(self.occurrence) for cid, cls in classes.items()}
        alike: dict[tuple[int, int], float] = {}
        cores = {cid: core_sections(cls) for cid, cls in classes.items()}
        shared_by_most = site_chrome(model)
        # members with links of their own: a page whose links are all the chrome is no evidence
        sized = {cid: max(1, len(with_links_of_their_own(model, cls.members, shared_by_most)[0]))
                 for cid, cls in classes.items()}
        kinds = kind_wrappers(cores.values(), shared_by_most)
        # with one type, the "chrome" is that type's core: where most classes show nothing beyond
        # it, it is no frame, and skeletons alike are the evidence (Node.js's Markdown pages)
        grown = [cid for cid, cls in classes.items() if cls.size >= self.min_members]
        one_type = sum(1 for cid in grown if not cores[cid] - shared_by_most) >= FRAME_ONLY_SHARE * len(grown)
        for a, b in combinations(sorted(classes), 2):
            small = min(classes[a].size, classes[b].size) < self.min_members
            sim = jaccard(prints[a], prints[b])
            # sections of their own are content, not two templates, under one kind's wrapper
            same_kind = one_kind(cores[a], cores[b], shared_by_most, kinds)
            if not same_kind and told_apart(classes[a].path_counts, sized[a], classes[b].path_counts, sized[b],
                                            chrome=shared_by_most):
                continue
            # page skeletons alike are one template only where the links agree on some content
            # section too: rustdoc's item kinds share one skeleton and nothing but the chrome
            content = (cores[a] & cores[b]) - shared_by_most
            frame_only = one_type and not (cores[a] - shared_by_most or cores[b] - shared_by_most)
            if (sim >= (TWIN_SIMILARITY if small else self.similarity) and (content or frame_only)) or (
                    not small and sim >= NESTED_SIMILARITY and (nested(
                        cores[a], cores[b], shared_by_most, min(classes[a].size, classes[b].size))
                        or same_kind)):
                alike[(a, b)] = sim
        if not alike:
            return []
        cocited: set[tuple[int, int]] = set()
        vouched: set[int] = set()
        page_class = model.page_class
        for coll in frontier.collections.values():
            targets = {k for k, n in coll.leads_to.items() if n and k in classes}
            targets.update(page_class[u] for u in coll.urls if u in page_class)
            cocited.update(pair for pair in combinations(sorted(targets), 2) if pair in alike)
            total = sum(coll.leads_to.values())
            if total >= self.support:
                top, n = max(coll.leads_to.items(), key=lambda kv: (kv[1], -kv[0]))
                if n >= self.share * total:
                    vouched.add(top)
        return [(a, b, sim) for (a, b), sim in sorted(alike.items())
                if (a, b) in cocited and not (a in vouched and b in vouched)
                and not self._splits_again(model, a, b, shared_by_most)]

    @staticmethod
    def _splits_again(model: SiteModel, a: int, b: int, chrome: set[str]) -> bool:
        """The class ``a`` and ``b`` would make holds a group the regroup splits off (rule 5)."""
        members = model.classes[a].members + model.classes[b].members
        schemas, counts = with_links_of_their_own(model, members, chrome)
        if counts is None:
            counts = model.classes[a].path_counts + model.classes[b].path_counts
        return told_apart_group(schemas, counts, chrome) is not None

    def refine(self, model: SiteModel, frontier: Frontier, update: int,
               pairs: list[tuple[int, int, float]] | None = None) -> list[Merge]:
        """Merge every approved pair (or those of ``pairs``), transitively (union-find); the
        oldest class id is kept."""
        if pairs is None:
            pairs = self.pairs(model, frontier)
        if not pairs:
            return []
        uf: UnionFind[int] = UnionFind()
        best: dict[int, float] = defaultdict(float)
        for a, b, sim in pairs:
            uf.union(a, b)
            best[a] = max(best[a], sim)
            best[b] = max(best[b], sim)
        merges = []
        for group in uf.groups():
            keep, *rest = sorted(group)
            for gone in rest:
                model.merge_classes(keep, gone)
                frontier.merge_classes(keep, gone)
                merges.append(Merge(keep, gone, round(best[gone], 4), update))
        return merges
