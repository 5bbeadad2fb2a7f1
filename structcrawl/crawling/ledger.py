"""The batch ledger: which popped URLs are still out, and which batches' model steps are due.

Pure bookkeeping (no scrapy): the spider tells it what was handed out and how
each URL ended; it answers which batches are complete in pop order, so that
model steps run in the order the frontier made its choices whatever order the
network answers in.  Every handed-out URL is accounted for exactly once.
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

    __slots__ = ("batch", "failed", "fetched", "outstanding", "pages", "redirects", "seq")

    def __init__(self, seq: int, batch: Batch) -> None:
        self.seq = seq
        self.batch = batch
        self.outstanding: set[str] = set(batch.urls)
        self.pages: dict[str, PageFeatures] = {}  #: requested URL -> features (of the final URL)
        self.failed: dict[str, str] = {}  #: requested URL -> why
        self.redirects: dict[str, str] = {}  #: requested URL -> final URL
        self.fetched: dict[str, tuple[int, float]] = {}  #: requested URL -> (HTTP status, time) of its page


class BatchLedger:
    def __init__(self) -> None:
        self._batches: dict[int, BatchState] = {}
        self._order: list[int] = []  #: popped batches whose step has not run, pop order
        self._head = 0  #: index into _order of the first such batch
        self.uncompleted = 0  #: popped URLs not yet taken into the model
        self.outstanding = 0  #: popped URLs not yet accounted for

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

    def page(self, state: BatchState, url: str, features: PageFeatures, status: int, at: float) -> None:
        state.pages[url] = features
        state.fetched[url] = (status, at)
        self.account(state, url)

    def fail(self, state: BatchState, url: str, why: str) -> None:
        state.failed[url] = why
        self.account(state, url)

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
