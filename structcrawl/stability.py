"""When to stop: the model has stopped changing.

Seed 001 §4.4 finds the empty-queue end "too pessimistic": the model reaches
its final shape long before.  ``StabilityRule`` fires when, over the last
``window`` model updates, the set of classes did not change, the MDL cost per
modelled page moved by less than ``epsilon`` (relative), and no link
collection of the frontier is left untried (one that was never followed may
lead to a class nobody has seen); it says why.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass


@dataclass(frozen=True)
class UpdateSummary:
    """What one model update (one batch) left, as the stability rule sees it."""

    pages: int  #: pages modelled so far
    class_ids: frozenset[int]  #: the model's classes after the update (and any refinement)
    mdl: float  #: total MDL after the update
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

    def observe(self, summary: UpdateSummary) -> bool:
        """Record one update; True (and ``reason`` set) once the model is stable."""
        self._recent.append(summary)
        if self.quiet_updates < self.window or summary.pages < self.min_pages:
            return False
        before, after = self._recent[0], self._recent[-1]
        per_before = before.mdl / max(1, before.pages)
        per_after = after.mdl / max(1, after.pages)
        drift = abs(per_after - per_before) / max(per_before, 1e-9)
        if drift >= self.epsilon or after.untried:
            return False
        self.reason = (
            f"the same {len(after.class_ids)} classes for the last {self.window} model updates, MDL per page "
            f"moved {drift:.2%} (< {self.epsilon:.0%}) and every link collection was tried ({after.pages} pages modelled)"
        )
        return True
