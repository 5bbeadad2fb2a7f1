"""How a link-collection path is spelled in the model: template ids kept, content ids dropped.

Crescenzi et al. §2 (footnote 3) enrich collection paths with presentation
attributes so that a menu and a content list under the same tags stay apart.
Generators also write ids made from the page's own title or section heading
(``div#SQL-SELECT.refentry``, ``section#writing-servers``); such a path occurs
on one page only and splits a page type into one class per page.  A page
alone cannot tell a template id from a content id, the site can, in two ways:

* an id is kept only when the same value sits at the same place (the id-less
  path above it) on ``ID_EVIDENCE`` pages or more;
* and only at a place whose vocabulary is closed.  A generator that spells ids
  from headings uses common headings on many pages ("description", "exports"
  on every erl_docgen reference page, "event" on many QDoc classes) and rare
  ones on one page each, so recurrence alone keeps the common ones, and two
  pages of one type differ by the headings they happen to have.  A template's
  ids are a handful of values, each on many pages; content keeps coining new
  ones.  Where most values at a place were seen on one page only, the place
  is content and none of its ids is kept — unless those values are rare among
  the place's observations: the Good–Turing estimate of how often the place
  shows a value never seen before is the share of its *observations* that
  are values seen once.  crystal's section headings
  (``h2#enum-members``, ``h2#constructors``) share their place with the doc
  comments' own headings, 24 of its 41 values but 24 of ~3,030 observations:
  a closed place, its recurring values kept.

Generators also lay one list out two ways: a short list plainly, a long one
cut into columns of a layout table or boxes (QDoc's "all members" pages, a
wiki's category pages), so two pages of one type show the same list under two
paths, ``div.main/ul/li/a`` and ``div.main/div.table/table/tr/td/ul/li/a``.
The site tells a layout box from a section of its own: a *wrapper* (the steps
between a place and a whole list below it) is dropped from every path when the
list was seen both with and without it, each form on ``ID_EVIDENCE`` pages or
more, and never both forms on one page — a section of its own sits beside the
plain list on some page, a layout box replaces it.  Only wrappers around a
whole list (the step below opens ``ul``/``ol``/``dl``/``table``) that are no
list themselves: erl_docgen puts a paragraph's inline links in a data-type
box on reference pages and in none on chapter pages, which are another type.

A navigation tree marks where the page sits in it: crystal's type tree opens
the current type's parent (``li.current.open.parent``) and marks the current
item (``li.current``), as Sphinx's toctrees mark ``current`` and CMS menus
``active``.  The marked path is the position of the page, not its template: a
type at the top level and a nested one of the same template showed different
paths and went into two classes.  A *marker* is a set of class tokens of one
step on the way to the page's own link that the page also shows without: the
same path with those tokens left out (and any other marker of the path with
them) is on the same page, the unmarked items of the same list.  Tokens seen
so (beside a twin, on the way to the page's own link) on at least
``MARKER_SHARE`` of the pages that show them, and on ``ID_EVIDENCE`` pages or more, are
dropped from that step when the twins are navigation (for ``MARKER_SHARE`` of
the sightings): the same links page after page, a closed vocabulary of URLs
by the Good–Turing test of the ids (links seen once ≤ ``NEW_VALUE_SHARE`` of
those seen).  Each condition keeps a template's own variant of a list:
DocBook's "Since" paragraphs beside the text's (not the way to the page),
Haddock's "#" links (``p.src/a.selflink``, to the page itself) beside the
signature's type links (each page's own: content, not navigation).  A
sub-site's navigation counts as much as the whole site's: the GHC manual's
toctree is navigation on its 169 pages of the 3,471.

Repeated runs of steps are then folded (``features.collapse_runs``).

The counts grow with every page; what is kept changes only at ``settle()``,
which the explorer calls at each check and then re-spells every modelled page
(``Explorer._respell``), so that all the pages of a model are spelled one way.
The kept ids, the dropped wrappers and the markers are exported with the model so that
classification spells pages the same way.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Iterable, Mapping, Sequence

from structcrawl.core.features import collapse_runs

#: Pages an id value must appear on, at one place, to be part of the template.
ID_EVIDENCE = 2
#: A place whose observations are this rarely a value seen once is closed, however many distinct
#: values the rare ones add (Good–Turing's estimate of a new value, over observations).
NEW_VALUE_SHARE = 0.05
#: Share of the pages showing a step's class tokens on which the step is on the way to the page's own
#: link and its path also stands without some of them, for those tokens to be a marker: a marked item
#: stands beside the unmarked items of its list but for a list of one item.
MARKER_SHARE = 0.9
#: Steps of a list below a wrapper, at least (list, item, link).
WRAPPER_TAIL = 3
#: A wrapper is dropped only around a whole list: the step below it opens one of these ...
LIST_TAGS = frozenset({"ul", "ol", "dl", "table"})
#: ... and none of its own steps is a list or a list's part (that is nesting, not layout).
LIST_PARTS = frozenset({"ul", "ol", "li", "dl", "dt", "dd"})

# tag, then optional #id, then optional .class.tokens (features._step)
_STEP = re.compile(r"([^#.]*)(?:#([^.]*))?(\..*)?\Z")


def _parts(path: str) -> list[tuple[str, str | None, str]]:
    """(tag, id or None, ".classes" or "") per step."""
    out = []
    for step in path.split("/"):
        m = _STEP.match(step)
        out.append((m.group(1), m.group(2), m.group(3) or "") if m else (step, None, ""))
    return out


def id_places(path: str) -> list[tuple[str, str]]:
    """(place, id) of the ids on ``path``: place = the id-less path down to the step."""
    keys = []
    prefix = ""
    for tag, ident, classes in _parts(path):
        prefix = f"{prefix}/{tag}{classes}" if prefix else f"{tag}{classes}"
        if ident is not None:
            keys.append((prefix, ident))
    return keys


_Steps = tuple[tuple[str, str | None, tuple[str, ...]], ...]


def _steps(path: str) -> _Steps:
    """(tag, id, class tokens) per step of a path."""
    return tuple((tag, ident, tuple(classes[1:].split(".")) if classes else ()) for tag, ident, classes in _parts(path))


def _marked(paths: Mapping[str, _Steps]) -> set[tuple[str, tuple[str, ...], tuple[str, ...], str]]:
    """(tag, tokens, marker tokens, twin path) of the steps of one page's ``paths`` (path -> its
    steps) whose path stands beside a twin on the page: the same tags and ids, at every step a
    subset of the tokens (the twin with the fewest tokens: a nested marked item is marked at each
    level)."""
    by_tags: dict[tuple, list[tuple[str, _Steps]]] = {}
    for path, steps in paths.items():
        by_tags.setdefault(tuple((tag, ident) for tag, ident, _tokens in steps), []).append((path, steps))
    out = set()
    for group in by_tags.values():
        if len(group) < 2:
            continue
        for path, steps in group:
            twins = [(other, plain) for other, plain in group if other != path
                     and all(set(b[2]) <= set(a[2]) for a, b in zip(steps, plain))]
            if twins:
                twin, plain = min(twins, key=lambda t: (sum(len(step[2]) for step in t[1]), t[0]))
                out.update((tag, tokens, tuple(t for t in tokens if t not in fewer), twin)
                           for (tag, _ident, tokens), (_tag, _id, fewer) in zip(steps, plain) if tokens != fewer)
    return out


def _tag(step: str) -> str:
    return _STEP.match(step).group(1)


def _place(path: str) -> str:
    """``path`` without its ids."""
    return "/".join(f"{tag}{classes}" for tag, _ident, classes in _parts(path))


class PathSpeller:
    """Counts, per place, the pages showing each id value, the pages showing each id-less path and
    the marked steps beside their twins; spells paths with the ids kept and the wrappers and markers
    dropped at the last ``settle()``.

    * ``observe(paths, url)``: count the ids, id-less paths and marked steps of one page's collection
      paths (``url``: the page's own, with its collections as ``paths``, for the markers).
    * ``settle()`` -> bool: keep the ids and drop the wrappers and markers the counts now support;
      True when that changed the spelling (every path spelled before must then be spelled again).
    * ``spell(path)``, ``collections(raw)``: the spelling under the kept ids, dropped wrappers and
      markers.
    """

    def __init__(self, kept: Iterable[str] = (), wrappers: Iterable[tuple[str, str]] = (),
                 markers: Iterable[tuple[str, Iterable[str], Iterable[str]]] = ()) -> None:
        #: place -> id value -> pages showing it there
        self.pages_with: dict[str, Counter] = {}
        self.kept: frozenset[str] = frozenset(kept)  #: "place#id" keys spelled out
        #: (place, wrapper steps) dropped from paths: the same list laid out in a box on some pages
        self.wrappers: frozenset[tuple[str, str]] = frozenset(tuple(w) for w in wrappers)
        self.path_pages: Counter = Counter()  #: id-less path -> pages showing it
        self.together: set[tuple[str, str]] = set()  #: wrappers whose two forms met on one page
        #: (tag, class tokens) of a step -> pages showing it; (tag, tokens, marker tokens) -> pages on
        #: which a path through the step stood beside its twin without the marker tokens; the same
        #: with the twin's path appended -> pages on which it was that twin
        self.step_pages: Counter = Counter()
        self.beside: Counter = Counter()
        self.twins: Counter = Counter()
        #: twin path -> URL -> pages showing it under that path
        self.twin_links: dict[str, Counter] = {}
        #: (tag, class tokens, marker tokens) dropped from a step: where the page sits in a tree
        self.markers: frozenset[tuple[str, tuple[str, ...], tuple[str, ...]]] = frozenset(
            (tag, tuple(tokens), tuple(marker)) for tag, tokens, marker in markers)
        self._unmarked = self._unmarking(self.markers)
        self._splits: dict[str, list[tuple[str, tuple[str, str]]]] = {}
        self._cache: dict[str, str] = {}

    def observe(self, paths: Iterable[str] | Mapping[str, Sequence[str]], url: str | None = None) -> None:
        """Count one page's collection paths; markers are learnt only from a page whose ``url`` is
        given with its collections (``paths``: path -> URLs), the steps on the way to its own link."""
        links = paths if url is not None else {}
        own = {path for path, urls in links.items() if url in urls}
        paths = list(paths)
        keys = set()
        places = set()
        for path in paths:
            if "#" in path:
                keys.update(id_places(path))
            places.add(_place(path))
        for place, ident in keys:
            self.pages_with.setdefault(place, Counter())[ident] += 1
        self.path_pages.update(places)
        steps = {path: _steps(path) for path in paths}
        self.step_pages.update({(tag, tokens) for path in steps.values() for tag, _ident, tokens in path if tokens})
        # a marker says where the page sits: it marks the way to the page's own link
        leading = {(tag, tokens) for path in own for tag, _ident, tokens in steps[path] if tokens}
        marked = {key for key in _marked(steps) if key[:2] in leading}
        self.twins.update(marked)
        self.beside.update({key[:3] for key in marked})
        for twin in {key[3] for key in marked}:
            self.twin_links.setdefault(twin, Counter()).update(links[twin])
        for long in places:
            for short, key in self._wrapped(long):
                if short in places:
                    self.together.add(key)

    def _wrapped(self, path: str) -> list[tuple[str, tuple[str, str]]]:
        """(path without the wrapper, (place, wrapper)) for every run of inner steps of ``path``
        that leaves a step above it and ``WRAPPER_TAIL`` steps below it."""
        out = self._splits.get(path)
        if out is None:
            steps = path.split("/")
            n = len(steps)
            tags = [_tag(s) for s in steps]
            out = [("/".join(steps[:i] + steps[j:]), ("/".join(steps[:i]), "/".join(steps[i:j])))
                   for i in range(1, n - WRAPPER_TAIL) for j in range(i + 1, n - WRAPPER_TAIL + 1)
                   if tags[j] in LIST_TAGS and not any(t in LIST_PARTS for t in tags[i:j])]
            self._splits[path] = out
        return out

    def settle(self) -> bool:
        kept = set()
        for place, values in self.pages_with.items():
            recurring = [v for v, n in values.items() if n >= ID_EVIDENCE]
            once = sum(1 for n in values.values() if n == 1)
            # a closed vocabulary: see the module docstring
            if 2 * len(recurring) >= len(values) or once <= NEW_VALUE_SHARE * sum(values.values()):
                kept.update(f"{place}#{v}" for v in recurring)
        wrappers = {key for long, n in self.path_pages.items() if n >= ID_EVIDENCE
                    for short, key in self._wrapped(long)
                    if self.path_pages.get(short, 0) >= ID_EVIDENCE and key not in self.together}
        best: dict[tuple[str, tuple[str, ...]], tuple[int, int, tuple[str, ...]]] = {}
        # the site's navigation shows the same links page after page: a closed vocabulary of URLs
        navigation = {twin for twin, seen in self.twin_links.items()
                      if sum(1 for n in seen.values() if n == 1) <= NEW_VALUE_SHARE * sum(seen.values())}
        sightings, in_navigation = Counter(), Counter()
        for (tag, tokens, marker, twin), n in self.twins.items():
            sightings[(tag, tokens, marker)] += n
            if twin in navigation:
                in_navigation[(tag, tokens, marker)] += n
        for (tag, tokens, marker), n in self.beside.items():
            if (n >= ID_EVIDENCE and n >= MARKER_SHARE * self.step_pages[(tag, tokens)]
                    and in_navigation[(tag, tokens, marker)] >= MARKER_SHARE * sightings[(tag, tokens, marker)]):
                best[(tag, tokens)] = max(best.get((tag, tokens), (0, 0, ())), (n, len(marker), marker))
        markers = {(tag, tokens, marker) for (tag, tokens), (_n, _len, marker) in best.items()}
        if kept == self.kept and wrappers == self.wrappers and markers == self.markers:
            return False
        self.kept = frozenset(kept)
        self.wrappers = frozenset(wrappers)
        self.markers = frozenset(markers)
        self._unmarked = self._unmarking(self.markers)
        self._cache.clear()
        return True

    @staticmethod
    def _unmarking(markers: Iterable[tuple[str, tuple[str, ...], tuple[str, ...]]]
                   ) -> dict[tuple[str, str], str]:
        """(tag, ``.class.tokens``) of a marked step -> its ``.class.tokens`` without the marker."""
        return {(tag, "".join(f".{t}" for t in tokens)): "".join(f".{t}" for t in tokens if t not in marker)
                for tag, tokens, marker in markers}

    def spell(self, path: str) -> str:
        spelled = self._cache.get(path)
        if spelled is None:
            steps = []
            prefix = ""
            for tag, ident, classes in _parts(path):
                prefix = f"{prefix}/{tag}{classes}" if prefix else f"{tag}{classes}"
                keep = ident is not None and f"{prefix}#{ident}" in self.kept
                classes = self._unmarked.get((tag, classes), classes)
                steps.append(f"{tag}#{ident}{classes}" if keep else f"{tag}{classes}")
            if self.wrappers:
                steps = self._unwrapped(path, steps)
            spelled = self._cache[path] = collapse_runs("/".join(steps))
        return spelled

    def _unwrapped(self, path: str, steps: list[str]) -> list[str]:
        """``steps`` without the longest dropped wrapper of ``path``, if it has one."""
        cut = None
        for _short, (head, wrapper) in self._wrapped(_place(path)):
            if (head, wrapper) in self.wrappers:
                start = head.count("/") + 1
                end = start + wrapper.count("/") + 1
                if cut is None or end - start > cut[1] - cut[0]:
                    cut = (start, end)
        return steps if cut is None else steps[:cut[0]] + steps[cut[1]:]

    def collections(self, raw: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
        """A page's collections (raw path -> URLs) under the current spelling, URLs merged in order."""
        out: dict[str, dict[str, None]] = {}
        for path, urls in raw.items():
            bucket = out.setdefault(self.spell(path), {})
            for u in urls:
                bucket[u] = None
        return {p: tuple(u) for p, u in out.items()}
