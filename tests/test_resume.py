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
import time
from collections import Counter
from functools import partial
from pathlib import Path

import pytest
import sqlalchemy as sa

import helpers
from dbfixtures import db_url, pg_url  # noqa: F401 - fixtures
from helpers import PROJECT, PYTHON, QUIET, SCRAPY, Demo
from structcrawl.demo.site import DemoSite
from structcrawl.store import CrawlStore
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
    assert set(services) == {"postgres", "demo", "crawler"}
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
