"""Scrapy's robots.txt middleware, with every request that waits for robots.txt checked against it.

Scrapy 2.19's ``RobotsTxtMiddleware.robot_parser`` makes each request that
arrives while a host's robots.txt is being fetched await the one pending
``Deferred`` as an asyncio future (``maybe_deferred_to_future``, scrapy PR
#6802).  Twisted's ``Deferred.asFuture`` consumes the result it adapts: the
first waiter gets the parser, every later one ``None``, which the middleware
reads as "no robots.txt" and lets through.  Harmless when one start URL is in
flight while robots.txt is fetched; a harvest worker that joins a shared queue
takes a dozen requests at once, and fetched robots.txt-disallowed URLs
(``/cart`` of the demo: its pages' menus then opened the news section, ~170
pages that one process never fetches — issue 15).  Here each waiter gets a
``Deferred`` of its own, fired with the parser and passing it on, as Scrapy did
before that change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet.defer import Deferred

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.robotstxt import RobotParser


class SharedRobotsTxtMiddleware(RobotsTxtMiddleware):
    """:class:`RobotsTxtMiddleware` whose requests waiting for a robots.txt all get its parser."""

    async def robot_parser(self, request: Request) -> RobotParser | None:
        pending = self._parsers.get(urlparse_cached(request).netloc)
        if not isinstance(pending, Deferred):  # fetched already, or this request fetches it
            return await super().robot_parser(request)
        mine: Deferred[RobotParser | None] = Deferred()

        def pass_on(parser: RobotParser | None) -> RobotParser | None:
            mine.callback(parser)
            return parser  # for the next waiter

        pending.addCallback(pass_on)
        return await maybe_deferred_to_future(mine)
