"""How many target pages a harvest has not seen yet, from how often it saw the ones it fetched.

A target page is seen when a fetched page links it.  Counting, for every target
harvested, the fetched pages that linked it is sampling with replacement from
the targets the site holds, and the species estimators apply: Chao (1984),
"Nonparametric estimation of the number of classes in a population", gives a
lower bound on the species never seen, f1²/(2·f2) with f1 species seen once
and f2 twice (f1·(f1−1)/2 when f2 = 0, Chao's bias-corrected form); Good (1953),
"The population frequencies of species", the chance that the next sighting is
of a species not seen yet, f1/n for n sightings.  Per target class, summed.

Why: a harvest's pages stop showing new targets because the targets run out,
not by chance, and a rule that judges a collection by its past share of
useful pages then closes what still leads to the last few (the demo's
publishers, each linked only by its books: 53 of 600 missed over HTTP).  A
site that lists each target once (a package's class table) sees every target
once: f2 = 0, the estimate is large and the discovery rate is 1, so nothing
changes there.
"""

from __future__ import annotations

import math
from collections import Counter


class TargetSightings:
    """Fetched pages linking each URL, and for the targets harvested, per target class, how many
    targets were linked by k pages (the frequencies of frequencies).

    * ``linked(url)``: one more fetched page links ``url`` (once per page).
    * ``harvested(url, cls)``: ``url`` was harvested as a target of class ``cls``.
    * ``unseen()``: the estimated targets no fetched page linked yet (Chao's bound, summed over classes).
    * ``discovery_rate()``: the chance that a sighting is of a target not seen yet (Good–Turing).
    """

    def __init__(self) -> None:
        self.linkers: Counter = Counter()  #: URL -> fetched pages that link it
        self.target_class: dict[str, int] = {}  #: harvested target URL -> its class
        self.frequencies: dict[int, Counter] = {}  #: target class -> k -> its targets linked by k pages
        self.harvested_of: Counter = Counter()  #: target class -> targets harvested

    def linked(self, url: str) -> None:
        k = self.linkers[url]
        self.linkers[url] = k + 1
        cls = self.target_class.get(url)
        if cls is not None:
            counts = self.frequencies[cls]
            counts[k] -= 1
            counts[k + 1] += 1

    def harvested(self, url: str, cls: int) -> None:
        if url in self.target_class:
            return
        self.target_class[url] = cls
        self.frequencies.setdefault(cls, Counter())[self.linkers[url]] += 1
        self.harvested_of[cls] += 1

    def unseen(self, z: float = 0.0) -> float:
        """Chao's estimate, summed over the target classes, plus ``z`` standard deviations (Chao 1987's
        variance of it, the classes independent; none when f2 = 0, whose estimate is large already)."""
        total = variance = 0.0
        for counts in self.frequencies.values():
            f1, f2 = counts[1], counts[2]
            if f2:
                ratio = f1 / f2
                total += f1 * ratio / 2
                variance += f2 * (ratio ** 4 / 4 + ratio ** 3 + ratio ** 2 / 2)
            else:
                total += f1 * (f1 - 1) / 2
        return total + z * math.sqrt(variance)

    def discovery_rate(self) -> float:
        sightings = sum(k * n for counts in self.frequencies.values() for k, n in counts.items())
        once = sum(counts[1] for counts in self.frequencies.values())
        return once / sightings if sightings else 1.0

    def short_of(self, goal: float, z: float) -> bool:
        """May the targets not seen yet keep the harvest below ``goal`` of all its targets: the estimate
        ``z`` standard deviations up?  (Chao's figure is a lower bound: stopping once it says ``goal``
        stops short of it about every other time.)"""
        unseen = self.unseen(z)
        return unseen > (1 - goal) * (sum(self.harvested_of.values()) + unseen)
