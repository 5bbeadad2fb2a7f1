"""The HTML of the pages chosen for the classes' fields and records (``sc_bodies``).

Written as soon as a page is chosen (a few per class, :class:`structcrawl.sitemodel.PageBodies`),
before the writer thread commits its batch, so a committed page that was chosen always has its
text here: a resumed crawl and ``structcrawl export`` read the texts the crawl chose.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Sequence

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from structcrawl.store.schema import bodies

#: URLs per SELECT (SQLite allows 999 bound parameters in older builds).
_CHUNK = 500


def save(engine: Engine, job_id: int, rows: Sequence[tuple[str, str]]) -> None:
    """Store ``(url, text)`` rows, replacing the text of a URL stored before (a page fetched again)."""
    if not rows:
        return
    t = bodies
    with engine.begin() as conn:
        conn.execute(sa.delete(t).where(t.c.job_id == job_id, t.c.url.in_([u for u, _ in rows])))
        conn.execute(sa.insert(t), [
            {"job_id": job_id, "url": url, "body": zlib.compress(text.encode("utf-8"), 6)} for url, text in rows
        ])


def load(engine: Engine, job_id: int, urls: Iterable[str]) -> dict[str, str]:
    """The stored texts of those of ``urls`` that have one."""
    wanted = sorted(set(urls))
    out: dict[str, str] = {}
    t = bodies
    with engine.connect() as conn:
        if not sa.inspect(conn).has_table(t.name):
            return out  # a database made before sc_bodies, opened read-only: no texts, no fields
        for i in range(0, len(wanted), _CHUNK):
            chunk = wanted[i:i + _CHUNK]
            for url, blob in conn.execute(sa.select(t.c.url, t.c.body).where(t.c.job_id == job_id,
                                                                                t.c.url.in_(chunk))):
                out[url] = zlib.decompress(blob).decode("utf-8")
    return out
