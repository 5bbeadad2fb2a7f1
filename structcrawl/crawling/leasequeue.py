"""scrapy-redis's priority queue with leases: a request a worker took is handed out again if it dies.

scrapy-redis pops a request off the shared sorted set and forgets it: a worker
killed while it downloads or parses loses every request it had taken
("in flight requests that crash mid-flight are not automatically retried",
istresearch/scrapy-cluster#255, about the same scheme).  Here the pop moves the
request, atomically (one Lua script), into
the worker's **lease** hash; the worker acknowledges it once the page's
outcome is durable — its item in PostgreSQL, the URLs it found queued.  Each
worker keeps a key ``alive:<worker>`` with a time to live; any worker that
finds a worker's key expired puts that worker's leases back in the queue
(with their priorities).  Lease and re-queue rather than reconciling from the
store: the store knows the pages done, not the requests taken, and Redis holds
both the queue and the leases, so one script moves a request between them
with nothing lost in between.

Queuing a new URL is atomic too: scrapy-redis's scheduler adds the
fingerprint to the dupefilter set and then pushes the request — a worker
killed in between leaves a URL marked seen that no worker will ever fetch.
One script does both, and acknowledges the lease of the request the new one
derives from (a redirect or a retry carries its parent's lease in ``meta``).

Keys (the queue key is scrapy-redis's ``SCHEDULER_QUEUE_KEY``):
``<queue>`` the sorted set of requests, ``<queue>:workers`` the set of
workers, ``<queue>:leases:<worker>`` hash lease id → ``"<score> <request>"``,
``<queue>:alive:<worker>`` the heartbeat, ``<queue>:parked`` the requests
a worker put aside (hub pages while the hubs show nothing new, see
:meth:`LeasedPriorityQueue.park`), ``<queue>:plan`` the stream of the pages
the workers fetched (:mod:`structcrawl.crawling.sharedplan`).  The scripts name keys built from
these (one Redis server or a single Redis Cluster slot via a ``{hash tag}``
in the queue key).
"""

from __future__ import annotations

import itertools
from typing import Any

from scrapy import Request
from scrapy_redis.queue import PriorityQueue

#: ``request.meta`` key of the lease a request was handed out under: [worker, lease id].
LEASE = "structcrawl_lease"

# KEYS: queue, dupefilter, the parent's lease hash ("" if none).
# ARGV: fingerprint, score, request, parent lease id ("" if none), "1" if dont_filter.
_PUSH_UNSEEN = """
local added = 1
if ARGV[5] ~= '1' then added = redis.call('SADD', KEYS[2], ARGV[1]) end
if added == 1 then redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3]) end
if ARGV[4] ~= '' then redis.call('HDEL', KEYS[3], ARGV[4]) end
return added
"""

# KEYS: queue, this worker's lease hash, workers set.  ARGV: highest score taken, the lease id of this pop
# (new for every pop, the same when the client resends it), this worker.  Returns {lease id, request} or nil.
# Idempotent: a Redis killed after running the script but before its reply reached the worker (append-only
# file written, then the reply) makes the client retry it on the restarted server; the retry returns the
# request the first run leased instead of leasing a second one that no one would fetch (the worker would
# drop that lease at idle: a page lost).
# The worker is one of the queue's workers again with its lease: one taken for dead (its heartbeat lapsed
# in a stall, another worker re-queued its leases and dropped it from the set) may pop before its next
# heartbeat; a lease outside the set is neither counted by the backlog nor ever re-queued.
_POP_LEASED = """
local again = redis.call('HGET', KEYS[2], ARGV[2])
if again then return {ARGV[2], string.sub(again, string.find(again, ' ', 1, true) + 1)} end
local top = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'WITHSCORES', 'LIMIT', 0, 1)
if #top == 0 then return false end
redis.call('ZREM', KEYS[1], top[1])
redis.call('HSET', KEYS[2], ARGV[2], top[2] .. ' ' .. top[1])
redis.call('SADD', KEYS[3], ARGV[3])
return {ARGV[2], top[1]}
"""

# KEYS: queue, workers set.  ARGV: key prefix of leases and heartbeats ("<queue>:").
# Re-queues the leases of every worker whose heartbeat expired; returns how many.
_RECLAIM = """
local n = 0
for _, w in ipairs(redis.call('SMEMBERS', KEYS[2])) do
  if redis.call('EXISTS', ARGV[1] .. 'alive:' .. w) == 0 then
    local held = redis.call('HGETALL', ARGV[1] .. 'leases:' .. w)
    for i = 1, #held, 2 do
      local v = held[i + 1]
      local sp = string.find(v, ' ', 1, true)
      redis.call('ZADD', KEYS[1], string.sub(v, 1, sp - 1), string.sub(v, sp + 1))
      n = n + 1
    end
    redis.call('DEL', ARGV[1] .. 'leases:' .. w)
    redis.call('SREM', KEYS[2], w)
  end
end
return n
"""

# KEYS: queue, parked set, the lease hash.  ARGV: lease id.  The leased request waits in the parked set.
_PARK = """
local v = redis.call('HGET', KEYS[3], ARGV[1])
if not v then return 0 end
local sp = string.find(v, ' ', 1, true)
redis.call('ZADD', KEYS[2], string.sub(v, 1, sp - 1), string.sub(v, sp + 1))
redis.call('HDEL', KEYS[3], ARGV[1])
return 1
"""

# KEYS: queue, parked set.  Every parked request back in the queue; returns how many.
_UNPARK = """
local n = redis.call('ZCARD', KEYS[2])
if n > 0 then
  redis.call('ZUNIONSTORE', KEYS[1], 2, KEYS[1], KEYS[2], 'AGGREGATE', 'MIN')
  redis.call('DEL', KEYS[2])
end
return n
"""

# KEYS: queue, workers set.  ARGV: key prefix.  Returns {requests queued, requests leased}, read at one instant.
_BACKLOG = """
local leased = 0
for _, w in ipairs(redis.call('SMEMBERS', KEYS[2])) do
  leased = leased + redis.call('HLEN', ARGV[1] .. 'leases:' .. w)
end
return {redis.call('ZCARD', KEYS[1]), leased}
"""


class LeasedPriorityQueue(PriorityQueue):
    """scrapy-redis's ``PriorityQueue`` (score = -priority) whose pops are leases of one worker."""

    worker = ""  #: set by the scheduler before the first pop

    def __init__(self, server: Any, spider: Any, key: str, serializer: Any = None) -> None:
        super().__init__(server, spider, key, serializer)
        self.prefix = f"{self.key}:"
        self.workers_key = f"{self.key}:workers"
        self.parked_key = f"{self.key}:parked"
        self.plan_key = f"{self.key}:plan"  #: the workers' page reports (structcrawl.crawling.sharedplan)
        self._lease_ids = itertools.count(1)  #: a worker's lease ids (its lease hash is its own)
        self._push_unseen = server.register_script(_PUSH_UNSEEN)
        self._pop_leased = server.register_script(_POP_LEASED)
        self._reclaim = server.register_script(_RECLAIM)
        self._backlog = server.register_script(_BACKLOG)
        self._park = server.register_script(_PARK)
        self._unpark = server.register_script(_UNPARK)

    def _encode_request(self, request: Request) -> str:
        """scrapy-redis's encoding, ``Request.to_dict``, without its search of the spider for the names of
        the callback and errback (``inspect.getmembers`` reads every attribute of the spider, properties
        too: half the CPU of queuing a request) when both are methods of the spider under their own
        names; anything else goes through ``to_dict``."""
        names = [self._method_name(request.callback), self._method_name(request.errback)]
        if "" in names:
            return super()._encode_request(request)
        obj = {"url": request.url, "callback": names[0], "errback": names[1], "headers": dict(request.headers)}
        for attr in request.attributes:
            obj.setdefault(attr, getattr(request, attr))
        if type(request) is not Request:
            obj["_class"] = f"{type(request).__module__}.{type(request).__name__}"
        return self.serializer.dumps(obj)

    def _method_name(self, func: Any) -> str | None:
        """The name of ``func`` on the spider (None for none; "" unless it is one of its methods by that name)."""
        if func is None:
            return None
        name = getattr(func, "__name__", "")
        if getattr(func, "__self__", None) is not self.spider:
            return ""
        return name if getattr(type(self.spider), name, None) is getattr(func, "__func__", None) else ""

    def leases_key(self, worker: str) -> str:
        return f"{self.prefix}leases:{worker}"

    def alive_key(self, worker: str) -> str:
        return f"{self.prefix}alive:{worker}"

    def push_unseen(self, request: Request, fingerprint: str, dupefilter_key: str, parked: bool = False) -> bool:
        """Queue ``request`` (``parked``: put it in the parked set) unless its fingerprint is in the
        dupefilter (one step); acknowledge the lease it inherited from the request it derives from.
        True if queued."""
        parent = request.meta.pop(LEASE, None)
        keys = [self.parked_key if parked else self.key, dupefilter_key, self.leases_key(parent[0]) if parent else ""]
        args = [fingerprint, -request.priority, self._encode_request(request), parent[1] if parent else "",
                "1" if request.dont_filter else "0"]
        return self._push_unseen(keys=keys, args=args) == 1

    def pop(self, timeout: int = 0, min_priority: int | None = None) -> Request | None:
        """The request of highest priority (at least ``min_priority``), leased to this worker."""
        most = "+inf" if min_priority is None else str(-min_priority)
        found = self._pop_leased(keys=[self.key, self.leases_key(self.worker), self.workers_key],
                                 args=[most, next(self._lease_ids), self.worker])
        if not found:
            return None
        lease, data = found
        request = self._decode_request(data)
        request.meta[LEASE] = [self.worker, lease.decode() if isinstance(lease, bytes) else lease]
        return request

    def ack(self, request: Request, pipe: Any = None) -> None:
        """The outcome of ``request`` is durable: forget its lease (in ``pipe``, a pipeline of the
        server, if given)."""
        lease = request.meta.pop(LEASE, None)
        if lease is not None:
            (pipe if pipe is not None else self.server).hdel(self.leases_key(lease[0]), lease[1])

    def park(self, request: Request) -> None:
        """Put a leased request aside, out of the queue, until :meth:`unpark` (the harvest's quiet hubs,
        :meth:`structcrawl.analysis.harvestplan.Harvest.hubs_quiet`, shared by the workers)."""
        lease = request.meta.pop(LEASE)
        self._park(keys=[self.key, self.parked_key, self.leases_key(lease[0])], args=[lease[1]])

    def withdraw(self, request: Request, fingerprint: str, dupefilter_key: str) -> None:
        """Take a leased request out of the job: its lease forgotten, its fingerprint out of the dupefilter
        (a URL of a collection the harvest found dead, which its plan holds: another collection, or a
        re-check of this one, may queue it again)."""
        lease = request.meta.pop(LEASE)
        with self.server.pipeline() as pipe:  # MULTI: both or neither
            pipe.hdel(self.leases_key(lease[0]), lease[1])
            pipe.srem(dupefilter_key, fingerprint)
            pipe.execute()

    def unpark(self) -> int:
        """Every parked request back in the queue; how many."""
        return int(self._unpark(keys=[self.key, self.parked_key]))

    def join(self, ttl: float) -> None:
        """This worker is alive for ``ttl`` seconds more (and one of the queue's workers)."""
        with self.server.pipeline() as pipe:
            pipe.sadd(self.workers_key, self.worker)
            pipe.set(self.alive_key(self.worker), 1, px=max(1, int(ttl * 1000)))
            pipe.execute()

    def leave(self) -> int:
        """This worker stops: its heartbeat goes, its leases go back to the queue (how many)."""
        self.server.delete(self.alive_key(self.worker))
        return self.reclaim()

    def reclaim(self) -> int:
        """Put the leases of every worker whose heartbeat expired back in the queue; how many."""
        return int(self._reclaim(keys=[self.key, self.workers_key], args=[self.prefix]))

    def drop_held(self) -> int:
        """Forget this worker's leases (their requests vanished inside Scrapy); how many."""
        with self.server.pipeline() as pipe:
            pipe.hlen(self.leases_key(self.worker))
            pipe.delete(self.leases_key(self.worker))
            held, _deleted = pipe.execute()
        return int(held)

    def backlog(self) -> tuple[int, int]:
        """(requests queued, requests leased by any worker) at one instant.  Every lease is a worker's of
        the workers set (a pop adds its worker; :meth:`reclaim` re-queues a worker's leases as it drops it).
        The parked set is not counted: a worker does not wait for requests put aside (``spiders/harvest.py``,
        ``_shared_idle``)."""
        queued, leased = self._backlog(keys=[self.key, self.workers_key], args=[self.prefix])
        return int(queued), int(leased)

    def clear(self) -> None:
        """Everything of the queue: requests, leases, workers (a harvest started afresh)."""
        workers = [w.decode() if isinstance(w, bytes) else w for w in self.server.smembers(self.workers_key)]
        self.server.delete(self.key, self.workers_key, self.parked_key, self.plan_key,
                           *(self.leases_key(w) for w in workers),
                           *(self.alive_key(w) for w in workers))
