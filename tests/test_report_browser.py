"""The HTML report in a real headless browser (Debian's ``chromium``, driven by Playwright), offline.

For the demo model and for a real-site model with ≥ 15 classes
(``tests/data/erlang.model.json.gz``: a ``--stop exhaust`` structure crawl of
the erlang-doc corpus, 43 classes, with its samples' titles, rebuilt by
``python benchmarks/report_model.py``), at 1400, 1024 and 390 px; the demo's
report with the section of a harvest of its books (run offline as the spider
does):

* the page loads with no console message at all and no request but its own
  file (every other request is refused and counted);
* no text overlaps another text and none leaves the viewport horizontally,
  from the DOM: the client rectangles of every rendered text node, and the
  bounding boxes of the SVG ``text`` elements (graph and curve);
* clicking a class's box in the graph scrolls its table row into view.

A made-up 60-class model (the issue's upper bound: its 21 smallest classes
are drawn as one box) is checked for overlaps too.

The screenshots are kept in ``benchmarks/out/report/`` (paths printed: run
with ``-s``).  Without chromium these tests FAIL: CI installs it
(``scripts/setup``); ``STRUCTCRAWL_CHROMIUM`` may point at another binary.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
from pathlib import Path

import pytest

from helpers import learn_offline
from structcrawl.analysis.harvestplan import Harvest
from structcrawl.core.features import extract
from structcrawl.demo.site import DemoSite
from structcrawl.report import write_report
from structcrawl.report.graph import MAX_GRAPH_CLASSES
from structcrawl.report.harvest import SUMMARY_FORMAT
from structcrawl.settings import STRUCTCRAWL_HARVEST_EXPLORE, STRUCTCRAWL_HARVEST_EXPLORE_MIN
from structcrawl.sitemodel import PageTitles, load_model, model_document
from test_export import BASE

SHOTS = Path(__file__).resolve().parent.parent / "benchmarks" / "out" / "report"
REAL_MODEL = Path(__file__).parent / "data" / "erlang.model.json.gz"
WIDTHS = (1400, 1024, 390)
#: rectangles closer than this (CSS px) do not count as overlapping: touching line boxes
TOLERANCE = 1.0

# Every rendered text's rectangles; pairs of different texts that overlap; rectangles past the viewport.
LAYOUT_PROBLEMS = """(tolerance) => {
  const vw = document.documentElement.clientWidth, boxes = [];
  const name = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
    (el.getAttribute("class") ? "." + el.getAttribute("class").split(" ")[0] : "");
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  let node, owner = 0;
  while ((node = walker.nextNode())) {
    const el = node.parentElement;
    if (!node.nodeValue.trim() || el.closest("script, style, svg")) { continue; }
    // not rendered: inside a closed <details>, display:none, visibility:hidden
    if (!el.checkVisibility({visibilityProperty: true, contentVisibilityAuto: true})) { continue; }
    const range = document.createRange();
    range.selectNodeContents(node);
    owner += 1;
    for (const r of range.getClientRects()) {
      if (r.width > 0.5 && r.height > 0.5) {
        boxes.push({r, owner, what: name(el) + " " + JSON.stringify(node.nodeValue.trim().slice(0, 40))});
      }
    }
  }
  for (const t of document.querySelectorAll("svg text")) {
    const r = t.getBoundingClientRect();
    owner += 1;
    if (r.width > 0.5 && r.height > 0.5) {
      boxes.push({r, owner, what: "svg text " + JSON.stringify(t.textContent.trim().slice(0, 40))});
    }
  }
  const problems = [];
  for (const b of boxes) {
    if (b.r.left < -tolerance || b.r.right > vw + tolerance) {
      const span = Math.round(b.r.left) + ".." + Math.round(b.r.right) + " of " + vw;
      problems.push("outside the viewport (" + span + "): " + b.what);
    }
  }
  const top = (b) => b.r.top + window.scrollY;
  boxes.sort((a, b) => top(a) - top(b));
  for (let i = 0; i < boxes.length; i++) {
    const a = boxes[i];
    for (let j = i + 1; j < boxes.length && top(boxes[j]) < top(a) + a.r.height - tolerance; j++) {
      const b = boxes[j];
      if (a.owner === b.owner) { continue; }
      const w = Math.min(a.r.right, b.r.right) - Math.max(a.r.left, b.r.left);
      const h = Math.min(a.r.bottom, b.r.bottom) - Math.max(a.r.top, b.r.top);
      if (w > tolerance && h > tolerance) { problems.push("overlap: " + a.what + " / " + b.what); }
    }
  }
  return {problems, texts: boxes.length};
}"""


def chromium() -> str:
    exe = os.environ.get("STRUCTCRAWL_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        pytest.fail("chromium is not installed: the report's browser test needs it (apt-get install chromium)")
    return exe


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install -e '.[test]' installs playwright")
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=chromium(), args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """``{name: (model document, report path)}``: the demo site's model and the real-site one."""
    site = DemoSite()
    fetch, explorer, samples = learn_offline(site, BASE + "/", "stable", per_class=20)
    titles = PageTitles()
    titles.keep(fetch.features.values())
    demo = json.loads(json.dumps(model_document(explorer, crawl={"stop_reason": "model_stable",
                                                                 "stable_at_pages": len(explorer.model.pages)},
                                                tag_paths=samples, titles=titles)))
    with gzip.open(REAL_MODEL, "rt", encoding="utf-8") as fh:
        real = json.load(fh)
    assert len(real["classes"]) >= 15
    out = {}
    folder = tmp_path_factory.mktemp("report")
    model_path = folder / "demo.model.json"
    model_path.write_text(json.dumps(demo), encoding="utf-8")
    harvest = offline_harvest(fetch, load_model(model_path), demo["site"]["start_url"], "/book/")
    for name, doc, summary in (("demo", demo, harvest), ("erlang", real, None), ("sixty", sixty_classes(), None)):
        path = folder / f"{name}.html"
        write_report(doc, path, harvest=summary)
        out[name] = (doc, path)
    return out


def offline_harvest(fetch, model, start_url: str, target_path: str) -> dict:
    """The summary of a harvest of the class whose samples are ``target_path`` pages, run offline as the
    spider does (classify, spell, hand to the plan), for the report's harvest section."""
    doc = model.document
    target = next(c["id"] for c in doc["classes"] if target_path in c["samples"][0])
    harvest = Harvest(doc, [target], explore_share=STRUCTCRAWL_HARVEST_EXPLORE,
                      explore_min=STRUCTCRAWL_HARVEST_EXPLORE_MIN)
    harvest.seed(start_url)
    requested = failed = 0
    while (entry := harvest.pop()) is not None:
        requested += 1
        got = fetch(entry.url)
        if got is None:
            failed += 1
            harvest.failed(entry)
            continue
        final, body = got
        features = extract(body, final)
        cls, _cost = model.classify_page(features)
        harvest.page(final, entry.key, cls, model.site_model.speller.collections(features.collections),
                     entry.explore, entry.url)
    return {"format": SUMMARY_FORMAT, "targets": [target], "close_reason": "finished", "requested": requested,
            "fetched": harvest.fetched, "explored": harvest.explored, "failed": failed, "classes": harvest.summary()}


WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"]


def sixty_classes() -> dict:
    """A made-up model at the issue's upper bound: 60 classes with two-word names, a hub linking to all,
    chains and cross links; the 21 smallest are drawn as one box."""
    classes, links = [], []
    for i in range(60):
        words = f"{WORDS[i % 10]}-{WORDS[i // 10]}"
        classes.append({"id": i, "size": 200 - 3 * i, "samples": [f"http://127.0.0.1:8000/{words}/{j}" for j in (1, 2)],
                        "url_pattern": f"^/{words}/\\d+$", "schema": ["html/body/nav/a"],
                        "path_counts": {"html/body/nav/a": 200 - 3 * i}, "fingerprint": []})
        links.append({"source": 0, "target": i, "path": "html/body/nav/a", "count": 1000 - i})
        links.append({"source": i, "target": (i + 1) % 60, "path": "html/body/main/ul/li/a", "count": 50 + i})
        links.append({"source": i, "target": (i * 7) % 60, "path": "html/body/aside/a", "count": 5})
    merged: dict = {}
    for link in links:
        key = (link["source"], link["path"], link["target"])
        merged[key] = merged.get(key, 0) + link["count"]
    return {"site": {"start_url": "http://127.0.0.1:8000/", "host": "127.0.0.1:8000"},
            "crawl": {"pages_modelled": sum(c["size"] for c in classes), "stop_reason": "max_pages"},
            "classes": classes, "class_links": [{"source": s, "path": p, "target": t, "count": n}
                                                for (s, p, t), n in sorted(merged.items())]}


def own_boxes(doc: dict) -> list[dict]:
    """The classes drawn with a box of their own, largest first: all, or the largest
    ``MAX_GRAPH_CLASSES - 1`` when there are more (the rest share one box)."""
    ranked = sorted(doc["classes"], key=lambda c: (-c["size"], c["id"]))
    return ranked if len(ranked) <= MAX_GRAPH_CLASSES else ranked[: MAX_GRAPH_CLASSES - 1]


class Visit:
    """One page load: console messages, page errors and refused requests recorded."""

    def __init__(self, browser, path: Path, width: int) -> None:
        self.context = browser.new_context(viewport={"width": width, "height": 900}, offline=True)
        self.page = self.context.new_page()
        self.messages: list[str] = []
        self.requests: list[str] = []
        self.page.on("console", lambda m: self.messages.append(f"{m.type}: {m.text}"))
        self.page.on("pageerror", lambda e: self.messages.append(f"page error: {e}"))
        own = path.as_uri()

        def refuse(route):
            if route.request.url == own:
                route.continue_()
            else:
                self.requests.append(route.request.url)
                route.abort()

        self.page.route("**/*", refuse)
        self.page.goto(own)

    def ready(self) -> None:
        self.page.wait_for_selector("html[data-graph=ready]", timeout=30_000)

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def visit(browser):
    opened: list[Visit] = []

    def open_(path: Path, width: int) -> Visit:
        v = Visit(browser, path, width)
        opened.append(v)
        return v

    yield open_
    for v in opened:
        v.close()


def test_console_and_layout_checks_see_problems(visit, tmp_path):
    """Negative control: the console capture, the request refusal and the layout check do catch faults."""
    bad = tmp_path / "bad.html"
    bad.write_text(
        '<html><body><p style="position:absolute;left:10px;top:10px">first text</p>'
        '<p style="position:absolute;left:14px;top:12px">second text</p>'
        '<p style="position:absolute;left:380px;top:60px;white-space:nowrap">runs past the right edge</p>'
        '<img src="http://example.org/x.png"><script>undefinedFunction();</script></body></html>')
    v = visit(bad, 400)
    v.page.wait_for_load_state("load")
    assert any("undefinedFunction" in m for m in v.messages), v.messages
    assert v.requests == ["http://example.org/x.png"]
    problems = v.page.evaluate(LAYOUT_PROBLEMS, TOLERANCE)["problems"]
    assert any(p.startswith("overlap:") and "first text" in p and "second text" in p for p in problems), problems
    assert any(p.startswith("outside the viewport") and "runs past" in p for p in problems), problems


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", ["demo", "erlang", "sixty"])
def test_report_loads_offline_cleanly_without_overlaps(reports, visit, name, width):
    doc, path = reports[name]
    v = visit(path, width)
    v.ready()
    assert v.messages == []
    assert v.requests == [], "the report loads nothing"
    page = v.page
    shown = page.eval_on_selector_all("#model-graph g.node", "gs => gs.map(g => g.id)")
    boxes = [f"class-node-{c['id']}" for c in own_boxes(doc)]
    if len(doc["classes"]) > MAX_GRAPH_CLASSES:
        boxes.append("class-node-other")
    assert sorted(shown) == sorted(boxes)
    assert page.eval_on_selector_all("#class-table tr[data-class]", "rs => rs.length") == len(doc["classes"])
    assert page.is_visible("#model-graph") and page.is_visible("#learning-curve")
    titled = sum(len(c.get("sample_titles") or {}) for c in doc["classes"])
    assert page.eval_on_selector_all("a.sample-title", "as => as.length") == titled
    assert titled > 0 or name == "sixty"
    assert page.is_visible("#harvest-table") == (name == "demo")  # the demo's report has a harvest
    result = page.evaluate(LAYOUT_PROBLEMS, TOLERANCE)
    assert result["texts"] > 100
    assert result["problems"] == []
    SHOTS.mkdir(parents=True, exist_ok=True)
    shot = SHOTS / f"{name}-{width}.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 20_000
    print(f"screenshot: {shot}")


@pytest.mark.parametrize("name", ["demo", "erlang"])
def test_clicking_a_class_box_scrolls_to_its_row(reports, visit, name):
    doc, path = reports[name]
    v = visit(path, 1024)
    v.ready()
    page = v.page
    # the smallest class with a box: its row is far below the first screen
    cid = own_boxes(doc)[-1]["id"]
    row = f"#class-{cid}"
    assert not page.evaluate(f"document.querySelector('{row}').getBoundingClientRect().top < innerHeight")
    page.locator(f"#class-node-{cid}").scroll_into_view_if_needed()
    page.click(f"#class-node-{cid}")
    page.wait_for_function(f"location.hash === '{row}'")
    top = page.evaluate(f"document.querySelector('{row}').getBoundingClientRect().top")
    assert -1 <= top < 900 / 2, top  # scrolled to the top of the viewport (sub-pixel rounding)


def test_hovering_an_arrow_shows_its_link_collections(reports, visit):
    doc, path = reports["demo"]
    v = visit(path, 1400)
    v.ready()
    page = v.page
    link = max(doc["class_links"], key=lambda link: link["count"])
    edge = f"#class-edge-{link['source']}-{link['target']}"
    page.dispatch_event(edge, "mouseenter")
    info = page.text_content("#graph-info")
    total = sum(x["count"] for x in doc["class_links"]
                if (x["source"], x["target"]) == (link["source"], link["target"]))
    assert f": {total:,} links" in info and f"×{link['count']} {link['path']}" in info
    assert page.evaluate(f"document.querySelector('{edge}').classList.contains('hover')")
