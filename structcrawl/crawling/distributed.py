"""scrapy-redis's scheduler for many harvest workers on one queue (issue 15).

``scrapy_redis.scheduler.Scheduler`` with these changes, the first two and the
last because scrapy-redis alone loses requests:

* its queue is :class:`~structcrawl.crawling.leasequeue.LeasedPriorityQueue`:
  a request taken is a lease of this worker until the spider acknowledges it
  (:meth:`LeasingScheduler.ack`), handed out again if the worker dies;
* a new request is checked against the dupefilter and queued in one step
  (scrapy-redis does ``SADD`` then ``ZADD``: a kill in between loses the URL);
* a request the spider defers is parked in Redis, or withdrawn (its lease and
  fingerprint dropped) when its URL goes back to the harvest plan
  (``spider.defers``, PARK or WITHDRAW);
* the Redis client retries a lost connection for ``STRUCTCRAWL_REDIS_WAIT``
  seconds (a Redis restart: the worker waits and goes on) instead of failing
  the first call (rmax/scrapy-redis#108: "when redis is breakdown, the spider
  will crash").

The keys come from scrapy-redis's ``SCHEDULER_QUEUE_KEY`` and
``SCHEDULER_DUPEFILTER_KEY`` formatted with ``%(spider)s`` and ``%(job)s``
(the spider's ``job_name``): one queue per harvest job.  The serializer is
``SCHEDULER_SERIALIZER`` (structcrawl's default: JSON,
:mod:`structcrawl.crawling.redisjson`); persistence is on, so the queue outlives
every worker.  Every ``STRUCTCRAWL_WORKER_TTL / 3`` seconds a worker renews its
heartbeat and re-queues the leases of workers whose heartbeat expired.
"""

from __future__ import annotations

import importlib
import logging
import os
import secrets
from typing import TYPE_CHECKING, Any

from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry
from scrapy import Request, Spider
from scrapy.settings import Settings
from scrapy.utils.asyncio import create_looping_call
from scrapy.utils.misc import load_object
from scrapy_redis.connection import get_redis, get_redis_from_settings
from scrapy_redis.dupefilter import RFPDupeFilter
from scrapy_redis.scheduler import Scheduler

from structcrawl.crawling.leasequeue import LeasedPriorityQueue
from structcrawl.store.jobs import hostname

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

logger = logging.getLogger(__name__)

#: What ``spider.defers(request)`` asks of the scheduler: park the request in Redis (until ``unpark``), or
#: take it out of the job (its lease and fingerprint gone: the spider holds it and may queue it again).
PARK, WITHDRAW = "park", "withdraw"
#: Longest pause, in seconds, between two attempts to reach a Redis that went away.
RETRY_CAP = 1.0


def redis_params(settings: BaseSettings) -> dict[str, Any]:
    """scrapy-redis's ``REDIS_PARAMS`` plus retries of a lost connection for ``STRUCTCRAWL_REDIS_WAIT`` s."""
    wait = settings.getfloat("STRUCTCRAWL_REDIS_WAIT")
    retry = Retry(ExponentialBackoff(cap=RETRY_CAP, base=0.05), retries=max(0, int(wait / RETRY_CAP)))
    return {**settings.getdict("REDIS_PARAMS"), "retry": retry,
            "retry_on_error": [RedisConnectionError, RedisTimeoutError, ConnectionError]}


def worker_name() -> str:
    """A worker's id: host, pid and a random part (a restarted worker is a new one)."""
    return f"{hostname()}-{os.getpid()}-{secrets.token_hex(3)}"


def shared_keys(settings: BaseSettings, spider: Spider) -> tuple[str, str]:
    """The Redis keys of the queue and the dupefilter: scrapy-redis's settings with ``%(spider)s`` and
    ``%(job)s`` (the spider's ``job_name``; a ``%`` in it would be read as a format by scrapy-redis)."""
    names = {"spider": spider.name, "job": str(getattr(spider, "job_name", spider.name)).replace("%", "_")}
    return settings["SCHEDULER_QUEUE_KEY"] % names, settings["SCHEDULER_DUPEFILTER_KEY"] % names


def open_queue(settings: BaseSettings, spider: Spider) -> tuple[LeasedPriorityQueue, RFPDupeFilter]:
    """The shared queue and dupefilter of ``spider``'s job, outside a crawl (``structcrawl harvest``
    seeds the queue with them before any worker runs)."""
    server = get_redis_from_settings(Settings({**settings.copy_to_dict(), "REDIS_PARAMS": redis_params(settings)}))
    queue_key, dupefilter_key = shared_keys(settings, spider)
    serializer = importlib.import_module(settings["SCHEDULER_SERIALIZER"])
    return (LeasedPriorityQueue(server, spider, queue_key, serializer=serializer),
            RFPDupeFilter(server, key=dupefilter_key))


class LeasingScheduler(Scheduler):
    """scrapy-redis's scheduler whose requests are leases, queued atomically, on a Redis that may restart."""

    queue: LeasedPriorityQueue

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> LeasingScheduler:
        settings = Settings(crawler.settings.copy_to_dict())  # the crawler's are frozen
        settings.set("REDIS_PARAMS", redis_params(crawler.settings))
        instance = cls.from_settings(settings)
        instance.stats = crawler.stats
        instance.ttl = crawler.settings.getfloat("STRUCTCRAWL_WORKER_TTL")
        instance.worker = worker_name()
        instance.heartbeat_task = None
        return instance

    def open(self, spider: Spider) -> None:
        # scrapy-redis's open, with the job's keys and this queue class (its own logs through the
        # deprecated Spider.log)
        self.spider = spider
        self.worker = getattr(spider, "worker_name", None) or self.worker
        self.queue_key, self.dupefilter_key = shared_keys(spider.settings, spider)
        self.queue = load_object(self.queue_cls)(server=self.server, spider=spider, key=self.queue_key,
                                                 serializer=self.serializer)
        if not isinstance(self.queue, LeasedPriorityQueue):
            raise ValueError(f"SCHEDULER_QUEUE_CLASS must be a LeasedPriorityQueue for {type(self).__name__}, "
                             f"not {type(self.queue).__name__}")
        self.df = RFPDupeFilter(self.server, key=self.dupefilter_key, debug=spider.settings.getbool("DUPEFILTER_DEBUG"))
        # a harvest started afresh (-a fresh=true) starts from an empty queue and dupefilter
        if self.flush_on_start or getattr(getattr(spider, "config", None), "fresh", False):
            self.flush()
        self.queue.worker = self.worker
        self.queue.join(self.ttl)
        self.heartbeat_task = create_looping_call(self.heartbeat)
        self.heartbeat_task.start(self.ttl / 3, now=True)
        logger.info("Worker %s joined the queue %s (%d requests queued, %d leased)", self.worker, self.queue_key,
                    *self.queue.backlog())

    def heartbeat(self) -> None:
        """Stay alive; hand out again what dead workers held."""
        try:
            self.queue.join(self.ttl)
            reclaimed = self.queue.reclaim()
        except RedisConnectionError as exc:  # retried for STRUCTCRAWL_REDIS_WAIT s already
            logger.error("Redis unreachable: %s", exc)
            return
        if reclaimed:
            logger.warning("Re-queued %d requests of workers that stopped without finishing them", reclaimed)
            if self.stats:
                self.stats.inc_value("harvest/requeued", reclaimed)

    def close(self, reason: str) -> None:
        if self.heartbeat_task is not None and self.heartbeat_task.running:
            self.heartbeat_task.stop()
        try:
            requeued = self.queue.leave()
        except RedisConnectionError as exc:
            logger.error("Redis unreachable at close (the other workers re-queue this one's requests): %s", exc)
            return
        if requeued:
            logger.info("Re-queued %d requests this worker had taken", requeued)
        super().close(reason)

    def enqueue_request(self, request: Request) -> bool:
        fingerprint = self.df.request_fingerprint(request)
        if not self.queue.push_unseen(request, fingerprint, self.df.key):
            self.df.log(request, self.spider)
            return False
        if self.stats:
            self.stats.inc_value("scheduler/enqueued/redis")
        return True

    def next_request(self) -> Request | None:
        """The next request of the shared queue, of at least ``spider.min_priority()``; one the spider
        defers (``spider.defers(request)``) is parked in Redis instead (PARK) or taken out of the job
        (WITHDRAW: the spider keeps it), and the next one taken."""
        defers = getattr(self.spider, "defers", None)
        min_priority = getattr(self.spider, "min_priority", None)
        while True:
            request = self.queue.pop(min_priority=min_priority() if min_priority is not None else None)
            verdict = None if request is None or defers is None else defers(request)
            if verdict is None:
                break
            if verdict == WITHDRAW:
                self.queue.withdraw(request, self.df.request_fingerprint(request), self.df.key)
            else:
                self.queue.park(request)
            if self.stats:
                self.stats.inc_value(f"scheduler/{'withdrawn' if verdict == WITHDRAW else 'parked'}/redis")
        if request is not None and self.stats:
            self.stats.inc_value("scheduler/dequeued/redis")
        return request

    def park_new(self, request: Request) -> bool:
        """Put a new request straight in the parked set (dupefiltered like :meth:`enqueue_request`)."""
        return self.queue.push_unseen(request, self.df.request_fingerprint(request), self.df.key, parked=True)

    def unpark(self) -> int:
        """Every parked request back in the queue."""
        return self.queue.unpark()

    def ack(self, request: Request, pipe: Any = None) -> None:
        """The outcome of ``request`` is durable (its item stored, the URLs it showed queued); ``pipe``: a
        pipeline of the server to send the acknowledgement with."""
        self.queue.ack(request, pipe)

    def backlog(self) -> tuple[int, int]:
        """(requests queued, requests leased by any worker)."""
        return self.queue.backlog()

    def drop_held(self) -> int:
        """Forget this worker's leases: called when it is idle, so their requests vanished."""
        return self.queue.drop_held()


def check_redis(settings: BaseSettings) -> None:
    """ValueError with one line unless the Redis of ``REDIS_URL`` answers (checked once, not retried)."""
    url = settings.get("REDIS_URL")
    try:
        client = get_redis(url=url, socket_connect_timeout=5)
        try:
            client.ping()
        finally:
            client.close()
    except (RedisConnectionError, RedisTimeoutError, ValueError) as exc:
        raise ValueError(f"cannot reach Redis at {url}: {exc}") from None
