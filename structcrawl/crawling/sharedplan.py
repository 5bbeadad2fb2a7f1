"""One harvest plan for every worker of a shared harvest: the pages each fetched, in one Redis stream.

A worker's :class:`~structcrawl.analysis.harvestplan.Harvest` learns from the
pages it is fed: which collections lead to the targets (probes within the
exploration budget), which are dead, which URL shapes redirect, when the hubs
are quiet.  Fed only its own pages, each of three workers spends its own
exploration budget and learns every dead collection on its own (on the
900-page demo three workers fetched 757 and 784 pages where one process
fetched 589–686).  So every worker appends what it made of each page to the
stream ``<queue>:plan`` and feeds its plan the other workers' pages, in the
stream's order: the plan is deterministic given the pages it is fed
(harvestplan's docstring), so the workers' plans agree up to the pages not
read yet, and the budget is the job's, not each worker's.  A worker that joins
late reads the stream from its start, as a resumed one-process harvest
replays its store.

A report carries what the plan needs and no more: the page's URL, class,
collection key, the URL asked for and whether it was a probe, and only the
link sightings new to the worker that fetched it (a sighting seen before
changes no plan: ``Harvest.page`` skips it), so the stream holds each link of
the site about once; deflated, a report of the demo takes ~0.4 kB. It also
lists the URLs that worker queued since its last report: another worker's
plan, fed the same page, wants the same URLs, and skips those instead of
asking Redis's dupefilter again for each.

The plan running dry is a report too.  A one-process harvest re-checks the
skipped collections when nothing is waiting and nothing is in flight
(``Harvest.recheck``, issue 14); shared, that moment is the job's, not a
worker's: no request queued in Redis nor leased by any worker.  The worker
that finds it so first reads the stream to its end (every page acknowledged
is reported), re-checks its plan and appends a **re-check** report, round
*k* of the job, before it queues the probes; every other worker re-checks its
plan when it reads that report, at the same place in the stream's order, so
all plans open the same collections and hand out the same probes (queued
once: the dupefilter and the URLs each report lists), counted against one
budget.  Two workers that ran dry at the same moment both send round *k*; the
second one read is skipped.  (Each worker re-checking on its own, whenever its
own plan ran dry, probed three times over: 776–806 pages fetched against one
process's ~650 on the 900-page demo.)  What a re-check probes is what the
skipped collections hold: a worker that takes from the queue a request of a
collection its plan found dead sends a **hold** report before the queue forgets
the request, and every plan holds the URL in that collection
(``Harvest.hold``), as the one-process plan does when it pops one.

The stream is the job's state in Redis, like the queue and the dupefilter
(persistent, deleted with them when a harvest starts afresh).  A report sent
twice (the client resends a command whose reply a restarting Redis lost) is
read once: each carries its worker's sequence number.
"""

from __future__ import annotations

import base64
import json
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from structcrawl.analysis.harvestplan import Entry, Key

#: The stream's field holding a report (JSON).
FIELD = "r"


@dataclass
class Report:
    """What one worker made of one page (``failed``: a URL that gave no page)."""

    url: str
    key: Key | None
    explore: bool
    queued: list[str]  #: URLs the worker queued since its previous report
    failed: bool = False
    held: bool = False  #: a URL of a dead collection that worker took back from the queue (``Harvest.hold``)
    alias: bool = False  #: a failure: it redirected to a page fetched already
    referer: str | None = None
    cls: int | None = None
    collections: dict[str, list[str]] | None = None  #: path -> URLs sighted there first on this page
    requested: str | None = None

    def entry(self) -> Entry:
        return Entry(self.url, self.key, self.referer, self.explore)


@dataclass
class Recheck:
    """A worker found the job's plan run dry and re-checked the skipped collections (round ``round``)."""

    round: int


def _pack(report: dict[str, Any]) -> str:
    """A report as stored: JSON, deflated (its URLs share the site's prefix and its paths the page's; a
    demo page's 980 bytes take 292), in base64 (text for a client that decodes replies)."""
    return base64.b64encode(zlib.compress(json.dumps(report, separators=(",", ":")).encode())).decode("ascii")


def _unpack(data: str | bytes) -> dict[str, Any]:
    return json.loads(zlib.decompress(base64.b64decode(data)))


def _key(value: Any) -> Key | None:
    return None if value is None else (value[0], value[1])


class PlanStream:
    """A worker's end of its job's stream: reports to send, reports of the other workers to read."""

    def __init__(self, server: Any, key: str, worker: str) -> None:
        self.server = server
        self.key = key
        self.worker = worker
        self.outbox: list[dict[str, Any]] = []
        self.sent = 0  #: this worker's reports so far (the sequence number of the last)
        self.last_id = "-"  #: the stream entry read last ("-": none yet)
        self.read: dict[str, int] = {}  #: worker -> sequence number of its last report read
        self.rechecks = 0  #: re-check rounds of the job, sent or read

    def page(self, url: str, key: Key | None, cls: int | None, sightings: Iterable[tuple[str, Key]],
             explore: bool, requested: str, queued: list[str]) -> None:
        """A page this worker fetched; ``sightings``: the (URL, collection key) its plan saw there first."""
        collections: dict[str, list[str]] = {}
        for u, ckey in sightings:
            collections.setdefault(ckey[1], []).append(u)
        self._add({"u": url, "k": key, "c": cls, "s": collections, "x": explore,
                   "r": None if requested == url else requested, "q": queued})

    def failed(self, entry: Entry, alias: bool, queued: list[str]) -> None:
        """A URL this worker handed out that gave no page."""
        self._add({"f": entry.url, "k": entry.key, "ref": entry.referer, "x": entry.explore, "a": alias,
                   "q": queued})

    def hold(self, entry: Entry) -> None:
        """A URL of a dead collection this worker took back from the queue: every plan holds it."""
        self._add({"h": entry.url, "k": entry.key, "ref": entry.referer})

    def recheck(self) -> None:
        """The job's plan ran dry and this worker's plan re-checked: the next round of the job."""
        self.rechecks += 1
        self._add({"rc": self.rechecks})

    def _add(self, report: dict[str, Any]) -> None:
        self.sent += 1
        self.outbox.append({"w": self.worker, "n": self.sent, **report})

    def send(self) -> None:
        """Send this worker's reports; read nothing."""
        with self.server.pipeline(transaction=False) as pipe:
            self._write(pipe)
            pipe.execute()
        self.outbox = []

    def _write(self, pipe: Any) -> None:
        for report in self.outbox:
            pipe.xadd(self.key, {FIELD: _pack(report)})

    def exchange(self, also: Callable[[Any], object] | None = None) -> list[Report | Recheck]:
        """Send this worker's reports; the other workers' reports not read yet, in the stream's order
        (one round trip, with the commands ``also`` adds to its pipeline)."""
        with self.server.pipeline(transaction=False) as pipe:
            self._write(pipe)
            if also is not None:  # after the reports: a worker killed mid-send may leave a page reported
                also(pipe)  # and not acknowledged (fetched again, reported twice), never the reverse
            pipe.xrange(self.key, min=self.last_id if self.last_id == "-" else f"({self.last_id}")
            entries = pipe.execute()[-1]
        self.outbox = []
        reports: list[Report | Recheck] = []
        for entry_id, fields in entries:
            self.last_id = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
            data = _unpack(fields[FIELD.encode()] if FIELD.encode() in fields else fields[FIELD])
            worker, n = data["w"], data["n"]
            if worker == self.worker or n <= self.read.get(worker, 0):
                continue  # this worker's own, or one sent twice
            self.read[worker] = n
            if "rc" in data:
                if data["rc"] > self.rechecks:  # not a round this worker sent or read already
                    self.rechecks = data["rc"]
                    reports.append(Recheck(data["rc"]))
            elif "h" in data:
                reports.append(Report(data["h"], _key(data["k"]), False, [], held=True, referer=data["ref"]))
            elif "f" in data:
                reports.append(Report(data["f"], _key(data["k"]), bool(data["x"]), data["q"], failed=True,
                                      alias=bool(data["a"]), referer=data["ref"]))
            else:
                reports.append(Report(data["u"], _key(data["k"]), bool(data["x"]), data["q"], cls=data["c"],
                                      collections=data["s"], requested=data["r"] or data["u"]))
        return reports
