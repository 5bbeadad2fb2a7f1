"""Vertex shingle clustering (structcrawl.analysis.shingles) on hand-built pages, and
``structcrawl cluster --method shingles`` over a small stored crawl of the demo site."""

from __future__ import annotations

import json
import random
from collections import Counter
from functools import partial
from urllib.parse import urlsplit

import numpy as np
import pytest

import helpers
from dbfixtures import pg_url  # noqa: F401 - fixture
from helpers import PROJECT, serving
from structcrawl.analysis.metrics import evaluate
from structcrawl.analysis.shingles import (
    ALIKE,
    FRAGMENT_SHOWN,
    LINK_MARK,
    LINK_SAMPLED_PAGES,
    LINK_SAMPLES,
    LINK_SHARE,
    MASKS,
    ShinglePart,
    _fragments_joined,
    attach_left,
    cluster_sets,
    cluster_signatures,
    masked_text,
    merge_alike,
    path_hashes,
    shingles,
    signatures,
    site_skeleton,
    split_apart,
    verify,
    with_link_sections,
)
from structcrawl.core.features import extract
from structcrawl.demo.site import DemoSite
from structcrawl.store import find_job
from structcrawl.store.cluster import _pages, _sampled_links
from structcrawl.store.schema import make_engine
from synthetic_store import fill

structcrawl = partial(helpers.structcrawl, cwd=PROJECT)


def pack(values: list[int]) -> int:
    return sum(v << (8 * i) for i, v in enumerate(values))


def test_the_papers_example_3_1():
    # v1, v2, v3 of §III-A: each pair shares a different 6/8 masked vector; the paper's second pass
    # keeps two of them and ends with two clusters, one of two pages and one of one
    v1, v2, v3 = (pack([0, 0, 0, 0, 0, 1, 2, 4]), pack([0, 0, 0, 0, 0, 1, 5, 3]), pack([0, 0, 0, 0, 0, 6, 2, 3]))
    res = cluster_signatures(np.array([v1, v2, v3], dtype=np.uint64), np.array([1, 1, 1]), cutoff=1)
    assert [c.size for c in res.clusters] == [2, 1]
    pair = {[v1, v2, v3][i] for i in res.clusters[0].signatures}
    shared = [i for i in range(8) if len({(v >> 8 * i) & 0xFF for v in pair}) == 1]
    assert len(shared) == 6  # the two pages of the cluster agree on 6 of 8 values
    assert res.clusters[0].signature.count("*") == 2 and res.clusters[1].signature.count("*") == 0
    # a cut-off of 2 pages deletes the one-page vector: its page is unclustered
    res = cluster_signatures(np.array([v1, v2, v3], dtype=np.uint64), np.array([1, 1, 1]), cutoff=2)
    assert [c.size for c in res.clusters] == [2] and res.unclustered == 1


def test_masks_and_their_text():
    assert len(MASKS) == 1 + 8 + 28  # 0, 1 or 2 wild cards
    assert masked_text(pack([1, 2, 3, 4, 5, 6, 7, 8]), int(MASKS[0])) == "01.02.03.04.05.06.07.08"
    assert masked_text(pack([1, 2, 3, 4, 5, 6, 7, 8]), int(MASKS[-1])) == "01.02.03.04.05.06.*.*"


def test_signatures_estimate_the_overlap():
    rng = random.Random(3)
    universe = [f"html/body/div/{i}" for i in range(400)]
    hashes = path_hashes(universe)
    base = rng.sample(range(400), 200)
    same = list(reversed(base))
    near = base[:190] + [i for i in range(400) if i not in base][:10]  # Jaccard 190/210
    far = [i for i in range(400) if i not in base]  # disjoint
    sig = signatures([base, same, near, far, []], hashes)
    agree = [sum(((int(sig[0]) ^ int(s)) >> 8 * i) & 0xFF == 0 for i in range(8)) for s in sig]
    assert agree[1] == 8  # order does not matter
    assert agree[2] >= 6 and agree[3] <= 2
    assert sig[4] == 0
    # values are not degenerate: the minimum's low byte, not the minimum byte (which is 0 for large sets)
    assert len({(int(sig[0]) >> 8 * i) & 0xFF for i in range(8)}) > 4


def test_shingles_are_windows_of_sorted_paths():
    assert shingles(["c", "a", "b", "d"], 3) == ["a\nb\nc", "b\nc\nd"]
    assert shingles(["b", "a"], 3) == ["a\nb"]
    assert shingles([], 3) == []
    assert shingles(["b", "a"], 1) == ["a", "b"]


def _template_pages(rng: random.Random, n: int) -> tuple[list[list[str]], list[str]]:
    """Pages of three templates sharing a skeleton, each with optional parts."""
    skeleton = ["html", "html/body", "html/body/header", "html/body/header/nav", "html/body/header/nav/a",
                "html/body/footer", "html/body/footer/p"]
    parts = {
        "product": [f"html/body/main/div/{x}" for x in ("h1", "img", "table", "table/tr", "table/tr/td", "form",
                                                         "form/input", "form/button", "ul", "ul/li")],
        "listing": [f"html/body/main/ol/{x}" for x in ("li", "li/a", "li/img", "li/span", "li/span/b")]
                   + ["html/body/main/nav", "html/body/main/nav/a", "html/body/main/h2"],
        "article": [f"html/body/article/{x}" for x in ("h1", "p", "p/em", "p/a", "blockquote", "figure",
                                                        "figure/img", "figure/figcaption", "time")],
    }
    pages, labels = [], []
    for k in range(n):
        label = sorted(parts)[k % 3]
        optional = [p for p in parts[label][-3:] if rng.random() < 0.5]
        pages.append(skeleton + parts[label][:-3] + optional)
        labels.append(label)
    return pages, labels


def test_templates_with_optional_parts_are_found():
    pages, labels = _template_pages(random.Random(7), 300)
    res, of = cluster_sets(pages, [1] * len(pages), cutoff=5)
    assigned = {str(i): int(c) or None for i, c in enumerate(of)}
    scores = evaluate(assigned, {str(i): x for i, x in enumerate(labels)})
    assert scores["pair_precision"] == 1.0 and scores["fstar"] >= 0.9, scores
    # the same pages in another order: the same partition
    order = list(range(len(pages)))
    random.Random(1).shuffle(order)
    res2, of2 = cluster_sets([pages[i] for i in order], [1] * len(pages), cutoff=5)
    assert {frozenset(i for i in range(len(pages)) if of[i] == c) for c in set(of.tolist())} == \
        {frozenset(order[j] for j in range(len(pages)) if of2[j] == c) for c in set(of2.tolist())}
    # counts stand for pages: one set carried by 100 pages is a cluster of 100
    res3, _ = cluster_sets([pages[0], pages[1]], [100, 1], cutoff=5)
    assert [c.size for c in res3.clusters] == [100] and res3.unclustered == 1


def test_a_skeleton_all_templates_share_does_not_join_them():
    """Three templates whose pages are mostly the site's frame (menus, sidebar, footer: the same 60 paths on
    every page) and 6-12 paths of their own: with the frame as shingles, 6 of 8 values agree across templates
    too often; dropped (site_skeleton), each template is one cluster."""
    rng = random.Random(5)
    frame = [f"html/body/div/{part}/{i}" for part in ("nav", "aside", "footer") for i in range(20)]
    own = {name: [f"html/body/main/{name}/{i}" for i in range(12)] for name in ("book", "author", "review")}
    pages, labels = [], []
    for k in range(600):
        name = sorted(own)[k % 3]
        pages.append(frame + own[name][:6] + [p for p in own[name][6:] if rng.random() < 0.5])
        labels.append(name)
    assert site_skeleton(pages, [1] * len(pages)) == frozenset(frame)
    for seed in range(4):
        res, of = cluster_sets(pages, [1] * len(pages), cutoff=5, seed=seed)
        scores = evaluate({str(i): int(c) or None for i, c in enumerate(of)}, {str(i): x for i, x in enumerate(labels)})
        assert scores["pair_precision"] == 1.0 and scores["fstar"] >= 0.95, (seed, scores)


def test_fragments_of_one_template_are_merged_back():
    # pages of one template carry any 8 of 16 optional sections: pairwise Jaccard ~0.6, so 6 of 8 signature
    # values often disagree and Algorithm 1 splits the template; its clusters' fingerprints are alike.  The
    # site's other template has no optional part.
    rng = random.Random(11)
    core = [f"html/body/main/div/{i}" for i in range(20)]
    optional = [f"html/body/main/section/{i}" for i in range(16)]
    other = [f"html/body/main/table/{i}" for i in range(20)]
    sets = [frozenset(core + rng.sample(optional, 8)) for _ in range(400)] + [frozenset(other)] * 400
    distinct = sorted(set(sets), key=sorted)
    counts = [sets.count(s) for s in distinct]
    res, of = cluster_sets([sorted(s) for s in distinct], counts, cutoff=2)
    assert len(res.clusters) == 2 and res.unclustered < 20
    (template,) = {int(c) for s, c in zip(distinct, of) if s != frozenset(other)}
    assert res.clusters[template - 1].size + res.unclustered == 400 == res.clusters[2 - template].size
    merged = res.clusters[template - 1]
    assert len(merged.masked) > 1 and merged.signature == merged.masked[0]
    # without the Jaccard merge (similarity 1: only identical fingerprints) the fragments still join: each
    # fragment's fingerprint lies inside what the fullest one shows (_fragments_joined)
    joined, _ = cluster_sets([sorted(s) for s in distinct], counts, cutoff=2, similarity=1.0)
    assert [c.size for c in joined.clusters] == [c.size for c in res.clusters]
    assert len(joined.clusters[template - 1].masked) > 1


def test_a_chance_match_of_two_templates_is_verified_apart():
    """Four distinct signatures that agree on the same 6 of 8 values: Algorithm 1 puts their pages in one
    cluster, whose fingerprint is paths 0-7.  Sets A and A2 are alike to it (Jaccard 1 and 7/9 >= 6/8), C is
    the template without two of its parts (5/8, but no path the fingerprint lacks), B shares 6 of its 8
    paths and has two of its own (6/10): B leaves, keyed by its full signature, and the merge keeps it apart
    (its fingerprint is as far from the cluster's)."""
    a = frozenset(f"html/body/main/{i}" for i in range(8))
    a2 = frozenset(f"html/body/main/{i}" for i in range(7)) | {"html/body/main/x"}
    b = frozenset(f"html/body/main/{i}" for i in range(6)) | {"html/body/aside/y", "html/body/aside/z"}
    c = frozenset(f"html/body/main/{i}" for i in range(5))
    sets = [a, a2, b, c]
    values = np.array([pack([0] * 6 + [k, k]) for k in (1, 2, 3, 4)], dtype=np.uint64)
    counts = [10, 5, 4, 3]
    signed = cluster_signatures(values, np.array(counts), cutoff=1)
    assert [c.size for c in signed.clusters] == [22]  # one 6/8 masked vector covers all four
    parts = verify(signed, values, np.arange(4), sets, counts)
    assert [(p.sets, p.pages) for p in parts] == [((0, 1, 3), 18), ((2,), 4)]
    assert parts[0].masked == signed.clusters[0].signature and parts[0].importance == signed.clusters[0].importance
    assert parts[1].masked == masked_text(int(values[2]), int(MASKS[0])) and parts[1].importance == 4
    assert ALIKE > len(a & b) / len(a | b) and ALIKE > len(a & c) / len(a | c)
    groups = merge_alike(parts, sets, counts)
    assert [[p.sets for p in g] for g in groups] == [[(0, 1, 3)], [(2,)]]
    # a similarity the two fingerprints reach merges them again (largest part first)
    assert [[p.sets for p in g] for g in merge_alike(parts, sets, counts, similarity=0.5)] == [[(0, 1, 3), (2,)]]


def test_two_templates_alike_to_their_shared_fingerprint_are_split_apart():
    """Two templates in one masked vector, each on 30 % of its pages or more: the fingerprint holds both
    templates' paths and every set is 6/8 alike to it, so the Jaccard check keeps them all.  The sets with
    the title block and those without it each have paths of their own on all their pages (3 and 5): two
    clusters.  Both sides have sets of two kinds, the title block's side is split off as a part of its
    own, keyed by the full signature of its set of most pages."""
    core = [f"html/body/div/p{i}" for i in range(20)]
    front = frozenset(core + [f"html/body/div/center/c{i}" for i in range(3)])
    front2 = front | {"html/body/div/ul/li"}
    chapter = frozenset(core + [f"html/body/div/h3/s{i}" for i in range(5)])
    chapter2 = chapter | {"html/body/div/pre"}
    sets = [front, front2, chapter, chapter2]
    counts = [50, 20, 30, 10]
    values = np.array([pack([0] * 6 + [k, k]) for k in (1, 2, 3, 4)], dtype=np.uint64)
    signed = cluster_signatures(values, np.array(counts), cutoff=2)
    assert [c.size for c in signed.clusters] == [110]
    parts = verify(signed, values, np.arange(4), sets, counts)
    assert [(p.sets, p.pages) for p in parts] == [((0, 1), 70), ((2, 3), 40)]
    assert parts[0].masked == signed.clusters[0].signature
    assert parts[1].masked == masked_text(int(values[2]), int(MASKS[0])) and parts[1].importance == 40
    # a side under the cut-off stays
    assert split_apart([0, 1, 2, 3], sets, counts, cutoff=41) == [[0, 1, 2, 3]]
    assert split_apart([0, 1, 2, 3], sets, counts, cutoff=40) == [[0, 1], [2, 3]]


def test_an_either_or_block_of_one_template_is_not_split():
    """Book pages with a paragraph or a list in one place: each side has one path of its own, not two."""
    core = [f"html/body/main/p{i}" for i in range(20)]
    with_p = frozenset(core + ["html/body/main/section/p"])
    with_list = frozenset(core + ["html/body/main/section/ul", "html/body/main/section/ul/li"])
    # ul is also on a page with the paragraph: the list side's only path of its own is ul/li
    with_both = frozenset(core + ["html/body/main/section/p", "html/body/main/section/ul"])
    assert split_apart([0, 1, 2], [with_p, with_list, with_both], [50, 40, 10], cutoff=2) == [[0, 1, 2]]
    assert split_apart([0], [with_p], [50], cutoff=1) == [[0]]


def test_a_part_told_apart_from_the_rest_of_its_group_leaves_it():
    """A small part alike to two templates bridges them in the transitive merge; the template whose pages
    all show paths the rest of the group never shows (and lack the rest's) leaves the group again.

    Front pages: the core and a title block (c0-c2).  Chapters: the core, sections s0-s2 and one of two
    optional parts (h0 with h1 or h2).  A 10-page chapter without the optional part is 20/26 alike to the
    front pages and 23/25 to the chapters, while front pages and chapters are 20/28 alike: one chain."""
    core = [f"html/body/div/p{i}" for i in range(20)]
    front = frozenset(core + [f"html/body/div/center/c{i}" for i in range(3)])
    sections = [f"html/body/div/h3/s{i}" for i in range(3)]
    bridge = frozenset(core + sections)
    chapter_a = bridge | {"html/body/div/ul/h0", "html/body/div/ul/h1"}
    chapter_b = bridge | {"html/body/div/ul/h0", "html/body/div/ul/h2"}
    sets = [front, bridge, chapter_a, chapter_b]
    counts = [84, 10, 40, 30]
    parts = [ShinglePart((k,), n, f"{k}", n) for k, n in enumerate(counts)]
    assert ALIKE <= len(front & bridge) / len(front | bridge) and ALIKE <= len(bridge & chapter_a) / len(
        bridge | chapter_a)
    assert ALIKE > len(front & chapter_a) / len(front | chapter_a)
    groups = merge_alike(parts, sets, counts)
    assert [sorted(p.sets[0] for p in g) for g in groups] == [[0], [1, 2, 3]]
    assert [[p.sets for p in g] for g in groups] == [[(0,)], [(2,), (3,), (1,)]]  # largest part first
    # the chapters' optional parts (h1 only on A, h2 only on B) do not tell a chapter part from the rest, which
    # lacks h1 but has h2 on under 90 % of its pages; without the front pages they stay one group
    assert [[p.sets for p in g] for g in merge_alike(parts[1:], sets, counts)] == [[(2,), (3,), (1,)]]


def test_clusters_under_the_cut_off_after_the_merge_are_unclustered():
    # two templates with no path in common, one of 40 pages and one of 3: the small one is deleted, as
    # Algorithm 1 deletes a masked vector under the cut-off
    big = [f"html/body/main/div/{i}" for i in range(10)]
    small = [f"html/body/main/table/{i}" for i in range(10)]
    res, of = cluster_sets([big, small], [40, 3], cutoff=5)
    assert [c.size for c in res.clusters] == [40] and res.unclustered == 3 and of.tolist() == [1, 0]
    assert res.signatures == 2 and len(res.assignment) == 2


def test_sets_left_out_go_to_the_cluster_they_fit():
    """Sets of no cluster (their part under the cut-off) join the cluster whose fingerprint they fit as the
    verification checks a page: 6/8 alike (9/11 here) or no path the fingerprint lacks; the most alike
    cluster when several fit; a set that fits none stays out."""
    a = frozenset(f"html/body/main/a{i}" for i in range(10))
    b = frozenset(f"html/body/main/b{i}" for i in range(10))
    near_a = frozenset(sorted(a)[:9]) | {"html/body/main/x"}  # 9/11 alike to a
    part_of_b = frozenset(sorted(b)[:4])  # no path b lacks, 4/10 alike
    both = frozenset(sorted(a)[:5]) | frozenset(sorted(b)[:5])  # 5/15 to each
    sets = [a, b, near_a, part_of_b, both]
    assert attach_left([[0], [1]], sets, [40, 30, 2, 1, 1]) == [[0, 2], [1, 3]]
    assert attach_left([], sets, [40, 30, 2, 1, 1]) == []
    # through cluster_sets: the small sets' own clusters are under the cut-off, they are counted in a's and b's
    res, of = cluster_sets([sorted(x) for x in sets], [40, 30, 2, 1, 1], cutoff=5)
    assert of.tolist()[:4] == [1, 2, 1, 2] and of[4] == 0
    assert [c.size for c in res.clusters] == [42, 31] and res.unclustered == 1


def test_a_fragment_joins_the_fuller_group_it_lies_inside():
    """Groups' fingerprints and pooled pages per path: a fragment (the core without optional sections) joins
    the fuller group showing every one of its paths; a group with a path the fuller one never shows, or
    shows on too few of its pages, stays apart; a fragment inside two fuller groups joins the more alike
    one only, so it does not bridge them."""
    core = {f"core/{i}" for i in range(6)}
    full_a = core | {f"a/{i}" for i in range(6)}
    full_b = core | {f"b/{i}" for i in range(3)}
    some = {f"core/{i}" for i in range(3)}
    prints = {0: frozenset(full_a), 1: frozenset(full_b), 2: frozenset(core), 3: frozenset(some | {"own"}),
              4: frozenset(some | {"rare"})}
    pooled = {g: (Counter(dict.fromkeys(fp, 30)), 30) for g, fp in prints.items()}
    pooled[0] = (Counter(dict.fromkeys(full_a, 100)) + Counter({"rare": 4}), 100)
    pooled[1] = (Counter(dict.fromkeys(full_b, 100)), 100)
    assert 4 < FRAGMENT_SHOWN * 100  # group 0 shows "rare" on 4 % of its pages: no section of it
    # 2 is inside 0 and 1, more alike to 1 (6/9 against 6/12); 1 is no fragment of 0 ("b/*" never shown)
    assert _fragments_joined(prints, pooled) == [[0], [1, 2], [3], [4]]
    # once "rare" is one of 0's sections, 4 is a fragment of it
    pooled[0] = (pooled[0][0] + Counter({"rare": 10}), 100)
    assert _fragments_joined(prints, pooled) == [[0, 4], [1, 2], [3]]
    assert _fragments_joined({0: frozenset(), 1: frozenset(full_a)}, {0: (Counter(), 5), 1: pooled[0]}) == [[0], [1]]


def test_link_sections_tell_apart_templates_of_equal_tag_paths():
    """Two templates with the same tag paths, told apart only by the ids of their link collections (Haddock's
    module pages and letter indexes): one cluster on tag paths, two with the link sections.  Links spelled
    from one page's content (an anchor per page) are no section; unsampled pages carry their set's most
    common sampled set."""
    tags = [f"html/body/div/{i}" for i in range(12)]
    module = ["html/body/div#interface/p/a", "html/body/div#package-header/ul/li/a"]
    index = ["html/body/div#index/table/tr/td/a", "html/body/div#package-header/ul/li/a"]
    sampled = [[frozenset(module + [f"html/body/h4#fun-{k}/a"]) for k in range(LINK_SAMPLES)],
               [frozenset(index + [f"html/body/h4#entry-{k}/a"]) for k in range(LINK_SAMPLES)]]
    # the store shares one tag-path row among the two templates' pages: here two rows of equal paths
    sections = with_link_sections([tags, list(reversed(tags))], [300, 200], sampled)
    assert sum(sections.counts) == 500
    assert sorted(len(s) for s in sections.sets) == [14, 14]  # each page's own h4 anchor dropped
    (with_module,) = {sections.sets[k] for k in sections.sampled[0]}
    assert with_module == frozenset(tags) | {LINK_MARK + p for p in module}
    assert sections.unsampled.tolist() == [sections.sampled[0][0], sections.sampled[1][0]]
    assert sections.counts[int(sections.unsampled[0])] == 300
    res, _ = cluster_sets([tags, list(reversed(tags))], [300, 200], cutoff=5)
    assert len(res.clusters) == 1
    res, of = cluster_sets(sections.sets, sections.counts, cutoff=5)
    assert sorted(c.size for c in res.clusters) == [200, 300] and of[sections.unsampled[0]] != of[sections.unsampled[1]]


def test_link_sections_of_a_set_whose_pages_differ():
    """Sampled pages carry their own link sections; the set's other pages the most common one (the first
    sample's among equals).  A path is dropped when it stands for under LINK_SHARE of the site's pages
    (each sample stands for its set's pages over its samples) or when fewer than LINK_SAMPLED_PAGES
    sampled pages show it, however many pages its sample stands for."""
    tags = ["html/body/main"]
    with_next = frozenset({"nav.pages/a", "ul.items/li/a"})
    without = frozenset({"ul.items/li/a"})
    once = frozenset({"ul.items/li/a", "h4#item-42/a"})
    big = 3000
    sampled = [[without, with_next, without, with_next, without, once], [frozenset({"footer/a.rare"})] * 2]
    sections = with_link_sections([tags, ["html/body/table"]], [big, 10], sampled)
    assert 10 < LINK_SHARE * (big + 10) <= big / 6 and LINK_SAMPLED_PAGES == 2
    sets = [sections.sets[k] for k in sections.sampled[0]]
    assert sets == [frozenset(tags) | {LINK_MARK + p for p in x}
                    for x in (without, with_next, without, with_next, without, without)]
    assert sections.sets[int(sections.unsampled[0])] == sets[0]
    # the four samples like the first and the unsampled pages
    assert sections.counts[int(sections.unsampled[0])] == big - 2
    assert sections.sets[int(sections.unsampled[1])] == frozenset({"html/body/table"})
    assert sum(sections.counts) == big + 10
    empty = with_link_sections([tags], [4], [[]])  # no sampled page: the tag paths alone
    assert empty.sets == [frozenset(tags)] and empty.counts == [4] and empty.sampled == [[]]


def test_bad_arguments():
    with pytest.raises(ValueError, match="cutoff must be >= 1"):
        cluster_signatures(np.array([1], dtype=np.uint64), np.array([1]), cutoff=0)
    with pytest.raises(ValueError, match="distinct"):
        cluster_signatures(np.array([1, 1], dtype=np.uint64), np.array([1, 1]), cutoff=1)
    with pytest.raises(ValueError, match="shingle length"):
        cluster_sets([["a"]], [1], cutoff=1, length=0)


# ---------------------------------------------------------------------------
# structcrawl cluster --method shingles over a stored crawl
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_crawl(tmp_path_factory):
    site = DemoSite(pages=300, seed=2)
    tmp = tmp_path_factory.mktemp("shingles")
    db = f"sqlite:///{tmp / 'small.db'}"
    with serving(site) as base:
        res = structcrawl("crawl", base + "/", "--db", db, "--job", "small", "--stop", "exhaust", "-L", "WARNING",
                          "-o", str(tmp / "small.model.json"))
    assert res.returncode == 0, res.stderr[-3000:]
    return site, db, tmp


def test_cluster_cli_shingles(small_crawl):
    site, db, tmp = small_crawl

    def truth(url: str) -> str | None:
        p = urlsplit(url)
        return site.classify(p.path + (f"?{p.query}" if p.query else ""))

    scores = {}
    for shingle in ("1", "3"):  # the default (tag paths), and windows of 3
        out = tmp / f"sh{shingle}.json"
        res = structcrawl("cluster", "--db", db, "--method", "shingles", "--shingle", shingle, "--members", "-q",
                          "-o", str(out))
        assert res.returncode == 0, res.stderr[-3000:]
        doc = json.loads(out.read_text(encoding="utf-8"))
        assert doc["format"] == "structcrawl-clusters" and doc["job"] == "small"
        assert doc["parameters"]["method"] == "shingles" and doc["parameters"]["match"] == "6/8"
        assert doc["parameters"]["shingle"] == int(shingle)
        assert doc["parameters"]["similarity"] == 0.75  # the 6 of 8 a signature match estimates
        members = [u for c in doc["classes"] for u in c["members"]] + doc["unclustered"]["members"]
        assert len(members) == len(set(members)) == doc["pages"]  # every page once
        for c in doc["classes"]:
            assert c["size"] == len(c["members"]) and c["members"] == sorted(c["members"])
            assert set(c["samples"]) <= set(c["members"]) and 1 <= len(c["samples"]) <= 10
            assert c["signature"].count(".") == 7 and c["signature"].count("*") <= 2 and c["importance"] > 0
            assert c["masked_vectors"][0] == c["signature"]
        assert [c["id"] for c in doc["classes"]] == list(range(1, len(doc["classes"]) + 1))
        assert [c["size"] for c in doc["classes"]] == sorted((c["size"] for c in doc["classes"]), reverse=True)
        assert "shingle signatures of" in res.stdout and "unclustered" in res.stdout
        assigned = {u: c["id"] for c in doc["classes"] for u in c["members"]}
        assigned.update((u, None) for u in doc["unclustered"]["members"])
        scores[shingle] = evaluate(assigned, {u: truth(u) for u in assigned})
        print(f"demo 300 pages, shingles of {shingle} tag paths: {scores[shingle]}")
    # with the link sections (0.931 and 0.911 on tag paths alone)
    assert all(s["pair_precision"] >= 0.95 and s["fstar"] >= 0.95 for s in scores.values()), scores
    # without --members the document has no member lists
    res = structcrawl("cluster", "--db", db, "--method", "shingles", "-q", "-o", "-")
    assert res.returncode == 0
    assert "members" not in json.loads(res.stdout)["classes"][0]


def test_sampled_pages_links_are_read_from_the_store(small_crawl):
    """The link-collection paths read for each tag-path set's sampled pages are those pages' link
    collections (their schema), as a fresh render of the page gives them; at most LINK_SAMPLES pages per
    set, each of that set."""
    site, db, _tmp = small_crawl
    engine = make_engine(db)
    try:
        with engine.connect() as conn:
            job = find_job(conn, db, None).id
            page_ids, tagset_of, urls = _pages(conn, job, True)
            set_ids, set_index = np.unique(tagset_of, return_inverse=True)
            picked, links = _sampled_links(conn, job, page_ids, set_index, len(set_ids), 0)
    finally:
        engine.dispose()
    sizes = np.bincount(set_index)
    assert [len(ks) for ks in picked] == [min(LINK_SAMPLES, int(n)) for n in sizes]
    assert max(sizes) > LINK_SAMPLES  # some set is sampled, not read whole
    checked = 0
    for k, (ks, pages) in enumerate(zip(picked, links)):
        assert set(set_index[ks].tolist()) == {k}
        for i, paths in zip(ks.tolist(), pages):
            parts = urlsplit(urls[i])
            status, _headers, body = site.render(parts.path + (f"?{parts.query}" if parts.query else ""))
            assert status == 200 and paths == extract(body, urls[i]).schema, urls[i]
            checked += 1
    assert checked == sum(len(ks) for ks in picked) > 0


def test_cluster_cli_shingles_bad_input(small_crawl):
    _site, db, tmp = small_crawl
    res = structcrawl("cluster", "--db", db, "--method", "shingles", "--shingle", "0", "-o", str(tmp / "x.json"))
    helpers.assert_one_error(res, "--shingle must be >= 1")
    res = structcrawl("cluster", "--db", db, "--method", "shingles", "--job", "nope", "-o", str(tmp / "x.json"))
    helpers.assert_one_error(res, "no job 'nope'")


def test_cluster_cli_shingles_same_on_sqlite_and_postgresql(tmp_path, pg_url):
    """The same synthetic crawl in both backends: the same clusters document, members included."""
    docs = []
    for db in (f"sqlite:///{tmp_path / 'syn.db'}", pg_url):
        fill(db, 2500, base_pages=1200)
        res = structcrawl("cluster", "--db", db, "--method", "shingles", "--shingle", "3", "--members", "-q",
                          "-o", "-")
        assert res.returncode == 0, res.stderr[-3000:]
        docs.append(json.loads(res.stdout))
    assert docs[0] == docs[1]
    assert docs[0]["pages"] == 2500 and len(docs[0]["classes"]) > 1
