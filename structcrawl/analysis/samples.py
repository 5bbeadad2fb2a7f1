"""Structurally diverse sample pages of a cluster (Vertex weighted greedy).

Implements §III-B of Gulhane et al., *Web-scale information extraction with
Vertex* (ICDE 2011, Vertex): choose few pages that together contain the
cluster's structural variations, for someone writing (or inducing) a wrapper.

* Each page is a set of XPath expressions — here its tag paths.
* ``F(X)`` is the number of cluster pages containing path ``X``.
* ``I(X) = 1 - Σ_{t∈T_X} F(X, t) / (M · |T_X|)`` is its *informativeness*,
  where ``T_X`` is the set of contents found at ``X``, ``F(X, t)`` the number
  of pages with content ``t`` at ``X`` and ``M`` the number of pages: close to
  0 for boiler-plate (same text on every page), close to 1 for data.
  :func:`informativeness` computes it from per-page contents; without
  contents every path gets ``I = 1``.
* A path weighs ``w(X) = F(X) · I(X)``; Algorithm 2 repeatedly picks the page
  with the largest total weight of still-uncovered paths, until every path is
  covered or K pages are chosen — the greedy ``1 - 1/e`` approximation of
  maximum weighted coverage (:func:`choose_samples`).

The paper uses K = 20 for annotation (editors then needed 1.6 pages on
average); our default is 5, the sample size of UXClust.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence

__all__ = ["choose_samples", "path_weights", "informativeness"]

DEFAULT_K = 5


def informativeness(contents: Sequence[Mapping[str, str | Iterable[str]]]) -> dict[str, float]:
    """``I(X)`` for every path, from the contents of the cluster's pages (Vertex §III-B).

    Args:
        contents: one mapping per cluster page, path → the text at that path
            (a string, or several strings when several nodes share the path).
            ``M = len(contents)``.

    Returns:
        path → ``1 - Σ_t F(X, t) / (M · |T_X|)``, in ``[0, 1)``.

    >>> pages = [{"h1": "Dune", "footer": "© Shop"}, {"h1": "Emma", "footer": "© Shop"}]
    >>> informativeness(pages)
    {'footer': 0.0, 'h1': 0.5}
    """
    m = len(contents)
    freq: dict[str, Counter[str]] = defaultdict(Counter)  # X -> t -> F(X, t)
    for page in contents:
        for path, texts in page.items():
            found = {texts} if isinstance(texts, str) else set(texts)
            freq[path].update(found)
    return {
        x: 1.0 - sum(ft.values()) / (m * len(ft))
        for x, ft in sorted(freq.items())
        if ft
    }


def path_weights(
    pages: Sequence[Iterable[str]],
    informativeness: Mapping[str, float] | None = None,
) -> dict[str, float]:
    """``w(X) = F(X) · I(X)`` for every path of the cluster (Vertex §III-B).

    Paths missing from ``informativeness`` (or all paths, if it is None) get
    ``I(X) = 1``, so their weight is their frequency.
    """
    freq: Counter[str] = Counter()
    for page in pages:
        freq.update(set(page))
    info = informativeness or {}
    return {x: f * float(info.get(x, 1.0)) for x, f in sorted(freq.items())}


def choose_samples(
    pages: Sequence[Iterable[str]],
    k: int = DEFAULT_K,
    informativeness: Mapping[str, float] | None = None,
) -> list[int]:
    """Indices of up to ``k`` structurally diverse pages: Vertex's Algorithm 2.

    Starting with all of the cluster's paths uncovered, repeatedly choose the
    page whose uncovered paths have the largest total weight ``w(X)`` (see
    :func:`path_weights`), and mark its paths covered; stop after ``k`` pages
    or when every path is covered.  Ties go to the page covering more
    uncovered paths (which also decides when all uncovered weight is 0, e.g.
    boiler-plate with ``I = 0``), then to the lowest index.  Duplicate pages are
    thus never chosen twice.

    Args:
        pages: the cluster's pages, each a set of tag paths.
        k: the most pages to return (K = 20 in the paper).
        informativeness: optional ``I(X)`` per path, see :func:`informativeness`.

    Returns:
        Page indices in the order chosen (most valuable first).

    >>> pages = [frozenset("ab"), frozenset("abc"), frozenset("ad"), frozenset("abc")]
    >>> choose_samples(pages, k=3)
    [1, 2]
    """
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k!r}")
    sets = [frozenset(p) for p in pages]
    w = path_weights(sets, informativeness)
    uncovered = set(w)

    def gain(i: int) -> tuple[float, int, int]:
        """Heap key (smaller is better): -weight, -count of uncovered paths, index."""
        new = sets[i] & uncovered
        return (-math.fsum(w[x] for x in new), -len(new), i)

    # Lazy greedy (Minoux 1978): gains only shrink as paths get covered, so a
    # stale key is an upper bound and the first fresh key on top of the heap is
    # the exact maximum — same choices, ties included, as recomputing all gains.
    heap = [gain(i) for i in range(len(sets))]
    heapq.heapify(heap)
    fresh = set(range(len(sets)))
    chosen: list[int] = []
    while uncovered and len(chosen) < k and heap:
        top = heapq.heappop(heap)
        i = top[2]
        if i not in fresh:
            fresh.add(i)
            heapq.heappush(heap, gain(i))
            continue
        if top[1] == 0:  # nothing left to cover (cannot happen while paths are uncovered)
            break
        chosen.append(i)
        uncovered -= sets[i]
        fresh.clear()
    return chosen
