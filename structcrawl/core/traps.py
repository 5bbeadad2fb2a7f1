"""Spider traps: endless URLs of one page, found from the crawl's own link graph.

A site is finite; a trap is not.  Session ids in the path (``/s/8F3A…/page``
linking ``/s/90B1…/page``), ever-growing query strings (``?q=a`` → ``?q=aa``
→ …), pages linking to themselves with a fresh parameter (``?r=1`` →
``?r=2`` …) and endless calendars (``?month=13`` → ``?month=14`` …) are one
page under endless URLs.  No single URL tells a trap from a large real site,
but the pages do.  :class:`TrapDetector` sees the pages of a crawl in
model-step order, groups URLs by :func:`url_shape` (host, path with every
segment holding a digit generalised, set of query keys) and applies two rules,
each after ``pages`` pages:

* **Fresh self-links nobody links again.**  A real site's pages link to each
  other — pagers show their neighbours, products their related products, every
  page the same menu — so URLs of one shape are soon linked from two different
  pages.  A shape whose ``pages`` pages each linked to a URL of that shape
  nobody had linked before, while no URL of the shape was ever linked from two
  pages, is a trap: its URLs found only on pages of trap shapes are refused (a
  session trap's ``/s/ID/page`` and ``/s/ID/other`` feed each other); the same
  kind of URL linked from elsewhere (an index page) is still fetched.
* **Echo chains.**  A page is an *echo* of the page that first linked it when
  both have the same shape, the same tag paths and the same links — links of
  their own shape compared by shape, all others by URL — and it links to just
  one URL nobody linked before: a calendar month linking the next month and
  nothing new besides.  Once ``pages`` echoes follow
  each other, the URLs first found on the last one are refused.  A pager's
  pages are not echoes (each lists other items), nor are two empty archive
  months that are not consecutive.

Not caught: shapes whose variable part holds no digit, traps that alternate
between shapes with different templates; the page and wall-time ceilings bound
those.

No Scrapy import: the spider feeds it pages and asks it about URLs.
"""

from __future__ import annotations

import re
import sys
from urllib.parse import urlsplit

from structcrawl.core.features import PageFeatures

_DIGIT = re.compile(r"[0-9]")


def url_shape(url: str) -> str:
    """``host/path?keys`` with every path segment holding a digit replaced by ``*`` and the
    query reduced to its sorted set of parameter names.

    >>> url_shape("http://h.example/s/0A1B2C/page?b=2&a=1&b=3")
    'h.example/s/*/page?a&b'
    >>> url_shape("http://h.example/category/art")
    'h.example/category/art'
    """
    parts = urlsplit(url)
    path = "/".join("*" if _DIGIT.search(seg) else seg for seg in parts.path.split("/"))
    keys = sorted({p.split("=", 1)[0] for p in parts.query.split("&") if p})
    return parts.netloc + path + ("?" + "&".join(keys) if keys else "")


class _Shape:
    __slots__ = ("linked_twice", "feeding", "trapped")

    def __init__(self) -> None:
        self.linked_twice = False  #: some URL of this shape was linked from two pages
        self.feeding = 0  #: pages of this shape that linked a fresh URL of this shape
        self.trapped = False


class TrapDetector:
    """Finds spider traps from the pages of a crawl; ``pages=0`` switches it off."""

    def __init__(self, pages: int = 10) -> None:
        if pages < 0:
            raise ValueError(f"trap pages must be >= 0, got {pages}")
        self.pages = pages
        self._shapes: dict[str, _Shape] = {}
        self._shape_of: dict[str, str] = {}  #: URL -> its shape, computed once
        self._found_on: dict[str, str] = {}  #: URL -> the page that first linked it
        self._echo: dict[str, tuple[int, int]] = {}  #: page with one fresh link -> (signature, echo depth)
        self.traps: list[str] = []  #: shapes found to be traps, in order
        self.echo_chains = 0  #: echo chains cut

    def shape(self, url: str) -> str:
        s = self._shape_of.get(url)
        if s is None:
            s = self._shape_of[url] = sys.intern(url_shape(url))  # a few shapes for many URLs
        return s

    def _state(self, shape: str) -> _Shape:
        st = self._shapes.get(shape)
        if st is None:
            st = self._shapes[shape] = _Shape()
        return st

    def _trapped(self, shape: str) -> bool:
        st = self._shapes.get(shape)
        return st is not None and st.trapped

    def observe(self, page: PageFeatures) -> str | None:
        """A fetched page, in model-step order; what it showed to be a trap, if anything
        (a trap shape, or ``echo chain at <url>``)."""
        if not self.pages:
            return None
        url = page.url
        own = self.shape(url)
        found_on = self._found_on
        fresh_own = False
        fresh = 0
        for target in {u for urls in page.collections.values() for u in urls}:
            if target == url:
                continue
            shape = self.shape(target)
            src = found_on.get(target)
            if src is None:
                found_on[target] = url
                fresh += 1
                fresh_own = fresh_own or shape == own
                self._state(shape)
            elif src != url:
                st = self._shapes[shape]
                if not st.trapped:
                    st.linked_twice = True
                elif not self._trapped(own):
                    found_on[target] = url  # linked from outside the traps too: fetched after all
        if fresh == 1:  # only such a page can be an echo, or start a chain of them
            signature = hash((page.tag_paths, tuple((link.xpath, own if self.shape(link.url) == own else link.url)
                                                    for link in page.links)))
            parent_url = found_on.get(url)
            parent = self._echo.get(parent_url) if parent_url is not None else None
            depth = parent[1] + 1 if parent is not None and parent[0] == signature and \
                self.shape(parent_url) == own else 0
            self._echo[url] = (signature, depth)
            if depth == self.pages:
                self.echo_chains += 1
                return f"echo chain at {url}"
        if not fresh_own:
            return None
        st = self._state(own)
        if st.linked_twice or st.trapped:
            return None
        st.feeding += 1
        if st.feeding < self.pages:
            return None
        st.trapped = True
        self.traps.append(own)
        return own

    def refuses(self, url: str) -> bool:
        """True for a URL found only on trap pages: of a trap shape, or at the end of an echo chain."""
        if not self.pages:
            return False
        src = self._found_on.get(url)
        if src is None:
            return False
        echo = self._echo.get(src)
        if echo is not None and echo[1] >= self.pages:
            return True
        return self._trapped(self.shape(url)) and self._trapped(self.shape(src))
