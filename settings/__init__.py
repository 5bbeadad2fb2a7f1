"""Scrapy settings module of the structcrawl project (``scrapy.cfg``: ``default = settings``).

All values live in :mod:`structcrawl.default_settings`, so that ``scrapy crawl``
here and ``structcrawl crawl`` from anywhere use the same ones.  Put
project-specific overrides below the import.
"""

from structcrawl.default_settings import *  # noqa: F401,F403
