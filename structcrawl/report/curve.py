"""The learning curve (Crescenzi et al. Fig. 8) and the stop rule's own measure, as one SVG.

Three panels share the x axis, pages modelled:

* the classes of the model after each update (a count: drawn as steps);
* the MDL code length *per page* (total bits / pages modelled, seed 001
  §3.2): the cumulative total grows with every page and says nothing about
  convergence, the per-page cost levels off once new pages fit the classes;
* the stop rule's measure (``structcrawl.core.stability``), one point per
  prediction check (model JSON ``checks``): the share of the new pages the
  model mispredicted and the share of the earlier pages that moved class,
  with the rule's threshold ε; the checks of the window that fired are shaded.

A dashed line marks the stop on every panel.  Points may carry ``q``/``fstar``
(the real-site benchmark adds them): a fourth panel then plots them (0…1).
"""

from __future__ import annotations

import html
import math
from typing import Any, Callable, Mapping, Sequence

WIDTH = 900
LEFT, RIGHT, TOP, BOTTOM = 64, 16, 8, 34
PANEL_HEIGHT = 130
#: room above each panel for its title, and below it for the x tick labels
TITLE_ROOM, TICK_ROOM = 22, 24
#: the measure panel's y axis: a square-root scale, so that ε (a few %) and 100 % both read
MEASURE_TICKS = (0.0, 0.05, 0.25, 0.5, 1.0)

CLASSES_COLOR, BITS_COLOR, MISS_COLOR, MOVED_COLOR, STOP_COLOR = "#4e79a7", "#e15759", "#f28e2b", "#b07aa1", "#333"
QUALITY = (("q", "Q", "#59a14f"), ("fstar", "F*", "#9c755f"))


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """Round tick values covering ``[lo, hi]``, about ``n`` of them."""
    if hi <= lo:
        hi = lo + 1
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    ticks = []
    v = math.ceil(lo / step) * step
    while v <= hi + step * 1e-9:
        ticks.append(round(v, 10))
        v += step
    return ticks


def _tick(v: float) -> str:
    return f"{v / 1000:g}k" if abs(v) >= 10000 else f"{v:g}"


def _pct(v: float) -> str:
    return f"{100 * v:.0f} %" if v >= 0.01 or v == 0 else f"{100 * v:.1f} %"


def miss_share(check: Mapping[str, Any]) -> float:
    """Share of a check's new pages the model mispredicted."""
    return (check["new"] - check["predicted"]) / check["new"] if check.get("new") else 0.0


def moved_share(check: Mapping[str, Any]) -> float:
    """Share of a check's earlier pages that changed class."""
    return check["moved"] / check["earlier"] if check.get("earlier") else 0.0


def held(check: Mapping[str, Any], epsilon: float) -> bool:
    """The check held (``StabilityRule.held``): new pages predicted and earlier ones kept, within ε,
    and no page of the audit surprising."""
    return (bool(check.get("new")) and miss_share(check) <= epsilon and moved_share(check) <= epsilon
            and not check.get("surprised"))


def firing_window(checks: Sequence[Mapping[str, Any]], window: int, epsilon: float,
                  stop_pages: int | None) -> list[Mapping[str, Any]]:
    """The last ``window`` checks in a row that held up to the stop (empty when the rule did not
    fire).  Not always the last checks: a crawl whose window held while its audit was out stops
    at the check that judged the audit, whatever the pages fetched meanwhile did."""
    if stop_pages is None:
        return []
    upto = [c for c in checks if c["pages"] <= stop_pages]
    for end in range(len(upto), window - 1, -1):
        if all(held(c, epsilon) for c in upto[end - window:end]):
            return upto[end - window:end]
    return []


class _Panel:
    """One plot area: maps data to SVG coordinates inside its box."""

    def __init__(self, top: float, xhi: float, ylo: float, yhi: float,
                 yscale: Callable[[float], float] = lambda v: v) -> None:
        self.y0, self.h = top, PANEL_HEIGHT
        self.xhi, self.ylo, self.yhi, self.yscale = xhi, ylo, yhi, yscale
        self.w = WIDTH - LEFT - RIGHT

    def x(self, v: float) -> float:
        return LEFT + v / self.xhi * self.w

    def y(self, v: float) -> float:
        lo, hi = self.yscale(self.ylo), self.yscale(self.yhi)
        return self.y0 + self.h - (self.yscale(min(max(v, self.ylo), self.yhi)) - lo) / (hi - lo) * self.h


def _frame(out: list[str], p: _Panel, title: str, yticks: Sequence[float], ylabel: Callable[[float], str],
           xticks: Sequence[float], stop_x: float | None) -> None:
    out.append(f'<text class="panel-title" x="{LEFT}" y="{p.y0 - 8}">{title}</text>')
    out.append(f'<rect x="{LEFT}" y="{p.y0}" width="{p.w}" height="{p.h}" fill="#fafafa" stroke="#ccc"/>')
    for v in yticks:
        yy = p.y(v)
        out.append(f'<line x1="{LEFT}" y1="{yy:.1f}" x2="{LEFT + p.w}" y2="{yy:.1f}" stroke="#e6e6e6"/>')
        out.append(f'<text class="tick" x="{LEFT - 6}" y="{yy + 4:.1f}" text-anchor="end">{ylabel(v)}</text>')
    for v in xticks:
        xx = p.x(v)
        out.append(f'<line x1="{xx:.1f}" y1="{p.y0}" x2="{xx:.1f}" y2="{p.y0 + p.h}" stroke="#eee"/>')
        out.append(f'<text class="tick" x="{xx:.1f}" y="{p.y0 + p.h + 14}" text-anchor="middle">{_tick(v)}</text>')
    if stop_x is not None:
        out.append(f'<line class="stop-line" x1="{stop_x:.1f}" y1="{p.y0}" x2="{stop_x:.1f}" y2="{p.y0 + p.h}" '
                   f'stroke="{STOP_COLOR}" stroke-dasharray="5,4" stroke-width="1.5"/>')


def _polyline(coords: Sequence[tuple[float, float]], key: str, color: str, steps: bool = False) -> str:
    pts = [coords[0]]
    for (_xa, ya), (xb, yb) in zip(coords, coords[1:]):
        if steps:
            pts.append((xb, ya))
        pts.append((xb, yb))
    points = " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)
    return (f'<polyline class="series" data-key="{key}" points="{points}" fill="none" stroke="{color}" '
            'stroke-width="2"/>')


def curve_svg(history: Sequence[Mapping[str, Any]], checks: Sequence[Mapping[str, Any]] = (), *,
              window: int = 3, epsilon: float = 0.05, stop_pages: int | None = None, stop_label: str = "") -> str:
    """The learning curve as an SVG (``<g class="panel" data-series=…>`` per panel).

    ``history``: the model JSON's ``history`` points; ``checks``: its ``checks``;
    ``window``/``epsilon``: the stop rule's parameters; ``stop_pages``: pages
    modelled at the stop (a dashed line), ``stop_label`` its caption.
    """
    pts = sorted((p for p in history if p.get("pages")), key=lambda p: (p["pages"], p.get("update", 0)))
    if not pts:
        return ('<svg xmlns="http://www.w3.org/2000/svg" id="learning-curve" class="curve" viewBox="0 0 900 40" '
                'role="img" aria-label="learning curve"><text x="450" y="24" text-anchor="middle">no learning '
                "curve in this model (written before history was exported)</text></svg>")
    checks = sorted(checks, key=lambda c: c["pages"])
    quality = [(k, n, c) for k, n, c in QUALITY if any(p.get(k) is not None for p in pts)]
    npanels = 3 + bool(quality)
    height = TOP + npanels * (TITLE_ROOM + PANEL_HEIGHT + TICK_ROOM) + BOTTOM
    xmax = max([p["pages"] for p in pts] + [c["pages"] for c in checks] + [stop_pages or 0])
    xticks = nice_ticks(0, xmax)
    xhi = max(xticks[-1], xmax)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" id="learning-curve" class="curve" viewBox="0 0 {WIDTH} {height}" '
           f'role="img" aria-label="learning curve">']
    tops = [TOP + TITLE_ROOM + k * (TITLE_ROOM + PANEL_HEIGHT + TICK_ROOM) for k in range(npanels)]
    stop_x = _Panel(0, xhi, 0, 1).x(stop_pages) if stop_pages is not None else None

    # 1. classes
    top = max(p["classes"] for p in pts)
    yt = nice_ticks(0, max(top, 1), 4)
    p = _Panel(tops[0], xhi, 0, max(yt[-1], top))
    out.append('<g class="panel" data-series="classes">')
    _frame(out, p, f'<tspan fill="{CLASSES_COLOR}">classes</tspan> ({pts[-1]["classes"]} at the end)', yt, _tick,
           xticks, stop_x)
    out.append(_polyline([(p.x(q["pages"]), p.y(q["classes"])) for q in pts], "classes", CLASSES_COLOR, steps=True))
    if stop_x is not None and stop_label:
        anchor = "end" if stop_x > LEFT + p.w / 2 else "start"
        dx = -6 if anchor == "end" else 6
        out.append(f'<text class="stop-label" x="{stop_x + dx:.1f}" y="{p.y0 + p.h - 8}" text-anchor="{anchor}">'
                   f"{_e(stop_label)}</text>")
    out.append("</g>")

    # 2. MDL bits per page
    bits = [(q["pages"], q["mdl"] / q["pages"]) for q in pts if q.get("mdl") is not None]
    hi = max((b for _, b in bits), default=1.0)
    yt = nice_ticks(0, max(hi, 1e-9), 4)
    p = _Panel(tops[1], xhi, 0, max(yt[-1], hi))
    out.append('<g class="panel" data-series="bits_per_page">')
    last = f"{bits[-1][1]:,.1f} at the end" if bits else "no MDL in the points"
    _frame(out, p, f'<tspan fill="{BITS_COLOR}">MDL bits per page</tspan> ({last})', yt, _tick, xticks, stop_x)
    if bits:
        out.append(_polyline([(p.x(x), p.y(b)) for x, b in bits], "bits_per_page", BITS_COLOR))
    out.append("</g>")

    # 3. the stop rule's measure
    p = _Panel(tops[2], xhi, 0.0, 1.0, yscale=math.sqrt)
    out.append('<g class="panel" data-series="miss,moved">')
    title = (f'stop rule per check: <tspan fill="{MISS_COLOR}">● new pages mispredicted</tspan>, '
             f'<tspan fill="{MOVED_COLOR}">■ earlier pages moved</tspan>, threshold ε = {_pct(epsilon)} '
             f"({window} checks in a row)")
    _frame(out, p, title, MEASURE_TICKS, _pct, xticks, stop_x)
    fired = firing_window(checks, window, epsilon, stop_pages)
    if fired:
        x0 = p.x(fired[0]["pages"] - fired[0]["new"])
        out.append(f'<rect class="fired-window" x="{x0:.1f}" y="{p.y0}" width="{p.x(fired[-1]["pages"]) - x0:.1f}" '
                   f'height="{p.h}" fill="#59a14f" fill-opacity="0.15"/>')
    ey = p.y(epsilon)
    out.append(f'<line class="threshold" x1="{LEFT}" y1="{ey:.1f}" x2="{LEFT + p.w}" y2="{ey:.1f}" stroke="#59a14f" '
               'stroke-width="1.5" stroke-dasharray="2,3"/>')
    if checks:
        for key, share, color, marker in (("miss", miss_share, MISS_COLOR, "circle"),
                                          ("moved", moved_share, MOVED_COLOR, "rect")):
            coords = [(p.x(c["pages"]), p.y(share(c))) for c in checks]
            out.append(_polyline(coords, key, color))
            for (x, y), c in zip(coords, checks):
                fill = color if held(c, epsilon) else "#fff"
                if marker == "circle":
                    out.append(f'<circle class="check" data-key="{key}" cx="{x:.1f}" cy="{y:.1f}" r="3.2" '
                               f'fill="{fill}" stroke="{color}" stroke-width="1.3"/>')
                else:
                    out.append(f'<rect class="check" data-key="{key}" x="{x - 2.8:.1f}" y="{y - 2.8:.1f}" '
                               f'width="5.6" height="5.6" fill="{fill}" stroke="{color}" stroke-width="1.3"/>')
    else:
        out.append(f'<text x="{LEFT + p.w / 2:.1f}" y="{p.y0 + p.h / 2:.1f}" text-anchor="middle">this model has '
                   "no checks (written before they were exported)</text>")
    out.append("</g>")

    # 4. quality against a ground truth, when the points carry it
    if quality:
        p = _Panel(tops[3], xhi, 0.0, 1.0)
        out.append(f'<g class="panel" data-series="{",".join(k for k, _, _ in quality)}">')
        title = "quality: " + ", ".join(f'<tspan fill="{c}">{n}</tspan>' for _, n, c in quality)
        _frame(out, p, title, (0.0, 0.25, 0.5, 0.75, 1.0), lambda v: f"{v:g}", xticks, stop_x)
        for key, _name, color in quality:
            coords = [(p.x(q["pages"]), p.y(q[key])) for q in pts if q.get(key) is not None]
            out.append(_polyline(coords, key, color))
        out.append("</g>")
    out.append(f'<text class="axis-title" x="{LEFT + (WIDTH - LEFT - RIGHT) / 2}" y="{height - 8}" '
               'text-anchor="middle">pages modelled</text>')
    out.append("</svg>")
    return "\n".join(out)
