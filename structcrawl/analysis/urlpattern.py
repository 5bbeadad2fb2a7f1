r"""URL regular expressions per cluster (Vertex rule matching).

Implements the URL half of §IV-A of Gulhane et al., *Web-scale information
extraction with Vertex* (ICDE 2011, Vertex): each cluster gets "the most
specific regex that matches all the URLs contained in the cluster", with "size
restrictions on the URL regex" against over-fitting, and a page's URL is first
filtered by these regexes — much cheaper than computing its shingles.

The paper gives no construction, so this module uses a simple, deterministic
one that generalises only what varies:

* Only the **path and query** are modelled; scheme, host and port are ignored
  (every class lives on one site, and http/https or ``www.`` variants should
  not change a page's type).  A URL is matched through its :func:`url_key`: the
  path (``/`` if empty) plus, if there is a query, ``?`` and its ``&``-separated
  parameters stably sorted by name — so parameter order does not matter.
* **Path**: URLs are split into ``/`` segments and grouped by segment count.
  Within a group, a segment position with one value stays literal; a few
  words the generator writes under several parents (``index.html`` in every
  directory) stay their alternation; otherwise
  its values are generalised (:func:`generalize`): common literal prefix and
  suffix (cut only at character-class boundaries, so words and numbers stay
  whole), all-digit parts → ``\d+``, trailing/leading numbers → ``\d+``,
  anything else → ``[^/?]+``.  At most ``max_alternatives`` (3) segment counts
  are kept as an alternation; beyond that the shared leading segments are
  followed by ``(?:/[^/?]*)*``.
* **Query**: each parameter name is literal; its values are generalised the
  same way (wildcard ``[^&]+``), and a numeric value is ``\d+`` even when only
  one was seen (page numbers, ids and offsets vary by nature).  The observed sets of parameter names become
  an alternation (an absent query allowed when some URL has none) up to
  ``max_alternatives``; beyond that each name is required if every URL has it
  and optional otherwise; beyond ``max_params`` (10) distinct names (faceted
  search) any query is accepted.

Example:
    >>> url_pattern(["http://shop.example/book/12.html", "http://shop.example/book/345.html"])
    '^/book/\\d+\\.html$'
    >>> p = url_pattern(["/category/fiction?page=2", "/category/poetry"])
    >>> p
    '^/category/[^/?]+(?:\\?page=\\d+)?$'
    >>> matches(p, "https://shop.example/category/travel?page=17"), matches(p, "/book/1.html")
    (True, False)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from urllib.parse import urlsplit

__all__ = ["url_pattern", "absolute_pattern", "matches", "url_key", "generalize", "compile_pattern"]

#: Size restrictions (Vertex §IV-A asks for some; the values are ours).
MAX_ALTERNATIVES = 3
MAX_PARAMS = 10

_SPECIAL = set(r"\.^$*+?{}[]|()")


def _escape(s: str) -> str:
    """Escape regex metacharacters only (``re.escape`` also escapes ``-``, ``~``, ``&``…)."""
    return "".join("\\" + c if c in _SPECIAL else c for c in s)


# --------------------------------------------------------------------------- #
# URL keys
# --------------------------------------------------------------------------- #
def _split(url: str) -> tuple[str, list[tuple[str, str | None]]]:
    parts = urlsplit(url.strip())
    path = parts.path or "/"
    if not path.startswith("/"):
        path = "/" + path
    params: list[tuple[str, str | None]] = []
    for item in parts.query.split("&"):
        if not item:
            continue
        name, eq, value = item.partition("=")
        params.append((name, value if eq else None))
    params.sort(key=lambda p: p[0])  # stable: repeated names keep their order
    return path, params


def _join_params(params: Iterable[tuple[str, str | None]]) -> str:
    return "&".join(n if v is None else f"{n}={v}" for n, v in params)


def url_key(url: str) -> str:
    """The string a URL pattern is matched against: path + canonical query.

    Scheme, host, port and fragment are dropped; the query's parameters are
    stably sorted by name; empty parameters (``a=1&&b=2``) are dropped.
    Percent-encoding is left as is.

    >>> url_key("https://x.example/s?q=a%20b&page=2#top")
    '/s?page=2&q=a%20b'
    """
    path, params = _split(url)
    return path + ("?" + _join_params(params) if params else "")


# --------------------------------------------------------------------------- #
# Generalising a column of values
# --------------------------------------------------------------------------- #
def _cls(c: str) -> int:
    if "0" <= c <= "9":
        return 0
    if c.isalpha():
        return 1
    return 2  # punctuation etc.: each such char is its own token


def _boundary(v: str, i: int) -> bool:
    """True if position ``i`` of ``v`` does not cut a run of digits or letters."""
    if i <= 0 or i >= len(v):
        return True
    a, b = _cls(v[i - 1]), _cls(v[i])
    return a != b or a == 2


def _common_prefix(values: Sequence[str]) -> int:
    n = min(len(v) for v in values)
    p = 0
    first = values[0]
    while p < n and all(v[p] == first[p] for v in values):
        p += 1
    while p > 0 and not all(_boundary(v, p) for v in values):
        p -= 1
    return p


def _common_suffix(values: Sequence[str]) -> int:
    n = min(len(v) for v in values)
    s = 0
    first = values[0]
    while s < n and all(v[len(v) - 1 - s] == first[len(first) - 1 - s] for v in values):
        s += 1
    while s > 0 and not all(_boundary(v, len(v) - s) for v in values):
        s -= 1
    return s


_DIGITS = re.compile(r"[0-9]+")
_TRAILING_DIGITS = re.compile(r"[0-9]+$")
_LEADING_DIGITS = re.compile(r"^[0-9]+")
_MAX_DEPTH = 16  # nesting limit of generalize(); deeper parts become the wildcard


def generalize(values: Iterable[str], wildcard: str = "[^/?]+") -> str:
    r"""The most specific pattern (of this module's kinds) matching every value.

    ``wildcard`` is the pattern for a varying part that is not a number: it
    must match every such part (``[^/?]+`` for path segments, ``[^&]+`` for
    query values).  Empty values make the generalised part optional.

    >>> generalize(["12.html", "345.html"])
    '\\d+\\.html'
    >>> generalize(["some-slug-12", "another-story-345"])
    '[^/?]+-\\d+'
    >>> generalize(["fiction", "poetry"])
    '[^/?]+'
    """
    values = sorted(set(values))
    if not values:
        raise ValueError("no values to generalise")
    return _gen_optional(values, wildcard, 0)


def _gen_optional(values: Sequence[str], wildcard: str, depth: int) -> str:
    nonempty = sorted({v for v in values if v})
    if not nonempty:
        return ""
    core = _gen(nonempty, wildcard, depth)
    if "" in values:
        return core + "?" if _is_atom(core) else f"(?:{core})?"
    return core


def _is_atom(p: str) -> bool:
    """True for patterns safe to quantify directly (``\\d+`` is not: ``\\d+?`` is lazy)."""
    return len(p) == 1 or (len(p) == 2 and p[0] == "\\")


def _gen(values: Sequence[str], wildcard: str, depth: int) -> str:
    # Values are non-empty and distinct.  Each level wraps one inner call, so a
    # pattern is a chain of literals and \d+ around at most one wildcard.
    if len(values) == 1:
        return _escape(values[0])
    if all(_DIGITS.fullmatch(v) for v in values):
        return r"\d+"
    if depth >= _MAX_DEPTH:
        return wildcard
    p = _common_prefix(values)
    rest = [v[p:] for v in values]
    s = _common_suffix(rest) if all(rest) else 0
    if p or s:
        middles = [v[: len(v) - s] for v in rest]
        suffix = rest[0][len(rest[0]) - s :]
        return _escape(values[0][:p]) + _gen_optional(middles, wildcard, depth + 1) + _escape(suffix)
    if all(_TRAILING_DIGITS.search(v) for v in values):
        heads = [_TRAILING_DIGITS.sub("", v) for v in values]
        return _gen_optional(heads, wildcard, depth + 1) + r"\d+"
    if all(_LEADING_DIGITS.match(v) for v in values):
        tails = [_LEADING_DIGITS.sub("", v) for v in values]
        return r"\d+" + _gen_optional(tails, wildcard, depth + 1)
    return wildcard


# --------------------------------------------------------------------------- #
# Path and query patterns
# --------------------------------------------------------------------------- #
def _columns_pattern(rows: Sequence[Sequence[str]], wildcard: str) -> list[str]:
    width = len(rows[0])
    return [_template_words(rows, j) or generalize((r[j] for r in rows), wildcard) for j in range(width)]


def _template_words(rows: Sequence[Sequence[str]], j: int) -> str | None:
    """The alternation of column ``j``'s values when they are the generator's words, not an entity's
    name: at most ``MAX_ALTERNATIVES`` of them, not numbers, each written under two different
    parents (the columns before it) or more.  erl_docgen names every application's front page
    ``index.html`` (``users_guide.html`` for the general guides): generalised to ``[^/?]+``, the front
    pages' pattern matched every reference and chapter page of the applications, and the harvest
    took the manual index's module column for front pages.  A slug seen under one parent only (a
    category's pages, ``/category/fiction/2``) stays an entity's name."""
    parents: dict[str, set[tuple[str, ...]]] = {}
    for r in rows:
        parents.setdefault(r[j], set()).add(tuple(r[:j]))
    if not 2 <= len(parents) <= MAX_ALTERNATIVES or any(_DIGITS.fullmatch(v) for v in parents):
        return None
    if any(len(under) < 2 for under in parents.values()):
        return None
    return "(?:" + "|".join(_escape(v) for v in sorted(parents)) + ")"


def _path_pattern(paths: Sequence[str], max_alternatives: int) -> str:
    rows = [p.split("/") for p in paths]
    by_len: dict[int, list[list[str]]] = {}
    for r in rows:
        by_len.setdefault(len(r), []).append(r)
    if len(by_len) <= max_alternatives:
        alts = ["/".join(_columns_pattern(by_len[n], "[^/?]+")) for n in sorted(by_len)]
        return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
    # too many depths: shared leading segments, then any tail
    shortest = min(by_len)
    head_len = shortest - 1  # the last segment of the shortest path varies in role
    head = _columns_pattern([r[:head_len] for r in rows], "[^/?]+") if head_len > 0 else []
    return "/".join(head) + "(?:/[^/?]*)*"


def _query_pattern(
    queries: Sequence[list[tuple[str, str | None]]], max_alternatives: int, max_params: int
) -> str:
    if not any(queries):
        return ""
    names = sorted({n for q in queries for n, _ in q})
    if len(names) > max_params:
        return r"(?:\?[^#]*)?"

    values: dict[str, list[str | None]] = {}
    for q in queries:
        for n, v in q:
            values.setdefault(n, []).append(v)

    def param(n: str) -> str:
        vs = values[n]
        concrete = [v for v in vs if v is not None]
        if not concrete:
            return _escape(n)
        if all(_DIGITS.fullmatch(v) for v in concrete):
            pat = r"=\d+"  # numeric parameters (page, id, offset) vary by nature
        else:
            pat = "=" + generalize(concrete, "[^&]+")
        if len(concrete) < len(vs):  # some occurrences had no "="
            pat = f"(?:{pat})?"
        return _escape(n) + pat

    shapes = sorted({tuple(n for n, _ in q) for q in queries})
    optional = () in shapes
    shapes = [s for s in shapes if s]
    if len(shapes) <= max_alternatives:
        alts = [r"\?" + "&".join(param(n) for n in shape) for shape in shapes]
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        return f"(?:{body})?" if optional else body
    # many shapes: names always present are required, others optional, in name
    # order; each parameter is preceded by "?" (first) or "&" (others).
    required = {n for n in names if all(any(m == n for m, _ in q) for q in queries)}
    sep = r"(?:(?<=\?)|&)"
    parts = []
    for n in names:
        item = sep + param(n)
        parts.append(f"(?:{item})+" if n in required else f"(?:{item})*")
    body = r"\?" + "".join(parts)
    return body if required and not optional else f"(?:{body})?"


def url_pattern(
    urls: Iterable[str],
    max_alternatives: int = MAX_ALTERNATIVES,
    max_params: int = MAX_PARAMS,
) -> str:
    r"""An anchored regular expression matching the :func:`url_key` of every URL.

    Args:
        urls: the URLs of one cluster (absolute or site-relative).
        max_alternatives: most path depths, and most query-parameter name sets,
            kept as alternatives before generalising further.
        max_params: most distinct query parameter names before any query is
            accepted.

    Returns:
        A Python ``re`` pattern, ``^…$``; use :func:`matches` to test URLs.

    >>> url_pattern(["/news/2024/05/some-slug-12", "/news/2023/11/other-story-345"])
    '^/news/\\d+/\\d+/[^/?]+-\\d+$'
    """
    if max_alternatives < 1:
        raise ValueError("max_alternatives must be >= 1")
    urls = list(urls)
    split = [_split(u) for u in urls]
    if not split:
        raise ValueError("url_pattern needs at least one URL")
    paths = sorted({p for p, _ in split})
    queries = [q for _, q in split]
    pattern = "^" + _path_pattern(paths, max_alternatives) + _query_pattern(
        queries, max_alternatives, max_params
    ) + "$"
    rx = re.compile(pattern)
    if not all(rx.match(url_key(u)) for u in urls):
        raise AssertionError(f"internal error: {pattern!r} does not match its URLs")  # pragma: no cover
    return pattern


def absolute_pattern(pattern: str, urls: Iterable[str]) -> str:
    r"""A :func:`url_pattern` pattern as a regex over absolute URLs, for ``LinkExtractor(allow=…)``.

    LinkExtractor and CrawlSpider rules test ``re.search`` against the absolute
    link URL, so the site-relative ``^/…$`` gets the scheme (http or https) and
    the host[:port] of ``urls`` (an alternation when the class spans hosts)
    in front, and an optional ``#fragment`` at the end.  Query parameters are
    matched in name order, as :func:`url_key` writes them.

    >>> absolute_pattern(r"^/book/\d+\.html$", ["http://shop.example:8000/book/1.html"])
    '^https?://shop\\.example:8000(?:/book/\\d+\\.html)(?:#.*)?$'
    """
    if not (pattern.startswith("^") and pattern.endswith("$")):
        raise ValueError(f"not a url_pattern pattern: {pattern!r}")
    hosts = sorted({urlsplit(u.strip()).netloc.lower() for u in urls} - {""})
    if not hosts:
        raise ValueError("absolute_pattern needs at least one absolute URL")
    host = _escape(hosts[0]) if len(hosts) == 1 else "(?:" + "|".join(_escape(h) for h in hosts) + ")"
    return "^https?://" + host + "(?:" + pattern[1:-1] + ")(?:#.*)?$"


@lru_cache(maxsize=1024)
def compile_pattern(pattern: str) -> re.Pattern[str]:
    """``re.compile`` with a cache, for patterns from :func:`url_pattern`."""
    return re.compile(pattern)


def matches(pattern: str | re.Pattern[str], url: str) -> bool:
    """True if ``url`` (absolute or site-relative) matches a :func:`url_pattern` pattern."""
    rx = compile_pattern(pattern) if isinstance(pattern, str) else pattern
    return rx.match(url_key(url)) is not None
