"""Jaccard similarity and union-find: how UXClust (§3.3) merges clusters, "basically [with]
the union-find algorithm" — shared by the online refinement (core) and the offline
clustering (analysis)."""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any, Generic, TypeVar

H = TypeVar("H", bound=Hashable)


def jaccard(a: frozenset[Any] | set[Any], b: frozenset[Any] | set[Any]) -> float:
    """Jaccard's coefficient ``|a ∩ b| / |a ∪ b|``; 1.0 for two empty sets."""
    if not a and not b:
        return 1.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


class UnionFind(Generic[H]):
    """Disjoint sets over hashable elements, with path compression and union by size.

    ``find`` and ``union`` run in amortised near-constant time
    (inverse Ackermann).  Elements are added implicitly by ``find``/``union``
    or explicitly by :meth:`add`.

    Example:
        >>> uf = UnionFind(["a", "b", "c", "d"])
        >>> uf.union("a", "b"); uf.union("b", "c")
        True
        True
        >>> uf.groups()
        [['a', 'b', 'c'], ['d']]
    """

    __slots__ = ("_parent", "_size", "_order")

    def __init__(self, elements: Iterable[H] = ()) -> None:
        self._parent: dict[H, H] = {}
        self._size: dict[H, int] = {}
        self._order: dict[H, int] = {}  # insertion rank, for deterministic groups()
        for e in elements:
            self.add(e)

    def add(self, x: H) -> None:
        """Add ``x`` as a singleton set (no-op if already present)."""
        if x not in self._parent:
            self._parent[x] = x
            self._size[x] = 1
            self._order[x] = len(self._order)

    def find(self, x: H) -> H:
        """The representative of ``x``'s set (adds ``x`` if unseen)."""
        parent = self._parent
        if x not in parent:
            self.add(x)
            return x
        root = x
        while parent[root] != root:
            root = parent[root]
        while parent[x] != root:  # path compression
            parent[x], x = root, parent[x]
        return root

    def union(self, a: H, b: H) -> bool:
        """Merge the sets of ``a`` and ``b``; True if they were different sets."""
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return False
        if self._size[ra] < self._size[rb] or (
            self._size[ra] == self._size[rb] and self._order[rb] < self._order[ra]
        ):
            ra, rb = rb, ra
        self._parent[rb] = ra
        self._size[ra] += self._size[rb]
        del self._size[rb]
        return True

    def connected(self, a: H, b: H) -> bool:
        """True if ``a`` and ``b`` are in the same set."""
        return self.find(a) == self.find(b)

    def size(self, x: H) -> int:
        """The size of ``x``'s set."""
        return self._size[self.find(x)]

    def groups(self) -> list[list[H]]:
        """All sets, members in insertion order, sets ordered by their first-added member."""
        out: dict[H, list[H]] = {}
        for x in self._order:  # dicts keep insertion order
            out.setdefault(self.find(x), []).append(x)
        return list(out.values())

    def __contains__(self, x: object) -> bool:
        return x in self._parent

    def __len__(self) -> int:
        """Number of elements (not sets)."""
        return len(self._parent)

    @property
    def n_groups(self) -> int:
        """Number of disjoint sets."""
        return len(self._size)
