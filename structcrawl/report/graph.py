"""The class graph of a site model as Graphviz DOT text, laid out and drawn in the browser.

Graphviz's ``dot`` places node *and* edge labels as boxes of their own, so no
label writes over another, whatever the class count; the report inlines
Graphviz compiled to WebAssembly (viz-js, :data:`VIZ_JS`), which turns this
text into an SVG inside the page, offline.  Why this library: docs/design.md.

What the graph shows:

* one box per class (its name, its page count; colour = its table swatch),
  linked to its row of the class table; when a model has more than
  ``MAX_GRAPH_CLASSES`` classes, the smallest ones are drawn as one box
  ("N small classes");
* one arrow per pair of linked classes, its width by the number of links, its
  tooltip the link-collection paths with their counts.  Global menus link
  every class to every other: laying out every pair gives a hairball, so only
  the *backbone* — each class's busiest link out and busiest link in — is
  drawn dark, and only the busiest links in (a tree: one parent per class)
  rank the layout (a ring of "next" links would otherwise stretch into one
  rank per class) and carry their link counts: dot keeps no room for the
  label of an arrow out of the layout, and it landed on another label.  The other arrows (class
  ``faint``) do not move the layout (``constraint=false``) and the page shows
  them on demand.
"""

from __future__ import annotations

import math
from collections import defaultdict
from importlib import resources
from typing import Any, Mapping, Sequence

#: viz-js 3.31.0 (npm @viz-js/viz, MIT; contains Graphviz 16.1.0 (EPL-1.0) and Expat (MIT) as WebAssembly),
#: dist/viz-global.js as published, for ``Viz.instance().renderSVGElement(dot)``
VIZ_JS = "vendor/viz-global.js"
#: most boxes in the graph; the smallest classes beyond it are drawn as one box
MAX_GRAPH_CLASSES = 40
#: most link-collection paths listed in an arrow's tooltip
MAX_TOOLTIP_PATHS = 12
#: a box's ranking arrows to leaves (boxes with no child in the ranking tree) are lengthened by 0, 1, 2 ranks in
#: turn, as Graphviz's ``unflatten -l 3`` does: a hub with many leaves makes three ranks, not one crowded rank
STAGGER = 3
#: points between the two lines of a box
LINE_GAP = 3
#: id of the box standing for the small classes
OTHER = -1

PALETTE = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac", "#1f77b4", "#8c564b", "#17becf", "#bcbd22", "#7f7f7f", "#d62728",
]


def color(cid: int) -> str:
    """The class's colour: its swatch in the table and its box in the graph."""
    return "#dddddd" if cid == OTHER else PALETTE[cid % len(PALETTE)]


def viz_js() -> str:
    """The vendored viz-js script text."""
    return resources.files("structcrawl.report").joinpath(VIZ_JS).read_text(encoding="utf-8")


def _dot_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _html_label(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def link_totals(document: Mapping[str, Any]) -> dict[tuple[int, int], list[Mapping[str, Any]]]:
    """``{(source, target): [class_links entries]}``."""
    groups: dict[tuple[int, int], list[Mapping[str, Any]]] = defaultdict(list)
    for link in document.get("class_links") or []:
        groups[(int(link["source"]), int(link["target"]))].append(link)
    return groups


def shown_classes(classes: Sequence[Mapping[str, Any]]) -> dict[int, int]:
    """``{class id: box id}``: each class's own box, or ``OTHER`` for the small ones beyond ``MAX_GRAPH_CLASSES``."""
    if len(classes) <= MAX_GRAPH_CLASSES:
        return {int(c["id"]): int(c["id"]) for c in classes}
    ranked = sorted(classes, key=lambda c: (-int(c.get("size") or 0), int(c["id"])))
    kept = {int(c["id"]) for c in ranked[: MAX_GRAPH_CLASSES - 1]}
    return {int(c["id"]): int(c["id"]) if int(c["id"]) in kept else OTHER for c in classes}


def busiest_in(totals: Mapping[tuple[int, int], int]) -> set[tuple[int, int]]:
    """Each box's busiest arrow in (ties: the lower ids): at most one parent per box, the ranking tree."""
    into: dict[int, tuple[int, tuple[int, int]]] = {}
    for pair, n in sorted(totals.items()):
        s, t = pair
        if s != t and (t not in into or n > into[t][0]):
            into[t] = (n, pair)
    return {pair for _, pair in into.values()}


def backbone(totals: Mapping[tuple[int, int], int]) -> set[tuple[int, int]]:
    """Each box's busiest arrow in and busiest arrow out: the arrows drawn and labelled."""
    outgoing = busiest_in({(t, s): n for (s, t), n in totals.items()})
    return busiest_in(totals) | {(s, t) for t, s in outgoing}


def staggered(tree: set[tuple[int, int]]) -> dict[tuple[int, int], int]:
    """``{arrow: minimum rank length}`` for the arrows of the ranking tree from a box to its leaves
    (boxes with no child), lengthened by 0, 1, … ``STAGGER`` - 1 ranks in turn."""
    parents = {s for s, t in tree if s != t}
    out: dict[tuple[int, int], int] = {}
    by_source: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for s, t in sorted(tree):
        if s != t and t not in parents:
            by_source[s].append((s, t))
    for leaves in by_source.values():
        for i, arrow in enumerate(leaves):
            out[arrow] = 1 + i % STAGGER
    return out


def graph_dot(document: Mapping[str, Any], names: Mapping[int, str]) -> str:
    """The DOT text of the class graph (deterministic: the same model gives the same text)."""
    classes = sorted(document.get("classes") or [], key=lambda c: c["id"])
    box = shown_classes(classes)
    totals: dict[tuple[int, int], int] = defaultdict(int)
    paths: dict[tuple[int, int], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for (s, t), links in link_totals(document).items():
        if s not in box or t not in box:
            continue
        pair = (box[s], box[t])
        for link in links:
            totals[pair] += int(link["count"])
            paths[pair][link["path"]] += int(link["count"])
    strong = backbone(totals)
    tree = busiest_in(totals)
    minlen = staggered(tree)
    busiest = max(totals.values(), default=1)
    lines = [
        "digraph site {",
        '  graph [rankdir=LR, nodesep=0.12, ranksep=0.5, bgcolor="transparent", fontname="Helvetica"];',
        '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=13, margin="0.12,0.05",'
        ' color="#333333", penwidth=1];',
        '  edge [fontname="Helvetica", fontsize=10, color="#555555", arrowsize=0.7];',
    ]
    for c in classes:
        cid = int(c["id"])
        if box[cid] != cid:
            continue
        tip = f"{names[cid]}: {_pages(c.get('size', 0))}\n{c.get('url_pattern') or 'no URL pattern'}"
        label = _box_label(names[cid], int(c.get("size") or 0))
        lines.append(f'  c{cid} [id="class-node-{cid}", class="class-node", label={label}, '
                     f'fillcolor="{color(cid)}40", href="#class-{cid}", tooltip={_dot_string(tip)}];')
    small = [c for c in classes if box[int(c["id"])] == OTHER]
    if small:
        pages = sum(int(c.get("size") or 0) for c in small)
        label = _box_label(f"{len(small)} small classes", pages)
        lines.append(f'  c_other [id="class-node-other", class="class-node", label={label}, '
                     f'fillcolor="{color(OTHER)}", '
                     f'href="#classes", tooltip="the {len(small)} smallest classes: see the class table"];')
    for (s, t), n in sorted(totals.items()):
        key = (s, t)
        ranked = sorted(paths[key].items(), key=lambda kv: (-kv[1], kv[0]))
        more = len(ranked) - MAX_TOOLTIP_PATHS
        tip = "\n".join(f"×{count} {path}" for path, count in ranked[:MAX_TOOLTIP_PATHS])
        if more > 0:
            tip += f"\n… and {more} more paths"
        src = "c_other" if s == OTHER else f"c{s}"
        dst = "c_other" if t == OTHER else f"c{t}"
        title = f"{_name(names, s)} → {_name(names, t)}: {n:,} links\n{tip}"
        width = 0.6 + 2.4 * math.log1p(n) / math.log1p(busiest)
        faint = key not in strong and s != t
        attrs = [f'id="class-edge-{_node_key(s)}-{_node_key(t)}"', f'class="{"faint" if faint else "backbone"}"',
                 f"penwidth={width:.2f}", f"tooltip={_dot_string(title)}", f"edgetooltip={_dot_string(title)}"]
        if not faint:
            # the spaces widen the box Graphviz reserves (by Helvetica's metrics) for the browser's wider
            # fonts (DejaVu Sans digits are 14 % wider); SVG drops them when it draws the label
            if key not in tree and s != t:
                # dot reserves no room for the label of an arrow that does not rank the
                # layout, and it can land on another label: its count is in the tooltip
                attrs.append("constraint=false")
            else:
                attrs.append(f'label=" {n:,} ", labeltooltip={_dot_string(title)}')
                if minlen.get(key, 1) > 1:
                    attrs.append(f"minlen={minlen[key]}")
        else:
            attrs.append('constraint=false, color="#55555540"')
        lines.append(f"  {src} -> {dst} [{', '.join(attrs)}];")
    lines.append("}")
    return "\n".join(lines)


def _name(names: Mapping[int, str], box_id: int) -> str:
    return "small classes" if box_id == OTHER else names[box_id]


def _node_key(box_id: int) -> str:
    return "other" if box_id == OTHER else str(box_id)


def _box_label(name: str, pages: int) -> str:
    """A box's two lines, name and page count, as a Graphviz HTML-like table: the cell spacing keeps the
    lines apart in the browser's font too (``<BR/>`` spaces them by Graphviz's own font metrics)."""
    return (f'<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="{LINE_GAP}" CELLPADDING="0"><TR><TD><B>'
            f'{_html_label(name)}</B></TD></TR><TR><TD><FONT POINT-SIZE="10">{_pages(pages)}</FONT></TD></TR>'
            "</TABLE>>")


def _pages(n: int) -> str:
    return "1 page" if n == 1 else f"{n:,} pages"
