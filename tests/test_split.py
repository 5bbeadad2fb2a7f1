"""Undoing a merge (``structcrawl.core.split``): a class that holds pages its own
merge veto would have kept apart gives them back, to the class they fit or a new one."""

from structcrawl.core.frontier import Frontier
from structcrawl.core.model import Costs, Page, SiteModel
from structcrawl.core.split import split_told_apart, told_apart_members

CHROME = ("nav/a", "footer/a")


def page(url, *paths):
    return Page(url, frozenset(CHROME + paths), len(paths) + 2)


def class_pages(n, *extra):
    return [page(f"class{i}", "summary/a", "toc/a", "func/a", *extra) for i in range(n)]


def members_pages(n):
    return [page(f"members{i}", "members-table/a") for i in range(n)]


def model_of(groups):
    pages = [p for g in groups for p in g]
    assignment = {p.url: cid for cid, g in enumerate(groups) for p in g}
    return SiteModel.from_assignment(pages, assignment, Costs())


def test_members_pages_absorbed_one_at_a_time_are_split_off():
    # two "all members" pages joined the class pages, one by one: each side has
    # sections the other never shows, twice or more — the merge veto's rule
    model = model_of([class_pages(8) + members_pages(2)])
    assert sorted(told_apart_members(model, 0)) == ["members0", "members1"]
    assignment = split_told_apart(model)
    assert {assignment[f"members{i}"] for i in range(2)} == {1}
    assert {assignment[f"class{i}"] for i in range(8)} == {0}


def test_one_absorbed_page_is_no_evidence():
    model = model_of([class_pages(8) + members_pages(1)])
    assert told_apart_members(model, 0) is None
    assert split_told_apart(model) is None


def test_an_optional_section_is_not_a_template_of_its_own():
    # three class pages with an extra "signals" section lack nothing the others have
    model = model_of([class_pages(5) + [page(f"sig{i}", "summary/a", "toc/a", "func/a", "signals/a")
                                        for i in range(3)]])
    assert told_apart_members(model, 0) is None


def test_a_split_off_group_joins_the_class_it_fits():
    model = model_of([class_pages(8) + members_pages(2), members_pages(5)[2:]])
    assignment = split_told_apart(model)
    assert {assignment[f"members{i}"] for i in range(5)} == {1}


def test_the_frontier_keeps_what_a_split_class_s_paths_were_learnt_to_lead_to():
    frontier = Frontier("densest", 10)
    frontier.add_links(0, {"members-table/a": ["http://x/a", "http://x/b"]})
    frontier.collections[(0, "members-table/a")].tried = True
    frontier.record((0, "members-table/a"), [3])
    frontier.split_class(0, 7, [{"members-table/a": ["http://x/c"]}])
    moved = frontier.collections[(7, "members-table/a")]
    assert moved.tried and moved.leads_to == {3: 1} and moved.urls == ["http://x/c"]
    assert frontier.collections[(0, "members-table/a")].pages == 0


def test_a_group_missing_one_section_of_the_rest_stays():
    # two chapters with a "scope" heading and without the "see also" one: optional
    # sections of one template, not a template of their own
    chapters = [page(f"ch{i}", "body/a", "toc/a", "see-also/a") for i in range(8)]
    scoped = [page(f"sc{i}", "body/a", "toc/a", "scope/a") for i in range(2)]
    model = model_of([chapters + scoped])
    assert told_apart_members(model, 0) is None
