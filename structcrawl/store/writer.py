"""The write path: one writer thread per crawl, one transaction per drain of its queue.

The crawl (Scrapy's reactor thread, or any driver of the Explorer) only puts
small tuples on a queue — references to the immutable ``PageFeatures`` it
already has, no row building and no I/O — so a slow disk or database never
stalls crawling.  The writer thread takes everything queued (up to
``max_ops`` operations, gathering for ``linger`` seconds after the first: a
group commit), turns it into rows and writes them in **one transaction**: the
batch rows handed out, the completed batches' pages, links, failures and
redirects with their batch flipped to ``completed``, the crawl figures and the
lock heartbeat.  Transactions commit in queue order, so the
database always holds a prefix of the crawl's history — what a kill -9 leaves
is consistent by construction.

Link rows are five integers: URLs, link-collection paths, XPaths and tag-path
sets go through per-job dictionaries (in memory here, rows in ``sc_urls`` …
written in the same transaction as their first use).
"""

from __future__ import annotations

import datetime as _dt
import logging
import queue
import sqlite3
import sys
import threading
import time
import zlib
from typing import Any, Hashable, Iterable, Mapping, NamedTuple, Sequence

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from structcrawl.core.features import PageFeatures
from structcrawl.store import schema as S
from structcrawl.store.jobs import DEFAULT_HEARTBEAT
from structcrawl.store.schema import StoreError, utcnow

logger = logging.getLogger(__name__)

#: Retries of a transaction the database refused (0.5 s, then doubling: 15.5 s in all).
DEFAULT_RETRIES = 5


class LockLostError(StoreError):
    """Another process took this job's lock: this one must stop writing."""


class PageRecord(NamedTuple):
    """A page handed to a model step, as the crawl hands it to the writer."""

    pos: int  #: index of the requested URL in its batch
    requested: str
    features: PageFeatures
    class_id: int | None  #: its class right after the model step (None: not modelled)
    status: int | None = None  #: HTTP status
    fetched_at: float | None = None  #: time.time() of the response


class Dictionary:
    """value -> id for one job, with the ids added by the transaction being built."""

    __slots__ = ("ids", "next_id", "new")

    def __init__(self, ids: dict[Hashable, int] | None = None) -> None:
        self.ids: dict[Hashable, int] = ids or {}
        self.next_id = max(self.ids.values(), default=-1) + 1
        self.new: list[tuple[int, Hashable]] = []

    def id(self, value: Hashable) -> int:
        i = self.ids.get(value)
        if i is None:
            i = self.ids[value] = self.next_id
            self.next_id += 1
            self.new.append((i, value))
        return i

    def commit(self) -> None:
        self.new = []

    def rollback(self) -> None:
        for _i, value in self.new:
            del self.ids[value]
        self.next_id -= len(self.new)
        self.new = []


class Dictionaries(NamedTuple):
    urls: Dictionary
    paths: Dictionary
    xpaths: Dictionary
    tagsets: Dictionary

    @classmethod
    def empty(cls) -> "Dictionaries":
        return cls(Dictionary(), Dictionary(), Dictionary(), Dictionary())

    def all(self) -> tuple[Dictionary, ...]:
        return (self.urls, self.paths, self.xpaths, self.tagsets)


#: Marks the element paths in a page's stored tag-path set: one ``sc_tagsets`` row holds both
#: (pages of one template share the pair); a tag path never starts with it.
ELEMENT_MARK = "@"


def stored_paths(tag_paths: frozenset[str], element_paths: frozenset[str]) -> frozenset[str]:
    """The set a page's ``sc_tagsets`` row holds: its tag paths and its marked element paths."""
    return tag_paths | frozenset(ELEMENT_MARK + p for p in element_paths) if element_paths else tag_paths


def split_paths(stored: Iterable[str]) -> tuple[frozenset[str], frozenset[str]]:
    """(tag paths, element paths) of a stored set (``stored_paths``); interned."""
    intern = sys.intern
    tags, elements = [], []
    for p in stored:
        if p.startswith(ELEMENT_MARK):
            elements.append(intern(p[1:]))
        else:
            tags.append(intern(p))
    return frozenset(tags), frozenset(elements)


def pack_tagset(paths: Iterable[str]) -> bytes:
    return zlib.compress("\n".join(sorted(paths)).encode("utf-8"), 6)


def unpack_tagset(blob: bytes) -> list[str]:
    text = zlib.decompress(blob).decode("utf-8")
    return text.split("\n") if text else []


def _ts(t: float | None) -> _dt.datetime | None:
    return None if t is None else _dt.datetime.fromtimestamp(t, _dt.timezone.utc)


class StoreWriter:
    """The single writer of one job (whose lock ``token`` this process holds)."""

    def __init__(
        self,
        engine: Engine,
        job_id: int,
        token: str,
        dictionaries: Dictionaries | None = None,
        *,
        heartbeat: float = DEFAULT_HEARTBEAT,
        max_ops: int = 256,
        retries: int = DEFAULT_RETRIES,
        linger: float = 0.1,
    ) -> None:
        self.engine = engine
        self.job_id = job_id
        self.token = token
        self.dicts = dictionaries or Dictionaries.empty()
        self._used = self.dicts
        self.next_page_id = 0
        self._next_page_id = 0
        self.heartbeat = heartbeat
        self.max_ops = max_ops
        self.retries = retries
        self.linger = linger
        self.error: BaseException | None = None
        self._q: queue.SimpleQueue = queue.SimpleQueue()
        self._cond = threading.Condition()
        self._put = 0
        self._done = 0
        self._closed = False
        self._thread = threading.Thread(target=self._run, name=f"structcrawl-store-{job_id}", daemon=True)
        # figures
        self.transactions = 0
        self.rows = 0
        self.txn_max = 0.0
        self.txn_total = 0.0
        self.backlog_max = 0
        self._thread.start()

    # -- the crawl's side: cheap, never blocks --------------------------------------
    def _enqueue(self, op: tuple) -> None:
        if self._closed or self.error is not None:
            return
        with self._cond:
            self._put += 1
            backlog = self._put - self._done
        if backlog > self.backlog_max:
            self.backlog_max = backlog
        self._q.put(op)

    def issue(self, seq: int, key: tuple[int, str] | None, urls: Sequence[str], popped_after: int) -> None:
        """A batch was handed out (``urls``: all the frontier gave, before any max_pages cut)."""
        self._enqueue(("issue", seq, key, tuple(urls), popped_after, time.time()))

    def complete(
        self,
        seq: int,
        pages: Sequence[PageRecord],
        failed: Mapping[str, str] | Iterable[tuple[str, str]] = (),
        redirects: Mapping[str, str] | Iterable[tuple[str, str]] = (),
        crawl: Mapping[str, Any] | None = None,
        merges: Iterable[tuple[int, int]] = (),
    ) -> None:
        """The model step of batch ``seq`` ran.

        ``pages``: every page handed to the step, in the order handed (replay hands
        them again); ``failed``: url -> reason; ``redirects``: requested -> final URL,
        in batch order; ``merges``: (kept, merged) class pairs the step's refinement
        made (the pages of ``merged`` are relabelled)."""
        failed = list(failed.items()) if isinstance(failed, Mapping) else list(failed)
        redirects = list(redirects.items()) if isinstance(redirects, Mapping) else list(redirects)
        self._enqueue(("complete", seq, list(pages), failed, redirects, dict(crawl) if crawl else None, time.time(),
                       list(merges)))

    def idle(self, updates: int) -> None:
        """The frontier had nothing to hand out after ``updates`` model updates (a pop gave None)."""
        self._enqueue(("idle", updates))

    def figures(self, crawl: Mapping[str, Any]) -> None:
        """New crawl figures (written with the next transaction)."""
        self._enqueue(("crawl", dict(crawl)))

    def set_dictionaries(self, dictionaries: Dictionaries, next_page_id: int = 0) -> None:
        """Install the job's dictionaries and next page id (read after the replay); before the first data operation."""
        self.next_page_id = next_page_id
        self.dicts = dictionaries

    @property
    def backlog(self) -> int:
        return self._put - self._done

    # -- end ---------------------------------------------------------------------------
    def flush(self, timeout: float | None = None) -> bool:
        """Wait until everything queued so far is committed (or failed)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            target = self._put
            while self._done < target and self._thread.is_alive():
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._cond.wait(left)
        return self._done >= target

    def close(self, status: str | None = None, stop_reason: str | None = None,
              crawl: Mapping[str, Any] | None = None, timeout: float | None = None) -> bool:
        """Write what is queued, then (with ``status``) the job's final state and release the lock."""
        if not self._closed:
            if self.error is None:
                with self._cond:
                    self._put += 1
                self._q.put(("close", status, stop_reason, dict(crawl) if crawl is not None else None))
            else:
                self._q.put(("stop",))
            self._closed = True
        self._thread.join(timeout)
        return not self._thread.is_alive() and self.error is None

    def stats(self) -> dict[str, Any]:
        return {
            "transactions": self.transactions,
            "rows": self.rows,
            "txn_max_ms": round(self.txn_max * 1000, 3),
            "txn_total_s": round(self.txn_total, 3),
            "backlog_max": self.backlog_max,
        }

    # -- the writer thread -------------------------------------------------------------
    def _run(self) -> None:
        while True:
            try:
                op = self._q.get(timeout=self.heartbeat)
            except queue.Empty:
                op = ("beat",)
            if op[0] == "stop":
                return
            ops = [op]
            stop = False
            # group commit: gather what comes within `linger` seconds into this transaction
            until = time.monotonic() + self.linger if op[0] != "beat" else 0.0
            while len(ops) < self.max_ops and ops[-1][0] != "close":
                try:
                    left = until - time.monotonic()
                    nxt = self._q.get(timeout=left) if left > 0 else self._q.get_nowait()
                except queue.Empty:
                    break
                if nxt[0] == "stop":
                    stop = True
                    break
                ops.append(nxt)
            try:
                self._write(ops)
            except BaseException as exc:  # noqa: BLE001 - reported to the crawl through .error
                self.error = exc
                logger.error("Crawl store: writing failed, nothing more will be stored: %s", one_line(exc))
            finally:
                with self._cond:
                    self._done += sum(1 for o in ops if o[0] != "beat")
                    self._cond.notify_all()
            if self.error is not None or stop or ops[-1][0] == "close":
                if self.error is not None:
                    with self._cond:  # unblock flush(): nothing more will be written
                        self._done = self._put
                        self._cond.notify_all()
                return

    def _write(self, ops: list[tuple]) -> None:
        delay = 0.5
        for attempt in range(self.retries + 1):
            try:
                t0 = time.perf_counter()
                n = self._transaction(ops)
                elapsed = time.perf_counter() - t0
            except LockLostError:
                self._rollback()
                raise
            except (sa.exc.OperationalError, sa.exc.InterfaceError) as exc:
                self._rollback()
                if attempt == self.retries:
                    raise
                logger.warning("Crawl store: transaction failed (%s), retrying in %.1f s", one_line(exc), delay)
                time.sleep(delay)
                delay *= 2
                continue
            except BaseException:
                self._rollback()
                raise
            for d in self._used.all():
                d.commit()
            self.next_page_id = self._next_page_id
            self.transactions += 1
            self.rows += n
            self.txn_total += elapsed
            if elapsed > self.txn_max:
                self.txn_max = elapsed
            return

    def _rollback(self) -> None:
        for d in self._used.all():
            d.rollback()

    def _transaction(self, ops: list[tuple]) -> int:
        job = self.job_id
        urls, paths, xpaths, tagsets = self._used = self.dicts
        url_id, path_id, xpath_id, tagset_id = urls.id, paths.id, xpaths.id, tagsets.id
        now = utcnow()
        issued: dict[int, dict[str, Any]] = {}
        completed: list[dict[str, Any]] = []
        page_rows: list[tuple] = []
        link_rows: list[tuple] = []
        fail_rows: list[tuple] = []
        redirect_rows: list[tuple] = []
        crawl: dict[str, Any] | None = None
        close: tuple | None = None
        merges: list[tuple[int, int]] = []
        idle: int | None = None
        page_id = self.next_page_id
        for op in ops:
            kind = op[0]
            if kind == "issue":
                _, seq, key, batch_urls, popped_after, at = op
                issued[seq] = {
                    "job_id": job, "seq": seq, "class_id": key[0] if key else None, "path": key[1] if key else None,
                    "urls": list(batch_urls), "popped_after": popped_after, "state": "issued",
                    "issued_at": _ts(at), "completed_at": None,
                }
            elif kind == "complete":
                _, seq, records, failed, redirected, figures, at, merged = op
                merges.extend(merged)
                if seq in issued:
                    issued[seq]["state"] = "completed"
                    issued[seq]["completed_at"] = _ts(at)
                else:
                    completed.append({"b_job": job, "b_seq": seq, "b_at": _ts(at)})
                for rec in records:
                    feats = rec.features
                    pid = page_id
                    page_id += 1
                    page_rows.append((
                        job, pid, url_id(feats.url), url_id(rec.requested), seq, rec.pos, rec.status,
                        _ts(rec.fetched_at), rec.class_id,
                        tagset_id(stored_paths(feats.tag_paths, feats.element_paths)), bool(feats.truncated),
                        len(feats.links), feats.title or None,
                    ))
                    link_rows.extend(
                        (job, pid, i, url_id(link.url), xpath_id(link.xpath), path_id(link.path))
                        for i, link in enumerate(feats.links)
                    )
                for url, reason in failed:
                    fail_rows.append((job, seq, url_id(url), str(reason)[:200]))
                for requested, final in redirected:
                    redirect_rows.append((job, seq, url_id(requested), url_id(final)))
                if figures is not None:
                    crawl = figures
            elif kind == "crawl":
                crawl = op[1]
            elif kind == "idle":
                idle = op[1]
            elif kind == "close":
                close = op
                if op[3] is not None:
                    crawl = op[3]
        dict_rows = [
            (S.urls, [(job, i, v) for i, v in urls.new]),
            (S.paths, [(job, i, v) for i, v in paths.new]),
            (S.xpaths, [(job, i, v) for i, v in xpaths.new]),
            (S.tagsets, [(job, i, len(v), pack_tagset(v)) for i, v in tagsets.new]),
        ]
        jobs = S.jobs
        fence: dict[str, Any] = {"lock_heartbeat": now, "updated_at": now}
        if crawl is not None:
            fence["crawl"] = crawl
        if idle is not None:
            fence["idle_after"] = idle
        n = 0
        with self.engine.begin() as conn:
            res = conn.execute(
                sa.update(jobs).where(jobs.c.id == job, jobs.c.lock_token == self.token).values(**fence)
            )
            if res.rowcount != 1:
                raise LockLostError(
                    "this crawl lost the job's lock to another process (no heartbeat for too long?); stopping"
                )
            for table, rows in dict_rows:
                if rows:
                    n += bulk_insert(conn, table, rows)
            if issued:
                conn.execute(sa.insert(S.batches), list(issued.values()))
                n += len(issued)
            if completed:
                b = S.batches
                conn.execute(
                    sa.update(b)
                    .where(b.c.job_id == sa.bindparam("b_job"), b.c.seq == sa.bindparam("b_seq"))
                    .values(state="completed", completed_at=sa.bindparam("b_at")),
                    completed,
                )
                n += len(completed)
            for table, rows in ((S.pages, page_rows), (S.links, link_rows), (S.failures, fail_rows),
                                (S.redirects, redirect_rows)):
                if rows:
                    n += bulk_insert(conn, table, rows)
            p = S.pages
            for kept, merged in merges:
                conn.execute(sa.update(p).where(p.c.job_id == job, p.c.class_id == merged).values(class_id=kept))
            if close is not None and close[1] is not None:
                _, status, stop_reason, _crawl = close
                conn.execute(
                    sa.update(jobs).where(jobs.c.id == job, jobs.c.lock_token == self.token).values(
                        status=status, stop_reason=stop_reason, lock_token=None, lock_pid=None,
                        lock_host=None, lock_heartbeat=None,
                    )
                )
        self._next_page_id = page_id
        return n


def bulk_insert(conn: Connection, table: sa.Table, rows: list[tuple]) -> int:
    """Insert tuples in column order, the fastest way the driver has.

    PostgreSQL (psycopg 3): ``COPY … FROM STDIN`` inside the transaction.
    SQLite: the driver's ``executemany`` with tuples (values through the
    columns' bind processors, e.g. datetimes).  Others: Core executemany.
    """
    dialect = conn.dialect
    names = [c.name for c in table.columns]
    if dialect.name == "postgresql" and dialect.driver == "psycopg":
        cols = ", ".join(dialect.identifier_preparer.quote(n) for n in names)
        target = dialect.identifier_preparer.format_table(table)
        raw = conn.connection.driver_connection
        statement = f"COPY {target} ({cols}) FROM STDIN"
        try:
            with raw.cursor() as cur:
                with cur.copy(statement) as copy:
                    write = copy.write_row
                    for row in rows:
                        write(row)
        except dialect.dbapi.Error as exc:
            # the driver's own call: SQLAlchemy neither wraps its error (the writer retries
            # sa.exc.OperationalError) nor drops a connection the server ended
            if raw.broken or raw.closed or S.session_ended(exc):
                conn.invalidate(exc)
            raise sa.exc.DBAPIError.instance(statement, None, exc, dialect.dbapi.Error) from None
        return len(rows)
    if dialect.name == "sqlite":
        procs = _processors(table, dialect)
        if procs:
            rows = [tuple(p(v) if p is not None and v is not None else v for p, v in zip(procs, row)) for row in rows]
        # Many rows per statement: the driver releases the GIL around every
        # sqlite3_step, and a writer thread stepping row by row waits for the busy
        # crawl thread to hand it back each time (50 us/row instead of 4).
        ncols = len(names)
        per = max(1, min(_SQLITE_ROWS, _SQLITE_VARIABLES // ncols))
        head = f"INSERT INTO {table.name} ({', '.join(names)}) VALUES "
        one = "(" + ",".join("?" * ncols) + ")"
        full = len(rows) - len(rows) % per
        cursor = conn.connection.driver_connection.cursor()
        try:
            if full:
                cursor.executemany(
                    head + ",".join([one] * per),
                    [tuple(v for row in rows[i : i + per] for v in row) for i in range(0, full, per)],
                )
            if full < len(rows):
                rest = rows[full:]
                cursor.execute(head + ",".join([one] * len(rest)), tuple(v for row in rest for v in row))
        finally:
            cursor.close()
        return len(rows)
    conn.execute(sa.insert(table), [dict(zip(names, row)) for row in rows])
    return len(rows)


_PROCESSORS: dict[tuple[str, str], list | None] = {}
#: Rows per multi-row INSERT on SQLite, and its limit of bound variables (999 before 3.32).
_SQLITE_ROWS = 500
_SQLITE_VARIABLES = 32766 if sqlite3.sqlite_version_info >= (3, 32) else 999


def _processors(table: sa.Table, dialect: Any) -> list | None:
    key = (table.name, dialect.name)
    if key not in _PROCESSORS:
        procs = [c.type._cached_bind_processor(dialect) for c in table.columns]
        _PROCESSORS[key] = procs if any(p is not None for p in procs) else None
    return _PROCESSORS[key]


def one_line(exc: BaseException) -> str:
    """``Type: first line of the message`` (the driver's own error for SQLAlchemy's wrappers)."""
    text = str(getattr(exc, "orig", None) or exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"
