"""The Compute-Model loop, pure Python, no Scrapy, no SQL: page features, site model, frontier,
stop rule, refinement."""
