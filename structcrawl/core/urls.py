"""URL normalisation shared by page features, the frontier and the crawler.

A link's URL is resolved against the page (or its ``<base href>``), then put in
one canonical form so that the same page is never counted twice: scheme and host
lower-cased, default port dropped, dot segments removed, fragment dropped, and
session-id parameters removed from the query and from ``;param=`` path segments
(UXClust §4.1: "removes forced session id tokens, such as phpsessid, cfid,
aspsessionid").  Only http(s) URLs survive; everything else normalises to None.
"""

from __future__ import annotations

import re
from urllib.parse import urljoin, urlsplit, urlunsplit

from w3lib.url import safe_url_string

#: Query/path parameter names (lower-case) that carry a session id.
SESSION_PARAMS = frozenset(
    {"phpsessid", "jsessionid", "sid", "sessionid", "session_id", "cfid", "cftoken", "aspsessionid"}
)

_SCHEMES = ("http", "https")
_DEFAULT_PORTS = {"http": ":80", "https": ":443"}
# WHATWG URL parsing strips these anywhere in an href.
_STRIP_INSIDE = re.compile(r"[\t\n\r]")
_ASPSESSION = re.compile(r"^aspsessionid[a-z]*$")


def _is_session_param(name: str) -> bool:
    name = name.lower()
    return name in SESSION_PARAMS or bool(_ASPSESSION.match(name))


def remove_dot_segments(path: str) -> str:
    """RFC 3986 §5.2.4, for absolute hrefs that urljoin leaves alone."""
    out: list[str] = []
    segments = path.split("/")
    for i, seg in enumerate(segments):
        if seg == ".":
            if i == len(segments) - 1:
                out.append("")
        elif seg == "..":
            if len(out) > 1:
                out.pop()
            if i == len(segments) - 1:
                out.append("")
        else:
            out.append(seg)
    result = "/".join(out)
    return result if result.startswith("/") else "/" + result


def _clean_query(query: str) -> str:
    parts = [p for p in query.split("&") if p and not _is_session_param(p.split("=", 1)[0])]
    return "&".join(parts)


def _clean_path(path: str) -> str:
    # ;jsessionid=ABC path parameters (Java servlets) and similar
    segs = []
    for seg in path.split("/"):
        if ";" in seg:
            head, *params = seg.split(";")
            params = [p for p in params if not _is_session_param(p.split("=", 1)[0])]
            seg = ";".join([head, *params])
        segs.append(seg)
    return "/".join(segs)


def normalize_url(href: str, base: str | None = None) -> str | None:
    """Resolve ``href`` against ``base`` and return its canonical http(s) form, or None.

    None for empty hrefs and for non-http(s) schemes (``javascript:``, ``mailto:``,
    ``tel:``, ``data:``, ``ftp:``, ``file:`` …) and unparsable URLs.
    """
    href = href.strip()
    if not href:
        return None
    if "\t" in href or "\n" in href or "\r" in href:
        href = _STRIP_INSIDE.sub("", href)
    try:
        url = urljoin(base, href) if base else href
        if not url.isascii() or " " in url:
            url = safe_url_string(url)
        scheme, netloc, path, query, _fragment = urlsplit(url)
    except ValueError:
        return None
    scheme = scheme.lower()
    if scheme not in _SCHEMES or not netloc:
        return None
    netloc = netloc.lower()
    if netloc.endswith(_DEFAULT_PORTS[scheme]):
        netloc = netloc[: -len(_DEFAULT_PORTS[scheme])]
    if "@" in netloc:
        netloc = netloc.rsplit("@", 1)[1]  # credentials never go into page identity
    if not path:
        path = "/"
    elif "/." in path:
        path = remove_dot_segments(path)
    if ";" in path:
        path = _clean_path(path)
    if query:
        query = _clean_query(query)
    return urlunsplit((scheme, netloc, path, query, ""))

