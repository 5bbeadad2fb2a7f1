"""When to stop: the model has stopped changing.

Seed 001 §4.4 finds the empty-queue end "too pessimistic": the model reaches
its final shape long before.  ``StabilityRule`` fires when, over the last
``window`` model updates, the set of classes did not change, the data cost per
page of the classes moved by less than ``epsilon`` (relative), and no link
collection of the frontier is left untried (one that was never followed may
lead to a class nobody has seen); it says why.

The cost watched is each class's data bits per member (``PageClass.page_bits``:
entropy of its paths' presence plus its URLs) averaged with the class sizes at
the start of the window as weights (``drift``: the net move of that average;
with per-class absolute moves instead, geos's class pages, sampled region by
region, kept it above 2 % from 197 to 372 pages).  The §3.2 MDL per page is not used: it
moves with the mix of classes the crawl happens to be fetching (densest-first
spends long stretches in one class), and it grows with every rare path a class
meets (each member pays for each path of the union schema), so on real sites
with optional sections it never settled (geos, commons-math3: the crawl ran to
the empty queue).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Mapping


@dataclass(frozen=True)
class UpdateSummary:
    """What one model update (one batch) left, as the stability rule sees it."""

    pages: int  #: pages modelled so far
    class_ids: frozenset[int]  #: the model's classes after the update (and any refinement)
    class_bits: Mapping[int, tuple[int, float]]  #: class id -> (members, data bits per member)
    untried: int = 0  #: frontier collections never tried yet


class StabilityRule:
    def __init__(self, window: int = 20, epsilon: float = 0.02, min_pages: int = 0) -> None:
        self.window = window
        self.epsilon = epsilon
        self.min_pages = min_pages
        self._recent: deque[UpdateSummary] = deque(maxlen=window + 1)
        self.reason: str | None = None

    @property
    def quiet_updates(self) -> int:
        """How many of the latest updates ended with the classes the model has now.

        A class created and merged away again inside the window (a fragment
        that refinement folded back) does not break the quiet.
        """
        if not self._recent:
            return 0
        now = self._recent[-1].class_ids
        quiet = 0
        for back, s in enumerate(reversed(list(self._recent)[:-1]), start=1):
            if not s.class_ids >= now:
                break  # a class of today's model did not exist yet
            if s.class_ids == now:
                quiet = back
        return quiet

    @staticmethod
    def drift(before: UpdateSummary, after: UpdateSummary) -> float:
        """Relative change of the data bits per page between two updates, the classes'
        mix held at ``before`` (|Σ w·Δ| / Σ w·bits, w = members at ``before``): the
        net move of the average, as the paper's MDL per page; one class's estimate
        rising while another's falls (a biased sample of a class with optional
        sections) cancels, a model that keeps growing does not."""
        moved = total = 0.0
        for cid, (n, bits) in before.class_bits.items():
            now = after.class_bits.get(cid)
            if now is None:
                continue
            moved += n * (now[1] - bits)
            total += n * bits
        return abs(moved) / total if total > 0 else 0.0

    def observe(self, summary: UpdateSummary) -> bool:
        """Record one update; True (and ``reason`` set) once the model is stable."""
        self._recent.append(summary)
        if self.quiet_updates < self.window or summary.pages < self.min_pages:
            return False
        before, after = self._recent[0], self._recent[-1]
        drift = self.drift(before, after)
        if drift >= self.epsilon or after.untried:
            return False
        self.reason = (
            f"the same {len(after.class_ids)} classes for the last {self.window} model updates, data bits per page "
            f"moved {drift:.2%} (< {self.epsilon:.0%}) and every link collection was tried ({after.pages} pages modelled)"
        )
        return True
