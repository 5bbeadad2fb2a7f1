"""Fill a crawl store with a synthetic crawl of N demo-site pages, fast (benchmarks, tests).

The rows are those a real breadth-first crawl of the demo bookshop writes,
replicated:

1. a **base crawl**: a breadth-first walk (first-in-first-out, the crawl of
   UXClust §3.3/§4.1) of a real :class:`~structcrawl.demo.site.DemoSite`
   of ``base_pages`` pages, every page rendered and its features extracted
   (:func:`structcrawl.core.features.extract`: exact XPaths, link-collection
   paths, tag paths), redirects followed, ``/cart`` and off-site links never
   fetched.  Its pages, links and dictionaries are written as the store's
   writer writes them (``sc_pages``, ``sc_links``, ``sc_urls`` …);
2. **copies** of that crawl, each under its own host
   (``http://s0.demo.test/`` → ``http://sK.demo.test/``), made inside the
   database by ``INSERT … SELECT`` with shifted page and URL ids, doubling
   the copied range each time, until N pages; the last copy is a prefix of the
   base crawl (its pages in crawl order).

So the link structure — which exact XPath leads to which page of which
template — is the real site's, the truth of every page is the demo site's
(:func:`truth_of`), and a million pages take a minute or two instead of the
hours that rendering and parsing each would.  Tag-path sets are shared by all
copies (``sc_tagsets`` is deduplicated).  Page rows get ``class_id`` NULL (no
model ran) and one batch (``batch_seq`` 0); the job is ``finished``.

``ix_sc_links_xpath`` is dropped during the load and built once at the end
(the usual bulk-load order: one sorted build instead of millions of random
index inserts).
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass
from typing import Callable
from urllib.parse import urlsplit

import sqlalchemy as sa

from structcrawl.core.features import extract
from structcrawl.demo.site import DemoSite, fetcher
from structcrawl.store import schema as S
from structcrawl.store.schema import ensure_schema, make_engine, utcnow
from structcrawl.store.writer import bulk_insert, pack_tagset

#: Host of the base crawl; copy K lives on ``sK.demo.test``.
BASE_HOST = "s0.demo.test"
BASE_URL = f"http://{BASE_HOST}"


@dataclass
class SyntheticStore:
    """What :func:`fill` wrote."""

    job: str
    job_id: int
    pages: int
    links: int
    base_pages: int  #: pages of the base crawl
    copies: int  #: copies of it (the last one possibly partial)
    seconds: float


def _host(k: int) -> str:
    return f"s{k}.demo.test"


def truth_of(site: DemoSite) -> Callable[[str], str | None]:
    """URL of a synthetic page (any copy) → its demo-site class, None for a URL that is no page."""

    def truth(url: str) -> str | None:
        parts = urlsplit(url)
        if not (parts.hostname or "").endswith(".demo.test"):
            return None
        return site.classify((parts.path or "/") + (f"?{parts.query}" if parts.query else ""))

    return truth


@dataclass
class _BaseCrawl:
    urls: dict[str, int]
    xpaths: dict[str, int]
    paths: dict[str, int]
    tagsets: dict[frozenset[str], int]
    pages: list[tuple[int, int, int]]  #: (url id, requested url id, tagset id), crawl order
    links: list[list[tuple[int, int, int]]]  #: per page: (target url id, xpath id, path id), document order


def _crawl(site: DemoSite, limit: int) -> _BaseCrawl:
    """Breadth-first crawl of the demo site (FIFO over first-seen URLs), at most ``limit`` pages."""
    fetch = fetcher(site, BASE_URL)
    urls: dict[str, int] = {}
    xpaths: dict[str, int] = {}
    paths: dict[str, int] = {}
    tagsets: dict[frozenset[str], int] = {}

    def uid(u: str) -> int:
        return urls.setdefault(u, len(urls))

    start = BASE_URL + "/"
    uid(start)
    queue = deque([start])
    seen = {start}
    done: set[str] = set()  # final URLs already recorded (two links redirecting to one page)
    pages: list[tuple[int, int, int]] = []
    links: list[list[tuple[int, int, int]]] = []
    while queue and len(pages) < limit:
        requested = queue.popleft()
        got = fetch(requested)
        if got is None:
            continue
        final, body = got
        if final in done:
            continue
        done.add(final)
        feats = extract(body, final)
        tagset = tagsets.setdefault(feats.tag_paths, len(tagsets))
        pages.append((uid(feats.url), uid(requested), tagset))
        row = []
        for link in feats.links:
            row.append((uid(link.url), xpaths.setdefault(link.xpath, len(xpaths)),
                        paths.setdefault(link.path, len(paths))))
            if link.url not in seen:
                seen.add(link.url)
                queue.append(link.url)
        links.append(row)
    return _BaseCrawl(urls, xpaths, paths, tagsets, pages, links)


def fill(db: str, pages: int, *, job: str = "synthetic", base_pages: int = 10_000, seed: int = 0,
         progress: Callable[[str], None] | None = None) -> SyntheticStore:
    """Write job ``job`` (replacing one of that name) holding a synthetic crawl of ``pages`` pages.

    ``base_pages``: size of the demo site whose real breadth-first crawl is
    replicated (the crawl of DemoSite(base_pages, seed) reaches about 98 % of
    that many pages); ``seed``: the demo site's seed.
    """
    t0 = time.perf_counter()
    say = progress or (lambda _msg: None)
    site = DemoSite(pages=min(pages, base_pages), seed=seed)
    base = _crawl(site, pages)
    nbase = len(base.pages)
    say(f"base crawl: {nbase} pages, {sum(map(len, base.links))} links, {len(base.urls)} URLs "
        f"({time.perf_counter() - t0:.1f} s)")
    engine = make_engine(db)
    try:
        ensure_schema(engine)
        job_id = _new_job(engine, job, pages)
        _write_base(engine, job_id, base)
        nurls = len(base.urls)
        copies = -(-pages // nbase)
        total = nbase
        with engine.begin() as conn:
            conn.execute(sa.text("DROP INDEX IF EXISTS ix_sc_links_xpath"))
        while total < pages:  # copy [0, n) to [total, total + n): doubling
            n = min(total, pages - total)
            _copy(engine, job_id, total, n, nbase, nurls)
            total += n
            say(f"{total} pages ({time.perf_counter() - t0:.1f} s)")
        _create_link_index(engine)
        with engine.connect() as conn:
            nlinks = conn.execute(sa.select(sa.func.count()).select_from(S.links)
                                  .where(S.links.c.job_id == job_id)).scalar()
        if engine.dialect.name == "postgresql":
            with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                for table in (S.pages, S.links, S.urls, S.xpaths, S.tagsets):
                    conn.execute(sa.text(f"ANALYZE {table.name}"))
        else:
            with engine.begin() as conn:
                conn.execute(sa.text("ANALYZE"))
    finally:
        engine.dispose()
    return SyntheticStore(job, job_id, total, nlinks, nbase, copies, time.perf_counter() - t0)


def _new_job(engine: sa.Engine, name: str, pages: int) -> int:
    now = utcnow()
    with engine.begin() as conn:
        old = conn.execute(sa.select(S.jobs.c.id).where(S.jobs.c.name == name)).scalar()
        if old is not None:
            for table in S.JOB_TABLES:
                conn.execute(sa.delete(table).where(table.c.job_id == old))
            conn.execute(sa.delete(S.jobs).where(S.jobs.c.id == old))
        conn.execute(sa.insert(S.jobs).values(
            name=name, seed_url=BASE_URL + "/", strategy="bfs",
            parameters={"synthetic": {"pages": pages}}, status="finished", stop_reason="finished",
            crawl={}, runs=1, created_at=now, updated_at=now,
        ))
        return conn.execute(sa.select(S.jobs.c.id).where(S.jobs.c.name == name)).scalar_one()


def _write_base(engine: sa.Engine, job: int, base: _BaseCrawl) -> None:
    with engine.begin() as conn:
        for table, rows in (
            (S.urls, [(job, i, u) for u, i in base.urls.items()]),
            (S.xpaths, [(job, i, x) for x, i in base.xpaths.items()]),
            (S.paths, [(job, i, p) for p, i in base.paths.items()]),
            (S.tagsets, [(job, i, len(t), pack_tagset(t)) for t, i in base.tagsets.items()]),
            (S.pages, [(job, pid, url, requested, 0, pid, 200, None, None, tagset, False, len(base.links[pid]), None)
                       for pid, (url, requested, tagset) in enumerate(base.pages)]),
            (S.links, [(job, pid, pos, target, xpath, path)
                       for pid, row in enumerate(base.links) for pos, (target, xpath, path) in enumerate(row)]),
        ):
            bulk_insert(conn, table, rows)


def _copy(engine: sa.Engine, job: int, offset: int, n: int, nbase: int, nurls: int) -> None:
    """Copy pages [0, n) (and their links and URLs) to [offset, offset + n); ``offset`` is a multiple of ``nbase``."""
    shift = offset // nbase  # copies: c -> c + shift
    params = {"job": job, "offset": offset, "n": n, "ushift": shift * nurls, "shift": shift, "nurls": nurls,
              "nurl_rows": -(-n // nbase) * nurls}
    with engine.begin() as conn:
        conn.execute(sa.text(
            "INSERT INTO sc_urls (job_id, id, url) SELECT job_id, id + :ushift, "
            "CASE WHEN url LIKE 'http://s%.demo.test%' THEN "
            "'http://s' || CAST(id / :nurls + :shift AS VARCHAR(20)) || '.demo.test' || "
            "substr(url, length('http://s' || CAST(id / :nurls AS VARCHAR(20)) || '.demo.test') + 1) "
            "ELSE url END FROM sc_urls WHERE job_id = :job AND id < :nurl_rows"), params)
        conn.execute(sa.text(
            "INSERT INTO sc_pages (job_id, id, url_id, requested_id, batch_seq, pos, status, fetched_at, class_id, "
            "tagset_id, truncated, n_links) SELECT job_id, id + :offset, url_id + :ushift, requested_id + :ushift, "
            "batch_seq, pos, status, fetched_at, class_id, tagset_id, truncated, n_links FROM sc_pages "
            "WHERE job_id = :job AND id < :n"), params)
        conn.execute(sa.text(
            "INSERT INTO sc_links (job_id, page_id, pos, target_id, xpath_id, path_id) SELECT job_id, "
            "page_id + :offset, pos, target_id + :ushift, xpath_id, path_id FROM sc_links "
            "WHERE job_id = :job AND page_id < :n"), params)


def _create_link_index(engine: sa.Engine) -> None:
    index = next(ix for ix in S.links.indexes if ix.name == "ix_sc_links_xpath")
    with engine.begin() as conn:
        index.create(conn, checkfirst=True)
