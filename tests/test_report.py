"""``structcrawl report`` (structcrawl.report): the HTML page, its graph and learning curve, offline."""

from __future__ import annotations

import json
import re

import pytest
from lxml import etree
from lxml import html as LH

from helpers import learn_offline
from structcrawl.commands.parser import main
from structcrawl.demo.site import DemoSite
from structcrawl.report import curve_svg, graph_svg, layout, quality_point, render_report, report_path_for
from structcrawl.sitemodel import model_document, write_model
from test_export import BASE


@pytest.fixture(scope="module")
def crawl():
    site = DemoSite(pages=400, seed=3)
    fetch, explorer, samples = learn_offline(site, BASE + "/", "stable", per_class=20)
    doc = model_document(explorer, crawl={"stop_reason": "model_stable"}, tag_paths=samples)
    return site, fetch, explorer, json.loads(json.dumps(doc))


def test_layout_is_deterministic_inside_the_box_and_spreads_nodes():
    nodes = list(range(8))
    edges = [(i, (i + 1) % 8, 5) for i in range(8)] + [(0, 4, 100)]
    a = layout(nodes, edges, width=800, height=600, radius={i: 20 for i in nodes})
    assert a == layout(nodes, edges, width=800, height=600, radius={i: 20 for i in nodes})
    assert all(0 <= x <= 800 and 0 <= y <= 600 for x, y in a.values())
    pts = list(a.values())
    closest = min(((x1 - x2) ** 2 + (y1 - y2) ** 2) ** 0.5 for i, (x1, y1) in enumerate(pts) for x2, y2 in pts[i + 1:])
    assert closest > 40  # two radii: no overlapping nodes
    assert layout([], []) == {} and layout(["a"], [], width=100, height=50) == {"a": (50, 25)}


def test_graph_has_one_node_per_class_and_one_arrow_per_linked_pair(crawl):
    doc = crawl[3]
    svg = etree.fromstring(graph_svg(doc).encode())
    ns = {"s": "http://www.w3.org/2000/svg"}
    nodes = svg.findall(".//s:g[@class='node']", ns)
    assert sorted(int(g.get("data-class")) for g in nodes) == sorted(c["id"] for c in doc["classes"])
    # node area grows with the class size
    r = {int(g.get("data-class")): float(g.find(".//s:circle", ns).get("r")) for g in nodes}
    sizes = {c["id"]: c["size"] for c in doc["classes"]}
    big, small = max(sizes, key=sizes.get), min(sizes, key=sizes.get)
    assert r[big] > r[small]
    pairs = {(link["source"], link["target"]) for link in doc["class_links"]}
    edges = svg.xpath(".//s:g[@data-source]", namespaces=ns)
    assert {(int(g.get("data-source")), int(g.get("data-target"))) for g in edges} == pairs
    for g in edges:  # the count on the arrow is the sum of its collection paths' counts
        s, t = int(g.get("data-source")), int(g.get("data-target"))
        assert int(g.get("data-count")) == sum(link["count"] for link in doc["class_links"]
                                               if (link["source"], link["target"]) == (s, t))
    assert svg.findall(".//s:text[@class='edge-label']", ns), "backbone arrows carry labels"


def test_curve_panels_and_quality_panel_only_with_quality(crawl):
    doc = crawl[3]
    history = doc["history"]
    assert history and history[-1]["classes"] == len(doc["classes"])
    ns = {"s": "http://www.w3.org/2000/svg"}
    svg = etree.fromstring(curve_svg(history).encode())
    assert [g.get("data-series") for g in svg.findall(".//s:g[@class='panel']", ns)] == ["classes", "mdl"]
    history = [dict(p, queue=10 * p["update"]) for p in history]  # points may carry the queue size
    svg = etree.fromstring(curve_svg(history).encode())
    assert [g.get("data-series") for g in svg.findall(".//s:g[@class='panel']", ns)] == ["classes", "mdl", "queue"]
    with_q = [dict(p, q=0.5, fstar=0.9) for p in history]
    svg = etree.fromstring(curve_svg(with_q).encode())
    assert svg.findall(".//s:g[@class='panel']", ns)[-1].get("data-series") == "q,fstar"
    line = svg.find(".//s:polyline[@data-key='mdl']", ns)
    assert len(line.get("points").split()) == len(history)
    assert "no learning curve" in curve_svg([])


def test_report_is_self_contained_and_lists_every_class(crawl):
    doc = crawl[3]
    page = render_report(doc)
    tree = LH.document_fromstring(page)
    assert not tree.xpath("//script | //link | //iframe | //object | //embed")
    assert not tree.xpath("//*[@src]"), "nothing to load"
    assert "default-src 'none'" in tree.xpath("//meta[@http-equiv='Content-Security-Policy']/@content")[0]
    rows = tree.xpath("//table[@id='class-table']//tr[@data-class]")
    assert [int(r.get("data-class")) for r in rows] == [c["id"] for c in doc["classes"]]
    for c in doc["classes"]:
        row = tree.get_element_by_id(f"class-{c['id']}")
        assert set(row.xpath(".//ul[@class='samples']//a/@href")) == set(c["samples"])
        assert len(row.xpath(".//details//code")) == len(c["schema"])
        if c["url_pattern"]:
            assert c["url_pattern"] in row.text_content()
    assert doc["crawl"]["stability_reason"] in tree.get_element_by_id("summary").text_content()
    assert tree.xpath("//svg[@id='model-graph']") and tree.xpath("//svg[@id='learning-curve']")


def test_report_lists_the_refinement_merges(crawl):
    doc = json.loads(json.dumps(crawl[3]))
    doc["merges"] = [{"kept": 3, "merged": 7, "similarity": 0.8812, "update": 30},
                     {"kept": 3, "merged": 9, "similarity": 0.95, "update": 41}]
    tree = LH.document_fromstring(render_report(doc))
    rows = [[td.text_content() for td in tr.xpath("td")] for tr in tree.xpath("//table[@id='merge-table']/tbody/tr")]
    assert rows == [["3", "7", "0.881", "30"], ["3", "9", "0.950", "41"]]
    doc["merges"] = []
    assert not LH.document_fromstring(render_report(doc)).xpath("//table[@id='merge-table']")


def test_report_escapes_hostile_text(crawl):
    doc = json.loads(json.dumps(crawl[3]))
    doc["classes"][0]["samples"] = ['http://x/"><script>alert(1)</script>']
    doc["class_links"][0]["path"] = "html/body/<b>"
    page = render_report(doc)
    assert "<script>" not in page and "&lt;script&gt;" in page


def test_cli_report_writes_the_page(crawl, tmp_path, capsys):
    model = tmp_path / "site.model.json"
    write_model(crawl[3], model)
    assert main(["report", str(model)]) == 0
    out = tmp_path / "site.model.html"
    assert report_path_for(str(model)) == str(out) and out.exists()
    assert len(LH.parse(str(out)).xpath("//svg[@id='model-graph']//*[@class='node']")) == len(crawl[3]["classes"])
    assert main(["report", str(model), "-o", str(tmp_path / "r.html")]) == 0
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert main(["report", str(bad)]) == 2
    assert re.search(r"structcrawl: error: .*not a structcrawl site model", capsys.readouterr().err)


def test_quality_point_on_a_hand_made_state():
    schemas = {"/a1": {"p", "q"}, "/a2": {"p", "q"}, "/b1": {"r"}, "/b2": {"r", "s"}}
    label = lambda u: u[1]  # noqa: E731 - truth class = first letter
    perfect = quality_point({"/a1": 1, "/a2": 1, "/b1": 2, "/b2": 2}, schemas.__getitem__, label)
    assert perfect["fstar"] == 1.0 and perfect["q"] > 0.8
    lumped = quality_point({u: 1 for u in schemas}, schemas.__getitem__, label)
    assert lumped["fstar"] < 1.0 and lumped["q"] < perfect["q"]
    assert quality_point({}, schemas.__getitem__, label) == {"q": 0.0, "fstar": 0.0}
