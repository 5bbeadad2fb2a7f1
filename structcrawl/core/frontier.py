"""The frontier: a priority queue of link collections (Crescenzi et al. §3.3).

A link collection here is a (source class, path) pair: the links found under
one link-collection path on all pages of one class, so a batch of ``n`` URLs
can come from many pages of that class and the model learns which class each
(class, path) leads to.

Priorities, highest first:

1. collections of singleton classes never tried (Crescenzi et al.: "always assigned
   top priority"; once tried they rank as any other tried collection — the
   one-page deprecated list of Javadoc otherwise took batch after batch);
2. collections never tried: nobody knows yet where they lead;
3. collections that can still teach the model something;
4. collections already known to lead to one class with good support
   (``saturation_support`` pages, ``saturation_share`` of them in one class) —
   kept, not dropped: they are where support comes from.  This holds for a
   singleton class's collections too: a one-page class tree or index whose
   thousand links are known to lead to class pages stops coming first (on
   commons-math3 the overview tree's list took every batch until the frontier
   ran dry).

Within a tier, ``densest`` prefers collections with many links relative to
the class's outgoing links, ``sparsest`` the thin ones (menus, new regions);
ties go to the older collection.  Priorities depend on the current model, so
they are computed when a batch is popped (a linear scan over collections with
pending URLs — a few thousand at most, once per batch of up to ``n`` pages).

The frontier never hands out a URL twice.
"""

from __future__ import annotations

import math
import zlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping
from urllib.parse import urlsplit

from structcrawl.core.deadregions import DeadRegions
from structcrawl.core.model import FINGERPRINT_OCCURRENCE

STRATEGIES = ("densest", "sparsest")
#: URLs a collection holding the stop untried is probed with once the model held (``pop`` with
#: ``found_before``), instead of ``probe_size``: what is left to learn of it is whether it leads where
#: the model does not predict; a page mispredicted restarts the window, and the collection, tried,
#: gets ``batch_size`` URLs in its turn.  Two, not one: one "No usage of" stub of commons-math3, alone,
#: was put where predicted (sparsest, 16 in flight: F* 0.990 -> 0.815; docs/design.md, item 50)
SETTLED_PROBE_SIZE = 2


def _draw_key(url: str, seed: int) -> int:
    """The audit's hash of ``url``: its path and query only, from ``seed``."""
    parts = urlsplit(url)
    return zlib.crc32(f"{parts.path}?{parts.query}".encode(), seed)


@dataclass
class Collection:
    source: int  #: class id of the pages the links were found on
    path: str
    seq: int  #: creation order, the tie-breaker
    urls: list[str] = field(default_factory=list)  #: distinct URLs, discovery order
    known: set[str] = field(default_factory=set)
    cursor: int = 0  #: urls[:cursor] were handed out or skipped
    tried: bool = False  #: a batch of it was handed out
    leads_to: Counter = field(default_factory=Counter)  #: class id -> fetched pages
    fetched: int = 0  #: URLs of this collection that were tried
    duplicates: int = 0  #: of them, failures and copies of pages modelled before (another URL, same features)
    trap: bool = False  #: found to hand out copies only: never served again
    pages: int = 0  #: pages of the source class the links were found on

    @property
    def key(self) -> tuple[int, str]:
        return (self.source, self.path)


@dataclass(frozen=True)
class Batch:
    """URLs handed out together: the pages of one collection to fetch."""

    key: tuple[int, str] | None  #: None for the seed and an audit (``Frontier.audit``)
    urls: tuple[str, ...]
    #: an audit's: the collection each URL was drawn from (not part of the batch's identity)
    sources: tuple[tuple[int, str], ...] = field(default=(), compare=False)


class Frontier:
    """A priority queue of link collections (see the module docstring for the tiers).

    * ``seed(url)`` -> Batch: the start URL, once.
    * ``add_links(source_class, collections)``: links of one modelled page.
    * ``pop(class_size)`` -> Batch | None: up to ``batch_size`` URLs of the top
      collection (``probe_size`` for one never tried), never a URL handed out
      before; None when nothing is pending.
    * ``audit(size)`` -> Batch: up to ``size`` pending URLs drawn from every
      collection by a fixed hash, leaning toward the collections tried least
      (the explorer's audit before a stop).
    * ``record(key, classes, duplicates, failures)`` -> bool: where a popped
      batch's pages went; True when the collection turned out a trap (emptied).
    * ``merge_classes(keep, gone)``, ``rebuild(pages, page_class, aliases)``,
      ``respell(pages, spelled_as)``: follow the model when refinement merges
      classes, re-clustering redraws them or the path spelling changes.
    * ``mark_issued(urls)``, ``take(batch)``: URLs fetched by other means, a
      replayed batch.
    """

    def __init__(self, strategy: str = "densest", batch_size: int = 10,
                 saturation_support: int = 10, saturation_share: float = 0.9, trap_pages: int = 10,
                 probe_size: int = 5, audit_seed: int = 0) -> None:
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {strategy!r} (choose from {', '.join(STRATEGIES)})")
        self.strategy = strategy
        self.batch_size = batch_size
        self.saturation_support = saturation_support
        self.saturation_share = saturation_share
        self.trap_pages = trap_pages
        #: the audit's draw starts its hash here; another seed draws other pages, to measure
        #: how much an outcome hangs on the draw (benchmarks/order_spread.py --audit-seeds)
        self.audit_seed = audit_seed
        #: URLs handed out from a collection the first time: enough to see where it leads
        #: (Crescenzi et al. fetches n = ``batch_size`` every time; a Javadoc site has 100+
        #: collections, 15 classes × navigation bars, and trying each with n pages
        #: took 40 % of commons-math3); later batches take ``batch_size``
        self.probe_size = min(probe_size, batch_size)
        self.collections: dict[tuple[int, str], Collection] = {}
        self.issued: set[str] = set()
        self._seq = 0
        self._class_links: Counter = Counter()  #: class id -> links over all its collections
        #: key of a collection folded into another by a class merge -> the key it lives under
        self._renamed: dict[tuple[int, str], tuple[int, str]] = {}
        #: directories and file types where ``trap_pages`` URLs failed and none succeeded: their URLs
        #: are never handed out
        self.dead = DeadRegions(trap_pages)

    # -- filling -------------------------------------------------------------
    def seed(self, url: str) -> Batch:
        self.issued.add(url)
        return Batch(None, (url,))

    def add_links(self, source: int, collections: dict[str, Iterable[str]]) -> None:
        """Links of one page of class ``source``: path -> URLs (already in scope)."""
        for path, urls in collections.items():
            coll = self.collections.get((source, path))
            if coll is None:
                coll = self.collections[(source, path)] = Collection(source, path, self._seq)
                self._seq += 1
            coll.pages += 1
            for url in urls:
                if url not in coll.known:
                    coll.known.add(url)
                    coll.urls.append(url)
                    self._class_links[source] += 1

    def mark_issued(self, urls: Iterable[str]) -> None:
        """URLs fetched by other means (resume, redirects) are never handed out again."""
        self.issued.update(urls)

    def take(self, batch: Batch) -> None:
        """Replay a batch handed out earlier (resume from a store): same state as ``pop`` left."""
        if batch.key in self.collections:
            self.collections[batch.key].tried = True
        self.issued.update(batch.urls)

    def record(self, key: tuple[int, str] | None, classes: Iterable[int], duplicates: int = 0,
               failures: int = 0) -> bool:
        """Which classes the pages of a popped collection were put in (``duplicates`` of them
        copies of known pages; ``failures`` more URLs gave no page).  A collection whose
        first ``trap_pages`` URLs or more were 90 % copies or failures is a trap — the same
        page under endless URLs (``index.html?<anything>``), links robots.txt forbids, dead
        links — and is emptied; returns True then."""
        seen = set()
        while key not in self.collections and key in self._renamed and key not in seen:
            seen.add(key)  # its class was merged or split while the batch was out
            key = self._renamed[key]
        coll = self.collections.get(key) if key is not None else None
        if coll is None:
            return False
        classes = list(classes)
        coll.leads_to.update(classes)
        coll.fetched += len(classes) + failures
        coll.duplicates += duplicates + failures
        if not coll.trap and coll.fetched >= self.trap_pages and coll.duplicates >= 0.9 * coll.fetched:
            coll.trap = True
            return True
        return False

    def merge_classes(self, keep: int, gone: int) -> None:
        """Class ``gone`` was folded into ``keep``: fold its collections too."""
        for key in [k for k in self.collections if k[0] == gone]:
            coll = self.collections.pop(key)
            self._renamed[key] = (keep, coll.path)
            target = self.collections.get((keep, coll.path))
            if target is None:
                coll.source = keep
                self.collections[(keep, coll.path)] = coll
                continue
            for url in coll.urls:
                if url not in target.known:
                    target.known.add(url)
                    target.urls.append(url)
            target.leads_to.update(coll.leads_to)
            target.seq = min(target.seq, coll.seq)
            # what one path was found to do holds for the same path of the merged class:
            # a trap's failures would otherwise be fetched again under the new key
            target.fetched += coll.fetched
            target.duplicates += coll.duplicates
            target.pages += coll.pages
            target.trap = target.trap or coll.trap
        for coll in self.collections.values():
            if gone in coll.leads_to:
                coll.leads_to[keep] += coll.leads_to.pop(gone)
        self._class_links[keep] += self._class_links.pop(gone, 0)

    def split_class(self, old: int, new: int, pages: Iterable[dict[str, Iterable[str]]]) -> None:
        """Pages of class ``old`` (their collections each) now form class ``new``: their
        collections become ``new``'s.  What a path of ``old`` was learnt to lead to — tried,
        the classes it led to, its copies and failures — holds for the same path of ``new``:
        the links are the same, only the class of the pages they sit on changed.  A path no
        page of ``old`` keeps moves whole (its URLs handed out, its batches out): two
        collections of the same links would each fetch ten dead links to find a trap."""
        pages = list(pages)
        moving = Counter(path for collections in pages for path in collections)
        for path, n in sorted(moving.items()):
            before = self.collections.get((old, path))
            if before is None:
                continue
            before.pages -= n
            if (new, path) in self.collections:
                continue
            if before.pages <= 0:
                del self.collections[(old, path)]
                self._renamed[(old, path)] = (new, path)
                before.source, before.pages = new, 0
                self.collections[(new, path)] = before
            else:
                self.collections[(new, path)] = Collection(
                    new, path, self._seq, tried=before.tried, leads_to=Counter(before.leads_to),
                    fetched=before.fetched, duplicates=before.duplicates, trap=before.trap)
                self._seq += 1
        for collections in pages:
            self.add_links(new, collections)

    # -- popping -------------------------------------------------------------
    def saturated(self, coll: Collection) -> bool:
        total = sum(coll.leads_to.values())
        if total < self.saturation_support:
            return False
        return max(coll.leads_to.values()) >= self.saturation_share * total

    def _skipped(self, url: str) -> bool:
        return url in self.issued or self.dead.dead(url)

    def _pending(self, coll: Collection) -> bool:
        if coll.trap:
            return False
        while coll.cursor < len(coll.urls) and self._skipped(coll.urls[coll.cursor]):
            coll.cursor += 1
        return coll.cursor < len(coll.urls)

    def priority(self, coll: Collection, class_size: Callable[[int], int]) -> tuple:
        if self.saturated(coll):
            tier = 0
        elif not coll.tried:
            tier = 3 if class_size(coll.source) <= 1 else 2
        else:
            tier = 1
        density = len(coll.urls) / max(1, self._class_links[coll.source])
        score = density if self.strategy == "densest" else -density
        return (tier, score, -coll.seq)

    def pop(self, class_size: Callable[[int], int], found_before: int | None = None) -> Batch | None:
        """The next batch: up to ``batch_size`` not-yet-issued URLs of the top collection.
        With ``found_before``, the collections ``untried(class_size, found_before)`` counts
        come first, each probed with ``SETTLED_PROBE_SIZE`` URLs: the model is otherwise stable
        and only they hold the stop; without it a stream of newer collections, each new page's
        own, would keep them waiting.
        """
        blocking = [] if found_before is None else [
            c for c in self.collections.values() if self._holds_stop(c, class_size, found_before)]
        best, best_prio = None, None
        for coll in blocking or self.collections.values():
            if not self._pending(coll):
                continue
            prio = self.priority(coll, class_size)
            if best_prio is None or prio > best_prio:
                best, best_prio = coll, prio
        if best is None:
            return self.pop(class_size) if blocking else None
        size = self.batch_size if best.tried else SETTLED_PROBE_SIZE if blocking else self.probe_size
        best.tried = True
        urls = []
        while best.cursor < len(best.urls) and len(urls) < size:
            url = best.urls[best.cursor]
            best.cursor += 1
            if not self._skipped(url):
                self.issued.add(url)
                urls.append(url)
        return Batch(best.key, tuple(urls))

    def rebuild(self, pages: Iterable[tuple[int, dict[str, Iterable[str]]]], page_class: Mapping[str, int],
                aliases: Mapping[str, str]) -> None:
        """Collections anew from the modelled pages — (class id, collections) each, in
        modelling order — after the classes or the path spelling changed
        (``recluster``).  What was fetched is read off the URLs: a collection with
        a fetched URL was tried, leads to the classes of its fetched pages, and
        counts its failures and copies toward the trap rule; the URLs handed out
        stay handed out."""
        old = self._collect_anew(pages)
        for key, coll in self.collections.items():
            fetched = [u for u in coll.urls if u in self.issued]
            classes = [page_class.get(aliases.get(u, u)) for u in fetched]
            coll.leads_to = Counter(c for c in classes if c is not None)
            coll.fetched = len(fetched)
            coll.duplicates = sum(1 for u in fetched if u not in page_class)
            before = old.get(key)
            coll.tried = bool(fetched) or (before is not None and before.tried)
            coll.trap = (before is not None and before.trap) or (
                coll.fetched >= self.trap_pages and coll.duplicates >= 0.9 * coll.fetched)

    def _collect_anew(self, pages: Iterable[tuple[int, dict[str, Iterable[str]]]]) -> dict:
        """The collections of ``pages`` only (URLs handed out stay handed out); the old ones returned."""
        old = self.collections
        self.collections = {}
        self._class_links = Counter()
        self._seq = 0
        for source, collections in pages:
            self.add_links(source, collections)
        return old

    def respell(self, pages: Iterable[tuple[int, dict[str, Iterable[str]]]],
                spelled_as: Mapping[tuple[int, str], Iterable[tuple[int, str]]]) -> None:
        """Collections anew from the modelled pages — (class id, collections) each, in
        modelling order — after the path spelling changed; ``spelled_as``: old key -> the
        keys its links are spelled under now.  What an old collection learnt (tried, the
        classes it led to, its copies and failures, a trap) carries over to its new keys
        — not read off the fetched URLs as ``rebuild`` does: a page's link to itself, or
        to a page reached another way, would mark a collection tried and leading to one
        class, and its other links would never be fetched.  A batch out under an old
        key records into its new one."""
        old = self._collect_anew(pages)
        for old_key, keys in spelled_as.items():
            before = old.get(old_key)
            if before is None:
                continue
            keys = [k for k in keys if k in self.collections]
            for key in keys:
                coll = self.collections[key]
                coll.tried = coll.tried or before.tried
                coll.leads_to.update(before.leads_to)
                coll.fetched += before.fetched
                coll.duplicates += before.duplicates
                coll.trap = coll.trap or before.trap
            if len(keys) == 1 and keys[0] != old_key:
                self._renamed[old_key] = keys[0]

    # -- figures -------------------------------------------------------------
    def pending_urls(self) -> int:
        """Links waiting in collections (a URL in two collections counts twice)."""
        return sum(len(c.urls) - c.cursor for c in self.collections.values())

    def untried(self, class_size: Callable[[int], int], found_before: int | None = None) -> int:
        """Collections with pending URLs that were never tried, found on two pages of their
        class or more (or on its only page) and on ``FINGERPRINT_OCCURRENCE`` of them: a
        collection one page of a larger class shows is that page's own (erl_docgen pages each
        carry their application's whole navigation tree), and a site has as many of them as
        it has pages; one a few pages show is their content, not the class's template (the
        share at which UXClust counts a path as the template's, §3.3): the notes, warnings and
        lists of a few of erl_docgen's reference pages, each a collection of 2-10 of 45-110
        pages, held Erlang's stop check after check (densest, 64 URLs in flight: 31.8 % ->
        19.1 % of the site, F* 0.882 -> 0.880; docs/design.md, item 25).  Not one known to
        lead to one class (``saturated``: what the same path of a class merged into this one
        learnt): it ranks last, and held the stop of Python's Sphinx manual (densest, 32 URLs
        in flight: 82.6 % -> 77.0 % of the site fetched, the 47 other offline rows unchanged).  With
        ``found_before`` (a ``mark()``), only collections found before it count: those
        found since are next in line anyway (untried collections come first)."""
        return sum(1 for c in self.collections.values()
                   if self._holds_stop(c, class_size, found_before) and self._pending(c))

    def _holds_stop(self, coll: Collection, class_size: Callable[[int], int], found_before: int | None) -> bool:
        size = class_size(coll.source)
        return (not coll.tried and not self.saturated(coll) and (found_before is None or coll.seq < found_before)
                and coll.pages >= max(min(2, size), FINGERPRINT_OCCURRENCE * size))

    def audit(self, size: int) -> Batch:
        """Up to ``size`` pending URLs drawn from every collection (traps aside), handed out as
        one batch: the frontier as it is, not as the priority order samples it.  A URL weighs
        1 / (1 + URLs tried) of the most tried collection holding it — how well the crawl knows
        where its links lead — and the draw is weighted sampling without replacement (Efraimidis
        & Spirakis 2006, A-Res: the ``size`` largest u^(1/w)), u a fixed hash of the URL's path
        and query: a resumed crawl draws the same ones, the same site served elsewhere is
        audited with the same pages, and with no collection tried the draw is the hash's order.
        The weight is what the audit is for: a type behind a collection tried on a few URLs.
        qtbase's members pages sit behind one link of the class pages, in a collection tried on
        five URLs that went to obsolete members' pages; drawn alike with the class pages, whose
        links fill the frontier, ten draws missed them about one time in nine, and a crawl then
        stopped with one members page modelled, in the class pages' class (F* 0.64).
        """
        weight: dict[str, float] = {}
        source: dict[str, tuple[int, str]] = {}
        for coll in sorted(self.collections.values(), key=lambda c: c.seq):
            if coll.trap:
                continue
            w = 1.0 / (1 + coll.fetched)
            for url in coll.urls[coll.cursor:]:
                if not self._skipped(url) and w < weight.get(url, math.inf):
                    weight[url], source[url] = w, coll.key

        def key(url: str) -> float:  # log(u) / w, u in (0, 1]: the larger, the sooner drawn
            return math.log((2 ** 32 - _draw_key(url, self.audit_seed)) / 2 ** 32) / weight[url]

        drawn = sorted(weight, key=lambda url: (-key(url), url))[:size]
        self.issued.update(drawn)
        return Batch(None, tuple(drawn), tuple(source[url] for url in drawn))

    def mark(self) -> int:
        """A point in the order collections are found in (see ``untried``)."""
        return self._seq
