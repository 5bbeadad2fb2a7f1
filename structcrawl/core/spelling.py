"""How a link-collection path is spelled in the model: template ids kept, content ids dropped.

Crescenzi et al. §2 (footnote 3) enrich collection paths with presentation
attributes so that a menu and a content list under the same tags stay apart.
Generators also write ids made from the page's own title or section heading
(``div#SQL-SELECT.refentry``, ``section#writing-servers``); such a path occurs
on one page only and splits a page type into one class per page.  A page
alone cannot tell a template id from a content id, the site can: an id is
kept when the same value sits at the same place (the id-less path above it)
on ``ID_EVIDENCE`` pages or more, else dropped.  Repeated runs of steps are
then folded (``features.collapse_runs``).

Evidence only grows, so the spelling of a path can change once: from without
the id to with it.  The explorer re-spells every modelled page when it
rebuilds the model (``Explorer.rebuild``); the vocabulary of kept ids is
exported with the model so that classification spells pages the same way.
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


def id_places(path: str) -> list[str]:
    """The (place, id) keys of the ids on ``path``: place = the id-less path down to the step."""
    keys = []
    prefix = ""
    for tag, ident, classes in _parts(path):
        prefix = f"{prefix}/{tag}{classes}" if prefix else f"{tag}{classes}"
        if ident is not None:
            keys.append(f"{prefix}#{ident}")
    return keys


class PathSpeller:
    """Counts, per (place, id), the pages showing it; spells paths with the ids seen often enough."""

    def __init__(self, kept: Iterable[str] = ()) -> None:
        self.pages_with: Counter = Counter()  #: "place#id" -> pages showing it (capped at ID_EVIDENCE)
        self.kept: set[str] = set(kept)  #: "place#id" keys with enough evidence
        self._cache: dict[str, str] = {}

    def observe(self, paths: Iterable[str]) -> bool:
        """Count the ids on one page's collection paths; True when a new id was confirmed."""
        keys = set()
        for path in paths:
            if "#" in path:
                keys.update(id_places(path))
        confirmed = False
        for key in keys:
            if key in self.kept:
                continue
            self.pages_with[key] += 1
            if self.pages_with[key] >= ID_EVIDENCE:
                self.kept.add(key)
                del self.pages_with[key]
                confirmed = True
        if confirmed:
            self._cache.clear()
        return confirmed

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
