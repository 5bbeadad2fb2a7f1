"""Undoing a merge (``structcrawl.core.split``): a class that holds pages its own
merge veto would have kept apart gives them back, to the class they fit or a new one."""

from structcrawl.core.frontier import Frontier
from structcrawl.core.model import Costs, Page, SiteModel, site_chrome
from structcrawl.core.split import home, mixed_members, regroup, told_apart_members

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
    assignment = regroup(model)
    assert {assignment[f"members{i}"] for i in range(2)} == {1}
    assert {assignment[f"class{i}"] for i in range(8)} == {0}


def test_one_absorbed_page_is_no_evidence():
    model = model_of([class_pages(8) + members_pages(1)])
    assert told_apart_members(model, 0) is None
    assert regroup(model) is None


def test_an_optional_section_is_not_a_template_of_its_own():
    # three class pages with an extra "signals" section lack nothing the others have
    model = model_of([class_pages(5) + [page(f"sig{i}", "summary/a", "toc/a", "func/a", "signals/a")
                                        for i in range(3)]])
    assert told_apart_members(model, 0) is None


def test_a_split_off_group_joins_the_class_it_fits():
    model = model_of([class_pages(8) + members_pages(2), members_pages(5)[2:]])
    assignment = regroup(model)
    assert {assignment[f"members{i}"] for i in range(5)} == {1}


def test_the_frontier_keeps_what_a_split_class_s_paths_were_learnt_to_lead_to():
    frontier = Frontier("densest", 10)
    frontier.add_links(0, {"members-table/a": ["http://x/a", "http://x/b"]})
    frontier.collections[(0, "members-table/a")].tried = True
    frontier.record((0, "members-table/a"), [3])
    frontier.add_links(0, {"members-table/a": ["http://x/b", "http://x/c"]})
    frontier.split_class(0, 7, [{"members-table/a": ["http://x/c"]}])
    moved = frontier.collections[(7, "members-table/a")]
    assert moved.tried and moved.leads_to == {3: 1} and moved.urls == ["http://x/c"]
    assert frontier.collections[(0, "members-table/a")].pages == 1


def test_a_path_no_page_of_the_class_keeps_moves_whole_with_its_batches():
    # one page's 100,000 dead links: split off with its page, the collection must not
    # be copied (each copy would fetch ten dead links before it is found a trap)
    frontier = Frontier("densest", 10)
    frontier.add_links(0, {"dead/a": [f"http://x/{i}" for i in range(40)]})
    batch = frontier.pop(lambda c: 1)
    frontier.split_class(0, 7, [{"dead/a": [f"http://x/{i}" for i in range(40)]}])
    assert (0, "dead/a") not in frontier.collections
    frontier.record(batch.key, [], failures=len(batch.urls))
    frontier.record(frontier.pop(lambda c: 1).key, [], failures=10)
    assert frontier.collections[(7, "dead/a")].trap
    assert frontier.pop(lambda c: 1) is None


def test_a_group_missing_one_section_of_the_rest_stays():
    # two chapters with a "scope" heading and without the "see also" one: optional
    # sections of one template, not a template of their own
    chapters = [page(f"ch{i}", "body/a", "toc/a", "see-also/a") for i in range(8)]
    scoped = [page(f"sc{i}", "body/a", "toc/a", "scope/a") for i in range(2)]
    model = model_of([chapters + scoped])
    assert told_apart_members(model, 0) is None


def shaped(url, tags, *paths):
    return Page(url, frozenset(CHROME + paths), len(paths) + 2, frozenset(tags))


OVERVIEW_TAGS = ("body/div/p", "body/div/h2", "body/div/ul/li", "body/div/toc")
MEMBERS_TAGS = ("body/div/table/tr/td", "body/div/table/tr/td/b", "body/div/p")


def test_a_class_mixing_two_templates_by_presence_splits_in_two():
    # a loose class grew one page at a time: overview pages (text links, a contents
    # box, sometimes a list) and "all members" pages (a member table), in no order;
    # neither side has a section the other *never* shows (a few overviews link
    # from a member-like table too), yet two classes code the pages far shorter
    overviews = [shaped(f"ov{i}", OVERVIEW_TAGS, "descr/a", "toc/a", *(("list/a",) if i % 2 else ()))
                 for i in range(12)]
    overviews[0] = shaped("ov0", OVERVIEW_TAGS, "descr/a", "toc/a", "table/a")
    members = [shaped(f"mem{i}", MEMBERS_TAGS, "table/a", "p/a") for i in range(20)]
    model = model_of([overviews + members])
    assert told_apart_members(model, 0) is None
    assignment = regroup(model)
    assert len({assignment[p.url] for p in overviews}) == 1
    assert len({assignment[p.url] for p in members}) == 1
    assert assignment["ov1"] != assignment["mem1"]


def test_an_optional_block_of_sections_does_not_split_a_class():
    # Javadoc class pages with and without fields: the field summary and field
    # details come together, on the same page skeleton (tag paths) as the rest
    tags = tuple(f"body/div/section{i}/p" for i in range(12))
    plain = [shaped(f"c{i}", tags, "summary/a", "methods/a", "detail/a") for i in range(12)]
    fields = [shaped(f"f{i}", tags + ("body/div/fields/table", "body/div/fields/h3"), "summary/a", "methods/a",
                     "detail/a", "field-summary/a", "field-detail/a") for i in range(10)]
    model = model_of([plain + fields])
    assert regroup(model) is None


def test_sides_sharing_more_content_than_they_differ_by_stay_one_class():
    # rustdoc's struct pages: the same impl and method blocks on every page; stable items show a
    # version and a source link, unstable ones a badge and a bare source link, each on its own
    # page skeleton — the two-part code prefers two classes, but they are one template
    content = tuple(f"impl{i}/a" for i in range(6))
    stable = [shaped(f"s{i}", ("body/main/span.since", "body/main/a.src", *OVERVIEW_TAGS), *content, "since/a",
                     "since/src/a") for i in range(12)]
    unstable = [shaped(f"u{i}", ("body/main/div.stab", "body/main/a.bare", *MEMBERS_TAGS), *content, "stab/a",
                       "bare/src/a") for i in range(10)]
    modules = [page(f"m{i}", "items/a") for i in range(5)]
    functions = [page(f"f{i}", "decl/a") for i in range(5)]
    model = model_of([stable + unstable, modules, functions])  # the chrome: what most classes show
    assert regroup(model) is None


def test_a_page_judged_alone_joins_the_class_its_paths_now_belong_to():
    # a reference page arrived before its template's class had its optional
    # sections: a class of its own then; now every path it has is the class's
    refs = [page(f"ref{i}", "module/a", "exports/a", "types/a" if i % 2 else "funcs/a") for i in range(10)]
    early = page("calendar", "module/a", "exports/a", "types/a", "funcs/a")
    model = model_of([refs, [early]])
    assignment = regroup(model)
    assert assignment["calendar"] == 0


def test_a_page_of_a_type_of_its_own_stays_alone():
    refs = [page(f"ref{i}", "module/a", "exports/a") for i in range(10)]
    index = page("index", "apps/a", "apps/li/a")
    model = model_of([refs, [index]])
    assert regroup(model) is None


def test_a_group_never_goes_into_a_class_being_split_as_a_mixture():
    # the members pages fit class 1; when class 1 is itself split as a mixture at
    # this check, they get a class of their own instead of shuttling between the two
    model = model_of([class_pages(8) + members_pages(2), members_pages(5)[2:]])
    assert home(model, ["members0", "members1"], 0) == 1
    assert home(model, ["members0", "members1"], 0, exclude={1}) is None


def test_a_class_of_pages_without_links_is_left_alone():
    dead_ends = [Page(f"src{i}", frozenset(), 0, frozenset({"body/pre"})) for i in range(6)]
    assert regroup(model_of([dead_ends, class_pages(4)])) is None


def test_a_batch_out_while_its_collection_moved_there_and_back_is_recorded_once():
    frontier = Frontier("densest", 10)
    frontier.add_links(0, {"dead/a": [f"http://x/{i}" for i in range(40)]})
    batch = frontier.pop(lambda c: 1)
    frontier.split_class(0, 7, [{"dead/a": []}])  # the page left: the collection moved to 7
    frontier.merge_classes(0, 7)  # and came back with it
    assert not frontier.record(batch.key, [], failures=5)
    assert frontier.record((7, "dead/a"), [], failures=5)  # ten dead links: a trap
    assert frontier.collections[(0, "dead/a")].fetched == 10


def bare_pages(n, name="stub"):
    return [page(f"{name}{i}") for i in range(n)]  # the chrome and nothing else


def test_pages_without_a_link_of_their_own_leave_a_class_together():
    """Javadoc's "No usage of" pages carry the navigation only; placed one at a time they
    join the class whose template asks least.  Two of them leave it for a class of their own,
    and later ones join that class rather than found another."""
    indices = [page(f"index{i}", "letters/a") for i in range(4)]  # a third type: the chrome is nav and footer
    model = model_of([class_pages(8) + bare_pages(2), members_pages(4), indices])
    assignment = regroup(model)
    assert assignment["stub0"] == assignment["stub1"] not in (0, 1, 2)
    assert {assignment[f"class{i}"] for i in range(8)} == {0}
    # one page is no evidence
    assert regroup(model_of([class_pages(8) + bare_pages(1), members_pages(4), indices])) is None
    # a class of such pages exists: the strays go there
    model = model_of([class_pages(8) + bare_pages(2, "late"), members_pages(4), indices, bare_pages(3)])
    assignment = regroup(model)
    assert assignment["late0"] == assignment["late1"] == 3


def test_pages_with_links_of_their_own_leave_a_class_of_pages_without():
    """QDoc's overview pages without content links made a class of their own; two "all
    members" pages joined it (the class whose template asks least), and every members page
    would be classified there.  Pages sharing a section of their own leave it."""
    indices = [page(f"index{i}", "letters/a") for i in range(4)]
    model = model_of([bare_pages(8, "overview") + members_pages(2), class_pages(6), indices])
    assignment = regroup(model)
    assert assignment["members0"] == assignment["members1"] not in (0, 1, 2)
    assert {assignment[f"overview{i}"] for i in range(8)} == {0}
    # two pages with links of their own but no section in common: no evidence of a template
    odd = [page("odd0", "x/a"), page("odd1", "y/a")]
    assert regroup(model_of([bare_pages(8, "overview") + odd, class_pages(6), indices])) is None


def test_a_page_without_links_of_its_own_is_no_evidence_against_a_section():
    """Doxygen namespaces with a file page and a source listing without links among them:
    the listing takes the namespaces' sections to 16 of 18 pages, below 90 %, and the
    directory pages among them were not told apart; counted without it, they are."""
    namespaces = [page(f"ns{i}", "decls/a", "summary/a", "desc/a") for i in range(16)]
    directories = [page(f"dir{i}", "decls/a", "subdirs/a") for i in range(6)]
    odd = [page("file", "decls/a", "includes/a"), page("listing")]
    indices = [page(f"index{i}", "letters/a") for i in range(4)]
    model = model_of([namespaces + directories + odd, class_pages(6), indices])
    assert sorted(told_apart_members(model, 0)) == [f"dir{i}" for i in range(6)]


def test_a_mixture_is_not_split_where_the_sides_are_a_page_or_two_from_nested():
    # the rest shows the split-off side's two content sections on 40 % of its pages: below the
    # core share, so the sides are not nested today, but a page or two more makes them core,
    # refinement finds the sides nested and merges them back (erl_docgen's release notes, split
    # off the chapters at one check and merged again two pages later)
    def model_with(share):
        overviews = [shaped(f"ov{i}", OVERVIEW_TAGS, "descr/a", "toc/a", *(("list/a",) if i % 2 else ()))
                     for i in range(12)]
        overviews[0] = shaped("ov0", OVERVIEW_TAGS, "descr/a", "toc/a", "table/a")
        members = [shaped(f"mem{i}", MEMBERS_TAGS, "table/a", "p/a", *(("descr/a", "toc/a") if i < share * 20 else ()))
                   for i in range(20)]
        modules = [page(f"m{i}", "items/a") for i in range(5)]
        functions = [page(f"f{i}", "decl/a") for i in range(5)]
        return model_of([overviews + members, modules, functions])  # the chrome: what most classes show

    clear = model_with(0.0)
    assert sorted(mixed_members(clear, 0, site_chrome(clear))) == sorted(f"ov{i}" for i in range(12))
    near = model_with(0.4)
    assert mixed_members(near, 0, site_chrome(near)) is None



def test_a_mixture_is_not_split_by_one_optional_section_of_a_one_section_core():
    # DocBook section pages: prose cross-references on every page; external links, lists and
    # notes on the longer pages, together (the two-part code prefers two classes): one template
    # with an optional section, the short pages' core all the long pages' but one section
    long_tags = OVERVIEW_TAGS + ("body/div/table/tr/td", "body/div/pre")
    xref, ulink = "html/body/div.sect1/p/a.xref", "html/body/div.sect1/p/a.ulink"
    short = [shaped(f"s{i}", OVERVIEW_TAGS[:2], xref) for i in range(12)]
    long = [shaped(f"l{i}", long_tags, xref, ulink, *(("list/a", "table/a") if i < 5 else ()),
                   *(("note/a", "pre/a") if 4 <= i < 9 else ())) for i in range(12)]
    modules = [page(f"m{i}", "items/a") for i in range(5)]
    functions = [page(f"f{i}", "decl/a") for i in range(5)]
    model = model_of([short + long, modules, functions])  # the chrome: what most classes show
    assert mixed_members(model, 0, site_chrome(model)) is None
    # read off a few pages, a core of one section is no evidence: the mixture splits
    few = model_of([short[:6] + long[:6], modules, functions])
    assert mixed_members(few, 0, site_chrome(few)) is not None


def test_a_mixture_of_one_skeleton_is_split_where_the_sides_share_no_content_section():
    """odoc writes every page on one skeleton, a section per documented item
    (``div.odoc-spec/div.spec.KIND``): class-type pages list methods, module pages values,
    types or submodules, one or another.  The module side has no section on nearly every
    page, so the merge veto never fires, and the two tag-path fingerprints are the same —
    but refinement merges alike skeletons only where the classes share a content section,
    so the mixture split must not ask more (js_of_ocaml's API: class types and modules
    in one class, F* 0.53)."""
    skeleton = ("body/nav/a", "body/div/div/div/a", "body/div/div/div/code/span/a")

    def mixture(shared=()):
        kinds = (("value/a.anchor", "value/code/a"), ("value/a.anchor", "type/a.anchor"),
                 ("module/a.anchor", "module/code/a"))
        modules = [shaped(f"mod{i}", skeleton, *kinds[i % 3], *shared) for i in range(12)]
        class_types = [shaped(f"ct{i}", skeleton, "method/a.anchor", "method/code/a",
                              *(("inherit/a",) if i % 2 else ()), *shared) for i in range(12)]
        indices = [page(f"index{i}", "letters/a") for i in range(5)]
        functions = [page(f"f{i}", "decl/a") for i in range(5)]
        return model_of([modules + class_types, indices, functions])  # the chrome: what most classes show

    model = mixture()
    assert told_apart_members(model, 0, site_chrome(model)) is None
    split = mixed_members(model, 0, site_chrome(model))
    assert split is not None and sorted(split) == sorted(f"ct{i}" for i in range(12))
    # sides that share a content section on one skeleton are what refinement merges: kept
    both = mixture(shared=("summary/a",))
    assert mixed_members(both, 0, site_chrome(both)) is None
    # a side whose sections are each on a few of its pages has no template of its own to show
    # (SQLite's documents: one header, links in paragraphs, lists and tables in every combination)
    modules = [p for p in model.classes[0].members if p.startswith("mod")]
    loose = [shaped(f"x{i}", skeleton, f"p{i % 6}/a", f"p{(i + 1) % 6}/a") for i in range(12)]
    few = model_of([[model.pages[u] for u in modules] + loose,
                    [model.pages[u] for u in model.classes[1].members],
                    [model.pages[u] for u in model.classes[2].members]])
    assert mixed_members(few, 0, site_chrome(few)) is None


def test_a_lone_twin_joins_the_class_that_holds_its_schema():
    # the update placed one overview with the class pages while the model was young; two or
    # more pages with its very link sections are overviews: it goes to them, where classify
    # puts that schema, and nothing else moves
    overviews = [page(f"ov{i}", "descr/a", "toc/a") for i in range(4)]
    stray = page("stray", "descr/a", "toc/a")
    model = model_of([class_pages(8) + [stray], overviews, members_pages(4)])
    assignment = regroup(model)
    assert assignment is not None and assignment["stray"] == 1
    assert {u for u, c in assignment.items() if c != model.page_class[u]} == {"stray"}
    assert model.classify(stray.schema, stray.url_count)[0] == 1
    # one page of that schema on each side is no evidence of where it belongs
    model = model_of([class_pages(8) + [stray], overviews[:1] + [page("ov9", "descr/a")], members_pages(4)])
    assert regroup(model) is None
    # nor is a page whose links are all the chrome: it says nothing of its template
    bare = [page(f"bare{i}") for i in range(3)]
    model = model_of([class_pages(8) + [page("lone")], overviews, members_pages(4), bare])
    assert regroup(model) is None


def test_a_page_judged_alone_does_not_follow_a_stray_into_the_class_it_leaves():
    # an author page placed with the publishers took their sections below SECTION_SHARE, so
    # nothing told the home page (its own sections no evidence) apart from them; the regroup
    # that returns the author page to the authors must not send the home page there
    publishers = [page(f"pub{i}", "website/a", "imprints/a", "pub-books/a") for i in range(6)]
    authors = [page(f"author{i}", "author-books/a", "co-authors/a") for i in range(8)]
    stray = page("author8", "author-books/a", "co-authors/a")
    start = page("home", "categories/a", "cards/a", "news/a")
    model = model_of([publishers + [stray], authors, [start]])
    assert home(model, ["home"], 2) == 0
    assignment = regroup(model)
    assert assignment is not None and assignment["author8"] == 1 and assignment["home"] == 2


def test_a_page_judged_alone_still_joins_a_class_a_stray_leaves_when_it_fits_the_rest():
    refs = [page(f"ref{i}", "module/a", "exports/a", "types/a" if i % 2 else "funcs/a") for i in range(10)]
    authors = [page(f"author{i}", "author-books/a", "co-authors/a") for i in range(4)]
    stray = page("author4", "author-books/a", "co-authors/a")
    early = page("calendar", "module/a", "exports/a", "types/a", "funcs/a")
    model = model_of([refs + [stray], authors, [early]])
    assignment = regroup(model)
    assert assignment["author4"] == 1 and assignment["calendar"] == 0


def test_a_mixture_under_one_kind_s_wrapper_is_not_split():
    # makeinfo's sections: with function definitions or with a list of subsections, under the one
    # `div.section` that names the node's level (a chapter's is `div.chapter`): the two-part code
    # prefers two classes, but refinement folds them back (refine.kind_wrappers) and the crawl
    # would swing; the same mixture under a wrapper every page shows splits
    def mixture(wrapper, chapter_wrapper):
        def node(url, tags, *own, wrapper=wrapper):
            return shaped(url, tags, f"html/body/{wrapper}/div.header/p/a", *(f"html/body/{wrapper}/{p}" for p in own))
        defs = [node(f"def{i}", OVERVIEW_TAGS, "dl.def/dt/a", "dl.def/dd/p/a") for i in range(12)]
        tocs = [node(f"toc{i}", MEMBERS_TAGS, "ul.section-toc/li/a", "p/a") for i in range(10)]
        chapters = [node(f"ch{i}", OVERVIEW_TAGS, "ul.section-toc/li/a", wrapper=chapter_wrapper) for i in range(5)]
        others = [page(f"x{k}-{i}", f"own{k}/a") for k in range(2) for i in range(5)]
        return model_of([defs + tocs, chapters, others[:5], others[5:]])

    model = mixture("div.section", "div.chapter")
    assert mixed_members(model, 0, site_chrome(model)) is None
    model = mixture("div.contents", "div.contents")
    assert sorted(mixed_members(model, 0, site_chrome(model))) == [f"toc{i}" for i in range(10)]
