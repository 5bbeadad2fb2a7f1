"""Tables of the crawl store (SQLAlchemy Core), engines, and the schema version.

Every table name starts with ``sc_`` so the store can live in a database that
holds other things.  Rows of one crawl share a ``job_id``.

* ``sc_meta`` — ``schema_version`` (and nothing else yet).
* ``sc_jobs`` — one row per job: name, seed URL, strategy, parameters (JSON),
  status (``running``/``stopped``/``finished``), stop reason, the crawl
  figures of the last commit (JSON), timestamps, and the lock: owner token,
  pid, host name and heartbeat.
* ``sc_batches`` — every batch the frontier handed out, in pop order
  (``seq``): its link collection (``class_id``, ``path``; NULL for the seed),
  its URLs, ``popped_after`` (how many model updates had run when it was
  popped) and ``state``: ``issued`` when handed out, ``completed`` in the same
  transaction that writes its pages, links, failures and redirects.
* ``sc_pages`` — one row per page handed to a model step (in step order):
  final and requested URL, batch, position in the batch, HTTP status, fetch
  time, class (kept current when refinement merges classes; NULL for a page
  the model did not take — a copy of a page modelled before), its tag-path set,
  ``truncated`` flag and title.
* ``sc_links`` — UXClust's tuple table (UXClust §4.1): source page, position
  in document order, target URL, exact XPath, link-collection path.
  ``ix_sc_links_xpath`` (job, xpath, target) serves grouping by inbound XPath.
* ``sc_redirects`` (requested → final URL) and ``sc_failures`` (URL, reason),
  per batch.
* Dictionaries, per job: ``sc_urls``, ``sc_paths`` (link-collection paths),
  ``sc_xpaths`` and ``sc_tagsets`` (distinct tag-path sets, zlib-compressed,
  each with the page's element paths marked ``@``: ``writer.stored_paths``):
  link rows are five integers, and the pages of one template share one tag-path
  set row.
* ``sc_bodies`` — the HTML of the few member pages per class that the model's
  fields and records are computed from.
"""

from __future__ import annotations

import datetime as _dt
import os
from typing import Any

import sqlalchemy as sa
from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    DateTime,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    SmallInteger,
    String,
    Table,
    Text,
    event,
)
from sqlalchemy.engine import Engine, make_url

#: Bump on any change of the tables below; older or newer databases are refused.
SCHEMA_VERSION = 2  # 2: sc_pages.title

metadata = MetaData()

meta = Table(
    "sc_meta",
    metadata,
    Column("key", String(64), primary_key=True),
    Column("value", Text, nullable=False),
)

jobs = Table(
    "sc_jobs",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(200), nullable=False, unique=True),
    Column("seed_url", Text, nullable=False),
    Column("strategy", String(32), nullable=False),
    Column("parameters", JSON, nullable=False),
    Column("status", String(16), nullable=False),  # running / stopped / finished
    Column("stop_reason", String(200)),
    Column("crawl", JSON),  # crawl figures of the last commit (pages requested, started …)
    Column("runs", Integer, nullable=False, default=0),
    # model updates when the frontier last had nothing to hand out (a pop gave None) after
    # the last batch was popped: replayed so the frontier's cursors end exactly as the crawl's
    Column("idle_after", Integer),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    Column("lock_token", String(64)),
    Column("lock_pid", Integer),
    Column("lock_host", String(255)),
    Column("lock_heartbeat", DateTime(timezone=True)),
)

batches = Table(
    "sc_batches",
    metadata,
    Column("job_id", Integer, primary_key=True, autoincrement=False),
    Column("seq", Integer, primary_key=True, autoincrement=False),
    Column("class_id", Integer),  # NULL: the seed batch
    Column("path", Text),
    Column("urls", JSON, nullable=False),
    Column("popped_after", Integer, nullable=False),
    Column("state", String(10), nullable=False),  # issued / completed
    Column("issued_at", DateTime(timezone=True), nullable=False),
    Column("completed_at", DateTime(timezone=True)),
)


def _strings(name: str, column: str) -> Table:
    """A job's distinct strings of one kind; other tables refer to them by ``id``."""
    return Table(
        name,
        metadata,
        Column("job_id", Integer, primary_key=True, autoincrement=False),
        Column("id", Integer, primary_key=True, autoincrement=False),
        Column(column, Text, nullable=False),
        sqlite_with_rowid=False,
    )


urls = _strings("sc_urls", "url")
paths = _strings("sc_paths", "path")  # link-collection paths
xpaths = _strings("sc_xpaths", "xpath")  # exact link XPaths

tagsets = Table(
    "sc_tagsets",
    metadata,
    Column("job_id", Integer, primary_key=True, autoincrement=False),
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("size", Integer, nullable=False),
    Column("paths", LargeBinary, nullable=False),  # zlib("\n".join(sorted(tag paths)))
    sqlite_with_rowid=False,
)

pages = Table(
    "sc_pages",
    metadata,
    Column("job_id", Integer, primary_key=True, autoincrement=False),
    Column("id", Integer, primary_key=True, autoincrement=False),  # per job, in step order
    Column("url_id", Integer, nullable=False),  # final URL
    Column("requested_id", Integer, nullable=False),
    Column("batch_seq", Integer, nullable=False),
    Column("pos", Integer, nullable=False),  # index of the requested URL in the batch
    Column("status", SmallInteger),
    Column("fetched_at", DateTime(timezone=True)),
    Column("class_id", Integer),  # its class now; NULL: not modelled (a copy of a page modelled before)
    Column("tagset_id", Integer, nullable=False),
    Column("truncated", Boolean, nullable=False, default=False),
    Column("n_links", Integer, nullable=False),
    Column("title", Text),  # <title>, else first <h1> (core.features): the report names classes by it
    Index("ix_sc_pages_url", "job_id", "url_id"),
    Index("ix_sc_pages_batch", "job_id", "batch_seq"),
    sqlite_with_rowid=False,
)

links = Table(
    "sc_links",
    metadata,
    Column("job_id", Integer, primary_key=True, autoincrement=False),
    Column("page_id", Integer, primary_key=True, autoincrement=False),  # source page (sc_pages.id)
    Column("pos", Integer, primary_key=True, autoincrement=False),  # document order
    Column("target_id", Integer, nullable=False),
    Column("xpath_id", Integer, nullable=False),
    Column("path_id", Integer, nullable=False),
    Index("ix_sc_links_xpath", "job_id", "xpath_id", "target_id"),
    sqlite_with_rowid=False,
)

redirects = Table(
    "sc_redirects",
    metadata,
    Column("job_id", Integer, primary_key=True, autoincrement=False),
    Column("batch_seq", Integer, primary_key=True, autoincrement=False),
    Column("requested_id", Integer, primary_key=True, autoincrement=False),
    Column("final_id", Integer, nullable=False),
)

failures = Table(
    "sc_failures",
    metadata,
    Column("job_id", Integer, primary_key=True, autoincrement=False),
    Column("batch_seq", Integer, primary_key=True, autoincrement=False),
    Column("url_id", Integer, primary_key=True, autoincrement=False),
    Column("reason", String(200), nullable=False),
)

#: The HTML text of the member pages chosen for the classes' fields and records
#: (sitemodel.PageBodies, zlib-compressed UTF-8).  Added without a version bump: a
#: database made before it gets it on open (ensure_schema), and its jobs export with no fields.
bodies = Table(
    "sc_bodies",
    metadata,
    Column("job_id", Integer, primary_key=True, autoincrement=False),
    Column("url", Text, primary_key=True),
    Column("body", LargeBinary, nullable=False),
)

#: Tables holding rows of one job (everything but sc_meta and sc_jobs), children first.
JOB_TABLES = (links, pages, redirects, failures, batches, tagsets, xpaths, paths, urls, bodies)


class StoreError(Exception):
    """An expected store failure (bad URL, unreachable database, locked job …): one line for the user."""


class SchemaVersionError(StoreError):
    """The database was written by another version of the store."""


def utcnow() -> _dt.datetime:
    return _dt.datetime.now(_dt.timezone.utc)


def as_utc(value: _dt.datetime | None) -> _dt.datetime | None:
    """SQLite gives naive datetimes back: they are UTC."""
    if value is None:
        return None
    if value.tzinfo is None:
        return value.replace(tzinfo=_dt.timezone.utc)
    return value.astimezone(_dt.timezone.utc)


def normalize_db_url(url: str) -> str:
    """A SQLAlchemy URL; a bare file path means a SQLite file, ``postgresql://`` means psycopg 3."""
    text = str(url).strip()
    if not text:
        raise StoreError("empty database URL (use e.g. sqlite:///shop.db or postgresql+psycopg://user@host/db)")
    if "://" not in text:
        return "sqlite:///" + text
    if text.startswith(("postgresql://", "postgres://")):
        return "postgresql+psycopg://" + text.split("://", 1)[1]
    return text


def redact(url: str) -> str:
    """The URL without its password, for messages."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - only for display
        return url


def make_engine(url: str) -> Engine:
    """An engine for ``url``: SQLite in WAL mode (readers never block the crawl), or PostgreSQL."""
    url = normalize_db_url(url)
    try:
        parsed = make_url(url)
    except sa.exc.ArgumentError as exc:
        raise StoreError(f"bad database URL {url!r}: {exc}") from None
    backend = parsed.get_backend_name()
    kwargs: dict[str, Any] = {}
    if backend == "sqlite":
        database = parsed.database or ""
        if database and database != ":memory:" and not database.startswith("file:"):
            directory = os.path.dirname(os.path.abspath(database))
            if not os.path.isdir(directory):
                raise StoreError(f"cannot open database {url}: directory {directory} does not exist")
        kwargs["connect_args"] = {"timeout": 60}
    elif backend == "postgresql":
        kwargs["pool_pre_ping"] = True
    try:
        engine = sa.create_engine(url, **kwargs)
    except (sa.exc.ArgumentError, sa.exc.NoSuchModuleError, ImportError) as exc:
        raise StoreError(f"cannot use database URL {redact(url)}: {exc}") from None
    if backend == "postgresql":
        event.listen(engine, "handle_error", _server_ended_the_session)
    if backend == "sqlite":

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:  # pragma: no cover - trivial
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")  # readers (export, jobs) never block the writer
            cur.execute("PRAGMA synchronous=NORMAL")  # a process crash loses nothing committed
            cur.execute("PRAGMA busy_timeout=60000")
            cur.execute("PRAGMA cache_size=-65536")  # 64 MiB: index inserts of a large job stay in memory
            cur.close()

    return engine


#: SQLSTATE classes of a session the server ended or lost: connection exceptions, operator
#: intervention (``pg_terminate_backend``: 57P01, a server shutting down)
SESSION_ENDED_SQLSTATES = ("08", "57P")


def session_ended(exc: BaseException) -> bool:
    """A PostgreSQL error that ends the session (the connection is useless, the server may be fine)."""
    return (getattr(exc, "sqlstate", None) or "").startswith(SESSION_ENDED_SQLSTATES)


def _server_ended_the_session(context: sa.engine.ExceptionContext) -> None:
    # psycopg calls a connection broken only once it reads the closed socket; the server's FATAL
    # message can come first (inside an executemany's pipeline), SQLAlchemy then keeps the
    # connection, resets it on return to its pool and logs the failed rollback with a traceback.
    # A disconnect is invalidated instead (SQLAlchemy's documented handle_error hook).
    if session_ended(context.original_exception):
        context.is_disconnect = True


def _describe_connect_error(url: str, exc: BaseException) -> str:
    text = str(getattr(exc, "orig", None) or exc).strip().splitlines()
    first = text[0] if text else type(exc).__name__
    return f"cannot connect to database {redact(url)}: {first}"


def ensure_schema(engine: Engine, create: bool = True) -> None:
    """Check (and, if ``create``, create) the tables; SchemaVersionError on a version mismatch."""
    url = str(engine.url)
    try:
        with engine.connect() as conn:
            has_meta = sa.inspect(conn).has_table(meta.name)
            version = None
            if has_meta:
                version = conn.execute(sa.select(meta.c.value).where(meta.c.key == "schema_version")).scalar()
    except sa.exc.OperationalError as exc:
        raise StoreError(_describe_connect_error(url, exc)) from None
    except sa.exc.DatabaseError as exc:
        raise StoreError(_describe_connect_error(url, exc)) from None
    if version is None:
        if not create:
            raise StoreError(f"no structcrawl crawl store in {redact(url)} (no sc_meta table): nothing to read")
        _create(engine)
        return
    check_version(version, url)
    if create:
        bodies.create(engine, checkfirst=True)


def check_version(version: Any, url: str) -> None:
    try:
        found = int(version)
    except (TypeError, ValueError):
        raise SchemaVersionError(
            f"database {redact(url)} has an unreadable structcrawl schema version {version!r}; "
            "use a new database for this structcrawl"
        ) from None
    if found < SCHEMA_VERSION:
        raise SchemaVersionError(
            f"database {redact(url)} has structcrawl schema version {found}, older than this structcrawl's "
            f"{SCHEMA_VERSION}: export its jobs with the structcrawl that wrote them, then use a new database"
        )
    if found > SCHEMA_VERSION:
        raise SchemaVersionError(
            f"database {redact(url)} has structcrawl schema version {found}, newer than this structcrawl's "
            f"{SCHEMA_VERSION}: upgrade structcrawl (pip install -U structcrawl) to use it"
        )


def _create(engine: Engine) -> None:
    try:
        metadata.create_all(engine, checkfirst=True)
    except sa.exc.DatabaseError:
        pass  # another process created them at the same moment: the version check below decides
    try:
        with engine.begin() as conn:
            conn.execute(sa.insert(meta).values(key="schema_version", value=str(SCHEMA_VERSION)))
    except sa.exc.IntegrityError:
        pass  # a concurrent creator wrote it
    with engine.connect() as conn:
        version = conn.execute(sa.select(meta.c.value).where(meta.c.key == "schema_version")).scalar()
    check_version(version, str(engine.url))
