"""Reading a job back: its batches in order, and the replay that rebuilds the explorer.

The model step is deterministic, so the crawl state is a function of the
history: which batches were popped, after how many model updates, and what
came back for each.  :func:`replay` re-runs that history on a fresh
:class:`~structcrawl.core.explorer.Explorer`: before each stored pop it runs the
model steps that had run by then (``popped_after``), then pops with
``next_batch()`` — which must give the stored batch back (checked) — and each
completed batch's step is ``redirected(…)`` for its redirects followed by
``Explorer.replay``.  The result has the same model, frontier (issued URLs,
cursors, tried flags, leads-to counts) and stability state as the crawl had.

Batches still ``issued`` (in flight when the crawl stopped) are replayed as
pops only when exporting (the crawl's own state had them popped); a resume
deletes them first, so their URLs are handed out again.
"""

from __future__ import annotations

import sys
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from structcrawl.core.config import ExplorerConfig
from structcrawl.core.explorer import Explorer, StepReport
from structcrawl.core.features import Link, PageFeatures
from structcrawl.core.frontier import Batch
from structcrawl.store import schema as S
from structcrawl.store.schema import StoreError
from structcrawl.store.writer import Dictionaries, Dictionary, split_paths, unpack_tagset

#: Most distinct (target, XPath, path) Link objects shared while reading a history.
LINK_CACHE = 1 << 20


class ReplayError(StoreError):
    """The stored history does not replay on this version of the model."""


@dataclass
class StoredBatch:
    seq: int
    key: tuple[int, str] | None
    urls: tuple[str, ...]
    popped_after: int
    completed: bool
    pages: list[PageFeatures] = field(default_factory=list)  #: pages handed to the step, in order
    requested: list[str] = field(default_factory=list)  #: requested URL of each page
    failed: dict[str, str] = field(default_factory=dict)  #: url -> reason
    redirects: list[tuple[str, str]] = field(default_factory=list)  #: batch order

    @property
    def batch(self) -> Batch:
        return Batch(self.key, self.urls)


class Vocabulary:
    """id -> value of a job's dictionaries (for reading), and value -> id (for the writer)."""

    def __init__(self, conn: Connection, job_id: int) -> None:
        def load(table: sa.Table, column: str) -> list[Any]:
            rows = conn.execute(
                sa.select(table.c.id, table.c[column]).where(table.c.job_id == job_id).order_by(table.c.id)
            ).all()
            out: list[Any] = [None] * (rows[-1][0] + 1 if rows else 0)
            for i, v in rows:
                out[i] = v
            return out

        intern = sys.intern
        self.urls: list[str] = load(S.urls, "url")
        self.paths: list[str] = [intern(p) if p is not None else p for p in load(S.paths, "path")]
        self.xpaths: list[str] = load(S.xpaths, "xpath")
        self.tagsets: list[frozenset[str]] = [
            frozenset(map(intern, unpack_tagset(b))) if b is not None else frozenset()
            for b in load(S.tagsets, "paths")
        ]
        #: each stored set as (tag paths, element paths)
        self.page_paths = [split_paths(s) for s in self.tagsets]
        top = conn.execute(sa.select(sa.func.max(S.pages.c.id)).where(S.pages.c.job_id == job_id)).scalar()
        self.next_page_id = 0 if top is None else top + 1

    def dictionaries(self) -> Dictionaries:
        def rev(values: list[Any]) -> Dictionary:
            return Dictionary({v: i for i, v in enumerate(values) if v is not None})

        return Dictionaries(rev(self.urls), rev(self.paths), rev(self.xpaths), rev(self.tagsets))


def iter_batches(conn: Connection, job_id: int, vocab: Vocabulary, chunk: int = 250) -> Iterator[StoredBatch]:
    """The job's batches in pop order, completed ones with their pages, failures and redirects."""
    b = S.batches
    rows = conn.execute(
        sa.select(b.c.seq, b.c.class_id, b.c.path, b.c.urls, b.c.popped_after, b.c.state)
        .where(b.c.job_id == job_id)
        .order_by(b.c.seq)
    ).all()
    urls, paths, xpaths, tagsets = vocab.urls, vocab.paths, vocab.xpaths, vocab.page_paths
    link_cache: dict[tuple[int, int, int], Link] = {}
    for start in range(0, len(rows), chunk):
        part = rows[start : start + chunk]
        lo, hi = part[0][0], part[-1][0]
        out: dict[int, StoredBatch] = {}
        for seq, class_id, path, batch_urls, popped_after, state in part:
            key = None if class_id is None else (class_id, path)
            out[seq] = StoredBatch(seq, key, tuple(batch_urls), popped_after, state == "completed")
        p, lk = S.pages, S.links
        page_rows = conn.execute(
            sa.select(p.c.id, p.c.url_id, p.c.requested_id, p.c.batch_seq, p.c.tagset_id, p.c.truncated, p.c.title)
            .where(p.c.job_id == job_id, p.c.batch_seq.between(lo, hi))
            .order_by(p.c.batch_seq, p.c.pos, p.c.id)
        ).all()
        by_page: dict[int, list[Link]] = {}
        if page_rows:
            # page ids follow (batch, position): the chunk's pages are one id range, its links
            # one primary-key range (rows of other pages in it, if any, are ignored)
            ids = [r[0] for r in page_rows]
            link_rows = conn.execute(
                sa.select(lk.c.page_id, lk.c.target_id, lk.c.xpath_id, lk.c.path_id)
                .where(lk.c.job_id == job_id, lk.c.page_id.between(min(ids), max(ids)))
                .order_by(lk.c.page_id, lk.c.pos)
            ).all()
            made = link_cache
            for page_id, target_id, xpath_id, path_id in link_rows:
                key = (target_id, xpath_id, path_id)
                link = made.get(key)
                if link is None:  # menus repeat the same links on every page: one object each
                    if len(made) >= LINK_CACHE:
                        made.clear()
                    link = made[key] = Link(urls[target_id], xpaths[xpath_id], paths[path_id])
                lst = by_page.get(page_id)
                if lst is None:
                    lst = by_page[page_id] = []
                lst.append(link)
        for page_id, url_id, requested_id, seq, tagset_id, truncated, title in page_rows:
            sb = out[seq]
            sb.pages.append(
                PageFeatures(url=urls[url_id], links=tuple(by_page.get(page_id, ())), tag_paths=tagsets[tagset_id][0],
                             element_paths=tagsets[tagset_id][1], truncated=bool(truncated), title=title or "")
            )
            sb.requested.append(urls[requested_id])
        f = S.failures
        for seq, url_id, reason in conn.execute(
            sa.select(f.c.batch_seq, f.c.url_id, f.c.reason).where(f.c.job_id == job_id, f.c.batch_seq.between(lo, hi))
        ):
            out[seq].failed[urls[url_id]] = reason
        r = S.redirects
        redirected: dict[int, dict[str, str]] = {}
        for seq, req_id, fin_id in conn.execute(
            sa.select(r.c.batch_seq, r.c.requested_id, r.c.final_id)
            .where(r.c.job_id == job_id, r.c.batch_seq.between(lo, hi))
        ):
            redirected.setdefault(seq, {})[urls[req_id]] = urls[fin_id]
        for seq, mapping in redirected.items():
            sb = out[seq]
            order = {u: i for i, u in enumerate(sb.urls)}
            sb.redirects = sorted(mapping.items(), key=lambda kv: order.get(kv[0], len(order)))
        for seq, _c, _p, _u, _pa, _s in part:
            yield out[seq]


def explorer_for(seed_url: str, parameters: Mapping[str, Any]) -> Explorer:
    """A fresh explorer configured as the job's was (``parameters``: see :class:`ExplorerConfig`)."""
    return ExplorerConfig.from_dict(seed_url, parameters).build()


StepHook = Callable[[StoredBatch, StepReport], None]


@dataclass
class ReplayResult:
    completed: int = 0  #: model steps replayed
    popped: int = 0  #: batches popped (completed + in flight)
    in_flight: list[StoredBatch] = field(default_factory=list)  #: popped, never completed
    last_seq: int = -1
    stable_at_pages: int | None = None  #: pages modelled when the stability rule first fired
    stable_at_updates: int | None = None


def replay(explorer: Explorer, batches: Iterator[StoredBatch], *, include_issued: bool = True,
           idle_after: int | None = None, on_step: StepHook | None = None) -> ReplayResult:
    """Re-run the stored history on ``explorer`` (fresh, configured like the job's).

    ``idle_after``: the frontier had nothing to hand out after that many model
    updates, later than the last stored pop: that empty pop is replayed too (it
    moves the frontier's cursors, hence ``pending_urls``).  Ignored unless
    ``include_issued`` (a resume drops the in-flight batches, and with them the
    state that empty pop saw).
    """
    result = ReplayResult()
    pending: deque[StoredBatch] = deque()

    def step() -> None:
        sb = pending.popleft()
        for requested, final in sb.redirects:
            explorer.redirected(requested, final)
        # popped by next_batch() below, as the crawl popped it: Explorer.replay would mark its
        # collection tried once more, but the crawl's collection may have been spelled or split
        # anew while the batch was out, untried (a qtbase crawl then popped it again)
        report = explorer.complete(sb.batch, sb.pages, list(sb.failed))
        result.completed += 1
        if report.stable and result.stable_at_pages is None:
            result.stable_at_pages = len(explorer.model.pages)
            result.stable_at_updates = explorer.updates
        if on_step is not None:
            on_step(sb, report)

    for sb in batches:
        if not sb.completed and not include_issued:
            continue
        while pending and explorer.updates < sb.popped_after:
            step()
        if explorer.updates != sb.popped_after:
            raise ReplayError(
                f"stored batch {sb.seq} was popped after {sb.popped_after} model updates, but only "
                f"{explorer.updates} replay before it (incomplete or inconsistent job history)"
            )
        got = explorer.next_batch()
        if got is None or got.key != sb.key or tuple(got.urls) != sb.urls:
            raise ReplayError(
                f"the stored crawl does not replay: batch {sb.seq} was {sb.key} with {len(sb.urls)} URLs, the "
                f"frontier now gives {None if got is None else got.key} (written by another structcrawl version?); "
                "start the job afresh"
            )
        result.popped += 1
        result.last_seq = sb.seq
        if sb.completed:
            pending.append(sb)
        else:
            result.in_flight.append(sb)
    if include_issued and idle_after is not None and idle_after >= explorer.updates:
        while pending and explorer.updates < idle_after:
            step()
        if explorer.updates == idle_after and explorer.next_batch() is not None:
            raise ReplayError(f"the stored crawl does not replay: the frontier was empty after {idle_after} "
                              "model updates, now it is not (written by another structcrawl version?)")
    while pending:
        step()
    return result
