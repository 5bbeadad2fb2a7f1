"""Scrapy spiders of structcrawl (``SPIDER_MODULES = ["structcrawl.spiders"]``)."""

from structcrawl.spiders.structure import StructureSpider

__all__ = ["StructureSpider"]
