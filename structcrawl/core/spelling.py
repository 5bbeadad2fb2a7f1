"""How a link-collection path is spelled in the model: template ids kept, content ids dropped.

Crescenzi et al. §2 (footnote 3) enrich collection paths with presentation
attributes so that a menu and a content list under the same tags stay apart.
Generators also write ids made from the page's own title or section heading
(``div#SQL-SELECT.refentry``, ``section#writing-servers``); such a path occurs
on one page only and splits a page type into one class per page.  A page
alone cannot tell a template id from a content id, the site can, in two ways:

* an id is kept only when the same value sits at the same place (the id-less
  path above it) on ``ID_EVIDENCE`` pages or more;
* and only at a place whose vocabulary is closed.  A generator that spells ids
  from headings uses common headings on many pages ("description", "exports"
  on every erl_docgen reference page, "event" on many QDoc classes) and rare
  ones on one page each, so recurrence alone keeps the common ones, and two
  pages of one type differ by the headings they happen to have.  A template's
  ids are a handful of values, each on many pages; content keeps coining new
  ones.  The share of values seen once is the Good–Turing estimate of how
  often the place shows a value never seen before: where most values at a
  place were seen on one page only, the place is content and none of its ids
  is kept.

Repeated runs of steps are then folded (``features.collapse_runs``).

The counts grow with every page; what is kept changes only at ``settle()``,
which the explorer calls at each check and then re-spells every modelled page
(``Explorer._respell``), so that all the pages of a model are spelled one way.
The vocabulary of kept ids is exported with the model so that classification
spells pages the same way.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Iterable

from structcrawl.core.features import collapse_runs

#: Pages an id value must appear on, at one place, to be part of the template.
ID_EVIDENCE = 2

# tag, then optional #id, then optional .class.tokens (features._step)
_STEP = re.compile(r"([^#.]*)(?:#([^.]*))?(\..*)?\Z")


def _parts(path: str) -> list[tuple[str, str | None, str]]:
    """(tag, id or None, ".classes" or "") per step."""
    out = []
    for step in path.split("/"):
        m = _STEP.match(step)
        out.append((m.group(1), m.group(2), m.group(3) or "") if m else (step, None, ""))
    return out


def id_places(path: str) -> list[tuple[str, str]]:
    """(place, id) of the ids on ``path``: place = the id-less path down to the step."""
    keys = []
    prefix = ""
    for tag, ident, classes in _parts(path):
        prefix = f"{prefix}/{tag}{classes}" if prefix else f"{tag}{classes}"
        if ident is not None:
            keys.append((prefix, ident))
    return keys


class PathSpeller:
    """Counts, per place, the pages showing each id value; spells paths with the ids kept at
    the last ``settle()``.

    * ``observe(paths)``: count the ids on one page's collection paths.
    * ``settle()`` -> bool: keep the ids the counts now support; True when that changed
      the spelling (every path spelled before must then be spelled again).
    * ``spell(path)``, ``collections(raw)``: the spelling under the kept ids.
    """

    def __init__(self, kept: Iterable[str] = ()) -> None:
        #: place -> id value -> pages showing it there
        self.pages_with: dict[str, Counter] = {}
        self.kept: frozenset[str] = frozenset(kept)  #: "place#id" keys spelled out
        self._cache: dict[str, str] = {}

    def observe(self, paths: Iterable[str]) -> None:
        keys = set()
        for path in paths:
            if "#" in path:
                keys.update(id_places(path))
        for place, ident in keys:
            self.pages_with.setdefault(place, Counter())[ident] += 1

    def settle(self) -> bool:
        kept = set()
        for place, values in self.pages_with.items():
            recurring = [v for v, n in values.items() if n >= ID_EVIDENCE]
            if 2 * len(recurring) >= len(values):  # a closed vocabulary: see the module docstring
                kept.update(f"{place}#{v}" for v in recurring)
        if kept == self.kept:
            return False
        self.kept = frozenset(kept)
        self._cache.clear()
        return True

    def spell(self, path: str) -> str:
        spelled = self._cache.get(path)
        if spelled is None:
            steps = []
            prefix = ""
            for tag, ident, classes in _parts(path):
                prefix = f"{prefix}/{tag}{classes}" if prefix else f"{tag}{classes}"
                keep = ident is not None and f"{prefix}#{ident}" in self.kept
                steps.append(f"{tag}#{ident}{classes}" if keep else f"{tag}{classes}")
            spelled = self._cache[path] = collapse_runs("/".join(steps))
        return spelled

    def collections(self, raw: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
        """A page's collections (raw path -> URLs) under the current spelling, URLs merged in order."""
        out: dict[str, dict[str, None]] = {}
        for path, urls in raw.items():
            bucket = out.setdefault(self.spell(path), {})
            for u in urls:
                bucket[u] = None
        return {p: tuple(u) for p, u in out.items()}
