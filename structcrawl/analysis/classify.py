"""Which class of a site model is a page?  The pure part of ``structcrawl classify``: no I/O.

A page's class is the class minimising its encoding cost under the model (``SiteModel.classify``,
Crescenzi et al. §4.1), or None when no class fits better than a class of its own; the cost is that
encoding cost in bits.  Pages that fit no class are grouped by kind (``UnseenGroups``).  Reading
inputs (URLs, local files, stdin) and writing the JSON lines is :mod:`structcrawl.commands.classify`'s.
"""

from __future__ import annotations

from collections.abc import Iterable

from structcrawl.core.features import PageFeatures, extract
from structcrawl.core.placement import PLACE_SIMILARITY
from structcrawl.sitemodel import LoadedModel

#: Distinct element-path sets an unseen group keeps to compare later pages with: a template's
#: pages repeat a few sets, and comparing with every page of a large group would make
#: classifying quadratic in the pages that fit no class.
GROUP_SETS = 64


class Classifier:
    """A loaded site model as a classifier of HTML pages (``LoadedModel.classify_page`` takes features)."""

    def __init__(self, model: LoadedModel) -> None:
        self.model = model

    def classify(self, body: bytes, url: str, content_type: str | None = None) -> tuple[int | None, float]:
        """(class id or None, encoding cost in bits) of the HTML ``body`` served at ``url``."""
        return self.classify_features(extract(body, url, content_type))

    def classify_features(self, features: PageFeatures) -> tuple[int | None, float]:
        """The same for a page already parsed (the harvest spider needs its links too)."""
        return self.model.classify_page(features)


class UnseenGroups:
    """Pages that fit no class of the model, grouped by kind in the order they come.

    A page of a type the crawl never reached fits no class (erlang's 68 embedded Javadoc pages,
    linked from one chapter a crawl did not fetch); answered alone, each would be a type of its
    own.  A page joins the group of the earlier unseen page most like it by element paths — the
    placement's measure (``structcrawl.core.placement``: Jaccard similarity with the site's
    skeleton left out, at least ``PLACE_SIMILARITY``; ties: the earlier group) — else it opens a
    group.  Groups are numbered from 1 in order of their first page.  Single linkage as the pages
    come: two groups that a later page would bridge stay two.  docs/design.md, item 49.

    * ``group(element_paths)`` -> int: the group of the next page that fits no class.
    * ``label(class_id, element_paths)``: the class, or ``("unseen", group)`` when it is None.
    """

    def __init__(self, skeleton: Iterable[str] = ()) -> None:
        self.skeleton = frozenset(skeleton)
        self._sets: list[list[frozenset[str]]] = []  #: per group, the first GROUP_SETS distinct path sets

    def label(self, class_id: int | None, element_paths: Iterable[str]) -> int | tuple[str, int]:
        """A page's cluster for scoring: its class, else ``("unseen", its group)``."""
        return ("unseen", self.group(element_paths)) if class_id is None else class_id

    def group(self, element_paths: Iterable[str]) -> int:
        paths = frozenset(element_paths) - self.skeleton
        best, best_similarity = 0, 0.0
        for number, sets in enumerate(self._sets, 1):
            for kept in sets:
                union = len(paths | kept)
                similarity = len(paths & kept) / union if union else 1.0
                if similarity > best_similarity:
                    best, best_similarity = number, similarity
        if best_similarity < PLACE_SIMILARITY:
            self._sets.append([])
            best = len(self._sets)
        sets = self._sets[best - 1]
        if len(sets) < GROUP_SETS and paths not in sets:
            sets.append(paths)
        return best
