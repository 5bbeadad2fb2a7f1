"""The report of a harvest: target and hub classes, targets harvested vs estimated, requests per target.

Read from the summary file the harvest spider writes when it closes
(``-s STRUCTCRAWL_HARVEST_SUMMARY=FILE``): its figures (requests, pages
fetched, targets harvested, explored, failed, close reason) and one row per
class it planned for or fetched (:meth:`structcrawl.analysis.harvestplan.Harvest.summary`).
"""

from __future__ import annotations

import html
import json
from typing import Any, Mapping

#: ``format`` of the harvest summary file
SUMMARY_FORMAT = "structcrawl-harvest-summary"
#: what each role means, as the table says it
ROLES = {
    "target": "target",
    "hub": "hub (followed to reach the targets)",
    "other": "other (explored, or in a collection that mixes classes)",
}


def load_summary(path: str) -> dict[str, Any]:
    """The harvest summary at ``path``; ValueError with a one-line message when it is not one."""
    try:
        with open(path, encoding="utf-8") as fh:
            summary = json.load(fh)
    except OSError as exc:
        raise ValueError(f"cannot read the harvest summary {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ValueError(f"{path} is not a harvest summary (not JSON: {exc})") from None
    if not isinstance(summary, dict) or summary.get("format") != SUMMARY_FORMAT:
        raise ValueError(f"{path} is not a harvest summary (written by -s STRUCTCRAWL_HARVEST_SUMMARY=FILE)")
    return summary


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def harvest_sentence(summary: Mapping[str, Any], learnt_with: int | None = None) -> str:
    """N target pages from R requests (r per target page; with the ``learnt_with`` requests of the
    structure crawl that learnt the model, r' per target page), what else was fetched, why it stopped."""
    harvested = sum(int(r.get("harvested") or 0) for r in summary.get("classes") or [])
    requested = int(summary.get("requested") or 0)
    per = f"{requested / harvested:.2f} requests per target page" if harvested else "no target page"
    if harvested and learnt_with:
        per += (f"; {(requested + learnt_with) / harvested:.2f} with the structure crawl's {learnt_with:,} "
                "requests")
    return (f"The harvest fetched {harvested:,} target pages with {requested:,} requests ({per}; "
            f"{int(summary.get('explored') or 0):,} pages fetched to explore, {int(summary.get('failed') or 0):,} "
            f"failed) and stopped: {summary.get('close_reason') or 'not recorded'}.")


def harvest_section(summary: Mapping[str, Any], names: Mapping[int, str], learnt_with: int | None = None) -> str:
    """The report's harvest section: its sentence (:func:`harvest_sentence`) and one row per class,
    targets first, then hubs."""
    order = {"target": 0, "hub": 1, "other": 2}
    rows = sorted(summary.get("classes") or [], key=lambda r: (r.get("class") is None,
                                                               order.get(r.get("role"), 3), r.get("class") or 0))
    cells = []
    for r in rows:
        cid = r.get("class")
        if cid is None:
            name = "pages that fit no class"
        elif int(cid) in names:
            name = f'<a href="#class-{int(cid)}">{_e(names[int(cid)])}</a>'
        else:
            name = f"class {_e(cid)} (not in this model)"
        role = ROLES.get(r.get("role"), str(r.get("role")))
        harvested = f"{int(r['harvested']):,}" if "harvested" in r else "—"
        estimated = f"{int(r['estimated']):,}" if "estimated" in r else "—"
        cells.append(f'<tr class="harvest-row harvest-{_e(r.get("role"))}"><td>{name}</td>'
                     f'<td data-label="role">{_e(role)}</td>'
                     f'<td class="num" data-label="pages fetched">{int(r.get("fetched") or 0):,}</td>'
                     f'<td class="num" data-label="targets harvested">{harvested}</td>'
                     f'<td class="num" data-label="estimated">{estimated}</td></tr>')
    return f"""<section id="harvest">
<h2>Harvest</h2>
<p id="harvest-lead">{_e(harvest_sentence(summary, learnt_with))}</p>
<table id="harvest-table">
<thead><tr><th>page type</th><th>role</th><th>pages fetched</th><th>targets harvested</th>
<th>estimated targets</th></tr></thead>
<tbody>
{chr(10).join(cells)}
</tbody>
</table>
<p>Estimated: the targets harvested plus the expected targets among the URLs still waiting when the
harvest stopped (from the model's link counts and what the harvest saw).</p>
</section>"""
