"""The crawl database fails mid-crawl: the crawl stops with a clear error, the job resumes with nothing lost.

Real ``structcrawl crawl --db`` subprocesses against the demo server of
``test_resume`` (its access log counts what was fetched).  The database is
broken while the crawl runs, once enough pages were fetched (polled, never
slept for): a SQLite file made immutable (``chattr +i``: root writes through
file modes), a PostgreSQL role whose connections are terminated
(``pg_terminate_backend``) and which may no longer log in.  The crawl must end
with close reason ``store_error``, one ``structcrawl: error:`` line, exit status
2 and no traceback; after the database is repaired the same command resumes the
job, fetches nothing that was committed again, and ends with the model of an
uninterrupted crawl.  A connection killed while the database stays up is only
a retried transaction.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import threading
import uuid
from pathlib import Path

import pytest
import sqlalchemy as sa

from dbfixtures import PG_URL, _with_search_path
from structcrawl.store.schema import make_engine
from structcrawl.store.writer import bulk_insert
from test_resume import cli_crawl_cmd, committed, demo, job_info, partition, reference, run, wait_for  # noqa: F401

FAULT_AFTER = 40  #: pages fetched before the database breaks


def crawl_cmd(demo, db: str, out: Path) -> list[str]:
    return cli_crawl_cmd(demo, db, out, "-s", "STRUCTCRAWL_DB_RETRIES=1")


def break_mid_crawl(demo, cmd: list[str], tmp_path: Path, breaker) -> tuple[int, str, list[str]]:
    """Run ``cmd``, call ``breaker()`` once FAULT_AFTER pages were fetched; (exit status, stderr, paths fetched)."""
    mark = demo.log.mark()
    err = tmp_path / "broken.err"
    with open(err, "w") as fh:
        proc = subprocess.Popen(cmd, cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=fh, text=True)
        try:
            wait_for(lambda: len(demo.log.gets(mark)) >= FAULT_AFTER, f"{FAULT_AFTER} pages fetched", proc)
            # the writer group-commits: on a loaded machine the first commit can come after FAULT_AFTER pages
            wait_for(lambda: committed(cmd[cmd.index("--db") + 1], demo), "a first commit", proc)
            breaker()
            proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return proc.returncode, err.read_text(), demo.log.gets(mark)


def assert_stopped_clearly(rc: int, stderr: str) -> None:
    assert rc == 2, stderr[-3000:]
    assert "Traceback" not in stderr and "Unhandled error" not in stderr, stderr[-3000:]
    assert "Closing spider (store_error)" in stderr
    assert "the job ends at its last commit and the same command resumes from there" in stderr
    errors = [line for line in stderr.splitlines() if line.startswith("structcrawl: error: ")]
    assert len(errors) == 1 and "the crawl store failed (" in errors[0], stderr[-2000:]
    assert "job 'shop' is kept at its last commit: run the same command again to resume it" in errors[0]


def assert_resumes_with_nothing_lost(demo, db: str, cmd: list[str], out: Path, first: list[str], reference) -> None:
    info = job_info(db)
    assert info.status == "running"  # the crawl could not write its end: a stale lock, taken over below
    done = committed(db, demo)
    assert done, "something was committed before the database broke"
    mark = demo.log.mark()
    res = run(cmd, cwd=out.parent)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "Resuming job 'shop'" in res.stderr and "took over the lock of" in res.stderr
    second = demo.log.gets(mark)
    assert not done & set(second), f"committed, fetched again: {sorted(done & set(second))[:5]}"
    model = json.loads(out.read_text(encoding="utf-8"))
    assert model["crawl"]["stop_reason"] == "finished"
    assert partition(model) == partition(reference)
    info = job_info(db)
    assert info.status == "finished" and info.lock_token is None and info.runs == 2


def _set_immutable(paths: list[Path], on: bool) -> None:
    if os.geteuid() == 0:  # root writes through file modes
        for p in paths:
            subprocess.run(["chattr", "+i" if on else "-i", str(p)], check=True)
    else:
        for p in paths:
            p.chmod(0o444 if on else 0o644)


def test_sqlite_file_made_read_only_mid_crawl(demo, reference, tmp_path):
    db_file = tmp_path / "crawl.db"
    db = f"sqlite:///{db_file}"
    out = tmp_path / "model.json"
    cmd = crawl_cmd(demo, db, out)
    frozen: list[Path] = []

    def freeze() -> None:
        # not the -shm file: SQLite maps it, and a mapped page of an immutable file is a SIGBUS
        frozen.extend(p for p in (db_file, Path(f"{db_file}-wal")) if p.exists())
        _set_immutable(frozen, True)

    try:
        rc, stderr, first = break_mid_crawl(demo, cmd, tmp_path, freeze)
    finally:
        _set_immutable(frozen, False)
    assert frozen
    assert_stopped_clearly(rc, stderr)
    assert "Crawl store: transaction failed (" in stderr and "retrying in 0.5 s" in stderr
    assert_resumes_with_nothing_lost(demo, db, cmd, out, first, reference)


@pytest.fixture
def pg_role():
    """A PostgreSQL schema reached through a role of its own: (store URL, admin engine, role name)."""
    name = "sct_" + uuid.uuid4().hex[:12]
    admin = sa.create_engine(PG_URL.replace("postgresql://", "postgresql+psycopg://", 1))
    try:
        with admin.begin() as conn:
            conn.exec_driver_sql(f"CREATE ROLE {name} LOGIN")
            conn.exec_driver_sql(f"CREATE SCHEMA {name} AUTHORIZATION {name}")
    except sa.exc.OperationalError as exc:
        admin.dispose()
        pytest.fail(f"PostgreSQL at {PG_URL} is unreachable: {str(exc.orig).strip().splitlines()[0]}")
    url = _with_search_path(sa.make_url(PG_URL).set(username=name).render_as_string(hide_password=False), name)
    yield url, admin, name
    with admin.begin() as conn:
        conn.exec_driver_sql(f"ALTER ROLE {name} LOGIN")
        conn.exec_driver_sql(f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '{name}'")
        conn.exec_driver_sql(f"DROP SCHEMA {name} CASCADE")
        conn.exec_driver_sql(f"DROP ROLE {name}")
    admin.dispose()


def _terminate(admin, role: str) -> int:
    with admin.begin() as conn:
        return len(conn.exec_driver_sql(
            f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '{role}'").all())


def test_postgres_connection_killed_and_login_refused_mid_crawl(demo, reference, pg_role, tmp_path):
    db, admin, role = pg_role
    out = tmp_path / "model.json"
    cmd = crawl_cmd(demo, db, out)
    killed = []

    def down() -> None:
        with admin.begin() as conn:
            conn.exec_driver_sql(f"ALTER ROLE {role} NOLOGIN")
        killed.append(_terminate(admin, role))

    rc, stderr, first = break_mid_crawl(demo, cmd, tmp_path, down)
    assert killed and killed[0] >= 1
    assert_stopped_clearly(rc, stderr)
    assert f'role "{role}" is not permitted to log in' in stderr
    with admin.begin() as conn:
        conn.exec_driver_sql(f"ALTER ROLE {role} LOGIN")
    assert_resumes_with_nothing_lost(demo, db, cmd, out, first, reference)


def test_postgres_connection_killed_is_retried(demo, reference, pg_role, tmp_path):
    """The database stays up: the writer reconnects and the crawl goes on to the end."""
    db, admin, role = pg_role
    out = tmp_path / "model.json"
    cmd = crawl_cmd(demo, db, out)
    killed = []
    rc, stderr, first = break_mid_crawl(demo, cmd, tmp_path, lambda: killed.append(_terminate(admin, role)))
    assert killed and killed[0] >= 1
    assert rc == 0, stderr[-3000:]
    assert "Traceback" not in stderr and "store_error" not in stderr, stderr[-6000:]
    model = json.loads(out.read_text(encoding="utf-8"))
    assert model["crawl"]["stop_reason"] == "finished" and partition(model) == partition(reference)
    info = job_info(db)
    assert info.status == "finished" and info.counts["pages"] == model["crawl"]["pages_modelled"]


@pytest.mark.parametrize("write", ["copy", "executemany"])
def test_a_session_the_server_ends_mid_write_is_dropped_and_the_write_retried(pg_role, caplog, write):
    """The server ends the session while a write runs (a trigger makes each row take 0.2 s there): the
    page rows' COPY (a driver call) and a Core executemany each raise SQLAlchemy's OperationalError,
    which the writer retries, and the connection is dropped, not rolled back into the pool (SQLAlchemy
    logs that failed rollback with a traceback, as a CI run of the retry test above once showed)."""
    db, admin, role = pg_role
    engine = make_engine(db)
    table = sa.Table("rows", sa.MetaData(), sa.Column("n", sa.Integer), sa.Column("text", sa.Text))
    with engine.begin() as conn:
        table.create(conn)
        conn.execute(sa.insert(table), [{"n": n, "text": "x"} for n in range(5)])
        conn.exec_driver_sql("CREATE FUNCTION slow() RETURNS trigger AS $$ BEGIN PERFORM pg_sleep(0.2); "
                             "RETURN NEW; END $$ LANGUAGE plpgsql")
        conn.exec_driver_sql("CREATE TRIGGER slow BEFORE INSERT OR UPDATE ON rows FOR EACH ROW EXECUTE FUNCTION slow()")
    ended: list[int] = []

    def end_the_running_session() -> None:
        active = f"SELECT count(*) FROM pg_stat_activity WHERE usename = '{role}' AND state = 'active'"
        while not ended:
            with admin.connect() as conn:
                if conn.exec_driver_sql(active).scalar():
                    ended.append(_terminate(admin, role))

    killer = threading.Thread(target=end_the_running_session)
    try:
        with caplog.at_level(logging.ERROR, logger="sqlalchemy.pool"):
            with pytest.raises(sa.exc.OperationalError), engine.begin() as conn:
                killer.start()
                if write == "copy":
                    bulk_insert(conn, table, [(n, "a") for n in range(5, 10)])
                else:
                    conn.execute(sa.update(table).where(table.c.n == sa.bindparam("k")).values(text="b"),
                                 [{"k": n} for n in range(5)])
            killer.join()
        assert ended and ended[0] >= 1
        assert [r.getMessage() for r in caplog.records if r.name.startswith("sqlalchemy")] == []
        with engine.begin() as conn:  # the next transaction has a new session; nothing of the broken one stayed
            assert conn.execute(sa.select(table.c.n).where(table.c.text == "x")).scalars().all() == list(range(5))
            assert conn.execute(sa.select(sa.func.count()).select_from(table)).scalar() == 5
    finally:
        ended.append(0)
        engine.dispose()


def test_a_job_with_a_single_committed_page_resumes_after_it(tmp_path):
    """Page ids go on after the highest stored one, also when that is page 0 (it was taken for 'none')."""
    from structcrawl.core.features import extract
    from structcrawl.store import CrawlStore, PageRecord, explorer_for

    db, seed = f"sqlite:///{tmp_path / 'one.db'}", "http://h.example/"
    params = {"strategy": "densest", "batch_size": 10}

    def crawl_one_batch(fresh: bool) -> bool:
        store = CrawlStore(db)
        session = store.open("one", seed, params)
        assert session.resumed is not fresh
        explorer = explorer_for(seed, params)
        session.restore(explorer)
        batch = explorer.next_batch()
        seq = session.next_seq
        session.writer.issue(seq, batch.key, batch.urls, explorer.updates)
        body = b"<html><body><ul><li><a href='/a'>a</a></li><li><a href='/b'>b</a></li></ul>%s</body></html>"
        feats = extract(body % (b"" if fresh else b"<p>another page</p>"), batch.urls[0])
        explorer.complete(batch, [feats])
        session.writer.complete(seq, [PageRecord(0, batch.urls[0], feats, explorer.model.page_class[feats.url])])
        ok = session.close("stopped", "shutdown")
        store.dispose()
        return ok

    assert crawl_one_batch(fresh=True)
    assert crawl_one_batch(fresh=False)  # was: UNIQUE constraint failed: sc_pages.job_id, sc_pages.id
    store = CrawlStore(db)
    try:
        assert store.job("one").counts["pages"] == 2
    finally:
        store.dispose()
