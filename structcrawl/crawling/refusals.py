"""Why a URL the crawl would fetch is refused before any download: shared by the structure and harvest spiders."""

from __future__ import annotations

from structcrawl.core.traps import TrapDetector


def refusal(url: str, max_url_length: int, traps: TrapDetector) -> str | None:
    """``url_too_long`` (over ``URLLENGTH_LIMIT``: Scrapy's UrlLengthMiddleware only sees requests returned
    by callbacks, not ``engine.crawl()``'s), ``trap`` (found only on spider-trap pages), or None: fetch it."""
    if max_url_length and len(url) > max_url_length:
        return "url_too_long"
    if traps.refuses(url):
        return "trap"
    return None
