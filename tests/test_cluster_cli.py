"""`structcrawl cluster` end to end: a real crawl of the default demo site over HTTP into SQLite,
synthetic stores in SQLite and PostgreSQL, bad input.

The SQL side's inbound links (first link in crawl order) are checked against the same rule
computed in Python from the stored rows.
"""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from functools import partial
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import sqlalchemy as sa

import helpers
from dbfixtures import pg_url  # noqa: F401 - fixture
from helpers import PROJECT, assert_one_error, serving
from structcrawl.analysis.metrics import pairwise_precision_recall
from structcrawl.analysis.uxclust import relative_cutoff
from structcrawl.demo.site import DemoSite
from structcrawl.store import schema as S
from synthetic_store import fill, truth_of

structcrawl = partial(helpers.structcrawl, cwd=PROJECT)  # python -m structcrawl runs this checkout


@pytest.fixture(scope="module")
def demo_crawl(tmp_path_factory):
    """The default demo site crawled to the end (stop=exhaust) into a SQLite store, over real HTTP."""
    site = DemoSite()
    db = f"sqlite:///{tmp_path_factory.mktemp('crawl') / 'demo.db'}"
    with serving(site) as base:
        res = structcrawl("crawl", base + "/", "--db", db, "--job", "demo", "--stop", "exhaust", "-L", "WARNING",
                          "-o", str(tmp_path_factory.mktemp("model") / "demo.model.json"))
    assert res.returncode == 0, res.stderr[-3000:]
    return site, db


def demo_truth(site: DemoSite):
    def truth(url: str) -> str | None:
        parts = urlsplit(url)
        return site.classify(parts.path + (f"?{parts.query}" if parts.query else ""))

    return truth


def cluster_json(db: str, out: Path, *args: str) -> tuple[dict, subprocess.CompletedProcess]:
    res = structcrawl("cluster", "--db", db, "-o", str(out), *args)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(out.read_text(encoding="utf-8")), res


def score(doc: dict, truth) -> tuple[float, float]:
    assigned = {u: c["id"] for c in doc["classes"] for u in c["members"]}
    return pairwise_precision_recall(assigned, {u: truth(u) for u in assigned})


def stored_inbound(db: str, column: str) -> dict[str, str | None]:
    """URL -> the text of ``column`` of the first link to the page's requested URL in crawl order
    (source page id, then position) from a page fetched before it; a URL's first page row counts."""
    engine = sa.create_engine(db)
    table, text = {"xpath_id": (S.xpaths, "xpath"), "path_id": (S.paths, "path")}[column]
    with engine.connect() as conn:
        urls = dict(conn.execute(sa.select(S.urls.c.id, S.urls.c.url)).all())
        names = dict(conn.execute(sa.select(table.c.id, table.c[text])).all())
        first: dict[int, tuple[int, int]] = {}
        for page_id, target, key in conn.execute(
                sa.select(S.links.c.page_id, S.links.c.target_id, S.links.c[column])
                .order_by(S.links.c.page_id, S.links.c.pos)):
            first.setdefault(target, (page_id, key))
        out: dict[str, str | None] = {}
        for pid, url_id, requested in conn.execute(
                sa.select(S.pages.c.id, S.pages.c.url_id, S.pages.c.requested_id).order_by(S.pages.c.id)):
            url = urls[url_id]
            if url in out:
                continue
            link = first.get(requested)
            out[url] = names[link[1]] if link is not None and link[0] < pid else None
    engine.dispose()
    return out


def check_partition(doc: dict, inbound: dict[str, str | None]) -> None:
    """Every stored page is listed once; each member's inbound key is one of its cluster's."""
    listed = [u for c in doc["classes"] for u in c["members"]] + doc["unclustered"]["members"]
    assert sorted(listed) == sorted(inbound)
    assert doc["pages"] == len(inbound) == sum(c["size"] for c in doc["classes"]) + doc["unclustered"]["size"]
    kept = set()
    for c in doc["classes"]:
        assert c["size"] == len(c["members"]) and c["members"] == sorted(c["members"])
        assert set(c["samples"]) <= set(c["members"]) and c["fingerprint"] == sorted(c["fingerprint"])
        assert {inbound[u] for u in c["members"]} == set(c["inbound"])
        kept.update(c["inbound"])
    assert all(inbound[u] not in kept for u in doc["unclustered"]["members"])


@pytest.fixture(scope="module")
def stable_crawl(tmp_path_factory):
    """The default demo site crawled until its model is stable (~250 of its 2,952 pages) into SQLite."""
    site = DemoSite()
    db = f"sqlite:///{tmp_path_factory.mktemp('stable') / 'stable.db'}"
    with serving(site) as base:
        res = structcrawl("crawl", base + "/", "--db", db, "--job", "stable", "--stop", "stable", "-L", "WARNING",
                          "-o", str(tmp_path_factory.mktemp("model") / "stable.model.json"))
    assert res.returncode == 0, res.stderr[-3000:]
    return site, db


def test_demo_crawl_at_the_defaults_reaches_the_targets(demo_crawl, tmp_path):
    site, db = demo_crawl
    doc, res = cluster_json(db, tmp_path / "c.json", "--members")
    assert doc["parameters"] == {"group_by": "path", "cutoff": relative_cutoff(len(site)), "samples": 10,
                                 "occurrence": 0.3, "similarity": 0.8, "seed": 0}
    check_partition(doc, stored_inbound(db, "path_id"))
    precision, recall = score(doc, demo_truth(site))
    share = doc["unclustered"]["size"] / doc["pages"]
    print(f"defaults: P {precision:.3f} R {recall:.3f} "
          f"unclustered {doc['unclustered']['size']} ({share:.1%}), {len(doc['classes'])} clusters")
    assert precision >= 0.95 and recall >= 0.95
    assert share <= 0.05
    # look-alike templates stay apart: author and publisher profiles (Jaccard 0.88), news index and archive
    # (0.82) each have most of their pages in a cluster of their own
    truth = demo_truth(site)
    home = {}
    for kind in ("author", "publisher", "news_index", "archive"):
        per_cluster = Counter(c["id"] for c in doc["classes"] for u in c["members"] if truth(u) == kind)
        home[kind] = per_cluster.most_common(1)[0][0]
    assert home["author"] != home["publisher"] and home["news_index"] != home["archive"]
    assert doc["pages"] == len(site)  # the whole site was crawled and every page is accounted for
    # the summary table: one row per cluster and the unclustered bucket
    assert res.stdout.count("\n") == len(doc["classes"]) + 3 and "unclustered" in res.stdout


def test_small_stable_crawl_is_clustered_at_the_defaults(stable_crawl, tmp_path):
    """A few hundred pages: no group reaches the paper's fixed cut-off (0 clusters, everything
    unclustered), the default cut-off scales with the crawl and clusters it."""
    site, db = stable_crawl
    fixed, _res = cluster_json(db, tmp_path / "fixed.json", "--cutoff", "100")
    assert fixed["pages"] < 500 and fixed["classes"] == [] and fixed["unclustered"]["size"] == fixed["pages"]
    doc, _res = cluster_json(db, tmp_path / "c.json", "--members")
    check_partition(doc, stored_inbound(db, "path_id"))
    assert doc["parameters"]["cutoff"] == relative_cutoff(doc["pages"]) == 2
    precision, recall = score(doc, demo_truth(site))
    share = doc["unclustered"]["size"] / doc["pages"]
    print(f"stable crawl, defaults: {doc['pages']} pages, P {precision:.3f} R {recall:.3f} "
          f"unclustered {share:.1%}, {len(doc['classes'])} clusters")
    assert len(doc["classes"]) >= 5 and share <= 0.05
    # below the full crawl's 0.95: with a few pages per list, the pager's mixed group takes in a look-alike
    assert precision >= 0.9 and recall >= 0.95


def test_demo_crawl_by_exact_xpath_as_in_the_paper(demo_crawl, tmp_path):
    """UXClust's own grouping: the document is right (checked against the stored links); its quality on
    the demo site is below the targets (positions split lists, templates share XPaths): printed, see README."""
    site, db = demo_crawl
    doc, _res = cluster_json(db, tmp_path / "c.json", "--group-by", "xpath", "--similarity", "0.8", "--cutoff", "20",
                             "--samples", "5", "--members")
    assert doc["parameters"] == {"group_by": "xpath", "cutoff": 20, "samples": 5, "occurrence": 0.3,
                                 "similarity": 0.8, "seed": 0}
    assert doc["format"] == "structcrawl-clusters" and doc["format_version"] == 1 and doc["job"] == "demo"
    inbound = stored_inbound(db, "xpath_id")
    check_partition(doc, inbound)
    assert all(x.startswith("/html/") for c in doc["classes"] for x in c["inbound"])
    assert sum(1 for x in inbound.values() if x is None) == 1  # the start page: nothing links to it before it
    precision, recall = score(doc, demo_truth(site))
    print(f"as in the paper (exact XPath, similarity 0.8, 5 samples), cut-off 20: P {precision:.3f} R {recall:.3f} "
          f"unclustered {doc['unclustered']['size']} ({doc['unclustered']['size'] / doc['pages']:.1%}), "
          f"{len(doc['classes'])} clusters")


def test_sqlite_and_postgresql_give_the_same_clusters(pg_url, tmp_path):  # noqa: F811 - fixture
    lite = f"sqlite:///{tmp_path / 'synthetic.db'}"
    for db in (lite, pg_url):
        made = fill(db, 6000, base_pages=2000)
        assert made.pages == 6000 and made.copies == 4
    docs = []
    for name, db in (("lite", lite), ("pg", pg_url)):
        doc, _res = cluster_json(db, tmp_path / f"{name}.json", "--members", "-q")
        docs.append(doc)
    assert docs[0] == docs[1]
    doc = docs[0]
    assert doc["job"] == "synthetic" and doc["pages"] == 6000
    check_partition(doc, stored_inbound(lite, "path_id"))
    precision, recall = score(doc, truth_of(DemoSite(pages=2000)))
    assert precision >= 0.95 and recall >= 0.95


def test_synthetic_store_copies_the_base_crawl(tmp_path):
    db = f"sqlite:///{tmp_path / 's.db'}"
    made = fill(db, 500, base_pages=300)
    engine = sa.create_engine(db)
    with engine.connect() as conn:
        urls = dict(conn.execute(sa.select(S.urls.c.id, S.urls.c.url)).all())
        pages = conn.execute(sa.select(S.pages.c.id, S.pages.c.url_id).order_by(S.pages.c.id)).all()
        per_page = Counter(conn.execute(sa.select(S.links.c.page_id)).scalars())
    engine.dispose()
    assert made.pages == len(pages) == 500 and made.copies == -(-500 // made.base_pages)
    base = made.base_pages
    for pid, url_id in pages[base:]:  # copy k of page i: the same path on host sK, as many links
        original = urls[pages[pid % base][1]]
        assert urls[url_id] == original.replace("//s0.demo.test/", f"//s{pid // base}.demo.test/")
        assert per_page[pid] == per_page[pid % base]
    truth = truth_of(DemoSite(pages=300))
    assert truth(urls[pages[0][1]]) == "home" and truth("https://social.example/bookshop") is None


def test_progress_lines_when_not_a_terminal_and_stdout_output(demo_crawl, tmp_path):
    _site, db = demo_crawl
    res = structcrawl("cluster", "--db", db, "-o", "-", "--cutoff", "20")
    assert res.returncode == 0, res.stderr[-2000:]
    doc = json.loads(res.stdout)  # the document alone on stdout
    assert "members" not in doc["unclustered"] and all("members" not in c for c in doc["classes"])
    assert "inbound links …\n" in res.stderr and "\r" not in res.stderr
    assert "unclustered" in res.stderr  # the summary goes to stderr when the document is on stdout


def test_bad_database_and_arguments(demo_crawl, tmp_path):
    _site, db = demo_crawl
    assert_one_error(structcrawl("cluster", "--db", str(tmp_path / "no" / "such.db")), "does not exist")
    empty = tmp_path / "empty.db"
    sa.create_engine(f"sqlite:///{empty}").connect().close()
    assert_one_error(structcrawl("cluster", "--db", str(empty)), "no structcrawl crawl store")
    assert_one_error(structcrawl("cluster", "--db", db, "--job", "nope"), "no job 'nope'")
    assert_one_error(structcrawl("cluster", "--db", db, "--similarity", "0"), "similarity must be in (0, 1]")
    assert_one_error(structcrawl("cluster", "--db", db, "-o", str(tmp_path / "no" / "c.json")),
                     "could not write the clusters")
    assert_one_error(structcrawl("cluster", "--db", "postgresql://nobody@127.0.0.1:1/x"), "cannot connect")
