"""The anchor of ``benchmarks/distributed_harvest.py``: scrapy-redis itself, a plain ``RedisSpider``.

    scrapy runspider benchmarks/redis_anchor.py -s REDIS_URL=… -s REDIS_START_URLS_KEY=… \\
        -s SCHEDULER=scrapy_redis.scheduler.Scheduler -s DUPEFILTER_CLASS=scrapy_redis.dupefilter.RFPDupeFilter

Each worker takes URLs (JSON ``{"url": …}``) from the shared start-URL list, fetches them through
scrapy-redis's scheduler and dupefilter, and yields one small item per page: no parsing, no store.
"""

from __future__ import annotations

from scrapy_redis.spiders import RedisSpider


class PlainRedisSpider(RedisSpider):
    name = "plain_redis"

    def parse(self, response):
        yield {"url": response.url, "status": response.status}
