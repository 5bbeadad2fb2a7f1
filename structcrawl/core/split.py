"""Undoing a merge: split off the members of a class that its own rules tell apart.

The model update decides each candidate once (Crescenzi et al. Fig. 5): a page
that arrives alone is weak evidence for a class of its own, and the §3.2 code
rightly lets a large class absorb it — a QDoc "all members" page, its only
link sections the site's chrome and a member table, joins the class pages.
When more pages of that kind arrive one at a time, each joins them too.  The
decision should be undone once the evidence is there: the members that share
a section the rest of the class never shows, and that lack sections the rest
of the class has on nearly every page, are two templates — exactly what
``told_apart`` refuses to merge.  ``told_apart_members`` applies that same rule
after the fact, so the model never holds a merge it would refuse to make
(a group of two pages or more on each side, as for the merge veto).
"""

from __future__ import annotations

from collections import Counter

from structcrawl.core.model import SECTION_SHARE, Candidate, SiteModel, told_apart

#: Sections the rest of a class shows on nearly every page and the group never does,
#: for the group to leave: one missing section is an optional one (erl_docgen chapters
#: with or without a "scope" heading), a template of its own lacks the class's frame
#: (a QDoc members page has none of the class page's summary, contents or details).
MISSING_SECTIONS = 2


def told_apart_members(model: SiteModel, class_id: int) -> list[str] | None:
    """Members of class ``class_id`` told apart from the rest of it, or None.

    The candidate groups are the members having one path that at most half of
    the class has (the minority side of a section); the largest group told apart
    from the rest, and lacking ``MISSING_SECTIONS`` of the rest's sections, is
    returned, ties broken by the path, so that replaying a crawl splits the same way.
    O(Σ members' schema sizes) per class.
    """
    cls = model.classes[class_id]
    n = cls.size
    if n < 4:
        return None
    schemas = {url: model.pages[url].schema for url in cls.members}
    best: tuple[int, str] | None = None
    for path, k in sorted(cls.path_counts.items()):
        if k < 2 or 2 * k > n or (best is not None and k <= best[0]):
            continue
        inside: Counter = Counter()
        for schema in schemas.values():
            if path in schema:
                inside.update(schema)
        outside = cls.path_counts - inside
        missing = sum(1 for p, c in outside.items() if c >= SECTION_SHARE * (n - k) and p not in inside)
        if missing >= MISSING_SECTIONS and told_apart(inside, k, outside, n - k):
            best = (k, path)
    if best is None:
        return None
    return [url for url in cls.members if best[1] in schemas[url]]


def home(model: SiteModel, group: list[str], origin: int) -> int | None:
    """The class other than ``origin`` a split-off group joins, as the model update would
    place it (``SiteModel.update``'s code lengths, never a class it is told apart from),
    or None for a class of its own: a QDoc members page split off the class pages goes
    to the members pages' class when there is one."""
    cand = Candidate([model.pages[u] for u in group])
    path_bits = model._path_bits(cand)
    new = model.new_bits(cand, path_bits)
    costs = sorted((model.merge_bits(cand, cls, path_bits), cid) for cid, cls in model.classes.items()
                   if cid != origin)
    for bits, cid in costs:
        if bits >= new:
            break
        cls = model.classes[cid]
        if not told_apart(cand.path_counts, cand.size, cls.path_counts, cls.size):
            return cid
    return None


def split_told_apart(model: SiteModel) -> dict[str, int] | None:
    """The assignment (url -> class id) with every told-apart group split off, into the
    class it fits (``home``) or a class of its own (fresh ids, in class-id order); None
    when no class holds such a group."""
    assignment = dict(model.page_class)
    next_id = model._next_id
    split = False
    for class_id in sorted(model.classes):
        group = told_apart_members(model, class_id)
        if group:
            split = True
            target = home(model, group, class_id)
            if target is None:
                target, next_id = next_id, next_id + 1
            for url in group:
                assignment[url] = target
    return assignment if split else None
