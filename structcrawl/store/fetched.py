"""The pages a structure crawl fetched, read back one at a time: what a harvest of the same store need not fetch.

A harvest run right after its model's structure crawl would fetch again many
of that crawl's pages: the hubs (home, indexes, listings) that lead to the
targets, which a densest-first crawl fetches first.  The store holds every one
of them as the crawl saw it (links with their XPaths and paths, tag and element
paths, title), which is all the harvest needs to classify a page and follow its
links; only the index (requested and final URL -> page row) is read up front,
a page's links when the harvest asks for it.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from structcrawl.core.features import Link, PageFeatures
from structcrawl.store import jobs as J
from structcrawl.store import schema as S
from structcrawl.store.history import Vocabulary


class FetchedPages:
    """The pages of the structure job ``job_id`` of ``engine``'s store, by requested or final URL."""

    def __init__(self, engine: Engine, job_id: int) -> None:
        self.engine = engine
        self.job_id = job_id
        with engine.connect() as conn:
            self.vocab = Vocabulary(conn, job_id)
            p = S.pages
            rows = conn.execute(sa.select(p.c.id, p.c.url_id, p.c.requested_id)
                                .where(p.c.job_id == job_id).order_by(p.c.id)).all()
        urls = self.vocab.urls
        self._ids: dict[str, int] = {}
        for page_id, url_id, requested_id in rows:
            self._ids.setdefault(urls[requested_id], page_id)
            self._ids.setdefault(urls[url_id], page_id)

    @classmethod
    def of_job(cls, engine: Engine, name: str, seed_url: str) -> FetchedPages | None:
        """The pages of the structure crawl named ``name`` from ``seed_url``, or None when the store holds
        no such crawl."""
        with engine.connect() as conn:
            info = J.get_job(conn, name)
        if info is None or info.parameters.get("kind") == J.HARVEST_KIND or info.seed_url != seed_url:
            return None
        return cls(engine, info.id)

    def __len__(self) -> int:
        return len(self._ids)

    def take(self, url: str) -> PageFeatures | None:
        """The stored page requested as, or landed on at, ``url`` (its features' ``url`` the final URL),
        once: a URL is handed out once."""
        page_id = self._ids.pop(url, None)
        if page_id is None:
            return None
        p, lk = S.pages, S.links
        vocab = self.vocab
        with self.engine.connect() as conn:
            url_id, tagset_id, truncated, title = conn.execute(
                sa.select(p.c.url_id, p.c.tagset_id, p.c.truncated, p.c.title)
                .where(p.c.job_id == self.job_id, p.c.id == page_id)).one()
            links = tuple(Link(vocab.urls[t], vocab.xpaths[x], vocab.paths[path]) for t, x, path in conn.execute(
                sa.select(lk.c.target_id, lk.c.xpath_id, lk.c.path_id)
                .where(lk.c.job_id == self.job_id, lk.c.page_id == page_id).order_by(lk.c.pos)))
        tag_paths, element_paths = vocab.page_paths[tagset_id]
        return PageFeatures(url=vocab.urls[url_id], links=links, tag_paths=tag_paths,
                            element_paths=element_paths, truncated=bool(truncated), title=title or "")


__all__ = ["FetchedPages"]
