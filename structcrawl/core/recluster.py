"""Re-clustering every modelled page under one MDL cost: decisions that can be undone.

The Compute-Model loop of Crescenzi et al. (Fig. 5) decides each batch once,
with what the model knew then: a page judged on its own (its paths not yet
seen anywhere else, an id not yet known to be the template's) may found a
class of its own that later pages show to be one type.  Every few batches
``recluster`` forgets those decisions and clusters all modelled pages again,
with today's spelling and evidence:

1. a path shown by one modelled page only is no evidence (the same rule as
   ``SiteModel.merge_bits``): it is left out of the schemas clustered;
2. pages with one schema form a group; groups go through the model update of
   §3.2 (``SiteModel.update``: merge into the cheapest class or found one),
   largest first, ties by URL — the result depends on the set of pages, not
   on the order the crawl fetched them in;
3. a group of m pages pays its difference from a class m times, so every
   common combination of optional sections (Javadoc class pages with or
   without fields, nested classes …) founds a class of its own; classes are
   then merged pairwise while the two-part code of the whole model shrinks
   (``merge_pass``): one schema spelled out instead of two, against the
   presence bits the merged class pays for the paths only one side had;
4. every page is then re-assigned to the class with its shortest code
   (``SiteModel.classify``, what classification of any page uses), until no
   page moves: splits as well as merges, and a model that classifies its own
   members as it reports them;
5. the new classes take the ids of the old classes they share most pages with,
   so that class ids (the frontier's keys, the exported model) stay put.
"""

from __future__ import annotations

import math
from collections import Counter
from itertools import combinations
from typing import Mapping, Sequence

from structcrawl.core.model import Candidate, Costs, Page, PageClass, SiteModel, kt_bits, site_chrome, told_apart
from structcrawl.core.spelling import PathSpeller

#: Rounds of re-assignment (each page to its cheapest class) at most.
REASSIGN_ROUNDS = 4


def evidence_schemas(pages: Sequence[Page]) -> list[Page]:
    """``pages`` with each schema cut to the paths that two or more of the pages show."""
    df: Counter = Counter()
    for page in pages:
        df.update(page.schema)
    return [Page(p.url, frozenset(x for x in p.schema if df[x] > 1), p.url_count, p.tag_paths, p.element_paths)
            for p in pages]


def class_bits(counts: Counter, n: int, total: int, path_bits: float) -> float:
    """Two-part code of one class: its schema spelled out, each path's presence over its
    n members (Krichevsky–Trofimov), and the class label of each member among ``total`` pages."""
    return (path_bits * len(counts) + math.fsum(kt_bits(k, n) for k in counts.values())
            + n * math.log2(total / n))


def merge_pass(model: SiteModel) -> None:
    """Merge the pair of classes whose union codes shortest, while that shortens the model;
    never two classes ``told_apart`` by sections of their own (both with two pages or more)."""
    total = len(model.pages)
    path_bits = math.log2(max(2, len(model.known_paths)))
    classes = model.classes

    def bits(cls: PageClass) -> float:
        return class_bits(cls.path_counts, cls.size, total, path_bits)

    def saving(a: PageClass, b: PageClass) -> float:
        if min(a.size, b.size) >= 2 and told_apart(a.path_counts, a.size, b.path_counts, b.size, chrome=chrome):
            return 0.0
        # the second schema is spelled as its difference from the first: the paths
        # both classes share (the site's chrome) are not paid twice
        shared = sum(1 for p in a.path_counts if p in b.path_counts)
        merged = a.path_counts + b.path_counts
        return own[a.id] + own[b.id] - path_bits * shared - class_bits(merged, a.size + b.size, total, path_bits)

    chrome = site_chrome(model)
    own = {cid: bits(cls) for cid, cls in classes.items()}
    gains = {(a, b): saving(classes[a], classes[b]) for a, b in combinations(sorted(classes), 2)}
    while gains:
        (a, b), gain = max(gains.items(), key=lambda kv: (kv[1], -kv[0][0], -kv[0][1]))
        if gain <= 0:
            break
        model.merge_classes(a, b)
        own[a] = bits(classes[a])
        del own[b]
        gains = {pair: g for pair, g in gains.items() if a not in pair and b not in pair}
        for c in classes:
            if c != a:
                gains[(min(a, c), max(a, c))] = saving(classes[min(a, c)], classes[max(a, c)])


def reassign(model: SiteModel, pages: Sequence[Page]) -> SiteModel:
    """Move every page to its cheapest class until none moves (at most ``REASSIGN_ROUNDS``)."""
    for _ in range(REASSIGN_ROUNDS):
        assignment = dict(model.page_class)
        moved = 0
        for page in pages:
            best, _cost = model.classify(page.schema, page.url_count)
            if best is not None and best != assignment[page.url]:
                assignment[page.url] = best
                moved += 1
        if not moved:
            break
        next_id = model._next_id
        model = SiteModel.from_assignment(pages, assignment, model.costs, model.speller)
        model._next_id = max(model._next_id, next_id)
    return model


def match_ids(assignment: Mapping[str, int], previous: Mapping[str, int], next_id: int) -> dict[int, int]:
    """New class id -> the id to keep: the previous class it shares most pages with
    (largest overlaps first, each previous id used once), else a fresh one."""
    overlap = Counter((cid, previous[url]) for url, cid in assignment.items() if url in previous)
    mapping: dict[int, int] = {}
    used: set[int] = set()
    for (new, old), _n in sorted(overlap.items(), key=lambda kv: (-kv[1], kv[0])):
        if new not in mapping and old not in used:
            mapping[new] = old
            used.add(old)
    for new in sorted(set(assignment.values())):
        if new not in mapping:
            mapping[new] = next_id
            next_id += 1
    return mapping


def recluster(pages: Sequence[Page], costs: Costs, dt: float, previous: Mapping[str, int], next_id: int,
              speller: PathSpeller) -> SiteModel:
    """A new model of ``pages`` (schemas already spelled), ids matched to ``previous`` (url -> class id)."""
    pages = evidence_schemas(pages)
    groups: dict[frozenset[str], list[Page]] = {}
    for page in pages:
        groups.setdefault(page.schema, []).append(page)
    order = sorted(groups.values(), key=lambda g: (-len(g), min(p.url for p in g)))
    model = SiteModel(costs)
    model.speller = speller
    for group in order:
        model.update(Candidate(group), dt)
    merge_pass(model)
    model = reassign(model, pages)
    ids = match_ids(model.page_class, previous, next_id)
    assignment = {url: ids[cid] for url, cid in model.page_class.items()}
    out = SiteModel.from_assignment(pages, assignment, costs, speller)
    out._next_id = max(out._next_id, next_id, *(i + 1 for i in ids.values()))
    return out
