"""UXClust: cluster template-generated pages by the XPath of their inbound link.

Grigalis & Čenys, *Using XPaths of inbound links to cluster template-generated
web pages* (UXClust), §3.3 with the parameters of §4.5:

1. **Unrefined clusters**: pages grouped by the exact XPath of their inbound
   link (§3.3, "first step approximate clustering").  The inbound link of a
   page is the *first* link that led to its URL: the topmost occurrence on
   the page where it was first seen (§3.3: "we extract only the first one …
   located in the top most part of the Web page tree") — who decides is the
   caller: the crawl store takes the first link in crawl order
   (:mod:`structcrawl.store.cluster`), :func:`cluster_pages` takes what it is
   given.
2. **Cut-off** (§3.3, §4.1): groups with fewer than ``cutoff`` pages (100 in
   the paper; by default here the same share of the crawl, see
   ``CUTOFF_SHARE``) are dropped; their pages are *unclustered* (counted, and
   listed on request), as are pages with no inbound link (the start page).
3. **Fingerprints** (§3.3): ``samples`` pages of each remaining group (5 in
   the paper, 3 already good in §4.5, Fig. 9; 10 by default here); the
   fingerprint is the set of tag paths on at least ``occurrence`` (0.3) of
   them (:func:`structcrawl.analysis.fingerprint.fingerprint`).
4. **Merge** (§3.3): groups whose fingerprints have Jaccard ≥ ``similarity``
   (0.8, where precision and recall cross in §4.5, Fig. 7) are united with
   union-find (:func:`structcrawl.analysis.fingerprint.merge_groups`) —
   except two parts whose sampled pages each show sections the other's never
   do (:func:`split_told_apart`, not in the paper); a merged group is
   fingerprinted again from the ``samples`` lowest-ranked pages among its
   parts' samples, and merging repeats "until no new clusters can be formed".

Sampling is by rank: every page carries a rank (smaller is sampled first), a
group's sample is its ``samples`` lowest-ranked pages, so a merged group's
sample is exactly the ``samples`` lowest-ranked pages of all its members, and
runs are reproducible (§4.5 notes random samples change results by a few
percent).  The crawl store ranks by a hash of the page id computed in SQL;
:func:`cluster_pages` by :func:`structcrawl.analysis.fingerprint.sample`'s keyed
BLAKE2b of the URL.

The group key is whatever the caller groups by: the exact XPath (the paper,
``structcrawl cluster --group-by xpath``) or, by default in ``structcrawl
cluster``, the inbound link's link-collection path (Crescenzi et al. §2), which
does not split a list by position.

Pure Python, no SQL, no Scrapy: :func:`cluster_groups` works from group sizes
and samples (what a database hands out without reading every page);
:func:`cluster_pages` runs the whole method in memory over
``(url, inbound xpath, tag paths)`` triples.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from structcrawl.analysis.fingerprint import fingerprint, merge_groups, sample_rank
from structcrawl.core.model import FINGERPRINT_OCCURRENCE, FINGERPRINT_SIMILARITY, told_apart
from structcrawl.core.unionfind import jaccard

#: The cut-off as a share of the crawl (UXClust §3.3, Table 1): the paper drops groups under 100 pages on
#: sites of 76,503 pages on average, and §4.5 (Fig. 10) warns that a cut-off too high for the site leaves no
#: group to cluster.  A cut-off fixed in pages cannot serve a 400-page crawl (no group reaches 100, or even
#: 20: everything unclustered) and a million-page one (hundreds of tiny groups kept, each sampled and
#: fingerprinted) alike; the paper's ratio scales it: 4 pages on the 2,952-page demo site, 1,308 at a million.
CUTOFF_SHARE = 100 / 76_503
#: ... but never under two pages: a group of one page shows no template, only a page.
MIN_CUTOFF = 2


def relative_cutoff(pages: int) -> int:
    """The cut-off for a crawl of ``pages`` pages (see ``CUTOFF_SHARE``)."""
    return max(MIN_CUTOFF, math.ceil(pages * CUTOFF_SHARE))


@dataclass(frozen=True)
class Parameters:
    """The four thresholds of UXClust §4.5 and the sampling seed.

    Two differ from the paper's.  The cut-off defaults to
    :func:`relative_cutoff` of the crawl's size.  Ten samples, not five: a
    template with optional parts (a class with or without fields) gives
    fingerprints that vary from sample to sample, so two groups of one template
    looked less alike than they are (§4.5, Fig. 9, measures 3 to 5 samples on
    product pages only).  The similarity stays 0.8: look-alike templates that
    differ by a section or two (the demo's author and publisher profiles,
    Jaccard 0.88) are kept apart by :func:`split_told_apart`, not by a higher
    threshold, which splits documentation templates with optional parts
    (docs/benchmarks.md, "Offline clustering at its defaults").
    """

    cutoff: int | None = None  #: smallest unrefined cluster kept (pages); None: relative to the crawl's size
    samples: int = 10  #: pages sampled per cluster for its fingerprint
    occurrence: float = FINGERPRINT_OCCURRENCE  #: share of the samples a tag path needs to be in the fingerprint
    similarity: float = FINGERPRINT_SIMILARITY  #: Jaccard of two fingerprints at which their clusters merge
    seed: int = 0  #: sampling seed

    def __post_init__(self) -> None:
        if self.cutoff is not None and self.cutoff < 1:
            raise ValueError(f"cutoff must be >= 1, got {self.cutoff}")
        if self.samples < 1:
            raise ValueError(f"samples must be >= 1, got {self.samples}")
        if not 0.0 <= self.occurrence <= 1.0:
            raise ValueError(f"occurrence must be in [0, 1], got {self.occurrence}")
        if not 0.0 < self.similarity <= 1.0:
            raise ValueError(f"similarity must be in (0, 1], got {self.similarity}")

    def cutoff_for(self, pages: int) -> int:
        """The cut-off applied to a crawl of ``pages`` pages."""
        return relative_cutoff(pages) if self.cutoff is None else self.cutoff


@dataclass(frozen=True, order=True)
class SampledPage:
    """A page drawn for a fingerprint: its rank (smaller first), URL, tag paths and sections (the
    link collections it shows, any hashable keys; empty: unknown, never told apart)."""

    rank: Any
    url: str
    tag_paths: frozenset[str]
    sections: frozenset[Any] = frozenset()


@dataclass(frozen=True)
class Cluster:
    """A refined cluster: one or more unrefined clusters (inbound XPaths) merged."""

    id: int
    size: int
    xpaths: tuple[Any, ...]  #: its unrefined clusters (inbound XPaths, or their ids in a store), largest first
    fingerprint: frozenset[str]
    samples: tuple[str, ...]  #: URLs of the pages its fingerprint was computed from, by rank


@dataclass(frozen=True)
class Clustering:
    clusters: tuple[Cluster, ...]  #: largest first; ids 1, 2, … in that order
    unclustered: int  #: pages in unrefined clusters under the cut-off, or without an inbound link
    groups: int  #: unrefined clusters (distinct inbound XPaths)
    groups_kept: int  #: unrefined clusters at or above the cut-off
    cutoff: int  #: the cut-off applied (pages)

    @property
    def pages(self) -> int:
        return sum(c.size for c in self.clusters) + self.unclustered

    def cluster_of_xpath(self) -> dict[Any, int]:
        """Inbound XPath → cluster id, for the XPaths of kept groups."""
        return {x: c.id for c in self.clusters for x in c.xpaths}


def lowest(pages: Iterable[SampledPage], k: int) -> list[SampledPage]:
    """The ``k`` lowest-ranked pages, by rank (URL breaks ties)."""
    return heapq.nsmallest(k, pages)


def cluster_groups(sizes: Mapping[Any, int], samples: Mapping[Any, Sequence[SampledPage]],
                   params: Parameters = Parameters(), unlinked: int = 0) -> Clustering:
    """UXClust from unrefined clusters (UXClust §3.3, steps 2–4).

    Args:
        sizes: inbound XPath (or any sortable key standing for one) → number of pages.
        samples: for every XPath with ``sizes[x] >= params.cutoff``, its
            ``params.samples`` lowest-ranked pages (more are fine: the lowest
            are taken).
        params: thresholds.
        unlinked: pages with no inbound link (counted as unclustered).
    """
    cutoff = params.cutoff_for(sum(sizes.values()) + unlinked)
    kept = sorted(x for x, n in sizes.items() if n >= cutoff)
    unclustered = unlinked + sum(n for n in sizes.values() if n < cutoff)
    s = params.samples
    members: dict[Any, list[Any]] = {x: [x] for x in kept}
    pool: dict[Any, list[SampledPage]] = {}
    prints: dict[Any, frozenset[str]] = {}
    for x in kept:
        if x not in samples or not samples[x]:
            raise ValueError(f"no sampled pages for the kept group {x!r}")
        pool[x] = lowest(samples[x], s)
        prints[x] = fingerprint((p.tag_paths for p in pool[x]), params.occurrence)
    while True:
        merged = [joined for similar in merge_groups(prints, threshold=params.similarity)
                  for joined in split_told_apart(similar, prints, pool, params.similarity)]
        if len(merged) == len(prints):
            break
        for reps in merged:
            if len(reps) == 1:
                continue
            head, rest = reps[0], reps[1:]
            for r in rest:
                members[head].extend(members.pop(r))
                pool[head].extend(pool.pop(r))
                del prints[r]
            pool[head] = lowest(pool[head], s)
            prints[head] = fingerprint((p.tag_paths for p in pool[head]), params.occurrence)
    order = sorted(members, key=lambda h: (-sum(sizes[x] for x in members[h]), h))
    clusters = tuple(
        Cluster(
            id=i,
            size=sum(sizes[x] for x in members[h]),
            xpaths=tuple(sorted(members[h], key=lambda x: (-sizes[x], x))),
            fingerprint=prints[h],
            samples=tuple(p.url for p in pool[h]),
        )
        for i, h in enumerate(order, 1)
    )
    return Clustering(clusters, unclustered, len(sizes), len(kept), cutoff)


def split_told_apart(similar: list[Any], prints: Mapping[Any, frozenset[str]],
                     pool: Mapping[Any, Sequence[SampledPage]], similarity: float) -> list[list[Any]]:
    """A set of groups found similar (one component of :func:`merge_groups`), split where two templates
    look alike: its similar pairs joined most similar first, but never two parts that are told apart by
    their sampled pages' sections (:func:`structcrawl.core.model.told_apart`: each has link collections
    on nearly all its samples that the other's never show — the demo's author and publisher profiles,
    Jaccard 0.88, or news index and month archive, 0.82).  Each part is a list in ``similar``'s order."""
    if len(similar) == 1 or not any(p.sections for x in similar for p in pool[x]):
        return [similar]
    order = {x: i for i, x in enumerate(similar)}
    part = dict(order)  # group -> its part, named by the part's first group's index
    parts: dict[int, list[Any]] = {i: [x] for i, x in enumerate(similar)}
    counts: dict[int, Counter] = {part[x]: Counter(sec for p in pool[x] for sec in p.sections) for x in similar}
    size = {part[x]: len(pool[x]) for x in similar}
    pairs = sorted((-j, i, k) for i, a in enumerate(similar) for k, b in enumerate(similar[i + 1:], i + 1)
                   if (j := jaccard(prints[a], prints[b])) >= similarity)
    for _, i, k in pairs:
        a, b = part[similar[i]], part[similar[k]]
        if a == b or told_apart(counts[a], size[a], counts[b], size[b]):
            continue
        a, b = min(a, b), max(a, b)
        for x in parts[b]:
            part[x] = a
        parts[a].extend(parts.pop(b))
        counts[a] += counts.pop(b)
        size[a] += size.pop(b)
    return [sorted(parts[i], key=order.__getitem__) for i in sorted(parts)]


def cluster_pages(pages: Iterable[tuple[str, str | None, frozenset[str]]],
                  params: Parameters = Parameters()) -> tuple[Clustering, dict[str, int | None]]:
    """UXClust in memory over ``(url, inbound xpath or None, tag paths)`` of every page.

    A URL listed twice counts once (its first entry).  Pages are sampled by
    a keyed BLAKE2b rank of their URL (:func:`structcrawl.analysis.fingerprint.sample`'s
    order), at most ``params.samples`` tag-path sets are held per group.

    Returns the clustering and, per URL, its cluster id (None: unclustered).
    """
    xpath_of: dict[str, str | None] = {}
    sizes: Counter[str] = Counter()
    heaps: dict[str, list[_Reverse]] = {}
    s = params.samples
    for url, xpath, tag_paths in pages:
        if url in xpath_of:
            continue
        xpath_of[url] = xpath
        if xpath is None:
            continue
        sizes[xpath] += 1
        page = SampledPage(sample_rank(params.seed, url), url, frozenset(tag_paths))
        heap = heaps.setdefault(xpath, [])
        if len(heap) < s:
            heapq.heappush(heap, _Reverse(page))
        elif page < heap[0].page:
            heapq.heapreplace(heap, _Reverse(page))
    unlinked = sum(1 for x in xpath_of.values() if x is None)
    samples = {x: [r.page for r in heap] for x, heap in heaps.items()}
    result = cluster_groups(sizes, samples, params, unlinked=unlinked)
    of_xpath = result.cluster_of_xpath()
    return result, {url: of_xpath.get(x) if x is not None else None for url, x in xpath_of.items()}


class _Reverse:
    """Reverses the order of a page, so a heap keeps the ``s`` lowest-ranked ones (max-heap)."""

    __slots__ = ("page",)

    def __init__(self, page: SampledPage) -> None:
        self.page = page

    def __lt__(self, other: "_Reverse") -> bool:
        return other.page < self.page
