"""Focused harvest: which link collections to follow to reach every page of the target classes.

The pure part of ``scrapy crawl harvest`` (no I/O, no Scrapy): the spider
classifies each fetched page with the site model and hands its spelled link
collections to :class:`Harvest`, which decides which URLs to fetch next.

The map is the model's class graph (seed 001 §3–4: ``class_links`` says which
collection (class C, path P) of which class leads to which class).  Each class
gets its **distance** to the targets: 0 for a target class, 1 + the smallest
distance of a class it links to otherwise.  A collection (C, P) is **followed**
when it leads to a target class or to a class no farther from the targets than
C itself (listing → listing by a pager, home → listing), or, on a target page,
to a listing of targets (a class whose pages link ``LISTING_LINKS`` targets or
more: a book's author, a source file's directory, which may list targets that
no other page links); it is skipped when every class it leads to is farther (a
book page's links to its reviews when books are the targets) or unreachable.
In a collection that leads to several classes a URL is predicted by the words
its URL shares with each class's sample URLs (a Javadoc ``…/package-use.html``
is a package-use page, though that class's URL pattern, learnt from five pages
of one package, does not match it: it has every word those pages' URLs share,
but for those most classes share), then by the classes' URL patterns (Vertex
§IV-A), the most specific matching one first, so a menu followed for its
categories does not fetch the about page.  Words and patterns of the URL's path:
a query only fills the page its path names (Javadoc's frameset
``index.html?…/package-summary.html``).  On a tie a target's class is
predicted, a bet that stops once the collection's bets kept losing while
few targets are left unseen (:meth:`Harvest._bets_lost`).

What the model cannot know is learnt as the harvest goes (FoCUS, Jiang et al.
2012, §4, keeps index/thread navigation the same way):

* **Exploration.**  A collection the model never saw on that class, or any
  collection of a page that fits no class, is probed: at most
  ``PROBE_PAGES`` of its URLs, all explored pages together within the
  exploration budget (``explore_min`` pages plus ``explore_share`` of the pages
  fetched).  A probe that reaches a target, or a class no farther than the
  page it was found on, makes the collection followed; otherwise it stays skipped.
* **Dead collections.**  A followed collection whose pages are not targets is
  there to find new URLs closer to the targets.  A page is *useful* when it is
  a target or shows a URL, not seen before, that leads closer (a strictly
  smaller distance) or is the next page of its own class while that class still
  pays; after a run of non-useful pages too long to be chance
  (``DEAD_WINDOW`` at least, see ``_run_is_telling``) a
  collection that does not lead to a target class itself is dead: its waiting
  URLs are dropped and no more are queued (author pages once the categories
  listed every book).
* **Quiet hubs.**  Once ``QUIET_MIN`` pages in a row (and ``QUIET_SHARE`` of
  the pages fetched) showed nothing new toward the targets, and as many of a
  hub class's own pages in a row (and ``QUIET_SHARE`` of its pages), the URLs
  of that class are parked; a page showing something new brings them back,
  and once the plan ran dry and nothing is left to re-check, the exploration
  budget probes the parked URLs only one page links.
  Both: a class whose pages still pay goes on while others do not
  (commons-math3's package summaries each show their package tree, while the
  class pages fetched between them show nothing new), and a class whose pages
  stopped paying goes on while the harvest still finds targets (erlang's
  application front pages show modules that the module pages fetched first
  had shown, but only they lead to the applications not visited yet).  Once
  the harvest is quiet, a hub class whose own run is too long to be chance
  (as the dead rule judges a collection's) is parked too, for the URLs of
  collections that never led to a target: a small harvest fetches fewer than
  ``QUIET_MIN`` pages of most hub classes.  A new URL of a hub class whose
  run is so telling is not "nearer the targets" any more (:meth:`Harvest._fruitless`).
  Whatever the harvest's state, the URLs a collection holds of a class whose
  ``QUIET_MIN`` pages fetched from that collection never paid wait (Javadoc's
  FRAMES link on every class page, while the class pages pay).
* **Re-check.**  When the plan runs dry, the skipped collections holding URLs
  that no other collection links are probed again within the exploration
  budget (``RECHECK_PAGES`` each), those no page was fetched from yet first; one that
  pays is followed to its end (:meth:`Harvest.recheck`), but for the places of a menu whose pages never
  paid (:meth:`Harvest._place_idle`) and the URLs another collection of
  a target page fetched links (:meth:`Harvest._covered`), once one of its pages, or of the pages they lead
  to within ``YIELD_HOPS``, is a target; one whose pages since it paid led to
  none within ``BARREN_TARGETS`` targets' worth of requests (at the harvest's
  cost per target then, ``RECHECK_PAGES`` at least) is closed again, and what
  it queued waits (opened again if a target comes after all).  A URL handed out whose
  collection was found dead since is held by it (:meth:`Harvest.hold`), where
  the re-check finds it.
  Shared by several workers, the re-check is one decision of the job
  (``structcrawl.crawling.sharedplan``).
* **Lists.**  A spelled collection may hold several lists on a page (an index's one table per kind of
  symbol under one tag path; a table's columns, a module index whose second column names each module's
  application): :func:`harvest_collections` names each (``core.features.list_containers``).
  Once LIST_EVIDENCE pages of a list were fetched, none a target or all of them, their class predicts its
  other URLs (moved to that class's bucket when they come up), and its URLs predicted targets on no more than
  a tie wait for the LIST_EVIDENCE pages on their way, so many fetches in flight do not send the whole list
  before its first pages tell it (:meth:`Harvest._list_waits`); a list none of whose pages was a target
  waits once its pages stopped paying (LIST_EVIDENCE pages, or a run too long to be chance), while the
  lists beside it go on; a list never tried gets one page, within the exploration budget, though its
  class is quiet.  A collection whose LIST_EVIDENCE links or more (the model's and the outcomes) led to no
  target does not have its URLs predicted targets by the model's URL patterns.  A collection holding one
  list on a page: that page's links of it are a list for the prediction only (a reference manual's menu
  of modules and a users' guide's menu of chapters, one path, one URL shape).
* **Aliases.**  A URL of a shape that mostly redirected elsewhere is not new.
* **Outcomes.**  The class each fetched page really has is counted per
  collection; the estimated number of targets is the pages harvested plus, for
  every URL waiting, the share of its collection's links that led to a target
  (the model's link counts plus the outcomes so far).

Order: URLs predicted to be targets first, then hubs by distance, nearer
first, and within a distance the classes whose pages showed the most new URLs
leading nearer so far (the model's links per page as a prior) first; first
come, first served within a class.  Everything is deterministic given the order in which pages are
reported, so replaying a stored harvest rebuilds the same state (resume).
"""

from __future__ import annotations

import math
import zlib
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from structcrawl.analysis.unseen import TargetSightings
from structcrawl.analysis.urlpattern import compile_pattern
from structcrawl.analysis.urlwords import shared_url_words, url_words
from structcrawl.core.features import PageFeatures, list_containers
from structcrawl.core.traps import url_shape

#: URLs of a collection nobody has followed yet that are fetched to learn where it leads
#: (the structure frontier's probe size, docs/design.md item 4).
PROBE_PAGES = 5
#: URLs of a skipped collection probed again once the plan ran dry, those fewest collections link first:
#: with a fifth of them leading somewhere new (geos: 14 of the 71 source listings that only their
#: directory links show a class page not seen before), 20 probes miss them all with a chance of 1 %,
#: 10 with 11 % (and did, on geos's class-member pages).
RECHECK_PAGES = 20
#: Targets' worth of requests, at the harvest's average cost per target so far, that a collection the
#: re-check opened may spend without leading to a target before it is closed again (RECHECK_PAGES at
#: least).  qtbase's obsolete-members pages cost ~7 requests each; its module pages' class lists, opened by
#: the re-check, lead to the last few through ~3 of their ~100 class pages: 20 pages missed them (0.960
#: in replay), 5 targets' worth (~37 pages) finds them (0.988).  The demo's books cost ~1.3 requests each:
#: its news archive is still closed after 20.
BARREN_TARGETS = 5
#: Links from a page of a collection the re-check opened within which a target fetched counts for that
#: collection: geos's source listings link new class pages (1), ghc's user guide links a new module
#: page, which links new source pages (2).  The demo's news archive, opened by its probes' new article
#: URLs, leads to none: its articles link known books, by aliases (``/b/N``) that look new until fetched.
YIELD_HOPS = 2
#: Non-useful pages in a row after which a followed collection that leads to no target class is dead.
DEAD_WINDOW = 10
#: Pages in a row that show nothing new toward the targets, of the harvest and of a hub class, after
#: which no more page of that class is fetched: QUIET_SHARE of the pages fetched (of the harvest, of
#: the class), and at least QUIET_MIN (and the pages of a class fetched from one collection, none of which
#: paid).  DEAD_WINDOW for the harvest's run instead cut geos's directories from 238 to 203 requests in
#: replay but lost a publisher page of the demo (tests/test_harvest.py): 50 pages it stays.
QUIET_SHARE = 0.1
QUIET_MIN = 50
#: Targets' worth of requests, at the harvest's cost per target so far, fetched without a target after
#: which hub pages wait (:meth:`Harvest.dry_spell`; QUIET_MIN and QUIET_SHARE of the pages fetched at least).
DRY_TARGETS = 10
#: Chance of a run of non-useful pages as long as the one seen, below which a collection is dead.
DEAD_RISK = 0.01
#: Share of its targets a harvest means to fetch (issue 14's recall): while the targets no page linked yet
#: (estimated: ``analysis.unseen``) are more, the pages that link targets are judged by the chance that a
#: sighting is of a new target, not by their past share (:meth:`Harvest._discovery`).
RECALL_GOAL = 0.99
#: Standard deviations above the estimate of the targets not seen yet at which it is held against RECALL_GOAL
#: (a one-sided 97.5 % bound: the estimate alone stopped the demo's harvest at 0.989 once in three runs).
UNSEEN_Z = 1.96
#: Links to targets per page (the model's counts) from which a class is a listing of targets, followed
#: from the target pages themselves (a review links its one book; an author page lists several).
LISTING_LINKS = 2.0
#: Sample URLs a class needs for the words they share to predict its URLs.
WORD_SAMPLES = 2
#: Words a class's sample URLs share, at least, for a URL having them all to be predicted of that class among
#: the classes its collection leads to, unless the one word is on at most half of the URLs sighted so far:
#: one word is a folder name as often as a page type's (erl_docgen's reference pages' five samples share
#: ``html``, their ``…/doc/html/`` folder, where most chapters lie too, and every chapter a front page's
#: menu lists was predicted a reference page: 105 of 250 harvested), but Javadoc's ``tree`` tells the
#: package trees from the class pages (without it, 1,223 -> 2,199 requests for commons-math3's classes).
WORD_EVIDENCE = 2
#: Pages fetched from one list of a collection (the links of one container on a page, see
#: ``core.features.list_containers``) from which their classes predict the list's other URLs, when none
#: of them or all of them were targets: gi-docgen's index lists every symbol under one spelled path and
#: one URL pattern, one table per kind.  Replayed (docs/benchmarks.md, eighth pass): 2 lost qtbase
#: obsolete-members pages (0.983 -> 0.942); 5 cost more (pango enums 218 -> 249, commons-math3 classes
#: 1,228 -> 1,280).
LIST_EVIDENCE = 3
#: Distance of a class from which no target is reachable.
FAR = math.inf
#: Between a collection's spelled path and the container of one of its lists in the names of
#: :func:`harvest_collections` (no spelled path holds a tab: class tokens are split at whitespace).
LIST_MARK = "\t"


def _run_too_long(run: int, pages: int, paid: int, rate: float | None = None) -> bool:
    """Is a run of ``run`` pages that showed nothing, the last of ``pages`` pages of which ``paid``
    paid, too long to be chance?  Dead after DEAD_WINDOW pages when none before the run paid; when
    they paid with a share p, once (1-p)^run < DEAD_RISK.  ``rate``: the chance that a page pays now, when
    lower than p (the targets running out, not chance, make a long run)."""
    if run < DEAD_WINDOW:
        return False
    before = pages - run
    if not paid or not before:
        return True
    share = paid / before if rate is None else min(rate, paid / before)
    return (1 - share) ** run < DEAD_RISK

Key = tuple[int | None, str]  #: (class of the page holding the links, spelled collection path)
ListKey = tuple[int | None, str, str]  #: a collection's key and the container of one of its lists
Place = tuple[Key, int, int]  #: a collection's key, a link's index in one page's list of it, the list's length

FOLLOW, EXPLORE, SKIP = "follow", "explore", "skip"
RECHECK = "recheck"  #: a skipped collection probed again once the plan ran dry
COVERED = "covered"  #: the re-check's last tier: sampled collections whose URLs only target pages link
SEEDS = "seeds"  #: the bucket of start URLs
LISTINGS = "listings"  #: (LISTINGS, class): the bucket of a class's URLs linked from target pages
Bucket = int | None | str | tuple[str, int | None]


def harvest_collections(features: PageFeatures, spelled: Mapping[str, Sequence[str]],
                        spell: Callable[[str], str]) -> dict[str, list[str]]:
    """The collections of a page as the harvest is fed them: ``spelled`` (spelled path -> URLs, in scope),
    each collection that holds several lists on this page split into one name per list,
    ``path<LIST_MARK>container`` (``core.features.list_containers``; a URL belongs to the list of its
    first link under that path).  The names are what the store and a shared harvest's stream keep of the
    sightings, so a resumed or shared plan is fed the same lists."""
    first: dict[str, dict[str, str]] = {}
    for link in features.links:
        urls = first.setdefault(spell(link.path), {})
        urls.setdefault(link.url, link.xpath)
    out: dict[str, list[str]] = {}
    for path, urls in spelled.items():
        xpaths = first.get(path, {})
        containers = list_containers([xpaths.get(u, "") for u in urls])
        if len(set(containers)) < 2:
            out[path] = list(urls)
            continue
        for u, container in zip(urls, containers):
            out.setdefault(f"{path}{LIST_MARK}{container}", []).append(u)
    return out


def _spread(length: int) -> set[int]:
    """LIST_EVIDENCE places spread evenly over a list of ``length`` links, the first and the last among them."""
    if length <= LIST_EVIDENCE:
        return set(range(length))
    return {round(i * (length - 1) / (LIST_EVIDENCE - 1)) for i in range(LIST_EVIDENCE)}


def _split_name(name: str) -> tuple[str, str | None]:
    """(spelled path, container of its list or None) of a collection name of :func:`harvest_collections`."""
    path, mark, container = name.partition(LIST_MARK)
    return path, (container if mark else None)


def class_distances(edges: Iterable[tuple[int, int]], targets: Iterable[int]) -> dict[int, float]:
    """Distance of each class to the nearest target class in the class graph (0 for targets), FAR if none."""
    back: dict[int, set[int]] = {}
    nodes: set[int] = set()
    for src, dst in edges:
        back.setdefault(dst, set()).add(src)
        nodes.update((src, dst))
    dist: dict[int, float] = {c: FAR for c in nodes}
    queue = deque()
    for t in targets:
        dist[t] = 0
        queue.append(t)
    while queue:
        c = queue.popleft()
        for src in back.get(c, ()):
            if dist[src] == FAR:
                dist[src] = dist[c] + 1
                queue.append(src)
    return dist


@dataclass
class Entry:
    """A URL waiting to be fetched, with what it was found under."""

    url: str
    key: Key | None  #: None: the start URL (or a --like page)
    referer: str | None
    explore: bool


@dataclass
class _Collection:
    """What the harvest learnt about one collection (C, P)."""

    decision: str
    outcomes: Counter = field(default_factory=Counter)  #: class of the pages fetched from it (None: no class)
    fetched: int = 0
    useless_run: int = 0  #: non-useful pages in a row
    useful: int = 0  #: useful pages
    held: list[tuple[str, str]] = field(default_factory=list)  #: (url, referer) not queued (skipped, or waiting)
    probes: int = 0  #: URLs handed out to explore it
    rechecked: bool = False  #: probed again after the plan ran dry (once)
    rechecks: int = 0  #: its pages fetched while re-checked, then since the re-check opened it
    yielded: int = 0  #: targets fetched since the re-check: its pages, or pages within YIELD_HOPS of them
    barren: bool = False  #: closed again: its re-check led to no target (URLs queued within YIELD_HOPS wait)
    stalled: list[tuple[Entry, int]] = field(default_factory=list)  #: (URL queued within YIELD_HOPS, hops), waiting
    before_recheck: str = SKIP  #: its decision before the re-check, back when the re-check did not pay
    widened: bool = False  #: followed to any class that leads to the targets, farther ones too (its re-check paid)
    window: float = 0.0  #: pages since its re-check paid after which, none leading to a target, it is closed again


@dataclass
class PageOutcome:
    """What the harvest made of one fetched page."""

    kind: str  #: "target", "hub" (a followed class nearer than FAR), "other" (a class the plan avoids), "none"
    useful: bool
    #: (url, key) sightings not recorded before (for the store), the key's path the name the page was fed
    #: (with its list: :func:`harvest_collections`)
    new: list[tuple[str, Key]]
    target: int | None = None  #: the target class of a target page (its URL's, when its structure's is a mixture)


class Harvest:
    """The harvest's plan and frontier: fed pages in fetch order, hands out URLs."""

    def __init__(self, document: Mapping[str, Any], targets: Iterable[int], *, explore_share: float,
                 explore_min: int) -> None:
        self.targets = frozenset(targets)
        classes = {c["id"]: c for c in document.get("classes", [])}
        unknown = sorted(self.targets - set(classes))
        if unknown:
            raise ValueError(f"unknown class id{'s' if len(unknown) > 1 else ''} "
                             f"{', '.join(map(str, unknown))} (the model has {', '.join(map(str, sorted(classes)))})")
        self.explore_share = explore_share
        self.explore_min = explore_min
        self.links: dict[Key, Counter] = {}  #: the model's class links: (C, P) -> target class -> count
        for link in document.get("class_links", []):
            self.links.setdefault((link["source"], link["path"]), Counter())[link["target"]] += link["count"]
        self.dist = class_distances(((k[0], t) for k, c in self.links.items() for t in c), self.targets)
        for c in classes:
            self.dist.setdefault(c, 0 if c in self.targets else FAR)
        self.patterns = {c: compile_pattern(e["url_pattern"]) for c, e in classes.items() if e.get("url_pattern")}
        # a single sample's words are its whole URL, not what its class's URLs share; a word most
        # classes share (a site's /lib/…/doc/html/ or org/apache/…) tells none apart
        shared = {c: shared_url_words(e["samples"]) for c, e in classes.items()
                  if len(e.get("samples") or ()) >= WORD_SAMPLES}
        frequency = Counter(w for ws in shared.values() for w in ws)
        self.words = {c: [w for w in ws if frequency[w] * 2 <= len(shared)] for c, ws in shared.items()}
        # links per page of a class that lead nearer (the model's counts): hubs that list more go first
        nearer: Counter = Counter()
        for (src, _path), counts in self.links.items():
            nearer[src] += sum(n for t, n in counts.items() if self.dist[t] < self.dist[src])
        self.yield_per_page = {c: nearer[c] / e["size"] for c, e in classes.items()}
        self.collections: dict[Key, _Collection] = {}
        #: URLs waiting, by the class they are predicted to be (SEEDS: start URLs, None: unknown)
        self.buckets: dict[Bucket, deque[Entry]] = {}
        self.queued: set[str] = set()  #: URLs queued or fetched: never queued again
        self.done: set[str] = set()  #: URLs fetched (requested and final) or failed: never handed out again
        self.sighted: set[tuple[str, Key]] = set()
        self.sightings: Counter = Counter()  #: URL -> collections of fetched pages that link it
        self.url_word_count: Counter = Counter()  #: word -> URLs sighted whose path has it (WORD_EVIDENCE)
        self.target_linked: Counter = Counter()  #: URL -> collections of fetched target pages that link it
        self.seen = TargetSightings()  #: how often each target was linked: the targets not seen yet
        #: URL -> (collection, page) of the sightings made while it was queued already, in order
        self.linked_by: dict[str, list[tuple[Key, str]]] = {}
        self._exploring: dict[Key, None] = {}  #: collections being explored with URLs to probe, in order
        self.fetched = 0
        self.explored = 0  #: pages fetched to explore a collection
        self.probes_out = 0  #: URLs handed out to explore a collection (this run)
        self.harvested = 0
        self.harvested_of: Counter = Counter()  #: target class -> pages harvested
        self.kinds: Counter = Counter()
        self.quiet = 0  #: pages in a row that showed nothing new nearer the targets
        self.dry = 0  #: pages in a row that were no target (:meth:`dry_spell`)
        self.quiet_of: Counter = Counter()  #: the same per class
        self.paid_of: Counter = Counter()  #: class -> pages that showed a new target or a new URL nearer
        #: the same per (class, whether a fetched target page linked the page's URL): pages, those that
        #: paid, the last in a row that did not (:meth:`_fruitless`)
        self.side_pages: Counter = Counter()
        self.side_paid: Counter = Counter()
        self.side_run: Counter = Counter()
        #: (collection, the class its URLs were predicted) -> pages fetched, and those that paid as above
        self.sent_of: Counter = Counter()
        self.paid_by: Counter = Counter()
        self.parked: list[Entry] = []  #: URLs of quiet hub classes, not fetched while the harvest is quiet
        self.parked_probed = False  #: parked URLs were probed since a target was last harvested (:meth:`_probe_parked`)
        self.round_probes: set[str] = set()  #: the URLs the last round of :meth:`_probe_parked` probed
        self.found_new: Counter = Counter()  #: class -> new URLs leading nearer found on its pages
        self.pages_of: Counter = Counter()  #: class -> pages fetched
        self.fetched_in: Counter = Counter()  #: URL folder (its path up to the last slash) -> pages fetched
        #: per URL shape (core.traps.url_shape): URLs that redirected elsewhere, URLs that did not
        self.redirected: Counter = Counter()
        self.landed: Counter = Counter()
        #: URL -> (collection the re-check opened, links from one of its pages) of the URLs queued by the
        #: pages of such a collection, within YIELD_HOPS
        self.lineage: dict[str, tuple[Key, int]] = {}
        #: URL -> the list it was first sighted in, for a collection that holds several lists on a page
        self.list_of: dict[str, ListKey] = {}
        self.list_outcomes: dict[ListKey, Counter] = {}  #: list -> class of its pages fetched (a target's)
        #: URL -> (collection, page) it was first sighted on, for a collection that holds one list on that page,
        #: and the class of the pages fetched of each (:meth:`_list_class`)
        self.page_list_of: dict[str, tuple[Key, str]] = {}
        self.page_list_outcomes: dict[tuple[Key, str], Counter] = {}
        #: URL -> its place in that list (collection, index, the list's length), and per place the class of
        #: the pages fetched from it over all pages and those of them that paid (:meth:`_place_idle`)
        self.place_of: dict[str, Place] = {}
        self.place_outcomes: dict[Place, Counter] = {}
        self.place_paid: Counter = Counter()
        #: URL -> (its index, the list's length) in the list of a collection holding several on a page that it
        #: was first sighted in (:data:`list_of`): where :meth:`_list_waits` spreads a list's first pages
        self.list_place_of: dict[str, tuple[int, int]] = {}
        #: collection -> its pages fetched as predicted targets, those that were, the last in a row that were not
        self.bet_pages: Counter = Counter()
        self.bet_won: Counter = Counter()
        self.bet_run: Counter = Counter()
        self.list_lengths: dict[Key, Counter] = {}  #: collection -> length of its list on each page holding one
        self.list_paid: Counter = Counter()  #: list -> its pages that showed a new target or a new URL nearer
        self.list_run: Counter = Counter()  #: list -> its last pages in a row that did not
        self.list_out: Counter = Counter()  #: list -> its URLs handed out
        #: list (:meth:`_list_of_entry`) -> its URLs handed out as predicted targets whose page is not back
        #: yet, and its URLs that wait for those pages (:meth:`_list_waits`)
        self.pending: dict[tuple, set[str]] = {}
        self.deferred: dict[tuple, list[Entry]] = {}
        self.pending_in: dict[str, tuple] = {}  #: URL handed out -> the list it is pending in

    # -- the plan ----------------------------------------------------------------
    def hubs(self) -> set[int]:
        """Classes the plan goes through to reach the targets (finite distance, not a target)."""
        return {c for c, d in self.dist.items() if 0 < d < FAR}

    def _predicted(self, key: Key, url: str) -> int | None:
        """The class a URL of collection ``key`` most likely is.  A target's, when the most specific URL
        pattern of the whole model that matches it is a target's (the model may not have seen this
        collection lead there — pango's enums, listed on an index page the model classes differently),
        and no other class the collection leads to has a pattern as specific that matches it too
        (:meth:`_pattern_tie`).
        Else among the collection's classes, the one whose sample URLs' shared words the URL has most of
        (:meth:`_word_evidence`), then whose URL pattern matches it, the most specific pattern first (the
        longest: ``^/[^/?]+_8h_source\\.html$`` before ``^/[^/?]+\\.html$``; a target's on a tie), then
        the collection's most frequent class.  (A target's broad pattern preferred over a specific hub
        pattern made every commons-math3 page look like a target: 2,197 requests for its 76 package
        summaries.)"""
        told, cls = self._list_class(key, url)
        if told:
            return cls
        path = _site_path(url)
        best = self._pattern_class(path, self.patterns)
        counts = self._led_to(key)
        if best in self.targets and not (sum(counts.values()) >= LIST_EVIDENCE
                                         and not any(c in self.targets for c in counts)) \
                and not self._pattern_tie(path, best, counts):
            return best
        classes = [c for c in counts if c is not None]
        if len(classes) > 1:
            # the path names the script that answers, so the page type; a query only fills it (Javadoc's
            # frameset ``index.html?org/…/package-summary.html`` is a frameset whatever page it names: its
            # words made every package summary's FRAMES link a predicted target, 1,070 framesets fetched)
            script = path.split("?", 1)[0]
            words = set(url_words(_path_only(url)))
            bets_lost = self._bets_lost(key)

            def rank(c: int) -> tuple:
                pattern = self.patterns.get(c)
                hit = pattern is not None and (pattern.search(path) or pattern.search(script)) is not None
                return (self._word_evidence(c, words), hit, len(pattern.pattern) if hit else 0,
                        c in self.targets and not bets_lost, counts[c], -c)

            return max(classes, key=rank)
        return classes[0] if classes else None

    def _bets_lost(self, key: Key) -> bool:
        """Have the URLs of collection ``key`` fetched as predicted targets on a tie of the evidence
        (:meth:`_predicted` prefers a target then) turned out no target for a run too long to be chance, as
        the dead rule judges a collection's (:func:`_run_too_long`)?  Then a tie goes to the class the
        collection leads to most often, until one of its pages is a target again.  DocBook names every page
        ``name.html`` and a section's navigation header leads to the chapter above it and to the sections
        beside it: each section page fetched as a predicted chapter showed the next one, 730 requests
        after PostgreSQL's last chapter."""
        return self._bets_losing(key) and not self.seen.short_of(RECALL_GOAL, UNSEEN_Z)

    def _bets_losing(self, key: Key) -> bool:
        """Have collection ``key``'s URLs fetched as predicted targets been no target for a run too long to
        be chance (:meth:`_bets_lost` without Chao's gate)?  The plan may still bet on its next URLs, but a
        page showing one has not shown a target: DocBook sections' navigation headers, each predicted
        a chapter on a tie of patterns, kept the sections they were found on paying, and PostgreSQL's
        chapter harvest ran 433 requests past its last chapter."""
        return _run_too_long(self.bet_run[key], self.bet_pages[key], self.bet_won[key])

    def _pattern_tie(self, path: str, best: int, counts: Counter) -> bool:
        """Does a class the collection leads to other than the target ``best`` have a URL pattern as specific
        as ``best``'s that matches ``path`` too?  Then the pattern does not tell them apart (DocBook names
        every page ``…/name.html``: the section pages' navigation header was predicted chapters, 973 -> 808
        requests for PostgreSQL's 77 chapters in replay)."""
        length = len(self.patterns[best].pattern)
        return any(c != best and c not in self.targets and (p := self.patterns.get(c)) is not None
                   and len(p.pattern) >= length and p.search(path) is not None for c in counts if c is not None)

    def _list_class(self, key: Key, url: str) -> tuple[bool, int | None]:
        """(True, the class) when the URL's list in collection ``key`` tells its class: LIST_EVIDENCE of its
        pages fetched, none a target or all of them, the most frequent class (a list of one kind of page
        under a spelled path that lists several: gi-docgen's index lists classes, structs, enums and
        functions in one table each, all of one URL pattern, which made every symbol a predicted struct);
        (False, None) while it has too little evidence, or its pages are targets and others.  A collection
        holding one list on a page: the URLs of that page's list (erl_docgen's front pages' menu lists the
        chapters on a users' guide and the modules on a reference manual, under one path and one URL shape:
        1,052 -> 964 requests for the chapters in replay, 567 -> 479 modules fetched)."""
        lst = self._list_of_entry(key, url)
        seen = self._outcomes_of(lst) if lst is not None else None
        if not seen:
            return False, None
        pages = sum(seen.values())
        hits = sum(n for c, n in seen.items() if c in self.targets)
        if pages < LIST_EVIDENCE or 0 < hits < pages:
            return False, None
        return True, max(seen, key=lambda c: (seen[c], c is not None, -(c or 0)))

    def _word_score(self, cls: int, words: set[str]) -> int:
        """How well a URL's ``words`` fit class ``cls``: the number of its sample URLs' shared words when
        the URL has every one of them (``…/package-use.html``: 2, ``package use``, for the package-use
        pages; 0 for the package summaries, which share ``summary``), else 0 — a URL lacking one is no
        evidence either way (Doxygen's struct pages are class pages whose URLs lack ``classgeos``; two
        erl_interface pages share ``erl interface ei``, which a chapter's URL lacks)."""
        shared = self.words.get(cls, ())
        return len(shared) if all(w in words for w in shared) else 0

    def _word_evidence(self, cls: int, words: set[str]) -> int:
        """:meth:`_word_score`, when its words are evidence (WORD_EVIDENCE words, or a word at most half of
        the URLs sighted so far have); else 0."""
        score = self._word_score(cls, words)
        if score >= WORD_EVIDENCE or not score:
            return score
        return score if all(2 * self.url_word_count[w] <= len(self.sightings) for w in self.words[cls]) else 0

    def _pattern_class(self, path: str, patterns: Mapping[int, Any]) -> int | None:
        """Of ``patterns`` (class -> compiled URL pattern) matching ``path``, the class of the most specific
        (the longest pattern; a target's on a tie)."""
        hits = [c for c, pattern in patterns.items() if pattern.search(path)]
        return max(hits, key=lambda c: (len(patterns[c].pattern), c in self.targets, -c), default=None)

    def looks_like_target(self, url: str) -> bool:
        """Is the most specific URL pattern of the model that matches ``url`` a target class's?"""
        return self._pattern_class(_site_path(url), self.patterns) in self.targets

    def _leads(self, source: int | None, target: int | None) -> bool:
        """Does a link from a page of class ``source`` to one of ``target`` lead toward the targets?"""
        if target is None:
            return False
        if target in self.targets:
            return True
        here = FAR if source is None else self.dist.get(source, FAR)
        there = self.dist.get(target, FAR)
        if here == 0 and there == 1:
            # a target page's link to a listing of targets (its directory, its author): that listing may
            # list targets no page nearer links (geos: source files listed only by their directory page)
            return self.yield_per_page.get(target, 0.0) >= LISTING_LINKS
        return there <= here < FAR or (source is None and there < FAR)

    def _collection(self, key: Key) -> _Collection:
        col = self.collections.get(key)
        if col is None:
            known = self.links.get(key) if key[0] is not None else None
            if not known:
                decision = EXPLORE
            elif any(self._leads(key[0], t) for t in known):
                decision = FOLLOW
            else:
                decision = SKIP
            col = self.collections[key] = _Collection(decision)
        return col

    def _bucket(self, key: Key | None, url: str, predicted: int | None = None) -> Bucket:
        """Where a URL waits: SEEDS, the class it is predicted to be (``predicted``, when known already),
        or (LISTINGS, that class) for a listing linked from a target page."""
        if key is None:
            return SEEDS
        cls = self._predicted(key, url) if predicted is None else predicted
        return (LISTINGS, cls) if key[0] in self.targets and cls not in self.targets else cls

    def _order(self, bucket: Bucket) -> tuple[float, float, float]:
        """Which waiting bucket goes first: seeds, then nearer classes, then the classes whose pages
        showed the most new URLs leading nearer (measured now, so a class that stops paying waits);
        the listings linked from target pages last, once the rest is done (commons-math3: the class-use
        page of every class page lists classes the package summaries list too)."""
        if bucket == SEEDS:
            return (0, -1.0, 0.0)
        if isinstance(bucket, tuple):
            return (1, *self._order(bucket[1])[1:])
        if bucket is None:
            return (0, FAR, 0.0)
        return (0, self.dist.get(bucket, FAR), -self.novelty(bucket))

    def novelty(self, cls: int) -> float:
        """New URLs leading nearer found per page of class ``cls``: the model's links per page as a prior
        worth one page, then what its pages really showed (sidebars repeat the same links)."""
        return (self.yield_per_page.get(cls, 0.0) + self.found_new[cls]) / (1 + self.pages_of[cls])

    def waiting(self) -> int:
        return sum(len(q) for q in self.buckets.values()) + sum(len(d) for d in self.deferred.values())

    def _push(self, url: str, key: Key | None, referer: str | None, predicted: int | None = None) -> None:
        self.queued.add(url)
        self.buckets.setdefault(self._bucket(key, url, predicted), deque()).append(Entry(url, key, referer, False))

    def _wanted(self, key: Key, url: str, predicted: int | None = None) -> bool:
        """A URL of a followed collection, unless its pattern says it is of a class the plan avoids, or it
        is a listing in a collection of a target page that leads to targets itself (commons-math3's
        navigation bar on a class page: the previous and next classes, and the frames version of the
        page, a listing of all classes — 1,476 of them fetched)."""
        cls = self._predicted(key, url) if predicted is None else predicted
        if cls is None or key not in self.links:
            return True
        if self.collections[key].widened:
            return True
        if key[0] in self.targets and cls not in self.targets and self._leads_to_targets(key):
            return False
        return self._leads(key[0], cls)

    def _covered(self, key: Key, url: str, predicted: int | None = None) -> bool:
        """Is ``url``, of a collection the re-check widened and not predicted a target, linked by another
        collection of a target page fetched already?  Then it waits among the URLs the collection holds:
        the widening is for the ground no fetched page reaches, and a page one link from a target harvested
        is ground the harvest covered, whose link the plan judged there (a target page's listing,
        :meth:`_wanted`).  geos: the directories' file lists, widened, list every source file, most of them
        the files of class pages harvested, which the class pages link too; fetched first come, first
        served, those spent the re-check's window without a target (recall 0.923, 590 requests in replay);
        left waiting, the rest reach the 29 class pages no fetched page links (1.000, 625 requests)."""
        own = (url, key) in self.sighted and key[0] in self.targets  # its own link, on a target page
        if not self.collections[key].widened or self.target_linked[url] <= own:
            return False
        return (self._predicted(key, url) if predicted is None else predicted) not in self.targets

    def _leads_to_targets(self, key: Key) -> bool:
        """Did the model (or this harvest) see collection ``key`` lead to a target?"""
        return any(c in self.targets for c in self._led_to(key))

    def _led_to(self, key: Key) -> Counter:
        """The classes the model and this harvest saw collection ``key`` lead to, with their pages."""
        return self.links.get(key, Counter()) + (self.collections[key].outcomes if key in self.collections
                                                 else Counter())

    # -- feeding ------------------------------------------------------------------
    def seed(self, url: str) -> None:
        if url not in self.queued:
            self._push(url, None, None)

    def page(self, url: str, key: Key | None, cls: int | None, collections: Mapping[str, Sequence[str]],
             explore: bool = False, requested: str | None = None) -> PageOutcome:
        """A page fetched from ``key`` (None: a seed) turned out of class ``cls``; ``collections`` are its
        spelled in-scope link collections; ``requested`` the URL asked for when it redirected to ``url``.
        Queues what is worth fetching; says what the page was."""
        if requested is not None and requested != url:
            self.redirected[url_shape(requested)] += 1
        else:
            self.landed[url_shape(url)] += 1
            self.done.add(requested)
        self.fetched += 1
        self.fetched_in[_folder(url)] += 1
        self.queued.add(url)
        self.done.add(url)
        if explore:
            self.explored += 1
        target = cls if cls in self.targets else self.target_by_url(url, cls)
        if target is not None:
            kind = "target"
            self.harvested += 1
            self.harvested_of[target] += 1
            self.seen.harvested(requested or url, target)
        elif cls is None:
            kind = "none"
        elif self.dist.get(cls, FAR) < FAR:
            kind = "hub"
        else:
            kind = "other"
        self.kinds[kind] += 1
        here = FAR if cls is None else self.dist.get(cls, FAR)
        useful = kind == "target"
        pays = useful  #: is a target, or showed a new target or a new URL nearer the targets
        origin = self._origin(url, key, requested)
        side = (cls, self.target_linked[requested or url] > 0 or self.target_linked[url] > 0)
        self.pages_of[cls] += 1
        lkey = self.list_of.get(requested or url)
        if key is None or lkey is None or lkey[:2] != key:
            lkey = None
        else:
            self.list_outcomes.setdefault(lkey, Counter())[cls if target is None else target] += 1
        pkey = self.page_list_of.get(requested or url)
        if key is not None and pkey is not None and pkey[0] == key:
            self.page_list_outcomes.setdefault(pkey, Counter())[cls if target is None else target] += 1
        place = self.place_of.get(requested or url)
        if key is None or place is None or place[0] != key:
            place = None
        else:
            self.place_outcomes.setdefault(place, Counter())[cls if target is None else target] += 1
        self._returned(requested or url)
        for u in {u for urls in collections.values() for u in urls} - {url, requested}:
            self.seen.linked(u)
        new: list[tuple[str, Key]] = []
        for name, urls in collections.items():
            path, container = _split_name(name)
            ckey: Key = (cls, path)
            col = self._collection(ckey)
            if container is None:
                self.list_lengths.setdefault(ckey, Counter())[len(urls)] += 1
            for index, u in enumerate(urls):
                if (u, ckey) in self.sighted:
                    continue
                self.sighted.add((u, ckey))
                if not self.sightings[u]:
                    self.url_word_count.update(url_words(_path_only(u)))
                self.sightings[u] += 1
                if target is not None:
                    self.target_linked[u] += 1
                if u in self.queued and u not in self.done:
                    self.linked_by.setdefault(u, []).append((ckey, url))
                new.append((u, (cls, name)))  # stored under its list's name: a resumed plan is fed it
                if container is not None:
                    if self.list_of.setdefault(u, (cls, path, container)) == (cls, path, container):
                        self.list_place_of.setdefault(u, (index, len(urls)))
                else:
                    self.page_list_of.setdefault(u, (ckey, url))
                    self.place_of.setdefault(u, (ckey, index, len(urls)))
                if u in self.queued:
                    continue
                # once per URL: matching every class's URL pattern and words is most of this loop's cost
                predicted = self._predicted(ckey, u) if col.decision == FOLLOW else None
                if (col.decision == FOLLOW and self._wanted(ckey, u, predicted)
                        and not self._covered(ckey, u, predicted)):
                    self._push(u, ckey, url, predicted)
                    if origin is not None and predicted == cls:  # its listing's next page: no hop farther
                        self.lineage[u] = origin
                    elif origin is not None and origin[1] < YIELD_HOPS:
                        self.lineage[u] = (origin[0], origin[1] + 1)
                    # a new URL nearer the targets (or a new target), or the next page of a listing
                    # (a pager's page may list new targets even when this one listed none); not a URL of a
                    # class whose pages stopped paying (_fruitless); not a URL
                    # of a shape that mostly redirects: such an alias of a known page looks new every time
                    if predicted is None or self._alias(u):
                        continue
                    if predicted in self.targets and self._bets_losing(ckey):
                        pass  # a bet its collection keeps losing shows nothing new (:meth:`_bets_losing`)
                    elif predicted in self.targets or (self.dist.get(predicted, FAR) < here
                                                       and not self._fruitless(predicted, u)):
                        useful = pays = True
                        self.found_new[cls] += 1
                    elif predicted == cls:
                        useful = True
                else:
                    col.held.append((u, url))
                    if col.decision == EXPLORE and col.probes < PROBE_PAGES:
                        self._exploring[ckey] = None
        if origin is not None and kind == "target":
            opened = self.collections[origin[0]]
            opened.yielded += 1
            if opened.barren:  # a target came after all, from a page handed out before it closed
                self._reopen(origin[0], opened)
        if lkey is not None:
            self.list_paid[lkey] += pays
            self.list_run[lkey] = 0 if pays else self.list_run[lkey] + 1
        if place is not None:
            self.place_paid[place] += pays
        self.quiet = 0 if pays else self.quiet + 1
        self.dry = 0 if kind == "target" else self.dry + 1
        self.quiet_of[cls] = 0 if pays else self.quiet_of[cls] + 1
        self.paid_of[cls] += pays
        self.side_pages[side] += 1
        self.side_paid[side] += pays
        self.side_run[side] = 0 if pays else self.side_run[side] + 1
        if key is not None and not explore:
            sent = (key, _bucket_class(self._bucket(key, requested or url)))
            self.sent_of[sent] += 1
            self.paid_by[sent] += pays
            if sent[1] in self.targets:
                self.bet_pages[key] += 1
                self.bet_won[key] += target is not None
            if sent[1] in self.targets or target is not None:
                self.bet_run[key] = 0 if target is not None else self.bet_run[key] + 1
        if target is not None:
            # another round of parked URLs only once one led to a target: pages that show new URLs and no
            # target are what a round's probes mostly are (the 2,952-page demo's authors: a second round,
            # 82 requests for none, after a first that found none)
            self.parked_probed = False
        if pays and self.parked:
            parked, self.parked = self.parked, []
            for entry in parked:
                self.buckets.setdefault(self._bucket(entry.key, entry.url), deque()).append(entry)
        if key is not None:
            # a listing linked from a target page is there for the targets it shows that no other page
            # showed: the next page of its own kind does not keep it alive (commons-math3: every class
            # page links its class-use page, which links more class-use pages)
            judged = pays if key[0] in self.targets or self._collection(key).widened else useful
            self._learn(key, cls, judged, explore, pays)
        return PageOutcome(kind, useful, new, target)

    def _origin(self, url: str, key: Key | None, requested: str | None) -> tuple[Key, int] | None:
        """(The collection the re-check opened, links from one of its pages) of a page fetched from ``key``:
        (key, 0) for a page of such a collection (a probe, or its pages since it paid), else what the
        page that queued it was within YIELD_HOPS, else None."""
        col = self.collections.get(key) if key is not None else None
        if col is not None and (col.decision == RECHECK or col.widened):
            return key, 0
        return self.lineage.get(requested or url) or self.lineage.get(url)

    def target_by_url(self, url: str, cls: int | None) -> int | None:
        """The target class a page of class ``cls`` (None: no class) is by its URL, when its structure's class
        says nothing by URL: ``cls``'s sample URLs share no word the URL has all of, and the URL has every
        word a target class's sample URLs share (the most such words wins).  The model may put pages of two
        page types that look alike into one class (commons-math3: 412 class-use stubs, "No usage of …",
        with the package trees and constant values in a class whose URLs share nothing); the URL still
        tells them apart (``…/class-use/X.html``).  The path's words only: a query may name another page
        (Javadoc's frameset ``index.html?org/…/class-use/X.html``, 927 false class-use items with it).
        And the target's URL pattern must match, more specifically than ``cls``'s if that matches too: one
        word is weak evidence (ghc: ``libraries``, which the module pages' URLs share, made 1,311 source
        pages ``…/libraries/P/src/M.html`` module items; the source class's pattern matches them, the
        module class's does not).  And no other class's words may fit the URL better: the class pages'
        URLs share ``org apache commons math``, which a stub's URL has, but the class-use pages' share
        those and ``class use`` too (413 stubs were class items when a crawl put them with the misc pages)."""
        path = url.split("?", 1)[0]
        words = set(url_words(path))
        if cls is not None and self._word_score(cls, words):
            return None
        scores = {c: self._word_score(c, words) for c in self.targets | set(self.words)}
        best = max(scores, key=lambda c: (scores[c], c in self.targets, -c), default=None)
        if best not in self.targets or not scores[best]:
            return None
        candidates = {c: self.patterns[c] for c in (best, cls) if c is not None and c in self.patterns}
        return best if self._pattern_class(_site_path(path), candidates) == best else None

    def _alias(self, url: str) -> bool:
        """Is ``url`` of a shape whose URLs mostly redirected (``/b/7`` -> ``/book/7.html``)?"""
        shape = url_shape(url)
        return self.redirected[shape] > self.landed[shape]

    def quiet_hub(self, cls: int | None, key: Key | None = None) -> bool:
        """Have the last pages of the harvest and the last pages of hub class ``cls`` (QUIET_SHARE of the
        pages fetched, of each; QUIET_MIN at least) shown no new target and no new URL
        nearer the targets?  Then its pages are not worth fetching any more: the targets this harvest can find
        are known, and this class shows no other.  (Its URLs wait, and come back if a page shows
        something new.)  For a URL of collection ``key`` that never led to a target, the class's own
        run may also be too long to be chance (:meth:`_class_run_is_telling`): a small harvest fetches
        fewer than QUIET_MIN pages of most hub classes (commons-math3's 76 package summaries: 190 hub
        pages after the last of them, none of its five hub classes 50 pages long).  Not for a collection
        that led to targets: its URLs' predicted class may be wrong (pango's index lists its flags pages,
        targets, among the functions, all of one URL pattern).

        Whatever the harvest's state, the URLs a collection holds of a class predicted there whose
        QUIET_MIN pages fetched from it never paid wait too (commons-math3: each class page's FRAMES link,
        a frameset of its own, 923 of them fetched while the class pages went on showing class-use pages).
        Not a collection the re-check opened: its window decides (:meth:`barren_window`); nor a target
        page's: the listings it links are there for the few targets no other page shows."""
        if cls in self.targets:
            return False
        if key is not None and key in self.collections and (self.collections[key].decision == RECHECK
                                                            or self.collections[key].widened):
            return False
        if (key is not None and key[0] not in self.targets and self.sent_of[(key, cls)] >= QUIET_MIN
                and not self.paid_by[(key, cls)]):
            return True
        if not self.hubs_quiet():
            return False
        if self.quiet_of[cls] >= max(QUIET_MIN, QUIET_SHARE * self.pages_of[cls]):
            return True
        return key is not None and not self._leads_to_targets(key) and self._class_run_is_telling(cls)

    def _fruitless(self, cls: int, url: str) -> bool:
        """Have the pages of hub class ``cls`` like ``url`` stopped paying, their run of nothing new toward
        the targets too long to be chance (as :meth:`_class_run_is_telling` judges a class's)?  Then a new
        URL of it is no longer "nearer the targets": the model's distance of a class can be a mixture's
        (ghc: the site's home page, which links the user guide, is in one class with the source pages, so
        every module page showed "new URLs nearer" in its links to source pages and kept the modules
        followed after the last manual page, 560 pages).  Pages *like* ``url``: of those whose URL a fetched
        target page linked when they were fetched, if a fetched target page links ``url``; of the others
        if none does.  A hub page a target links is next to ground the harvest covered; one no target links
        may lead where it has not been (geos: the source listings of the classes harvested showed nothing
        new, 17 in a row, but the source listings a directory lists and no class page fetched links lead to
        the classes no other page links; judged as one, the directory showing them was no progress and the
        re-check closed it again: recall 0.920)."""
        side = (cls, self.target_linked[url] > 0)
        return _run_too_long(self.side_run[side], self.side_pages[side], self.side_paid[side])

    def _class_run_is_telling(self, cls: int | None) -> bool:
        """Is hub class ``cls``'s run of pages that showed nothing new toward the targets too long to be
        chance, as a followed collection's is for the dead rule (:meth:`_run_is_telling`): DEAD_WINDOW
        pages at least, and for a class whose pages before the run paid with a share p, (1-p)^n < DEAD_RISK."""
        return _run_too_long(self.quiet_of[cls], self.pages_of[cls], self.paid_of[cls])

    def dry_spell(self) -> bool:
        """Has the harvest fetched no target for a run too long to be a gap between its targets:
        DRY_TARGETS targets' worth of requests at its cost per target so far, QUIET_SHARE of the pages
        fetched and QUIET_MIN at least?  Then every hub URL waits (:meth:`_waits`) until a target comes,
        but those of a collection the re-check opened and the URLs its pages queued (:meth:`_opened`).  New
        URLs of hub classes, which keep a hub class from being quiet, are a weak sign once no page led to a
        target for so long: commons-math3's 76 package summaries were all fetched by request 77, and the
        hub pages' new hub URLs kept the harvest going to 233 (replay; 135 with this rule).  QUIET_MIN is
        the floor: geos's last directory comes 44 pages after the one before it (20 lost it)."""
        window = max(QUIET_MIN, QUIET_SHARE * self.fetched, DRY_TARGETS * self.fetched / max(1, self.harvested))
        return self.dry >= window

    def hubs_quiet(self) -> bool:
        """Have the last pages of the whole harvest (QUIET_SHARE of the pages fetched, QUIET_MIN at
        least) shown no new target and no new URL nearer the targets, or is it in a dry spell
        (:meth:`dry_spell`)?"""
        return self.quiet >= max(QUIET_MIN, QUIET_SHARE * self.fetched) or self.dry_spell()

    def waits(self, entry: Entry) -> bool:
        """Is ``entry``, handed out, a URL of a quiet hub class (:meth:`quiet_hub`, by the class it is
        predicted to be)?  :meth:`pop` parks it; a shared harvest's worker parks its request in Redis.
        (The class's own count too, not only the harvest's: every worker's plan is fed every page, so
        both are the job's; parking on the harvest's count alone put the demo's author pages aside
        before their collection was found dead, where the re-check did not find them.)"""
        if entry.key is None or entry.explore:  # a start URL, a probe: never parked
            return False
        return self._waits(self._bucket(entry.key, entry.url), entry) and self._other_way(entry) is None

    def _other_way(self, entry: Entry) -> Entry | None:
        """``entry``, which waits by the collection (and list) it was queued under, as linked by another
        collection that linked it while it waited there (:attr:`linked_by`), followed, that wants it and under
        which it does not wait; None if none.  A URL is queued under its first sighting, and the rules that
        make it wait judge that collection's pages (a list idle, a class quiet in that collection): another
        collection's pages may still pay.  qtbase: a class page first seen in a paragraph of another class
        page, a "list" (``p[4]``) whose three pages fetched showed nothing, waited though the module page's
        class table, followed, lists it too -- the harvest ended with 97 class pages waiting, 12 of them the
        only way to an obsolete-members page (replay 0.931)."""
        for key, referer in self.linked_by.get(entry.url, ()):
            col = self.collections.get(key)
            if key == entry.key or col is None or col.decision != FOLLOW or not self._wanted(key, entry.url) \
                    or self._covered(key, entry.url):
                continue
            other = Entry(entry.url, key, referer, False)
            if not self._barren(other) and not self._waits(self._bucket(key, entry.url), other):
                return other
        return None

    def _learn(self, key: Key, cls: int | None, useful: bool, explore: bool, pays: bool) -> None:
        col = self._collection(key)
        col.fetched += 1
        if col.decision == RECHECK or col.widened:
            col.rechecks += 1
        elif explore:  # also when a stored harvest is replayed: its probes are not handed out again
            col.probes = max(col.probes, col.fetched)
        col.outcomes[cls] += 1
        col.useless_run = 0 if useful else col.useless_run + 1
        col.useful += useful
        if col.decision == RECHECK and pays:
            col.decision = FOLLOW
            col.widened = True
            col.rechecks = 0
            col.window = self.barren_window()
            self._release(key, col)
        elif col.decision == RECHECK and col.rechecks >= RECHECK_PAGES:
            col.decision = col.before_recheck
            if col.decision == FOLLOW:  # what it showed meanwhile waited
                self._release(key, col)
        elif col.widened and not col.yielded and col.rechecks >= col.window:
            # its probes paid by new URLs nearer the targets, but none of them led to a target page: a
            # section of hubs that lead to targets known already (the demo's news archive: its pages show
            # articles, which show known books); its waiting URLs are held, as a dead collection's
            col.decision, col.widened, col.barren = col.before_recheck, False, True
        elif col.decision == EXPLORE and self._leads(key[0], cls):
            col.decision = FOLLOW
            self._release(key, col)
        elif col.decision == EXPLORE and col.fetched >= PROBE_PAGES:
            col.decision = SKIP
        elif (col.decision == FOLLOW and not col.widened and self._run_is_telling(col)
              and not any(t in self.targets for t in self.links.get(key, ()))
              and not any(t in self.targets for t in col.outcomes)):
            col.decision = SKIP

    def barren_window(self) -> float:
        """Pages a collection the re-check opens now may fetch without leading to a target before it is closed
        again: BARREN_TARGETS targets' worth at the harvest's requests per target so far, and RECHECK_PAGES at
        least (a collection that leads to few targets is worth what they cost elsewhere).  Fixed when it
        opens: the pages it fetches must not raise it."""
        return max(RECHECK_PAGES, BARREN_TARGETS * self.fetched / max(1, self.harvested))

    def _run_is_telling(self, col: _Collection) -> bool:
        """Is the collection's run of non-useful pages too long to be chance?  A collection that was
        never useful is dead after DEAD_WINDOW pages; one whose pages before the run were useful with
        a share p, once (1-p)^n < DEAD_RISK for a run of n (a list of books most of which have no
        reviews is not dead after ten books without one); p at most the discovery rate when its pages
        link targets (:meth:`_discovery`)."""
        main = col.outcomes.most_common(1)[0][0] if col.outcomes else None
        return _run_too_long(col.useless_run, col.fetched, col.useful, self._discovery(main))

    def _discovery(self, cls: int | None) -> float | None:
        """The chance that a page of class ``cls`` shows a target no page linked yet, when its pages link
        targets (distance 1) and the targets not seen yet keep the harvest short of RECALL_GOAL; else None.
        The Good–Turing rate of a sighting (``analysis.unseen``): a page showing one target link, as a book
        its publisher, pays at that rate.  (The demo's last publishers, each linked only by its ~6 books, none
        fetched: the books' lists paid on 90 % of their pages and were found dead after ten that did not,
        at a discovery rate of 3 %; 53 of 600 missed over HTTP.)"""
        if cls is None or self.dist.get(cls) != 1 or not self.seen.short_of(RECALL_GOAL, UNSEEN_Z):
            return None
        return self.seen.discovery_rate()

    def _reopen(self, key: Key, col: _Collection) -> None:
        """Follow again to its end a collection closed again after its re-check (:attr:`_Collection.barren`)
        whose pages led to a target since: a target two links away may come after its RECHECK_PAGES pages
        (geos's class-member pages: directory -> source listing -> class -> members)."""
        col.decision, col.widened, col.barren = FOLLOW, True, False
        self._release(key, col)
        stalled, col.stalled = col.stalled, []
        for entry, hops in stalled:
            if entry.url not in self.queued:
                self._push(entry.url, entry.key, entry.referer)
                self.lineage[entry.url] = (key, hops)

    def _release(self, key: Key, col: _Collection) -> None:
        held, col.held = col.held, []
        if col.widened:
            held = self._novel_first(held, key)
        for u, referer in held:
            if u in self.queued:
                continue
            if not self._covered(key, u) and self._wanted(key, u):
                self._push(u, key, referer)
            else:  # still held: a later re-check may probe it
                col.held.append((u, referer))

    # -- handing out -----------------------------------------------------------------
    def explore_budget(self) -> int:
        """Exploration pages still allowed now (probes handed out count at once; a replay counts the
        explored pages it is given)."""
        return int(self.explore_min + self.explore_share * self.fetched) - max(self.explored, self.probes_out)

    def pop(self, hubs: bool = True) -> Entry | None:
        """The next URL to fetch, or None when nothing is left (exploration too, within its budget).
        Probes go first while the budget allows: a hub found early is followed early.  ``hubs=False``:
        only a URL predicted to be a target (the fetcher waits for the pages in flight, which may
        show more targets, before it spends a request on a hub)."""
        probe = self._probe() if hubs else None
        if probe is not None:
            return probe
        while self.buckets or self.deferred:
            bucket = min(self.buckets, key=self._order) if self.buckets else None
            if self.deferred and (bucket is None or (bucket not in self.targets and bucket != SEEDS)):
                # predicted targets wait for their lists' pages: no hub page before those tell them
                back = [lst for lst in self.deferred if not self.pending.get(lst)]
                if not back:
                    return None
                self._release_deferred(*back)
                continue
            if not hubs and bucket not in self.targets and bucket != SEEDS:
                return None
            waiting = self.buckets[bucket]
            entry = waiting.popleft()
            if not waiting:
                del self.buckets[bucket]
            if entry.url in self.done:  # fetched under another URL (a redirect), or replayed from the store
                continue
            if bucket != SEEDS and not entry.explore and (self._moved(bucket, entry)
                                                          or self._place_told(bucket, entry)):
                continue
            # a URL the last round's probe revealed is the harvest's last lead: parked with its quiet class,
            # the harvest would end without it (the 2,952-page demo's publishers: the books that alone link
            # two of them, listed by category pages past the second, 0.966 -> 1.000 in replay)
            revealed = entry.referer in self.round_probes
            if bucket != SEEDS and not revealed and self._place_idle(bucket, entry):
                self.parked.append(entry)
                continue
            if bucket != SEEDS and not revealed and self._waits(bucket, entry):
                other = self._other_way(entry)
                if other is None:
                    self.parked.append(entry)
                else:
                    self.buckets.setdefault(self._bucket(other.key, other.url), deque()).append(other)
                continue
            if self.skipped(entry):
                self.hold(entry)
                continue
            if bucket in self.targets and self._awaits_evidence(entry):
                continue
            lkey = self.list_of.get(entry.url)
            if lkey is not None and lkey[:2] == entry.key:
                if bucket != SEEDS and self._list_probe(entry) and self._resting(bucket, entry):
                    self.probes_out += 1  # a quiet class's page, for its list: from the exploration budget
                self.list_out[lkey] += 1
            return entry
        return None

    def _list_of_entry(self, key: Key | None, url: str) -> tuple | None:
        """The list (:meth:`_list_class`) URL ``url`` of collection ``key`` belongs to, or None."""
        lkey = self.list_of.get(url)
        if lkey is not None:
            return ("list", lkey) if lkey[:2] == key else None
        pkey = self.page_list_of.get(url)
        return ("page", pkey) if pkey is not None and pkey[0] == key else None

    def _outcomes_of(self, lst: tuple) -> Counter | None:
        """The classes of the pages fetched of list ``lst`` (:meth:`_list_of_entry`)."""
        return (self.list_outcomes if lst[0] == "list" else self.page_list_outcomes).get(lst[1])

    def _awaits_evidence(self, entry: Entry) -> bool:
        """Does ``entry``, predicted a target, wait for the pages of its list handed out already
        (:meth:`_list_waits`)?  Then it is deferred; else recorded as on its way."""
        lst = self._list_of_entry(entry.key, entry.url)
        if lst is None:
            return False
        if self._list_waits(lst, entry):
            self.deferred.setdefault(lst, []).append(entry)
            return True
        self.pending.setdefault(lst, set()).add(entry.url)
        self.pending_in[entry.url] = lst
        return False

    def _list_waits(self, lst: tuple, entry: Entry) -> bool:
        """Does ``entry``, of list ``lst``, wait for the list's pages on their way?  While the list has not
        told its class (:meth:`_list_class`) nor shown a target, and LIST_EVIDENCE of its pages are back or
        on their way, unless the URL names a target's type (:meth:`_names_target`): handed out at
        once, a list's URLs all go before its first pages can tell them (erl_docgen's front pages' menu of
        modules, each predicted a chapter on a tie: all 34 of snmp's requested at 32 in flight; 255
        reference pages in all for the chapters, 769 -> 614 requests in replay).  No hub page is handed
        out meanwhile (:meth:`pop`): the list may be targets after all, which make hub pages unnecessary.
        A request the spider lost is reported failed when it goes idle, so no wait lasts.
        The LIST_EVIDENCE pages are the first, middle and last of the list (:func:`_spread`), a list of a
        collection holding several on a page as well as one holding one: PostgreSQL's index holds one
        alphabetical list per letter, and the first three of S's were sections, so the list told "sections"
        and its SPI refentries, in its middle, went to the sections' bucket and were parked (829-973 requests
        for the refentries instead of 785-804, recall 0.987 in one order of four, in replay); spread, the
        sample holds one and the list goes on (750-803, 0.997)."""
        pending = self.pending.get(lst)
        if not pending or self._names_target(entry):
            return False
        seen = self._outcomes_of(lst) or Counter()
        pages = sum(seen.values())
        if pages >= LIST_EVIDENCE or any(c in self.targets for c in seen):  # told, or it shows targets
            return False
        if pages + len(pending) >= LIST_EVIDENCE:
            return True
        # the first pages are spread over the list: a list sorted by kind starts with one kind (a list of
        # several on a page too: PostgreSQL's index, one alphabetical list per letter)
        if lst[0] == "list":
            where = self.list_place_of.get(entry.url)
            return where is not None and where[0] not in _spread(where[1])
        place = self.place_of.get(entry.url)
        return place is not None and place[0] == entry.key and place[1] not in _spread(place[2])

    def _returned(self, url: str) -> None:
        """A URL handed out is back (under whatever collection it was fetched from at last): the URLs of its
        list that waited for it are queued again once they need not wait any more."""
        lst = self.pending_in.pop(url, None)
        if lst is None:
            return
        self.pending[lst].discard(url)
        waiting = self.deferred.get(lst)
        if waiting and not self._list_waits(lst, waiting[0]):
            self._release_deferred(lst)

    def idle(self) -> bool:
        """Nothing is on its way (the spider went idle): the URLs that waited for pages handed out go now;
        True when some did.  A page that came back under a form no list knows it by, or a shared harvest's
        page that another worker reported so, held them."""
        self.pending.clear()
        self.pending_in.clear()
        if not self.deferred:
            return False
        self._release_deferred(*self.deferred)
        return True

    def _release_deferred(self, *lists: tuple) -> None:
        for lst in lists:
            for entry in self.deferred.pop(lst, ()):
                self.buckets.setdefault(self._bucket(entry.key, entry.url), deque()).append(entry)

    def _waits(self, bucket: Bucket, entry: Entry) -> bool:
        """Is ``entry`` (in ``bucket``) of an idle list (:meth:`_list_idle`), or of a quiet hub class
        (:meth:`quiet_hub`) -- unless no other collection links it and it is of a list none of whose URLs
        was handed out yet, within the exploration budget (:meth:`_list_probe`)?  A list is judged on its
        own pages: one never tried may lead where the pages of its class fetched from other lists did not
        (erlang's home page lists the general documents in a list of its own, and only one of those
        chapters links the general users' guide, a front page; parked with the quiet chapters, 81 of 84
        front pages, with one probe per list 82).  Not a URL other collections link too (javadoc's
        navigation bars, one probe each: 18 requests more), and not beyond the budget (haddock's module
        pages hold one list per instance table: 30 probes more for ghc's manual pages).
        """
        if self._list_idle(bucket, entry):
            return True
        if not self._resting(bucket, entry):
            return False
        return not self._list_probe(entry)

    def _resting(self, bucket: Bucket, entry: Entry) -> bool:
        """Is ``entry`` (in ``bucket``) a hub URL that waits now: in a dry spell (:meth:`dry_spell`), but
        for the URLs the re-check opened (:meth:`_opened`), or of a quiet hub class (:meth:`quiet_hub`)?"""
        cls = _bucket_class(bucket)
        if self.dry_spell() and cls not in self.targets and not self._opened(entry):
            return True
        return self.quiet_hub(cls, entry.key)

    def _opened(self, entry: Entry) -> bool:
        """Is ``entry`` of a collection the re-check opened, or queued within YIELD_HOPS of one?  Its
        window decides (:meth:`barren_window`), not the harvest's dry spell: the ground it opens lies
        several links from the next target (geos: directory -> source listing -> class page)."""
        for key in (entry.key, (self.lineage.get(entry.url) or (None,))[0]):
            col = self.collections.get(key) if key is not None else None
            if col is not None and (col.decision == RECHECK or col.widened):
                return True
        return False

    def _list_probe(self, entry: Entry) -> bool:
        """Is ``entry`` the first URL handed out of its list, which no other collection links, while the
        exploration budget allows one more page?"""
        lkey = self.list_of.get(entry.url)
        return (lkey is not None and lkey[:2] == entry.key and not self.list_out[lkey]
                and self.sightings[entry.url] <= 1 and self.explore_budget() > 0)

    def _moved(self, bucket: Bucket, entry: Entry) -> bool:
        """Has ``entry``'s list, fetched since it was queued, told its class (:meth:`_list_class`), another
        than its bucket's?  Then it waits in that class's bucket, or, of a class its followed collection
        does not lead to, among the URLs that collection holds (gi-docgen's index: the functions' table
        once three of its pages were functions, not the structs harvested)."""
        told, cls = self._list_class(entry.key, entry.url)
        return told and self._rebucket(bucket, entry, cls)

    def _place_told(self, bucket: Bucket, entry: Entry) -> bool:
        """Has ``entry``, waiting as a predicted target, a place in a menu of several links
        (:meth:`_menu_place`) from which LIST_EVIDENCE pages or more were fetched since it was queued, none a
        target?  Then it waits as the place's most frequent class, as a URL whose list told its class
        (:meth:`_moved`).  A URL is predicted when it is first seen, before any page of its place was fetched:
        erl_docgen's front pages list the application's documents in one menu, the release notes (a chapter)
        at the same place on every front page, and each was fetched as a predicted front page.  Not a URL
        that a target's URL pattern matches and no pattern of the collection's other classes does (the URL
        names its type), and not in a one-link list: that is its collection, which the lost bets judge
        (:meth:`_bets_lost`)."""
        place = self._menu_place(entry) if _bucket_class(bucket) in self.targets else None
        if place is None or place[2] < 2:
            return False
        if self._names_target(entry):
            return False
        seen = self.place_outcomes.get(place)
        if not seen or sum(seen.values()) < LIST_EVIDENCE or any(c in self.targets for c in seen):
            return False
        return self._rebucket(bucket, entry, min(seen, key=lambda c: (-seen[c], c is None, c or 0)))

    def _names_target(self, entry: Entry) -> bool:
        """Does ``entry``'s URL name a target's type: a target's URL pattern matches it and no pattern of the
        other classes its collection leads to does?"""
        path = _site_path(entry.url)
        return self._pattern_class(path, self.patterns) in self.targets and not any(
            c not in self.targets and (p := self.patterns.get(c)) is not None and p.search(path)
            for c in self._led_to(entry.key) if c is not None)

    def _rebucket(self, bucket: Bucket, entry: Entry, cls: int | None) -> bool:
        """Move ``entry`` from ``bucket`` to the one of class ``cls``, or, of a class its followed collection
        does not lead to, among the URLs that collection holds; False when it is in that bucket already."""
        better = self._bucket(entry.key, entry.url, cls)
        if better == bucket:
            return False
        col = self.collections[entry.key]
        if col.decision == FOLLOW and not self._wanted(entry.key, entry.url, cls):
            self.queued.discard(entry.url)
            col.held.append((entry.url, entry.referer or ""))
        else:
            self.buckets.setdefault(better, deque()).append(entry)
        return True

    def _list_idle(self, bucket: Bucket, entry: Entry) -> bool:
        """Is ``entry``, not predicted a target, of a list none of whose pages was a target, and whose
        pages stopped showing a new target or a new URL nearer the targets: LIST_EVIDENCE pages of which
        none did, or a run of such pages too long to be chance, as the dead rule judges a collection's
        (:meth:`_run_is_telling`)?  Its other URLs wait, as a quiet hub's, while the lists beside it in its
        collection go on (gi-docgen's index: the functions' table, one of whose first 50 pages showed a
        new URL, while the structs' table is harvested).  Not in a collection the re-check opened, whose
        own window decides."""
        lkey = self.list_of.get(entry.url)
        if _bucket_class(bucket) in self.targets or lkey is None or lkey[:2] != entry.key:
            return False
        col = self.collections[entry.key]
        seen = self.list_outcomes.get(lkey)
        if col.decision == RECHECK or col.widened or not seen or any(c in self.targets for c in seen):
            return False
        pages, paid, run = sum(seen.values()), self.list_paid[lkey], self.list_run[lkey]
        if not paid:
            return pages >= LIST_EVIDENCE
        return _run_too_long(run, pages, paid)

    def _place_idle(self, bucket: Bucket, entry: Entry) -> bool:
        """Is ``entry``, not predicted a target, of a collection the re-check widened, at a place of a menu
        (:data:`Place` in a list of the length the collection's list has on most pages holding it) from which
        LIST_EVIDENCE pages or more were fetched, none a target and none showing a new target or a new URL
        nearer the targets?  A menu's items keep their place from page to page (Haddock's page menu: the
        module's source, then its package's contents and index); the re-check widens a menu for the place
        that leads on, not for the others (ghc: 254 source pages fetched for the package contents pages
        that lead to the last module pages).  A list of records is no menu: the same index in lists of the
        same length is a coincidence there (geos's directories' file lists), and lengths vary.  Only in a
        widened collection: elsewhere the plan's rules judge the collection, and parking a place's URLs
        sooner changed which collections the re-check opened (commons-math3's classes: 1,223 -> 2,127)."""
        place = self._menu_place(entry) if _bucket_class(bucket) not in self.targets else None
        if place is None or not self.collections[entry.key].widened:
            return False
        seen = self.place_outcomes.get(place)
        return (seen is not None and sum(seen.values()) >= LIST_EVIDENCE and not self.place_paid[place]
                and not any(c in self.targets for c in seen))

    def _menu_place(self, entry: Entry) -> Place | None:
        """``entry``'s place in its collection's list when that is a menu (:meth:`_in_menu`)."""
        place = self.place_of.get(entry.url)
        return place if place is not None and place[0] == entry.key and self._in_menu(place) else None

    def _in_menu(self, place: Place) -> bool:
        """Is ``place``'s list of the length its collection's list has on most pages holding it: a menu,
        whose items keep their place from page to page?"""
        lengths = self.list_lengths.get(place[0], Counter())
        return bool(lengths) and 2 * lengths[place[2]] >= sum(lengths.values()) \
            and lengths[place[2]] >= max(lengths.values())

    def skipped(self, entry: Entry) -> bool:
        """Is ``entry`` of a collection found dead?  (Not of one this plan has not heard of yet: a shared
        harvest's worker may take a request before it reads the page that showed it.)"""
        col = self.collections.get(entry.key) if entry.key is not None else None
        return col is not None and (col.decision == SKIP or self._barren(entry))

    def _barren(self, entry: Entry) -> bool:
        """Was ``entry``, not predicted a target, queued within YIELD_HOPS of a collection closed again after
        its re-check (or by the pager of a listing so queued: the demo's archive months, each linking the
        month before)?"""
        origin = self.lineage.get(entry.url)
        return (origin is not None and self.collections[origin[0]].barren
                and self._bucket(entry.key, entry.url) not in self.targets)

    def hold(self, entry: Entry) -> None:
        """``entry``, handed out, is of a dead collection (:meth:`skipped`): it waits among the URLs that
        collection holds, where a re-check finds it, and another collection may still bring it.  (A
        shared harvest's worker takes it back from the queue in Redis, and every worker's plan is told.)
        A followed collection that linked it while it waited brings it now if its pages so far were useful;
        one whose pages were not holds it too, and brings it once released (:meth:`_release`: its re-check
        paid).  Its pages showed the URL while it was queued, so they will not show it again, and the dead
        collection's re-check, which probes the URLs fewest collections link first, reaches it last:
        qtbase's ``qsignalmapper.html`` and ``qprinterinfo.html``, first seen on other class pages (dead)
        and listed by their module page's class table (followed, no page useful yet, opened by the re-check
        near the end), are the only way to two obsolete-members pages (replay, default order: 0.988 / 898
        requests -> 1.000 / 902)."""
        if entry.url in self.queued and entry.url not in self.done:  # not told twice
            self.queued.discard(entry.url)
            # another collection that links it brings it on its own account
            origin = self.lineage.pop(entry.url, None)
            if self.collections[entry.key].decision != SKIP and origin and self.collections[origin[0]].barren:
                self.collections[origin[0]].stalled.append((entry, origin[1]))
            else:
                self.collections[entry.key].held.append((entry.url, entry.referer or ""))
            # or one that linked it already, while it waited here: a followed collection that wants it, and
            # whose pages so far were useful; a followed one whose pages were not holds it too, for when it
            # is released (its re-check paid)
            linked = [(key, referer) for key, referer in self.linked_by.get(entry.url, ())
                      if key != entry.key and self.collections[key].decision == FOLLOW
                      and self._wanted(key, entry.url)]
            for key, referer in linked:
                if self.collections[key].useful:
                    self._push(entry.url, key, referer)
                    break
            else:
                for key, referer in linked:
                    self.collections[key].held.append((entry.url, referer))

    def _novel_first(self, held: list[tuple[str, str]], key: Key | None = None) -> list[tuple[str, str]]:
        """``held`` URLs linked by the fewest collections first: a URL that only this collection links leads
        where the harvest has not been more likely than one other pages link too — geos's source listings
        of classes no page fetched links are listed by their directory page alone.  Among as many, those in
        the URL folders the harvest fetched fewest pages of first: a region it has hardly been to is where
        pages no fetched page links lie (qtbase: the obsolete-members pages that link the ``qtxml`` classes
        no other page links are in ``qtxml/``; at random 20 probes among ~170 missed them, 0.984 of the
        members pages in replay, 1.000 so).  Then in an order fixed by the URL's checksum, so that probes
        sample the whole collection rather than its head (the first directories of geos list the source
        files that hold no class).  With ``key``, among as many sightings, a URL at a menu place of it
        whose pages paid first, one at a place whose pages never did last (:meth:`_place_bet`): Haddock's
        page menu holds ~100 source pages beside the one package contents page that leads on."""
        def rank(h: tuple[str, str]) -> tuple:
            return (self.sightings[h[0]], self._place_bet(key, h[0]), self.fetched_in[_folder(h[0])],
                    zlib.crc32(h[0].encode("utf-8", "replace")))

        return sorted(held, key=rank)

    def _place_bet(self, key: Key | None, url: str) -> int:
        """How a menu's place bets on ``url``: 0, at a place of ``key``'s menu (:meth:`_menu_place`) whose
        pages paid; 2, at one from which LIST_EVIDENCE pages were fetched, none paying; 1, anywhere else."""
        place = self.place_of.get(url)
        if key is None or place is None or place[0] != key or not self._in_menu(place):
            return 1
        if self.place_paid[place]:
            return 0
        seen = self.place_outcomes.get(place)
        return 2 if seen is not None and sum(seen.values()) >= LIST_EVIDENCE else 1

    def _menu_paid(self, key: Key) -> bool:
        """Is ``key`` a menu of two links or more one of whose places paid (:meth:`_place_bet`)?"""
        lengths = self.list_lengths.get(key, Counter())
        return any(n > 1 and self._in_menu((key, 0, n)) and any(self.place_paid[(key, i, n)] for i in range(n))
                   for n in lengths)

    def _probe(self) -> Entry | None:
        """An URL of a collection being explored, when the budget allows (a re-checked one: its URLs that
        fewest collections link first)."""
        if not self._exploring or self.explore_budget() <= 0:
            return None
        for key in list(self._exploring):
            col = self.collections[key]
            if col.decision == RECHECK and col.probes == 0:
                col.held = self._novel_first(col.held, key)
            limit = RECHECK_PAGES if col.decision == RECHECK else PROBE_PAGES
            while col.decision in (EXPLORE, RECHECK) and col.held and col.probes < limit:
                u, referer = col.held.pop(0)
                if u in self.queued or u in self.done:
                    continue
                col.probes += 1
                self.probes_out += 1
                self.queued.add(u)
                return Entry(u, key, referer, True)
            del self._exploring[key]
        return None

    def recheck(self) -> int:
        """The plan ran dry (nothing waiting, nothing in flight): probe again, within the exploration
        budget, the skipped collections that lead to a class from which targets are reachable, nearest
        first; one whose probe shows a new target or a new URL nearer the targets is followed to any
        such class, farther ones too, and to its end (the dead rule no longer closes it: geos's
        directory pages whose source listings show a class no page fetched links are 22 of 142, rarer
        than the run of useless pages the rule allows) — if its pages, or the pages they lead to within
        YIELD_HOPS, are targets at all: one whose RECHECK_PAGES pages since it paid led to none is closed
        again (the demo's news archive, whose probes show new articles that link known books).
        Targets linked only from pages of a class farther than the page linking them (geos: ~30 class
        pages linked only from source listings reached through directory pages, which only source
        listings link; qtbase: classes linked only from obsolete-members pages) are reached no other way.

        The collections no page was fetched from yet go first, then the nearest, then those holding the most
        such URLs that no fetched target page links, then the most such URLs: a collection the harvest sampled
        (its probes, or its pages before the dead rule closed it) was judged on evidence, one never sampled
        only by the model's link counts, and the budget is spent in this order (geos: the source listings'
        links to their directories, never followed, before the class pages' links to their source files, 17 of
        which had led nowhere: the ~30 pages of the budget went to the latter, 0.920 in replay; in this order
        1.000).

        A collection sampled before whose URLs only fetched target pages link is re-checked in a round of
        its own, the last: its pages showed nothing, and its URLs lie next to ground the harvest covered
        (geos: the class pages' links to their own source files, 16 fetched and none useful, took the 20
        probes of the round that also opened the source listings' links to their directories, whose pages
        fill the directories' file lists -- closed by the dead rule, re-checked in the next round with
        6 pages of budget left: 0.920; so 1.000).  Not a menu one of whose places paid
        (:meth:`_place_bet`): its pages showed something there, and it ranks with the collections never
        sampled (Haddock's page menu, skipped after its source pages, holds the package contents page that
        alone leads to 192 of Cabal's modules: in the last round, behind three collections never sampled
        that took the budget, 0.846 of ghc's module pages in replay; so 0.980).

        A collection is re-checked once, and only if it holds URLs no other collection of a fetched
        page links: one whose URLs other pages offer too leads nowhere they did not (the demo's
        footers, its news archive, a book's author that the category pages list too), and probing it
        spends the budget the collections of novel URLs need (the demo's 900-page harvest fetched ~650
        or ~840 pages depending on which got the budget first).  The URLs parked meanwhile (quiet
        hubs) whose collection was found dead since are held by it first, as :meth:`pop` holds them.
        Returns the number of collections opened (0: nothing left to try)."""
        parked, self.parked = self.parked, []
        for entry in parked:
            if self.skipped(entry):
                self.hold(entry)
            else:
                self.parked.append(entry)
        if self.explore_budget() <= 0:
            return self._probe_parked()
        ranked: dict[str, list] = {SKIP: [], FOLLOW: [], COVERED: []}
        for key, col in self.collections.items():
            if col.decision not in ranked or col.rechecked or not any(u not in self.queued for u, _r in col.held):
                continue
            seen = self.links.get(key, Counter()) + col.outcomes
            nearest = min((self.dist.get(c, FAR) for c in seen if c is not None), default=FAR)
            novel = [u for u, _r in col.held if self.sightings[u] <= 1 and u not in self.queued]
            # of those, the URLs no fetched target page links: a target page's own link was judged there
            # (its listing, its source file), and leads next to ground the harvest covered
            far = sum(1 for u in novel if not self.target_linked[u])
            if novel:
                # sampled, and all it holds target pages link: its pages showed nothing (at no place of a
                # menu), and its URLs lie next to ground the harvest covered -- re-checked last
                paid_place = self._menu_paid(key)
                tier = col.decision if far or not col.fetched or paid_place else COVERED
                ranked[tier].append((col.fetched > 0 and not paid_place, nearest, -far, -len(novel), key))
        # skipped collections first; the URLs a followed collection held back (predicted of a class
        # farther away: ghc's user guide, which alone links one library's modules) once none is left
        chosen = ranked[SKIP] or ranked[FOLLOW] or ranked[COVERED]
        if not chosen:
            return self._probe_parked()
        for *_rank, key in sorted(chosen, key=lambda r: r[:4]):
            col = self.collections[key]
            col.before_recheck = col.decision
            col.decision, col.rechecked, col.probes = RECHECK, True, 0
            self._exploring[key] = None
        return len(chosen)

    def _probe_parked(self) -> int:
        """Nothing is left to re-check: the URLs parked for quiet hubs would end the harvest unfetched.  Those that one
        fetched page links, no more (a re-check's rule: a URL other pages offer too leads nowhere they did not),
        or that a target page links (a target's links lead to its kin: PostgreSQL's ECPG chapter, linked by the
        bookindex, its own sections and the ``ecpg`` program's reference page, holds the 17 reference pages of
        its embedded SQL; parked, 0.938 of the refentries in one HTTP run in four to ten), are probed: one round
        of RECHECK_PAGES at most, as a re-checked collection's, novel first (:meth:`_novel_first`); a probe that
        pays brings the rest back, as any page that shows something new does, and a target harvested since
        allows another round when the plan runs dry again. The round is not the exploration budget's: parked
        URLs are those of collections the plan follows, waiting while their class is quiet, and a spent budget
        ended the harvest with them (the 2,952-page demo's publishers: the category pages past the second, the
        only way to the books that alone link two of them, 0.966 in replay; the URLs a probe of the round
        reveals are not parked again, :meth:`pop`). geos: the members lists' harvest ended with three directory
        pages parked, the only way to 6 of its 362 targets (0.983 over HTTP).  Any parked URL: PostgreSQL's
        chapters +103 requests in replay for nothing; rounds until the budget is spent: the demo's authors and
        publishers +580.  Returns the number of URLs handed to the probes."""
        if self.parked_probed:
            return 0
        self.parked_probed = True
        by_url = {e.url: e for e in self.parked if e.url not in self.done
                  and (self.sightings[e.url] <= 1 or self.target_linked[e.url] > 0)}
        novel = self._novel_first([(u, e.referer or "") for u, e in by_url.items()])
        chosen = self.round_probes = {u for u, _r in novel[:RECHECK_PAGES]}
        self.parked = [e for e in self.parked if e.url not in chosen and e.url not in self.done]
        for url, _referer in novel:
            if url in chosen:
                entry = by_url[url]
                self.buckets.setdefault(SEEDS, deque()).append(Entry(url, entry.key, entry.referer, False))
        return len(chosen)

    def priority(self, entry: Entry) -> int:
        """:meth:`pop`'s order as a Scrapy request priority (higher first), for a queue shared by several
        harvest processes: seeds and probes, then URLs predicted to be targets, then hubs, nearer first
        and within a distance the classes whose pages showed the most new URLs leading nearer so far
        first, then the listings linked from target pages: ``_order``'s buckets, ranked when the URL
        is queued.  (Without the ranks, the demo's author pages, linked from the category pages, waited
        in Redis level with the categories' next pages and were fetched first by chance: they showed
        books the categories had not shown yet, kept their collection alive, and three workers fetched
        up to 64 author pages more than one process.)"""
        if entry.key is None or entry.explore:
            return 1
        bucket = self._bucket(entry.key, entry.url)
        cls = _bucket_class(bucket)
        distance = FAR if cls is None else self.dist.get(cls, FAR)
        if distance == 0:
            return 0
        span = len(self.dist) + 1  # more than the ranks of a distance, and than any finite distance
        level = int(min(distance, span - 1)) + (span if isinstance(bucket, tuple) else 0)
        rivals = sorted((c for c, d in self.dist.items() if d == distance), key=lambda c: -self.novelty(c))
        rank = rivals.index(cls) if cls in rivals else span - 1
        return -(level * span + rank)

    def failed(self, entry: Entry, alias: bool = False) -> None:
        """A URL handed out gave no page (HTTP error, robots.txt, off-site redirect …); ``alias``: it
        redirected to a page fetched already."""
        if alias:
            self.redirected[url_shape(entry.url)] += 1
        self.fetched += 1
        self.done.add(entry.url)
        if entry.explore:
            self.explored += 1
        self._returned(entry.url)

    # -- figures ------------------------------------------------------------------
    def _share(self, key: Key, classes: frozenset[int] | set[int]) -> float:
        """Share of collection ``key``'s links (the model's counts plus the outcomes) that led to ``classes``."""
        counts = self.links.get(key, Counter()) + self.collections[key].outcomes
        total = sum(counts.values())
        return sum(n for c, n in counts.items() if c in classes) / total if total else 0.0

    def _waiting(self) -> Iterator[Key]:
        """The collections of the URLs waiting, one per URL, dead collections left out."""
        for q in [*self.buckets.values(), *self.deferred.values()]:
            for e in q:
                if e.key is not None and self.collections[e.key].decision != SKIP:
                    yield e.key

    def estimated_targets(self) -> int:
        """Targets harvested plus the expected targets among the URLs waiting."""
        return self.harvested + round(sum(self._share(key, self.targets) for key in self._waiting()))

    def summary(self) -> list[dict[str, Any]]:
        """Per class the harvest planned for or fetched (class None: pages that fit no class), in id
        order: its ``role`` (target, hub: the plan goes through it, other), ``fetched`` pages, and for
        a target class ``harvested`` and ``estimated`` (harvested plus its expected pages among the
        URLs waiting)."""
        waiting = list(self._waiting())
        rows = []
        for cls in sorted(set(self.pages_of) | self.targets | self.hubs(), key=lambda c: (c is None, c or 0)):
            role = "target" if cls in self.targets else "hub" if cls in self.hubs() else "other"
            row: dict[str, Any] = {"class": cls, "role": role, "fetched": self.pages_of[cls]}
            if role == "target":
                row["harvested"] = self.harvested_of[cls]
                row["estimated"] = self.harvested_of[cls] + round(sum(self._share(key, {cls}) for key in waiting))
            rows.append(row)
        return rows


def _bucket_class(bucket: Bucket) -> int | None | str:
    """The class of a bucket's URLs (the class of a (LISTINGS, class) bucket)."""
    return bucket[1] if isinstance(bucket, tuple) else bucket


def _folder(url: str) -> str:
    """The folder of ``url``'s path: up to its last slash."""
    return _path_only(url).rsplit("/", 1)[0]


def _path_only(url: str) -> str:
    """``url`` without its query and fragment."""
    return url.split("#", 1)[0].split("?", 1)[0]


def _site_path(url: str) -> str:
    """``/path?query`` of an absolute URL, what ``url_pattern`` matches."""
    rest = url.split("://", 1)[-1]
    i = rest.find("/")
    return rest[i:].split("#", 1)[0] if i >= 0 else "/"
