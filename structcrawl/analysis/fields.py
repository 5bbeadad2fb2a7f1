"""Informative paths of a page class: its data fields (Vertex §III-B; Chakrabarti & Mehta's key paths).

From the pages kept for a class (its *units*; the records of a list for
:mod:`structcrawl.analysis.records`), every text-bearing node is grouped by
its addressable path (:mod:`structcrawl.analysis.pagetree`); each group is a
candidate path ``X`` with

* support ``F(X)``: the units that have text at ``X`` (exported as a share of ``M``),
* informativeness ``I(X) = 1 - Σ_t F(X, t) / (M · |T_X|)`` (Vertex §III-B,
  :func:`structcrawl.analysis.samples.informativeness`): 0 for text that is the
  same on every unit (menus, footers, labels), near 1 for data,

with ``M`` the units that have ``X`` (Vertex takes all the cluster's pages:
then the constant heading of an optional box, "Awards" on a quarter of the
pages, scores 0.75 and looks like data), and the class's **fields** are the candidates with ``F(X) ≥ 2`` and
``I(X) ≥`` :data:`MIN_INFORMATIVENESS`, ranked by Vertex's weight
``w(X) = F(X) · I(X)``.  A path whose nodes on one unit sit at fixed sibling
positions with a heading cell each (``<th>Published</th><td>…``) gives one
field per position; a path with a varying number of nodes is one field with
a list of values (``many``).

Departure (Chakrabarti & Mehta §3.4, "Template Removal"): Vertex measures
``I(X)`` inside one cluster only, so a site-wide box whose content rotates from
page to page (a "bestsellers" sidebar) looks like data.  Chakrabarti & Mehta
remove site-template content (menus, navigation bars, ads) before they rank key
paths, with a site-level template detector; ours: a path that other classes
show *with the same values* (:data:`TEMPLATE_SHARE` of the class's values also
found at that path in another class) is the site's template, not the class's
data.

Each field gets a name from the page itself, never invented: the heading
cell before it, else its own last stable class token or id, else the
nearest ancestor's with its tag (``byline-a``), else its tag.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from structcrawl.analysis.pagetree import TextNode, xpath
from structcrawl.analysis.samples import informativeness

#: A path is data when I(X) reaches this (5 values evenly over 20 pages: 0.8; two values: 0.5).
MIN_INFORMATIVENESS = 0.5
#: Units needed to measure I(X) at all (Vertex's formula is 0 or undefined below).
MIN_UNITS = 2
#: Share of a path's values that another class shows at the same path for it to be site template.
TEMPLATE_SHARE = 0.5
#: Nodes per unit up to which fixed positions give one field each even without a heading cell.
FIXED_MAX = 3
#: At most this many fields per class (or record) are exported, the heaviest first.
MAX_FIELDS = 40
EXAMPLES = 3
EXAMPLE_CHARS = 80
DECIMALS = 4


@dataclass(frozen=True)
class Candidate:
    """A path and the texts at it on each unit (empty tuple: the unit does not have it)."""

    xpath: str
    key: tuple[str, ...]
    many: bool
    label: str
    hint: str
    texts: tuple[tuple[str, ...], ...]

    @property
    def support(self) -> int:
        return sum(1 for t in self.texts if t)


@dataclass(frozen=True)
class Field:
    name: str
    xpath: str
    support: float  #: F(X) / M
    informativeness: float
    many: bool
    examples: tuple[str, ...]
    key: tuple[str, ...]

    def document(self) -> dict:
        return {"name": self.name, "xpath": self.xpath, "support": self.support,
                "informativeness": self.informativeness, "many": self.many, "examples": list(self.examples)}


def candidates(units: Sequence[Sequence[TextNode]]) -> list[Candidate]:
    """Candidate paths of units (pages, or records) given as their text nodes, in first-seen order."""
    by_key: dict[tuple[str, ...], dict[int, list[TextNode]]] = {}
    for u, nodes in enumerate(units):
        for node in nodes:
            by_key.setdefault(node.key, {}).setdefault(u, []).append(node)
    out: list[Candidate] = []
    m = len(units)
    for key, per_unit in by_key.items():
        lists = list(per_unit.values())
        first = lists[0]
        vectors = [tuple(n.positions for n in nodes) for nodes in lists]
        labelled = all(n.label for n in first)
        fixed = (len(first) > 1 and len(lists) >= MIN_UNITS and all(v == vectors[0] for v in vectors)
                 and (len(first) <= FIXED_MAX or labelled))
        if all(len(nodes) == 1 for nodes in lists) or fixed:
            for j in range(len(first)):
                nodes_j = [nodes[j] for nodes in lists]
                keep = _positions_needed(nodes_j)
                texts = [()] * m
                for u, nodes in per_unit.items():
                    texts[u] = (nodes[j].text,)
                out.append(Candidate(xpath(key, nodes_j[0].positions, keep), key, False,
                                     _common(n.label for n in nodes_j), first[j].name_hint, tuple(texts)))
        else:
            texts = [()] * m
            for u, nodes in per_unit.items():
                texts[u] = tuple(n.text for n in nodes)
            out.append(Candidate(xpath(key), key, True, _common(n.label for nodes in lists for n in nodes),
                                 first[0].name_hint, tuple(texts)))
    return out


def _positions_needed(nodes: Sequence[TextNode]) -> tuple[bool, ...]:
    """A level keeps its position when it has same-step siblings and the node is at the same position on every unit."""
    levels = len(nodes[0].positions)
    return tuple(
        max(n.counts[i] for n in nodes) > 1 and len({n.positions[i] for n in nodes}) == 1
        for i in range(levels)
    )


def _common(labels) -> str:
    """The label every node has (the same text), else ""."""
    found = set(labels)
    return found.pop() if len(found) == 1 else ""


def values(cand: Candidate) -> Counter:
    """Each value at the path with the number of units showing it."""
    counts: Counter = Counter()
    for texts in cand.texts:
        counts.update(set(texts))
    return counts


def measure(cand: Candidate) -> float:
    """I(X) of a candidate over the units that have it (Vertex §III-B, M = F(X): see the module's note)."""
    contents = [{cand.xpath: texts} for texts in cand.texts if texts]
    return informativeness(contents).get(cand.xpath, 0.0)


def rank(cands: Sequence[Candidate], template: Mapping[str, Counter] | None = None) -> list[Field]:
    """The fields among ``cands``: informative, not template, the heaviest first, with names.

    ``template``: path → values other classes show there (see the module's note on template removal).
    """
    scored = []
    for cand in cands:
        support = cand.support
        if support < MIN_UNITS:
            continue
        info = measure(cand)
        if info < MIN_INFORMATIVENESS or _is_template(cand, template):
            continue
        scored.append((-(support * info), cand.xpath, cand, info))
    scored.sort(key=lambda s: (s[0], s[1]))
    names: Counter = Counter()
    out: list[Field] = []
    m = len(cands[0].texts) if cands else 0
    for _w, _x, cand, info in scored[:MAX_FIELDS]:
        name = slug(cand.label) or slug(cand.hint) or "field"
        names[name] += 1
        if names[name] > 1:
            name = f"{name}-{names[name]}"
        out.append(Field(name, cand.xpath, round(cand.support / m, DECIMALS), round(info, DECIMALS), cand.many,
                         _examples(cand), cand.key))
    return out


def _is_template(cand: Candidate, template: Mapping[str, Counter] | None) -> bool:
    if not template:
        return False
    elsewhere = template.get(cand.xpath)
    if not elsewhere:
        return False
    own = values(cand)
    total = sum(own.values())
    shared = sum(n for v, n in own.items() if v in elsewhere)
    return total > 0 and shared / total >= TEMPLATE_SHARE


def _examples(cand: Candidate) -> tuple[str, ...]:
    seen: list[str] = []
    for texts in cand.texts:
        for t in texts:
            t = t if len(t) <= EXAMPLE_CHARS else t[: EXAMPLE_CHARS - 1] + "…"
            if t not in seen:
                seen.append(t)
            if len(seen) >= EXAMPLES:
                return tuple(seen)
    return tuple(seen)


_NON_WORD = re.compile(r"[^0-9a-z]+")


def slug(text: str) -> str:
    return _NON_WORD.sub("-", text.lower()).strip("-")[:40].strip("-")


def template_values(per_class: Mapping[int, Sequence[Candidate]]) -> dict[int, dict[str, Counter]]:
    """For each class: path → the values the *other* classes show at that path."""
    by_path: dict[str, dict[int, Counter]] = defaultdict(dict)
    for cid, cands in per_class.items():
        for cand in cands:
            by_path[cand.xpath][cid] = values(cand)
    out: dict[int, dict[str, Counter]] = {}
    for cid, cands in per_class.items():
        mine: dict[str, Counter] = {}
        for cand in cands:
            others = [c for k, c in by_path[cand.xpath].items() if k != cid]
            if others:
                mine[cand.xpath] = sum(others, Counter())
        out[cid] = mine
    return out
