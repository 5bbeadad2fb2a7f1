"""The Compute-Model loop of Crescenzi et al. Fig. 5, driven one batch at a time.

``Explorer`` owns the site model, the frontier and the stability rule.  Whoever
fetches pages — the Scrapy spider, or ``run_offline`` with a plain callable —
asks it for the next batch, fetches the URLs in any order and concurrency, and
hands back the pages (features) that came back; the model step then runs:
candidate selection, model update, new links into the frontier.
"""

from __future__ import annotations

import math
from collections import Counter, deque
from dataclasses import dataclass, replace
from typing import Callable, Iterable
from urllib.parse import urlsplit

from structcrawl.core.candidates import DT, Selection, select_candidates
from structcrawl.core.features import PageFeatures, extract
from structcrawl.core.frontier import Batch, Frontier
from structcrawl.core.model import (
    MISSING_SECTIONS,
    Candidate,
    Costs,
    Decision,
    Page,
    PageClass,
    SiteModel,
    missing_sections,
)
from structcrawl.core.recluster import recluster
from structcrawl.core.refine import Merge, Refiner
from structcrawl.core.spelling import PathSpeller
from structcrawl.core.split import regroup
from structcrawl.core.stability import Check, StabilityRule
from structcrawl.core.urls import normalize_url

#: Once the model holds ``check_pages`` / CHECK_SHARE pages, a check (the regroup, O(pages)) comes
#: every CHECK_SHARE of them instead: every 25 pages made a crawl O(pages²) (29,466 demo pages modelled:
#: model steps 187 s of 436 s, the structure spider at 0.80 × a plain CrawlSpider).
CHECK_SHARE = 0.02
#: Pages each class of a pair needs for a check to merge it (``Explorer._refine_confirmed``): the
#: refiner's fingerprints read off fewer pages (30 % of them) are a page or two's.
CONFIRMED_MERGE_PAGES = 10
#: Pending URLs the audit draws before a stop (``Explorer.check``).  The crawl's own order only
#: ever samples where it leads: qtbase's "all members" pages sit behind a collection probed while
#: it held a few URLs, never again in sparsest order, and the crawl stopped with one of 830 modelled
#: (F* 0.66 in some orders).  Ten pages drawn alike from the whole frontier hit a type a fifth of
#: the pending URLs hold with probability 0.89 (docs/design.md, item 37); the draw leans toward
#: the collections tried least (``Frontier.audit``, item 43).
AUDIT_SIZE = 10


@dataclass(frozen=True)
class LearningPoint:
    """The model after one update: the learning curve of Crescenzi et al. Fig. 8."""

    update: int
    pages: int  #: pages modelled
    classes: int
    mdl: float
    queue: int  #: links waiting in the frontier


@dataclass(frozen=True)
class StepReport:
    """One model update: what the batch did to the model."""

    key: tuple[int, str] | None
    fetched: int
    decisions: tuple[Decision, ...]
    menu: bool
    stable: bool
    #: regions the batch's failures made dead (``Frontier.dead``): their URLs are not handed out
    dead_regions: tuple[str, ...] = ()


class Scope:
    """Which URLs the crawl may follow: the start host (optionally its subdomains, extra domains)."""

    def __init__(self, start_url: str, allow_subdomains: bool = False, extra_domains: Iterable[str] = ()) -> None:
        self.host = (urlsplit(start_url).hostname or "").lower()
        self.allow_subdomains = allow_subdomains
        self.extra = {d.lower() for d in extra_domains}

    def __call__(self, url: str) -> bool:
        host = urlsplit(url).hostname or ""
        if host == self.host or host in self.extra:
            return True
        if self.allow_subdomains:
            return host.endswith("." + self.host) or any(host.endswith("." + d) for d in self.extra)
        return False


class Explorer:
    """The Compute-Model loop, one batch at a time; the caller fetches.

    The contract with whoever fetches (the spider, ``run_offline``, a resume):

    * ``next_batch()`` -> Batch | None: the next URLs to fetch (the seed first;
      once a stop is a check away, the audit: ``AUDIT_SIZE`` pending URLs drawn
      from the whole frontier, whose pages a check judges as soon as they are
      modelled, and the stop waits for); None when the frontier is empty.  Batches may be fetched in any order
      and concurrency, but must be completed in the order they were handed out.
    * ``complete(batch, pages, failed)`` -> StepReport: the model step for the
      pages fetched for ``batch`` (features; failures just missing, their URLs
      in ``failed``): candidate selection, model update, links into the
      frontier, refinement when due, a prediction check every ``check_pages``
      pages (every ``CHECK_SHARE`` of the pages modelled, once that is more),
      which also makes the merges refinement approved at two checks in a row.
      Sets ``stable`` when the stop rule fires and the audit's pages were judged.
    * ``pages_to_a_possible_stop()`` -> int | None: the pages the next check still
      needs when that check may stop the crawl (0 while the audit is out), else None:
      a caller keeping URLs out ahead of the model sends what it hands out beyond them
      only once that check ran and did not stop the crawl.
    * ``redirected(requested, final)``: before ``complete``, for each redirect.
    * ``replay(batch, pages, failed)``: re-run a stored completed batch; the
      step is deterministic, so replaying a crawl's batches in order rebuilds
      its model, frontier and stop-rule state exactly (resume).
    * ``classify(features)`` -> (class id | None, bits): a page against the model.
    """

    def __init__(
        self,
        start_url: str,
        strategy: str = "densest",
        batch_size: int = 10,
        costs: Costs | None = None,
        dt: float = DT,
        stability: StabilityRule | None = None,
        scope: Callable[[str], bool] | None = None,
        refiner: Refiner | None = None,
        refine_every: int = 5,
        check_pages: int = 25,
        recluster: bool = False,
        probe_size: int | None = None,
        audit_seed: int = 0,
    ) -> None:
        self.start_url = normalize_url(start_url) or start_url
        self.model = SiteModel(costs)
        #: ``probe_size``: URLs of a collection's first batch (``Frontier``'s default when None) and
        #: ``audit_seed`` (``Frontier.audit``'s draw): changed only to measure how much the outcome
        #: hangs on the order or the draw (benchmarks/offline_real.py, benchmarks/order_spread.py)
        self.frontier = Frontier(strategy, batch_size, audit_seed=audit_seed,
                                 **({} if probe_size is None else {"probe_size": probe_size}))
        self.stability = stability or StabilityRule()
        self.scope = scope or Scope(self.start_url)
        self.dt = dt
        #: online refinement (``structcrawl.core.refine``); None switches it off
        self.refiner = Refiner() if refiner is None else refiner or None
        self.refine_every = refine_every
        #: re-cluster and check the model's predictions every ``check_pages`` new pages (or ``CHECK_SHARE``)
        self.check_pages = check_pages
        #: re-cluster every modelled page at each check (``structcrawl.core.recluster``)
        self.recluster = recluster
        self.order: list[str] = []  #: modelled pages, in modelling order
        #: modelled page -> the class the model predicted for it on arrival, before it was modelled
        self.predicted: dict[str, int | None] = {}
        self._checked: tuple[dict[str, int], int] = ({}, 0)  #: classes at the last check, pages then
        #: the window's checks (``StabilityRule.window``): span of ``order`` they judged, the classes
        #: at the check before, their pages found where predicted so far
        self._judged: deque[tuple[int, int, dict[str, int], set[str]]] = deque()
        self._found_at_check = 0  #: ``Frontier.mark()`` at the last check
        self._audit_due = False  #: the next batch is the audit
        self.audit: Batch | None = None  #: the audit (one per crawl), once handed out
        self.audited = False  #: the audit's pages came back (or it found nothing pending)
        self._audit_judged = False  #: a check judged the audit's pages
        self._held_awaiting_audit = False  #: the window held while the audit was out
        self.merges: list[Merge] = []
        self._refined_at: tuple[frozenset[int], int] = (frozenset(), 0)
        #: class pairs refinement approved at the last check (``_refine_confirmed``)
        self._approved: set[tuple[int, int]] = set()
        self.links: dict[str, dict[str, tuple[str, ...]]] = {}  #: modelled page -> its collections
        self.tag_paths: dict[str, frozenset[str]] = {}  #: modelled page -> its tag paths (fingerprints)
        self.element_paths: dict[str, frozenset[str]] = {}  #: modelled page -> its element paths (placement)
        self._shapes: dict[frozenset[str], frozenset[str]] = {}  #: one object per distinct tag-path set
        self.aliases: dict[str, str] = {}  #: requested URL -> final URL (redirects)
        self.failed: set[str] = set()
        self._copies: dict[tuple, str] = {}  #: (links, tag paths) -> first URL with them
        self.traps: list[tuple[int, str]] = []  #: collections emptied as traps
        self.history: list[LearningPoint] = []
        self.updates = 0
        self.stable = False
        self._seeded = False

    # -- the loop --------------------------------------------------------------
    def next_batch(self) -> Batch | None:
        if not self._seeded:
            self._seeded = True
            return self.frontier.seed(self.start_url)
        if self._audit_due:
            self._audit_due = False
            audit = self.frontier.audit(AUDIT_SIZE)
            if audit.urls:
                self.audit = audit
                return audit
            self.audited = True
        settle = self.stability.quiet_checks >= self.stability.window
        return self.frontier.pop(self._class_size, self._found_at_check if settle else None)

    def pages_to_a_possible_stop(self) -> int | None:
        """The pages the next check still needs when it may stop the crawl, else None.

        It may when the window is a check from holding, or while the audit is out (0: its
        check comes as soon as its pages are modelled).  What a caller fetches beyond those
        pages is fetched for nothing if that check stops the crawl: the demo over HTTP at
        16 concurrent requests fetched 311–316 pages for 289–290 modelled (10.5–10.7 % of
        the site), 30 URLs in flight at the stop.  Handing out goes on as before (the
        model's course does not depend on the network); a caller holds back the sending
        only.  Not a bound on when the crawl stops: a check can judge the window's earlier
        checks again (``_judge_again``) and make it hold sooner, and holding back all but
        one check's pages at every check would cost a crawl its concurrency."""
        if self.stable:
            return None
        if self.audit is not None and not self.audited:
            return 0
        if self.stability.quiet_checks < self.stability.window - 1:
            return None
        checked = self._checked[1]
        return max(0, math.ceil(max(self.check_pages, CHECK_SHARE * checked) - (len(self.model.pages) - checked)))

    def _class_size(self, class_id: int) -> int:
        cls = self.model.classes.get(class_id)
        return cls.size if cls else 0

    def complete(self, batch: Batch, pages: Iterable[PageFeatures], failed: Iterable[str] = ()) -> StepReport:
        """Run the model step on the pages fetched for ``batch`` (failures simply missing)."""
        failed, pages = list(failed), list(pages)
        self.failed.update(failed)
        gone = set(failed)
        dead = self.frontier.dead.observe([u for u in batch.urls if u not in gone] + [f.url for f in pages], failed)
        fresh: list[PageFeatures] = []
        copies: list[str] = []  #: originals of the copies in this batch
        for feats in pages:
            if feats.url in self.model.pages or any(f.url == feats.url for f in fresh):
                continue  # two links redirected to one page: model it once
            original = self._copies.setdefault((feats.links, feats.tag_paths), feats.url)
            if original != feats.url:
                # the same page under another URL (session or tracking parameters,
                # frameset wrappers): an alias, not a new page
                self.aliases[feats.url] = original
                copies.append(original)
                continue
            fresh.append(feats)
        self.frontier.mark_issued(f.url for f in fresh)
        speller = self.model.speller
        for f in fresh:
            speller.observe(f.collections, f.url)
        arrived = [self._page(f.url, f.collections, f.tag_paths, f.element_paths) for f in fresh]
        if self.model.classes:
            for page in arrived:
                self.predicted[page.url] = self.model.classify(page.schema, page.url_count, page.element_paths,
                                                               lagging=True)[0]
        audit_back = not self.audited and batch == self.audit  # by value: a replayed batch is a copy
        # the audit's pages come from any collection: each is a candidate of its own, never grouped
        # with another page of the batch as the pages of one collection are
        selection = (Selection([Candidate([page]) for page in arrived], False) if audit_back
                     else select_candidates(arrived, self.dt))
        decisions = tuple(self._place_audited(c.pages[0]) if audit_back else self.model.update(c, self.dt)
                          for c in selection.candidates)
        by_url = {f.url: f for f in fresh}
        for decision, cand in zip(decisions, selection.candidates):
            for page in cand.pages:
                feats = by_url[page.url]
                self.order.append(page.url)
                self.links[page.url] = feats.collections
                self.tag_paths[page.url] = self._shapes.setdefault(feats.tag_paths, feats.tag_paths)
                self.element_paths[page.url] = self._shapes.setdefault(feats.element_paths, feats.element_paths)
                self.frontier.add_links(decision.class_id, self._in_scope(speller.collections(feats.collections)))
            self.frontier.record(batch.key, [decision.class_id] * cand.size)
        self.updates += 1
        copy_classes = [self.model.page_class[u] for u in copies if u in self.model.page_class]
        if (copies or failed) and self.frontier.record(batch.key, copy_classes, duplicates=len(copy_classes),
                                                       failures=len(failed)):
            self.traps.append(batch.key)
        if self.refiner and self.updates % self.refine_every == 0 and self._refine_due():
            self.merges.extend(self.refiner.refine(self.model, self.frontier, self.updates))
            self._refined_at = (frozenset(self.model.classes), len(self.model.pages))
        if audit_back:
            self.audited = True
        if fresh and (audit_back or len(self.model.pages) - self._checked[1] >= max(self.check_pages,
                                                                                    CHECK_SHARE * self._checked[1])):
            self.check()
        self.history.append(LearningPoint(self.updates, len(self.model.pages), len(self.model.classes),
                                          round(self.model.mdl, 4), self.frontier.pending_urls()))
        return StepReport(batch.key, len(fresh), decisions, selection.menu, self.stable, tuple(dead))

    def _page(self, url: str, collections: dict[str, tuple[str, ...]], tag_paths: frozenset[str],
              element_paths: frozenset[str]) -> Page:
        schema, url_count = self.model.spelled(collections)
        return Page(url, schema, url_count, tag_paths, element_paths)

    def check(self) -> None:
        """Score the predictions made for the pages modelled since the last check (each
        classified by the model as it stood when the page arrived) and count the earlier
        pages that changed class since; feed the stop rule.  The path spelling is settled
        first (``PathSpeller.settle``): when it changed, every modelled page and the frontier
        are spelled anew (``_respell``).  With ``recluster``, every
        modelled page is first clustered again (``structcrawl.core.recluster``) and the
        frontier rebuilt on the new classes and spelling.  Once the window is a check from
        holding with no collection untried, the next batch is the audit (``next_batch``); a
        check that judges an audited page mispredicted or undescribed by its class
        (``_undescribed``) fails (``Check.surprised``).  The crawl stops when the window held
        and the audit's check neither failed by it nor found a collection untried, or, after
        a failed audit, when the window holds again.  When the stop rule fires, the model is
        refined once more.  O(pages modelled) per check in dict lookups; the re-clustering is
        O(pages × classes)."""
        speller = self.model.speller
        spelled_before = PathSpeller(speller.kept, speller.wrappers, speller.markers)
        if speller.settle():
            self._respell(spelled_before)
        if self.recluster:
            self._recluster()
        self._regroup()
        if self.refiner:
            self._refine_confirmed()
        before, checked_pages = self._checked
        now = self.model.page_class
        new = self.order[checked_pages:]
        if before:
            revised = self._judge_again()
            right = self._as_predicted(new, before)
            self._judged.append((checked_pages, len(self.order), before, right))
            check = Check(
                pages=len(now), new=len(new), predicted=len(right),
                earlier=len(before), moved=sum(1 for u, c in before.items()
                                               if now[u] != c and now[u] != self.predicted.get(u)),
                classes=len(self.model.classes),
                untried=self.frontier.untried(self._class_size, self._found_at_check),
                surprised=sum(1 for u in new if self.audit and u in self.audit.urls
                              and (u not in right or self._undescribed(u))))
            stable = self.stability.observe(check, revised)
            if (self.audit is None and not self.audited and not check.untried
                    and self.stability.quiet_checks >= self.stability.window - 1):
                self._audit_due = True
            self._held_awaiting_audit |= stable and not self.audited
            judging = self.audited and not self._audit_judged
            if judging:
                self._audit_judged = True
                self._held_awaiting_audit &= not check.surprised
            if (stable and self.audited) or (judging and self._held_awaiting_audit and not check.untried):
                if self.audit is not None:
                    self.stability.reason = (f"{self.stability.reason}; an audit of {len(self.audit.urls)} pending "
                                             "pages drawn from the whole frontier held too")
                self.stable = True
                # the model a crawl ends with is refined, however little it grew since the last
                # refinement (``_refine_due`` spaces them for cost): a merge that became due since
                # would otherwise be left undone (docs/design.md, item 15)
                if self.refiner:
                    self.merges.extend(self.refiner.refine(self.model, self.frontier, self.updates))
        self._checked = (dict(now), len(now))
        self._found_at_check = self.frontier.mark()

    def _place_audited(self, page: Page) -> Decision:
        """An audited page joins the class predicted on its arrival when that class describes it
        (lacks fewer than ``MISSING_SECTIONS`` of its sections), else a class of its own, and its
        check fails (``Check.surprised``).  The audit judges the predictions; its pages, drawn from
        anywhere and arriving one of each kind, are not run through the update's code, so that the
        other classes stay as the crawl's order built them."""
        cid = self.predicted.get(page.url)
        cls = self.model.classes.get(cid) if cid is not None else None
        action = "merge"
        if cls is None or _lacks_sections(cls, page.schema):
            cls, action = self.model.new_class(), "new"
        self.model._add_to(cls, [page])
        return Decision(action, cls.id, 1, 0.0, 0.0)

    def _undescribed(self, url: str) -> bool:
        """The page's class does not describe it (``_lacks_sections``)."""
        return _lacks_sections(self.model.classes[self.model.page_class[url]], self.model.pages[url].schema)

    def _as_predicted(self, urls: Iterable[str], snapshot: dict[str, int]) -> set[str]:
        """Those of ``urls`` now in the class predicted on their arrival; a predicted class gone
        since stands for the class most of its pages at ``snapshot`` (the check before) are in now."""
        now = self.model.page_class
        heirs: dict[int, int | None] = {}

        def heir(cid: int) -> int | None:
            if cid in self.model.classes:
                return cid
            if cid not in heirs:
                votes = Counter(now[u] for u, c in snapshot.items() if c == cid)
                heirs[cid] = votes.most_common(1)[0][0] if votes else None
            return heirs[cid]

        return {u for u in urls if self.predicted.get(u) is not None and now[u] == heir(self.predicted[u])}

    def _judge_again(self) -> list[Check]:
        """The window's earlier checks (``StabilityRule.observe``'s ``revised``) with the pages
        they mispredicted that sit in the predicted class now counted as predicted."""
        while len(self._judged) >= self.stability.window:
            self._judged.popleft()
        old = self.stability.checks[-len(self._judged):] if self._judged else []
        revised = []
        for i, (start, end, snapshot, right) in enumerate(self._judged):
            forgiven = self._as_predicted(self.order[start:end], snapshot) - right
            right |= forgiven
            revised.append(replace(old[i], predicted=old[i].predicted + len(forgiven),
                                   forgiven=old[i].forgiven + len(forgiven)))
        return revised

    def _regroup(self) -> None:
        """Undo the decisions today's evidence overturns (``structcrawl.core.split``): split
        off told-apart groups and mixtures, re-home one-page classes; the frontier follows."""
        assignment = regroup(self.model)
        if assignment is None:
            return
        model = self.model
        pages = [model.pages[u] for u in self.order]
        self.model = SiteModel.from_assignment(pages, assignment, model.costs, model.speller)
        self.model._next_id = max(self.model._next_id, model._next_id)
        moved: dict[tuple[int, int], list[str]] = {}
        for url in self.order:
            if assignment[url] != model.page_class[url]:
                moved.setdefault((model.page_class[url], assignment[url]), []).append(url)
        spell = self.model.speller.collections
        for (old, new), urls in sorted(moved.items()):
            if old in self.model.classes:
                self.frontier.split_class(old, new, (self._in_scope(spell(self.links[u])) for u in urls))
            else:  # the whole class moved: a one-page class re-homed
                self.frontier.merge_classes(new, old)

    def _respell(self, before: PathSpeller) -> None:
        """The path spelling changed (``PathSpeller.settle``; ``before`` spells as it was):
        every modelled page and the frontier spelled anew, each page in the class it was in."""
        model = self.model
        pages = [self._page(u, self.links[u], self.tag_paths[u], self.element_paths[u]) for u in self.order]
        self.model = SiteModel.from_assignment(pages, model.page_class, model.costs, model.speller)
        self.model._next_id = max(self.model._next_id, model._next_id)
        speller = self.model.speller
        spelled_as: dict[tuple[int, str], set[tuple[int, str]]] = {}
        for url in self.order:
            cid = model.page_class[url]
            for raw in self.links[url]:
                spelled_as.setdefault((cid, before.spell(raw)), set()).add((cid, speller.spell(raw)))
        self.frontier.respell(((model.page_class[u], self._in_scope(speller.collections(self.links[u])))
                               for u in self.order), spelled_as)

    def _recluster(self) -> None:
        model = self.model
        pages = [self._page(u, self.links[u], self.tag_paths[u], self.element_paths[u]) for u in self.order]
        self.model = recluster(pages, model.costs, self.dt, dict(model.page_class), model._next_id, model.speller)
        speller = self.model.speller
        self.frontier.rebuild(((self.model.page_class[u], self._in_scope(speller.collections(self.links[u])))
                               for u in self.order), self.model.page_class, self.aliases)
        if self.refiner:
            self.merges.extend(self.refiner.refine(self.model, self.frontier, self.updates))
            self._refined_at = (frozenset(self.model.classes), len(self.model.pages))

    def _refine_confirmed(self) -> None:
        """Merge the class pairs refinement approves at this check and approved at the previous
        one, each class holding ``CONFIRMED_MERGE_PAGES`` pages or more.  A pair approved between
        refinements waited for the next one ``_refine_due`` allows: ghc's two module classes,
        approved from 516 pages on, merged at 600, and the module pages arriving meanwhile were
        mispredicted (densest, 64 URLs in flight: the stop at 26.6 % of the site, now 20.4 %).
        A pair approved once is no evidence: merged at once, QDoc's first two-page groups of
        class pages went into the overview pages' class at 53 pages (qtbase sparsest 0.927 ->
        0.613); a small class approved twice may be a mixture (commons-math3's 7 pages, four
        interfaces with the overview and a chrome-only stub, took the stubs into the class
        pages: 0.990 -> 0.814).  docs/design.md, item 27."""
        pairs = self.refiner.pairs(self.model, self.frontier)
        classes = self.model.classes
        confirmed = [(a, b, sim) for a, b, sim in pairs if (a, b) in self._approved
                     and min(classes[a].size, classes[b].size) >= CONFIRMED_MERGE_PAGES]
        self._approved = {p[:2] for p in pairs}
        if confirmed:
            self.merges.extend(self.refiner.refine(self.model, self.frontier, self.updates, confirmed))
            self._refined_at = (frozenset(self.model.classes), len(self.model.pages))

    def _refine_due(self) -> bool:
        """Refine when classes appeared since the last time, or the model grew by half:
        O(classes created + log pages) refinements over a whole crawl."""
        classes, pages = self._refined_at
        return not frozenset(self.model.classes) <= classes or len(self.model.pages) >= 1.5 * pages

    def replay(self, batch: Batch, pages: Iterable[PageFeatures], failed: Iterable[str] = ()) -> StepReport:
        """Re-run a stored, completed batch: the model step is deterministic, so replaying
        the batches of a crawl in order rebuilds its model, frontier and stability state."""
        if batch.key is None:
            self._seeded = True
        self.frontier.take(batch)
        return self.complete(batch, pages, failed)

    def redirected(self, requested: str, final: str) -> None:
        """``requested`` answered with a redirect to ``final``: the link still counts."""
        self.aliases[requested] = final
        self.frontier.mark_issued([final])

    def _in_scope(self, collections: dict[str, tuple[str, ...]]) -> dict[str, list[str]]:
        scope = self.scope
        return {path: [u for u in urls if scope(u)] for path, urls in collections.items()}

    # -- the model as a graph -------------------------------------------------------
    def class_links(self) -> Counter:
        """(source class, path, target class) -> number of links, over modelled pages."""
        page_class = self.model.page_class
        counts: Counter = Counter()
        spell = self.model.speller.collections
        for url, raw in self.links.items():
            src = page_class[url]
            for path, urls in spell(raw).items():
                for u in urls:
                    dst = page_class.get(self.aliases.get(u, u))
                    if dst is not None:
                        counts[(src, path, dst)] += 1
        return counts

    def classify(self, feats: PageFeatures) -> tuple[int | None, float]:
        return self.model.classify(*self.model.spelled(feats.collections), feats.element_paths)


def _lacks_sections(cls: PageClass, schema: frozenset[str]) -> bool:
    """A page of ``schema`` lacks ``MISSING_SECTIONS`` of the sections of ``cls`` (of two pages or
    more) and shows a path fewer than two of its pages show: a type of its own the class took in
    for want of another, not one of its members.  A page with nothing of its own is a thin member
    (a QDoc class page of a few functions, a nested struct's page) that the regroup, which needs a
    section of its own to tell a page apart, puts back; judged a surprise, it cost qtbase a
    window in two draws of its audit of four (docs/design.md, item 40)."""
    return (cls.size >= 2 and missing_sections(cls.path_counts, cls.size, schema) >= MISSING_SECTIONS
            and any(cls.path_counts[p] < 2 for p in schema))


def run_offline(
    fetch: Callable[[str], tuple[str, bytes] | None],
    start_url: str,
    max_pages: int | None = None,
    stop: str = "stable",
    inflight: int = 0,
    **explorer_args,
) -> Explorer:
    """Run the whole loop against ``fetch(url) -> (final_url, body) | None``, no HTTP.

    ``stop``: ``"stable"`` ends at the stability rule, ``"exhaust"`` when the
    frontier is empty.  ``inflight``: URLs popped ahead of the model, as the
    spider keeps them (``2 × CONCURRENT_REQUESTS``: batches are popped while
    fewer URLs than that are out, and stepped in pop order); 0 pops the next
    batch only after the previous one is stepped.
    """
    explorer = Explorer(start_url, **explorer_args)
    out: deque[Batch] = deque()
    fetched = 0

    def top_up() -> None:
        while not (stop == "stable" and explorer.stable) and (not out or sum(len(b.urls) for b in out) < inflight):
            batch = explorer.next_batch()
            if batch is None:
                return
            out.append(batch)

    top_up()
    while out and not (stop == "stable" and explorer.stable):
        batch = out.popleft()
        pages, failed = [], []
        for url in batch.urls:
            if max_pages is not None and fetched >= max_pages:
                break
            got = fetch(url)
            fetched += 1
            if got is None:
                failed.append(url)
                continue
            final, body = got
            final = normalize_url(final) or final
            if final != url:
                explorer.redirected(url, final)
            pages.append(extract(body, final))
        explorer.complete(batch, pages, failed)
        if max_pages is not None and fetched >= max_pages:
            break
        top_up()
    return explorer
