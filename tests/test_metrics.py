"""Quality measures of structcrawl.analysis.metrics on hand-computed cases.

Definitions: Crescenzi et al. §4.1 (F*, entropy in bits, purity) and §4.3 (F, RevF, Q on
schemas); Chakrabarti & Mehta §4 (adjusted Rand index); UXClust §4.2 (pairwise P/R).
"""

from __future__ import annotations

import math
import random
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from structcrawl.analysis.metrics import (
    Contingency,
    Unassigned,
    adjusted_rand_index,
    contingency,
    entropy,
    evaluate,
    fstar,
    pair_counts,
    pairwise_precision_recall,
    purity,
    schema_f,
    schema_quality,
    schema_similarity,
)

approx = pytest.approx

# Reference used by most cases: class A = pages 1..6, class B = pages 7..10 (N = 10).
TRUTH = {f"p{k}": ("A" if k <= 6 else "B") for k in range(1, 11)}


def test_perfect_clustering():
    assigned = {p: ("x" if c == "A" else "y") for p, c in TRUTH.items()}
    r = evaluate(assigned, TRUTH)
    assert r["fstar"] == approx(1.0)
    assert r["entropy"] == approx(0.0)
    assert r["purity"] == approx(1.0)
    assert r["ari"] == approx(1.0)
    assert r["pair_precision"] == approx(1.0)
    assert r["pair_recall"] == approx(1.0)
    assert (r["pages"], r["clusters"], r["classes"], r["unassigned"], r["ignored"]) == (10, 2, 2, 0, 0)


def test_cluster_labels_need_not_match_class_labels():
    # Swapped labels are still a perfect clustering.
    assigned = {p: ("B" if c == "A" else "A") for p, c in TRUTH.items()}
    assert evaluate(assigned, TRUTH)["fstar"] == approx(1.0)


def test_everything_in_one_cluster():
    assigned = {p: "all" for p in TRUTH}
    r = evaluate(assigned, TRUTH)
    # F_A = 2·6/(6+10) = 3/4, F_B = 2·4/(4+10) = 4/7
    # F* = 3/4·6/10 + 4/7·4/10 = 0.45 + 8/35 = 19/28
    assert r["fstar"] == approx(19 / 28)
    # one cluster with p = (0.6, 0.4): H = −0.6·log2 0.6 − 0.4·log2 0.4 ≈ 0.97095
    assert r["entropy"] == approx(-(0.6 * math.log2(0.6) + 0.4 * math.log2(0.4)))
    assert r["purity"] == approx(0.6)  # majority class A: 6/10
    # pairs: a = C(6,2)+C(4,2) = 21, b = 0, c = C(10,2) − 21 = 24, d = 0
    # ARI = 2(0 − 0)/(21·0 + 45·24) = 0
    assert r["ari"] == approx(0.0)
    assert r["pair_precision"] == approx(21 / 45)  # TP/(TP+FP)
    assert r["pair_recall"] == approx(1.0)  # FN = 0
    assert r["clusters"] == 1


def test_all_singletons():
    assigned = {p: i for i, p in enumerate(TRUTH)}
    r = evaluate(assigned, TRUTH)
    # F_A = 2·1/(6+1) = 2/7, F_B = 2·1/(4+1) = 2/5
    # F* = 2/7·6/10 + 2/5·4/10 = 6/35 + 4/25 = 58/175
    assert r["fstar"] == approx(58 / 175)
    # entropy and purity only see precision: singletons are "perfect"
    assert r["entropy"] == approx(0.0)
    assert r["purity"] == approx(1.0)
    # a = 0, b = 21, c = 0, d = 24: ARI = 2(0·24 − 21·0)/(21·45 + 0) = 0
    assert r["ari"] == approx(0.0)
    # no two pages share a cluster: no false positive, precision vacuously 1; recall 0/21
    assert r["pair_precision"] == approx(1.0)
    assert r["pair_recall"] == approx(0.0)
    assert r["clusters"] == 10


# Worked example, 2 classes × 3 clusters:
#   X = {p1..p4}, Y = {p5, p6, p7}, Z = {p8, p9, p10}
#            X  Y  Z  | |Ci|
#       A    4  2  0  |  6
#       B    0  1  3  |  4
#   |Ĉj|     4  3  3  | 10
WORKED = {
    **{f"p{k}": "X" for k in (1, 2, 3, 4)},
    **{f"p{k}": "Y" for k in (5, 6, 7)},
    **{f"p{k}": "Z" for k in (8, 9, 10)},
}


def test_worked_example_confusion_matrix():
    t = contingency(WORKED, TRUTH)
    assert t.classes == ("A", "B")
    assert t.clusters == ("X", "Y", "Z")
    assert t.matrix() == [[4, 2, 0], [0, 1, 3]]
    assert t.class_sizes == (6, 4) and t.cluster_sizes == (4, 3, 3) and t.n == 10


def test_worked_example_fstar():
    # F(A,X) = 2·4/(6+4) = 0.8, F(A,Y) = 2·2/(6+3) = 4/9            → F_A = 0.8
    # F(B,Y) = 2·1/(4+3) = 2/7, F(B,Z) = 2·3/(4+3) = 6/7            → F_B = 6/7
    # F* = 0.8·6/10 + 6/7·4/10 = 0.48 + 12/35 = 144/175 ≈ 0.822857
    assert fstar(WORKED, TRUTH) == approx(144 / 175)


def test_worked_example_purity_and_entropy():
    # purity = (max(4,0) + max(2,1) + max(0,3)) / 10 = 9/10
    assert purity(WORKED, TRUTH) == approx(0.9)
    # H(X) = 0, H(Z) = 0, H(Y) = −(2/3·log2 2/3 + 1/3·log2 1/3) = log2 3 − 2/3 ≈ 0.918296
    # H = 0.918296 · 3/10 ≈ 0.275489
    assert entropy(WORKED, TRUTH) == approx((math.log2(3) - 2 / 3) * 3 / 10)
    assert entropy(WORKED, TRUTH) == approx(0.2754887502)


def test_worked_example_pairs_and_ari():
    # a = Σ C(e_ij,2) = C(4,2)+C(2,2)+C(1,2)+C(3,2) = 6+1+0+3 = 10   (TP)
    # same class:   C(6,2)+C(4,2) = 15+6 = 21  → b = 21 − 10 = 11      (FN)
    # same cluster: C(4,2)+C(3,2)+C(3,2) = 12  → c = 12 − 10 = 2       (FP)
    # all pairs C(10,2) = 45                   → d = 45 − 10 − 11 − 2 = 22
    assert tuple(pair_counts(WORKED, TRUTH)) == (10, 11, 2, 22)
    # ARI = 2(ad − bc)/((a+b)(b+d) + (a+c)(c+d)) = 2(220 − 22)/(21·33 + 12·24) = 396/981 = 44/109
    # Hubert–Arabie form: (10 − 21·12/45)/((21+12)/2 − 21·12/45) = 4.4/10.9 = 44/109 ✓
    assert adjusted_rand_index(WORKED, TRUTH) == approx(44 / 109)
    # pairwise P = 10/(10+2) = 5/6, R = 10/(10+11) = 10/21
    p, r = pairwise_precision_recall(WORKED, TRUTH)
    assert p == approx(5 / 6) and r == approx(10 / 21)


def test_measures_accept_a_contingency():
    t = contingency(WORKED, TRUTH)
    assert fstar(t) == fstar(WORKED, TRUTH)
    assert evaluate(t) == evaluate(WORKED, TRUTH)
    with pytest.raises(TypeError):
        fstar(WORKED)


def test_missing_and_null_assignments_are_singletons():
    truth = {"p1": "A", "p2": "A", "p3": "A", "p4": "B"}
    assigned = {"p1": "x", "p2": "x", "p3": None, "q": "x"}  # p4 missing, q not in truth
    t = contingency(assigned, truth)
    assert t.clusters == ("x", Unassigned("p3"), Unassigned("p4"))
    assert (t.unassigned, t.ignored) == (2, 1)
    r = evaluate(assigned, truth)
    assert (r["pages"], r["clusters"], r["unassigned"], r["ignored"]) == (4, 3, 2, 1)
    # clusters {p1,p2}, {p3}, {p4}. Had p3 and p4 been lumped into one "None"
    # cluster, purity would be (2+1)/4 = 0.75; as singletons it is (2+1+1)/4 = 1.
    assert r["purity"] == approx(1.0)
    # F_A = max(2·2/(3+2), 2·1/(3+1)) = 0.8, F_B = 2·1/(1+1) = 1 → F* = 0.8·3/4 + 1·1/4 = 0.85
    assert r["fstar"] == approx(0.85)
    # TP = C(2,2) = 1, FP = 0, FN = C(3,2) − 1 = 2 → P = 1, R = 1/3
    assert r["pair_precision"] == approx(1.0)
    assert r["pair_recall"] == approx(1 / 3)
    # b = 2, c = 0, d = C(4,2) − 1 − 2 = 3 → ARI = 2(1·3 − 0)/((1+2)(2+3) + (1+0)(0+3)) = 6/18
    assert r["ari"] == approx(1 / 3)


def test_nothing_assigned_is_all_singletons():
    assert evaluate({}, TRUTH) == {**evaluate({p: i for i, p in enumerate(TRUTH)}, TRUTH), "unassigned": 10}


def test_identical_trivial_partitions_have_ari_one():
    # all pages in one class and one cluster: b = c = d = 0, the ARI formula is 0/0
    truth = {"a": 1, "b": 1, "c": 1}
    assert adjusted_rand_index({"a": "x", "b": "x", "c": "x"}, truth) == 1.0
    # all singletons on both sides: a = b = c = 0
    truth = {"a": 1, "b": 2, "c": 3}
    r = evaluate({"a": "x", "b": "y", "c": "z"}, truth)
    assert r["ari"] == 1.0 and r["pair_precision"] == 1.0 and r["pair_recall"] == 1.0 and r["fstar"] == 1.0


def test_single_page():
    r = evaluate({"a": "x"}, {"a": "A"})
    assert (r["fstar"], r["entropy"], r["purity"], r["ari"]) == (1.0, 0.0, 1.0, 1.0)


def test_empty_truth_is_an_error():
    with pytest.raises(ValueError):
        evaluate({"a": "x"}, {})


def test_none_truth_class_is_an_error():
    with pytest.raises(ValueError):
        contingency({}, {"a": None})


def test_ari_can_be_negative():
    # truth {a,b},{c,d}; computed {a,c},{b,d}: a = 0, b = 2, c = 2, d = 2
    # ARI = 2(0·2 − 2·2)/((0+2)(2+2) + (0+2)(2+2)) = −8/16 = −0.5
    truth = {"a": 1, "b": 1, "c": 2, "d": 2}
    assert adjusted_rand_index({"a": "x", "c": "x", "b": "y", "d": "y"}, truth) == approx(-0.5)


def _brute_pairs(assigned, truth):
    """O(N²) reference for pair counts (with singleton clusters for unassigned pages)."""
    pages = list(truth)
    label = {p: (assigned.get(p) if assigned.get(p) is not None else ("single", p)) for p in pages}
    a = b = c = d = 0
    for p, q in combinations(pages, 2):
        same_t, same_c = truth[p] == truth[q], label[p] == label[q]
        a += same_t and same_c
        b += same_t and not same_c
        c += same_c and not same_t
        d += not same_t and not same_c
    return a, b, c, d


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 3), st.one_of(st.none(), st.integers(0, 4))), min_size=1, max_size=25)
)
def test_pair_counts_match_brute_force_and_hubert_arabie(rows):
    truth = {f"p{k}": t for k, (t, _) in enumerate(rows)}
    assigned = {f"p{k}": c for k, (_, c) in enumerate(rows)}
    assert tuple(pair_counts(assigned, truth)) == _brute_pairs(assigned, truth)
    t = contingency(assigned, truth)
    # Hubert–Arabie: (index − expected) / (max − expected)
    index = sum(math.comb(e, 2) for e in t.counts.values())
    sc = sum(math.comb(s, 2) for s in t.class_sizes)
    sk = sum(math.comb(s, 2) for s in t.cluster_sizes)
    total = math.comb(t.n, 2)
    expected = sc * sk / total if total else 0.0
    mx = (sc + sk) / 2
    ari = adjusted_rand_index(t)
    if mx != expected:
        assert ari == approx((index - expected) / (mx - expected))
    else:
        assert ari == 1.0
    r = evaluate(t)
    for key in ("fstar", "purity", "pair_precision", "pair_recall"):
        assert 0.0 <= r[key] <= 1.0 + 1e-12
    assert r["entropy"] >= 0.0
    assert -1.0 <= ari <= 1.0 + 1e-12


def test_large_input_uses_exact_integer_pair_counts():
    # 200 000 pages: pair counts exceed 2**32; Python ints keep them exact.
    rng = random.Random(0)
    truth = {f"/p{k}": k % 50 for k in range(200_000)}
    assigned = {p: (c if rng.random() < 0.9 else 99) for p, c in truth.items()}
    a, b, c, d = pair_counts(assigned, truth)
    assert a + b + c + d == 200_000 * 199_999 // 2
    r = evaluate(assigned, truth)
    assert 0.5 < r["ari"] < 1.0 and r["pages"] == 200_000 and r["clusters"] == 51


# ---------------------------------------------------------------------------
# Schema-based quality (Crescenzi et al. §4.3)
# Reference classes: A = {n, a}, B = {n, b} (n = a navigation path shared by both).
# ---------------------------------------------------------------------------

A = frozenset({"n", "a"})
B = frozenset({"n", "b"})
REF = [A, B]


def test_schema_f():
    assert schema_f(A, A) == 1.0
    # σp = {n,b}, σC = {n,a}: P = 1/2, R = 1/2 → F = 1/2
    assert schema_f(B, A) == approx(0.5)
    # σp = {n}, σC = {n,a}: P = 1, R = 1/2 → F = 2/3
    assert schema_f(frozenset({"n"}), A) == approx(2 / 3)
    assert schema_f(frozenset({"x"}), A) == 0.0
    assert schema_f(frozenset(), frozenset()) == 1.0
    # sim = mean of F over the member pages: (1 + 1/2) / 2
    assert schema_similarity(A, [A, B]) == approx(0.75)
    assert schema_similarity(A, []) == 0.0


def test_schema_quality_perfect_model():
    # X = two A pages, Y = one B page: sim(A,X) = 1, sim(B,Y) = 1 → F = RevF = Q = 1
    r = schema_quality([[A, A], [B]], REF)
    assert (r["F"], r["RevF"], r["Q"]) == (approx(1.0), approx(1.0), approx(1.0))
    assert r["best_computed"] == {0: 0, 1: 1} and r["best_reference"] == {0: 0, 1: 1}


def test_schema_quality_one_all_encompassing_class():
    # One computed class U holding all three pages {A, A, B}:
    #   sim(A,U) = (1 + 1 + 1/2)/3 = 5/6,  sim(B,U) = (1/2 + 1/2 + 1)/3 = 2/3
    #   F = (5/6 + 2/3)/2 = 3/4,  RevF = max(5/6, 2/3) = 5/6
    #   Q = 2·(3/4·5/6)/(3/4 + 5/6) = (5/4)/(19/12) = 15/19 ≈ 0.789
    r = schema_quality({"U": [A, A, B]}, {"A": A, "B": B})
    assert r["F"] == approx(3 / 4)
    assert r["RevF"] == approx(5 / 6)
    assert r["Q"] == approx(15 / 19)
    assert r["best_computed"] == {"A": "U", "B": "U"}
    # A class known only by a schema that includes every reference path, {n,a,b}:
    #   F({n,a,b}, A) = 2·2/(3+2) = 4/5 = F({n,a,b}, B) → F = RevF = Q = 4/5 < 1
    r = schema_quality([[A | B]], REF)
    assert (r["F"], r["RevF"], r["Q"]) == (approx(0.8), approx(0.8), approx(0.8))


def test_schema_quality_spurious_extra_classes():
    # The perfect model plus two spurious classes: Z = [{x}] (matches nothing) and
    # W = [{n}] (nav-only page): sim(A,Z) = sim(B,Z) = 0, sim(A,W) = sim(B,W) = 2/3.
    #   F = (1 + 1)/2 = 1: F alone tolerates spurious classes (the paper's warning)
    #   RevF = (1 + 1 + 0 + 2/3)/4 = 2/3
    #   Q = 2·(1·2/3)/(1 + 2/3) = 4/5
    r = schema_quality([[A, A], [B], [frozenset({"x"})], [frozenset({"n"})]], REF)
    assert r["F"] == approx(1.0)
    assert r["RevF"] == approx(2 / 3)
    assert r["Q"] == approx(0.8)
    assert r["computed_classes"] == 4 and r["reference_classes"] == 2


def test_schema_quality_degenerate_inputs():
    r = schema_quality([], REF)
    assert (r["F"], r["RevF"], r["Q"]) == (0.0, 0.0, 0.0)
    assert r["best_computed"] == {0: None, 1: None}
    with pytest.raises(ValueError):
        schema_quality([[A]], [])


def test_contingency_is_exported_type():
    assert isinstance(contingency({}, {"a": 1}), Contingency)
