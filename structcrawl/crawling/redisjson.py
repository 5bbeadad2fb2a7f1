"""JSON for scrapy-redis's queue (``SCHEDULER_SERIALIZER = "structcrawl.crawling.redisjson"``).

scrapy-redis pickles requests by default (``scrapy_redis.picklecompat``): whoever
can write to the Redis a worker reads from can then run code in that worker.
A shared Redis is reachable by other machines, so the harvest's requests travel
as JSON instead.  ``Request.to_dict`` holds bytes (headers, body) and the
harvest's :class:`~structcrawl.analysis.harvestplan.Entry` in ``meta``; both
are tagged objects here, rebuilt field by field: loading runs no code.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from structcrawl.analysis.harvestplan import Entry

_BYTES = "__bytes__"
_ENTRY = "__harvest_entry__"


def _tag(obj: Any) -> Any:
    if isinstance(obj, dict):  # header names are bytes: JSON keys must be text (Headers takes either)
        return {k.decode("latin-1") if isinstance(k, bytes) else k: _tag(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_tag(v) for v in obj]
    if isinstance(obj, bytes):
        return {_BYTES: base64.b64encode(obj).decode("ascii")}
    if isinstance(obj, Entry):
        return {_ENTRY: [obj.url, None if obj.key is None else list(obj.key), obj.referer, obj.explore]}
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    raise TypeError(f"cannot queue a {type(obj).__name__} in Redis as JSON: {obj!r:.80}")


def _untag(obj: dict[str, Any]) -> Any:
    if len(obj) == 1:
        if _BYTES in obj:
            return base64.b64decode(obj[_BYTES])
        if _ENTRY in obj:
            url, key, referer, explore = obj[_ENTRY]
            return Entry(url, None if key is None else (key[0], key[1]), referer, bool(explore))
    return obj


#: ``Request.to_dict`` fields left out when they hold Scrapy's default (``request_from_dict`` restores
#: them): a queue of a million requests is ~100 MB smaller.
_REQUEST_DEFAULTS = {"body": b"", "cookies": {}, "flags": [], "cb_kwargs": {}, "encoding": "utf-8", "method": "GET",
                     "dont_filter": False, "priority": 0, "errback": None, "headers": {}, "meta": {}}


def dumps(obj: Any) -> str:
    if isinstance(obj, dict) and "url" in obj and "callback" in obj:  # a request
        obj = {k: v for k, v in obj.items() if k not in _REQUEST_DEFAULTS or v != _REQUEST_DEFAULTS[k]}
    return json.dumps(_tag(obj), separators=(",", ":"))


def loads(data: str | bytes) -> Any:
    return json.loads(data, object_hook=_untag)
