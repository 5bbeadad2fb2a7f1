"""Names a person reads for the classes of a site model, and what tells classes apart.

A class is named from what its member pages share:

* the **common words of its sample pages' titles** (the ``<title>``, else the
  first ``<h1>``, exported as ``sample_titles``): the words at least
  ``TITLE_SHARE`` of the titles have, in the first title's order:
  ``geos::geom::Point Class Reference`` and ``geos::io::WKTReader Class
  Reference`` give ``class reference``;
* else the **stable words of its URLs**: the words every sample URL of the
  class has (path segments and query parameter names, split at non-letters,
  file extensions dropped): ``/category/fiction`` and ``/category/poetry`` give
  ``category``;
* its **own sections**: the link collections most of its members show and the
  other classes (almost) never do (Vertex's informative paths, seed 003
  §III-B, in their simplest form), named by the nearest ``id``/``class`` token
  of the section that the other classes' sections lack: ``…/div.months/a.next``
  gives ``months``.

Words most classes share (a site name in every title, a site-wide ``doc`` or
``html`` in the URLs) name nothing and are left out.

Two classes never get the same name: when their title words agree, the URL
words are added; when those agree too (or say nothing), the section that tells
them apart; the class id is the last resort.  Classes sharing one URL pattern
get their **distinguishing paths** (:func:`distinguishing_paths`): the link
collections that tell them apart from the others with that pattern, or, when
no link collection does, the tag paths of their fingerprints that the others
lack.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any, Mapping, Sequence

from structcrawl.analysis.urlwords import shared_url_words, text_words

#: most URL words in a name
MAX_NAME_WORDS = 4
#: a link collection on at least this share of a class's members is one of its own sections ...
OWN_SHARE = 0.5
#: ... and tells it apart from another class that shows it on at most this share of its members
OTHER_SHARE = 0.1
#: most distinguishing paths listed per class
MAX_DISTINGUISHING = 3
#: a word on at least this share of a class's sample titles is one of their common words
TITLE_SHARE = 0.8

_WORD = re.compile(r"[A-Za-z]+")

Class = Mapping[str, Any]


def shared_title_words(titles: Sequence[str]) -> list[str]:
    """The words at least ``TITLE_SHARE`` of ``titles`` have, in the first title's order (none for no title)."""
    if not titles:
        return []
    lists = [text_words(t) for t in titles]
    need = TITLE_SHARE * len(titles)
    return [w for w in dict.fromkeys(w for ws in lists for w in ws) if sum(w in ws for ws in lists) >= need]


def section_words(path: str) -> list[str]:
    """The ``id``/``class`` tokens naming the sections of a link-collection path, nearest the link first
    (``html/body/div#page/main#content/div.months/a.next`` -> ``months, content, page, next``): the
    containers, then the link's own tokens; the ``*`` standing for numbers is dropped."""
    steps = path.split("/")
    words = []
    for step in list(reversed(steps[:-1])) + steps[-1:]:
        for token in re.split(r"[#.]", step)[1:]:
            token = token.replace("*", "").strip("-_")
            if _WORD.search(token) and token not in words:
                words.append(token)
    return words


def _share(entry: Class, path: str) -> float:
    size = entry.get("size") or 0
    return (entry.get("path_counts") or {}).get(path, 0) / size if size else 0.0


def distinguishing_paths(entry: Class, others: Sequence[Class]) -> list[str]:
    """The link collections on ≥ ``OWN_SHARE`` of ``entry``'s members that each of ``others`` shows on
    ≤ ``OTHER_SHARE`` of its members, the most telling first; when there are none, the tag paths of its
    fingerprint that no other's fingerprint has (shortest first).  At most ``MAX_DISTINGUISHING``."""
    scored = []
    for path in entry.get("schema") or []:
        own = _share(entry, path)
        other = max((_share(o, path) for o in others), default=0.0)
        if own >= OWN_SHARE and other <= OTHER_SHARE:
            scored.append((-(own - other), path))
    if scored:
        return [p for _, p in sorted(scored)[:MAX_DISTINGUISHING]]
    theirs = set().union(*(o.get("fingerprint") or () for o in others)) if others else set()
    own_tags = [p for p in entry.get("fingerprint") or [] if p not in theirs]
    return sorted(own_tags, key=lambda p: (p.count("/"), p))[:MAX_DISTINGUISHING]


def _section_name(entry: Class, others: Sequence[Class]) -> str | None:
    """The first section word of ``entry``'s distinguishing paths that no path of ``others`` has, else the first."""
    theirs = {w for o in others for p in o.get("schema") or () for w in section_words(p)}
    words = [w for p in distinguishing_paths(entry, others) for w in section_words(p)]
    return next((w for w in words if w not in theirs), words[0] if words else None)


def _telling_words(shared: Mapping[int, list[str]], fallback: bool) -> dict[int, str]:
    """Per class, the words of ``shared`` that not most classes have (a site name in every title, a
    site-wide ``doc`` or ``html`` in the URLs names nothing), at most ``MAX_NAME_WORDS``, joined; with
    ``fallback`` all of its words when every one is site-wide (URL words), else none (title words)."""
    frequency: dict[str, int] = defaultdict(int)
    for ws in shared.values():
        for w in ws:
            frequency[w] += 1
    out = {}
    for cid, ws in shared.items():
        telling = [w for w in ws if frequency[w] * 2 <= len(shared)]
        out[cid] = " ".join((telling or (ws if fallback else []))[:MAX_NAME_WORDS])
    return out


def class_names(classes: Sequence[Class], start_url: str | None = None) -> dict[int, str]:
    """``{class id: name}``, every name different (see the module's docstring); a one-page class
    holding ``start_url`` is the ``start page``."""
    by_id = {int(c["id"]): c for c in classes}
    titled = _telling_words({cid: shared_title_words(list((c.get("sample_titles") or {}).values()))
                             for cid, c in by_id.items()}, fallback=False)
    located = _telling_words({cid: shared_url_words(c.get("samples") or []) for cid, c in by_id.items()},
                             fallback=True)
    words = {cid: titled[cid] or located[cid] for cid in by_id}
    both = {cid: " · ".join(dict.fromkeys(x for x in (titled[cid], located[cid]) if x)) for cid in by_id}
    same: dict[str, list[int]] = defaultdict(list)
    for cid, w in words.items():
        same[w].append(cid)
    same_both: dict[str, list[int]] = defaultdict(list)
    for cid, w in both.items():
        same_both[w].append(cid)
    names: dict[int, str] = {}
    for cid, c in by_id.items():
        if start_url is not None and c.get("size") == 1 and list(c.get("samples") or ()) == [start_url]:
            names[cid] = "start page"
            continue
        base = words[cid]
        rivals = [by_id[o] for o in same[base] if o != cid] if base else [o for o in classes if o is not c]
        if base and not rivals:
            names[cid] = base
            continue
        if base and len(same_both[both[cid]]) == 1:  # the URL words tell apart classes whose titles agree
            names[cid] = both[cid]
            continue
        section = _section_name(c, rivals) or _section_name(c, [o for o in classes if o is not c])
        names[cid] = " · ".join(x for x in (base, section) if x) or f"class {cid}"
    counts: dict[str, int] = defaultdict(int)
    for name in names.values():
        counts[name] += 1
    return {cid: f"{name} #{cid}" if counts[name] > 1 else name for cid, name in names.items()}


def pattern_groups(classes: Sequence[Class]) -> dict[int, list[int]]:
    """``{class id: ids of the other classes with the same URL pattern}``, for classes that share one."""
    by_pattern: dict[str, list[int]] = defaultdict(list)
    for c in classes:
        if c.get("url_pattern"):
            by_pattern[c["url_pattern"]].append(int(c["id"]))
    return {cid: [o for o in ids if o != cid] for ids in by_pattern.values() if len(ids) > 1 for cid in ids}
