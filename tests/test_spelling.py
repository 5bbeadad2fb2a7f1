"""Path spelling: ids made from the page's content dropped, template ids kept, nesting depth folded."""

from structcrawl.core.features import collapse_runs, extract
from structcrawl.core.spelling import PathSpeller


def page(heading_id: str) -> str:
    return (f'<html><body><div id="nav"><a href="/a">a</a></div>'
            f'<div id="{heading_id}" class="refentry"><a href="/x/{heading_id}">x</a></div></body></html>')


def test_an_id_made_from_a_heading_is_dropped_a_template_id_kept():
    speller = PathSpeller()
    pages = [extract(page(h), f"http://s.test/{h}.html") for h in ("SQL-SELECT", "SQL-INSERT", "SQL-UPDATE")]
    for f in pages:
        speller.observe(f.collections)
    speller.settle()
    spelled = [frozenset(speller.collections(f.collections)) for f in pages]
    # one schema for the three pages: #nav recurs, the heading ids never do
    assert spelled[0] == spelled[1] == spelled[2]
    assert "html/body/div#nav/a" in spelled[0]
    assert "html/body/div.refentry/a" in spelled[0]


def test_an_id_seen_once_is_not_yet_the_template():
    speller = PathSpeller()
    speller.observe(["html/body/div#main/a"])
    assert not speller.settle()
    assert speller.spell("html/body/div#main/a") == "html/body/div/a"
    speller.observe(["html/body/div#main/a"])  # a second page confirms it
    assert speller.spell("html/body/div#main/a") == "html/body/div/a"  # not before the next settle
    assert speller.settle()
    assert speller.spell("html/body/div#main/a") == "html/body/div#main/a"


def heading_page(*headings: str) -> list[str]:
    return ["html/body/div#nav/a"] + [f"html/body/div.main/h3#{h}/a" for h in headings]


def test_ids_from_headings_are_dropped_even_the_common_ones():
    # every page has "description"; the other headings are the page's own: the place
    # keeps coining values, so its ids are content, common or not
    speller = PathSpeller()
    for i in range(6):
        speller.observe(heading_page("description", f"topic{'abcdef'[i]}", f"usage{'abcdef'[i]}"))
    speller.settle()
    assert speller.spell("html/body/div.main/h3#description/a") == "html/body/div.main/h3/a"
    assert speller.spell("html/body/div#nav/a") == "html/body/div#nav/a"


def test_a_closed_set_of_ids_at_one_place_is_the_template():
    # two menus under the same tags, told apart only by their ids, on every page
    speller = PathSpeller()
    for _ in range(3):
        speller.observe(["html/body/div/ul#main-menu/li/a", "html/body/div/ul#side-menu/li/a"])
    speller.observe(["html/body/div/ul#main-menu/li/a", "html/body/div/ul#promo-once/li/a"])
    speller.settle()
    assert speller.spell("html/body/div/ul#main-menu/li/a") == "html/body/div/ul#main-menu/li/a"
    assert speller.spell("html/body/div/ul#side-menu/li/a") == "html/body/div/ul#side-menu/li/a"
    assert speller.spell("html/body/div/ul#promo-once/li/a") == "html/body/div/ul/li/a"


def test_a_place_whose_rare_values_are_rare_observations_is_closed():
    # a generator's section headings on most pages, and a doc comment's own heading on a few: most
    # distinct values are seen once, but nearly every observation is one of the template's
    speller = PathSpeller()
    for i in range(60):
        headings = ["defined-in", *(["method-summary"] if i % 4 else []), *(["constructors"] if i % 2 else []),
                    *([f"example{i}"] if i < 5 else [])]
        speller.observe(heading_page(*headings))
    speller.settle()
    assert speller.spell("html/body/div.main/h3#constructors/a") == "html/body/div.main/h3#constructors/a"
    assert speller.spell("html/body/div.main/h3#example0/a") == "html/body/div.main/h3/a"


def test_a_nested_list_is_one_path_whatever_its_depth():
    assert collapse_runs("html/body/ul.tree/li/ul/li/ul/li/a") == collapse_runs("html/body/ul.tree/li/ul/li/a")
    assert collapse_runs("html/body/div/div/div/p") == "html/body/div/p"
    assert collapse_runs("html/body/table/tr/td/a") == "html/body/table/tr/td/a"


def test_a_class_token_holding_a_slash_adds_no_step():
    f = extract('<html><body><ul class="w-1/2 </area"><li><a href="/p">p</a></li></ul></body></html>',
                "http://s.test/")
    (path,) = f.schema
    assert path.count("/") == 4, path


def test_respelling_the_frontier_keeps_what_each_collection_learnt():
    # two heading paths become one; the untried "all members" link stays untried even
    # though the page's link to itself was fetched long ago
    from structcrawl.core.frontier import Frontier

    frontier = Frontier("densest", 10)
    frontier.mark_issued(["http://x/class1"])
    frontier.add_links(0, {"h3#a/a": ["http://x/p"], "h3#b/a": ["http://x/q"],
                           "summary/a": ["http://x/class1", "http://x/class1-members"]})
    frontier.collections[(0, "h3#a/a")].tried = True
    frontier.record((0, "h3#a/a"), [2])
    frontier.respell([(0, {"h3/a": ["http://x/p", "http://x/q"],
                           "summary/a": ["http://x/class1", "http://x/class1-members"]})],
                     {(0, "h3#a/a"): {(0, "h3/a")}, (0, "h3#b/a"): {(0, "h3/a")},
                      (0, "summary/a"): {(0, "summary/a")}})
    merged = frontier.collections[(0, "h3/a")]
    assert merged.tried and merged.leads_to == {2: 1}
    summary = frontier.collections[(0, "summary/a")]
    assert not summary.tried and not summary.leads_to
    assert frontier.record((0, "h3#a/a"), [2]) is False  # a batch out under the old key
    assert merged.leads_to == {2: 2}
    assert frontier.pop(lambda c: 2).urls == ("http://x/class1-members",)


def test_a_crawl_keeps_one_class_for_pages_that_differ_only_by_their_headings():
    # reference pages with a common heading, one of two optional ones and one of their
    # own: the heading ids recur, yet the place keeps coining values — one template
    from structcrawl.core.explorer import run_offline

    words = [a + b for a in "bcdfghjk" for b in "aeiou"]
    base = "http://s.test/"

    def reference(i: int) -> str:
        headings = ["description", "exports" if i % 2 else "callbacks", f"topic-{words[i]}"]
        sections = "".join(f'<h3 id="{h}"><a href="/ref/{words[(i + 1) % 40]}.html">{h}</a></h3>'
                           for h in headings)
        return f'<html><body><div id="nav"><a href="/">home</a></div><div class="main">{sections}</div></body></html>'

    index = "<html><body><ul>" + "".join(f'<li><a href="/ref/{w}.html">{w}</a></li>' for w in words) + \
        "</ul></body></html>"

    def fetch(url: str):
        if url == base:
            return url, index.encode()
        name = url.rsplit("/", 1)[-1].removesuffix(".html")
        return (url, reference(words.index(name)).encode()) if name in words else None

    explorer = run_offline(fetch, base, stop="exhaust")
    classes = {explorer.model.page_class[base + f"ref/{w}.html"] for w in words}
    assert len(classes) == 1
    assert not any("h3#" in k for k in explorer.model.speller.kept)


MAIN = "html/body/div.main"
PLAIN = f"{MAIN}/ul/li.fn/a"
COLUMNS = f"{MAIN}/div.table/table/tr/td.col/ul/li.fn/a"


def test_a_list_laid_out_in_columns_on_long_pages_is_spelled_as_the_plain_list():
    # short member lists are a plain list, long ones the same list in the cells of a table
    speller = PathSpeller()
    for _ in range(2):
        speller.observe(["html/body/div.nav/a", PLAIN])
        speller.observe(["html/body/div.nav/a", COLUMNS])
    assert speller.settle()
    assert speller.spell(COLUMNS) == PLAIN
    assert speller.wrappers == {(MAIN, "div.table/table/tr/td.col")}
    # the model carries the wrappers: a speller built from them spells as this one
    assert PathSpeller(speller.kept, speller.wrappers).spell(COLUMNS) == PLAIN


def test_a_box_beside_the_plain_list_on_one_page_is_a_section_of_its_own():
    speller = PathSpeller()
    for _ in range(2):
        speller.observe([PLAIN])
        speller.observe([COLUMNS])
    speller.observe([PLAIN, COLUMNS])  # both forms on one page: not one list laid out two ways
    speller.settle()
    assert speller.spell(COLUMNS) == COLUMNS


def test_a_wrapper_needs_two_pages_of_each_form_and_a_whole_list_below_it():
    speller = PathSpeller()
    speller.observe([PLAIN])
    speller.observe([COLUMNS])
    speller.observe([PLAIN])
    speller.settle()
    assert speller.spell(COLUMNS) == COLUMNS  # the boxed form seen once
    # inline links of a paragraph in a box on one type and bare on another: no list, kept apart
    boxed, bare = f"{MAIN}/div.note/p/span.code/a", f"{MAIN}/p/span.code/a"
    speller = PathSpeller()
    for _ in range(3):
        speller.observe([boxed])
        speller.observe([bare])
    speller.settle()
    assert speller.spell(boxed) == boxed


TREE = "html/body/div.sidebar/ul"


def tree_page(current: str, parent: str | None) -> str:
    """A sidebar with the whole type tree, the current type and its open parent marked."""
    items = []
    for top in ("Array", "Hash", "IO"):
        children = [f"{top}{c}" for c in ("A", "B")]
        marks = " current open" if top == parent else " current" if top == current else ""
        inner = "".join(f'<li{" class=current" if c == current else ""}><a href="/{c}.html">{c}</a></li>'
                        for c in children)
        items.append(f'<li class="parent{marks}"><a href="/{top}.html">{top}</a><ul>{inner}</ul></li>')
    items += [f'<li{" class=current" if current == leaf else ""}><a href="/{leaf}.html">{leaf}</a></li>'
              for leaf in ("Nil", "Void")]
    return (f'<html><body><div class="sidebar"><ul>{"".join(items)}</ul></div>'
            f'<div class="main"><a href="/{current}/method.html">m</a></div></body></html>')


def test_the_current_item_of_a_navigation_tree_is_spelled_as_its_list():
    # a top-level type, a nested one and a leaf mark different items of one tree: one template
    pages = [extract(tree_page(c, p), f"http://s.test/{c}.html")
             for c, p in (("Array", None), ("HashA", "Hash"), ("IOB", "IO"), ("Nil", None), ("Hash", None))]
    speller = PathSpeller()
    for f in pages:
        speller.observe(f.collections, f.url)
    assert speller.settle()
    spelled = [frozenset(speller.collections(f.collections)) for f in pages]
    assert spelled[0] == spelled[1] == spelled[2] == spelled[3] == spelled[4]
    assert spelled[0] == {f"{TREE}/li/a", f"{TREE}/li.parent/a", f"{TREE}/li.parent/ul/li/a", "html/body/div.main/a"}
    # the model carries the markers: a speller built from them spells as this one
    again = PathSpeller(speller.kept, speller.wrappers, speller.markers)
    assert again.spell(f"{TREE}/li.current.open.parent/ul/li.current/a") \
        == speller.spell(f"{TREE}/li.current.open.parent/ul/li.current/a") in spelled[0]


def test_a_class_variant_is_a_marker_only_beside_its_twin_in_the_navigation_on_the_way_to_the_page():
    current, plain = f"{TREE}/li.current/a", f"{TREE}/li/a"
    deprecated, body = f"{MAIN}/ul.deprecated/li/a", f"{MAIN}/ul/li/a"

    def observe(speller, url, *paths, own=()):
        # the tree's links are the same on every page, a page's content links its own
        speller.observe({p: (url,) if p in own else ("http://s.test/a", "http://s.test/b") if p.startswith(TREE)
                         else (f"{url}/{p}",) for p in paths}, url)

    speller = PathSpeller()
    for i in range(4):
        # the current item beside the tree's other items, the link to the page itself
        observe(speller, f"http://s.test/{i}", current, plain, body, own=[current])
        # a list's decorated items beside its plain ones, not on the way to the page's own link
        observe(speller, f"http://s.test/d{i}", plain, deprecated, body)
    # a self link decorated beside a content list (Haddock's "#" links beside a signature's type links)
    for i in range(2):
        observe(speller, f"http://s.test/h{i}", plain, f"{MAIN}/p.src/a.selflink", f"{MAIN}/p.src/a",
                own=[f"{MAIN}/p.src/a.selflink"])
    assert speller.settle()
    assert speller.spell(current) == plain
    assert speller.spell(deprecated) == deprecated
    assert speller.spell(f"{MAIN}/p.src/a.selflink") == f"{MAIN}/p.src/a.selflink"
    # beside its twin on one page only: not yet evidence; beside on too few of the pages showing it: none
    speller = PathSpeller()
    observe(speller, "http://s.test/1", current, plain, own=[current])
    observe(speller, "http://s.test/2", plain)
    speller.settle()
    assert speller.spell(current) == current
    for i in range(3):
        observe(speller, f"http://s.test/c{i}", current, own=[current])
    speller.settle()
    assert speller.spell(current) == current


def test_a_crawl_keeps_one_class_for_pages_that_sit_at_different_places_of_the_tree():
    # every type page shows the whole type tree with its own place marked; a top-level type and a
    # nested one are one template
    from structcrawl.core.explorer import run_offline

    tops = ["Array", "Hash", "IO", "Set", "Time"]
    nested = {top: [f"{top}{c}" for c in "ABCD"] for top in tops}
    leaves = ["Nil", "Void", "Bool"]
    names = tops + [n for kids in nested.values() for n in kids] + leaves
    base = "http://s.test/"

    def type_page(current: str) -> str:
        items = []
        for top in tops:
            opened = current in nested[top]
            marks = " current open" if opened else " current" if top == current else ""
            inner = "".join(f'<li{" class=current" if c == current else ""}><a href="/{c}.html">{c}</a></li>'
                            for c in nested[top])
            items.append(f'<li class="parent{marks}"><a href="/{top}.html">{top}</a><ul>{inner}</ul></li>')
        items += [f'<li{" class=current" if leaf == current else ""}><a href="/{leaf}.html">{leaf}</a></li>'
                  for leaf in leaves]
        methods = "".join(f'<li><a href="/{current}/m{i}.html">m{i}</a></li>' for i in range(3))
        return (f'<html><body><div class="sidebar"><ul>{"".join(items)}</ul></div>'
                f'<div class="main"><h1>{current}</h1><ul class="methods">{methods}</ul></div></body></html>')

    def fetch(url: str):
        name = url[len(base):].removesuffix(".html")
        if url == base:
            return url, type_page("index").encode()
        return (url, type_page(name).encode()) if name in names else None

    explorer = run_offline(fetch, base, stop="exhaust")
    classes = {explorer.model.page_class[base + f"{n}.html"] for n in names}
    assert len(classes) == 1
    assert explorer.model.speller.markers
