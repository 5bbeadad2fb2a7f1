"""Min-hash shingle signatures, k/8 masking and O(1) lookup (seed 003 §III-A)."""

from __future__ import annotations

import random
import subprocess
import sys
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from structcrawl.shingles import (
    ShingleIndex,
    ShingleSignature,
    agreement,
    cluster_signatures,
    covers,
    masked_variants,
    tag_shingles,
)


def page(template: str, n: int = 120, extra: int = 0, drop: int = 0, seed: int = 0) -> frozenset[str]:
    """A page of a template: n tag paths, minus ``drop`` random ones, plus ``extra`` own ones."""
    rng = random.Random(seed)
    paths = [f"html/body/{template}/div{i}/span" for i in range(n)]
    for _ in range(drop):
        paths.remove(rng.choice(paths))
    return frozenset(paths + [f"html/body/{template}/extra{seed}-{j}" for j in range(extra)])


# --------------------------------------------------------------------------- #
# signatures
# --------------------------------------------------------------------------- #
def test_identical_sets_have_equal_signatures_regardless_of_order():
    a = page("product")
    sig = ShingleSignature.of(a)
    assert sig == ShingleSignature.of(sorted(a, reverse=True))
    assert sig == ShingleSignature.of(list(a) + list(a))  # duplicates ignored
    assert sig.k == 8 and len(sig.values) == 8
    assert all(0 <= v < 2**32 for v in sig.values)
    assert sig.agreement(sig) == 8 and sig.matches(sig)


def test_signature_is_stable_across_processes():
    code = (
        "from structcrawl.shingles import ShingleSignature;"
        "print(ShingleSignature.of(['html/body', 'html/body/div', 'html/body/div/a']).values)"
    )
    outs = {
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True,
            env={"PYTHONHASHSEED": str(s), "PATH": ""},
        ).stdout
        for s in (1, 2)
    }
    assert len(outs) == 1
    assert outs.pop().strip() == str(
        ShingleSignature.of(["html/body", "html/body/div", "html/body/div/a"]).values
    )


def test_signature_parameters():
    a = page("x")
    assert ShingleSignature.of(a, k=16).k == 16
    assert ShingleSignature.of(a, seed=1) != ShingleSignature.of(a, seed=0)
    byte = ShingleSignature.of(a, bits=8)
    assert all(0 <= v < 256 for v in byte.values)
    assert ShingleSignature.of([]).values == (2**32 - 1,) * 8
    with pytest.raises(ValueError):
        ShingleSignature.of(a, bits=65)
    with pytest.raises(ValueError):
        ShingleSignature.of(a, k=0)
    with pytest.raises(ValueError):
        ShingleSignature.of(a, seed=1).jaccard(ShingleSignature.of(a))


def test_near_duplicates_match_and_far_pages_do_not():
    base = page("product", n=200)
    near = page("product", n=200, drop=3, extra=2, seed=5)  # Jaccard ~0.975
    far = page("listing", n=200)
    s_base, s_near, s_far = (ShingleSignature.of(p) for p in (base, near, far))
    assert s_base.matches(s_near)
    assert s_base.agreement(s_far) == 0 and not s_base.matches(s_far)
    assert s_base.jaccard(s_near) >= 0.75 and s_base.jaccard(s_far) == 0.0


def test_agreement_tracks_jaccard_on_average():
    # P(v[i] = v'[i]) = J(S, S'): mean agreement over many k=8 signatures ~ 8 * J
    a = frozenset(f"p{i}" for i in range(100))
    b = frozenset(f"p{i}" for i in range(50, 150))  # J = 50/150 = 1/3
    agree = [ShingleSignature.of(a, seed=s).agreement(ShingleSignature.of(b, seed=s)) for s in range(200)]
    assert abs(sum(agree) / len(agree) - 8 / 3) < 0.35


def test_tag_shingles():
    tags = "html head title body div p a".split()
    sh = tag_shingles(tags, length=3)
    assert sh == {"html head title", "head title body", "title body div", "body div p", "div p a"}
    assert tag_shingles(tags) == {" ".join(tags)}  # shorter than l = 10
    assert tag_shingles([]) == frozenset()
    with pytest.raises(ValueError):
        tag_shingles(tags, 0)


# --------------------------------------------------------------------------- #
# masking
# --------------------------------------------------------------------------- #
def test_masked_variants_count_and_cover():
    v = (1, 2, 3, 4, 5, 6, 7, 8)
    variants = list(masked_variants(v, 6))
    assert len(variants) == 1 + 8 + 28  # Σ_{i=0..2} C(8, i)
    assert len(set(variants)) == 37
    assert variants[0] == v
    assert all(covers(mv, v) for mv in variants)
    # paper's example: <1,2,*,4,5,*,7,8> covers <1,...,8>
    assert covers((1, 2, None, 4, 5, None, 7, 8), v)
    assert not covers((1, 2, None, 4, 5, None, 7, 9), v)
    assert len(list(masked_variants((1, None, 3, 4, 5, 6, 7, 8), 6))) == 1 + 7


def test_agreement_ignores_wildcards():
    assert agreement((1, None, 3), (1, None, 4)) == 1
    with pytest.raises(ValueError):
        agreement((1, 2), (1, 2, 3))


# --------------------------------------------------------------------------- #
# ShingleIndex
# --------------------------------------------------------------------------- #
def test_index_lookup_near_duplicate_and_far_page():
    pages = {t: page(t, n=150) for t in ("product", "listing", "review", "help")}
    idx: ShingleIndex[str] = ShingleIndex()
    for t, p in pages.items():
        idx.add(t, ShingleSignature.of(p))
    assert len(idx) == 4 and "product" in idx
    for t in pages:
        near = page(t, n=150, drop=2, extra=1, seed=9)
        assert idx.lookup(ShingleSignature.of(near)) == t
    assert idx.lookup(ShingleSignature.of(page("search", n=150))) is None
    assert idx.candidates(ShingleSignature.of(page("search", n=150))) == []


def test_index_exact_k_of_8_semantics():
    idx: ShingleIndex[str] = ShingleIndex()
    idx.add("c", (1, 2, 3, 4, 5, 6, 7, 8))
    for agree in range(9):
        for pos in combinations(range(8), 8 - agree):
            v = tuple(0 if i in pos else i + 1 for i in range(8))
            assert (idx.lookup(v) == "c") == (agree >= 6), (agree, v)


def test_index_masked_cluster_signature_covers():
    idx: ShingleIndex[str] = ShingleIndex()
    idx.add("m", (0, 0, 0, 0, 0, 1, None, None))  # a 6/8 masked vector
    assert idx.lookup((0, 0, 0, 0, 0, 1, 2, 4)) == "m"  # covered
    assert idx.lookup((0, 0, 0, 0, 0, 6, 2, 3)) is None  # not covered
    idx.add("m7", (9, 9, 9, 9, 9, 9, 9, None))  # 7/8: one more disagreement allowed
    assert idx.lookup((9, 9, 9, 9, 9, 9, 0, 0)) == "m7"
    assert idx.lookup((9, 9, 9, 9, 9, 0, 0, 0)) is None
    with pytest.raises(ValueError):
        idx.add("bad", (1, 2, 3, 4, 5, None, None, None))  # only 5 concrete entries
    with pytest.raises(ValueError):
        idx.add("short", (1, 2, 3))


def test_index_prefers_agreement_then_importance_then_age():
    idx: ShingleIndex[str] = ShingleIndex()
    idx.add("small", (1, 2, 3, 4, 5, 6, 0, 0), importance=1)
    idx.add("big", (1, 2, 3, 4, 5, 6, 9, 9), importance=50)
    idx.add("close", (1, 2, 3, 4, 5, 6, 7, 0), importance=1)
    page_v = (1, 2, 3, 4, 5, 6, 7, 8)
    assert idx.candidates(page_v) == ["close", "big", "small"]
    assert idx.lookup(page_v) == "close"
    idx.remove("close")
    assert idx.lookup(page_v) == "big"
    idx.add("twin", (1, 2, 3, 4, 5, 6, 9, 9), importance=50)
    assert idx.candidates(page_v)[:2] == ["big", "twin"]  # tie: earlier added first
    idx.add("big", (1, 2, 3, 4, 5, 6, 9, 9), importance=1)  # re-adding replaces
    assert idx.lookup(page_v) == "twin"
    assert idx.importance("big") == 1.0 and idx.signature("twin") == (1, 2, 3, 4, 5, 6, 9, 9)
    for key in list(idx):
        idx.remove(key)
    assert len(idx) == 0 and idx._table == {}
    with pytest.raises(KeyError):
        idx.remove("nope")


@settings(max_examples=200, deadline=None)
@given(
    clusters=st.lists(st.tuples(*[st.integers(0, 2)] * 8), min_size=1, max_size=12),
    probe=st.tuples(*[st.integers(0, 2)] * 8),
)
def test_index_lookup_equals_linear_scan(clusters, probe):
    idx: ShingleIndex[int] = ShingleIndex()
    for i, c in enumerate(clusters):
        idx.add(i, c, importance=i % 3)
    expected = [i for i, c in enumerate(clusters) if agreement(c, probe) >= 6]
    assert sorted(idx.candidates(probe)) == sorted(expected)


# --------------------------------------------------------------------------- #
# Algorithm 1
# --------------------------------------------------------------------------- #
def test_cluster_signatures_paper_example_3_1():
    v1, v2, v3 = (0, 0, 0, 0, 0, 1, 2, 4), (0, 0, 0, 0, 0, 1, 5, 3), (0, 0, 0, 0, 0, 6, 2, 3)
    out = cluster_signatures([v1, v2, v3], min_count=1)
    # The paper's run (arbitrary ties) ends with {v1, v3} and {v2}; ours, with
    # deterministic ties, with the mirror image: two clusters of 6/8 vectors
    # from {mv1, mv2, mv3}, one with two pages and count 2, one with one page.
    mvs = {(0, 0, 0, 0, 0, 1, None, None), (0, 0, 0, 0, 0, None, 2, None), (0, 0, 0, 0, 0, None, None, 3)}
    assert [c.count for c in out] == [2, 1]
    assert {c.signature for c in out} <= mvs
    assert sorted(len(c.members) for c in out) == [1, 2]
    assert sorted(m for c in out for m in c.members) == [0, 1, 2]
    for c in out:
        assert all(covers(c.signature, [v1, v2, v3][m]) for m in c.members)
    # independent of page order
    again = cluster_signatures([v3, v1, v2], min_count=1)
    assert [(c.signature, c.count) for c in again] == [(c.signature, c.count) for c in out]


def test_cluster_signatures_groups_templates_and_prunes_small_ones():
    sigs, truth = [], []
    for t, n in (("product", 30), ("listing", 25), ("about", 3)):
        for i in range(n):
            sigs.append(ShingleSignature.of(page(t, n=300, drop=1, seed=i)))
            truth.append(t)
    out = cluster_signatures(sigs)  # pruning threshold 20
    assert [c.count for c in out] == [30, 25]
    assert [sorted({truth[m] for m in c.members}) for c in out] == [["product"], ["listing"]]
    assert sum(len(c.members) for c in out) == 55  # the 3 "about" pages are unassigned
    # the clusters' signatures feed a ShingleIndex
    idx: ShingleIndex[str] = ShingleIndex()
    for c, name in zip(out, ("product", "listing")):
        idx.add(name, c.signature, importance=c.count)
    assert idx.lookup(ShingleSignature.of(page("listing", n=300, drop=1, seed=99))) == "listing"
    assert cluster_signatures([]) == []
    with pytest.raises(ValueError):
        cluster_signatures([(1, 2, 3), (1, 2)])
