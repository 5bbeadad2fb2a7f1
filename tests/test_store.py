"""The crawl store without Scrapy: real SQLite files and a real PostgreSQL (one schema per test).

An offline driver plays the spider's part: it pops batches ahead like the
spider does (several link collections in flight), fetches from the demo site
in-process, runs the model steps in pop order and hands everything to the
store's writer.  Replaying the stored history must rebuild exactly the live
explorer; a "crash" (the writer stopped with work still queued, the lock left
behind) must resume to a complete crawl that fetched nothing twice but what
was in flight.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import time
from collections import Counter, deque

import pytest
import sqlalchemy as sa

from dbfixtures import db_url, pg_url  # noqa: F401 - fixtures
from structcrawl.core.explorer import Explorer
from structcrawl.core.features import extract
from structcrawl.demo.site import DemoSite, fetcher
from structcrawl.sitemodel import PageTitles, TagPathSamples, dumps, model_document
from structcrawl.store import (
    SCHEMA_VERSION,
    CrawlStore,
    JobFinishedError,
    JobLockedError,
    JobMismatchError,
    LockLostError,
    PageRecord,
    SchemaVersionError,
    StoreError,
    explorer_for,
)
from structcrawl.store import schema as S

BASE = "http://127.0.0.1:8000"
PARAMS = {
    "strategy": "densest", "batch_size": 10, "dt": 0.2, "costs": {},
    "stability": {"window": 20, "epsilon": 0.02, "min_pages": 0},
    "scope": {"host": "127.0.0.1", "allow_subdomains": False, "extra_domains": []},
    "document": {"parameters": {"stop": "exhaust", "max_pages": None}, "members": True, "samples": 5,
                 "fingerprint_pages": 100, "occurrence": 0.3},
}


@pytest.fixture(scope="module")
def site():
    return DemoSite(pages=600, seed=3)


class OfflineCrawl:
    """The spider's driving of the explorer, without Scrapy: batches popped ahead, steps in pop order."""

    def __init__(self, site: DemoSite, explorer: Explorer, session=None, inflight: int = 32, seed: int = 0) -> None:
        self.fetch = fetcher(site, BASE)
        self.explorer = explorer
        self.session = session
        self.writer = session.writer if session else None
        self.seq = session.next_seq if session else 0
        self.inflight = inflight
        self.queue: deque = deque()  # (seq, batch) popped, step not run
        self.uncompleted = 0
        self.fetched: Counter = Counter()  # URL -> fetches
        self.samples = TagPathSamples(PARAMS["document"]["fingerprint_pages"])
        self.titles = PageTitles()  # as the spider keeps them: the samples' titles in the model
        self.rng = random.Random(seed)
        self.done = False

    def top_up(self) -> None:
        ex = self.explorer
        while self.uncompleted < self.inflight:
            batch = ex.next_batch()
            if batch is None:
                if self.writer:
                    self.writer.idle(ex.updates)
                break
            if self.writer:
                self.writer.issue(self.seq, batch.key, batch.urls, ex.updates)
            self.queue.append((self.seq, batch))
            self.seq += 1
            self.uncompleted += len(batch.urls)

    def step(self) -> bool:
        """One model step (the oldest popped batch); False when the frontier is exhausted."""
        self.top_up()
        if not self.queue:
            self.done = True
            return False
        seq, batch = self.queue.popleft()
        ex = self.explorer
        got_pages, failed, redirects = [], {}, {}
        for pos, url in enumerate(batch.urls):
            self.fetched[url] += 1
            got = self.fetch(url)
            if got is None:
                failed[url] = "http_404"
                continue
            final, body = got
            if final != url:
                redirects[url] = final
            got_pages.append((pos, url, extract(body, final)))
        for url in batch.urls:
            if url in redirects:
                ex.redirected(url, redirects[url])
        pages = [f for _p, _u, f in got_pages]
        merges = len(ex.merges)
        ex.complete(batch, pages, list(failed))
        self.samples.keep(pages, ex.model.page_class)
        self.titles.keep(pages)
        self.uncompleted -= len(batch.urls)
        if self.writer:
            pc = ex.model.page_class
            self.writer.complete(
                seq, [PageRecord(p, u, f, pc.get(f.url), 200, time.time()) for p, u, f in got_pages], failed,
                redirects, {"document": {"job": "demo", "steps": ex.updates}},
                merges=[(m.kept, m.merged) for m in ex.merges[merges:]],
            )
        self.top_up()
        return True

    def run(self, steps: int | None = None) -> "OfflineCrawl":
        n = 0
        while (steps is None or n < steps) and self.step():
            n += 1
        return self

    def in_flight_urls(self) -> set[str]:
        return {u for _s, b in self.queue for u in b.urls}


def open_session(url: str, name: str = "demo", params=PARAMS, **kw):
    store = CrawlStore(url)
    session = store.open(name, BASE + "/", params, **kw)
    explorer = explorer_for(BASE + "/", params)
    return store, session, explorer


def frontier_state(f) -> tuple:
    collections = [(c.source, c.path, c.seq, tuple(c.urls), c.cursor, c.tried, dict(c.leads_to), c.fetched,
                    c.duplicates, c.trap, c.pages) for c in sorted(f.collections.values(), key=lambda c: c.seq)]
    return collections, sorted(f.issued)


def explorer_state(ex: Explorer):
    m = ex.model
    classes = {cid: (tuple(c.members), dict(c.path_counts), c.schema_total, c.url_total)
               for cid, c in m.classes.items()}
    return (classes, dict(m.page_class), m.mdl, m.model_bits, m.data_bits, dict(ex.aliases), set(ex.failed),
            ex.updates, ex.stable, ex.stability.reason, list(ex.stability.checks), frontier_state(ex.frontier),
            list(ex.merges), {u: dict(c) for u, c in ex.links.items()}, dict(ex.tag_paths), dict(ex.element_paths))


# ---------------------------------------------------------------------------
# Schema and version
# ---------------------------------------------------------------------------


def test_schema_is_created_with_its_version(db_url):
    store = CrawlStore(db_url)
    try:
        with store.engine.connect() as conn:
            names = set(sa.inspect(conn).get_table_names())
            version = conn.execute(sa.select(S.meta.c.value).where(S.meta.c.key == "schema_version")).scalar()
        assert {t.name for t in S.metadata.sorted_tables} <= names
        assert version == str(SCHEMA_VERSION)
        assert "ix_sc_links_xpath" in {i["name"] for i in sa.inspect(store.engine).get_indexes("sc_links")}
    finally:
        store.dispose()
    CrawlStore(db_url).dispose()  # opening again: same version, fine


@pytest.mark.parametrize("found, says", [(SCHEMA_VERSION - 1, "older"), (SCHEMA_VERSION + 1, "newer")])
def test_other_schema_versions_are_refused(db_url, found, says):
    CrawlStore(db_url).dispose()
    engine = S.make_engine(db_url)
    with engine.begin() as conn:
        conn.execute(sa.update(S.meta).where(S.meta.c.key == "schema_version").values(value=str(found)))
    engine.dispose()
    with pytest.raises(SchemaVersionError) as err:
        CrawlStore(db_url)
    message = str(err.value)
    assert says in message and f"version {found}" in message and "\n" not in message
    assert ("upgrade structcrawl" in message) if says == "newer" else ("new database" in message)


def test_unreachable_or_bad_databases_give_one_line(tmp_path):
    with pytest.raises(StoreError, match="cannot connect to database postgresql\\+psycopg://nobody@127.0.0.1:1/x"):
        CrawlStore("postgresql://nobody@127.0.0.1:1/x")
    with pytest.raises(StoreError, match="does not exist"):
        CrawlStore(f"sqlite:///{tmp_path}/no/such/dir/x.db")
    with pytest.raises(StoreError, match="no structcrawl crawl store"):
        CrawlStore(f"sqlite:///{tmp_path}/empty.db", create=False)
    assert S.normalize_db_url("shop.db") == "sqlite:///shop.db"
    assert S.normalize_db_url("postgresql://u@h/db") == "postgresql+psycopg://u@h/db"


# ---------------------------------------------------------------------------
# Replay: the stored history rebuilds the live state exactly
# ---------------------------------------------------------------------------


def test_stored_history_replays_to_the_live_state(db_url, site):
    store, session, explorer = open_session(db_url)
    crawl = OfflineCrawl(site, explorer, session).run(steps=60)
    assert crawl.queue, "batches must be in flight for this test"
    assert session.writer.flush(timeout=60)
    live = explorer_state(explorer)
    live_next = [explorer.next_batch() for _ in range(3)]

    info, rebuilt, result = store.rebuild("demo")  # include_issued: in-flight pops too, as live
    assert result.completed == 60 and len(result.in_flight) == len(crawl.queue)
    assert explorer_state(rebuilt) == live
    assert any(rebuilt.element_paths.values())  # kept beside the tag paths (what places chrome-only pages)
    assert [rebuilt.next_batch() for _ in range(3)] == live_next
    session.close("stopped", "test")
    store.dispose()


def test_export_from_the_store_is_the_live_document(db_url, site):
    store, session, explorer = open_session(db_url)
    crawl = OfflineCrawl(site, explorer, session).run(steps=45)
    figures = {"job": "demo", "pages_requested": 450, "pages_fetched": 440, "stop_reason": "shutdown",
               "stable_at_pages": None, "started": "2026-01-01T00:00:00Z", "finished": "2026-01-01T00:01:00Z"}
    assert session.close("stopped", "shutdown", {"document": figures}, timeout=60)
    doc = PARAMS["document"]
    live = dumps(model_document(explorer, crawl=figures, parameters=doc["parameters"], tag_paths=None,
                                members=True, samples=5, fingerprint_pages=100, occurrence=0.3, titles=crawl.titles))
    assert '"sample_titles": {\n        "http' in live  # the titles are kept in the store too
    exported = dumps(store.export_document("demo"))
    assert exported == live
    assert dumps(store.export_document()) == live  # the only job
    without = store.export_document("demo", members=False)
    assert all("members" not in c for c in without["classes"])
    store.dispose()


# ---------------------------------------------------------------------------
# Crash and resume
# ---------------------------------------------------------------------------


def crash(session) -> None:
    """What a kill -9 leaves: the writer stops where it is, queued work is lost, the lock stays."""
    session.writer._closed = True
    session.writer._q.put(("stop",))
    session.writer._thread.join(30)


def committed(store: CrawlStore, name: str = "demo") -> set[str]:
    """Requested URLs whose batch was committed as completed."""
    info = store.job(name)
    with store.engine.connect() as conn:
        rows = conn.execute(
            sa.select(S.batches.c.urls).where(S.batches.c.job_id == info.id, S.batches.c.state == "completed")
        ).scalars()
        return {u for urls in rows for u in urls}


def partition(explorer: Explorer) -> set[frozenset[str]]:
    return {frozenset(c.members) for c in explorer.model.classes.values()}


def test_crash_and_resume_loses_nothing_and_refetches_only_in_flight(db_url, site):
    reference = OfflineCrawl(site, explorer_for(BASE + "/", PARAMS)).run()
    rng = random.Random(7)
    fetched: Counter = Counter()
    allowed: set[str] = set()  # fetched but not committed when a crash came
    runs = 0
    while True:
        store, session, explorer = open_session(db_url)
        result = session.restore(explorer)
        before = committed(store)
        crawl = OfflineCrawl(site, explorer, session)
        steps = rng.randint(5, 40) if runs < 4 else None
        crawl.run(steps)
        runs += 1
        fetched.update(crawl.fetched)
        if crawl.done:
            assert session.close("finished", "finished", {"job": "demo"}, timeout=60)
            store.dispose()
            break
        # let a random part of the queued writes through, then "kill -9"
        crash(session)
        after = committed(store)
        assert before <= after
        allowed |= set(crawl.fetched) - after
        store.dispose()
        assert result.completed >= 0
    assert runs == 5
    twice = {u for u, k in fetched.items() if k > 1}
    assert twice <= allowed, f"fetched twice but committed: {sorted(twice - allowed)[:5]}"
    assert set(explorer.model.pages) == set(reference.explorer.model.pages)  # no page lost
    assert partition(explorer) == partition(reference.explorer)  # the same classes
    # and the store agrees with the final explorer
    store = CrawlStore(db_url)
    info, rebuilt, _ = store.rebuild("demo")
    assert explorer_state(rebuilt) == explorer_state(explorer)
    assert info.status == "finished"
    with store.engine.connect() as conn:  # sc_pages.class_id is the page's class now (merges applied)
        rows = conn.execute(
            sa.select(S.urls.c.url, S.pages.c.class_id)
            .join(S.urls, sa.and_(S.urls.c.job_id == S.pages.c.job_id, S.urls.c.id == S.pages.c.url_id))
            .where(S.pages.c.job_id == info.id, S.pages.c.class_id.is_not(None))
        ).all()
    assert dict(rows) == explorer.model.page_class
    store.dispose()


def test_a_resume_refetches_the_in_flight_batches(db_url, site):
    store, session, explorer = open_session(db_url)
    crawl = OfflineCrawl(site, explorer, session).run(steps=20)
    in_flight = crawl.in_flight_urls()
    assert session.writer.flush(timeout=60)
    crash(session)
    store.dispose()

    store, session, explorer = open_session(db_url)
    assert session.resumed
    result = session.restore(explorer)
    assert session.dropped_in_flight == len(crawl.queue)
    assert result.completed == 20 and not result.in_flight
    assert session.next_seq == 20
    again = OfflineCrawl(site, explorer, session)
    again.top_up()
    handed = again.in_flight_urls()
    assert handed & in_flight  # the in-flight URLs come out again (possibly in other batches)
    assert not handed & committed(store)
    session.close("stopped", "test")
    store.dispose()


def test_the_audit_replays_from_the_store_and_a_resume_draws_it_again(db_url, site):
    """The audit is a batch of no collection: the stored history gives it back at its pop, its
    replayed completion (a copy of the batch) counts as the audit's, and a crash with it in
    flight leaves a resumed crawl that hands out an audit before it can stop."""
    params = {**PARAMS, "stability": {"window": 3, "epsilon": 0.05, "min_pages": 0},
              "document": {**PARAMS["document"], "parameters": {"stop": "stable", "max_pages": None}}}
    store, session, explorer = open_session(db_url, "audit", params)
    crawl = OfflineCrawl(site, explorer, session)
    while explorer.audit is None and crawl.step():
        pass
    assert explorer.audit is not None and not explorer.audited
    assert session.writer.flush(timeout=60)
    _info, rebuilt, _ = store.rebuild("audit")
    assert rebuilt.audit == explorer.audit and not rebuilt.audited
    assert explorer_state(rebuilt) == explorer_state(explorer)
    while not explorer.audited and crawl.step():
        pass
    assert session.writer.flush(timeout=60)
    _info, rebuilt, _ = store.rebuild("audit")
    assert rebuilt.audited and explorer_state(rebuilt) == explorer_state(explorer)
    session.close("stopped", "test")
    store.dispose()

    store, session, explorer = open_session(db_url, "audit-crash", params)
    crawl = OfflineCrawl(site, explorer, session)
    while explorer.audit is None and crawl.step():
        pass
    assert session.writer.flush(timeout=60)
    crash(session)
    store.dispose()
    store, session, explorer = open_session(db_url, "audit-crash", params)
    session.restore(explorer)
    assert explorer.audit is None and not explorer.audited  # the audit was in flight: dropped
    again = OfflineCrawl(site, explorer, session)
    while not explorer.stable and again.step():
        pass
    assert explorer.stable and explorer.audited and explorer.audit.key is None
    session.close("stopped", "test")
    store.dispose()


# ---------------------------------------------------------------------------
# Jobs and locks
# ---------------------------------------------------------------------------


def test_a_live_lock_refuses_a_second_process(db_url):
    store, session, _ = open_session(db_url)
    other = CrawlStore(db_url)
    info = other.job("demo")
    with other.engine.begin() as conn:  # as if held by a live process elsewhere
        conn.execute(sa.update(S.jobs).where(S.jobs.c.id == info.id).values(lock_host="elsewhere", lock_pid=1))
    with pytest.raises(JobLockedError) as err:
        other.open("demo", BASE + "/", PARAMS)
    assert "locked by a running crawl (pid 1 on elsewhere, heartbeat" in str(err.value)
    assert "\n" not in str(err.value)
    session.writer.close()
    other.dispose()
    store.dispose()


def test_stale_locks_are_taken_over_and_the_loser_stops_writing(db_url):
    store, session, explorer = open_session(db_url, heartbeat=3600)
    other = CrawlStore(db_url)
    info = other.job("demo")
    # a lock of a process that is gone on this host: taken over at once
    with other.engine.begin() as conn:
        conn.execute(sa.update(S.jobs).where(S.jobs.c.id == info.id).values(lock_pid=2 ** 22 + 12345))
    second = other.open("demo", BASE + "/", PARAMS, heartbeat=3600)
    assert second.resumed and second.job.runs == 2
    # a lock elsewhere whose heartbeat is older than stale_after: taken over too
    old = S.utcnow() - dt.timedelta(seconds=120)
    with other.engine.begin() as conn:
        conn.execute(sa.update(S.jobs).where(S.jobs.c.id == info.id).values(lock_host="elsewhere", lock_heartbeat=old))
    with pytest.raises(JobLockedError):
        other.open("demo", BASE + "/", PARAMS, stale_after=600)
    third = other.open("demo", BASE + "/", PARAMS, stale_after=60)
    # the first owner's next write finds the lock gone and stops, writing nothing
    session.writer.issue(0, None, (BASE + "/",), 0)
    session.writer.flush(timeout=30)
    assert isinstance(session.writer.error, LockLostError)
    with other.engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(S.batches)).scalar() == 0
    second.writer.close()
    third.close("stopped", "test")
    assert other.job("demo").lock_token is None
    other.dispose()
    store.dispose()


def test_finished_jobs_say_so_and_fresh_starts_over(db_url, site):
    store, session, explorer = open_session(db_url)
    OfflineCrawl(site, explorer, session).run(steps=10)
    session.close("finished", "model_stable", {"job": "demo"})
    with pytest.raises(JobFinishedError) as err:
        store.open("demo", BASE + "/", PARAMS)
    assert "job 'demo' is finished (model_stable" in str(err.value) and "fresh=1" in str(err.value)
    fresh = store.open("demo", BASE + "/", PARAMS, fresh=True)
    assert not fresh.resumed
    assert fresh.restore(explorer_for(BASE + "/", PARAMS)).completed == 0
    info = store.job("demo")
    assert info.counts["pages"] == 0 and info.counts["batches"] == 0 and info.status == "running"
    fresh.close("stopped", "shutdown")
    assert store.job("demo").status == "stopped"
    store.dispose()


def test_resume_with_other_parameters_is_refused(db_url):
    store, session, _ = open_session(db_url)
    session.close("stopped", "shutdown")
    with pytest.raises(JobMismatchError, match="was started with strategy='densest'"):
        store.open("demo", BASE + "/", {**PARAMS, "strategy": "sparsest"})
    with pytest.raises(JobMismatchError, match="was started from http://127.0.0.1:8000/"):
        store.open("demo", BASE + "/other", PARAMS)
    # stop rule and export knobs may change
    store.open("demo", BASE + "/", {**PARAMS, "document": {}}).close("stopped", "x")
    store.dispose()


def test_jobs_listing(db_url, site):
    store, session, explorer = open_session(db_url, name="a")
    OfflineCrawl(site, explorer, session).run(steps=5)
    session.close("stopped", "shutdown", {"job": "a"})
    store.open("b", BASE + "/", PARAMS).close("finished", "model_stable")
    jobs = store.jobs()
    assert [j.name for j in jobs] == ["a", "b"]
    assert jobs[0].status == "stopped" and jobs[0].counts["batches"] == 5 and jobs[0].counts["pages"] > 0
    assert jobs[1].status == "finished" and jobs[1].stop_reason == "model_stable"
    store.dispose()


def test_concurrent_open_has_exactly_one_winner(db_url):
    import threading

    CrawlStore(db_url).dispose()
    results: list = []
    barrier = threading.Barrier(4)

    def race() -> None:
        store = CrawlStore(db_url)
        barrier.wait()
        try:
            results.append(store.open("race", BASE + "/", PARAMS, stale_after=600))
        except JobLockedError as exc:
            results.append(exc)

    # the same pid would look "gone": pretend the winner lives elsewhere
    import structcrawl.store.jobs as J

    real = J.lock_state

    def lock_state(info, stale_after, now=None):
        state, why = real(info, stale_after, now)
        return ("held", why) if info.lock_token else (state, why)

    J.lock_state = lock_state
    try:
        threads = [threading.Thread(target=race) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    finally:
        J.lock_state = real
    winners = [r for r in results if not isinstance(r, Exception)]
    assert len(winners) == 1 and len(results) == 4
    winners[0].close("stopped", "x")


# ---------------------------------------------------------------------------
# structcrawl jobs / export
# ---------------------------------------------------------------------------


def test_a_finished_job_lists_no_batch_in_flight(db_url, site, capsys):
    """Batches unanswered when a crawl stopped stable were dropped, not in flight: the table says
    so by a dash (the JSON record keeps the count)."""
    from structcrawl.commands.parser import main

    store, session, explorer = open_session(db_url, name="shop")
    crawl = OfflineCrawl(site, explorer, session)
    crawl.run(steps=8)
    assert crawl.queue  # batches handed out, never answered
    session.close("finished", "model_stable", {"job": "shop"})
    store.dispose()
    assert main(["jobs", "--db", db_url]) == 0
    header, row = capsys.readouterr().out.splitlines()[:2]
    assert row[header.index("IN FLIGHT"):].split()[0] == "-"
    assert main(["jobs", "--db", db_url, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["in_flight"] == len(crawl.queue)


def test_jobs_and_export_commands(db_url, site, tmp_path, capsys, monkeypatch):
    from structcrawl.commands.parser import main

    store, session, explorer = open_session(db_url, name="shop")
    OfflineCrawl(site, explorer, session).run(steps=8)
    figures = {"job": "shop", "pages_requested": 80, "pages_fetched": 80, "stop_reason": "shutdown",
               "stable_at_pages": None, "started": "x", "finished": "y"}
    session.close("stopped", "shutdown", {"document": figures})
    store.dispose()

    assert main(["jobs", "--db", db_url]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:4] == ["JOB", "KIND", "STATUS", "REASON"]
    assert out[1].split()[:4] == ["shop", "structure", "stopped", "shutdown"]
    monkeypatch.setenv("STRUCTCRAWL_DB", db_url)  # --db defaults to $STRUCTCRAWL_DB
    assert main(["jobs", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["job"] == "shop" and record["batches"] == 8 and record["lock"] is None

    target = tmp_path / "shop.model.json"
    assert main(["export", "-o", str(target)]) == 0
    assert "wrote the site model of job 'shop'" in capsys.readouterr().err
    doc = json.loads(target.read_text(encoding="utf-8"))
    assert doc["crawl"]["stop_reason"] == "shutdown" and all("members" in c for c in doc["classes"])
    assert main(["export", "--job", "shop", "--no-members", "-o", "-"]) == 0
    assert all("members" not in c for c in json.loads(capsys.readouterr().out)["classes"])

    assert main(["export", "--job", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("structcrawl: error: no job 'nope' in ") and len(err.strip().splitlines()) == 1
    monkeypatch.delenv("STRUCTCRAWL_DB")
    assert main(["jobs"]) == 2
    assert "no database: give --db URL" in capsys.readouterr().err
