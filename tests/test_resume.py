"""Stop and resume real crawls: ``scrapy crawl structure`` subprocesses against a real demo server.

Each crawl runs in its own process in the project directory (the issue's
command line); the demo server runs in a thread of the test process and
records every request it answers, so "fetched twice" is counted on the
server's side.  Crawls are SIGKILLed after a random number of fetched pages
(polled, never slept for), resumed, killed again …; at the end nothing was
fetched twice except what was in flight at a kill, no page is missing, and the
model has the same classes as an uninterrupted crawl's.  Every scenario runs on
SQLite and on PostgreSQL (``STRUCTCRAWL_TEST_POSTGRES_URL``; unreachable = fail).
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import threading
import time
from collections import Counter
from contextlib import contextmanager
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import sqlalchemy as sa

import helpers
from dbfixtures import db_url, pg_url  # noqa: F401 - fixtures
from helpers import PROJECT, PYTHON, QUIET, SCRAPY, Demo
from structcrawl.core.features import extract
from structcrawl.core.frontier import Batch
from structcrawl.crawling.ledger import BatchLedger
from structcrawl.demo.site import DemoSite
from structcrawl.store import CrawlStore, StoreError
from structcrawl.store import schema as S

DEADLINE = 120.0
run = partial(helpers.run, timeout=DEADLINE)  # these tests' deadline, also in test_ceilings and test_store_faults


@pytest.fixture(scope="module")
def demo():
    d = Demo(DemoSite(pages=600, seed=3))
    yield d
    d.close()


def crawl_cmd(demo: Demo, db: str | None, *extra: str, job: str = "shop", out: Path | None = None) -> list[str]:
    cmd = [SCRAPY, "crawl", "structure", "-a", f"start_url={demo.url}", "-a", f"job={job}", *QUIET, *extra]
    if db:
        cmd += ["-s", f"STRUCTCRAWL_DB={db}"]
    if out:
        cmd += ["-s", f"STRUCTCRAWL_MODEL_OUT={out}"]
    return cmd


def cli_crawl_cmd(demo: Demo, db: str, out: Path, *extra: str) -> list[str]:
    """The job 'shop' crawled to the end through ``structcrawl crawl --db`` (test_ceilings, test_store_faults)."""
    return [PYTHON, "-m", "structcrawl", "crawl", demo.url, "--db", db, "--job", "shop", "--stop", "exhaust",
            "--members", "-o", str(out), *QUIET, *extra]


def start(cmd: list[str], tmp_path: Path, name: str) -> tuple[subprocess.Popen, Path]:
    err = tmp_path / f"{name}.err"
    proc = subprocess.Popen(cmd, cwd=PROJECT, stdout=subprocess.DEVNULL, stderr=open(err, "w"))
    return proc, err


def wait_for(cond, what: str, proc: subprocess.Popen | None = None, deadline: float = DEADLINE) -> None:
    """Poll ``cond`` until true; fail on the deadline or when ``proc`` ends first."""
    end = time.monotonic() + deadline
    while not cond():
        if proc is not None and proc.poll() is not None:
            pytest.fail(f"the crawl ended (rc {proc.returncode}) before: {what}")
        if time.monotonic() > end:
            pytest.fail(f"timed out waiting for: {what}")
        time.sleep(0.005)  # a polling interval, not a wait for timing


def committed(db: str, demo: Demo, job: str = "shop") -> set[str]:
    """Paths whose fetch is committed: URLs of completed batches, their pages' final URLs, redirect targets."""
    store = CrawlStore(db, create=False)
    try:
        info = store.job(job)
        out: set[str] = set()
        with store.engine.connect() as conn:
            b, p, r, u = S.batches, S.pages, S.redirects, S.urls
            done = sa.select(b.c.urls).where(b.c.job_id == info.id, b.c.state == "completed")
            for urls in conn.execute(done).scalars():
                out.update(urls)
            for col, table in ((p.c.url_id, p), (r.c.final_id, r)):
                out.update(conn.execute(
                    sa.select(u.c.url).join(table, sa.and_(u.c.job_id == table.c.job_id, u.c.id == col))
                    .where(u.c.job_id == info.id)
                ).scalars())
    finally:
        store.dispose()
    return {demo.path(x) for x in out if x.startswith(demo.base)}


def job_info(db: str, job: str = "shop"):
    store = CrawlStore(db, create=False)
    try:
        return store.job(job)
    finally:
        store.dispose()


def partition(model: dict) -> set[frozenset[str]]:
    return {frozenset(c["members"]) for c in model["classes"]}


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "ERROR" in line or "Traceback" in line or "error:" in line]


@pytest.fixture(scope="module")
def reference(demo, tmp_path_factory):
    """An uninterrupted crawl (no store) of the whole site."""
    tmp = tmp_path_factory.mktemp("reference")
    out = tmp / "ref.json"
    res = run(crawl_cmd(demo, None, "-a", "stop=exhaust", "-a", "members=true", out=out))
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(out.read_text(encoding="utf-8"))


# ---------------------------------------------------------------------------
# kill -9, resume, repeat
# ---------------------------------------------------------------------------


def test_sigkill_and_resume_repeatedly(db_url, demo, reference, tmp_path):
    rng = random.Random(hash(db_url) & 0xFFFF)
    out = tmp_path / "model.json"
    cmd = crawl_cmd(demo, db_url, "-a", "stop=exhaust", "-a", "members=true", out=out)
    runs: list[list[str]] = []
    committed_at_kill: list[set[str]] = []
    for trial in range(3):
        mark = demo.log.mark()
        proc, err = start(cmd, tmp_path, f"run{trial}")
        target = rng.randint(20, 120)  # the site has ~600 pages: several kills before the end
        # wait_for calls each lambda before the loop moves on: the loop variables are the current ones
        wait_for(lambda: len(demo.log.gets(mark)) >= target, f"{target} pages fetched", proc)  # noqa: B023
        # the writer group-commits: on a loaded machine the first commit can come after the target
        before = committed_at_kill[-1] if committed_at_kill else set()
        wait_for(lambda: committed(db_url, demo) - before, "a commit in this run", proc)  # noqa: B023
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        runs.append(demo.log.gets(mark))
        committed_at_kill.append(committed(db_url, demo))
        info = job_info(db_url)
        assert info.status == "running" and info.lock_token  # what a kill leaves: a stale lock
    mark = demo.log.mark()
    res = run(cmd)
    assert res.returncode == 0, res.stderr[-3000:]
    runs.append(demo.log.gets(mark))
    assert "Resuming job 'shop'" in res.stderr

    # nothing fetched twice within a run; across runs only what was in flight at a kill
    for gets in runs:
        assert [p for p, k in Counter(gets).items() if k > 1] == []
    refetched = 0
    for i, done in enumerate(committed_at_kill):
        assert done, "something must have been committed before the kill"
        later = {p for gets in runs[i + 1:] for p in gets}
        assert not done & later, f"committed before kill {i}, fetched again: {sorted(done & later)[:5]}"
        in_flight = set(runs[i]) - done
        again = in_flight & set(runs[i + 1])
        refetched += len(again)
        assert len(again) <= len(in_flight)
    print(f"{db_url.split(':')[0]}: kills after {[len(r) for r in runs[:-1]]} pages, "
          f"{refetched} in-flight URLs fetched again")

    # no page lost, same classes as the uninterrupted crawl
    model = json.loads(out.read_text(encoding="utf-8"))
    assert model["crawl"]["stop_reason"] == "finished"
    assert ({u for c in model["classes"] for u in c["members"]}
            == {u for c in reference["classes"] for u in c["members"]})
    assert partition(model) == partition(reference)
    info = job_info(db_url)
    assert info.status == "finished" and info.lock_token is None and info.runs == 4


# ---------------------------------------------------------------------------
# a redirect and a link to one page in two batches, a kill between their commits
# ---------------------------------------------------------------------------

RACE_HOME = """<html><head><title>home</title></head><body>
<div id="first"><ul><li><a href="/r">short link</a></li><li><a href="/x">x</a></li>
<li><a href="/y">y</a></li></ul></div>
<div id="second"><ol><li><a href="/t">target</a></li><li><a href="/slow">slow</a></li></ol></div>
</body></html>"""
#: the leaf pages differ in one element: pages alike in links and tag paths are copies (aliases), not pages
RACE_PAGE = """<html><head><title>{name}</title></head><body><h1>{name}</h1><{tag}><a href="/">home</a></{tag}>
</body></html>"""
RACE_TAGS = {"/t": "section", "/slow": "aside", "/x": "article", "/y": "nav"}


@contextmanager
def race_site():
    """``/`` links ``/r`` (301 to ``/t``), ``/x`` and ``/y`` in one collection (popped first: the
    larger), ``/t`` and ``/slow`` in another.

    ``/r`` answers only once ``/t`` has been served, so the redirect to ``/t`` is
    the request the dupefilter drops although its batch was popped first;
    ``/slow`` answers only when ``release`` is set, so the batch that fetched
    ``/t`` is still in flight when the test kills the crawl.
    """
    served_t, release = threading.Event(), threading.Event()
    log: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:
            pass

        def _send(self, status: int, body: str = "", **headers: str) -> None:
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", "text/plain" if self.path == "/robots.txt" else "text/html")
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            try:
                self.wfile.write(data)
            except ConnectionError:  # /slow, answered after the kill
                pass

        def do_GET(self) -> None:  # noqa: N802
            log.append(self.path)
            if self.path == "/robots.txt":
                self._send(200, "User-agent: *\nDisallow:\n")
            elif self.path == "/":
                self._send(200, RACE_HOME)
            elif self.path == "/r":
                served_t.wait(DEADLINE)
                self._send(301, Location="/t")
            elif self.path in RACE_TAGS:
                if self.path == "/slow":
                    release.wait(DEADLINE)
                self._send(200, RACE_PAGE.format(name=self.path[1:], tag=RACE_TAGS[self.path]))
                if self.path == "/t":
                    served_t.set()
            else:
                self._send(404, "not found")

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}/", log, release
    finally:
        release.set()
        srv.shutdown()
        srv.server_close()


def test_a_dropped_redirect_takes_the_page_of_a_later_batch(tmp_path):
    """The dupefilter drops the redirect of the earlier batch: the page goes into that batch's
    commit, or a kill before the later batch's commit loses it (the resume takes it as fetched)."""
    db = f"sqlite:///{tmp_path / 'race.db'}"
    out = tmp_path / "model.json"
    with race_site() as (url, log, release):
        cmd = [SCRAPY, "crawl", "structure", "-a", f"start_url={url}", "-a", "job=race", "-a", "stop=exhaust",
               "-a", "members=true", "-s", f"STRUCTCRAWL_DB={db}", "-s", f"STRUCTCRAWL_MODEL_OUT={out}", *QUIET]
        proc, _err = start(cmd, tmp_path, "first")

        def batches() -> dict[str, tuple[int, str]]:
            if not (tmp_path / "race.db").exists():
                return {}
            try:
                store = CrawlStore(db, create=False)
            except StoreError:  # the crawl has not made its tables yet
                return {}
            try:
                with store.engine.connect() as conn:
                    rows = conn.execute(sa.select(S.batches.c.seq, S.batches.c.urls, S.batches.c.state)).all()
            finally:
                store.dispose()
            return {u[len(url) - 1:]: (seq, state) for seq, urls, state in rows for u in urls}

        try:
            wait_for(lambda: batches().get("/r", (0, ""))[1] == "completed", "the batch of /r committed", proc)
            seen = batches()
            assert seen["/r"][0] < seen["/t"][0] and seen["/t"][1] == "issued"
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
        release.set()
        store = CrawlStore(db, create=False)
        try:
            with store.engine.connect() as conn:
                p, u = S.pages, S.urls
                stored = conn.execute(sa.select(u.c.url, p.c.batch_seq).join(
                    p, sa.and_(u.c.job_id == p.c.job_id, u.c.id == p.c.url_id))).all()
        finally:
            store.dispose()
        assert (url + "t", seen["/r"][0]) in stored
        res = run(cmd)
        assert res.returncode == 0, res.stderr[-3000:]
        assert "Resuming job 'race'" in res.stderr
    model = json.loads(out.read_text(encoding="utf-8"))
    assert {m for c in model["classes"] for m in c["members"]} == {url + p for p in ("", "t", "slow", "x", "y")}
    assert log.count("/t") == 1


def _ledger_with(*batches: tuple[str, ...]) -> tuple[BatchLedger, list]:
    ledger = BatchLedger()
    states = []
    for seq, urls in enumerate(batches):
        state = ledger.open(seq, Batch(None, urls))
        for u in urls:
            ledger.requesting(state, u, u)
        states.append(state)
    return ledger, states


def _page(url: str):
    return extract(b"<html><body><p>x</p></body></html>", url)


def test_ledger_gives_a_page_to_the_earliest_batch_asking_for_it():
    # /r of batch 0 redirects to /t, fetched by batch 1: batch 0 waits, then holds the page
    ledger, (a, b) = _ledger_with(("/r",), ("/t",))
    ledger.requesting(a, "/r", "/t")  # no-op: batch 1 went to /t first
    ledger.duplicate(a, "/r", "/t")
    assert a.outstanding == {"/r"}
    ledger.page(b, "/t", _page("/t"), 200, 0.0)
    assert ledger.outstanding == 0 and a.pages["/r"].url == "/t" and a.redirects["/r"] == "/t" and not b.pages
    assert ledger.next_due() is a and ledger.next_due() is b

    # the page came first: it moves at the drop; a failure moves the same way
    ledger, (a, b) = _ledger_with(("/r", "/q"), ("/t", "/u"))
    ledger.page(b, "/t", _page("/t"), 200, 0.0)
    ledger.fail(b, "/u", "http_404")
    ledger.duplicate(a, "/r", "/t")
    ledger.duplicate(a, "/q", "/u")
    assert a.pages["/r"].url == "/t" and a.failed == {"/q": "http_404"} and not b.pages and not b.failed
    assert ledger.outstanding == 0

    # the fetch in an earlier batch keeps its page; the later one is a plain duplicate
    ledger, (a, b) = _ledger_with(("/t",), ("/r",))
    ledger.duplicate(b, "/r", "/t")
    assert not b.outstanding and ledger.outstanding == 1
    ledger.page(a, "/t", _page("/t"), 200, 0.0)
    assert a.pages["/t"].url == "/t" and not b.pages

    # two earlier batches waiting: the earliest takes the page, the other is a plain duplicate
    ledger, (a, b, c) = _ledger_with(("/r1",), ("/r2",), ("/t",))
    ledger.duplicate(b, "/r2", "/t")
    ledger.duplicate(a, "/r1", "/t")
    assert not b.outstanding and a.outstanding == {"/r1"}
    ledger.page(c, "/t", _page("/t"), 200, 0.0)
    assert a.pages["/r1"].url == "/t" and not b.pages and not c.pages and ledger.outstanding == 0


# ---------------------------------------------------------------------------
# Ctrl-C: graceful, resumable; the export from the database is the spider's
# ---------------------------------------------------------------------------


def test_sigint_stops_gracefully_and_the_job_resumes(db_url, demo, reference, tmp_path):
    out = tmp_path / "model.json"
    cmd = crawl_cmd(demo, db_url, "-a", "stop=exhaust", "-a", "members=true", out=out)
    mark = demo.log.mark()
    proc, err = start(cmd, tmp_path, "interrupted")
    wait_for(lambda: len(demo.log.gets(mark)) >= 80, "80 pages fetched", proc)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=60) == 0
    stderr = err.read_text()
    assert "Received SIGINT, shutting down gracefully" in stderr and "Closing spider (shutdown)" in stderr
    first = demo.log.gets(mark)
    info = job_info(db_url)
    assert info.status == "stopped" and info.stop_reason == "shutdown" and info.lock_token is None

    # the database exports exactly what the spider wrote at close
    exported = tmp_path / "exported.json"
    res = run([PYTHON, "-m", "structcrawl", "export", "--db", db_url, "--job", "shop", "-o", str(exported)])
    assert res.returncode == 0, res.stderr
    assert exported.read_bytes() == out.read_bytes()

    done = committed(db_url, demo)
    mark = demo.log.mark()
    res = run(cmd)
    assert res.returncode == 0, res.stderr[-3000:]
    second = demo.log.gets(mark)
    assert not done & set(second)
    model = json.loads(out.read_text(encoding="utf-8"))
    assert partition(model) == partition(reference)
    assert set(first) | set(second) >= {p for c in reference["classes"] for p in map(demo.path, c["members"])}

    # and again, byte-identical export of the finished job
    res = run([PYTHON, "-m", "structcrawl", "export", "--db", db_url, "-o", str(exported)])
    assert res.returncode == 0 and exported.read_bytes() == out.read_bytes()

    # a finished job says so …
    res = run(cmd)
    assert res.returncode != 0
    lines = error_lines(res.stderr)
    assert len(lines) == 1, res.stderr[-2000:]
    assert "job 'shop' is finished (finished" in lines[0] and "fresh=1" in lines[0], res.stderr[-2000:]
    # … and -a fresh=1 starts it over
    mark = demo.log.mark()
    res = run(crawl_cmd(demo, db_url, "-a", "fresh=1", out=out))
    assert res.returncode == 0, res.stderr[-3000:]
    assert demo.log.gets(mark)[0] == "/"
    info = job_info(db_url)
    assert info.status == "finished" and info.stop_reason == "model_stable" and info.runs == 1


# ---------------------------------------------------------------------------
# One crawl per job; schema versions; the jobs listing
# ---------------------------------------------------------------------------


def test_a_second_crawl_of_a_running_job_is_refused(db_url, demo, tmp_path):
    cmd = crawl_cmd(demo, db_url, "-a", "stop=exhaust", "-s", "DOWNLOAD_DELAY=0.05", out=tmp_path / "m.json")
    mark = demo.log.mark()
    proc, err = start(cmd, tmp_path, "first")
    try:
        wait_for(lambda: len(demo.log.gets(mark)) >= 3, "the first crawl running", proc)
        res = run(cmd)
        assert res.returncode != 0
        lines = error_lines(res.stderr)
        assert len(lines) == 1 and "job 'shop' is locked by a running crawl (pid " in lines[0], res.stderr[-2000:]
        assert proc.poll() is None  # the first one goes on
        res = run([PYTHON, "-m", "structcrawl", "jobs", "--db", db_url])
        assert res.returncode == 0
        assert "shop" in res.stdout and "running" in res.stdout and f"pid {proc.pid}" in res.stdout
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    # its process is gone: the next crawl takes the lock over at once
    res = run(crawl_cmd(demo, db_url, "-a", "stop=exhaust", "-a", "max_pages=30", out=tmp_path / "m.json"))
    assert res.returncode == 0, res.stderr[-3000:]
    assert "took over the lock of" in res.stderr


@pytest.mark.parametrize("version, says", [(S.SCHEMA_VERSION + 1, "newer"), (S.SCHEMA_VERSION - 1, "older")])
def test_schema_version_mismatch_is_one_line(demo, tmp_path, version, says):
    db = f"sqlite:///{tmp_path / 'old.db'}"
    CrawlStore(db).dispose()
    engine = S.make_engine(db)
    with engine.begin() as conn:
        conn.execute(sa.update(S.meta).values(value=str(version)))
    engine.dispose()
    res = run(crawl_cmd(demo, db, out=tmp_path / "m.json"))
    assert res.returncode != 0
    lines = error_lines(res.stderr)
    assert len(lines) == 1 and f"schema version {version}, {says} than" in lines[0], res.stderr[-2000:]
    for sub in (["export", "--db", db], ["jobs", "--db", db]):
        res = run([PYTHON, "-m", "structcrawl", *sub])
        assert res.returncode == 2
        assert res.stderr.startswith("structcrawl: error: ") and len(res.stderr.strip().splitlines()) == 1
        assert says in res.stderr


# ---------------------------------------------------------------------------
# docker-compose.yml: parses, names real things, its crawler command works
# ---------------------------------------------------------------------------


def test_docker_compose_crawler_command_against_local_postgres(demo, pg_url, tmp_path):
    import yaml

    from structcrawl.commands.parser import build_parser

    compose = yaml.safe_load((PROJECT / "docker-compose.yml").read_text(encoding="utf-8"))
    services = compose["services"]
    assert set(services) == {"postgres", "demo", "crawler", "redis", "harvester"}  # harvester: test_distributed
    assert (PROJECT / "Dockerfile").is_file() and (PROJECT / "scrapy.cfg").is_file()
    assert services["demo"]["command"][:2] == ["structcrawl", "demo-site"]
    build_parser().parse_args(services["demo"]["command"][1:])  # a valid structcrawl command
    crawler = services["crawler"]
    assert crawler["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert crawler["stop_signal"] == "SIGINT"
    cmd = list(crawler["command"])
    assert cmd[:3] == ["scrapy", "crawl", "structure"]
    db = crawler["environment"]["STRUCTCRAWL_DB"]
    assert f"STRUCTCRAWL_DB={db}" in cmd and db.startswith("postgresql+psycopg://")
    # run it here: the demo service is our demo server, the postgres service our PostgreSQL
    local = []
    for arg in cmd:
        arg = arg.replace("http://demo:8000/", demo.url).replace(f"STRUCTCRAWL_DB={db}", f"STRUCTCRAWL_DB={pg_url}")
        arg = arg.replace("/out/", f"{tmp_path}/")
        local.append(arg)
    local[0] = SCRAPY
    res = run(local + QUIET)
    assert res.returncode == 0, res.stderr[-3000:]
    model = json.loads((tmp_path / "demo.model.json").read_text(encoding="utf-8"))
    assert model["crawl"]["stop_reason"] == "model_stable" and model["crawl"]["job"] == "demo"
    info = job_info(pg_url, "demo")
    assert info.status == "finished" and info.counts["pages"] == model["crawl"]["pages_modelled"]
    res = run([PYTHON, "-m", "structcrawl", "export", "--db", pg_url, "-o", "-"])
    assert res.returncode == 0 and json.loads(res.stdout) == model
