"""The report page: one self-contained HTML file about a site model.

First screen: one sentence of what was found and why the crawl stopped, the
class graph (:mod:`.graph`), the class table (names from :mod:`.names`).  Then
the learning curve (:mod:`.curve`); crawl figures, parameters, MDL and the
refinement's merges at the bottom, collapsed.  Everything is inline (CSS, the
vendored Graphviz script, the SVG curve): the file opens with no network, and
its Content-Security-Policy forbids loading anything.
"""

from __future__ import annotations

import html
import json
from collections import defaultdict
from typing import Any, Iterable, Mapping, Sequence
from urllib.parse import urlsplit

from structcrawl.report.curve import curve_svg, firing_window
from structcrawl.report.graph import color, graph_dot, link_totals, viz_js
from structcrawl.report.harvest import harvest_section
from structcrawl.report.names import class_names, distinguishing_paths, pattern_groups

#: why the crawl stopped, by Scrapy close reason (``crawl.stop_reason``); others are shown as they are
STOP_REASONS = {
    "finished": "no link was left to follow",
    "max_pages": "it reached its page budget",
    "closespider_pagecount": "it reached its page budget",
    "closespider_timeout": "it reached its time limit",
    "shutdown": "it was interrupted",
    "store_error": "the crawl database failed (the job resumes)",
}


#: the page loads nothing: inline style and scripts only; Graphviz runs as WebAssembly compiled from the script
CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline' 'wasm-unsafe-eval'; img-src data:"
#: most linked classes listed per class in the table, busiest first
MAX_LINKS_TO = 6
#: Data fields listed per class in the table (the model ranks them; the rest is counted)
MAX_FIELDS = 6


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _fmt(x: Any) -> str:
    if isinstance(x, bool):
        return str(x).lower()
    if x is None:
        return "—"
    if isinstance(x, int):
        return f"{x:,}"
    if isinstance(x, float):
        return f"{x:,.4g}" if abs(x) < 1000 else f"{x:,.0f}"
    if isinstance(x, dict):
        return ", ".join(f"{k}={_fmt(v)}" for k, v in sorted(x.items()))
    if isinstance(x, list):
        return ", ".join(_fmt(v) for v in x) or "—"
    return str(x)


def _site_path(url: str) -> str:
    parts = urlsplit(url)
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def stop_sentence(crawl: Mapping[str, Any]) -> str:
    """Why the crawl stopped, as the end of a sentence ("stopped because …")."""
    reason = crawl.get("stop_reason")
    if reason == "model_stable" and crawl.get("stability_reason"):
        return f"it stopped because {crawl['stability_reason']}"
    if reason in STOP_REASONS:
        why = f"it stopped because {STOP_REASONS[reason]}"
        if crawl.get("stable") and crawl.get("stable_at_pages"):
            why += f"; the model was already stable at {crawl['stable_at_pages']:,} pages"
        return why
    return f"it stopped: {reason}" if reason else "how it stopped is not recorded"


def lead_sentence(document: Mapping[str, Any]) -> str:
    """The report's first sentence: N page types from M pages, x % of the URLs found, why it stopped."""
    crawl = document.get("crawl") or {}
    classes = document.get("classes") or []
    pages = int(crawl.get("pages_modelled") or sum(int(c.get("size") or 0) for c in classes))
    queue = crawl.get("queue_urls")
    share = ""
    if queue is not None and pages:
        known = pages + int(queue)
        share = f" ({100 * pages / known:.1f} % of the {known:,} URLs it found)"
    types = "1 page type" if len(classes) == 1 else f"{len(classes)} page types"
    return f"{types} from {pages:,} page{'' if pages == 1 else 's'}{share}; {stop_sentence(crawl)}."


def _class_rows(document: Mapping[str, Any], names: Mapping[int, str]) -> str:
    classes = document.get("classes") or []
    by_id = {int(c["id"]): c for c in classes}
    groups = pattern_groups(classes)
    out_links: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for (s, t), links in link_totals(document).items():
        if s in by_id and t in by_id:
            out_links[s].append((sum(int(link["count"]) for link in links), t))
    rows = []
    for c in sorted(classes, key=lambda c: (-int(c.get("size") or 0), int(c["id"]))):
        cid = int(c["id"])
        titles = c.get("sample_titles") or {}
        pattern = c.get("url_pattern")
        cell = [f'<span class="swatch" style="background:{color(cid)}"></span><b class="class-name">'
                f"{_e(names[cid])}</b>",
                f'<code class="pattern">{_e(pattern) if pattern else "no URL pattern"}</code>']
        if cid in groups:
            same = ", ".join(f'<a href="#class-{o}">{_e(names[o])}</a>' for o in groups[cid])
            telling = distinguishing_paths(c, [by_id[o] for o in groups[cid]])
            told = "".join(f"<li><code>{_e(p)}</code></li>" for p in telling) or "<li>nothing in the model</li>"
            cell.append(f'<div class="apart">same URL pattern as {same}; told apart by:'
                        f'<ul class="distinguishing">{told}</ul></div>')
        samples = "".join(_sample(u, titles.get(u)) for u in c.get("samples") or []) + _data(c)
        targets = sorted(out_links.get(cid, []), key=lambda x: (-x[0], x[1]))
        links = ", ".join(f'<a href="#class-{t}">{_e(names[t])}</a>&nbsp;×{n:,}' for n, t in targets[:MAX_LINKS_TO])
        if len(targets) > MAX_LINKS_TO:
            links += f" and {len(targets) - MAX_LINKS_TO} more"
        schema = c.get("schema") or []
        counts = c.get("path_counts") or {}
        size = int(c.get("size") or 0) or 1
        items = "".join(f"<li><code>{_e(p)}</code> <small>({100 * counts.get(p, 0) / size:.0f} %)</small></li>"
                        for p in schema)
        rows.append(
            f'<tr id="class-{cid}" class="class-row" data-class="{cid}">'
            f'<td class="name">{"".join(cell)}</td>'
            f'<td class="num" data-label="pages">{_fmt(c.get("size", 0))}</td>'
            f'<td data-label="samples"><ul class="samples">{samples}</ul></td>'
            f'<td class="links" data-label="links to">{links or "—"}</td>'
            f"<td><details><summary>{len(schema)} link collections</summary><ul class=\"schema\">{items}</ul>"
            f"</details></td></tr>"
        )
    return "\n".join(rows)


def _data(c: Mapping[str, Any]) -> str:
    """The class's data fields and list records (issue 16), folded under its samples."""
    fields = c.get("fields") or []
    records = c.get("records")
    if not fields and not records:
        # a model made without kept pages says so on every class: not worth a line each
        note = c.get("fields_note") if c.get("field_pages") else None
        return f'<li class="fields-note"><small>{_e(note)}</small></li>' if note else ""
    items = []
    for f in fields[:MAX_FIELDS]:
        example = (f.get("examples") or [""])[0]
        items.append(f'<li><b>{_e(f.get("name") or "field")}</b> <code>{_e(f["xpath"])}</code>'
                     + (f" <small>e.g. {_e(example)}</small>" if example else "") + "</li>")
    if len(fields) > MAX_FIELDS:
        items.append(f"<li>and {len(fields) - MAX_FIELDS} more</li>")
    if records:
        names = ", ".join(_e(f.get("name") or "field") for f in records.get("fields") or [])
        items.append(f'<li>records <code>{_e(records["xpath"])}</code> '
                     f'<small>({records.get("per_page_min")}–{records.get("per_page_max")} a page'
                     f'{"; " + names if names else ""})</small></li>')
    summary = f"{len(fields)} data field{'' if len(fields) == 1 else 's'}" + (", list records" if records else "")
    rows = "".join(items)
    return f'<li class="data"><details><summary>{summary}</summary><ul class="fields">{rows}</ul></details></li>'


def _sample(url: str, title: str | None) -> str:
    """A sample page: its title (a link), its path below; only the path when it has no title."""
    path = _e(_site_path(url))
    if not title:
        return f'<li><a href="{_e(url)}">{path}</a></li>'
    return (f'<li><a href="{_e(url)}" class="sample-title">{_e(title)}</a><br>'
            f'<small class="sample-path">{path}</small></li>')


def _dl(pairs: Iterable[tuple[str, Any]]) -> str:
    return '<dl class="figures">' + "".join(f"<dt>{_e(k)}</dt><dd>{_e(_fmt(v))}</dd>" for k, v in pairs) + "</dl>"


def _merges(merges: Sequence[Mapping[str, Any]]) -> str:
    if not merges:
        return ""
    rows = "".join(
        f'<tr><td class="num">{m["kept"]}</td><td class="num">{m["merged"]}</td>'
        f'<td class="num">{m["similarity"]:.3f}</td><td class="num">{m["update"]}</td></tr>'
        for m in merges
    )
    return (f"<h3>Refinement merges</h3><p>Classes folded into another during the crawl: one template split over "
            f"several link collections, told by the Jaccard similarity of their tag-path fingerprints "
            f"(UXClust §3.3).</p><table id=\"merge-table\"><thead><tr><th>kept</th><th>merged</th><th>similarity"
            f"</th><th>after update</th></tr></thead><tbody>{rows}</tbody></table>")


def _curve_section(document: Mapping[str, Any]) -> str:
    crawl = document.get("crawl") or {}
    rule = (document.get("parameters") or {}).get("stability") or {}
    window, epsilon = int(rule.get("window") or 3), float(rule.get("epsilon") or 0.05)
    history = document.get("history") or []
    checks = document.get("checks") or []
    stop_pages = crawl.get("stable_at_pages") or crawl.get("pages_modelled")
    if crawl.get("stable_at_pages"):
        label = f"stable at {crawl['stable_at_pages']:,} pages"
    else:
        label = f"stopped at {stop_pages:,} pages" if stop_pages else ""
    fired = firing_window(checks, window, epsilon, crawl.get("stable_at_pages"))
    if fired:
        verdict = (f"It fired at {fired[-1]['pages']:,} pages, after the checks at "
                   f"{', '.join(format(c['pages'], ',') for c in fired)} pages (shaded).")
    elif checks:
        verdict = "It did not fire in this crawl."
    else:
        verdict = "This model file has no checks (written before they were exported)."
    return f"""<section id="curve">
<h2>Learning curve and stop</h2>
<p>After each model update: the classes and the MDL code length per page (Crescenzi et al. Fig. 8, §3.2).
Every few pages the crawl checks its model (<code>structcrawl/core/stability.py</code>): each new page was
classified when it arrived, before it was modelled; the check counts the new pages it mispredicted and the
earlier pages that moved class (a page placed elsewhere at first and in its predicted class by a later check of
the window counts as predicted). The rule stops the crawl once {window} checks in a row stay within
ε&nbsp;=&nbsp;{epsilon * 100:g}&nbsp;% on both and no link collection is left untried (filled marks: the check
held). {verdict}</p>
<div class="figure">
{curve_svg(history, checks, window=window, epsilon=epsilon, stop_pages=stop_pages, stop_label=label)}
</div>
</section>"""


_CSS = """
*{box-sizing:border-box}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#222;background:#fff}
header{background:#2d3e50;color:#fff;padding:12px 20px}
header h1{margin:0;font-size:18px;font-weight:600;overflow-wrap:anywhere}
#lead{margin:6px 0 0;font-size:16px;overflow-wrap:anywhere}
main{padding:4px 20px 40px;max-width:1400px}
h2{font-size:18px;border-bottom:1px solid #ddd;padding-bottom:3px;margin:20px 0 8px}
p{max-width:70em}
code{font:12px/1.35 ui-monospace,Menlo,Consolas,monospace;overflow-wrap:anywhere;word-break:break-all}
#graph-box{border:1px solid #e3e3e3;border-radius:4px;overflow:hidden;position:relative;background:#fcfcfc;
  touch-action:none}
#graph-canvas{min-height:60px}
#graph-canvas svg{display:block;margin:0 auto;cursor:grab}
#graph-canvas svg text{pointer-events:none}
#graph-canvas:not(.all-links) g.faint{display:none}
#graph-canvas .edge:hover path,#graph-canvas .edge.hover path{stroke:#d62728;stroke-opacity:1}
#graph-canvas .node:hover path,#graph-canvas .node:hover polygon{stroke-width:3}
.graph-tools{display:flex;flex-wrap:wrap;gap:6px;align-items:center;margin:6px 0}
.graph-tools button{font:inherit;padding:1px 10px;border:1px solid #bbb;border-radius:3px;background:#f6f6f6;
  cursor:pointer}
#graph-info{margin:4px 0 0;min-height:1.4em;color:#444;font-size:13px;white-space:pre-line;overflow-wrap:anywhere}
table{border-collapse:collapse;margin:8px 0;width:100%}
th,td{border-bottom:1px solid #e3e3e3;padding:5px 8px;text-align:left;vertical-align:top}
th{background:#f3f3f3;font-weight:600}
td.num{text-align:right;font-variant-numeric:tabular-nums}
@media (min-width:761px){td.name{width:38%}td.links{width:22%}#class-table td:nth-child(3){width:26%}}
.class-name{display:inline-block;margin-left:6px}
code.pattern{display:block;color:#555;margin-top:2px}
.apart{font-size:13px;margin-top:4px;color:#444}
.apart ul,ul.samples,ul.schema,ul.fields{margin:2px 0;padding-left:16px}
ul.samples a,ul.samples small,ul.fields code{overflow-wrap:anywhere}
tr:target{background:#fff3c4}
tr.harvest-target td:first-child{font-weight:600}
.swatch{display:inline-block;width:12px;height:12px;border-radius:3px;border:1px solid #333;vertical-align:-1px}
details summary{cursor:pointer;color:#2d5f9a}
.figure{max-width:960px}
.curve{display:block;width:100%;height:auto}
.curve text{font:12px sans-serif;fill:#333}
.curve text.panel-title{font-weight:600;font-size:13px}
.curve text.stop-label{font-weight:600}
dl.figures{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:2px 16px;margin:8px 0}
dl.figures dt{font-weight:600}
dl.figures dd{margin:0;overflow-wrap:anywhere}
#details{margin-top:24px}
#details>summary{font-size:17px;font-weight:600}
@media (max-width:760px){
  main{padding:4px 10px 30px}
  #class-table thead,#harvest-table thead{display:none}
  #class-table,#class-table tbody,#class-table tr,#class-table td,
  #harvest-table,#harvest-table tbody,#harvest-table tr,#harvest-table td{display:block;width:100%}
  #class-table tr,#harvest-table tr{border:1px solid #ddd;border-radius:4px;margin:0 0 10px;padding:4px}
  #class-table td,#harvest-table td{border:0;padding:3px 4px}
  #class-table td.num,#harvest-table td.num{text-align:left}
  #class-table td[data-label]::before,#harvest-table td[data-label]::before{content:attr(data-label) ": ";
    font-weight:600}
  dl.figures{grid-template-columns:minmax(0,1fr)}
  dl.figures dd{margin-bottom:4px}
}
"""

# Draws the graph (viz-js: DOT -> SVG), fits node labels in their boxes (the browser's fonts are not
# Graphviz's metrics), adds zoom (buttons, Ctrl+wheel) and drag, and shows the hovered arrow's or
# box's tooltip under the graph; a drag does not count as a click on a class.
_JS = r"""
(function () {
  "use strict";
  var MIN_SCALE = 0.6;
  var box = document.getElementById("graph-canvas"), info = document.getElementById("graph-info");
  function fail(msg) { box.textContent = "The graph could not be drawn: " + msg; }
  if (typeof Viz === "undefined") { fail("the Graphviz script did not load"); return; }
  Viz.instance().then(function (viz) {
    var svg;
    try { svg = viz.renderSVGElement(JSON.parse(document.getElementById("graph-dot").textContent)); }
    catch (e) { fail(e && e.message ? e.message : String(e)); return; }
    var natW = parseFloat(svg.getAttribute("width")) * 96 / 72;  // Graphviz sizes in points
    var natH = parseFloat(svg.getAttribute("height")) * 96 / 72;
    svg.removeAttribute("width"); svg.removeAttribute("height");
    svg.setAttribute("id", "model-graph");
    box.appendChild(svg);
    // Fit the width (never enlarge); a tall graph is cut to 90 % of the window, but not below MIN_SCALE
    // of its size when the width allows more: its labels stay readable and the page scrolls.
    function fit() {
      var scale = Math.min(1, box.clientWidth / natW);
      var tallest = Math.max(window.innerHeight * 0.9, natH * Math.min(scale, MIN_SCALE));
      scale = Math.min(scale, tallest / natH);
      svg.style.width = (natW * scale).toFixed(1) + "px"; svg.style.height = (natH * scale).toFixed(1) + "px";
    }
    fit();
    window.addEventListener("resize", fit);
    svg.querySelectorAll("g.node").forEach(function (node) {
      var shape = node.querySelector("path, polygon");
      if (!shape) { return; }
      var room = shape.getBBox().width - 8;
      node.querySelectorAll("text").forEach(function (t) {
        if (t.getComputedTextLength() > room) {
          t.setAttribute("textLength", room.toFixed(1));
          t.setAttribute("lengthAdjust", "spacingAndGlyphs");
        }
      });
    });
    var vb = svg.viewBox.baseVal, home = [vb.x, vb.y, vb.width, vb.height], view = home.slice();
    function show() { svg.setAttribute("viewBox", view.join(" ")); }
    function zoom(f) {
      var cx = view[0] + view[2] / 2, cy = view[1] + view[3] / 2;
      view[2] = Math.min(home[2] * 1.5, view[2] / f); view[3] = Math.min(home[3] * 1.5, view[3] / f);
      view[0] = cx - view[2] / 2; view[1] = cy - view[3] / 2; show();
    }
    document.getElementById("zoom-in").onclick = function () { zoom(1.4); };
    document.getElementById("zoom-out").onclick = function () { zoom(1 / 1.4); };
    document.getElementById("all-links").onchange = function (ev) {
      box.classList.toggle("all-links", ev.target.checked);
    };
    document.getElementById("zoom-fit").onclick = function () { view = home.slice(); show(); };
    svg.addEventListener("wheel", function (ev) {
      if (!ev.ctrlKey && !ev.metaKey) { return; }
      ev.preventDefault(); zoom(ev.deltaY < 0 ? 1.15 : 1 / 1.15);
    }, {passive: false});
    var drag = null, dragged = false;
    svg.addEventListener("pointerdown", function (ev) { drag = [ev.clientX, ev.clientY]; dragged = false; });
    window.addEventListener("pointerup", function () { drag = null; });
    svg.addEventListener("pointermove", function (ev) {
      if (!drag) { return; }
      var dx = ev.clientX - drag[0], dy = ev.clientY - drag[1];
      if (!dragged && Math.abs(dx) + Math.abs(dy) < 5) { return; }
      dragged = true;
      var scale = view[2] / svg.getBoundingClientRect().width;
      view[0] -= dx * scale; view[1] -= dy * scale; drag = [ev.clientX, ev.clientY]; show();
    });
    svg.addEventListener("click", function (ev) {
      if (dragged) { ev.preventDefault(); ev.stopPropagation(); dragged = false; }
    }, true);
    svg.querySelectorAll("g.edge, g.node").forEach(function (g) {
      var a = g.querySelector("a"), tip = a ? a.getAttribute("xlink:title") || a.getAttribute("title") : "";
      g.addEventListener("mouseenter", function () { g.classList.add("hover"); info.textContent = tip || ""; });
      g.addEventListener("mouseleave", function () { g.classList.remove("hover"); });
    });
    document.documentElement.setAttribute("data-graph", "ready");
  }, function (e) { fail(e && e.message ? e.message : String(e)); });
})();
"""


def render_report(document: Mapping[str, Any], *, title: str | None = None,
                  harvest: Mapping[str, Any] | None = None) -> str:
    """The whole HTML page for a site model document (a dict as written by :mod:`structcrawl.sitemodel`);
    with ``harvest`` (a harvest summary, :mod:`.harvest`) the harvest's section after the class table."""
    site = document.get("site") or {}
    crawl = document.get("crawl") or {}
    classes = document.get("classes") or []
    names = class_names(classes, site.get("start_url"))
    start = site.get("start_url", "?")
    title = title or f"Page types of {site.get('host') or start}"
    dot = json.dumps(graph_dot(document, names)).replace("</", "<\\/")
    npairs = len(link_totals(document))
    figures = [("start URL", start)] + [(k, crawl[k]) for k in sorted(crawl)]
    params = document.get("parameters") or {}
    mdl = document.get("mdl") or {}
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<title>{_e(title)}</title>
<style>{_CSS}</style>
</head>
<body>
<header><h1>{_e(title)}</h1><p id="lead">{_e(lead_sentence(document))}</p></header>
<main>
<section id="graph">
<h2>How the page types link</h2>
<div class="graph-tools"><button type="button" id="zoom-in" aria-label="zoom in">+</button>
<button type="button" id="zoom-out" aria-label="zoom out">−</button>
<button type="button" id="zoom-fit">fit</button>
<label><input type="checkbox" id="all-links"> all {npairs:,} class links</label></div>
<p>One box per page type (click: its row below). The arrows are each type's busiest link in and out, labelled
with their number of links; tick <i>all class links</i> for the others. Hover an arrow for its link
collections; drag to move, Ctrl+wheel to zoom.</p>
<div id="graph-box"><div id="graph-canvas"><noscript>The graph needs JavaScript.</noscript></div></div>
<p id="graph-info"></p>
</section>
<section id="classes">
<h2>Page types</h2>
<table id="class-table">
<thead><tr><th>page type and URL pattern</th><th>pages</th><th>sample pages</th><th>links to</th>
<th>link collections</th></tr></thead>
<tbody>
{_class_rows(document, names)}
</tbody>
</table>
</section>
{harvest_section(harvest, names, crawl.get("pages_requested")) if harvest else ""}
{_curve_section(document)}
<details id="details">
<summary>Crawl figures, parameters, MDL</summary>
<section id="summary">
<h3>Crawl</h3>
{_dl(figures)}
<h3>MDL (bits)</h3>
{_dl((k, mdl[k]) for k in ("model_bits", "data_bits", "total") if k in mdl)}
<h3>Parameters</h3>
{_dl((k, params[k]) for k in sorted(params))}
{_merges(document.get("merges") or [])}
</section>
</details>
</main>
<script type="application/json" id="graph-dot">{dot}</script>
<script>{viz_js()}</script>
<script>{_JS}</script>
</body>
</html>
"""
