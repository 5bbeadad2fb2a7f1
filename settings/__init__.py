"""Scrapy settings module of the structcrawl project (``scrapy.cfg``: ``default = settings``).

All values live in :mod:`structcrawl.settings`, so that ``scrapy crawl``
here and ``structcrawl crawl`` from anywhere use the same ones.  Put
project-specific overrides below the import.
"""

from structcrawl.settings import *  # noqa: F401,F403
