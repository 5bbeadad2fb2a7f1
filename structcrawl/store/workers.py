"""A harvest job shared by many worker processes (scale-out on scrapy-redis, issue 15).

The job is a row of ``sc_jobs`` like any harvest (``parameters["kind"] ==
"harvest"``, the model's digest and the target classes), but it holds no lock:
every worker joins it, and one with another model or other targets is refused.
Its frontier lives in Redis (:mod:`structcrawl.crawling.distributed`); what
lives here, in two tables of its own:

* ``sc_harvest_workers`` — one row per worker process: host, pid, when it
  started, its last heartbeat, pages fetched and items stored, its status.
* ``sc_harvest_items`` — one row per target page, its item as JSON.  The
  primary key (job, URL) is the harvest's **exactly-once** point: a page a
  dead worker's request was fetched again for, or two requests that redirect to
  one page, insert once; the second insert is refused by the database
  (``ON CONFLICT DO NOTHING``) and its item is not emitted.

PostgreSQL only: many processes on many machines write at once (SQLite stays
the single-process store of :mod:`structcrawl.store.harvest`).
"""

from __future__ import annotations

import datetime as _dt
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy import JSON, Column, DateTime, Integer, MetaData, String, Table, Text
from sqlalchemy.dialects.postgresql import insert as pg_insert

from structcrawl.store import jobs as J
from structcrawl.store import schema as S
from structcrawl.store.schema import StoreError, as_utc, utcnow

#: PostgreSQL advisory lock key held while a worker creates the tables ("sc" "hw" in ASCII).
SCHEMA_LOCK = 0x73636877
#: Seconds between two heartbeats of a worker's row (its item and page counts go with it).
HEARTBEAT_EVERY = 5.0

metadata = MetaData()

harvest_workers = Table(
    "sc_harvest_workers",
    metadata,
    Column("job_id", Integer, primary_key=True, autoincrement=False),
    Column("worker", String(100), primary_key=True),
    Column("host", String(255), nullable=False),
    Column("pid", Integer, nullable=False),
    Column("status", String(16), nullable=False),  # running / stopped / finished
    Column("stop_reason", String(200)),
    Column("started_at", DateTime(timezone=True), nullable=False),
    Column("heartbeat", DateTime(timezone=True), nullable=False),
    Column("pages", Integer, nullable=False),
    Column("items", Integer, nullable=False),
)

harvest_items = Table(
    "sc_harvest_items",
    metadata,
    Column("job_id", Integer, primary_key=True, autoincrement=False),
    Column("url", Text, primary_key=True),
    Column("class_id", Integer),
    Column("worker", String(100), nullable=False),
    Column("stored_at", DateTime(timezone=True), nullable=False),
    Column("item", JSON, nullable=False),
)


def check_shared_url(url: str) -> str:
    """The normalised database URL of a shared harvest; StoreError unless it is PostgreSQL."""
    url = S.normalize_db_url(url)
    if not url.startswith("postgresql"):
        raise StoreError(f"a harvest shared by workers on Redis keeps its state in PostgreSQL, not {S.redact(url)}: "
                         "give a postgresql+psycopg:// URL")
    return url


class SharedHarvestStore:
    """One worker's view of a shared harvest job: join it, store items once, keep its row alive."""

    def __init__(self, url: str, name: str, seed_url: str, parameters: Mapping[str, Any], worker: str | None,
                 *, fresh: bool = False) -> None:
        """Join job ``name`` (create it, or start it over if ``fresh``) as ``worker`` (None: create or
        start over the job only, as ``structcrawl harvest --workers 0`` does)."""
        self.url = check_shared_url(url)
        self.engine = S.make_engine(self.url)
        self.worker = worker
        try:
            with self.engine.connect() as lock:
                # workers starting together would race to create the same tables
                lock.execute(sa.select(sa.func.pg_advisory_lock(SCHEMA_LOCK)))
                try:
                    S.ensure_schema(self.engine, create=True)
                    metadata.create_all(self.engine, checkfirst=True)
                finally:
                    lock.execute(sa.select(sa.func.pg_advisory_unlock(SCHEMA_LOCK)))
            self.job_id = self._join(name, seed_url, {**parameters, "kind": J.HARVEST_KIND,
                                                      "strategy": J.HARVEST_KIND, "shared": True}, fresh)
            now = utcnow()
            if worker is not None:
                with self.engine.begin() as conn:
                    conn.execute(sa.insert(harvest_workers).values(
                        job_id=self.job_id, worker=worker, host=J.hostname(), pid=os.getpid(), status=J.RUNNING,
                        started_at=now, heartbeat=now, pages=0, items=0))
        except BaseException:
            self.engine.dispose()
            raise
        self.name = name
        self.pages = 0
        self.items = 0
        self._beat = time.monotonic()
        self._counting = threading.Lock()  #: items are stored in threads of the worker (spiders/harvest.py)

    def _join(self, name: str, seed_url: str, parameters: dict[str, Any], fresh: bool) -> int:
        """The job's id: created if new, started over if ``fresh``; refused if it is another harvest."""
        for _attempt in range(5):
            with self.engine.connect() as conn:
                info = J.get_job(conn, name)
            now = utcnow()
            if info is None:
                try:
                    with self.engine.begin() as conn:
                        conn.execute(sa.insert(S.jobs).values(
                            name=name, seed_url=seed_url, strategy=J.HARVEST_KIND, parameters=parameters,
                            status=J.RUNNING, stop_reason=None, crawl={}, runs=1, created_at=now, updated_at=now))
                except sa.exc.IntegrityError:
                    continue  # another worker created it meanwhile: join that one
                continue
            if not info.parameters.get("shared"):
                raise StoreError(f"job {name!r} of {S.redact(self.url)} is not a harvest shared on Redis: "
                                 "name this one with --job NAME")
            if fresh:
                with self.engine.begin() as conn:
                    for table in (harvest_items, harvest_workers):
                        conn.execute(sa.delete(table).where(table.c.job_id == info.id))
                    conn.execute(sa.update(S.jobs).where(S.jobs.c.id == info.id).values(
                        parameters=parameters, status=J.RUNNING, stop_reason=None, crawl={}, runs=1,
                        created_at=now, updated_at=now))
                return info.id
            old = {k: info.parameters.get(k) for k in ("model", "targets")}
            new = {k: parameters.get(k) for k in ("model", "targets")}
            if old != new:
                raise StoreError(f"harvest job {name!r} runs with model {old['model']} and classes "
                                 f"{old['targets']}, not {new['model']} and {new['targets']}: a worker must "
                                 "use the job's model and classes")
            if info.status == J.FINISHED:
                raise StoreError(f"harvest job {name!r} is finished; harvest again from scratch with --fresh "
                                 "(-a fresh=true)")
            with self.engine.begin() as conn:
                conn.execute(sa.update(S.jobs).where(S.jobs.c.id == info.id).values(
                    status=J.RUNNING, updated_at=now))
            return info.id
        raise StoreError(f"harvest job {name!r}: could not create or join it")

    def item(self, url: str, class_id: int | None, item: Mapping[str, Any]) -> bool:
        """Store a target page's item; False if the job holds that page already (it is not emitted again).
        Thread-safe: the engine's pool gives each thread its own connection."""
        with self.engine.begin() as conn:
            # not waiting for the WAL flush: a worker's death cannot undo a commit, only a crash of
            # PostgreSQL itself loses its last ~0.6 s (3 × wal_writer_delay); waiting costs ~10 ms an item
            conn.exec_driver_sql("SET LOCAL synchronous_commit TO OFF")
            res = conn.execute(pg_insert(harvest_items).values(
                job_id=self.job_id, url=url, class_id=class_id, worker=self.worker, stored_at=utcnow(),
                item=dict(item)).on_conflict_do_nothing().returning(harvest_items.c.url))
            stored = res.first() is not None
            with self._counting:
                self.items += stored
            self._heartbeat(conn)
        return stored

    def fetched(self) -> None:
        """One more page fetched by this worker (counted in its row at the next heartbeat)."""
        self.pages += 1
        if time.monotonic() - self._beat >= HEARTBEAT_EVERY:
            self.heartbeat()

    def heartbeat(self) -> None:
        with self.engine.begin() as conn:
            self._heartbeat(conn, force=True)

    def _heartbeat(self, conn: sa.Connection, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._beat < HEARTBEAT_EVERY:
            return
        self._beat = now
        conn.execute(sa.update(harvest_workers).where(harvest_workers.c.job_id == self.job_id,
                                                      harvest_workers.c.worker == self.worker)
                     .values(heartbeat=utcnow(), pages=self.pages, items=self.items))

    def dispose(self) -> None:
        self.engine.dispose()

    def close(self, reason: str | None, finished: bool, figures: Mapping[str, Any]) -> None:
        """This worker stops; ``finished``: the whole harvest is done (nothing queued, nothing leased)."""
        now = utcnow()
        with self.engine.begin() as conn:
            conn.execute(sa.update(harvest_workers).where(harvest_workers.c.job_id == self.job_id,
                                                          harvest_workers.c.worker == self.worker)
                         .values(heartbeat=now, pages=self.pages, items=self.items, stop_reason=reason,
                                 status=J.FINISHED if finished else J.STOPPED))
            if finished:
                conn.execute(sa.update(S.jobs).where(S.jobs.c.id == self.job_id).values(
                    status=J.FINISHED, stop_reason=reason, updated_at=now, crawl={"document": dict(figures)}))
        self.engine.dispose()


@dataclass
class WorkerInfo:
    worker: str
    host: str
    pid: int
    status: str
    stop_reason: str | None
    started_at: _dt.datetime
    heartbeat: _dt.datetime
    pages: int
    items: int

    def alive(self, stale_after: float, now: _dt.datetime | None = None) -> bool:
        """Running, with a heartbeat younger than ``stale_after`` s (on this host: its process exists)."""
        if self.status != J.RUNNING:
            return False
        if self.host == J.hostname() and not J.pid_alive(self.pid):
            return False
        return ((now or utcnow()) - self.heartbeat).total_seconds() <= stale_after


def job_workers(conn: sa.Connection, job_id: int) -> list[WorkerInfo]:
    """The workers of a shared harvest job, in the order they started (none for other jobs)."""
    if not sa.inspect(conn).has_table(harvest_workers.name):
        return []
    w = harvest_workers
    rows = conn.execute(sa.select(w).where(w.c.job_id == job_id).order_by(w.c.started_at, w.c.worker))
    out = []
    for row in rows:
        m = dict(row._mapping)
        m.pop("job_id")
        m["started_at"], m["heartbeat"] = as_utc(m["started_at"]), as_utc(m["heartbeat"])
        out.append(WorkerInfo(**m))
    return out


def stored_items(conn: sa.Connection, job_id: int) -> list[dict[str, Any]]:
    """The items of a shared harvest job, in the order they were stored."""
    i = harvest_items
    return [dict(r.item) for r in conn.execute(sa.select(i.c.item).where(i.c.job_id == job_id)
                                                 .order_by(i.c.stored_at, i.c.url))]


__all__ = ["SharedHarvestStore", "WorkerInfo", "check_shared_url", "job_workers", "stored_items",
           "harvest_items", "harvest_workers"]
