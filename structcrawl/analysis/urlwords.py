"""The words of URLs (and of other texts): what the URLs of one page type share, for a person (class
names in the report) and for the harvest (which class a URL it has not fetched most likely is).

``/category/fiction`` and ``/category/poetry`` share ``category``; a page type's URL pattern (Vertex,
:mod:`structcrawl.analysis.urlpattern`) generalises what varies, its shared words are what stays.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from urllib.parse import parse_qsl, urlsplit

#: shortest URL word kept (single letters are ids, not words)
MIN_WORD = 2

_WORD = re.compile(r"[A-Za-z]+")
_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,5}$")


def url_words(url: str) -> list[str]:
    """The words of a URL's path and query parameter names, lower case, in order, without the file extension."""
    parts = urlsplit(url)
    segments = [s for s in parts.path.split("/") if s]
    if segments:
        segments[-1] = _EXTENSION.sub("", segments[-1])
    segments += [name for name, _ in parse_qsl(parts.query, keep_blank_values=True)]
    return text_words(*segments)


def text_words(*texts: str) -> list[str]:
    """The words (runs of ``MIN_WORD`` letters or more) of ``texts``, lower case, in order, each once
    (``Class Reference`` -> ``class, reference``)."""
    words: dict[str, None] = {}
    for text in texts:
        for word in _WORD.findall(text):
            if len(word) >= MIN_WORD:
                words.setdefault(word.lower(), None)
    return list(words)


def shared_url_words(samples: Sequence[str]) -> list[str]:
    """The words every sample URL has, in the first sample's order."""
    if not samples:
        return []
    rest = [set(url_words(u)) for u in samples[1:]]
    return [w for w in url_words(samples[0]) if all(w in r for r in rest)]
