"""Harvest jobs in the crawl store: the pages a focused harvest fetched and the items it emitted.

A harvest is a job of ``sc_jobs`` like a structure crawl (same lock, same
``structcrawl jobs`` listing); its parameters carry ``"kind": "harvest"``, the
model's digest and the target classes, so a resume with another model or other
targets is refused.  Its history lives in two tables of its own, created on the
first harvest in a database (additive: structure jobs never touch them):

* ``sc_harvest_pages`` — one row per URL handed out and finished, in the order
  the harvest saw them (``seq``): final URL, class (NULL: no class or a
  failure), the collection it came from, referer, HTTP status, fetch time,
  whether it was an exploration and, for a target page, whether its item was
  **emitted** (handed to Scrapy's exporters and flushed).
* ``sc_harvest_links`` — every (URL, collection) sighting first seen on a page:
  what the harvest's frontier was fed, so a replay in ``seq`` order rebuilds it.

A page row and its sightings are one transaction, written before the page's
item goes to Scrapy; the item's ``emitted`` flag is set once Scrapy has
written it.  Resuming settles the target pages not marked emitted (a kill
came between the item and its mark): those found in the feed files are marked
emitted, the others' rows are deleted (fetched and emitted again); then it
replays the rest.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Boolean, Column, DateTime, Integer, MetaData, SmallInteger, String, Table, Text

from structcrawl.store import jobs as J
from structcrawl.store import schema as S
from structcrawl.store.schema import StoreError, utcnow

KIND = J.HARVEST_KIND
#: Seconds between two refreshes of the job lock's heartbeat by page writes.
HEARTBEAT_EVERY = 5.0
#: ``key_class`` of a collection on a page that fits no class (primary keys cannot be NULL).
NO_CLASS = -1

metadata = MetaData()

harvest_pages = Table(
    "sc_harvest_pages",
    metadata,
    Column("job_id", Integer, primary_key=True, autoincrement=False),
    Column("seq", Integer, primary_key=True, autoincrement=False),
    Column("url", Text, nullable=False),
    Column("requested", Text, nullable=False),
    Column("class_id", Integer),
    Column("key_class", Integer),  # NULL with key_path NULL: a seed
    Column("key_path", Text),
    Column("referer", Text),
    Column("explore", Boolean, nullable=False),
    Column("kind", String(16), nullable=False),  # target / hub / other / none / failed / alias
    Column("status", SmallInteger),
    Column("fetched_at", DateTime(timezone=True)),
    Column("emitted", Boolean, nullable=False),
    sqlite_with_rowid=False,
)

harvest_links = Table(
    "sc_harvest_links",
    metadata,
    Column("job_id", Integer, primary_key=True, autoincrement=False),
    Column("page_seq", Integer, primary_key=True, autoincrement=False),
    Column("pos", Integer, primary_key=True, autoincrement=False),
    Column("url", Text, nullable=False),
    Column("key_class", Integer, nullable=False),
    Column("key_path", Text, nullable=False),
    sqlite_with_rowid=False,
)


@dataclass
class StoredPage:
    seq: int
    url: str
    requested: str
    class_id: int | None
    key: tuple[int | None, str] | None
    referer: str | None
    explore: bool
    kind: str
    emitted: bool
    collections: dict[str, list[str]]
    status: int | None  #: None on a page that is no failure: read from the structure crawl's store

    @property
    def reused(self) -> bool:
        return self.status is None and self.kind not in ("failed", "alias")


class HarvestStore:
    """A harvest job whose lock this process holds."""

    def __init__(self, url: str, name: str, seed_url: str, parameters: Mapping[str, Any], *, fresh: bool = False,
                 stale_after: float = J.DEFAULT_STALE_AFTER) -> None:
        self.url = S.normalize_db_url(url)
        self.engine = S.make_engine(self.url)
        try:
            S.ensure_schema(self.engine, create=True)
            metadata.create_all(self.engine, checkfirst=True)
            with self.engine.connect() as conn:
                info = J.get_job(conn, name)
            if info is not None and info.parameters.get("kind") != KIND:
                raise StoreError(f"job {name!r} of {S.redact(self.url)} is a structure crawl, not a harvest: "
                                 "name the harvest job with --job NAME")
            if info is not None and not fresh and info.status != J.FINISHED:
                old = {k: info.parameters.get(k) for k in ("model", "targets")}
                new = {k: parameters.get(k) for k in ("model", "targets")}
                if old != new:
                    raise StoreError(f"harvest job {name!r} was started with model {old['model']} and classes "
                                     f"{old['targets']}; resume it with the same ones or start it afresh (--fresh)")
            params = {**parameters, "kind": KIND, "strategy": KIND}
            try:
                self.lease = J.acquire(self.engine, name, seed_url, params, fresh=fresh, stale_after=stale_after)
            except J.JobFinishedError:
                raise StoreError(f"harvest job {name!r} is finished; harvest again from scratch with --fresh "
                                 "(-a fresh=true)") from None
            if fresh:
                with self.engine.begin() as conn:
                    for table in (harvest_links, harvest_pages):
                        conn.execute(sa.delete(table).where(table.c.job_id == self.lease.job.id))
        except BaseException:
            self.engine.dispose()
            raise
        self.job_id = self.lease.job.id
        self.resumed = self.lease.resumed
        self.next_seq = 0
        self._beat = 0.0

    # -- resume ------------------------------------------------------------------------
    def restore(self, written: Callable[[Iterable[str]], set[str]]) -> Iterator[StoredPage]:
        """The stored pages in order, after settling the target pages whose item was handed to Scrapy
        but not confirmed written (a kill came in between): those ``written`` finds in the feeds
        are marked emitted, the others forgotten (fetched and emitted again)."""
        p, li = harvest_pages, harvest_links
        pending = (p.c.job_id == self.job_id) & (p.c.kind == "target") & p.c.emitted.is_(False)
        with self.engine.begin() as conn:
            rows = conn.execute(sa.select(p.c.seq, p.c.url).where(pending)).all()
            found = written(url for _seq, url in rows) if rows else set()
            done = [seq for seq, url in rows if url in found]
            lost = [seq for seq, url in rows if url not in found]
            if done:
                conn.execute(sa.update(p).where(p.c.job_id == self.job_id, p.c.seq.in_(done)).values(emitted=True))
            if lost:
                conn.execute(sa.delete(li).where(li.c.job_id == self.job_id, li.c.page_seq.in_(lost)))
                conn.execute(sa.delete(p).where(p.c.job_id == self.job_id, p.c.seq.in_(lost)))
        with self.engine.connect() as conn:
            links: dict[int, dict[str, list[str]]] = {}
            query = sa.select(li.c.page_seq, li.c.url, li.c.key_path).where(li.c.job_id == self.job_id) \
                .order_by(li.c.page_seq, li.c.pos)
            for seq, url, path in conn.execute(query):
                links.setdefault(seq, {}).setdefault(path, []).append(url)
            rows = conn.execute(sa.select(p).where(p.c.job_id == self.job_id).order_by(p.c.seq)).all()
        for row in rows:
            m = row._mapping
            self.next_seq = m["seq"] + 1
            key = None if m["key_path"] is None else (None if m["key_class"] == NO_CLASS else m["key_class"],
                                                      m["key_path"])
            yield StoredPage(m["seq"], m["url"], m["requested"], m["class_id"], key, m["referer"], m["explore"],
                             m["kind"],
                             m["emitted"], links.get(m["seq"], {}), m["status"])

    # -- writing -----------------------------------------------------------------------
    def page(self, url: str, class_id: int | None, key: tuple[int | None, str] | None, referer: str | None,
             explore: bool, kind: str, status: int | None, sightings: Iterable[tuple[str, tuple[int | None, str]]],
             requested: str) -> int:
        """Record a finished URL and the sightings first made on it, in one transaction; its ``seq``."""
        seq = self.next_seq
        self.next_seq += 1
        rows = [{"job_id": self.job_id, "page_seq": seq, "pos": i, "url": u,
                 "key_class": NO_CLASS if k[0] is None else k[0], "key_path": k[1]}
                for i, (u, k) in enumerate(sightings)]
        with self.engine.begin() as conn:
            self._check_lock(conn)
            conn.execute(sa.insert(harvest_pages).values(
                job_id=self.job_id, seq=seq, url=url, requested=requested, class_id=class_id,
                key_class=None if key is None else (NO_CLASS if key[0] is None else key[0]),
                key_path=None if key is None else key[1], referer=referer, explore=explore, kind=kind,
                status=status, fetched_at=utcnow() if status is not None else None, emitted=False,
            ))
            if rows:
                conn.execute(sa.insert(harvest_links), rows)
        return seq

    def emitted(self, seq: int) -> None:
        """The item of page ``seq`` was written by Scrapy's exporters."""
        with self.engine.begin() as conn:
            conn.execute(sa.update(harvest_pages).where(harvest_pages.c.job_id == self.job_id,
                                                        harvest_pages.c.seq == seq).values(emitted=True))

    def _check_lock(self, conn: sa.Connection) -> None:
        now = time.monotonic()
        if now - self._beat < HEARTBEAT_EVERY:
            return
        self._beat = now
        res = conn.execute(sa.update(S.jobs).where(S.jobs.c.id == self.job_id,
                                                   S.jobs.c.lock_token == self.lease.token)
                           .values(lock_heartbeat=utcnow(), updated_at=utcnow()))
        if res.rowcount != 1:
            raise StoreError(f"harvest job {self.lease.job.name!r}: another process took its lock")

    def close(self, reason: str | None, figures: Mapping[str, Any]) -> None:
        status = J.FINISHED if reason == "finished" else J.STOPPED
        J.release(self.engine, self.job_id, self.lease.token, status, reason, {"document": dict(figures)})
        self.engine.dispose()


def harvest_counts(conn: sa.Connection, job_id: int) -> dict[str, int]:
    """A harvest job's figures for ``structcrawl jobs``: pages fetched (a redirect to a page fetched
    already is not one, nor a page read from the structure crawl's store), items emitted, failures."""
    if not sa.inspect(conn).has_table(harvest_pages.name):
        return {"pages": 0, "items": 0, "failures": 0}
    p = harvest_pages
    fetched = p.c.status.is_not(None)
    rows = conn.execute(sa.select(p.c.kind, p.c.emitted, fetched, sa.func.count()).where(p.c.job_id == job_id)
                        .group_by(p.c.kind, p.c.emitted, fetched)).all()
    return {
        "pages": sum(n for kind, _, got, n in rows if got and kind not in ("failed", "alias")),
        "items": sum(n for kind, emitted, _, n in rows if kind == "target" and emitted),
        "failures": sum(n for kind, _, _, n in rows if kind == "failed"),
    }


__all__ = ["HarvestStore", "StoredPage", "KIND", "harvest_pages", "harvest_links", "harvest_counts"]
