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
   the paper) are dropped; their pages are *unclustered* (counted, and listed
   on request), as are pages with no inbound link (the start page).
3. **Fingerprints** (§3.3): ``samples`` pages of each remaining group (5 in
   the paper, 3 already good in §4.5, Fig. 9); the fingerprint is the set of
   tag paths on at least ``occurrence`` (0.3) of them
   (:func:`structcrawl.analysis.fingerprint.fingerprint`).
4. **Merge** (§3.3): groups whose fingerprints have Jaccard ≥ ``similarity``
   (0.8, where precision and recall cross in §4.5, Fig. 7) are united with
   union-find (:func:`structcrawl.analysis.fingerprint.merge_groups`); a merged group
   is fingerprinted again from the ``samples`` lowest-ranked pages among its
   parts' samples, and merging repeats "until no new clusters can be formed".

Sampling is by rank: every page carries a rank (smaller is sampled first), a
group's sample is its ``samples`` lowest-ranked pages, so a merged group's
sample is exactly the ``samples`` lowest-ranked pages of all its members, and
runs are reproducible (§4.5 notes random samples change results by a few
percent).  The crawl store ranks by a hash of the page id computed in SQL;
:func:`cluster_pages` by :func:`structcrawl.analysis.fingerprint.sample`'s keyed
BLAKE2b of the URL.

The group key is whatever the caller groups by: the exact XPath (the paper)
or, in ``structcrawl cluster --group-by path``, the inbound link's
link-collection path (Crescenzi et al. §2), which does not split a list by position.

Pure Python, no SQL, no Scrapy: :func:`cluster_groups` works from group sizes
and samples (what a database hands out without reading every page);
:func:`cluster_pages` runs the whole method in memory over
``(url, inbound xpath, tag paths)`` triples.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from structcrawl.analysis.fingerprint import fingerprint, merge_groups, sample_rank


@dataclass(frozen=True)
class Parameters:
    """The four thresholds of UXClust §4.5 (paper defaults) and the sampling seed."""

    cutoff: int = 100  #: smallest unrefined cluster kept (pages)
    samples: int = 5  #: pages sampled per cluster for its fingerprint
    occurrence: float = 0.3  #: share of the samples a tag path needs to be in the fingerprint
    similarity: float = 0.8  #: Jaccard of two fingerprints at which their clusters merge
    seed: int = 0  #: sampling seed

    def __post_init__(self) -> None:
        if self.cutoff < 1:
            raise ValueError(f"cutoff must be >= 1, got {self.cutoff}")
        if self.samples < 1:
            raise ValueError(f"samples must be >= 1, got {self.samples}")
        if not 0.0 <= self.occurrence <= 1.0:
            raise ValueError(f"occurrence must be in [0, 1], got {self.occurrence}")
        if not 0.0 < self.similarity <= 1.0:
            raise ValueError(f"similarity must be in (0, 1], got {self.similarity}")


@dataclass(frozen=True, order=True)
class SampledPage:
    """A page drawn for a fingerprint: its rank (smaller first), URL and tag paths."""

    rank: Any
    url: str
    tag_paths: frozenset[str]


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
    kept = sorted(x for x, n in sizes.items() if n >= params.cutoff)
    unclustered = unlinked + sum(n for n in sizes.values() if n < params.cutoff)
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
        merged = merge_groups(prints, threshold=params.similarity)
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
    return Clustering(clusters, unclustered, len(sizes), len(kept))


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
