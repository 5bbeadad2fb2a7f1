"""Candidate class selection (Crescenzi et al. §3.1, Fig. 5 lines 8–14).

The pages fetched from one link collection are grouped by identical schema;
groups are ordered by size and a smaller group is collapsed into a larger one
when ``dist(Gi, Gj) = |Gi Δ Gj| / |Gi ∪ Gj| < dt`` — small "old player" groups
join the authoritative large group.  A collection whose pages stay split into
several small groups with no dominant one is a menu: its groups are kept
apart, never forced into one class.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from structcrawl.core.model import TWIN_SIMILARITY, Candidate, Page

DT = 0.2  #: distance threshold of Crescenzi et al. (footnote 5)


def schema_distance(a: frozenset[str], b: frozenset[str]) -> float:
    """Normalised symmetric difference; 0 for identical schemas, 1 for disjoint ones."""
    union = len(a | b)
    return len(a ^ b) / union if union else 0.0


def _twins(a: Sequence[Page], b: Sequence[Page]) -> bool:
    """Same DOM structure (tag paths), whatever the links: one template (see model.TWIN_SIMILARITY)."""
    fa, fb = a[0].tag_paths, b[0].tag_paths
    return bool(fa) and len(fa & fb) >= TWIN_SIMILARITY * len(fa | fb)


@dataclass(frozen=True)
class Selection:
    candidates: list[Candidate]
    menu: bool  #: the collection looked like a menu (no dominant group)


def select_candidates(pages: Sequence[Page], dt: float = DT, menu_groups: int = 3,
                      menu_dominance: float = 0.5) -> Selection:
    """Candidate classes from one batch.

    ``menu``: at least ``menu_groups`` candidates remain and none holds
    ``menu_dominance`` of the pages.
    """
    groups: dict[frozenset[str], list[Page]] = {}
    for page in pages:
        groups.setdefault(page.schema, []).append(page)
    # by size, largest first; ties keep first-seen order (dicts are ordered)
    ordered = sorted(groups.items(), key=lambda kv: -len(kv[1]))
    schemas = [s for s, _ in ordered]
    members = [list(m) for _, m in ordered]
    alive = [True] * len(ordered)
    for i in range(len(ordered)):
        if not alive[i]:
            continue
        for j in range(len(ordered) - 1, i, -1):  # right to left: smallest first
            if alive[j] and (schema_distance(schemas[i], schemas[j]) < dt
                             or _twins(members[i], members[j])):
                members[i].extend(members[j])
                alive[j] = False
    candidates = [Candidate(m) for m, keep in zip(members, alive) if keep]
    largest = max((c.size for c in candidates), default=0)
    menu = len(candidates) >= menu_groups and largest < menu_dominance * len(pages)
    return Selection(candidates, menu)
