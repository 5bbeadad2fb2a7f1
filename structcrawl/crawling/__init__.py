"""Everything that imports Scrapy: the spider's machinery, extensions, the crawl runner."""
