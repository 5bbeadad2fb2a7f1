"""structcrawl: a structure-discovery web crawler on Scrapy.

From one seed URL it learns the page types (templates) of a website and the
links between them while fetching a small part of the site.  The algorithm core
(``features``, ``model``, ``frontier`` …) has no Scrapy import; the Scrapy layer
lives in ``structcrawl.spiders`` and friends.
"""

__version__ = "0.1.0"
