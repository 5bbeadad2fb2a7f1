"""Weighted greedy choice of sample pages (Vertex §III-B)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from structcrawl.analysis.samples import choose_samples, informativeness, path_weights

NAV = {"html/body/nav", "html/body/nav/a", "html/body/footer"}


def fs(*xs: str) -> frozenset[str]:
    return frozenset(xs)


def test_greedy_covers_features_hand_case():
    # F: nav paths 5, h1 5, price 4, reviews 2, video 1, badge 1
    pages = [
        frozenset(NAV | {"h1"}),                                   # 0: w = 3*5+5 = 20
        frozenset(NAV | {"h1", "price"}),                          # 1: 24
        frozenset(NAV | {"h1", "price", "reviews"}),               # 2: 26
        frozenset(NAV | {"h1", "price", "video"}),                 # 3: 25
        frozenset(NAV | {"h1", "price", "reviews", "badge"}),      # 4: 27
    ]
    w = path_weights(pages)
    assert w["html/body/nav"] == 5 and w["price"] == 4 and w["reviews"] == 2 and w["video"] == 1
    # 1st: page 4 (27). Uncovered then: video (1) -> page 3. All covered: stop.
    assert choose_samples(pages, k=5) == [4, 3]
    assert choose_samples(pages, k=1) == [4]
    assert choose_samples(pages, k=0) == []
    assert choose_samples([], k=5) == []


def test_ties_broken_by_count_then_index():
    pages = [fs("a"), fs("b"), fs("a", "b"), fs("a", "b")]
    assert choose_samples(pages) == [2]  # 2 and 3 tie: lower index
    # equal weight 2: page with more uncovered paths first
    pages = [fs("x", "y"), fs("z"), fs("z")]
    weights = {"x": 0.5, "y": 0.5, "z": 1.0}
    # F(x)=F(y)=1, F(z)=2: w = .5, .5, 2 -> page 1 first (2 > 1)
    assert choose_samples(pages, informativeness=weights) == [1, 0]
    info = {"x": 1.0, "y": 1.0, "z": 0.5}  # now w(x)+w(y) = 2 = w(z): x,y page covers more
    assert choose_samples(pages, informativeness=info) == [0, 1]


def test_zero_weight_paths_still_get_covered():
    pages = [fs("boiler", "data"), fs("boiler", "data", "rare-block")]
    info = {"boiler": 0.0, "rare-block": 0.0}
    assert choose_samples(pages, informativeness=info) == [1]
    pages = [fs("data"), fs("rare-block")]
    assert choose_samples(pages, informativeness={"rare-block": 0.0}) == [0, 1]


def test_duplicates_are_not_chosen_twice():
    p = fs("a", "b", "c")
    assert choose_samples([p, p, p, fs("a", "d")], k=5) == [0, 3]


def test_informativeness_formula():
    # M = 4 pages. footer: one text on all -> 1 - 4/(4*1) = 0
    # title: 4 distinct -> 1 - 4/(4*4) = 0.75
    # price: "9" on 2 pages, "12" on 1, missing on 1 -> 1 - 3/(4*2) = 0.625
    # li: list items, several texts per page; "Home" on all, "A".."D" once each
    contents = [
        {"footer": "© Shop", "title": "Dune", "price": "9", "li": ["Home", "A"]},
        {"footer": "© Shop", "title": "Emma", "price": "9", "li": ["Home", "B"]},
        {"footer": "© Shop", "title": "Ulysses", "price": "12", "li": ["Home", "C"]},
        {"footer": "© Shop", "title": "Beloved", "li": ("Home", "D", "D")},
    ]
    info = informativeness(contents)
    assert info["footer"] == 0.0
    assert info["title"] == pytest.approx(0.75)
    assert info["price"] == pytest.approx(0.625)
    assert info["li"] == pytest.approx(1 - 8 / (4 * 5))
    assert list(info) == sorted(info)


def test_informative_pages_come_first():
    # M = 4 pages.  nav: same text everywhere (I = 0).  4 promo paths on pages
    # 0-1 with the same text (I = 1 - 2/4 = 0.5, w = 1 each); 3 data paths on
    # pages 2-3 with distinct texts (I = 1 - 2/8 = 0.75, w = 1.5 each).
    nav = {f"nav/{i}": "menu" for i in range(3)}
    promo = {f"promo/{i}": "Sale!" for i in range(4)}
    contents = [
        {**nav, **promo},
        {**nav, **promo},
        {**nav, "title": "Dune", "price": "9", "isbn": "111"},
        {**nav, "title": "Emma", "price": "12", "isbn": "222"},
    ]
    pages = [frozenset(c) for c in contents]
    info = informativeness(contents)
    assert info["nav/0"] == 0.0 and info["promo/0"] == 0.5 and info["title"] == 0.75
    assert choose_samples(pages, k=1) == [0]  # by frequency alone: promo 8 > data 6
    assert choose_samples(pages, k=1, informativeness=info) == [2]  # 4.5 > 4
    assert choose_samples(pages, informativeness=info) == [2, 0]


def naive(pages, k, info=None):
    sets = [frozenset(p) for p in pages]
    w = path_weights(sets, info)
    uncovered, chosen = set(w), []
    while uncovered and len(chosen) < k:
        best = max(
            (i for i in range(len(sets)) if i not in chosen),
            key=lambda i: (math.fsum(w[x] for x in sets[i] & uncovered), len(sets[i] & uncovered), -i),
        )
        if not sets[best] & uncovered:
            break
        chosen.append(best)
        uncovered -= sets[best]
    return chosen


@settings(max_examples=300, deadline=None)
@given(
    pages=st.lists(st.frozensets(st.sampled_from("abcdefghij"), max_size=6), max_size=12),
    k=st.integers(0, 6),
    info=st.none() | st.dictionaries(st.sampled_from("abcdefghij"), st.sampled_from([0.0, 0.25, 0.5, 1.0])),
)
def test_lazy_greedy_equals_naive_greedy(pages, k, info):
    got = choose_samples(pages, k, info)
    assert got == naive(pages, k, info)
    assert len(got) <= k and len(set(got)) == len(got)
    covered = set().union(*(pages[i] for i in got)) if got else set()
    if len(got) < k:
        assert covered == set().union(*pages) if pages else True


def test_negative_k():
    with pytest.raises(ValueError):
        choose_samples([fs("a")], k=-1)
