"""``structcrawl report``: one self-contained HTML page about a site model.

Pure Python, no Scrapy import, no network: the page has inline CSS and inline
SVG only (no script, no external resource), so it opens in a browser with no
network access.  It shows

* the site model as a graph: one node per class (area proportional to its
  members), one labelled arrow per pair of linked classes (the link
  collection paths and counts that make it up in the arrow's tooltip), laid
  out by a deterministic force-directed layout computed here;
* a table of classes: size, URL pattern, fingerprint size, sample URLs
  (links), schema paths;
* the learning curve (Crescenzi et al. Fig. 8): classes, MDL bits, queue size and,
  when the points carry them, the Q measure (Crescenzi et al. §4.3) and F*, against
  pages fetched;
* the crawl summary: how it stopped, figures, parameters, MDL.

API: :func:`render_report` (document → HTML text), :func:`write_report`,
:func:`graph_svg`, :func:`curve_svg`, :func:`layout`; also
:func:`quality_point`, which computes the Q/F* of a model state against a
URL ground truth (the real-site benchmark adds them to ``history`` points).
"""

from __future__ import annotations

import html
import math
import os
from collections import defaultdict
from typing import Any, Callable, Hashable, Iterable, Mapping, Sequence

from structcrawl.files import atomic_write

__all__ = [
    "layout",
    "graph_svg",
    "curve_svg",
    "render_report",
    "write_report",
    "quality_point",
    "report_path_for",
]


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _fmt(x: Any) -> str:
    if isinstance(x, bool) or x is None:
        return str(x).lower() if isinstance(x, bool) else "—"
    if isinstance(x, int):
        return f"{x:,}"
    if isinstance(x, float):
        if x == int(x) and abs(x) < 1e15:
            return f"{int(x):,}"
        return f"{x:,.4g}" if abs(x) < 1000 else f"{x:,.0f}"
    return str(x)


# ---------------------------------------------------------------------------
# Graph layout: Fruchterman-Reingold, deterministic
# ---------------------------------------------------------------------------


def layout(
    nodes: Sequence[Hashable],
    edges: Iterable[tuple[Hashable, Hashable, float]],
    *,
    width: float = 1000.0,
    height: float = 700.0,
    radius: Mapping[Hashable, float] | None = None,
    iterations: int = 300,
    margin: float = 70.0,
) -> dict[Hashable, tuple[float, float]]:
    """Positions ``{node: (x, y)}`` inside ``width × height`` (``margin`` kept free).

    Force-directed (Fruchterman & Reingold 1991): all nodes repel, linked
    nodes attract (log-weighted), with a cooling schedule; node radii count in
    the repulsion so big nodes do not overlap.  Starts from a circle in the
    given node order: the same input always gives the same picture.
    """
    nodes = list(nodes)
    n = len(nodes)
    if n == 0:
        return {}
    if n == 1:
        return {nodes[0]: (width / 2, height / 2)}
    radius = radius or {}
    index = {v: i for i, v in enumerate(nodes)}
    adj: dict[tuple[int, int], float] = defaultdict(float)
    for a, b, w in edges:
        if a == b or a not in index or b not in index:
            continue
        i, j = sorted((index[a], index[b]))
        adj[(i, j)] += math.log1p(max(float(w), 0.0)) + 1.0
    W, H = width - 2 * margin, height - 2 * margin
    k = math.sqrt(W * H / n) * 1.1
    pos = [
        [W / 2 + W / 2.5 * math.cos(2 * math.pi * i / n + 0.3), H / 2 + H / 2.5 * math.sin(2 * math.pi * i / n + 0.3)]
        for i in range(n)
    ]
    r = [float(radius.get(v, 10.0)) for v in nodes]
    wmax = max(adj.values(), default=1.0)
    t = max(W, H) / 8
    for _it in range(iterations):
        disp = [[0.0, 0.0] for _ in range(n)]
        for i in range(n):
            xi, yi = pos[i]
            for j in range(i + 1, n):
                dx, dy = xi - pos[j][0], yi - pos[j][1]
                d = math.hypot(dx, dy)
                if d < 1e-6:  # coincident: push apart along a fixed direction
                    dx, dy, d = 1e-3 * (i - j), 1e-3, 1e-3
                gap = max(d - r[i] - r[j], 1.0)
                f = k * k / gap
                fx, fy = dx / d * f, dy / d * f
                disp[i][0] += fx
                disp[i][1] += fy
                disp[j][0] -= fx
                disp[j][1] -= fy
        for (i, j), w in adj.items():
            dx, dy = pos[i][0] - pos[j][0], pos[i][1] - pos[j][1]
            d = max(math.hypot(dx, dy), 1e-6)
            f = d * d / k * (0.3 + 0.7 * w / wmax)
            fx, fy = dx / d * f, dy / d * f
            disp[i][0] -= fx
            disp[i][1] -= fy
            disp[j][0] += fx
            disp[j][1] += fy
        for i in range(n):
            # a weak pull to the centre keeps unlinked classes on the canvas
            disp[i][0] += (W / 2 - pos[i][0]) * 0.02 * k / max(W, 1)
            disp[i][1] += (H / 2 - pos[i][1]) * 0.02 * k / max(H, 1)
            dx, dy = disp[i]
            d = math.hypot(dx, dy)
            if d > 0:
                step = min(d, t)
                pos[i][0] += dx / d * step
                pos[i][1] += dy / d * step
        t = max(t * 0.985, 0.5)
    # fit into the box, keeping the aspect ratio of the free area
    xs = [p[0] for p in pos]
    ys = [p[1] for p in pos]
    minx, maxx, miny, maxy = min(xs), max(xs), min(ys), max(ys)
    sx = W / (maxx - minx) if maxx > minx else 1.0
    sy = H / (maxy - miny) if maxy > miny else 1.0
    out = {}
    for v, (x, y) in zip(nodes, pos):
        fx = (x - minx) * sx if maxx > minx else W / 2
        fy = (y - miny) * sy if maxy > miny else H / 2
        out[v] = (round(margin + fx, 2), round(margin + fy, 2))
    return out


# ---------------------------------------------------------------------------
# Site model graph
# ---------------------------------------------------------------------------

_PALETTE = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac", "#1f77b4", "#8c564b", "#17becf", "#bcbd22", "#7f7f7f", "#d62728",
]


def _color(cid: int) -> str:
    return _PALETTE[cid % len(_PALETTE)]


def _short_path(path: str, steps: int = 2) -> str:
    parts = path.split("/")
    return ("…/" if len(parts) > steps else "") + "/".join(parts[-steps:])


def class_name(entry: Mapping[str, Any]) -> str:
    """A short human label for a class: its URL pattern's first literal segment, else its first sample's."""
    pat = entry.get("url_pattern") or ""
    seg = ""
    for part in pat.lstrip("^").split("/"):
        if part and all(ch.isalnum() or ch in "-_." for ch in part):
            seg = part.replace("\\.", ".")
            break
    if not seg:
        samples = entry.get("samples") or []
        if samples:
            from urllib.parse import urlsplit

            p = urlsplit(samples[0]).path.rstrip("/").rsplit("/", 1)[-1]
            seg = p or "/"
    return seg[:24]


def _edge_groups(document: Mapping[str, Any]) -> dict[tuple[int, int], list[Mapping[str, Any]]]:
    groups: dict[tuple[int, int], list[Mapping[str, Any]]] = defaultdict(list)
    for link in document.get("class_links") or []:
        groups[(int(link["source"]), int(link["target"]))].append(link)
    return groups


def graph_svg(document: Mapping[str, Any], *, width: int = 1200, height: int = 800) -> str:
    """The site model as an SVG graph: ``<g class="node" data-class=ID>`` per class, ``<g class="edge">`` per
    linked (source, target) pair, labelled with the busiest collection path and the total link count."""
    classes = sorted(document.get("classes") or [], key=lambda c: c["id"])
    groups = _edge_groups(document)
    ids = [c["id"] for c in classes]
    known = set(ids)
    maxsize = max((c.get("size", 1) for c in classes), default=1)
    radius = {c["id"]: 14.0 + 34.0 * math.sqrt(c.get("size", 1) / maxsize) for c in classes}
    totals = {k: sum(link["count"] for link in ls) for k, ls in groups.items() if k[0] in known and k[1] in known}
    # Global menus link every class to every other: laying out (and labelling) every pair gives a
    # hairball.  The backbone - each class's busiest link out and its busiest link in - drives
    # the layout and carries the labels; the other arrows are drawn faint (hover shows them all).
    backbone: set[tuple[int, int]] = set()
    by_src: dict[int, list[tuple[int, tuple[int, int]]]] = defaultdict(list)
    by_dst: dict[int, list[tuple[int, tuple[int, int]]]] = defaultdict(list)
    for (s, t), n in totals.items():
        if s != t:
            by_src[s].append((n, (s, t)))
            by_dst[t].append((n, (s, t)))
    for lst in by_src.values():
        backbone.update(k for _, k in sorted(lst, key=lambda x: (-x[0], x[1]))[:1])
    for lst in by_dst.values():
        backbone.update(k for _, k in sorted(lst, key=lambda x: (-x[0], x[1]))[:1])
    pos = layout(ids, [(s, t, totals[(s, t)]) for (s, t) in sorted(backbone)],
                 width=width, height=height, radius=radius)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" id="model-graph" class="graph" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="site model graph: {len(ids)} classes, {len(groups)} class links">',
        "<defs>",
        '<marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker>',
        "</defs>",
        '<g class="edges">',
    ]
    maxcount = max((sum(link["count"] for link in ls) for ls in groups.values()), default=1)
    labels: list[str] = []
    for (s, t), ls in sorted(groups.items()):
        if s not in known or t not in known:
            continue
        total = sum(link["count"] for link in ls)
        top = max(ls, key=lambda link: (link["count"], link["path"]))
        sw = 0.8 + 3.2 * math.log1p(total) / math.log1p(maxcount)
        strong = (s, t) in backbone or s == t
        opacity = 0.8 if strong else 0.18
        label = f"{_short_path(top['path'], 3)} ×{total}" if len(ls) == 1 else \
            f"{_short_path(top['path'], 3)} (+{len(ls) - 1} paths) ×{total}"
        ranked = sorted(ls, key=lambda link: (-link["count"], link["path"]))
        tip = "\n".join(f"{link['path']} ×{link['count']}" for link in ranked)
        tip = f"class {s} → class {t}: {total} links\n{tip}"
        x1, y1 = pos[s]
        x2, y2 = pos[t]
        if s == t:  # self loop: a loop above the node
            r = radius[s]
            d = (f"M{x1 - r * 0.5:.1f},{y1 - r * 0.87:.1f} C{x1 - r * 1.6:.1f},{y1 - r * 2.6:.1f} "
                 f"{x1 + r * 1.6:.1f},{y1 - r * 2.6:.1f} {x1 + r * 0.5:.1f},{y1 - r * 0.87:.1f}")
            lx, ly = x1, y1 - r * 2.15
        else:
            dx, dy = x2 - x1, y2 - y1
            d0 = math.hypot(dx, dy) or 1.0
            ux, uy = dx / d0, dy / d0
            # curve to the right of the direction, so A→B and B→A do not overlap
            bend = min(40.0, d0 / 4) if (t, s) in groups else min(14.0, d0 / 8)
            mx, my = (x1 + x2) / 2 - uy * bend, (y1 + y2) / 2 + ux * bend
            sx, sy = x1 + ux * radius[s], y1 + uy * radius[s]
            ex, ey = x2 - ux * (radius[t] + 2), y2 - uy * (radius[t] + 2)
            d = f"M{sx:.1f},{sy:.1f} Q{mx:.1f},{my:.1f} {ex:.1f},{ey:.1f}"
            lx, ly = (sx + 2 * mx + ex) / 4, (sy + 2 * my + ey) / 4
        out.append(
            f'<g class="edge{" backbone" if strong else ""}" data-source="{s}" data-target="{t}" '
            f'data-count="{total}"><title>{_e(tip)}</title>'
            f'<path d="{d}" fill="none" stroke="#555" stroke-opacity="{opacity}" stroke-width="{sw:.2f}" '
            f'marker-end="url(#arrow)"/></g>'
        )
        if strong:
            labels.append(
                f'<text class="edge-label" x="{lx:.1f}" y="{ly:.1f}" text-anchor="middle">{_e(label)}'
                f"<title>{_e(tip)}</title></text>"
            )
    out.append("</g>")
    out.append('<g class="nodes">')
    for c in classes:
        cid = c["id"]
        x, y = pos[cid]
        r = radius[cid]
        name = class_name(c)
        tip = f"class {cid}: {c.get('size', 0)} pages\n{c.get('url_pattern') or ''}"
        out.append(
            f'<g class="node" data-class="{cid}" data-size="{c.get("size", 0)}">'
            f'<title>{_e(tip)}</title>'
            f'<a href="#class-{cid}"><circle cx="{x:.1f}" cy="{y:.1f}" r="{r:.1f}" fill="{_color(cid)}" '
            f'fill-opacity="0.85" stroke="#333" stroke-width="1"/>'
            f'<text class="node-id" x="{x:.1f}" y="{y + 4:.1f}" text-anchor="middle">{cid}</text>'
            f'<text class="node-label" x="{x:.1f}" y="{y + r + 13:.1f}" text-anchor="middle">'
            f"{_e(name)} ({c.get('size', 0)})</text></a></g>"
        )
    out.append("</g>")
    out.append('<g class="edge-labels">')
    out.extend(labels)
    out.append("</g></svg>")
    return "\n".join(out)


# ---------------------------------------------------------------------------
# Learning curve
# ---------------------------------------------------------------------------


def _nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    if hi <= lo:
        hi = lo + 1
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.ceil(lo / step) * step
    ticks = []
    v = start
    while v <= hi + step * 1e-9:
        ticks.append(round(v, 10))
        v += step
    return ticks


def _tick_label(v: float) -> str:
    if abs(v) >= 10000:
        return f"{v / 1000:g}k"
    return f"{v:g}"


_SERIES = [
    # key, panel title, colour, fixed y range
    ("classes", "classes", "#4e79a7", None),
    ("mdl", "MDL (bits)", "#e15759", None),
    ("queue", "queue (links waiting)", "#59a14f", None),
]


def curve_svg(history: Sequence[Mapping[str, Any]], *, width: int = 900, panel_height: int = 150) -> str:
    """The learning curve as stacked panels sharing the x axis (pages modelled): classes, MDL bits, queue
    and, when the points carry ``q``/``fstar``, a quality panel with Q and F* (0…1)."""
    pts = sorted((p for p in history if "pages" in p), key=lambda p: (p["pages"], p.get("update", 0)))
    panels: list[tuple[str, list[tuple[str, str, str]], tuple[float, float] | None]] = [
        (title, [(key, title, color)], rng) for key, title, color, rng in _SERIES
        if key != "queue" or any(p.get("queue") is not None for p in pts)
    ]
    quality = [(k, name, color) for k, name, color in (("q", "Q", "#b07aa1"), ("fstar", "F*", "#f28e2b"))
               if any(p.get(k) is not None for p in pts)]
    if quality:
        panels.append(("quality: " + ", ".join(n for _, n, _ in quality), quality, (0.0, 1.0)))
    left, right, top, gap, bottom = 70, 20, 10, 34, 40
    height = top + len(panels) * (panel_height + gap) + bottom
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" id="learning-curve" class="curve" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="learning curve">'
    ]
    if not pts:
        out.append(f'<text x="{width / 2}" y="40" text-anchor="middle">no learning curve in this model '
                   "(written before history was exported)</text></svg>")
        return "\n".join(out)
    xmax = max(p["pages"] for p in pts)
    xmin = 0.0
    xt = _nice_ticks(xmin, max(xmax, 1))
    xhi = max(xt[-1], xmax, 1)
    pw = width - left - right

    def X(v: float) -> float:
        return left + (v - xmin) / (xhi - xmin) * pw

    for k, (title, series, rng) in enumerate(panels):
        y0 = top + k * (panel_height + gap) + 16
        ph = panel_height - 16
        vals = [p.get(key) for key, _, _ in series for p in pts if p.get(key) is not None]
        if rng is None:
            lo, hi = 0.0, max(max(vals, default=1.0), 1.0)
            yt = _nice_ticks(lo, hi, 4)
            hi = max(yt[-1], hi)
        else:
            lo, hi = rng
            yt = [0.0, 0.25, 0.5, 0.75, 1.0]

        def Y(v: float, lo=lo, hi=hi, y0=y0, ph=ph) -> float:
            return y0 + ph - (v - lo) / (hi - lo) * ph

        out.append(f'<g class="panel" data-series="{",".join(s[0] for s in series)}">')
        out.append(f'<text class="panel-title" x="{left}" y="{y0 - 4}">{_e(title)}</text>')
        out.append(f'<rect x="{left}" y="{y0}" width="{pw}" height="{ph}" fill="#fafafa" stroke="#ccc"/>')
        for v in yt:
            yy = Y(v)
            out.append(f'<line x1="{left}" y1="{yy:.1f}" x2="{left + pw}" y2="{yy:.1f}" stroke="#e4e4e4"/>')
            out.append(f'<text class="tick" x="{left - 6}" y="{yy + 4:.1f}" text-anchor="end">{_tick_label(v)}</text>')
        for v in xt:
            xx = X(v)
            out.append(f'<line x1="{xx:.1f}" y1="{y0}" x2="{xx:.1f}" y2="{y0 + ph}" stroke="#eee"/>')
            out.append(f'<text class="tick" x="{xx:.1f}" y="{y0 + ph + 13}" text-anchor="middle">'
                       f"{_tick_label(v)}</text>")
        for key, name, color in series:
            coords = [(X(p["pages"]), Y(p[key])) for p in pts if p.get(key) is not None]
            if not coords:
                continue
            if key == "classes":  # a count: draw it as steps
                d = [f"{coords[0][0]:.1f},{coords[0][1]:.1f}"]
                for (_xa, ya), (xb, yb) in zip(coords, coords[1:]):
                    d.append(f"{xb:.1f},{ya:.1f}")
                    d.append(f"{xb:.1f},{yb:.1f}")
                poly = " ".join(d)
            else:
                poly = " ".join(f"{x:.1f},{y:.1f}" for x, y in coords)
            out.append(f'<polyline class="series" data-key="{key}" points="{poly}" fill="none" '
                       f'stroke="{color}" stroke-width="2"/>')
            last = [p for p in pts if p.get(key) is not None][-1][key]
            nth = [s[0] for s in series].index(key)  # legend, top right, one line per series
            out.append(f'<text class="series-label" x="{left + pw - 6}" y="{y0 + 14 + 14 * nth}" '
                       f'text-anchor="end" fill="{color}">{_e(name)} {_fmt(round(last, 3))}</text>')
        out.append("</g>")
    out.append(f'<text class="axis-title" x="{left + pw / 2}" y="{height - 8}" text-anchor="middle">'
               "pages fetched (modelled)</text>")
    out.append("</svg>")
    return "\n".join(out)


# ---------------------------------------------------------------------------
# The page
# ---------------------------------------------------------------------------

_CSS = """
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#222;background:#fff}
header{background:#2d3e50;color:#fff;padding:14px 24px}
header h1{margin:0;font-size:20px}
header p{margin:4px 0 0;opacity:.85}
main{padding:8px 24px 40px;max-width:1400px}
h2{border-bottom:1px solid #ddd;padding-bottom:4px;margin-top:28px}
table{border-collapse:collapse;margin:8px 0}
th,td{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f3f3f3}
td.num{text-align:right;font-variant-numeric:tabular-nums}
code{font:12px/1.3 ui-monospace,Menlo,Consolas,monospace;word-break:break-all}
.swatch{display:inline-block;width:12px;height:12px;border-radius:6px;border:1px solid #333;vertical-align:middle}
.graph text.node-id{font:bold 12px sans-serif;fill:#fff;pointer-events:none}
.graph text.node-label{font:12px sans-serif;fill:#222}
.graph text.edge-label{font:10px sans-serif;fill:#444;paint-order:stroke;stroke:#fff;stroke-width:3px}
.graph g.edge:hover path{stroke:#d62728;stroke-opacity:1}
.graph g.node:hover circle{stroke-width:3}
.curve text{font:11px sans-serif;fill:#333}
.curve text.panel-title{font-weight:bold}
.curve text.series-label{font-weight:bold}
ul.samples{margin:0;padding-left:16px}
details summary{cursor:pointer;color:#2d5f9a}
dl.summary{display:grid;grid-template-columns:max-content auto;gap:2px 16px;margin:8px 0}
dl.summary dt{font-weight:bold}
dl.summary dd{margin:0}
.figure{overflow-x:auto;border:1px solid #eee;display:inline-block;max-width:100%}
"""


def _summary_dl(pairs: Iterable[tuple[str, Any]]) -> str:
    rows = []
    for k, v in pairs:
        if isinstance(v, dict):
            v = ", ".join(f"{kk}={_fmt(vv) if not isinstance(vv, dict) else vv}" for kk, vv in sorted(v.items()))
        elif isinstance(v, list):
            v = ", ".join(str(x) for x in v) or "—"
        else:
            v = _fmt(v)
        rows.append(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>")
    return '<dl class="summary">' + "".join(rows) + "</dl>"


def _class_rows(document: Mapping[str, Any]) -> str:
    groups = _edge_groups(document)
    out_links: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for (s, t), ls in groups.items():
        out_links[s].append((t, sum(link["count"] for link in ls)))
    rows = []
    for c in sorted(document.get("classes") or [], key=lambda c: c["id"]):
        cid = c["id"]
        samples = "".join(f'<li><a href="{_e(u)}">{_e(u)}</a></li>' for u in c.get("samples") or [])
        schema = c.get("schema") or sorted(c.get("path_counts") or {})
        counts = c.get("path_counts") or {}
        size = c.get("size", 0) or 1
        schema_items = "".join(
            f"<li><code>{_e(p)}</code> <small>({100 * counts.get(p, 0) / size:.0f} %)</small></li>"
            if p in counts else f"<li><code>{_e(p)}</code></li>"
            for p in schema
        )
        outs = ", ".join(f'<a href="#class-{t}">{t}</a>&nbsp;×{n}' for t, n in sorted(out_links.get(cid, [])))
        fp = c.get("fingerprint") or []
        rows.append(
            f'<tr id="class-{cid}" class="class-row" data-class="{cid}">'
            f'<td class="num"><span class="swatch" style="background:{_color(cid)}"></span> {cid}</td>'
            f"<td>{_e(class_name(c))}</td>"
            f'<td class="num">{_fmt(c.get("size", 0))}</td>'
            f"<td><code>{_e(c.get('url_pattern') or '—')}</code></td>"
            f'<td class="num">{len(fp)} <small>(of {_fmt(c.get("fingerprint_pages", 0))} pages)</small></td>'
            f'<td><ul class="samples">{samples}</ul></td>'
            f"<td><details><summary>{len(schema)} paths</summary><ul>{schema_items}</ul></details></td>"
            f"<td>{outs or '—'}</td></tr>"
        )
    return "\n".join(rows)


def _merges_section(merges: Sequence[Mapping[str, Any]]) -> str:
    """The online refinement's merges (model JSON ``merges``), or nothing when there were none."""
    if not merges:
        return ""
    rows = "".join(
        f'<tr><td class="num"><a href="#class-{m["kept"]}">{m["kept"]}</a></td><td class="num">{m["merged"]}</td>'
        f'<td class="num">{m["similarity"]:.3f}</td><td class="num">{m["update"]}</td></tr>'
        for m in merges
    )
    return f"""<h3>Refinement merges</h3>
<p>Classes folded into another during the crawl: one template split over several link collections,
told by the Jaccard similarity of their tag-path fingerprints (UXClust §3.3).</p>
<table id="merge-table">
<thead><tr><th>kept</th><th>merged</th><th>similarity</th><th>after update</th></tr></thead>
<tbody>{rows}</tbody>
</table>"""


def render_report(document: Mapping[str, Any], *, title: str | None = None) -> str:
    """The whole HTML page for a site model document (a dict as written by :mod:`structcrawl.sitemodel`)."""
    site = document.get("site") or {}
    crawl = document.get("crawl") or {}
    params = document.get("parameters") or {}
    mdl = document.get("mdl") or {}
    classes = document.get("classes") or []
    links = document.get("class_links") or []
    history = document.get("history") or []
    start = site.get("start_url", "?")
    title = title or f"structcrawl site model — {site.get('host') or start}"
    npairs = len(_edge_groups(document))
    stop = crawl.get("stop_reason") or ("stable" if crawl.get("stable") else "—")
    crawl_pairs = [("start URL", start)] + [(k, crawl[k]) for k in sorted(crawl)]
    param_pairs = [(k, params[k]) for k in sorted(params)]
    mdl_pairs = [(k, mdl[k]) for k in ("model_bits", "data_bits", "total") if k in mdl]
    lead = (f"{len(classes)} classes, {npairs} class links ({len(links)} collection paths); "
            f"{_fmt(crawl.get('pages_modelled', sum(c.get('size', 0) for c in classes)))} pages modelled; "
            f"stop: {stop}")
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>{_e(title)}</title>
<style>{_CSS}</style>
</head>
<body>
<header><h1>{_e(title)}</h1><p id="lead">{_e(lead)}</p></header>
<main>
<section id="summary">
<h2>Crawl summary</h2>
{_summary_dl(crawl_pairs)}
<h3>MDL</h3>
{_summary_dl(mdl_pairs)}
<h3>Parameters</h3>
{_summary_dl(param_pairs)}
</section>
<section id="graph">
<h2>Site model</h2>
<p>One node per page class (area ∝ members; click for its row below), one arrow per pair of linked
classes. Each class's busiest link out and busiest link in are drawn dark and labelled with their
busiest link-collection path and the number of links; the others are faint (hover an arrow for all its
paths).</p>
<div class="figure">
{graph_svg(document)}
</div>
</section>
<section id="classes">
<h2>Classes</h2>
<table id="class-table">
<thead><tr><th>id</th><th>name</th><th>size</th><th>URL pattern</th><th>fingerprint</th><th>sample URLs</th>
<th>schema</th><th>links to</th></tr></thead>
<tbody>
{_class_rows(document)}
</tbody>
</table>
{_merges_section(document.get("merges") or [])}
</section>
<section id="curve">
<h2>Learning curve</h2>
<p>After every model update ({len(history)} updates): classes, MDL, links waiting in the queue{
        ", and the quality against the ground truth (Q of Crescenzi et al. §4.3, F*)"
        if any("q" in p or "fstar" in p for p in history) else ""
    }, against the pages fetched.</p>
<div class="figure">
{curve_svg(history)}
</div>
</section>
</main>
</body>
</html>
"""


def report_path_for(model_path: str) -> str:
    """Default report file: ``site.model.json`` → ``site.model.html``."""
    base = model_path[:-5] if model_path.endswith(".json") else model_path
    return base + ".html"


def write_report(document: Mapping[str, Any], path: str | os.PathLike[str]) -> None:
    """Write the report of ``document`` atomically (temp file + rename; mode as the umask gives)."""
    text = render_report(document)
    with atomic_write(path, prefix=".report-") as fh:
        fh.write(text)


# ---------------------------------------------------------------------------
# Quality of a model state against a URL ground truth (for the learning curve)
# ---------------------------------------------------------------------------


def quality_point(
    page_class: Mapping[str, Hashable],
    page_schema: Callable[[str], Iterable[str]],
    label: Callable[[str], Hashable | None],
    reference_schemas: Mapping[Hashable, Iterable[str]] | None = None,
) -> dict[str, float]:
    """``{"q", "fstar"}`` of one model state.

    ``page_class``: URL → computed class of the pages modelled so far;
    ``page_schema(url)``: the page's schema (link-collection paths);
    ``label(url)``: its truth class (None: not in the truth, ignored);
    ``reference_schemas``: the schema σ_C of each truth class (Crescenzi et al. §4.3);
    when None, the union of the schemas of its pages modelled so far.
    F* is over the pages modelled so far.
    """
    from structcrawl.analysis.metrics import fstar, schema_quality

    truth: dict[str, Hashable] = {}
    assigned: dict[str, Hashable] = {}
    members: dict[Hashable, list[frozenset[str]]] = defaultdict(list)
    own_ref: dict[Hashable, set[str]] = defaultdict(set)
    for url, cid in page_class.items():
        lab = label(url)
        if lab is None:
            continue
        schema = frozenset(page_schema(url))
        truth[url] = lab
        assigned[url] = cid
        members[cid].append(schema)
        own_ref[lab] |= schema
    if not truth:
        return {"q": 0.0, "fstar": 0.0}
    ref = {k: frozenset(v) for k, v in (reference_schemas or own_ref).items()}
    q = schema_quality(dict(members), ref)["Q"]
    return {"q": round(q, 4), "fstar": round(fstar(assigned, truth), 4)}
