"""Fingerprints, samples, union-find and merging (UXClust §3.3)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from structcrawl.analysis.fingerprint import (
    fingerprint,
    merge_groups,
    refine_groups,
    sample,
    sample_rank,
    weighted_jaccard,
)
from structcrawl.core.unionfind import UnionFind, jaccard

# --------------------------------------------------------------------------- #
# fingerprint
# --------------------------------------------------------------------------- #
BASE = frozenset({"html", "html/body", "html/body/div"})


def test_fingerprint_occurrence_exactly_at_threshold_is_kept():
    # 10 pages; "x" on exactly 3 (= 0.3), "y" on 2 (= 0.2 < 0.3), base on all.
    pages = [BASE | {"x"} if i < 3 else BASE for i in range(10)]
    pages[5] = pages[5] | {"y"}
    pages[6] = pages[6] | {"y"}
    fp = fingerprint(pages, occurrence=0.3)
    assert fp == BASE | {"x"}
    assert "y" in fingerprint(pages, occurrence=0.2)
    assert fingerprint(pages, occurrence=0.31) == BASE


def test_fingerprint_bounds_and_empty():
    pages = [frozenset("ab"), frozenset("bc")]
    assert fingerprint(pages, occurrence=1.0) == {"b"}
    assert fingerprint(pages, occurrence=0.0) == set("abc")
    assert fingerprint([], 0.3) == frozenset()
    with pytest.raises(ValueError):
        fingerprint(pages, occurrence=1.5)


def test_fingerprint_single_page_is_the_page():
    assert fingerprint([BASE]) == BASE


# --------------------------------------------------------------------------- #
# sample
# --------------------------------------------------------------------------- #
URLS = [f"https://shop.example/book/{i}.html" for i in range(50)]


def test_sample_is_deterministic_and_order_independent():
    a = sample(URLS, 5, seed=1)
    shuffled = URLS[:]
    random.Random(4).shuffle(shuffled)
    assert len(a) == 5 and len(set(a)) == 5 and set(a) <= set(URLS)
    assert sample(shuffled, 5, seed=1) == a
    assert sample(iter(URLS), 5, seed=1) == a


def test_sample_takes_the_lowest_sample_ranks():
    urls = [f"http://h/{i}" for i in range(50)]
    assert sample(urls, 7, seed=3) == sorted(urls, key=lambda u: sample_rank(3, u))[:7]


def test_sample_changes_with_seed():
    assert sample(URLS, 5, seed=1) != sample(URLS, 5, seed=2)


def test_sample_small_population_and_monotone():
    assert sorted(sample(URLS[:3], 5)) == sorted(URLS[:3])
    assert sample(URLS, 0) == []
    # growing the population only lets better-ranked newcomers in
    small = sample(URLS[:25], 5, seed=3)
    big = sample(URLS, 5, seed=3)
    assert [u for u in big if u in URLS[:25]] == small[: len([u for u in big if u in URLS[:25]])]


def test_sample_with_key():
    pages = [frozenset({f"p{i}", "q"}) for i in range(10)]
    key = lambda p: "\n".join(sorted(p))  # noqa: E731
    assert sample(pages, 3, seed=0, key=key) == sample(pages[::-1], 3, seed=0, key=key)


# --------------------------------------------------------------------------- #
# jaccard
# --------------------------------------------------------------------------- #
def test_jaccard():
    assert jaccard(frozenset("abcd"), frozenset("abce")) == pytest.approx(3 / 5)
    assert jaccard(frozenset(), frozenset()) == 1.0
    assert jaccard(frozenset("a"), frozenset()) == 0.0
    assert jaccard(frozenset("abcde"), frozenset("abcd")) == 0.8  # exactly, as a float


def test_weighted_jaccard():
    w = {"a": 1.0, "b": 1.0, "rare": 8.0}.get
    a, b = frozenset({"a", "b"}), frozenset({"a", "b", "rare"})
    assert jaccard(a, b) == pytest.approx(2 / 3)
    assert weighted_jaccard(a, b, w) == pytest.approx(2 / 10)
    assert weighted_jaccard(a, a, w) == 1.0
    zero = lambda p: 0.0  # noqa: E731
    assert weighted_jaccard(a, b, zero) == 0.0
    assert weighted_jaccard(a, a, zero) == 1.0


# --------------------------------------------------------------------------- #
# UnionFind
# --------------------------------------------------------------------------- #
def test_union_find_transitivity_and_groups():
    uf = UnionFind("abcde")
    assert uf.union("a", "b")
    assert uf.union("b", "c")
    assert not uf.union("a", "c")
    assert uf.connected("a", "c")
    assert not uf.connected("a", "d")
    assert uf.size("c") == 3
    assert uf.groups() == [["a", "b", "c"], ["d"], ["e"]]
    assert uf.n_groups == 3 and len(uf) == 5


def test_union_find_implicit_add_and_path_compression():
    uf: UnionFind[int] = UnionFind()
    for i in range(1, 1000):
        uf.union(i - 1, i)
    assert uf.n_groups == 1
    root = uf.find(999)
    assert uf._parent[999] == root  # compressed
    assert 5 in uf and 5000 not in uf
    assert uf.find(5000) == 5000 and 5000 in uf


def test_union_by_size_keeps_big_root():
    uf = UnionFind(range(5))
    uf.union(0, 1)
    uf.union(0, 2)
    uf.union(3, 0)  # singleton 3 joins the size-3 set
    assert uf.find(3) == uf.find(0) == 0


# --------------------------------------------------------------------------- #
# merge_groups
# --------------------------------------------------------------------------- #
def fs(*xs: str) -> frozenset[str]:
    return frozenset(xs)


def test_merge_threshold_edge_exactly_0_8():
    fps = {"g1": fs("a", "b", "c", "d", "e"), "g2": fs("a", "b", "c", "d")}  # 4/5 = 0.8
    assert merge_groups(fps, 0.8) == [["g1", "g2"]]
    assert merge_groups(fps, 0.81) == [["g1"], ["g2"]]
    # 4/6 < 0.8
    fps2 = {"g1": fs("a", "b", "c", "d", "e"), "g2": fs("a", "b", "c", "d", "f")}
    assert merge_groups(fps2, 0.8) == [["g1"], ["g2"]]


def test_merge_is_transitive():
    # a~b (8/9), b~c (8/9), but a vs c only 7/9... < 0.8
    common = [f"p{i}" for i in range(7)]
    a = frozenset(common + ["x", "y"])
    b = frozenset(common + ["y", "z"])
    c = frozenset(common + ["z", "w"])
    d = fs("other", "page")
    assert jaccard(a, c) < 0.8 <= jaccard(a, b)
    assert jaccard(b, c) >= 0.8
    assert merge_groups({"a": a, "b": b, "c": c, "d": d}, 0.6) == [["a", "b", "c"], ["d"]]
    assert merge_groups({"c": c, "a": a, "d": d, "b": b}, 0.6) == [["a", "b", "c"], ["d"]]


def test_merge_identical_and_empty_fingerprints():
    fps = {1: fs(), 2: fs(), 3: fs("a"), 4: fs("a"), 5: fs("b")}
    assert merge_groups(fps, 1.0) == [[1, 2], [3, 4], [5]]


def test_merge_weighted_keeps_distinct_templates_apart():
    shared = [f"html/body/nav/li{i}" for i in range(9)]
    product = frozenset(shared + ["html/body/div/span.price"])
    review = frozenset(shared + ["html/body/div/p.review"])
    fps = {"product": product, "review": review}
    assert merge_groups(fps, 0.8) == [["product", "review"]]  # 9/11 >= 0.8
    rare = {"html/body/div/span.price", "html/body/div/p.review"}
    w = lambda p: 5.0 if p in rare else 1.0  # noqa: E731
    assert merge_groups(fps, 0.8, weight=w) == [["product"], ["review"]]


def test_merge_bad_arguments():
    with pytest.raises(ValueError):
        merge_groups({}, 0.0)
    with pytest.raises(ValueError):
        merge_groups({"a": fs("x")}, 0.8, weight=lambda p: -1.0)
    assert merge_groups({}) == []


def test_merge_mixed_key_types_are_ordered_deterministically():
    fps = {("x", 1): fs("a"), "s": fs("a"), 3: fs("b")}
    out = merge_groups(fps, 0.9)
    assert out == merge_groups(dict(reversed(list(fps.items()))), 0.9)
    assert sorted(map(len, out)) == [1, 2]


def test_merge_many_groups_from_noisy_templates():
    # 3000 groups from 30 templates with noise: one group per template (speed is benchmarked, not tested).
    rng = random.Random(7)
    templates = [[f"t{t}/p{i}" for i in range(40)] + [f"common/{i}" for i in range(20)] for t in range(30)]
    fps = {}
    for g in range(3000):
        t = templates[g % 30]
        fps[g] = frozenset(p for p in t if rng.random() > 0.03) | {f"noise/{g}"}
    groups = merge_groups(fps, 0.8)
    assert len(groups) == 30
    assert all(len({m % 30 for m in grp}) == 1 for grp in groups)


def brute_force(fps, threshold, weight=None):
    keys = sorted(fps)
    uf = UnionFind(keys)
    for i, a in enumerate(keys):
        for b in keys[i + 1 :]:
            sim = jaccard(fps[a], fps[b]) if weight is None else weighted_jaccard(fps[a], fps[b], weight)
            if fps[a] == fps[b] or sim >= threshold:
                uf.union(a, b)
    return sorted(sorted(g) for g in uf.groups())


path_sets = st.frozensets(st.sampled_from([f"p{i}" for i in range(12)]), max_size=10)


@settings(max_examples=300, deadline=None)
@given(
    fps=st.dictionaries(st.integers(0, 40), path_sets, max_size=14),
    threshold=st.sampled_from([0.3, 0.5, 0.6, 2 / 3, 0.75, 0.8, 0.9, 1.0]),
    weighted=st.booleans(),
    seed=st.integers(0, 1000),
)
def test_merge_matches_brute_force_and_is_order_independent(fps, threshold, weighted, seed):
    weight = (lambda p: float(int(p[1:]) % 4)) if weighted else None  # includes zero weights
    expected = brute_force(fps, threshold, weight)
    got = merge_groups(fps, threshold, weight)
    assert sorted(got) == expected
    assert got == sorted(got, key=lambda g: g[0]) and all(g == sorted(g) for g in got)
    items = list(fps.items())
    random.Random(seed).shuffle(items)
    assert merge_groups(dict(items), threshold, weight) == got


# --------------------------------------------------------------------------- #
# refine_groups
# --------------------------------------------------------------------------- #
def test_refine_groups_reaches_fixed_point():
    nav = [f"html/body/nav/a{i}" for i in range(8)]
    prod = frozenset(nav + ["html/body/div/h1", "html/body/div/span"])
    prod2 = frozenset(nav + ["html/body/div/h1", "html/body/div/span", "html/body/div/em"])
    listing = frozenset(nav[:2] + ["html/body/ul/li", "html/body/ul/li/a", "html/body/ol"])
    pages = {
        "x1": [prod] * 4,
        "x2": [prod, prod2],
        "x3": [prod2] * 3,
        "l1": [listing] * 3,
    }
    groups = refine_groups(pages)
    assert groups == [["l1"], ["x1", "x2", "x3"]]
    assert refine_groups(dict(reversed(list(pages.items())))) == groups


def test_refine_groups_recomputes_merged_fingerprint():
    # g1 ~ g2 (8/10); neither is close to g3 (8/11), but the fingerprint of
    # their pooled pages drops the rare x1, x2 (1/6 < 0.3) and is (8/10).
    core = [f"c{i}" for i in range(8)]
    c = frozenset(core)
    g1 = [c | {"x1"}, c, c]
    g2 = [c | {"x2"}, c, c]
    g3 = [c | {"z1", "z2"}]
    f1, f2, f3 = fingerprint(g1), fingerprint(g2), fingerprint(g3)
    assert jaccard(f1, f2) == 0.8 and jaccard(f1, f3) < 0.8 and jaccard(f2, f3) < 0.8
    assert merge_groups({"g1": f1, "g2": f2, "g3": f3}) == [["g1", "g2"], ["g3"]]
    pages = {"g1": g1, "g2": g2, "g3": g3}
    assert refine_groups(pages, s=10) == [["g1", "g2", "g3"]]
    assert refine_groups(pages, s=10, threshold=0.81) == [["g1"], ["g2"], ["g3"]]
