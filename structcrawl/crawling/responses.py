"""Which responses the structure spider models: HTML ones, by type or, when the type says nothing, by content."""

from __future__ import annotations

from scrapy.http import HtmlResponse, Response

_SNIFFED_TYPES = (b"", b"text/plain", b"application/octet-stream", b"binary/octet-stream")
_HTML_STARTS = (b"<!doctype html", b"<html", b"<head", b"<body", b"<frameset")


def is_html(response: Response) -> bool:
    """HTML by Content-Type, or — when the type says nothing useful (none, text/plain,
    octet-stream) — by the first bytes of the body (WHATWG-style sniffing)."""
    if isinstance(response, HtmlResponse):
        return True
    ctype = response.headers.get(b"Content-Type", b"").split(b";")[0].strip().lower()
    if b"html" in ctype:
        return True
    if ctype not in _SNIFFED_TYPES:
        return False
    head = response.body[:1024].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    return head.startswith(_HTML_STARTS)
