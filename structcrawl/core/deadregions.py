"""Dead regions: parts of a site where every URL tried failed.

A documentation package links to its siblings (rustdoc's standard library to
``core/``, ``alloc/`` and its source pages under ``src/``; gtk-doc's books to
each other), and a site installed or mirrored without them holds hundreds of
links into subtrees that answer 404.  The frontier's trap rule sees one link
collection at a time, so such links, spread over many collections a few each,
are fetched one by one: 251 of the 804 requests of rustdoc's ``std`` offline
(densest, 32 in flight; docs/design.md, item 51), and a collection whose
pending URLs all lie there holds the stop untried.  A site's files of a type
that is not HTML (Node.js's manual links each page's ``.json`` twin) are the
same along the other axis of a URL: 39 of its 104 requests.

A region is a directory (scheme, host and a path prefix ending in ``/``) or a
file type (scheme, host and ``*.ext``, the extension of the path's last
segment).  It is dead once ``failures`` of its URLs failed and none
succeeded; from then on none of its URLs is handed out.  A region where one
URL answered stays alive whatever else fails there (a site's broken links are
a minority of its live sections), and the verdict is final: the URLs of a
dead region are not fetched, so nothing could revive it, and a replayed crawl
decides the same.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Iterable
from urllib.parse import urlsplit

#: A file extension: a letter, then up to four letters or digits (``1.2`` is a version, not a type).
_EXTENSION = re.compile(r"\.([A-Za-z][A-Za-z0-9]{0,4})$")


def regions(url: str) -> list[str]:
    """The directories ``url`` lies under, outermost first, then its file type if it has one.

    >>> regions("http://h.example/src/std/io/mod.rs.html?x=1")
    ['http://h.example/', 'http://h.example/src/', 'http://h.example/src/std/', 'http://h.example/src/std/io/', 'http://h.example/*.html']
    >>> regions("http://h.example/v1.2/")
    ['http://h.example/', 'http://h.example/v1.2/']
    """
    parts = urlsplit(url)
    base = f"{parts.scheme}://{parts.netloc}"
    segments = parts.path.split("/")[1:]
    found = [base + "/" + "".join(s + "/" for s in segments[:i]) for i in range(len(segments))]
    ext = _EXTENSION.search(segments[-1]) if segments else None
    if ext:
        found.append(f"{base}/*.{ext.group(1).lower()}")
    return found


class DeadRegions:
    """Regions (``regions``) where ``failures`` URLs failed and none succeeded.

    * ``observe(succeeded, failed)`` -> [region]: the outcome of one batch's URLs (a
      URL that brought a page, a copy or a redirect succeeded); the regions found
      dead by it, no directory under another dead one.
    * ``dead(url)`` -> bool: ``url`` lies in a dead region.
    """

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self._failed: Counter = Counter()  #: region -> its URLs that failed
        self._alive: set[str] = set()  #: regions where some URL succeeded
        self.found: list[str] = []  #: dead regions, in the order they were found
        self._directories: list[str] = []
        self._types: set[str] = set()

    def observe(self, succeeded: Iterable[str], failed: Iterable[str]) -> list[str]:
        for url in succeeded:
            self._alive.update(regions(url))
        found = []
        for url in failed:
            for region in regions(url):  # outermost first: a directory under a dead one is not added
                self._failed[region] += 1
                if region in self._alive or self._failed[region] < self.failures or self.dead(region):
                    continue
                if region.endswith("/"):
                    self._directories.append(region)
                else:
                    self._types.add(region)
                self.found.append(region)
                found.append(region)
        return found

    def dead(self, url: str) -> bool:
        # a directory is a prefix of the (normalised) URLs under it: no parse per URL asked
        if any(url.startswith(d) for d in self._directories):
            return True
        return bool(self._types) and regions(url)[-1] in self._types
