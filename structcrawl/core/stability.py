"""When to stop: the model predicts the pages it has not seen yet.

Crescenzi et al. §4.4 find the empty-queue end "too pessimistic": the model
reaches its final shape long before.  A model has its final shape when it
keeps being right about new pages.  Each page is classified on arrival by
the model as it stands, before it is modelled (a prequential test); every
``check_pages`` new pages the explorer compares those predictions with the
classes the model update (or, with ``recluster``, the re-clustering) put the
pages in, and counts the earlier pages that changed class since the last
check.  ``StabilityRule`` fires when ``window`` checks in a row
predicted all but ``epsilon`` of their new pages and moved at most
``epsilon`` of the older ones, and no link collection is left untried at
that moment: a region the crawl never entered may hold a type no prediction
could miss (commons-math3's "No usage of" stubs are reached only through one
navigation link of the class pages; without this clause the crawl stopped at
10 % and put them with the class pages).  An untried collection blocks the
stop but does not restart the window: new pages bring new collections all
the time, and the predictions are what shows the model holding.

A prediction is judged again at each later check of its window: a page the
update put in a fresh class that a later check folded back into the predicted
one was predicted right, and the update was what erred (the model's settled
placement is the prequential test's truth).  Only in that direction: a page
predicted right and moved since is already charged by ``moved``.  odoc's class
types and crystal's enums found such a class check after check, each folded
back at the next (js-of-ocaml densest at 16 in flight 62 -> 40 % fetched, F*
0.913 -> 0.922; docs/design.md, item 35).  Nor is the fold-back itself a move:
a page that comes into the very class predicted on its arrival is the update's
error undone, charged once already as a misprediction, not the model changing
its mind (octave's subsubsections, placed in fresh classes a merge folded back
later, 26 pages "moved" at once; docs/design.md, item 52).

The crawl's own order picks the pages a check judges, and an order never
returns to some regions: a type behind a collection tried while it held a
few URLs is never predicted wrong because it is never fetched.  So before the
last check of a window the explorer fetches an audit — pending URLs drawn
from the whole frontier, leaning toward the collections tried least, once per
crawl — and a check that judges an
audited page the model mispredicted, or placed in a class whose sections it
mostly lacks, does not hold (``Check.surprised``): qtbase's "all members"
pages, 36 % of the site, were otherwise missed in some orders.

Watching class ids and cost drift instead (this rule's first form) kept
crawls going for the wrong reasons: one-page fragments broke "the same
classes", and densest-first's sampling (link-rich pages first) read as drift.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence


@dataclass(frozen=True)
class Check:
    """One check of the predictions (every ``check_pages`` new pages) as the stability rule sees it."""

    pages: int  #: pages modelled
    new: int  #: pages modelled since the previous check
    predicted: int  #: of them, put where the previous check's model predicted
    earlier: int  #: pages modelled before the previous check
    #: of them, now in another class than at the previous check — but the class predicted on their arrival
    moved: int
    classes: int  #: classes after the check
    untried: int = 0  #: link collections with URLs waiting that were never tried
    #: of ``predicted``, pages placed elsewhere at first and in the predicted class by a later check
    forgiven: int = 0
    #: audited pages (``Explorer``'s draw of the frontier) mispredicted or undescribed by their class
    surprised: int = 0


class StabilityRule:
    """When the model is stable enough to stop.

    * ``observe(check, revised)`` -> bool: record one check (the explorer makes one
      every ``check_pages`` new pages), ``revised`` being the checks just before it
      judged again (the same checks, ``predicted`` raised by the pages ``forgiven``
      since); True once ``window`` checks in a row held (``held``) and no
      collection is left untried; ``reason`` then says why.
    * ``quiet_checks``: checks in a row that held so far (the progress line).
    """

    def __init__(self, window: int = 3, epsilon: float = 0.05, min_pages: int = 0) -> None:
        self.window = window
        self.epsilon = epsilon
        self.min_pages = min_pages
        self.quiet_checks = 0  #: checks in a row that held
        self.checks: list[Check] = []
        self.reason: str | None = None

    def held(self, check: Check) -> bool:
        """The model predicted the new pages and kept the earlier ones where they were."""
        return (check.new > 0 and check.new - check.predicted <= self.epsilon * check.new
                and check.moved <= self.epsilon * check.earlier and not check.surprised)

    def observe(self, check: Check, revised: Sequence[Check] = ()) -> bool:
        """Record one check, the ``revised`` ones before it replacing their first
        judgement; True (and ``reason`` set) once the model is stable."""
        if revised:
            self.checks[-len(revised):] = revised
        self.checks.append(check)
        self.quiet_checks = 0
        for earlier in reversed(self.checks):
            if not self.held(earlier):
                break
            self.quiet_checks += 1
        if self.quiet_checks < self.window or check.pages < self.min_pages or check.untried:
            return False
        recent = self.checks[-self.window:]
        new = sum(c.new for c in recent)
        predicted = sum(c.predicted for c in recent)
        self.reason = (
            f"the model predicted the class of {predicted} of the {new} pages fetched over its last "
            f"{self.window} checks, kept its earlier pages in their classes and every link collection was tried "
            f"({check.classes} classes, {check.pages} pages modelled)"
        )
        return True
