"""Focused harvest end to end: ``scrapy crawl harvest`` / ``structcrawl harvest`` against a real demo server.

The model is learnt first by a structure crawl of the same server (``structcrawl crawl``); the demo's
truth says which pages are books, authors …  The server records every request, so "fetched" is
counted on its side.  Resume: the harvest is SIGKILLed twice after a random number of pages, on
SQLite and on PostgreSQL, and run again with the same command; the items of all runs (appended to
one JSON-lines feed with ``-o``) hold every target once.
"""

from __future__ import annotations

import csv
import http.server
import json
import random
import re
import signal
import subprocess
import threading
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pytest
import sqlalchemy as sa
from scrapy.settings import Settings

import helpers
from dbfixtures import db_url  # noqa: F401 - fixture
from helpers import PROJECT, PYTHON, QUIET, SCRAPY, Demo, assert_one_error
from structcrawl.analysis.harvestplan import Entry
from structcrawl.core.traps import TrapDetector
from structcrawl.crawling.harvest import mend_torn_feeds, written_urls
from structcrawl.demo.site import DemoSite
from structcrawl.settings import STRUCTCRAWL_HARVEST_EXPLORE, STRUCTCRAWL_HARVEST_EXPLORE_MIN

DEADLINE = 180.0


@pytest.fixture(scope="module")
def demo():
    d = Demo(DemoSite(pages=900, seed=3))
    yield d
    d.close()


@pytest.fixture(scope="module")
def model(demo, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("harvest") / "demo.model.json"
    res = helpers.structcrawl("crawl", demo.url, "-o", str(out), *QUIET, timeout=DEADLINE)
    assert res.returncode == 0, res.stderr[-3000:]
    return out


def truth(demo: Demo, name: str) -> set[str]:
    return {demo.base + path for path, cls in demo.site.truth() if cls == name}


def class_of(model: Path, path_prefix: str) -> int:
    """The model's class whose samples are the demo's ``path_prefix`` pages."""
    doc = json.loads(model.read_text(encoding="utf-8"))
    votes = Counter(c["id"] for c in doc["classes"] for u in c["samples"] if re.search(rf"//[^/]+{path_prefix}", u))
    return votes.most_common(1)[0][0]


def stats_of(stderr: str) -> dict[str, int]:
    """The ``harvest/…`` integer stats of Scrapy's closing dump."""
    return {k: int(v) for k, v in re.findall(r"'(harvest/[\w/]+)': (\d+)", stderr)}


def harvest_cmd(model: Path, *extra: str) -> list[str]:
    return [SCRAPY, "crawl", "harvest", "-a", f"model={model}", *QUIET, *extra]


def test_every_book_and_little_else(demo, model, tmp_path):
    books = class_of(model, "/book/")
    out = tmp_path / "books.jsonl"
    mark = demo.log.mark()
    res = helpers.run(harvest_cmd(model, "-a", f"classes={books}", "-O", str(out)), timeout=DEADLINE)
    assert res.returncode == 0, res.stderr[-3000:]
    items = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    got = {i["url"] for i in items}
    assert truth(demo, "book") <= got  # recall 1.0
    assert len(got) == len(items)  # each page once
    assert {i["class"] for i in items} == {books}
    assert set(items[0]) == {"url", "class", "cost", "status", "fetched_at", "referer", "via", "fields", "records"}
    stats = stats_of(res.stderr)
    # pages of classes the plan avoids (no way from them to a book) only as exploration, within its budget
    budget = STRUCTCRAWL_HARVEST_EXPLORE_MIN + STRUCTCRAWL_HARVEST_EXPLORE * stats["harvest/fetched"]
    assert stats.get("harvest/pages/other", 0) + stats.get("harvest/pages/none", 0) <= stats["harvest/explored"]
    assert stats["harvest/explored"] <= budget
    # a book's reviews lead nowhere nearer the books: none fetched beyond the exploration budget
    fetched = demo.log.gets(mark)
    reviews = [p for p in fetched if p.startswith("/review/")]
    assert len(reviews) <= budget, reviews[:5]
    assert len(fetched) == len(set(fetched))  # nothing fetched twice
    # fewer requests than the site has pages, redirects included (books are half of it)
    assert len(fetched) < len(demo.site)
    assert "Harvest closed (finished)" in res.stderr


def test_two_classes_to_csv_with_bodies(demo, model, tmp_path):
    """``structcrawl harvest`` with two classes: Scrapy's CSV feed export, bodies on request."""
    authors, publishers = class_of(model, "/author/"), class_of(model, "/publisher/")
    out = tmp_path / "people.csv"
    res = helpers.structcrawl("harvest", str(model), "--classes", f"{authors},{publishers}", "-O", str(out),
                              "-s", "STRUCTCRAWL_HARVEST_BODY=true", *QUIET, "-s", "STRUCTCRAWL_LOGSTATS_INTERVAL=0.2",
                              timeout=DEADLINE)
    assert res.returncode == 0, res.stderr[-3000:]
    assert res.stdout.startswith("finished: ")
    # the progress line while it runs, the summary at the end
    assert re.search(r"Harvest: \d+ targets harvested of ~\d+ estimated, \d+ pages fetched \(\d+ not targets, "
                     r"\d+ explored\), \d+ read from the structure crawl's store, \d+ URLs waiting, \d+ pages/s, "
                     r"ETA ", res.stderr), res.stderr[-3000:]
    assert re.search(r"Harvest closed \(finished\): \d+ targets of classes \d+,\d+ harvested", res.stderr)
    with out.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert set(rows[0]) == {"url", "class", "cost", "status", "fetched_at", "referer", "via", "fields", "records",
                            "body"}
    got = {r["url"] for r in rows}
    # Recall 1.0 is asserted on the books above.  A publisher is linked only from its books (one link each)
    # and the harvest stops fetching books once a run of them showed nothing new, so a publisher of 12
    # books in 450 can be missed in some response orders: issue 14's recall target, 0.99, is the bound.
    wanted = truth(demo, "author") | truth(demo, "publisher")
    assert len(wanted - got) <= 0.01 * len(wanted), sorted(wanted - got)
    assert all(r["body"].lstrip().lower().startswith("<!doctype html") for r in rows)
    # nested values are JSON cells (structcrawl's CSV exporter), not Python reprs
    for r in rows:
        fields = json.loads(r["fields"])
        assert fields and all(isinstance(k, str) for k in fields), r["fields"][:200]
        assert r["records"] == "" or isinstance(json.loads(r["records"]), list)
    assert any(r["records"] and json.loads(r["records"])[0] for r in rows)  # publishers are lists of books


def test_like_targets_the_class_of_an_example(demo, model, tmp_path):
    out = tmp_path / "same.jsonl"
    example = sorted(truth(demo, "publisher"))[0]
    res = helpers.run(harvest_cmd(model, "-a", f"like={example}", "-O", str(out)), timeout=DEADLINE)
    assert res.returncode == 0, res.stderr[-3000:]
    got = {json.loads(line)["url"] for line in out.read_text(encoding="utf-8").splitlines()}
    assert truth(demo, "publisher") <= got


class _OddPage(http.server.BaseHTTPRequestHandler):
    """One page built like no page of the demo: hundreds of links, each under a path of its own."""

    def do_GET(self):  # noqa: N802 - http.server's name
        body = "<html><body>" + "".join(f'<div id="s{i}"><a href="/z{i}">z</a></div>' for i in range(300))
        data = (body + "</body></html>").encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def test_bad_input_is_one_line_and_status_2(model, tmp_path):
    res = helpers.structcrawl("harvest", str(model), "--classes", "999")
    assert_one_error(res, "unknown class id 999")
    res = helpers.structcrawl("harvest", str(tmp_path / "missing.json"), "--classes", "1")
    assert_one_error(res, "cannot read model")
    broken = tmp_path / "broken.json"
    broken.write_text(model.read_text(encoding="utf-8")[:200], encoding="utf-8")
    res = helpers.structcrawl("harvest", str(broken), "--classes", "1")
    assert_one_error(res, "not valid JSON")
    res = helpers.structcrawl("harvest", str(model), "--classes", "x")
    assert_one_error(res, "classes must be class ids")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _OddPage)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        res = helpers.structcrawl("harvest", str(model), "--like", f"http://127.0.0.1:{server.server_port}/odd")
    finally:
        server.shutdown()
        server.server_close()
    assert_one_error(res, "fits no class of the model")
    # the same check in `scrapy crawl`: one ERROR line, status 2, no traceback
    res = helpers.run(harvest_cmd(model, "-a", "classes=999"))
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert [line for line in res.stderr.splitlines() if "ERROR" in line] == [
        line for line in res.stderr.splitlines() if "harvest spider: unknown class id 999" in line]


# ---------------------------------------------------------------------------
# kill -9 and resume
# ---------------------------------------------------------------------------


def test_sigkill_and_resume_emit_every_target_once(db_url, demo, tmp_path):  # noqa: F811
    # the model's structure crawl in the same store: the harvest reads its pages, a resume replays those too
    model = tmp_path / "demo.model.json"
    res = helpers.structcrawl("crawl", demo.url, "--db", db_url, "-o", str(model), *QUIET, timeout=DEADLINE)
    assert res.returncode == 0, res.stderr[-3000:]
    books = class_of(model, "/book/")
    out = tmp_path / "books.jsonl"
    cmd = [PYTHON, "-m", "structcrawl", "harvest", str(model), "--classes", str(books), "-o", str(out),
           "--db", db_url, "--job", "books", *QUIET]
    rng = random.Random(hash(db_url) & 0xFFFF)
    kills = 0
    for trial in range(2):
        mark = demo.log.mark()
        err = tmp_path / f"run{trial}.err"
        proc = subprocess.Popen(cmd, cwd=PROJECT, stdout=subprocess.DEVNULL, stderr=open(err, "w"))
        target = rng.randint(50, 250)
        _wait_for(lambda: len(demo.log.gets(mark)) >= target, proc)  # noqa: B023
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        kills += 1
    # what a kill inside a write leaves (Linux stops a write between pages): an item cut part-way
    with out.open("ab") as fh:
        fh.write(b'{"url": "' + demo.url.encode() + b'book/1.html", "class": ')
    res = helpers.run(cmd, timeout=DEADLINE)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "Resumed harvest job 'books'" in res.stderr
    assert f"Cut the torn last item a kill left in {out}" in res.stderr
    assert stats_of(res.stderr)["harvest/reused"] > 0  # the structure crawl's pages, read again by the resumed run
    items = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines() if line.strip()]
    urls = Counter(i["url"] for i in items)
    assert [u for u, n in urls.items() if n > 1] == []  # none emitted twice
    assert truth(demo, "book") <= set(urls)  # none lost
    # a finished job is not harvested again by mistake, nor exported as a model
    res = helpers.run(cmd, timeout=DEADLINE)
    assert_one_error(res, "is finished")
    res = helpers.structcrawl("export", "--db", db_url, "--job", "books", "-o", str(tmp_path / "m.json"))
    assert_one_error(res, "is a harvest, not a structure crawl")
    # beside a harvest, the structure crawl is the one to export or cluster by default
    res = helpers.structcrawl("export", "--db", db_url, "-o", str(tmp_path / "m.json"))
    assert res.returncode == 0, res.stderr[-3000:]
    # `structcrawl jobs` gives a harvest its own figures: pages fetched and items, no classes or batches
    res = helpers.structcrawl("jobs", "--db", db_url, "--json")
    assert res.returncode == 0, res.stderr[-3000:]
    record = {r["job"]: r for r in map(json.loads, res.stdout.splitlines())}["books"]
    assert record["strategy"] == "harvest" and record["items"] == len(urls)
    assert record["pages"] >= len(urls) + 1  # the books and the hub pages that lead to them
    res = helpers.structcrawl("jobs", "--db", db_url)
    header, *rows = res.stdout.splitlines()
    row = next(r for r in rows if r.split()[0] == "books")
    cells = {name: row[header.index(name):].split()[0] for name in ("KIND", "PAGES", "CLASSES", "ITEMS")}
    assert cells == {"KIND": "harvest", "PAGES": str(record["pages"]), "CLASSES": "-", "ITEMS": str(len(urls))}


def test_a_resumed_harvest_continues_a_csv_feed_under_one_header(demo, model, tmp_path):
    """Stopped by its page budget and run again, a harvest appends its rows to the CSV it wrote:
    every target once, and the header only on the first line (Scrapy writes one per run)."""
    books = class_of(model, "/book/")
    out = tmp_path / "books.csv"
    cmd = ["harvest", str(model), "--classes", str(books), "-o", str(out), "--db", f"sqlite:///{tmp_path / 'h.db'}",
           *QUIET]
    res = helpers.structcrawl(*cmd, "--max-pages", "60", timeout=DEADLINE)
    assert res.returncode == 0, res.stderr[-3000:]
    first = out.read_text(encoding="utf-8").count("\n")
    res = helpers.structcrawl(*cmd, timeout=DEADLINE)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "Resumed harvest job" in res.stderr
    with out.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert 1 < first < len(rows)  # both runs wrote rows
    urls = Counter(r["url"] for r in rows)
    assert "url" not in urls and [u for u, n in urls.items() if n > 1] == []
    assert truth(demo, "book") <= set(urls)


def test_the_structure_crawls_pages_are_read_from_the_store(demo, tmp_path):
    """A harvest with the store of its model's structure crawl does not fetch that crawl's pages again
    (but for the targets: an item is a fresh fetch), and finds every target as a harvest without it does."""
    db = f"sqlite:///{tmp_path / 'site.db'}"
    model = tmp_path / "demo.model.json"
    res = helpers.structcrawl("crawl", demo.url, "--db", db, "-o", str(model), *QUIET, timeout=DEADLINE)
    assert res.returncode == 0, res.stderr[-3000:]
    engine = sa.create_engine(db)
    with engine.connect() as conn:  # the pages the crawl stored (those of the batches in flight at its stop are not)
        stored = {url[len(demo.base):] for (url,) in conn.execute(sa.text(
            "SELECT u.url FROM sc_pages p JOIN sc_urls u ON u.job_id = p.job_id "
            "AND u.id IN (p.url_id, p.requested_id)"))}
    engine.dispose()
    authors = class_of(model, "/author/")
    runs = {}
    for reuse in ("true", "false"):
        out = tmp_path / f"authors-{reuse}.jsonl"
        mark = demo.log.mark()
        res = helpers.structcrawl("harvest", str(model), "--classes", str(authors), "-O", str(out), "--db", db,
                                  "--job", f"reuse-{reuse}", "-s", f"STRUCTCRAWL_HARVEST_REUSE={reuse}", *QUIET,
                                  timeout=DEADLINE)
        assert res.returncode == 0, res.stderr[-3000:]
        items = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
        assert truth(demo, "author") <= {i["url"] for i in items}  # recall 1.0 either way
        runs[reuse] = (demo.log.gets(mark), stats_of(res.stderr))
    (gets, stats), (gets_without, _stats) = runs["true"], runs["false"]
    author_paths = {u[len(demo.base):] for u in truth(demo, "author")}
    assert set(gets) & stored <= author_paths  # a page it read is not fetched again
    assert stats["harvest/pages_reused"] >= 10  # the home page and the listings that lead to the authors
    assert len(gets) + stats["harvest/pages_reused"] >= len(gets_without) * 0.9  # the same plan, mostly
    assert len(gets) < len(gets_without)
    # `structcrawl jobs` counts the pages fetched (failures aside), not those read from the store
    res = helpers.structcrawl("jobs", "--db", db, "--json")
    assert res.returncode == 0, res.stderr[-3000:]
    records = {r["job"]: r for r in map(json.loads, res.stdout.splitlines())}
    assert records["reuse-true"]["pages"] == stats["harvest/fetched"] - stats["harvest/failed"]


def _wait_for(cond, proc: subprocess.Popen) -> None:
    import time

    end = time.monotonic() + DEADLINE
    while not cond():
        if proc.poll() is not None:
            pytest.fail(f"the harvest ended (rc {proc.returncode}) before it was killed")
        if time.monotonic() > end:
            pytest.fail("timed out waiting for the harvest to fetch pages")
        time.sleep(0.005)  # a polling interval, not a wait for timing


def test_an_item_written_but_not_marked_is_not_emitted_again(tmp_path):
    """The kill came after Scrapy wrote the item and before the store marked it: the feed decides."""
    from structcrawl.store.harvest import HarvestStore

    db = f"sqlite:///{tmp_path / 'h.db'}"
    params = {"model": "m", "targets": [6]}
    first = HarvestStore(db, "job", "http://h.test/", params)
    first.page("http://h.test/", 0, None, None, False, "hub", 200,
               [("http://h.test/b/1", (0, "ul/a")), ("http://h.test/b/2", (0, "ul/a"))], requested="http://h.test/")
    for n in (1, 2):
        first.page(f"http://h.test/b/{n}", 6, (0, "ul/a"), "http://h.test/", False, "target", 200, [],
                   requested=f"http://h.test/b/{n}")
    first.engine.dispose()  # killed: neither item marked emitted
    resumed = HarvestStore(db, "job", "http://h.test/", params)
    assert resumed.resumed
    pages = list(resumed.restore(lambda urls: {u for u in urls if u.endswith("/1")}))  # only b/1 is in the feed
    assert [p.url for p in pages] == ["http://h.test/", "http://h.test/b/1"]
    assert pages[1].emitted and pages[0].collections == {"ul/a": ["http://h.test/b/1", "http://h.test/b/2"]}
    resumed.close("shutdown", {})
    # a database holding a harvest only has no structure crawl to export or cluster by default
    res = helpers.structcrawl("export", "--db", db, "-o", str(tmp_path / "m.json"))
    assert_one_error(res, "holds no structure crawls")


def test_a_torn_last_record_is_cut_and_whole_ones_kept(tmp_path):
    """A kill inside a write leaves a record cut part-way; the resumed harvest appends after whole records only."""
    jsonl, table, whole = tmp_path / "a.jsonl", tmp_path / "a.csv", tmp_path / "whole.jsonl"
    jsonl.write_bytes(b'{"url": "u1"}\n{"url": "u2"}\n{"url": "u3", "cl')
    # a body cell holds newlines: a cut just after one of them ends a line but not the row
    table.write_bytes(b'url,body\r\nu1,"<p>\n</p>"\r\nu2,"<html>\n<body>\n')
    whole.write_bytes(b'{"url": "u1"}\n')
    # `scrapy crawl -o a.jsonl` names the JSON-lines format "jsonl"
    feeds = {str(jsonl): {"format": "jsonl"}, str(table): {"format": "csv"}, str(whole): {"format": "jsonlines"},
             str(tmp_path / "absent.jsonl"): {"format": "jsonlines"}}
    settings = Settings({"FEEDS": feeds})
    assert sorted(mend_torn_feeds(settings)) == sorted([str(jsonl), str(table)])
    assert jsonl.read_bytes() == b'{"url": "u1"}\n{"url": "u2"}\n'
    assert table.read_bytes() == b'url,body\r\nu1,"<p>\n</p>"\r\n'
    assert whole.read_bytes() == b'{"url": "u1"}\n'
    assert written_urls(settings, ["u1", "u2", "u3"]) == {"u1", "u2"}
    assert mend_torn_feeds(settings) == []  # mended files are left alone


class _DryPlan:
    """A plan run dry whose re-check opens one round per call, two in all: the first round's one probe is a
    page the structure crawl's store holds, the second's a page to fetch."""

    def __init__(self) -> None:
        key = (1, "ul/li/a")
        self.rounds = [[Entry("http://h.test/stored", key, "http://h.test/", True)],
                       [Entry("http://h.test/fetched", key, "http://h.test/", True)]]
        self.out: list[Entry] = []
        self.read: list[str] = []

    def idle(self) -> bool:
        return False

    def recheck(self) -> int:
        if not self.rounds:
            return 0
        self.out = self.rounds.pop(0)
        return 1

    def pop(self, hubs: bool = True) -> Entry | None:
        return self.out.pop(0) if self.out else None


def test_a_recheck_round_read_from_the_store_is_followed_by_the_next_round():
    """A re-check round whose probes are all pages read from the structure crawl's store leaves no request in
    flight, so no idle signal comes after it: the next round goes in the same idle call.  (One round a call
    ended qtbase's class-member harvest over HTTP after 14 module attribution pages read from the store,
    before the round that leads to ``qdomdocument-obsolete.html``, the only way to the 13 ``QXml*`` classes:
    recall 0.984, 1,655 requests; driven in that run's own order, the plan so goes on to 1.000.)"""
    from scrapy.exceptions import DontCloseSpider

    from structcrawl.spiders.harvest import HarvestSpider

    plan = _DryPlan()
    crawled: list[str] = []
    spider = HarvestSpider()
    spider.harvest = plan
    spider.shared = spider.plan = None
    spider.config = SimpleNamespace(max_inflight=32, max_pages=0)
    spider.inflight, spider.elsewhere, spider.requested, spider.hub_inflight = {}, set(), 0, 8
    spider.max_url_length, spider.traps, spider.ignored_extensions = 2083, TrapDetector(0), ()
    spider.fetched_before = object()
    spider._read_stored = lambda entry: entry.url.endswith("/stored") and not plan.read.append(entry.url)
    spider.crawler = SimpleNamespace(engine=SimpleNamespace(crawl=lambda request: crawled.append(request.url)))
    with pytest.raises(DontCloseSpider):
        spider._on_idle(spider)
    assert plan.read == ["http://h.test/stored"] and crawled == ["http://h.test/fetched"]
