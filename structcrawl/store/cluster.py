"""Offline UXClust over a stored crawl (``structcrawl cluster``, :mod:`structcrawl.commands.cluster`): the SQL side.

The database does the page-by-page work; Python gets group sizes, a few
sampled pages per group and, on request, member URLs as a stream:

1. **Inbound links** (UXClust §3.3): a page's inbound XPath is the XPath of
   the *first link, in crawl order, to the URL requested for it* — crawl order
   being the source page's step order (``sc_pages.id``) then the link's
   position in the document, so among several links on one page the topmost
   occurrence counts, and among several source pages the one fetched first:
   the tuple UXClust's crawler records when it first sees a URL.  Only links
   from pages fetched before the page count (the start page has none: it is
   unclustered).  A URL fetched twice (two requested URLs redirecting to it)
   is one page, its first fetch.  Pages are grouped by that link's
   link-collection path (``path_id``: positions dropped, id/class kept,
   Crescenzi et al. §2; the default) or, with ``--group-by xpath``, by its
   exact XPath (``xpath_id``, the paper), computed into a temporary table
   ``sc_inbound(page_id, url_id, group_id)``:

   * SQLite: one pass over ``sc_links`` in primary-key (= crawl) order,
     ``INSERT OR IGNORE`` into a table keyed by target URL — the first link to
     each URL stays;
   * PostgreSQL: ``min(page_id·2²⁰ + pos)`` per target by (parallel) hash
     aggregation, the XPath read back through the primary key.

2. **Groups**: ``GROUP BY group_id`` (sizes), then for the groups at or above
   the cut-off their ``samples`` lowest-ranked pages by a window function
   (rank = a multiplicative hash of the page id and the seed), and only the
   tag-path sets of those pages (``sc_tagsets`` rows, deduplicated) and
   their link collections (``sc_links.path_id``, for the sections veto).
3. **Merge**: :func:`structcrawl.analysis.uxclust.cluster_groups` (pure Python).
4. **Members** (``--members``): one query per cluster, streamed
   (``stream_results``: a server-side cursor on PostgreSQL) straight into the
   JSON file.

Memory stays bounded whatever the number of pages: Python holds the group
sizes (one integer per distinct inbound XPath), ``samples`` pages per kept
group and one chunk of members at a time.

Vertex's shingle clustering (``structcrawl cluster --method shingles``,
:func:`shingle_cluster_store`): one pass over ``sc_pages`` (page, URL,
tag-path set; joined to ``sc_urls`` for ``--members``), the job's distinct
tag-path sets, and the links of up to ``LINK_SAMPLES`` pages per tag-path
set (``sc_links`` by its primary key: their link-collection paths, the only
attributes the store keeps); :mod:`structcrawl.analysis.shingles` signs
each set of tag paths and link sections once and clusters the distinct
signatures, pages follow their set.
It holds a page's ids (and URL, with members) in Python: about 420 MB at a
million pages with members.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import chain
from typing import IO, Any, Protocol

import numpy as np
import sqlalchemy as sa
from sqlalchemy.engine import Connection

from structcrawl.analysis.fingerprint import fingerprint
from structcrawl.analysis.shingles import (
    ALIKE,
    LINK_SAMPLES,
    MATCH,
    SHINGLE_PATHS,
    SIGNATURE_VALUES,
    SITE_SHARE,
    ShingleClustering,
    cluster_sets,
    with_link_sections,
)
from structcrawl.analysis.uxclust import Clustering, Parameters, SampledPage, cluster_groups, relative_cutoff
from structcrawl.core.model import FINGERPRINT_OCCURRENCE
from structcrawl.store import find_job
from structcrawl.store import schema as S
from structcrawl.store.schema import StoreError, ensure_schema, make_engine, normalize_db_url, redact
from structcrawl.store.writer import split_paths, unpack_tagset

FORMAT = "structcrawl-clusters"
FORMAT_VERSION = 1
#: crawl-order key of a link: page_id * 2**20 + pos (pos < MAX_LINKS = 10,000 < 2**20)
POS_BITS = 20
#: multiplicative hash of the page id for sampling ranks: (id * A + seed) mod P
_RANK_A = 2654435761
_RANK_P = 4294967291
#: member URLs fetched per round trip
CHUNK = 10_000


@dataclass
class StoredClustering:
    """The clustering of one stored job, with what is needed to list members."""

    job: str
    start_url: str
    params: Parameters
    group_by: str  #: "xpath" or "path" (see GROUP_BY)
    result: Clustering
    keys: dict[int, str]  #: group id -> its inbound XPath (or path), for the kept groups
    cluster_groups: dict[int, list[int]]  #: cluster id -> its groups' ids
    seconds: dict[str, float]  #: wall time per stage


class Progress(Protocol):
    """Where :func:`cluster_store` reports its stages and the members written so far (``structcrawl cluster``
    shows them on stderr)."""

    def stage(self, name: str) -> None: ...

    def advance(self, done: int, total: int) -> None:
        """``done`` of ``total`` items of the current stage."""

    def done(self) -> None: ...


class NoProgress:
    """Reports nothing."""

    def stage(self, name: str) -> None:
        pass

    def advance(self, done: int, total: int) -> None:
        pass

    def done(self) -> None:
        pass


#: what pages are grouped by: the inbound link's exact XPath (UXClust) or its link-collection path (Crescenzi et al. §2)
GROUP_BY = {"xpath": ("xpath_id", S.xpaths, "xpath"), "path": ("path_id", S.paths, "path")}


def _inbound(conn: Connection, job: int, column: str) -> None:
    """Fill the temporary table ``sc_inbound(page_id, url_id, group_id)`` (see the module docstring);
    ``column``: the link column grouped by, ``xpath_id`` or ``path_id``."""
    params = {"job": job, "shift": 1 << POS_BITS}
    if conn.dialect.name == "sqlite":
        # temporary tables on disk behind a 16 MiB cache: memory stays bounded whatever the number of pages
        # (in memory they took ~100 MB per million pages, and were no faster)
        conn.exec_driver_sql("PRAGMA temp_store=FILE")
        conn.exec_driver_sql("PRAGMA temp.cache_size=-16384")
        conn.execute(sa.text("CREATE TEMP TABLE sc_first (target_id INTEGER PRIMARY KEY, k INTEGER, group_id INTEGER)"))
        # rows are inserted in the SELECT's order, which is the primary key's: the first link to a URL stays
        conn.execute(sa.text(
            f"INSERT OR IGNORE INTO sc_first SELECT target_id, page_id * :shift + pos, {column} FROM sc_links "
            "WHERE job_id = :job ORDER BY page_id, pos"), params)
        first_group = "f.group_id"
        join_link = ""
    else:
        conn.exec_driver_sql("SET LOCAL work_mem = '256MB'")  # the per-URL aggregate stays in memory
        conn.exec_driver_sql("SET LOCAL jit = off")  # compiling these few queries costs more than it saves
        conn.execute(sa.text(
            "CREATE TEMP TABLE sc_first ON COMMIT DROP AS SELECT target_id, "
            "min(page_id::bigint * :shift + pos) AS k FROM sc_links WHERE job_id = :job GROUP BY target_id"),
            params)
        first_group = f"l.{column}"
        join_link = ("LEFT JOIN sc_links l ON l.job_id = :job AND l.page_id = (f.k / :shift)::integer "
                     "AND l.pos = (f.k % :shift)::integer ")
    temp = "CREATE TEMP TABLE sc_inbound" + ("" if conn.dialect.name == "sqlite" else " ON COMMIT DROP")
    conn.execute(sa.text(
        f"{temp} AS SELECT p.id AS page_id, p.url_id AS url_id, "
        f"CASE WHEN f.k < p.id * CAST(:shift AS BIGINT) THEN {first_group} END AS group_id "
        f"FROM sc_pages p LEFT JOIN sc_first f ON f.target_id = p.requested_id {join_link}"
        "WHERE p.job_id = :job AND NOT EXISTS (SELECT 1 FROM sc_pages q WHERE q.job_id = p.job_id "
        "AND q.url_id = p.url_id AND q.id < p.id)"), params)
    conn.execute(sa.text("CREATE INDEX sc_inbound_group ON sc_inbound (group_id)"))


def _samples(conn: Connection, job: int, kept: list[int], params: Parameters) -> dict[int, list[SampledPage]]:
    """The ``params.samples`` lowest-ranked pages of each kept group, with their tag paths."""
    if not kept:
        return {}
    conn.execute(sa.text("CREATE TEMP TABLE sc_kept (group_id INTEGER PRIMARY KEY)"
                         + ("" if conn.dialect.name == "sqlite" else " ON COMMIT DROP")))
    conn.execute(sa.text("INSERT INTO sc_kept (group_id) VALUES (:x)"), [{"x": x} for x in kept])
    rows = conn.execute(sa.text(
        "SELECT s.group_id, s.rnk, u.url, p.tagset_id, s.page_id FROM ("
        " SELECT i.group_id, i.page_id, i.url_id, i.rnk,"
        "  ROW_NUMBER() OVER (PARTITION BY i.group_id ORDER BY i.rnk, i.page_id) AS rn"
        " FROM (SELECT group_id, page_id, url_id, (page_id * CAST(:a AS BIGINT) + :seed) % :p AS rnk"
        "       FROM sc_inbound WHERE group_id IN (SELECT group_id FROM sc_kept)) i"
        ") s JOIN sc_urls u ON u.job_id = :job AND u.id = s.url_id "
        "JOIN sc_pages p ON p.job_id = :job AND p.id = s.page_id WHERE s.rn <= :s"),
        {"job": job, "a": _RANK_A, "p": _RANK_P, "seed": params.seed, "s": params.samples}).all()
    tagset_ids = sorted({r[3] for r in rows})
    t = S.tagsets
    tagsets: dict[int, frozenset[str]] = {}
    for i in range(0, len(tagset_ids), 500):
        for tid, blob in conn.execute(sa.select(t.c.id, t.c.paths).where(
                t.c.job_id == job, t.c.id.in_(tagset_ids[i:i + 500]))):
            tagsets[tid] = split_paths(unpack_tagset(blob))[0]
    # a sampled page's sections: the link collections (path ids) it shows, for the veto of
    # structcrawl.analysis.uxclust.split_told_apart
    page_ids = sorted({r[4] for r in rows})
    sections: dict[int, set[int]] = {}
    for i in range(0, len(page_ids), 500):
        for page_id, path_id in conn.execute(sa.select(S.links.c.page_id, S.links.c.path_id).distinct().where(
                S.links.c.job_id == job, S.links.c.page_id.in_(page_ids[i:i + 500]))):
            sections.setdefault(page_id, set()).add(path_id)
    out: dict[int, list[SampledPage]] = {}
    for group_id, rnk, url, tid, page_id in rows:
        out.setdefault(group_id, []).append(
            SampledPage(int(rnk), url, tagsets[tid], frozenset(sections.get(page_id, ()))))
    return out


def cluster_store(db: str, job: str | None = None, params: Parameters = Parameters(), group_by: str = "path",
                  progress: Progress | None = None, members_to: Callable[[Any], None] | None = None
                  ) -> StoredClustering:
    """Run UXClust over job ``job`` of the store ``db``.

    ``members_to``: called with a :class:`MemberReader` while the temporary
    tables still exist (they live in one connection/transaction), to stream
    members out.
    """
    progress = progress or NoProgress()
    url = normalize_db_url(db)
    engine = make_engine(url)
    seconds: dict[str, float] = {}
    try:
        ensure_schema(engine, create=False)
        with engine.connect() as conn, conn.begin():
            info = find_job(conn, url, job)
            t0 = time.perf_counter()
            progress.stage("inbound links")
            _inbound(conn, info.id, GROUP_BY[group_by][0])
            seconds["inbound"] = time.perf_counter() - t0

            t0 = time.perf_counter()
            progress.stage("groups")
            sizes: dict[int, int] = {}
            unlinked = 0
            for group_id, n in conn.execute(sa.text(
                    "SELECT group_id, COUNT(*) FROM sc_inbound GROUP BY group_id")):
                if group_id is None:
                    unlinked = n
                else:
                    sizes[group_id] = n
            cutoff = params.cutoff_for(sum(sizes.values()) + unlinked)
            kept = sorted(x for x, n in sizes.items() if n >= cutoff)
            samples = _samples(conn, info.id, kept, params)
            table = GROUP_BY[group_by][1]
            text = table.c[GROUP_BY[group_by][2]]
            keys = {i: x for i, x in conn.execute(sa.select(table.c.id, text).where(
                table.c.job_id == info.id, table.c.id.in_(kept)))} if kept else {}
            seconds["groups"] = time.perf_counter() - t0

            t0 = time.perf_counter()
            progress.stage(f"merging {len(kept)} groups")
            result = cluster_groups(sizes, samples, params, unlinked=unlinked)
            cluster_ids = {c.id: list(c.xpaths) for c in result.clusters}
            seconds["merge"] = time.perf_counter() - t0
            stored = StoredClustering(info.name, info.seed_url, params, group_by, result, keys, cluster_ids, seconds)
            if members_to is not None:
                t0 = time.perf_counter()
                progress.stage("writing members")
                members_to(MemberReader(conn, info.id, stored, progress))
                seconds["members"] = time.perf_counter() - t0
        progress.done()
    except sa.exc.OperationalError as exc:
        raise StoreError(f"cannot read {redact(url)}: {str(exc.orig).strip().splitlines()[0]}") from None
    finally:
        engine.dispose()
    return stored


class MemberReader:
    """Streams the member URLs of each cluster and of the unclustered bucket, sorted."""

    def __init__(self, conn: Connection, job: int, stored: StoredClustering, progress: Progress) -> None:
        self.conn = conn
        self.job = job
        self.stored = stored
        self.progress = progress
        self.done = 0
        self.total = stored.result.pages

    def _stream(self, where: str, params: dict[str, Any]) -> Iterator[str]:
        # stream_results: a server-side cursor on PostgreSQL (yield_per on a text() query fetched everything)
        result = self.conn.execution_options(stream_results=True, max_row_buffer=CHUNK).execute(sa.text(
            "SELECT u.url FROM sc_inbound i JOIN sc_urls u ON u.job_id = :job AND u.id = i.url_id "
            f"WHERE {where} ORDER BY u.url"), {"job": self.job, **params})
        for partition in result.partitions(CHUNK):
            for (url,) in partition:
                yield url
            self.done += len(partition)
            self.progress.advance(self.done, self.total)

    def cluster(self, cluster_id: int) -> Iterator[str]:
        ids = self.stored.cluster_groups[cluster_id]
        names = {f"g{i}": x for i, x in enumerate(ids)}
        return self._stream(f"i.group_id IN ({', '.join(':' + n for n in names)})", names)

    def unclustered(self) -> Iterator[str]:
        return self._stream("i.group_id IS NULL OR i.group_id NOT IN (SELECT group_id FROM sc_kept)"
                            if self.stored.keys else "TRUE", {})


# ---------------------------------------------------------------------------
# The clusters JSON (the conventions of the model export: sorted keys, indent 2)
# ---------------------------------------------------------------------------

_MEMBERS = "\0members\0"


def document(stored: StoredClustering, members: bool) -> dict[str, Any]:
    """The clusters document; with ``members``, placeholders where the member lists go."""
    r = stored.result
    p = stored.params
    classes = []
    for c in r.clusters:
        entry: dict[str, Any] = {
            "id": c.id,
            "size": c.size,
            "inbound": [stored.keys[x] for x in c.xpaths],
            "fingerprint": sorted(c.fingerprint),
            "samples": list(c.samples),
        }
        if members:
            entry["members"] = _MEMBERS
        classes.append(entry)
    unclustered: dict[str, Any] = {"size": r.unclustered, "groups": r.groups - r.groups_kept}
    if members:
        unclustered["members"] = _MEMBERS
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "job": stored.job,
        "site": {"start_url": stored.start_url},
        "parameters": {"group_by": stored.group_by, "cutoff": r.cutoff, "samples": p.samples,
                       "occurrence": p.occurrence, "similarity": p.similarity, "seed": p.seed},
        "pages": r.pages,
        "groups": r.groups,
        "groups_kept": r.groups_kept,
        "classes": classes,
        "unclustered": unclustered,
    }


def write_document(out: IO[str], stored: StoredClustering, reader: MemberReader | None) -> None:
    """Write the document; member lists streamed from ``reader`` (None: without members)."""
    lists = [reader.cluster(c.id) for c in stored.result.clusters] if reader else []
    if reader:
        lists.append(reader.unclustered())
    write_with_members(out, document(stored, reader is not None), lists)


def write_with_members(out: IO[str], doc: dict[str, Any], lists: list[Iterable[str]]) -> None:
    """Write a clusters document whose ``members`` placeholders (classes in id order, then unclustered) are
    filled from ``lists``, streamed."""
    text = json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False)
    placeholder = json.dumps(_MEMBERS)
    parts = text.split(placeholder)
    # classes come before unclustered in sorted key order, each class's members in id order
    for i, part in enumerate(parts):
        out.write(part)
        if i < len(lists):
            indent = part[part.rfind("\n") + 1:]
            indent = " " * (len(indent) - len(indent.lstrip(" ")) + 2)
            first = True
            out.write("[")
            for url in lists[i]:
                out.write(("\n" if first else ",\n") + indent + json.dumps(url, ensure_ascii=False))
                first = False
            out.write("]" if first else "\n" + indent[:-2] + "]")
    out.write("\n")


# ---------------------------------------------------------------------------
# Vertex shingle clustering (structcrawl cluster --method shingles)
# ---------------------------------------------------------------------------


@dataclass
class StoredShingles:
    """The shingle clustering of one stored job (:mod:`structcrawl.analysis.shingles`)."""

    job: str
    start_url: str
    result: ShingleClustering
    cutoff: int
    samples: int
    occurrence: float
    similarity: float  #: fingerprint Jaccard at which clusters merge
    seed: int
    length: int  #: sorted tag paths per shingle
    pages: int  #: distinct pages (a URL fetched twice counts once, its first fetch)
    tagsets: int  #: distinct tag-path sets of those pages
    fingerprints: dict[int, frozenset[str]]  #: cluster id -> tag paths on >= occurrence of its samples
    sample_urls: dict[int, list[str]]  #: cluster id -> its sampled pages' URLs, by rank
    members: dict[int, list[str]] | None  #: cluster id (0: unclustered) -> sorted member URLs; None: not read
    seconds: dict[str, float]


def _pages(conn: Connection, job: int, with_urls: bool) -> tuple[np.ndarray, np.ndarray, list[str] | None]:
    """(page ids, tag-path set ids, URLs or None) of the job's pages, one per URL (its first fetch), by page id:
    one pass over ``sc_pages`` (joined to ``sc_urls`` when the URLs are wanted)."""
    columns = "p.id, p.url_id, p.tagset_id" + (", u.url" if with_urls else "")
    join = "JOIN sc_urls u ON u.job_id = p.job_id AND u.id = p.url_id " if with_urls else ""
    result = conn.execute(sa.text(f"SELECT {columns} FROM sc_pages p {join}WHERE p.job_id = :job ORDER BY p.id"),
                          {"job": job})
    numbers: list[int] = []
    urls: list[str] | None = [] if with_urls else None
    for part in result.partitions(CHUNK):
        numbers.extend(chain.from_iterable(r[:3] for r in part))
        if urls is not None:
            urls.extend(r[3] for r in part)
    table = np.array(numbers, dtype=np.int64).reshape(-1, 3)
    _, first = np.unique(table[:, 1], return_index=True)  # rows are by id: the first fetch of each URL
    first.sort()
    return table[first, 0], table[first, 2], None if urls is None else [urls[k] for k in first.tolist()]


def _sampled_links(conn: Connection, job: int, page_ids: np.ndarray, set_index: np.ndarray, sets: int,
                   seed: int) -> tuple[list[np.ndarray], list[list[frozenset[str]]]]:
    """Per tag-path set (``set_index``: each page's), its first :data:`LINK_SAMPLES` pages by the rank
    UXClust samples by (positions in ``page_ids``) and the link-collection paths each of them shows: reads
    the links of those pages only (``sc_links`` by its primary key) and their distinct paths."""
    rank = (page_ids * _RANK_A + seed) % _RANK_P
    order = np.lexsort((page_ids, rank, set_index))
    starts = np.searchsorted(set_index[order], np.arange(sets + 1))
    picked = [order[starts[k]:min(starts[k + 1], starts[k] + LINK_SAMPLES)] for k in range(sets)]
    wanted = sorted(int(page_ids[i]) for ks in picked for i in ks.tolist())
    shows: dict[int, set[int]] = {}
    for i in range(0, len(wanted), 500):
        for page_id, path_id in conn.execute(sa.select(S.links.c.page_id, S.links.c.path_id).distinct().where(
                S.links.c.job_id == job, S.links.c.page_id.in_(wanted[i:i + 500]))):
            shows.setdefault(page_id, set()).add(path_id)
    path_ids = sorted({x for ids in shows.values() for x in ids})
    text: dict[int, str] = {}
    for i in range(0, len(path_ids), 500):
        text.update(conn.execute(sa.select(S.paths.c.id, S.paths.c.path).where(
            S.paths.c.job_id == job, S.paths.c.id.in_(path_ids[i:i + 500]))).all())
    links = [[frozenset(text[x] for x in shows.get(int(page_ids[i]), ())) for i in ks.tolist()] for ks in picked]
    return picked, links


def shingle_cluster_store(db: str, job: str | None = None, cutoff: int | None = None, samples: int = 10,
                          occurrence: float = FINGERPRINT_OCCURRENCE, seed: int = 0, members: bool = False,
                          progress: Progress | None = None, length: int = SHINGLE_PATHS,
                          similarity: float = ALIKE) -> StoredShingles:
    """Vertex's shingle clustering (seed 003 §III-A) over job ``job`` of the store ``db``.

    SQL reads the pages (id, tag-path set), the distinct tag-path sets and the
    link-collection paths of each set's sampled pages (:func:`_sampled_links`,
    :func:`structcrawl.analysis.shingles.with_link_sections`); the
    signatures are computed once per distinct set, the clustering runs over
    distinct signatures (:func:`structcrawl.analysis.shingles.cluster_sets`),
    pages get their set's cluster by an array lookup.  ``cutoff``: masked
    vectors covering fewer pages are deleted (default: UXClust's relative
    cut-off, :func:`structcrawl.analysis.uxclust.relative_cutoff`, 0.13 % of
    the pages — the paper's 20 pages on samples of 2,000–20,000 is 0.1–1 %).
    ``samples`` pages per cluster (by the rank UXClust samples by) give its
    sample URLs and fingerprint; ``members`` reads every page's URL; ``length``:
    sorted tag paths per shingle; ``occurrence`` and ``similarity``: the
    fingerprints by which fragments of one template are merged
    (:func:`structcrawl.analysis.shingles.merge_alike`).
    """
    progress = progress or NoProgress()
    url = normalize_db_url(db)
    engine = make_engine(url)
    seconds: dict[str, float] = {}
    try:
        ensure_schema(engine, create=False)
        with engine.connect() as conn:
            info = find_job(conn, url, job)
            t0 = time.perf_counter()
            progress.stage("pages")
            page_ids, tagset_of, page_urls = _pages(conn, info.id, members)
            set_ids, set_index = np.unique(tagset_of, return_inverse=True)
            sets: dict[int, frozenset[str]] = {}
            for i in range(0, len(set_ids), 500):
                for tid, blob in conn.execute(sa.select(S.tagsets.c.id, S.tagsets.c.paths).where(
                        S.tagsets.c.job_id == info.id, S.tagsets.c.id.in_(set_ids[i:i + 500].tolist()))):
                    sets[tid] = split_paths(unpack_tagset(blob))[0]
            seconds["read"] = time.perf_counter() - t0

            t0 = time.perf_counter()
            progress.stage("links of sampled pages")
            picked, links = _sampled_links(conn, info.id, page_ids, set_index, len(set_ids), seed)
            seconds["links"] = time.perf_counter() - t0

            t0 = time.perf_counter()
            progress.stage(f"signatures of {len(set_ids):,} tag-path sets")
            applied = relative_cutoff(len(page_ids)) if cutoff is None else cutoff
            sections = with_link_sections([sets[t] for t in set_ids.tolist()],
                                          np.bincount(set_index, minlength=len(set_ids)).tolist(), links)
            result, section_cluster = cluster_sets(sections.sets, sections.counts, applied, seed, length, occurrence,
                                                   similarity)
            page_section = sections.unsampled[set_index]
            for ks, own in zip(picked, sections.sampled):
                page_section[ks] = own
            page_cluster = section_cluster[page_section]
            seconds["cluster"] = time.perf_counter() - t0

            t0 = time.perf_counter()
            progress.stage("samples")
            rank = (page_ids * _RANK_A + seed) % _RANK_P
            order = np.lexsort((page_ids, rank, page_cluster))
            sorted_clusters = page_cluster[order]
            starts = np.searchsorted(sorted_clusters, np.arange(1, len(result.clusters) + 1))
            picked = {c.id: order[starts[c.id - 1]:starts[c.id - 1] + min(samples, c.size)] for c in result.clusters}
            if page_urls is None:
                wanted = sorted({int(page_ids[k]) for ks in picked.values() for k in ks})
                url_of: dict[int, str] = {}
                for i in range(0, len(wanted), 500):
                    ids = ", ".join(map(str, wanted[i:i + 500]))
                    url_of.update(conn.execute(sa.text(
                        "SELECT p.id, u.url FROM sc_pages p JOIN sc_urls u ON u.job_id = p.job_id "
                        f"AND u.id = p.url_id WHERE p.job_id = :job AND p.id IN ({ids})"), {"job": info.id}).all())
                sample_urls = {c: [url_of[int(page_ids[k])] for k in ks] for c, ks in picked.items()}
            else:
                sample_urls = {c: [page_urls[k] for k in ks.tolist()] for c, ks in picked.items()}
            fingerprints = {c: fingerprint((sets[int(tagset_of[k])] for k in ks), occurrence)
                            for c, ks in picked.items()}
            seconds["samples"] = time.perf_counter() - t0

            lists: dict[int, list[str]] | None = None
            if page_urls is not None:
                t0 = time.perf_counter()
                progress.stage("sorting members")
                lists = {c: [] for c in range(len(result.clusters) + 1)}
                for c, u in zip(page_cluster.tolist(), page_urls):
                    lists[c].append(u)
                for urls in lists.values():
                    urls.sort()
                seconds["members"] = time.perf_counter() - t0
        progress.done()
    except sa.exc.OperationalError as exc:
        raise StoreError(f"cannot read {redact(url)}: {str(exc.orig).strip().splitlines()[0]}") from None
    finally:
        engine.dispose()
    return StoredShingles(info.name, info.seed_url, result, applied, samples, occurrence, similarity, seed, length,
                          len(page_ids), len(set_ids), fingerprints, sample_urls, lists, seconds)


def shingles_document(stored: StoredShingles) -> tuple[dict[str, Any], list[Iterable[str]]]:
    """The clusters document of a shingle clustering (UXClust's keys; ``inbound`` empty, each class's masked
    ``signature`` and ``importance`` added) and its member lists for :func:`write_with_members`."""
    r = stored.result
    with_members = stored.members is not None
    classes = []
    for c in r.clusters:
        entry: dict[str, Any] = {
            "id": c.id,
            "size": c.size,
            "inbound": [],
            "signature": c.signature,
            "masked_vectors": list(c.masked),
            "importance": c.importance,
            "fingerprint": sorted(stored.fingerprints[c.id]),
            "samples": stored.sample_urls[c.id],
        }
        if with_members:
            entry["members"] = _MEMBERS
        classes.append(entry)
    sets = len(r.assignment)
    clustered = int(np.count_nonzero(r.assignment))
    unclustered: dict[str, Any] = {"size": r.unclustered, "groups": sets - clustered}
    if with_members:
        unclustered["members"] = _MEMBERS
    doc = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "job": stored.job,
        "site": {"start_url": stored.start_url},
        "parameters": {"method": "shingles", "cutoff": stored.cutoff, "samples": stored.samples,
                       "occurrence": stored.occurrence, "similarity": stored.similarity, "seed": stored.seed,
                       "match": f"{MATCH}/{SIGNATURE_VALUES}", "shingle": stored.length,
                       "site_share": SITE_SHARE},
        "pages": r.pages,
        "groups": sets,
        "groups_kept": clustered,
        "classes": classes,
        "unclustered": unclustered,
    }
    lists: list[Iterable[str]] = []
    if with_members:
        lists = [stored.members[c.id] for c in r.clusters] + [stored.members[0]]
    return doc, lists
