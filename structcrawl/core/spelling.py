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
  ones.  The share of values seen once is the Good–Turing estimate of how
  often the place shows a value never seen before: where most values at a
  place were seen on one page only, the place is content and none of its ids
  is kept.

Repeated runs of steps are then folded (``features.collapse_runs``).

Generators also name a page's file after its type as well as after its
subject: ``qstring-members.html``, ``package-summary.html``,
``struct.Vec.html``.  Two pages of one type can have different layouts (a
long member list set in a table, a short one in a plain list: no link path
in common but the list item's) while their URLs say they are one type
(Vertex, Gulhane et al. §IV-A: a page type's URLs share a pattern).  The
words of a page's file name (the last path segment, extension dropped) join
its schema as ``url:WORD`` features, scored by the same MDL cost as link
paths, when the site shows the word is a page-type word: seen in
``URL_WORD_DIRECTORIES`` directories under two different names, or in more
directories.  One name in two directories is an entity's (``Foo.html`` and
``class-use/Foo.html``): it would tie each class page to its usage page; a
word of one directory is that directory's subject.  A page with no link
collection gets no URL word: words alone are not a template (Haddock's
link-less source pages would otherwise scatter by module name).

The counts grow with every page; what is kept changes only at ``settle()``,
which the explorer calls at each check and then re-spells every modelled page
(``Explorer._respell``), so that all the pages of a model are spelled one way.
The vocabulary of kept ids is exported with the model so that classification
spells pages the same way.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Iterable
from urllib.parse import urlsplit

from structcrawl.core.features import collapse_runs

#: Pages an id value must appear on, at one place, to be part of the template.
ID_EVIDENCE = 2
#: Directories a file-name word must be seen in (under two names, or in one more directory)
#: to be a page-type word of the site.
URL_WORD_DIRECTORIES = 2
#: Prefix of the URL-word features in a page schema (no link-collection path holds a ":").
URL_WORD = "url:"

# tag, then optional #id, then optional .class.tokens (features._step)
_STEP = re.compile(r"([^#.]*)(?:#([^.]*))?(\..*)?\Z")
_WORD = re.compile(r"[A-Za-z]{2,}")  # single letters are ids or initials, not words
_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,5}$")


def name_words(url: str) -> tuple[str, tuple[str, ...]]:
    """(directory, words of the file name) of ``url``: lower case, sorted, each once."""
    directory, _, name = urlsplit(url).path.rpartition("/")
    return directory, tuple(sorted({w.lower() for w in _WORD.findall(_EXTENSION.sub("", name))}))


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


class PathSpeller:
    """Counts, per place, the pages showing each id value, and where each file-name word was
    seen; spells paths with the ids kept at the last ``settle()``.

    * ``observe(paths, url)``: count the ids on one page's collection paths, the words of its URL.
    * ``settle()`` -> bool: keep the ids and URL words the counts now support; True when that
      changed the spelling (every page spelled before must then be spelled again).
    * ``spell(path)``, ``collections(raw)``: the spelling under the kept ids.
    * ``url_features(url)``: the page-type words of a URL, as schema features.
    """

    def __init__(self, kept: Iterable[str] = (), url_words: Iterable[str] = ()) -> None:
        #: place -> id value -> pages showing it there
        self.pages_with: dict[str, Counter] = {}
        self.kept: frozenset[str] = frozenset(kept)  #: "place#id" keys spelled out
        self.url_words: frozenset[str] = frozenset(url_words)  #: file-name words that name page types
        #: word -> (directories, file names) it was seen in, each capped one past the rule's need
        self._word_seen: dict[str, tuple[set[str], set[tuple[str, ...]]]] = {}
        self._cache: dict[str, str] = {}

    def observe(self, paths: Iterable[str], url: str | None = None) -> None:
        if url is not None:
            directory, words = name_words(url)
            for word in words:
                directories, names = self._word_seen.setdefault(word, (set(), set()))
                if len(directories) <= URL_WORD_DIRECTORIES:
                    directories.add(directory)
                if len(names) < 2:
                    names.add(words)
        keys = set()
        for path in paths:
            if "#" in path:
                keys.update(id_places(path))
        for place, ident in keys:
            self.pages_with.setdefault(place, Counter())[ident] += 1

    def settle(self) -> bool:
        kept = set()
        for place, values in self.pages_with.items():
            recurring = [v for v, n in values.items() if n >= ID_EVIDENCE]
            if 2 * len(recurring) >= len(values):  # a closed vocabulary: see the module docstring
                kept.update(f"{place}#{v}" for v in recurring)
        url_words = frozenset(
            word for word, (directories, names) in self._word_seen.items()
            if len(directories) > URL_WORD_DIRECTORIES
            or (len(directories) == URL_WORD_DIRECTORIES and len(names) > 1))
        if kept == self.kept and url_words == self.url_words:
            return False
        self.kept = frozenset(kept)
        self.url_words = url_words
        self._cache.clear()
        return True

    def url_features(self, url: str) -> frozenset[str]:
        return frozenset(URL_WORD + w for w in name_words(url)[1] if w in self.url_words)

    def spell(self, path: str) -> str:
        spelled = self._cache.get(path)
        if spelled is None:
            steps = []
            prefix = ""
            for tag, ident, classes in _parts(path):
                prefix = f"{prefix}/{tag}{classes}" if prefix else f"{tag}{classes}"
                keep = ident is not None and f"{prefix}#{ident}" in self.kept
                steps.append(f"{tag}#{ident}{classes}" if keep else f"{tag}{classes}")
            spelled = self._cache[path] = collapse_runs("/".join(steps))
        return spelled

    def collections(self, raw: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
        """A page's collections (raw path -> URLs) under the current spelling, URLs merged in order."""
        out: dict[str, dict[str, None]] = {}
        for path, urls in raw.items():
            bucket = out.setdefault(self.spell(path), {})
            for u in urls:
                bucket[u] = None
        return {p: tuple(u) for p, u in out.items()}
