"""Pages whose links are all the site's chrome, placed by their element paths (``structcrawl.core.placement``)."""

from __future__ import annotations

from structcrawl.core.model import Costs, Page, SiteModel
from structcrawl.core.placement import PathReference, from_document, to_document
from structcrawl.core.split import regroup

CHROME = ("nav/a", "footer/a")
#: the frame every page of the site has: left out of the comparison
SKELETON = ("html", "html/head", "html/body", "html/body/div.nav", "html/body/div.nav/a", "html/body/div.footer")
SECTION = SKELETON + ("html/body/div.sect1/p", "html/body/div.sect1/h2", "html/body/div.sect1/pre")
COMMAND = SKELETON + ("html/body/div.refentry/h2", "html/body/div.refsynopsis/pre", "html/body/div.refsect1/p",
                      "html/body/div.refsect1/dl/dt")
INDEX = SKELETON + ("html/body/div.index/dl/dt", "html/body/div.index/dl/dd")


def page(url, tags, *paths):
    return Page(url, frozenset(CHROME + paths), len(paths) + 2, element_paths=frozenset(tags))


def sections(n, name="sect", links=("xref/a",), extra=()):
    return [page(f"{name}{i}", SECTION + extra + (f"html/body/div.sect1/p/em{i % 2}",), *links) for i in range(n)]


def commands(n, name="cmd", links=("seealso/a",)):
    return [page(f"{name}{i}", COMMAND + (f"html/body/div.refsect1/p/code{i % 3}",), *links) for i in range(n)]


def indices(n):
    return [page(f"index{i}", INDEX, "letters/a") for i in range(n)]


def model_of(groups):
    pages = [p for g in groups for p in g]
    return SiteModel.from_assignment(pages, {p.url: cid for cid, g in enumerate(groups) for p in g}, Costs())


def test_a_page_of_chrome_links_goes_to_the_class_of_its_nearest_page_with_links():
    """DocBook sections and command pages whose only links are the navigation: the link code
    sees one page twice (the same schema); the element paths tell a section from a command page."""
    model = model_of([sections(6), commands(6), indices(3)])
    chrome = frozenset(CHROME)
    bare_section = sections(1, "bare", links=())[0]
    bare_command = commands(1, "bare", links=())[0]
    assert model.classify(chrome, 2, bare_section.element_paths)[0] == 0
    assert model.classify(chrome, 2, bare_command.element_paths)[0] == 1
    # without its element paths such a page is one schema: both answers are alike
    assert model.classify(chrome, 2)[0] == model.classify(chrome, 2)[0]
    # a page with links of its own is placed by its links, whatever its element paths
    assert model.classify(frozenset(CHROME + ("seealso/a",)), 3, bare_section.element_paths)[0] == 1


def test_the_skeleton_is_left_out_of_the_comparison():
    """A "No usage of X" stub is the frame and one sentence: counting the frame, it is 0.78 alike
    to a sparse summary page; left out, 0.33, and it stays where the link code puts it."""
    stub = frozenset(SKELETON + ("html/body/div.msg/p",))
    summary = SKELETON + ("html/body/div.msg/p", "html/body/table/tr/td", "html/body/table/tr/th")
    ref = PathReference.of_pages([(frozenset(summary), 0, True)] * 3 + [(frozenset(COMMAND), 1, True)] * 3)
    assert "html/body/div.nav/a" in ref.skeleton
    assert ref.nearest(stub) is None
    assert ref.nearest(frozenset(summary)) == 0
    assert ref.nearest(frozenset()) is None


def test_the_skeleton_is_read_inside_the_site_s_frame():
    """A frames Javadoc: its frame listings have links but no navigation bar (none of the
    chrome's links), and two among 43 pages put the bar under 99 % of the pages.  Read over
    all pages, the bar is no skeleton, and a stub is half alike to the class tree by the bar
    alone; read over the pages inside the frame, the stub is near no page and stays where
    the link code puts it."""
    frame_tags = ("html", "html/head", "html/body", "html/body/ul", "html/body/ul/li/a")
    frames = [Page(f"frame{i}", frozenset({"list/a"}), 9, element_paths=frozenset(frame_tags)) for i in range(2)]
    tree = page("tree", SKELETON + ("html/body/div.tree/ul", "html/body/div.tree/ul/li/a"), "tree/a")
    model = model_of([sections(40), [tree], frames])
    stub = frozenset(SKELETON + ("html/body/div.msg/p",))
    assert "html/body/div.nav/a" in model.reference().skeleton
    assert model.reference().nearest(stub) is None
    framed_as_before = PathReference.of_pages((p.element_paths, model.page_class[p.url], True)
                                              for p in model.pages.values())
    assert framed_as_before.nearest(stub) == 1  # the tree's class, by the navigation bar
    back, _bare = from_document(to_document(model.reference(), model.bare()))
    assert back.skeleton == model.reference().skeleton and back.nearest(stub) is None


def test_the_regroup_places_chrome_only_members_and_keeps_the_unplaceable_together():
    """Chrome-only pages the link code gathered in one class go to their nearest type; stubs
    near no page with links stay together."""
    stubs = [page(f"stub{i}", SKELETON + ("html/body/div.msg/p",)) for i in range(3)]
    bare = sections(3, "bare", links=()) + commands(2, "barecmd", links=())
    model = model_of([sections(6), commands(6), indices(3), bare + stubs])
    assignment = regroup(model)
    assert {assignment[p.url] for p in sections(3, "bare")} == {0}
    assert {assignment[p.url] for p in commands(2, "barecmd")} == {1}
    assert {assignment[p.url] for p in stubs} == {3}
    # the regrouped model answers alike for its own chrome-only members
    placed = SiteModel.from_assignment(list(model.pages.values()), assignment, Costs())
    for p in bare + stubs:
        assert placed.classify(p.schema, p.url_count, p.element_paths)[0] == assignment[p.url]


def test_two_kinds_of_chrome_only_pages_placed_in_one_class_are_two_classes():
    """QDoc's licence notices and its example pages without a link of their own: the pages with
    links place both near the examples, but each kind is nearest its own kind, and the two are
    apart by their element paths.  The kind the class held stays; the other is a class of its
    own, which the next regroup keeps, and classification follows."""
    content = ("html/body/div.content", "html/body/div.content/h2", "html/body/div.content/span.subtitle",
               "html/body/div.content/div.descr", "html/body/div.content/div.descr/a")
    example = SKELETON + content + ("html/body/div.content/p", "html/body/div.content/p.centerAlign",
                                    "html/body/div.content/p.centerAlign/img")
    licence = SKELETON + content + ("html/body/div.content/div.descr/pre.cpp.plain",)
    rich = [page(f"example{i}", example, "xref/a") for i in range(6)]
    bare_examples = [page(f"bare-example{i}", example) for i in range(3)]
    licences = [page(f"licence{i}", licence) for i in range(4)]
    model = model_of([rich + bare_examples, commands(6), indices(3), licences])
    reference = PathReference.of_pages([(p.element_paths, 0, True) for p in rich]
                                       + [(p.element_paths, 1, True) for p in commands(6)])
    assert reference.nearest(frozenset(licence)) == 0  # by the pages with links: an example
    assignment = regroup(model) or dict(model.page_class)
    assert {assignment[p.url] for p in bare_examples} == {0}
    (kept,) = {assignment[p.url] for p in licences}
    assert kept not in (0, 1, 2)
    regrouped = SiteModel.from_assignment(list(model.pages.values()), assignment, Costs())
    again = regroup(regrouped) or assignment
    assert all(again[u] == c for u, c in assignment.items())  # the licences' class stays as it is
    chrome = frozenset(CHROME)
    assert regrouped.classify(chrome, 2, frozenset(licence))[0] == kept
    assert regrouped.classify(chrome, 2, frozenset(example))[0] == 0


def test_a_kind_of_chrome_only_pages_goes_as_one():
    """Single linkage at the placement's similarity: a chain of pages each like the next is one
    kind, a page like none of them another."""
    from structcrawl.core.placement import similar_groups

    base = ("html", "html/body")
    chain = [frozenset(base + tuple(f"html/body/p{j}" for j in range(i, i + 4))) for i in range(3)]
    other = frozenset(base + ("html/body/pre", "html/body/pre/span"))
    assert similar_groups(chain + [other]) == [[0, 1, 2], [3]]
    assert similar_groups([chain[0], chain[2]]) == [[0], [1]]  # the middle page made them one


def test_the_references_travel_in_a_document():
    ref = PathReference.of_pages([(frozenset(SECTION), 0, True), (frozenset(SECTION), 2, True),
                                  (frozenset(SECTION), 0, True), (frozenset(COMMAND), 1, False)])
    bare = PathReference.of_pages([(frozenset(SKELETON + ("html/body/div.msg/p",)), 3, True)])
    back, back_bare = from_document(to_document(ref, bare))
    assert back.sets == ref.sets and back.skeleton == ref.skeleton and back_bare.sets == bare.sets
    assert back.nearest(frozenset(SECTION)) == 0  # the class holding most pages of the set
    assert to_document(back, back_bare) == to_document(ref, bare)
    older = {"unplaced" if k == "bare" else k: v for k, v in to_document(ref, bare).items()}
    assert from_document(older)[1].sets == bare.sets  # a model written before the key was renamed


def test_class_tokens_tell_apart_pages_of_the_same_tags():
    """QDoc's licence pages: three tag paths beyond the skeleton, all on the overview pages;
    their class tokens are their own, and they stay with their kind."""
    overview = SKELETON + ("html/body/div.content/p", "html/body/div.content/h2", "html/body/div.content/ul/li")
    licence = SKELETON + ("html/body/div.content.licence/p", "html/body/div.content.licence/h2")
    plain = {p.replace(".content.licence", ".content") for p in licence}
    ref = PathReference.of_pages([(frozenset(overview), 0, True)] * 4 + [(frozenset(COMMAND), 1, True)] * 4)
    assert ref.nearest(frozenset(plain)) == 0  # by tags alone, an overview
    assert ref.nearest(frozenset(licence)) is None


def test_element_paths_carry_class_tokens_and_no_ids():
    from structcrawl.core.features import extract

    feats = extract(b'<html><body><div id="SQL-SELECT" class="refentry x12"><p>text</p>'
                    b'<ul><li><ul><li><a href="/a">a</a></li></ul></li></ul></div></body></html>',
                    "http://127.0.0.1/p.html")
    assert "html/body/div.*.refentry/p" in feats.element_paths
    assert "html/body/div.*.refentry/ul/li/a" in feats.element_paths  # nested runs folded, as tag paths
    assert "html/body/div/p" in feats.tag_paths and not any("#" in p for p in feats.element_paths)


def test_a_lagging_reference_waits_for_growth_and_follows_class_changes():
    """The crawl's predictions may use a reference built on fewer pages (it costs O(pages)); an
    exact answer, a new class or a merge builds it again."""
    model = model_of([sections(10), commands(10), indices(3)])
    built = model.reference()
    model._add_to(model.classes[0], sections(2, "late"))  # 25 pages: within REFERENCE_LAG of 23
    assert model.reference(lagging=True) is built
    exact = model.reference()
    assert exact is not built and sum(sum(c.values()) for c in exact.sets.values()) == 25  # the late pages too
    model._add_to(model.classes[1], commands(4, "more"))  # 29 pages: beyond the lag
    assert model.reference(lagging=True) is not exact
    lagging = model.reference(lagging=True)
    model._add_to(model.new_class(), sections(1, "alone"))
    assert model.reference(lagging=True) is not lagging
    lagging = model.reference(lagging=True)
    model.merge_classes(0, 1)
    merged = model.reference(lagging=True)
    assert merged is not lagging and {c for counts in merged.sets.values() for c in counts} == set(model.classes)


def test_a_page_whose_known_links_are_too_few_for_any_class_is_placed_by_its_elements():
    """A command page whose synopsis links nothing (Haddock's modules that only re-export others): its
    links are all known, but so few of its class's that it codes shorter as a class of its own -- "no
    class" by the link code alone.  Its element paths still show the template, and place it; a page
    with a link path the model never saw stays unclassed (a new type is what that looks like)."""
    def links(name):
        return tuple(f"{name}{i}/a" for i in range(8))

    model = model_of([sections(6, links=links("xref")), commands(6, links=("seealso/a", *links("opt"))),
                      [page(f"index{i}", INDEX, *links("letter")) for i in range(3)]])
    few = commands(1, "few", links=("seealso/a",))[0]
    assert model.classify(few.schema, few.url_count)[0] is None  # the link code alone
    assert model.classify(few.schema, few.url_count, few.element_paths)[0] == 1
    unknown = few.schema | {"never/a"}
    assert model.classify(unknown, few.url_count + 1, few.element_paths)[0] is None


def test_a_kind_joining_a_few_pages_with_links_keeps_its_class_id():
    """SQLite's API pages: most have no link of their own, a few do.  Placed with those few, the
    kind is the bulk of the class they make together, and the class keeps the kind's id: the few
    moved, not the many, and the stop rule, which counts the pages that changed class, sees few."""
    bare = [page(f"bare{i}", SECTION + ("html/body/div.sect1/p/em0",)) for i in range(6)]
    rich = sections(3)
    model = model_of([bare, rich, commands(6), indices(3)])
    assignment = regroup(model)
    assert {assignment[p.url] for p in bare + rich} == {0}
    assert sum(1 for u, c in assignment.items() if c != model.page_class[u]) == 3
    assert {assignment[p.url] for p in commands(6)} == {2}



def test_unseen_pages_alike_only_in_the_site_s_frame_are_two_kinds():
    """``UnseenGroups`` compares as the placement does: the site's frame is left out, so a notice and
    a figure page the model never saw, 0.6 alike by the frame they share, are two kinds; a second
    figure page joins the first."""
    from structcrawl.analysis.classify import UnseenGroups

    notice = frozenset(SKELETON + ("html/body/div.msg/p", "html/body/div.msg/p/em"))
    figures = [frozenset(SKELETON + ("html/body/div.fig/img", "html/body/div.fig/p", extra))
               for extra in ("html/body/div.fig/p/em", "html/body/div.fig/p/code")]
    framed = UnseenGroups(frozenset(SKELETON))
    assert [framed.group(p) for p in (notice, *figures)] == [1, 2, 2]
    frameless = UnseenGroups()  # the frame counted: the notice is 0.55 like the first figure page
    assert [frameless.group(p) for p in (notice, *figures)] == [1, 1, 1]
