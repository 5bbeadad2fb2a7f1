"""End to end over HTTP: a structure crawl keeps its samples' titles (spider and store alike), the report
names classes from them and lists them, and the report of a harvest shows its classes and figures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lxml import html as LH

import helpers
from helpers import QUIET, Demo
from structcrawl.demo.site import DemoSite
from structcrawl.report.names import class_names

DEADLINE = 180.0


@pytest.fixture(scope="module")
def demo():
    d = Demo(DemoSite(pages=600, seed=5))
    yield d
    d.close()


@pytest.fixture(scope="module")
def crawled(demo, tmp_path_factory) -> tuple[Path, str]:
    """The model the spider wrote, and its database."""
    folder = tmp_path_factory.mktemp("report-harvest")
    model, db = folder / "demo.model.json", f"sqlite:///{folder / 'demo.db'}"
    res = helpers.structcrawl("crawl", demo.url, "-o", str(model), "--db", db, "--job", "demo", *QUIET,
                              timeout=DEADLINE)
    assert res.returncode == 0, res.stderr[-3000:]
    return model, db


def test_samples_carry_their_titles_in_the_spider_and_the_store_export(demo, crawled, tmp_path):
    model, db = crawled
    doc = json.loads(model.read_text(encoding="utf-8"))
    for c in doc["classes"]:
        assert set(c["sample_titles"]) == set(c["samples"]), c["id"]  # every demo page has a <title>
        for url, title in c["sample_titles"].items():
            page = LH.fromstring(demo.site.render(demo.path(url))[2])
            assert title == " ".join(page.findtext(".//title").split())
    exported = tmp_path / "exported.json"
    res = helpers.structcrawl("export", "--db", db, "--job", "demo", "-o", str(exported), timeout=DEADLINE)
    assert res.returncode == 0, res.stderr[-3000:]
    assert exported.read_bytes() == model.read_bytes()  # the store keeps the titles: same bytes


def test_names_from_titles_and_samples_listed_with_them(demo, crawled, tmp_path):
    model, _db = crawled
    doc = json.loads(model.read_text(encoding="utf-8"))
    names = class_names(doc["classes"], doc["site"]["start_url"])
    by_path = {demo.path(c["samples"][0]).split("/")[1].split("?")[0]: names[c["id"]] for c in doc["classes"]}
    # every title ends with the shop's name: it names no class; the titles' own words do
    assert all("folio" not in n and "quill" not in n for n in names.values())
    assert by_path["review"] == "review" and by_path["search"] == "search" and by_path["book"] == "book"
    out = tmp_path / "report.html"
    res = helpers.structcrawl("report", str(model), "-o", str(out), timeout=DEADLINE)
    assert res.returncode == 0, res.stderr[-3000:]
    page = LH.fromstring(out.read_text(encoding="utf-8"))
    for c in doc["classes"]:
        row = page.get_element_by_id(f"class-{c['id']}")
        assert row.findtext(".//b[@class='class-name']") == names[c["id"]]
        links = row.xpath(".//ul[@class='samples']/li/a[@class='sample-title']")
        assert [(a.get("href"), a.text_content()) for a in links] == [(u, c["sample_titles"][u]) for u in c["samples"]]


def test_the_report_of_a_harvest(demo, crawled, tmp_path):
    model, _db = crawled
    doc = json.loads(model.read_text(encoding="utf-8"))
    books = next(c["id"] for c in doc["classes"] if "/book/" in c["samples"][0])
    items, summary, out = tmp_path / "books.jsonl", tmp_path / "harvest.json", tmp_path / "report.html"
    res = helpers.structcrawl("harvest", str(model), "--classes", str(books), "-O", str(items),
                              "-s", f"STRUCTCRAWL_HARVEST_SUMMARY={summary}", *QUIET, timeout=DEADLINE)
    assert res.returncode == 0, res.stderr[-3000:]
    harvested = len(items.read_text(encoding="utf-8").splitlines())
    figures = json.loads(summary.read_text(encoding="utf-8"))
    requests = figures["requested"]
    assert figures["targets"] == harvested <= requests
    res = helpers.structcrawl("report", str(model), "--harvest", str(summary), "-o", str(out), timeout=DEADLINE)
    assert res.returncode == 0, res.stderr[-3000:]
    learnt = doc["crawl"]["pages_requested"]
    assert f"{harvested:,} target pages with {requests:,} requests ({requests / harvested:.2f} requests per " \
        f"target page; {(requests + learnt) / harvested:.2f} with the structure crawl's {learnt:,} requests" \
        in res.stderr
    page = LH.fromstring(out.read_text(encoding="utf-8"))
    rows = {tr.xpath("string(td[1])"): [td.text_content() for td in tr.xpath("td")]
            for tr in page.xpath("//table[@id='harvest-table']/tbody/tr")}
    names = class_names(doc["classes"], doc["site"]["start_url"])
    target = rows[names[books]]
    assert target[1] == "target" and target[3] == f"{harvested:,}"
    assert int(target[4].replace(",", "")) >= harvested  # estimated: harvested plus what was left waiting
    assert any(r[1].startswith("hub") and int(r[2].replace(",", "")) > 0 for r in rows.values())
    # every page fetched is counted in one class's row
    assert sum(int(r[2].replace(",", "")) for r in rows.values()) == figures["fetched"] - figures["failed"]
    # a harvest summary the report cannot read is one line, status 2
    res = helpers.structcrawl("report", str(model), "--harvest", str(model), "-o", str(out), timeout=DEADLINE)
    helpers.assert_one_error(res, "is not a harvest summary")
