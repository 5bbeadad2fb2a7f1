"""``structcrawl report`` (structcrawl.report): names, graph, learning curve and page, offline.

The page in a real browser (layout, clicks, no network) is tests/test_report_browser.py.
"""

from __future__ import annotations

import json
import re

import pytest
from lxml import etree
from lxml import html as LH

from helpers import learn_offline
from structcrawl.analysis.urlwords import url_words
from structcrawl.commands.parser import main
from structcrawl.demo.site import DemoSite
from structcrawl.report import (
    class_names,
    curve_svg,
    distinguishing_paths,
    graph_dot,
    quality_point,
    render_report,
    report_path_for,
)
from structcrawl.report.graph import MAX_GRAPH_CLASSES, STAGGER, backbone, busiest_in, staggered
from structcrawl.report.names import section_words
from structcrawl.report.page import lead_sentence
from structcrawl.sitemodel import model_document, write_model
from test_export import BASE

SVG = {"s": "http://www.w3.org/2000/svg"}


@pytest.fixture(scope="module")
def crawl():
    site = DemoSite(pages=400, seed=3)
    fetch, explorer, samples = learn_offline(site, BASE + "/", "stable", per_class=20)
    doc = model_document(explorer, crawl={"stop_reason": "model_stable", "stable_at_pages": len(explorer.model.pages)},
                         tag_paths=samples)
    return site, fetch, explorer, json.loads(json.dumps(doc))


def cls(cid, samples, size=10, pattern=None, paths=None, fingerprint=()):
    paths = paths or {}
    return {"id": cid, "size": size, "samples": samples, "url_pattern": pattern, "schema": sorted(paths),
            "path_counts": paths, "fingerprint": sorted(fingerprint)}


# -- names ---------------------------------------------------------------------------------------------------


def test_url_words_and_section_words():
    assert url_words("http://h/classgeos_1_1io_1_1WKTReader.html") == ["classgeos", "io", "wktreader"]
    assert url_words("http://h/search?q=x&page=2") == ["search", "page"]  # one letter is no word
    assert url_words("http://h/lib/stdlib-4.2/doc/html/ets.html") == ["lib", "stdlib", "doc", "html", "ets"]
    assert section_words("html/body/div#page/main#content/div.months/a.next") == ["months", "content", "page", "next"]
    assert section_words("html/body/div/table/tr.memitem:ns_*/td/a") == ["memitem:ns"]
    assert section_words("html/body/ul/li/a") == []


def test_names_come_from_shared_url_words_without_site_wide_ones():
    classes = [
        cls(1, ["http://h/doc/classgeos_1_1geom_1_1Geometry.html", "http://h/doc/classgeos_1_1io_1_1WKTReader.html"]),
        cls(2, ["http://h/doc/namespacegeos_1_1geom.html", "http://h/doc/namespacegeos_1_1io.html"]),
        cls(3, ["http://h/doc/dir_0a1b.html", "http://h/doc/dir_9f3c.html"]),
    ]
    # "doc" is on every class's URLs: it names none of them; no name is a cut file name
    assert class_names(classes) == {1: "classgeos", 2: "namespacegeos", 3: "dir"}


def test_names_that_collide_are_told_apart_by_their_own_sections():
    nav = "html/body/nav/a"
    classes = [
        cls(1, ["http://h/news/", "http://h/news/?page=2"], paths={nav: 10, "html/body/div.pager/a": 10}),
        cls(2, ["http://h/news/2024/05/a-1", "http://h/news/2024/04/b-2"],
            paths={nav: 10, "html/body/div#page/ol.bestsellers/li/a": 9}),
        cls(3, ["http://h/", ], size=1, paths={nav: 1, "html/body/ul.categories/li/a": 1}),
        cls(4, ["http://h/x/1", "http://h/y/2"], paths={nav: 10}),
    ]
    names = class_names(classes, start_url="http://h/")
    assert names[1] == "news · pager" and names[2] == "news · bestsellers"
    assert names[3] == "start page"
    assert names[4] == "class 4"  # nothing shared, nothing of its own
    assert len(set(names.values())) == len(names)
    # without the start URL the home page is named by its own section
    assert class_names(classes)[3] == "categories"


def test_distinguishing_paths_of_classes_sharing_a_pattern():
    pattern = r"^/[^/?]+\.html$"
    a = cls(1, ["http://h/a.html"], size=20, pattern=pattern,
            paths={"html/body/div.memberdecls/a": 20, "html/body/nav/a": 20, "html/body/div.rare/a": 3},
            fingerprint={"html/body/div", "html/body/div/table"})
    b = cls(2, ["http://h/b.html"], size=10, pattern=pattern,
            paths={"html/body/nav/a": 10, "html/body/pre.fragment/a": 10},
            fingerprint={"html/body/div", "html/body/pre"})
    c = cls(3, ["http://h/c.html"], size=5, pattern=pattern, paths={"html/body/nav/a": 5},
            fingerprint={"html/body/div", "html/body/div/table", "html/body/h1"})
    assert distinguishing_paths(a, [b, c]) == ["html/body/div.memberdecls/a"]
    assert distinguishing_paths(b, [a, c]) == ["html/body/pre.fragment/a"]
    # no link collection of its own: the tag paths of its fingerprint the others lack
    assert distinguishing_paths(c, [a, b]) == ["html/body/h1"]


def test_demo_classes_get_their_url_words(crawl):
    doc = crawl[3]
    names = class_names(doc["classes"], doc["site"]["start_url"])
    assert len(set(names.values())) == len(names)
    for word in ("start page", "book", "author", "publisher", "category", "search", "review"):
        assert word in names.values(), names


# -- graph ---------------------------------------------------------------------------------------------------


def parse_dot(text):
    nodes = dict(re.findall(r'^  c(\d+|_other) \[id="class-node-(?:\d+|other)".*?label=<(.*?)>, ', text, re.M))
    edges = re.findall(r"^  c(\d+|_other) -> c(\d+|_other) \[(.*)\];$", text, re.M)
    return nodes, edges


def test_graph_has_one_box_per_class_and_one_arrow_per_linked_pair(crawl):
    doc = crawl[3]
    names = class_names(doc["classes"])
    text = graph_dot(doc, names)
    assert text == graph_dot(doc, names), "deterministic"
    nodes, edges = parse_dot(text)
    assert sorted(int(n) for n in nodes) == sorted(c["id"] for c in doc["classes"])
    for c in doc["classes"]:
        assert names[c["id"]] in nodes[str(c["id"])]
        assert f'href="#class-{c["id"]}"' in text
    pairs = {(link["source"], link["target"]) for link in doc["class_links"]}
    assert {(int(s), int(t)) for s, t, _ in edges} == pairs
    for s, t, attrs in edges:  # the busiest links carry their count; the others are faint, out of the layout
        total = sum(link["count"] for link in doc["class_links"]
                    if (link["source"], link["target"]) == (int(s), int(t)))
        if 'class="backbone"' in attrs and "constraint=false" not in attrs:
            assert f'label=" {total:,} "' in attrs
        elif 'class="backbone"' in attrs:  # out of the layout: dot keeps no room for a label there
            assert "label=" not in attrs
        else:
            assert 'class="faint"' in attrs and "constraint=false" in attrs and "label=" not in attrs
        assert f": {total:,} links" in attrs  # the tooltip lists the collection paths under the total
    assert sum('class="backbone"' in a for _, _, a in edges) >= len(doc["classes"]) - 1


def test_backbone_ranking_tree_and_staggered_leaves():
    totals = {(1, 2): 10, (1, 3): 5, (2, 1): 7, (3, 2): 1, (1, 1): 50}
    assert busiest_in(totals) == {(2, 1), (1, 2), (1, 3)}  # one parent per box, self links aside
    assert backbone(totals) == {(1, 2), (1, 3), (2, 1), (3, 2)}  # and each box's busiest link out
    hub = {(0, leaf) for leaf in range(1, 8)} | {(8, 0), (1, 9)}
    lengths = staggered(hub)
    # box 1 has a child, so it is not one of box 0's leaves; box 9 is box 1's
    assert set(lengths) == {(0, leaf) for leaf in range(2, 8)} | {(1, 9)}
    assert sorted(lengths[(0, leaf)] for leaf in range(2, 8)) == sorted(1 + i % STAGGER for i in range(6))


def test_a_ring_of_links_does_not_rank_the_layout():
    n = 12
    classes = [cls(i, [f"http://h/t{i}/{j}" for j in range(2)]) for i in range(n)]
    links = [{"source": 0, "target": i, "path": "html/body/nav/a", "count": 100} for i in range(1, n)]
    links += [{"source": i, "target": (i + 1) % n, "path": "html/body/a.next", "count": 10} for i in range(n)]
    _nodes, edges = parse_dot(graph_dot({"classes": classes, "class_links": links}, class_names(classes)))
    ranking = {(s, t) for s, t, a in edges if 'class="backbone"' in a and "constraint=false" not in a}
    assert ranking == {("0", str(i)) for i in range(1, n)} | {(str(n - 1), "0")}  # box 0 has a busiest link in too
    ring = {(s, t) for s, t, a in edges if (int(t) - int(s)) % n == 1 and "0" not in (s, t)}
    assert ring and all('class="backbone"' in a and "constraint=false" in a for s, t, a in edges if (s, t) in ring)


def test_graph_groups_the_smallest_classes_beyond_the_limit():
    n = MAX_GRAPH_CLASSES + 10
    classes = [cls(i, [f"http://h/t{i}/{j}" for j in range(2)], size=100 - i) for i in range(n)]
    links = [{"source": i, "target": (i + 1) % n, "path": "html/body/a", "count": 3} for i in range(n)]
    doc = {"classes": classes, "class_links": links}
    nodes, edges = parse_dot(graph_dot(doc, class_names(classes)))
    assert len(nodes) == MAX_GRAPH_CLASSES
    small = range(MAX_GRAPH_CLASSES - 1, n)
    assert f"{len(small)} small classes" in nodes["_other"]
    assert f"{sum(100 - i for i in small):,} pages" in nodes["_other"]
    kept = {str(i) for i in range(MAX_GRAPH_CLASSES - 1)}
    assert set(nodes) == kept | {"_other"}
    assert ("_other", "_other") in {(s, t) for s, t, _ in edges}  # links among the small ones
    assert (str(MAX_GRAPH_CLASSES - 2), "_other") in {(s, t) for s, t, _ in edges}


# -- learning curve ------------------------------------------------------------------------------------------


def test_curve_plots_bits_per_page_and_the_stop_measure(crawl):
    doc = crawl[3]
    history, checks = doc["history"], doc["checks"]
    assert history and checks and history[-1]["classes"] == len(doc["classes"])
    eps = doc["parameters"]["stability"]["epsilon"]
    stop = doc["crawl"]["stable_at_pages"]
    svg = etree.fromstring(curve_svg(history, checks, window=3, epsilon=eps, stop_pages=stop,
                                     stop_label="stable").encode())
    panels = [g.get("data-series") for g in svg.findall(".//s:g[@class='panel']", SVG)]
    assert panels == ["classes", "bits_per_page", "miss,moved"]
    bits = svg.find(".//s:polyline[@data-key='bits_per_page']", SVG)
    assert len(bits.get("points").split()) == len(history)
    # per page, not cumulative: the last point's height is mdl / pages on the panel's own scale
    title = svg.findall(".//s:g[@class='panel']", SVG)[1].find("s:text", SVG)
    assert f"{history[-1]['mdl'] / history[-1]['pages']:,.1f} at the end" in "".join(title.itertext())
    assert len(svg.findall(".//s:circle[@class='check']", SVG)) == len(checks)
    assert len(svg.findall(".//s:line[@class='stop-line']", SVG)) == 3
    assert svg.find(".//s:line[@class='threshold']", SVG) is not None
    assert svg.find(".//s:rect[@class='fired-window']", SVG) is not None, "the window that fired is shaded"
    # held checks are filled, the others hollow
    for circle, check in zip(svg.findall(".//s:circle[@class='check']", SVG), sorted(checks, key=lambda c: c["pages"])):
        missed = (check["new"] - check["predicted"]) / check["new"]
        moved = check["moved"] / check["earlier"] if check["earlier"] else 0
        assert (circle.get("fill") != "#fff") == (missed <= eps and moved <= eps and not check["surprised"])


def test_the_shaded_window_is_the_last_that_held_before_the_stop():
    """A crawl whose window held while its audit was out stops at the check that judged the audit,
    which may itself miss pages of the crawl's order; a surprised check never holds."""
    from structcrawl.report.curve import firing_window

    def check(pages, predicted=25, surprised=0):
        return {"pages": pages, "new": 25, "predicted": predicted, "earlier": pages - 25, "moved": 0,
                "surprised": surprised}

    held_then_missed = [check(25, 10), check(50), check(75), check(100), check(110, predicted=20)]
    assert [c["pages"] for c in firing_window(held_then_missed, 3, 0.05, 110)] == [50, 75, 100]
    surprised = [check(25), check(50), check(75, surprised=1)]
    assert firing_window(surprised, 3, 0.05, 75) == []


def test_curve_quality_panel_and_old_files(crawl):
    history = crawl[3]["history"]
    with_q = [dict(p, q=0.5, fstar=0.9) for p in history]
    svg = etree.fromstring(curve_svg(with_q).encode())
    assert svg.findall(".//s:g[@class='panel']", SVG)[-1].get("data-series") == "q,fstar"
    assert "no checks" in curve_svg(history)  # a model written before checks were exported
    assert svg.find(".//s:rect[@class='fired-window']", SVG) is None
    assert "no learning curve" in curve_svg([])


# -- the page ------------------------------------------------------------------------------------------------


def test_model_exports_the_stop_rule_checks(crawl):
    _site, _fetch, explorer, doc = crawl
    assert doc["checks"] == [
        {"pages": c.pages, "new": c.new, "predicted": c.predicted, "earlier": c.earlier, "moved": c.moved,
         "classes": c.classes, "untried": c.untried, "forgiven": c.forgiven, "surprised": c.surprised}
        for c in explorer.stability.checks]


def test_report_first_screen_table_and_self_containment(crawl):
    doc = crawl[3]
    tree = LH.document_fromstring(render_report(doc))
    lead = tree.get_element_by_id("lead").text_content()
    pages = doc["crawl"]["pages_modelled"]
    assert lead.startswith(f"{len(doc['classes'])} page types from {pages:,} pages (")
    assert "it stopped because the model predicted the class of" in lead
    # graph, then table, then curve; the figures and parameters last, collapsed
    order = [el.get("id") for el in tree.xpath("//main/*[@id]")]
    assert order == ["graph", "classes", "curve", "details"]
    assert tree.get_element_by_id("details").tag == "details" and tree.get_element_by_id("details").get("open") is None
    assert doc["crawl"]["stability_reason"] in tree.get_element_by_id("summary").text_content()
    # nothing to load: inline scripts only, no src/href to fetch, and a policy that refuses anything else
    assert not tree.xpath("//link | //iframe | //object | //embed | //img | //*[@src]")
    assert all(not s.get("src") for s in tree.xpath("//script"))
    csp = tree.xpath("//meta[@http-equiv='Content-Security-Policy']/@content")[0]
    assert "default-src 'none'" in csp and "connect-src" not in csp
    dot = json.loads(tree.get_element_by_id("graph-dot").text)
    assert dot.startswith("digraph site {")
    rows = tree.xpath("//table[@id='class-table']//tr[@data-class]")
    sizes = [c["size"] for c in sorted(doc["classes"], key=lambda c: (-c["size"], c["id"]))]
    assert [int(r.get("data-class")) for r in rows] == [c["id"] for c in sorted(doc["classes"],
                                                                                key=lambda c: (-c["size"], c["id"]))]
    assert sizes == sorted(sizes, reverse=True)
    names = class_names(doc["classes"], doc["site"]["start_url"])
    for c in doc["classes"]:
        row = tree.get_element_by_id(f"class-{c['id']}")
        assert row.xpath(".//b[@class='class-name']")[0].text == names[c["id"]]
        assert set(row.xpath(".//ul[@class='samples']//a/@href")) == set(c["samples"])
        assert len(row.xpath(".//ul[@class='schema']/li")) == len(c["schema"])
        if c["url_pattern"]:
            assert row.xpath(".//code[@class='pattern']")[0].text == c["url_pattern"]


def test_classes_sharing_a_pattern_say_what_tells_them_apart(crawl):
    doc = json.loads(json.dumps(crawl[3]))
    a, b = doc["classes"][1], doc["classes"][2]
    b["url_pattern"] = a["url_pattern"]
    tree = LH.document_fromstring(render_report(doc))
    for me, other in ((a, b), (b, a)):
        row = tree.get_element_by_id(f"class-{me['id']}")
        apart = row.xpath(".//div[@class='apart']")[0]
        assert apart.xpath(".//a/@href") == [f"#class-{other['id']}"]
        assert [li.text_content() for li in apart.xpath(".//ul[@class='distinguishing']/li")] == \
            (distinguishing_paths(me, [other]) or ["nothing in the model"])
    assert len(tree.xpath("//div[@class='apart']")) == 2


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
    doc["class_links"][0]["path"] = "html/body/</script><script>alert(2)</script>"
    page = render_report(doc)
    tree = LH.document_fromstring(page)
    assert "alert(1)</script>" not in page and "&lt;script&gt;alert(1)" in page
    # the DOT text sits in a JSON script element: no "</" can close it early
    assert len(tree.xpath("//script")) == 3
    assert "alert(2)" in json.loads(tree.get_element_by_id("graph-dot").text)


def test_stop_sentence_for_other_stops(crawl):
    doc = json.loads(json.dumps(crawl[3]))
    doc["crawl"].update(stop_reason="closespider_timeout", stable=False, stable_at_pages=None)
    lead = LH.document_fromstring(render_report(doc)).get_element_by_id("lead").text_content()
    assert lead.endswith("it stopped because it reached its time limit.")
    doc["crawl"].update(stop_reason="finished", stable=True, stable_at_pages=120)
    lead = LH.document_fromstring(render_report(doc)).get_element_by_id("lead").text_content()
    assert lead.endswith("no link was left to follow; the model was already stable at 120 pages.")
    one = {"crawl": {"stop_reason": "finished", "pages_modelled": 1}, "classes": [{"id": 0, "size": 1}]}
    assert lead_sentence(one) == "1 page type from 1 page; it stopped because no link was left to follow."


def test_cli_report_writes_the_page(crawl, tmp_path, capsys):
    model = tmp_path / "site.model.json"
    write_model(crawl[3], model)
    assert main(["report", str(model)]) == 0
    out = tmp_path / "site.model.html"
    assert report_path_for(str(model)) == str(out) and out.exists()
    assert len(LH.parse(str(out)).xpath("//tr[@data-class]")) == len(crawl[3]["classes"])
    assert "page types from" in capsys.readouterr().err
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


def test_each_class_row_shows_its_data_fields_and_records(crawl):
    doc = json.loads(json.dumps(crawl[3]))
    book, other = doc["classes"][0], doc["classes"][1]
    book["fields"] = [{"name": f"f{i}", "xpath": f'//h1[@class="t{i}"]', "support": 1.0, "informativeness": 1.0,
                       "many": False, "examples": [f"<Title {i}>"]} for i in range(8)]
    book["records"] = {"xpath": '//ul[@class="hits"]/li', "coverage": 0.8, "pages": 3, "per_page_min": 2,
                       "per_page_max": 9, "fields": [{"name": "price", "xpath": "./span"}]}
    other["fields"], other["records"], other["fields_note"] = [], None, "one page: informativeness needs two pages"
    other["field_pages"] = 1
    tree = LH.document_fromstring(render_report(doc))
    row = tree.get_element_by_id(f"class-{book['id']}")
    assert row.xpath(".//li[@class='data']//summary")[0].text == "8 data fields, list records"
    items = [li.text_content() for li in row.xpath(".//ul[@class='fields']/li")]
    assert items[0] == 'f0 //h1[@class="t0"] e.g. <Title 0>' and "and 2 more" in items
    assert items[-1] == 'records //ul[@class="hits"]/li (2–9 a page; price)'
    note = tree.get_element_by_id(f"class-{other['id']}").xpath(".//li[@class='fields-note']")[0]
    assert note.text_content() == "one page: informativeness needs two pages"
    # a model made without kept pages does not repeat its note on every class
    assert not tree.xpath("//li[@class='fields-note']")[1:]
