"""The batch ledger: which popped URLs are still out, and which batches' model steps are due.

Pure bookkeeping (no scrapy): the spider tells it what was handed out and how
each URL ended; it answers which batches are complete in pop order, so that
model steps run in the order the frontier made its choices whatever order the
network answers in.  Every handed-out URL is accounted for exactly once.

Two requests for one page (a link and a redirect to it, two redirects): the
dupefilter drops the later-scheduled one, which may belong to an *earlier*
batch than the one that fetches the page.  The page then goes into the earlier
batch (:meth:`BatchLedger.duplicate`): the store commits batches in pop order,
so a committed batch never counts on a page that only a later, uncommitted
batch holds — a resume after a kill between the two commits would otherwise
take the page as fetched (its URL as issued) and never fetch it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from structcrawl.core.features import PageFeatures
    from structcrawl.core.frontier import Batch

#: Batches whose step ran are dropped from the front of the pop order this often.
_COMPACT_AFTER = 1024


class BatchState:
    """One popped batch: which of its URLs are still out, what came back."""

    __slots__ = ("batch", "failed", "fetched", "outstanding", "pages", "redirects", "seq", "targets")

    def __init__(self, seq: int, batch: Batch) -> None:
        self.seq = seq
        self.batch = batch
        self.outstanding: set[str] = set(batch.urls)
        self.pages: dict[str, PageFeatures] = {}  #: requested URL -> features (of the final URL)
        self.failed: dict[str, str] = {}  #: requested URL -> why
        self.redirects: dict[str, str] = {}  #: requested URL -> final URL
        self.fetched: dict[str, tuple[int, float]] = {}  #: requested URL -> (HTTP status, time) of its page
        self.targets: dict[str, list[str]] = {}  #: requested URL -> the URLs its request fetches for the crawl


class _Target:
    """A URL one request fetches (its own or a redirect hop's), and which batch's URL takes the result."""

    __slots__ = ("fetch", "holder")

    def __init__(self, fetch: tuple[BatchState, str]) -> None:
        self.fetch = fetch  #: the request that went to the network
        self.holder = fetch  #: the earliest batch's URL asking for it: it gets the page or failure


class BatchLedger:
    def __init__(self) -> None:
        self._batches: dict[int, BatchState] = {}
        self._order: list[int] = []  #: popped batches whose step has not run, pop order
        self._head = 0  #: index into _order of the first such batch
        self.uncompleted = 0  #: popped URLs not yet taken into the model
        self.outstanding = 0  #: popped URLs not yet accounted for
        self._targets: dict[str, _Target] = {}  #: URL -> its fetch, while that fetch's batch is not stepped

    def open(self, seq: int, batch: Batch) -> BatchState:
        """A batch handed to the crawl under number ``seq`` (its requests carry ``(seq, url)``)."""
        state = BatchState(seq, batch)
        self._batches[seq] = state
        self._order.append(seq)
        n = len(batch.urls)
        self.uncompleted += n
        self.outstanding += n
        return state

    def find(self, tag: tuple[int, str] | None) -> tuple[BatchState, str] | None:
        """The batch and URL of a request tag, None when unknown or already accounted for."""
        if not tag:
            return None
        seq, url = tag
        state = self._batches.get(seq)
        if state is None or url not in state.outstanding:
            return None
        return state, url

    def requesting(self, state: BatchState, url: str, target: str) -> None:
        """The request for ``url`` of ``state`` goes to ``target`` (``url`` itself, or a redirect's
        location), unless the dupefilter drops it: the first request for a target fetches it."""
        if target not in self._targets:
            self._targets[target] = _Target((state, url))
            state.targets.setdefault(url, []).append(target)

    def duplicate(self, state: BatchState, url: str, target: str) -> None:
        """The request for ``url`` of ``state`` was dropped: another request fetches ``target``.

        Accounted at once when that request's batch steps no later than ``state`` (or
        none is known: an earlier run fetched it); otherwise ``state`` takes the
        result — now if it came already, else when it comes (see the module docstring).
        """
        entry = self._targets.get(target)
        if entry is None or entry.holder[0].seq <= state.seq:
            self.account(state, url)
            return
        held_state, held_url = entry.holder
        entry.holder = (state, url)
        if held_url not in held_state.outstanding:
            self._move(held_state, held_url, state, url)
            self.account(state, url)
        elif (held_state, held_url) != entry.fetch:
            self.account(held_state, held_url)  # an earlier batch waits for it now instead

    def page(self, state: BatchState, url: str, features: PageFeatures, status: int, at: float) -> None:
        state.pages[url] = features
        state.fetched[url] = (status, at)
        self._deliver(state, url)

    def fail(self, state: BatchState, url: str, why: str) -> None:
        state.failed[url] = why
        self._deliver(state, url)

    def _deliver(self, state: BatchState, url: str) -> None:
        """``url`` of ``state`` has its result: it goes to the earliest batch waiting for it, if any
        (any other waiting URL is a plain duplicate of that one)."""
        self.account(state, url)
        waiting = {(held[0].seq, held[1]): held for target in state.targets.get(url, ())
                   if (held := self._targets[target].holder)[0] is not state and held[1] in held[0].outstanding}
        if not waiting:
            return
        self._move(state, url, *waiting[min(waiting)])
        for held_state, held_url in waiting.values():
            self.account(held_state, held_url)

    @staticmethod
    def _move(src: BatchState, src_url: str, dst: BatchState, dst_url: str) -> None:
        """The page (or failure) of ``src_url`` becomes ``dst_url``'s; ``src_url`` counts as a duplicate."""
        if src_url in src.pages:
            features = dst.pages[dst_url] = src.pages.pop(src_url)
            dst.fetched[dst_url] = src.fetched.pop(src_url)
            if features.url != dst_url:
                dst.redirects[dst_url] = features.url
        elif src_url in src.failed:
            dst.failed[dst_url] = src.failed.pop(src_url)

    def account(self, state: BatchState, url: str) -> None:
        state.outstanding.discard(url)
        self.outstanding -= 1

    def next_due(self) -> BatchState | None:
        """The earliest popped batch if every URL of it is accounted for (its step is due), removed."""
        if self._head >= len(self._order):
            self._compact()
            return None
        seq = self._order[self._head]
        state = self._batches[seq]
        if state.outstanding:
            self._compact()
            return None
        self._head += 1
        del self._batches[seq]
        for targets in state.targets.values():
            for target in targets:
                del self._targets[target]  # every batch waiting for it steps no later than this one
        return state

    def stepped(self, state: BatchState) -> None:
        """``state``'s pages went into the model."""
        self.uncompleted -= len(state.batch.urls)

    def unaccounted(self) -> Iterator[tuple[BatchState, str]]:
        """Every URL still out, in pop order (a copy: safe to fail them while iterating)."""
        for seq in self._order[self._head:]:
            state = self._batches[seq]
            for url in sorted(state.outstanding):
                yield state, url

    def _compact(self) -> None:
        if self._head > _COMPACT_AFTER:
            del self._order[: self._head]
            self._head = 0
