"""What a Scrapy user brings to the structure spider: JOBDIR, -O, -a, another project, LinkExtractor.

Real crawls of the demo site on 127.0.0.1 in subprocesses (``scrapy crawl``
in the project directory or in a fresh ``scrapy startproject``, and
``structcrawl crawl``); the demo server records every request it answers.
"""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest

from helpers import PROJECT, PYTHON, QUIET, SCRAPY, Demo, run
from structcrawl.demo.site import DemoSite


@pytest.fixture(scope="module")
def demo():
    d = Demo(DemoSite(pages=300, seed=5))
    yield d
    d.close()


def scrapy_crawl(demo: Demo, cwd: Path, *extra: str, spider: str = "structure") -> tuple:
    mark = demo.log.mark()
    res = run([SCRAPY, "crawl", spider, "-a", f"start_url={demo.url}", *QUIET, *extra], cwd=cwd)
    return res, demo.log.gets(mark)


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if " ERROR: " in line or "Traceback" in line]


@pytest.fixture(scope="module")
def crawled(demo, tmp_path_factory):
    """One ``scrapy crawl structure … -O pages.jsonl`` of the whole demo site: (model, items)."""
    tmp = tmp_path_factory.mktemp("crawled")
    res, _gets = scrapy_crawl(demo, PROJECT, "-a", "stop=exhaust", "-a", "members=true",
                              "-s", f"STRUCTCRAWL_MODEL_OUT={tmp / 'model.json'}", "-O", str(tmp / "pages.jsonl"))
    assert res.returncode == 0, res.stderr[-3000:]
    model = json.loads((tmp / "model.json").read_text(encoding="utf-8"))
    items = [json.loads(line) for line in (tmp / "pages.jsonl").read_text(encoding="utf-8").splitlines()]
    return model, items


# ---------------------------------------------------------------------------
# -s JOBDIR, and a model file never silently replaced by a smaller one
# ---------------------------------------------------------------------------


def test_jobdir_is_refused_in_one_line(demo, tmp_path):
    out = tmp_path / "model.json"
    res, gets = scrapy_crawl(demo, PROJECT, "-s", f"JOBDIR={tmp_path / 'job'}", "-s", f"STRUCTCRAWL_MODEL_OUT={out}")
    assert res.returncode == 2, res.stderr[-3000:]
    errors = error_lines(res.stderr)
    assert len(errors) == 1, res.stderr[-3000:]
    assert "JOBDIR is not supported" in errors[0] and "STRUCTCRAWL_DB" in errors[0] and "--db" in errors[0]
    assert gets == [] and not out.exists()

    res = run([PYTHON, "-m", "structcrawl", "crawl", demo.url, "-s", f"JOBDIR={tmp_path / 'job'}"], cwd=tmp_path)
    assert res.returncode == 2
    assert res.stderr.startswith("structcrawl: error: JOBDIR is not supported")
    assert len(res.stderr.strip().splitlines()) == 1


def test_a_model_with_fewer_pages_does_not_silently_replace_one(demo, tmp_path):
    out = tmp_path / "model.json"
    res = run([PYTHON, "-m", "structcrawl", "crawl", demo.url, "-o", str(out), "--max-pages", "40", *QUIET],
              cwd=tmp_path)
    assert res.returncode == 0, res.stderr[-3000:]
    first = out.read_text(encoding="utf-8")
    before = json.loads(first)["crawl"]["pages_modelled"]
    res = run([PYTHON, "-m", "structcrawl", "crawl", demo.url, "-o", str(out), "--max-pages", "10",
               "--batch", "5", *QUIET], cwd=tmp_path)
    assert res.returncode == 0, res.stderr[-3000:]
    after = json.loads(out.read_text(encoding="utf-8"))["crawl"]["pages_modelled"]
    assert after < before
    warning = [line for line in res.stderr.splitlines() if "WARNING" in line and str(out) in line]
    assert len(warning) == 1 and f"{before} pages" in warning[0] and f"has {after}" in warning[0], res.stderr[-2000:]
    assert (tmp_path / "model.json.prev").read_text(encoding="utf-8") == first


# ---------------------------------------------------------------------------
# -O pages.jsonl: one item per modelled page
# ---------------------------------------------------------------------------


def test_feed_export_has_one_item_per_modelled_page(demo, crawled):
    model, items = crawled
    members = {u: c["id"] for c in model["classes"] for u in c["members"]}
    assert len(items) == model["crawl"]["pages_modelled"] == len(members)
    assert {i["url"] for i in items} == set(members)
    assert set(items[0]) == {"url", "class", "status", "cost", "link_collection"}
    # the class a page joined, followed through the refinement's merges, is its class in the model
    folded = {m["merged"]: m["kept"] for m in model["merges"]}
    for item in items:
        cid = item["class"]
        while cid in folded:
            cid = folded[cid]
        assert cid == members[item["url"]], item
        assert item["status"] == 200 and item["cost"] > 0
    assert [i["link_collection"] for i in items if i["url"] == demo.url] == [None]
    for item in items:
        if item["url"] != demo.url:
            collection = item["link_collection"]
            assert isinstance(collection["source"], int) and collection["path"].startswith("html/"), item


# ---------------------------------------------------------------------------
# -a: unknown arguments refused
# ---------------------------------------------------------------------------


def test_unknown_spider_argument_is_refused_in_one_line(demo, tmp_path):
    out = tmp_path / "model.json"
    res, gets = scrapy_crawl(demo, PROJECT, "-a", "stratgy=sparsest", "-s", f"STRUCTCRAWL_MODEL_OUT={out}")
    assert res.returncode == 2, res.stderr[-3000:]
    errors = error_lines(res.stderr)
    assert len(errors) == 1, res.stderr[-3000:]
    assert "unknown spider argument 'stratgy' (did you mean strategy?)" in errors[0]
    assert "known: start_url, strategy, max_pages, batch, stop, job, members, fresh" in errors[0]
    assert gets == [] and not out.exists()


# ---------------------------------------------------------------------------
# Another Scrapy project; progress every 10 s by default; the class table
# ---------------------------------------------------------------------------


def test_progress_in_a_project_that_knows_nothing_of_structcrawl(demo, tmp_path):
    res = run([SCRAPY, "startproject", "shop"], cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    project = tmp_path / "shop"
    (project / "shop" / "spiders" / "shape.py").write_text(textwrap.dedent("""
        from structcrawl.spiders.structure import StructureSpider


        class ShapeSpider(StructureSpider):
            name = "shape"
    """), encoding="utf-8")
    assert "structcrawl" not in (project / "shop" / "settings.py").read_text(encoding="utf-8")
    out = tmp_path / "shape.json"
    mark = demo.log.mark()
    # startproject's settings are polite (one request per second): not what a test of 300 pages needs
    res = run([SCRAPY, "crawl", "shape", "-a", f"start_url={demo.url}", "-s", "STRUCTCRAWL_LOGSTATS_INTERVAL=0.2",
               "-s", "DOWNLOAD_DELAY=0", "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=8",
               "-s", f"STRUCTCRAWL_MODEL_OUT={out}"], cwd=project)
    assert res.returncode == 0, res.stderr[-3000:]
    assert demo.log.gets(mark)
    assert "structcrawl.crawling.extensions.StructureLogStats" in res.stderr  # in Scrapy's enabled extensions
    assert re.search(r"Structure: \d+ pages fetched \(at \d+ pages/min\), \d+ modelled in \d+ classes", res.stderr)
    assert json.loads(out.read_text(encoding="utf-8"))["crawl"]["stop_reason"] == "model_stable"

    # without -s: the project's settings (none of ours) and the spider's defaults, a progress line every 10 s
    res = run([SCRAPY, "settings", "--get", "STRUCTCRAWL_LOGSTATS_INTERVAL"], cwd=project)
    assert res.stdout.strip() == "None"  # the project's own settings do not say
    script = textwrap.dedent("""
        from scrapy.utils.conf import build_component_list
        from scrapy.utils.misc import load_object
        from scrapy.utils.project import get_project_settings
        from shop.spiders.shape import ShapeSpider
        from structcrawl.crawling.extensions import StructureLogStats
        settings = get_project_settings()
        ShapeSpider.update_settings(settings)
        enabled = [load_object(x) for x in build_component_list(settings.getwithbase("EXTENSIONS"))]
        print(settings.getfloat("STRUCTCRAWL_LOGSTATS_INTERVAL"), StructureLogStats in enabled)
    """)
    res = run([PYTHON, "-c", script], cwd=project)
    assert res.returncode == 0, res.stderr[-3000:]
    assert res.stdout.split() == ["10.0", "True"]

    # docs/usage.md's way in: the package's spiders added to the project's spider loader
    settings = project / "shop" / "settings.py"
    settings.write_text(settings.read_text(encoding="utf-8")
                        + '\nSPIDER_MODULES = ["shop.spiders", "structcrawl.spiders"]\n', encoding="utf-8")
    res = run([SCRAPY, "list"], cwd=project)
    assert res.returncode == 0, res.stderr[-3000:]
    assert res.stdout.split() == ["harvest", "shape", "structure"]


def test_structcrawl_crawl_prints_the_class_table(demo, tmp_path):
    res = run([PYTHON, "-m", "structcrawl", "crawl", demo.url, "-o", "m.json", *QUIET], cwd=tmp_path)
    assert res.returncode == 0, res.stderr[-3000:]
    model = json.loads((tmp_path / "m.json").read_text(encoding="utf-8"))
    lines = res.stdout.splitlines()
    assert lines[0].startswith("model_stable: ")
    header = lines.index(next(line for line in lines if line.split()[:3] == ["class", "size", "sample"]))
    rows = lines[header + 2:]
    assert [int(r.split()[0]) for r in rows] == [c["id"] for c in model["classes"]]
    assert [int(r.split()[1]) for r in rows] == [c["size"] for c in model["classes"]]


# ---------------------------------------------------------------------------
# URL patterns that LinkExtractor and CrawlSpider rules accept
# ---------------------------------------------------------------------------


def test_link_pattern_works_in_link_extractor(demo, crawled):
    from scrapy.http import HtmlResponse
    from scrapy.linkextractors import LinkExtractor

    model, _items = crawled
    members = {u: c["id"] for c in model["classes"] for u in c["members"]}
    extracted = 0
    for page in sorted(members)[:30]:
        status, headers, body = demo.site.render(demo.path(page))
        response = HtmlResponse(page, status=status, body=body, headers=headers)
        every_link = {link.url for link in LinkExtractor().extract_links(response)}
        for cls in model["classes"]:
            pattern = cls["link_pattern"]
            assert pattern.startswith("^https?://") and pattern.endswith("$")
            assert not LinkExtractor(allow=[cls["url_pattern"]]).extract_links(response)  # site-relative: none
            picked = {link.url for link in LinkExtractor(allow=[pattern]).extract_links(response)}
            # every member of the class linked from the page is picked
            assert {u for u in every_link if members.get(u) == cls["id"]} <= picked, cls["id"]
            extracted += len(picked)
    assert extracted
