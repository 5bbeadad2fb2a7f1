"""Fields and records through the crawl store (SQLite and PostgreSQL): a crawl stopped at a page ceiling and
resumed gives every class that has the same members as in a crawl that never stopped the same fields, and
`structcrawl export` writes the spider's bytes; a database made before ``sc_bodies`` gets the table and
exports without fields."""

from __future__ import annotations

import copy
import json
from functools import partial

import pytest
import sqlalchemy as sa

import helpers
from dbfixtures import db_url, pg_url  # noqa: F401 - fixtures
from helpers import PROJECT, serving
from structcrawl.demo.site import DemoSite
from structcrawl.store import CrawlStore
from structcrawl.store import schema as S

structcrawl = partial(helpers.structcrawl, cwd=PROJECT)


def _data(doc: dict) -> dict:
    """Members -> what the class's fields and records are (a resumed crawl need not end with the same classes:
    the batch cut at the ceiling is handed out again later, so the crawl goes on in another order)."""
    return {tuple(c["members"]): (c["field_pages"], c["fields"], c["records"]) for c in doc["classes"]}


@pytest.fixture(scope="module")
def site():
    site = DemoSite(pages=600, seed=2)
    with serving(site) as base:
        yield base


def test_a_resumed_crawl_exports_the_fields_of_an_uninterrupted_one(db_url, site, tmp_path):  # noqa: F811
    whole, resumed, exported = tmp_path / "whole.json", tmp_path / "resumed.json", tmp_path / "exported.json"
    res = structcrawl("crawl", site + "/", "--db", f"sqlite:///{tmp_path / 'whole.db'}", "--job", "w",
                      "--members", "-L", "WARNING", "-o", str(whole))
    assert res.returncode == 0, res.stderr[-3000:]
    res = structcrawl("crawl", site + "/", "--db", db_url, "--job", "r", "--members", "--max-pages", "60",
                      "-L", "WARNING", "-o", str(resumed))
    assert res.returncode == 0, res.stderr[-3000:]
    first = json.loads(resumed.read_text(encoding="utf-8"))
    assert first["crawl"]["stop_reason"] == "max_pages"
    res = structcrawl("crawl", site + "/", "--db", db_url, "--job", "r", "--members", "-L", "WARNING",
                      "-o", str(resumed))
    assert res.returncode == 0, res.stderr[-3000:]
    a, b = (json.loads(p.read_text(encoding="utf-8")) for p in (whole, resumed))
    assert any(c["fields"] for c in a["classes"]) and any(c["records"] for c in a["classes"])
    same = set(_data(a)) & set(_data(b))
    assert len(same) >= len(a["classes"]) // 2, "the two crawls share too few classes to compare"
    assert any(_data(a)[m][1] for m in same)
    assert all(_data(a)[m] == _data(b)[m] for m in same)
    res = structcrawl("export", "--db", db_url, "--job", "r", "-o", str(exported))
    assert res.returncode == 0, res.stderr[-3000:]
    assert exported.read_bytes() == resumed.read_bytes()
    store = CrawlStore(db_url)
    with store.engine.connect() as conn:  # every page the fields came from has its text in the store
        kept = conn.execute(sa.select(sa.func.count()).select_from(S.bodies)).scalar()
    store.dispose()
    assert kept >= sum(c["field_pages"] for c in b["classes"])


def test_a_database_without_the_bodies_table_gets_it_and_exports_without_fields(site, tmp_path):
    db = f"sqlite:///{tmp_path / 'old.db'}"
    out = tmp_path / "m.json"
    res = structcrawl("crawl", site + "/", "--db", db, "--job", "j", "-L", "WARNING", "-o", str(out))
    assert res.returncode == 0, res.stderr[-3000:]
    store = CrawlStore(db)
    with store.engine.begin() as conn:  # as a database of the structcrawl before sc_bodies
        conn.execute(sa.text("DROP TABLE sc_bodies"))
    store.dispose()
    res = structcrawl("export", "--db", db, "--job", "j", "-o", "-")
    assert res.returncode == 0, res.stderr[-3000:]
    doc = json.loads(res.stdout)
    assert all(c["fields"] == [] and "no page" in c["fields_note"] for c in doc["classes"])
    res = structcrawl("crawl", site + "/", "--db", db, "--job", "j2", "--max-pages", "20", "-L", "WARNING",
                      "-o", str(tmp_path / "m2.json"))
    assert res.returncode == 0, res.stderr[-3000:]
    assert sa.inspect(CrawlStore(db).engine).has_table("sc_bodies")


def test_export_reads_the_class_of_each_page_at_every_step(site, tmp_path, monkeypatch):
    """A model step may replace the explorer's model (a re-clustering builds a new one, with a new page ->
    class map): the export chooses the field pages reading that map at every step, as the spider does, and
    writes the spider's field pages.  Here every replayed step replaces the model by a copy."""
    db, out = tmp_path / "s.db", tmp_path / "s.json"
    res = structcrawl("crawl", site + "/", "--db", f"sqlite:///{db}", "--job", "s", "--max-pages", "200",
                      "-L", "WARNING", "-o", str(out))
    assert res.returncode == 0, res.stderr[-3000:]
    from structcrawl.core.explorer import Explorer

    replay = Explorer.replay

    def replay_then_replace(self, *args, **kwargs):
        report = replay(self, *args, **kwargs)
        model = copy.copy(self.model)
        model.page_class = dict(self.model.page_class)
        self.model = model
        return report

    monkeypatch.setattr(Explorer, "replay", replay_then_replace)
    exported = CrawlStore(f"sqlite:///{db}", create=False).export_document("s")
    spider = json.loads(out.read_text(encoding="utf-8"))
    assert [(c["id"], c["field_pages"]) for c in exported["classes"]] == \
        [(c["id"], c["field_pages"]) for c in spider["classes"]]
    assert sum(c["field_pages"] for c in spider["classes"]) > len(spider["classes"])
