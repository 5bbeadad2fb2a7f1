"""Why a URL the crawl would fetch is refused before any download: shared by the structure and harvest spiders."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.utils.url import url_has_any_extension

from structcrawl.core.traps import TrapDetector

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings


def ignored_extensions(settings: BaseSettings) -> frozenset[str]:
    """``STRUCTCRAWL_IGNORED_EXTENSIONS`` as the dotted, lower-case suffixes a URL path is matched against."""
    return frozenset("." + e.strip().lower().lstrip(".") for e in settings.getlist("STRUCTCRAWL_IGNORED_EXTENSIONS")
                     if e.strip())


def refusal(url: str, max_url_length: int, traps: TrapDetector, ignored: frozenset[str] = frozenset()) -> str | None:
    """``url_too_long`` (over ``URLLENGTH_LIMIT``: Scrapy's UrlLengthMiddleware only sees requests returned
    by callbacks, not ``engine.crawl()``'s), ``ignored_extension`` (a path ending in one of ``ignored``: a PDF,
    an image, an archive, as Scrapy's LinkExtractor skips them), ``trap`` (found only on spider-trap pages),
    or None: fetch it."""
    if max_url_length and len(url) > max_url_length:
        return "url_too_long"
    if ignored and url_has_any_extension(url, ignored):
        return "ignored_extension"
    if traps.refuses(url):
        return "trap"
    return None
