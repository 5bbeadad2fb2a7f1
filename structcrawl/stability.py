"""When to stop: the model has stopped changing.

Seed 001 §4.4 finds the empty-queue end "too pessimistic": the model reaches
its final shape long before.  ``StabilityRule`` fires when, over the last
``window`` model updates, no class was created or merged, the MDL cost per
modelled page moved by less than ``epsilon`` (relative), and no link
collection of the frontier is left untried (one that was never followed may
lead to a class nobody has seen); it says why.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass


@dataclass(frozen=True)
class UpdateSummary:
    """What one model update (one batch) did, as the stability rule sees it."""

    pages: int  #: pages modelled so far
    classes: int
    created: int  #: classes created by this update
    merged: int  #: classes merged away by this update (refinement)
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
        """Consecutive most recent updates without a class created or merged."""
        n = 0
        for s in reversed(self._recent):
            if s.created or s.merged:
                break
            n += 1
        return n

    def observe(self, summary: UpdateSummary) -> bool:
        """Record one update; True (and ``reason`` set) once the model is stable."""
        self._recent.append(summary)
        if len(self._recent) <= self.window or summary.pages < self.min_pages:
            return False
        updates = list(self._recent)[1:]
        if any(s.created or s.merged for s in updates):
            return False
        before, after = self._recent[0], self._recent[-1]
        per_before = before.mdl / max(1, before.pages)
        per_after = after.mdl / max(1, after.pages)
        drift = abs(per_after - per_before) / max(per_before, 1e-9)
        if drift >= self.epsilon or after.untried:
            return False
        self.reason = (
            f"no class created or merged in the last {self.window} model updates and MDL per page "
            f"moved {drift:.2%} (< {self.epsilon:.0%}), every link collection tried: {after.classes} classes, {after.pages} pages"
        )
        return True
