"""Undoing decisions: at each check the model re-judges what the update decided once.

The model update decides each candidate once (Crescenzi et al. Fig. 5), with
what the model knew then.  Five kinds of decision are undone once the
evidence is there (``regroup``):

* **A merge the veto would refuse.**  A page that arrives alone is weak
  evidence for a class of its own, and the §3.2 code rightly lets a large
  class absorb it — a QDoc "all members" page, its only link sections the
  site's chrome and a member table, joins the class pages, and so does every
  later one arriving alone.  The members that share a section the rest of the
  class never shows, and lack sections the rest has on nearly every page, are
  two templates — exactly what ``told_apart`` refuses to merge
  (``told_apart_members``, a group of two pages or more on each side, as for
  the merge veto).
* **A mixture.**  A loose class can absorb page after page of two templates
  neither of which has a section of its own; the two-part code of the class
  says when two classes describe its members shorter (``mixed_members``).
* **A class founded by one page**, its paths then unknown: once other pages
  show them, the page goes to the class the update would now choose
  (``home``), unless a class of its own still codes shorter or the page is
  told apart from what that class keeps once this regroup has moved a stray
  out of it (docs/design.md, item 38).
* **Pages without a link of their own.**  A page whose links are all the
  site's chrome carries no evidence of its template (issue 13's sixth
  failure: Javadoc's "No usage of" pages), and the code puts it in the class
  whose template asks least — another template's.  Two such pages or more,
  a minority of a class whose core has content sections, leave it for the
  class of such pages (``bare_members``); the code then keeps the later ones
  there.  At 64 URLs in flight commons-math3 fetched two of its 418 stubs
  before the stop, each placed with the package summaries, and every stub
  was classified there (stubs apart F* 0.950; 0.992 with this rule).  A
  class of such pages in turn asks least of any page: its members with
  links of their own that share a section leave it (``_return_rich``;
  docs/design.md, item 18).  Then each kind of such pages goes where its
  element paths place it among the pages with links (``_place_bare``, item 23):
  DocBook sections without a link of their own are sections, not stubs; two
  kinds placed in one class are two classes (item 28).
* **A lone twin.**  The code sees a page by its schema only; a page whose
  very schema two or more pages of another class have, and no other page
  of its own class, was placed on another model, and joins them
  (``_join_lone_twins``, item 21).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Collection

from structcrawl.core.model import (
    _ALPHA,
    CHROME_CLASSES,
    CORE_SHARE,
    FINGERPRINT_SIMILARITY,
    SECTION_SHARE,
    TWIN_EVIDENCE,
    Candidate,
    SiteModel,
    core_sections,
    site_chrome,
    told_apart,
    told_apart_group,
    with_links_of_their_own,
)
from structcrawl.core.placement import PathReference, similar_groups
from structcrawl.core.recluster import class_bits
from structcrawl.core.refine import kind_wrappers, nested, one_kind
from structcrawl.core.unionfind import jaccard

#: Rounds of moving each member of a mixed class to the side that codes it shorter, at most.
SIDE_ROUNDS = 3
#: The share of a side's pages on which a section of the other side's core still counts as the
#: side's own when a mixture's split is judged (``mixed_members``), below ``CORE_SHARE``: a margin,
#: so that the split does not undo itself as the classes grow.
SPLIT_CORE_SHARE = 0.35
#: Pages whose links are all the chrome, in a class of others, to leave it together
#: (one is no evidence, as for the merge veto; ``bare_members``).
BARE_EVIDENCE = 2


def told_apart_members(model: SiteModel, class_id: int, chrome: set[str] | None = None) -> list[str] | None:
    """Members of class ``class_id`` told apart from the rest of it (``told_apart_group``), or None.
    ``chrome``: the site's (``model.site_chrome``), for ``told_apart``; computed when None."""
    cls = model.classes[class_id]
    chrome = site_chrome(model) if chrome is None else chrome
    schemas, counts = with_links_of_their_own(model, cls.members, chrome)
    return told_apart_group(schemas, cls.path_counts if counts is None else counts, chrome)


def mixed_members(model: SiteModel, class_id: int, chrome: set[str]) -> list[str] | None:
    """The smaller side of class ``class_id`` when the class is a mixture of two
    templates, or None.

    A class grown one page at a time can hold two templates none of whose sections
    is exclusive (QDoc overview pages and "all members" pages: a few overviews
    show a member table too), so ``told_apart`` never fires; but two classes code
    the pages far shorter, because each template's paths are present or absent
    together.  The split is the merge pass of ``recluster`` run backwards, under
    its two-part code (``class_bits``; the schema both sides share spelled once):
    the best split by one path's presence, then each member moved to the side
    whose adaptive code is shorter (``SIDE_ROUNDS``), kept when it codes shorter
    than the whole.  The two sides must be what refinement would keep apart —
    core sections not nested and not mostly shared beyond the chrome, tag-path
    fingerprints below the merge similarity unless each side has content sections
    of its own and none in common — or refinement would merge them back;
    with a margin (``SPLIT_CORE_SHARE``), or it does so as the classes grow.  O(paths² · members / 64)
    word operations per class (presence columns are integers used as bit sets).
    """
    cls = model.classes[class_id]
    n = cls.size
    if n < 4 or cls.unmixed_at == n:
        return None
    cls.unmixed_at = n  # until the class grows: the code hardly moves with the rest of the model
    members = cls.members
    columns: dict[str, int] = {}  #: path -> bit set of the members having it
    for i, url in enumerate(members):
        for p in model.pages[url].schema:
            columns[p] = columns.get(p, 0) | 1 << i
    total = len(model.pages)
    path_bits = math.log2(max(2, len(model.known_paths)))
    whole = class_bits(cls.path_counts, n, total, path_bits)

    def saving(side: int) -> float:
        k = side.bit_count()
        if k < 2 or n - k < 2:
            return 0.0
        a, b = _sides(columns, side, cls.path_counts)
        shared = sum(1 for p in a if p in b)
        return whole + path_bits * shared - class_bits(a, k, total, path_bits) - class_bits(b, n - k, total, path_bits)

    gain, path = max(((saving(column), p) for p, column in sorted(columns.items())), default=(0.0, None))
    if gain <= 0:
        return None
    side = columns[path]
    for _ in range(SIDE_ROUNDS):
        moved = _cheaper_side(model, members, columns, side, cls.path_counts)
        if saving(moved) <= saving(side):
            break
        side = moved
    inside = [u for i, u in enumerate(members) if side >> i & 1]
    outside = [u for i, u in enumerate(members) if not side >> i & 1]
    a, b = _sides(columns, side, cls.path_counts)
    core_a, core_b = _core(a, len(inside)), _core(b, len(outside))
    # a section one side lacks is one the other shows on SPLIT_CORE_SHARE of its pages or fewer:
    # nearer CORE_SHARE, a page or two more puts it in that side's core, refinement then finds the
    # sides nested and merges them back (erl_docgen's release notes, split off the chapters and
    # merged again two pages later), and the crawl swings between the two
    core_a, core_b = (core_a | (_core(a, len(inside), SPLIT_CORE_SHARE) & core_b),
                      core_b | (_core(b, len(outside), SPLIT_CORE_SHARE) & core_a))
    # sides sharing more content sections than they differ by are one template whose optional
    # blocks come together (rustdoc's struct pages with or without trait impls), and sides under
    # one kind's wrapper (makeinfo's sections with or without definitions): refinement would merge
    # them back as they grow, and the crawl would swing between the two
    if (nested(core_a, core_b, chrome, min(len(inside), len(outside)))
            or len((core_a & core_b) - chrome) > len(core_a ^ core_b)
            or one_kind(core_a, core_b, chrome,
                        kind_wrappers((core_sections(c) for c in model.classes.values()), chrome))):
        return None
    # on one skeleton, two templates are sides each with content sections of its own and none
    # in common, which refinement does not merge back (``refine`` rule 1): odoc writes modules
    # and class types on one skeleton, told apart only by the kind of their sections
    # (docs/design.md, item 32)
    frame = chrome if len(model.classes) >= CHROME_CLASSES else set()
    prints = (Candidate([model.pages[u] for u in urls]).fingerprint for urls in (inside, outside))
    if (((core_a & core_b) - frame or not (core_a - frame and core_b - frame))
            and jaccard(*prints) >= FINGERPRINT_SIMILARITY):
        return None
    return min(inside, outside, key=len)


def _sides(columns: dict[str, int], side: int, counts: Counter) -> tuple[Counter, Counter]:
    """Path counts of the members in ``side`` and of the others (paths they have only)."""
    inside = Counter({p: n for p, n in ((p, (c & side).bit_count()) for p, c in columns.items()) if n})
    return inside, Counter({p: c - inside[p] for p, c in counts.items() if c > inside[p]})


def _core(counts: Counter, n: int, share: float = CORE_SHARE) -> frozenset[str]:
    return frozenset(p for p, k in counts.items() if k >= share * n)


def _cheaper_side(model: SiteModel, members: list[str], columns: dict[str, int], side: int,
                  counts: Counter) -> int:
    """``side`` after each member moved to the side whose adaptive presence code
    (``class_code_length``'s, over the class's paths) is shorter."""
    n, k = len(members), side.bit_count()
    inside, outside = _sides(columns, side, counts)
    halves = ((k, inside), (n - k, outside))
    moved = 0
    for i, url in enumerate(members):
        schema = model.pages[url].schema
        bits = []
        for size, cnt in halves:
            denom = size + 2 * _ALPHA
            bits.append(math.fsum([math.log2(n / size)] + [
                -math.log2(((cnt[p] if p in schema else size - cnt[p]) + _ALPHA) / denom) for p in counts]))
        if bits[0] <= bits[1]:
            moved |= 1 << i
    return moved


def home(model: SiteModel, group: list[str], origin: int, exclude: Collection[int] = (),
         chrome: set[str] | None = None) -> int | None:
    """The class other than ``origin`` and ``exclude`` a group of its members joins, as the
    model update would place it (``SiteModel.update``'s code lengths, never a class it is
    told apart from), or None for a class of its own: a QDoc members page split off the
    class pages goes to the members pages' class when there is one.  A path that only the group's
    pages show is not evidence, as in the update (``SiteModel.merge_bits``)."""
    cand = Candidate([model.pages[u] for u in group])
    rest = model.classes[origin].path_counts
    others = [c.path_counts for cid, c in model.classes.items() if cid != origin]
    own = {p for p, j in cand.path_counts.items() if j == 1 and rest[p] == 1 and not any(p in c for c in others)}
    known = model.known_paths - own if own else None
    path_bits = model._path_bits(cand)
    new = model.new_bits(cand, path_bits, known)
    costs = sorted((model.merge_bits(cand, cls, path_bits, known), cid) for cid, cls in model.classes.items()
                   if cid != origin and cid not in exclude)
    for bits, cid in costs:
        if bits >= new:
            break
        cls = model.classes[cid]
        if not told_apart(cand.path_counts, cand.size, cls.path_counts, cls.size, chrome=chrome):
            return cid
    return None


def regroup(model: SiteModel) -> dict[str, int] | None:
    """The assignment (url -> class id) with every decision undone that today's evidence
    overturns, or None when there is none: a told-apart group (``told_apart_members``) or a
    mixture's smaller side (``mixed_members``) split off into the class it fits or a class of
    its own (fresh ids, in class-id order); then the pages without a link of their own
    (``bare_members``) gathered in one class, and lone twins joined (``_join_lone_twins``);
    last, a one-page class whose page now fits another class (``home``) re-homed unless told
    apart from the pages that class keeps (``_told_apart_from_rest``); each class under the id
    most of its pages had (``_keep_ids``)."""
    assignment = dict(model.page_class)
    next_id = model._next_id
    changed = False
    chrome = site_chrome(model)
    groups: dict[int, list[str]] = {}
    mixed: set[int] = set()  #: classes whose group is a mixture's side
    for class_id in sorted(model.classes):
        if model.classes[class_id].size == 1:
            continue
        group = told_apart_members(model, class_id, chrome)
        if not group:
            group = mixed_members(model, class_id, chrome)
            if group:
                mixed.add(class_id)
        if group:
            groups[class_id] = group
    homes = {cls.members[0]: target for class_id, cls in sorted(model.classes.items())
             if cls.size == 1 and (target := home(model, cls.members, class_id, chrome=chrome)) is not None}
    for class_id, group in groups.items():
        changed = True
        # not into another mixture: two mixtures would trade groups check after check
        target = home(model, group, class_id, exclude=mixed, chrome=chrome)
        if target is None:
            target, next_id = next_id, next_id + 1
        for url in group:
            assignment[url] = target
    if len(model.classes) >= CHROME_CLASSES:
        next_id, moved_bare = _gather_bare(model, assignment, chrome, next_id)
        changed = _return_rich(model, assignment, chrome, next_id) or moved_bare or changed
        next_id, placed = _place_bare(model, assignment, chrome, next_id)
        changed = placed or changed
    changed = _join_lone_twins(model, assignment, chrome) or changed
    for url, target in homes.items():
        if assignment[url] == model.page_class[url] and not _told_apart_from_rest(model, url, target, assignment,
                                                                                 chrome):
            assignment[url] = target
            changed = True
    if not changed:
        return None
    assignment = _keep_ids(model, assignment, next_id)
    return None if assignment == model.page_class else assignment


def _told_apart_from_rest(model: SiteModel, url: str, target: int, assignment: dict[str, int],
                          chrome: set[str]) -> bool:
    """The page is told apart from the pages class ``target`` keeps in ``assignment``: ``home``
    judged the class with the pages this regroup moves out of it, whose sections may have hidden
    the rest's (the demo's home page followed an author page into the publishers' class, their
    profile sections on 6 of 7 pages, in the very regroup that returned the author page to the
    authors')."""
    kept = [u for u in model.classes[target].members if assignment[u] == target]
    if len(kept) == model.classes[target].size:
        return False
    counts = Counter(p for u in kept for p in model.pages[u].schema)
    return not kept or told_apart(Counter(model.pages[url].schema), 1, counts, len(kept), chrome=chrome)


def _keep_ids(model: SiteModel, assignment: dict[str, int], next_id: int) -> dict[str, int]:
    """``assignment`` with each class under the id most of its pages had (greedily, the
    largest share first; ties: the smaller ids), a class holding no such id under a fresh one.
    A class is its members, not its id: when the regroup moves SQLite's 50–90 API pages
    without a link of their own to the class of the five API pages with links nearest them,
    it is those five that moved, and the stop rule, which counts the pages that changed
    class and the predictions that missed, must see five (docs/design.md, item 29)."""
    held: dict[int, Counter] = {}
    for url, cid in assignment.items():
        held.setdefault(cid, Counter())[model.page_class[url]] += 1
    rename: dict[int, int] = {}
    taken: set[int] = set()
    for _, new, old in sorted((-k, new, old) for new, olds in held.items() for old, k in olds.items()):
        if new not in rename and old not in taken:
            rename[new] = old
            taken.add(old)
    for new in sorted(held):
        if new not in rename:
            if new in taken or new in model.classes:
                new_id, next_id = next_id, next_id + 1
            else:
                new_id = new
            rename[new] = new_id
            taken.add(new_id)
    return {url: rename[cid] for url, cid in assignment.items()}


def _join_lone_twins(model: SiteModel, assignment: dict[str, int], chrome: set[str]) -> bool:
    """A page whose very schema is, in another class, the schema of ``TWIN_EVIDENCE`` pages or
    more, and of no other page of its own class, goes to that class (the one holding most of
    them; ties: the smaller id), where ``SiteModel.classify`` puts the schema; True when some
    moved.  The code sees a page by its schema only: a lone twin was placed on another model.
    On qtbase, members placed that way were classified into another class than their own
    (1.2 % of them, under issue 13's 99 % agreement).  Twins in equal numbers stay where they
    are: joining every twin moved QDoc's example and overview pages with the fewest links into
    one class and cost F* (docs/design.md, item 21).  A page whose links are all the site's
    ``chrome`` is no evidence of its template (``bare_members`` places such pages): it stays."""
    holders: dict[frozenset[str], Counter] = {}
    for url, cid in assignment.items():
        holders.setdefault(model.pages[url].schema, Counter())[cid] += 1
    moved = False
    for url, cid in assignment.items():
        schema = model.pages[url].schema
        counts = holders[schema]
        if len(counts) < 2 or counts[cid] > 1 or schema <= chrome:
            continue
        best, k = min(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        if k >= TWIN_EVIDENCE:
            assignment[url] = best
            moved = True
    return moved


def bare_members(model: SiteModel, members: list[str], chrome: set[str]) -> list[str] | None:
    """The members whose links are all the site's ``chrome``, when they are ``BARE_EVIDENCE`` or
    more and fewer than half of a class of four or more that has other members, or None."""
    if len(members) < 4:
        return None
    bare = [u for u in members if model.pages[u].schema <= chrome]
    return bare if BARE_EVIDENCE <= len(bare) and 2 * len(bare) < len(members) else None


def _by_class(model: SiteModel, assignment: dict[str, int]) -> dict[int, list[str]]:
    by_class: dict[int, list[str]] = {}
    for url in model.page_class:  # member order, as the model holds them
        by_class.setdefault(assignment[url], []).append(url)
    return by_class


def _gather_bare(model: SiteModel, assignment: dict[str, int], chrome: set[str], next_id: int) -> tuple[int, bool]:
    """Move every class's ``bare_members`` (in ``assignment``) to the largest class of such pages,
    else to a class of their own (``next_id``); the next free id, and True when some moved."""
    by_class = _by_class(model, assignment)
    bare_classes = [cid for cid, urls in by_class.items() if all(model.pages[u].schema <= chrome for u in urls)]
    moved = False
    for class_id, urls in sorted(by_class.items()):
        group = None if class_id in bare_classes else bare_members(model, urls, chrome)
        if not group:
            continue
        if bare_classes:
            target = max(bare_classes, key=lambda k: (len(by_class[k]), -k))
        else:
            target, next_id = next_id, next_id + 1
            bare_classes.append(target)
            by_class[target] = []
        for url in group:
            assignment[url] = target
        by_class[target] = by_class[target] + group
        moved = True
    return next_id, moved


def _place_bare(model: SiteModel, assignment: dict[str, int], chrome: set[str], next_id: int) -> tuple[int, bool]:
    """Pages whose links are all the site's ``chrome``, grouped by kind (their element paths,
    ``placement.similar_groups``: single linkage at ``PLACE_SIMILARITY``), go a kind at a time
    where the element paths of the pages with links of their own place most of its pages
    (``structcrawl.core.placement``), as ``SiteModel.classify`` answers for a page nearest one of
    them; a kind placed nowhere stays (the gathered class of them).  Two kinds of
    ``BARE_EVIDENCE`` pages or more placed in one class are two templates: the class keeps the
    one most of whose pages it held (else the one nearer its pages with links), and each other
    kind goes to a class of its own (the one most of its pages were in, when no other kind
    goes there).  Gathered in one class, QDoc's licence notices and its example pages without a
    link of their own were one type to the model, and every example page never fetched was
    classified with the notices (docs/design.md, item 28).  The next free id, and True when some
    moved."""
    bare = [u for u in assignment if model.pages[u].schema <= chrome]
    if not bare:  # the reference costs O(pages) at each regroup: only when there is a page to place
        return next_id, False
    reference = PathReference.of_pages((model.pages[u].element_paths, cid, bool(model.pages[u].schema & chrome))
                                       for u, cid in assignment.items() if not model.pages[u].schema <= chrome)
    pages = Counter(model.pages[u].element_paths for u in bare)
    sets = list(pages)
    kind_of = {sets[i]: k for k, members in enumerate(similar_groups(sets, [pages[s] for s in sets]))
               for i in members}
    kinds: dict[int, list[str]] = {}
    for url in bare:
        kinds.setdefault(kind_of[model.pages[url].element_paths], []).append(url)
    nearest = {s: reference.nearest_similarity(s) for s in sets}  # pages of a kind share their sets
    placed: dict[int, int | None] = {}
    claims: dict[int, list[tuple[int, float, int]]] = {}
    for k, urls in kinds.items():
        votes: Counter = Counter()
        likeness: Counter = Counter()
        for url in urls:
            cid, similarity = nearest[model.pages[url].element_paths]
            votes[cid] += 1
            likeness[cid] += similarity
        target = placed[k] = min(votes, key=lambda c: (-votes[c], c is None, c or 0))
        if target is not None and len(urls) >= BARE_EVIDENCE:
            held = sum(1 for u in urls if model.page_class[u] == target)
            claims.setdefault(target, []).append((held, likeness[target] / votes[target], k))
    taken = {c for c in placed.values() if c is not None}
    for _target, claimants in sorted(claims.items()):
        for *_, k in sorted(claimants, reverse=True)[1:]:
            own = Counter(model.page_class[u] for u in kinds[k]).most_common(1)[0][0]
            if own in taken:
                own, next_id = next_id, next_id + 1
            taken.add(own)
            placed[k] = own
    moved = False
    for k, urls in kinds.items():
        if placed[k] is None:
            continue
        for url in urls:
            moved = moved or assignment[url] != placed[k]
            assignment[url] = placed[k]
    return next_id, moved


def _return_rich(model: SiteModel, assignment: dict[str, int], chrome: set[str], next_id: int) -> bool:
    """A class of pages without links of their own is the cheapest for any page the code
    cannot place (QDoc's "all members" pages joined the overviews without content links,
    and every members page was classified there); its members that have links of their
    own, two or more and a minority, sharing a section (``SECTION_SHARE`` of them), go to the
    class the update would choose (``home``) or a class of their own; True when some moved."""
    moved = False
    for class_id, urls in sorted(_by_class(model, assignment).items()):
        rich = [u for u in urls if not model.pages[u].schema <= chrome]
        if len(rich) < BARE_EVIDENCE or 2 * len(rich) >= len(urls):
            continue
        counts = Counter(p for u in rich for p in model.pages[u].schema - chrome)
        if not any(k >= SECTION_SHARE * len(rich) for k in counts.values()):
            continue
        target = None
        if class_id in model.classes and all(model.page_class[u] == class_id for u in rich):
            target = home(model, rich, class_id, chrome=chrome)
        if target is None:
            target, next_id = next_id, next_id + 1
        for url in rich:
            assignment[url] = target
        moved = True
    return moved
