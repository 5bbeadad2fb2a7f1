"""UXClust core (structcrawl.analysis.uxclust, UXClust §3.3): hand-computed cases, no database."""

from __future__ import annotations

import random

import pytest

from structcrawl.analysis.fingerprint import sample_rank
from structcrawl.analysis.uxclust import (
    Parameters,
    SampledPage,
    cluster_groups,
    cluster_pages,
    relative_cutoff,
    split_told_apart,
)

A = frozenset({"p", "q", "r1"})
B = frozenset({"p", "q", "r2"})
C = frozenset({"p", "q", "s", "t"})


def pages(rank0: int, paths: frozenset[str], n: int, name: str) -> list[SampledPage]:
    return [SampledPage(rank0 + 10 * i, f"http://h/{name}{i}", paths) for i in range(n)]


def test_cutoff_sends_small_groups_and_unlinked_pages_to_unclustered():
    sizes = {"/x[1]": 5, "/x[2]": 3, "/y": 2}
    samples = {"/x[1]": pages(0, A, 2, "a"), "/x[2]": pages(1, C, 2, "c")}
    result = cluster_groups(sizes, samples, Parameters(cutoff=3, similarity=0.9), unlinked=1)
    assert result.groups == 3 and result.groups_kept == 2
    assert result.unclustered == 2 + 1  # /y (2 < 3) and the unlinked page; /x[2] (3 = cut-off) is kept
    assert [(c.id, c.size, c.xpaths) for c in result.clusters] == [(1, 5, ("/x[1]",)), (2, 3, ("/x[2]",))]
    assert result.pages == 11
    assert result.cluster_of_xpath() == {"/x[1]": 1, "/x[2]": 2}


def test_similarity_threshold_is_inclusive():
    # |A ∩ B| / |A ∪ B| = 2 / 4 = 0.5
    sizes = {"a": 4, "b": 3}
    samples = {"a": pages(0, A, 2, "a"), "b": pages(1, B, 2, "b")}
    merged = cluster_groups(sizes, samples, Parameters(cutoff=1, similarity=0.5))
    assert [(c.size, c.xpaths) for c in merged.clusters] == [(7, ("a", "b"))]
    apart = cluster_groups(sizes, samples, Parameters(cutoff=1, similarity=0.51))
    assert [(c.size, c.xpaths) for c in apart.clusters] == [(4, ("a",)), (3, ("b",))]


def test_merging_is_transitive():
    # J(a, b) = J(b, c) = 3/4 but J(a, c) = 2/4: single linkage puts all three together
    a, b, c = frozenset("wxy"), frozenset("wxyz"), frozenset("xyz")
    sizes = {"a": 1, "b": 1, "c": 1}
    samples = {k: pages(i, fp, 1, k) for i, (k, fp) in enumerate((("a", a), ("b", b), ("c", c)))}
    result = cluster_groups(sizes, samples, Parameters(cutoff=1, samples=1, occurrence=1.0, similarity=0.75))
    assert [c.xpaths for c in result.clusters] == [("a", "b", "c")]


def test_merged_groups_are_fingerprinted_again_until_nothing_merges():
    # occurrence 1.0: a fingerprint is the intersection of the samples.
    # Round 1: J(A, B) = 2/4 merges a and b; J(A, C) = J(B, C) = 2/5 < 0.5.
    # The merged sample is the 2 lowest ranks of the pooled samples: a0 (0) and b0 (1),
    # fingerprint A ∩ B = {p, q}; round 2: J({p, q}, C) = 2/4 merges c.
    sizes = {"a": 10, "b": 10, "c": 10}
    samples = {"a": pages(0, A, 2, "a"), "b": pages(1, B, 2, "b"), "c": pages(2, C, 2, "c")}
    params = Parameters(cutoff=1, samples=2, occurrence=1.0, similarity=0.5)
    (cluster,) = cluster_groups(sizes, samples, params).clusters
    assert cluster.xpaths == ("a", "b", "c") and cluster.size == 30
    assert cluster.samples == ("http://h/a0", "http://h/b0")  # c0 has rank 2
    assert cluster.fingerprint == frozenset({"p", "q"})


def test_fingerprint_from_the_lowest_ranked_samples_and_occurrence():
    # 5 samples of 6 given: the one of rank 99 is not used; "x" is on 2 of 5 = 0.4 >= 0.3, "y" on 1 of 5
    given = [SampledPage(r, f"http://h/{r}", frozenset({"p"}) | extra)
             for r, extra in ((3, {"x"}), (1, {"x"}), (2, set()), (5, {"y"}), (4, set()), (99, {"z"}))]
    (cluster,) = cluster_groups({"g": 6}, {"g": given}, Parameters(cutoff=1, samples=5)).clusters
    assert cluster.samples == tuple(f"http://h/{r}" for r in (1, 2, 3, 4, 5))
    assert cluster.fingerprint == frozenset({"p", "x"})


def test_clusters_are_numbered_largest_first():
    sizes = {"a": 2, "b": 9, "c": 9}
    samples = {"a": pages(0, A, 1, "a"), "b": pages(0, B, 1, "b"), "c": pages(0, C, 1, "c")}
    result = cluster_groups(sizes, samples, Parameters(cutoff=1, similarity=1.0))
    assert [(c.id, c.xpaths) for c in result.clusters] == [(1, ("b",)), (2, ("c",)), (3, ("a",))]


def test_a_kept_group_without_samples_is_an_error():
    with pytest.raises(ValueError, match="no sampled pages"):
        cluster_groups({"a": 5}, {}, Parameters(cutoff=1))


@pytest.mark.parametrize("kwargs", [{"cutoff": 0}, {"samples": 0}, {"occurrence": 1.5}, {"similarity": 0.0}])
def test_bad_parameters(kwargs):
    with pytest.raises(ValueError):
        Parameters(**kwargs)


def site_pages() -> list[tuple[str, str | None, frozenset[str]]]:
    """Two templates over three inbound XPaths, a small group and the start page."""
    out = [("http://h/", None, C)]
    out += [(f"http://h/book/{i}", "/html/body/ul/li[1]/a", A) for i in range(6)]
    out += [(f"http://h/book/{i}", "/html/body/ul/li[2]/a", A) for i in range(6, 10)]
    out += [(f"http://h/author/{i}", "/html/body/p/a", B) for i in range(5)]
    out += [(f"http://h/about{i}", "/html/body/footer/a", C) for i in range(2)]
    return out


def test_cluster_pages_in_memory():
    result, assigned = cluster_pages(site_pages(), Parameters(cutoff=3, samples=5, similarity=0.8))
    assert result.groups == 4 and result.groups_kept == 3 and result.unclustered == 3
    books, authors = result.clusters
    assert (books.size, books.xpaths) == (10, ("/html/body/ul/li[1]/a", "/html/body/ul/li[2]/a"))
    assert (authors.size, authors.xpaths) == (5, ("/html/body/p/a",))
    assert assigned["http://h/book/7"] == books.id and assigned["http://h/author/0"] == authors.id
    assert assigned["http://h/"] is None and assigned["http://h/about1"] is None
    assert books.fingerprint == A
    # samples: the 5 books of lowest keyed-BLAKE2b rank of their URL (fingerprint.sample's order)
    urls = [u for u, x, _ in site_pages() if u.startswith("http://h/book/")]
    assert books.samples == tuple(sorted(urls, key=lambda u: sample_rank(0, u))[:5])


def test_cluster_pages_first_entry_of_a_url_counts():
    rows = site_pages() + [("http://h/author/0", "/html/body/ul/li[1]/a", A)]
    result, assigned = cluster_pages(rows, Parameters(cutoff=3))
    assert result.pages == len(site_pages())
    assert assigned["http://h/author/0"] == result.clusters[1].id


def test_cluster_pages_is_deterministic_whatever_the_order_and_seeded():
    rows = site_pages()
    want = cluster_pages(rows, Parameters(cutoff=3))
    shuffled = rows[:]
    random.Random(5).shuffle(shuffled)
    assert cluster_pages(shuffled, Parameters(cutoff=3)) == want
    other = cluster_pages(rows, Parameters(cutoff=3, seed=1))[0]
    assert [c.xpaths for c in other.clusters] == [c.xpaths for c in want[0].clusters]
    assert other.clusters[0].samples != want[0].clusters[0].samples  # another seed, other samples


def test_the_default_cutoff_is_the_papers_share_of_the_crawl_and_at_least_two_pages():
    # UXClust: 100 pages on sites of 76,503 pages on average
    assert relative_cutoff(76_503) == 100 and relative_cutoff(1_000_000) == 1308
    assert relative_cutoff(2952) == 4  # the default demo site
    assert relative_cutoff(400) == relative_cutoff(1) == 2  # a small stable crawl keeps its groups of 2
    assert Parameters().cutoff_for(400) == 2 and Parameters(cutoff=20).cutoff_for(400) == 20


def test_a_small_crawl_keeps_its_groups_of_two_pages_and_more():
    # 9 pages: a fixed cut-off of 20 would leave every page unclustered
    sizes = {"list": 4, "nav": 2, "footer": 1}
    samples = {"list": pages(0, A, 4, "l"), "nav": pages(1, C, 2, "n")}
    result = cluster_groups(sizes, samples, Parameters(), unlinked=2)
    assert result.cutoff == 2 and result.groups_kept == 2 and result.unclustered == 1 + 2
    assert [(c.size, c.xpaths) for c in result.clusters] == [(4, ("list",)), (2, ("nav",))]
    assert cluster_groups(sizes, samples, Parameters(cutoff=20), unlinked=2).clusters == ()


def with_sections(sampled: list[SampledPage], *sections: str) -> list[SampledPage]:
    return [SampledPage(p.rank, p.url, p.tag_paths, frozenset(sections)) for p in sampled]


def test_look_alike_groups_with_sections_the_other_never_shows_stay_apart():
    # same tag paths (Jaccard 1), but authors always list co-authors and publishers always a catalogue
    sizes = {"authors": 5, "publishers": 5}
    authors = pages(0, A, 5, "a")
    publishers = pages(1, A, 5, "p")
    plain = cluster_groups(sizes, {"authors": authors, "publishers": publishers}, Parameters(cutoff=1))
    assert [c.xpaths for c in plain.clusters] == [("authors", "publishers")]  # no sections known: merged
    told = {"authors": with_sections(authors, "nav", "co-authors"),
            "publishers": with_sections(publishers, "nav", "catalogue")}
    apart = cluster_groups(sizes, told, Parameters(cutoff=1))
    assert [c.xpaths for c in apart.clusters] == [("authors",), ("publishers",)]


def test_a_section_only_one_group_shows_is_optional_and_does_not_split():
    # the pages with a pager are the same template as those without: only one side has its own section
    sizes = {"first": 5, "paged": 5}
    samples = {"first": with_sections(pages(0, A, 5, "f"), "list"),
               "paged": with_sections(pages(1, A, 5, "p"), "list", "pager")}
    result = cluster_groups(sizes, samples, Parameters(cutoff=1))
    assert [c.xpaths for c in result.clusters] == [("first", "paged")]


def test_a_bridge_group_joins_the_side_it_is_most_like():
    # a and c are told apart; b is like both (J(a, b) = 4/5, J(b, c) = 3/4, J(a, c) = 3/5) and shows a's
    # section: single linkage would chain a-b-c; the veto keeps c out, b goes with a
    a, b, c = frozenset("pqrst"), frozenset("pqrs"), frozenset("pqrsu")
    pool = {"a": with_sections(pages(0, a, 2, "a"), "x"), "b": with_sections(pages(1, b, 2, "b"), "x"),
            "c": with_sections(pages(2, c, 2, "c"), "z")}
    prints = {"a": a, "b": b, "c": c}
    assert split_told_apart(["a", "b", "c"], prints, pool, 0.6) == [["a", "b"], ["c"]]
    assert split_told_apart(["a", "b", "c"], prints, {k: pages(0, prints[k], 2, k) for k in prints},
                            0.6) == [["a", "b", "c"]]
