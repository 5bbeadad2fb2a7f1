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


def test_a_file_name_word_in_two_directories_under_two_names_names_a_page_type():
    speller = PathSpeller()
    for url in ("http://s.test/core/qstring-members.html", "http://s.test/gui/qlabel-members.html",
                "http://s.test/core/qstring.html", "http://s.test/gui/qlabel.html"):
        speller.observe(["html/body/a"], url)
    assert speller.settle()
    assert speller.url_words == {"members"}  # "qstring": one directory only
    assert speller.url_features("http://s.test/net/qsocket-members.html") == {"url:members"}
    assert speller.url_features("http://s.test/net/qsocket.html") == frozenset()


def test_one_name_in_two_directories_is_an_entity_in_three_a_page_type():
    speller = PathSpeller()
    for url in ("http://s.test/linear/Matrix.html", "http://s.test/linear/class-use/Matrix.html"):
        speller.observe(["html/body/a"], url)
    speller.settle()
    assert "matrix" not in speller.url_words  # a class page and its usage page share a name, not a type
    for url in ("http://s.test/a/package-summary.html", "http://s.test/b/package-summary.html",
                "http://s.test/c/package-summary.html"):
        speller.observe(["html/body/a"], url)
    speller.settle()
    assert {"package", "summary"} <= speller.url_words


def test_a_page_without_links_gets_no_url_words():
    from structcrawl.core.model import SiteModel

    model = SiteModel()
    model.speller = PathSpeller(url_words=["source"])
    assert model.spelled({}, "http://s.test/a/source.html") == (frozenset(), 0)
    schema, _ = model.spelled({"html/body/a": ("http://s.test/",)}, "http://s.test/a/source.html")
    assert schema == {"html/body/a", "url:source"}


def two_layout_site(suffix: str):
    """Class pages in three directories, each linking to its member list: long lists set in a
    table, short ones in a plain list (every other class); the member lists' URLs end in ``suffix``."""
    base = "http://s.test/"
    names = {d: [f"q{d}{w}" for w in ("alpha", "beta", "gamma", "delta", "omega", "sigma")]
             for d in ("core", "gui", "net")}
    # the site's chrome: a dozen link collections on every page
    nav = "".join(f'<div class="nav-{k}"><a href="/">home</a></div>' for k in "abcdefghijkl")

    def class_page(d: str, n: str) -> str:
        others = "".join(f'<li><a href="/{d}/{m}.html">{m}</a></li>' for m in names[d] if m != n)
        return (f'<html><body>{nav}<ul class="see"><li><a href="/{d}/{n}{suffix}.html">members</a></li></ul>'
                f'<div class="descr"><ul>{others}</ul></div></body></html>')

    def members_page(d: str, n: str) -> str:
        links = "".join(f'<li class="fn"><a href="/{d}/{n}.html#f{k}">f{k}</a></li>' for k in range(6))
        body = (f'<table class="props"><tr><td><ul>{links}</ul></td></tr></table>'
                if names[d].index(n) % 2 else f'<ul>{links}</ul>')
        return f'<html><body>{nav}<div class="main">{body}</div></body></html>'

    index = "<html><body>" + nav + "<ul>" + "".join(
        f'<li><a href="/{d}/{n}.html">{n}</a></li>' for d in names for n in names[d]) + "</ul></body></html>"

    def fetch(url: str):
        if url == base:
            return url, index.encode()
        d, _, name = url[len(base):].partition("/")
        name = name.removesuffix(".html")
        if d not in names:
            return None
        if name in names[d]:
            return url, class_page(d, name).encode()
        if name.removesuffix(suffix) in names[d]:
            return url, members_page(d, name.removesuffix(suffix)).encode()
        return None

    return base, names, fetch


def test_two_layouts_whose_urls_name_one_type_are_one_class():
    from structcrawl.core.explorer import run_offline

    base, names, fetch = two_layout_site("-members")
    explorer = run_offline(fetch, base, stop="exhaust")
    model = explorer.model
    members = {model.page_class[f"{base}{d}/{n}-members.html"] for d in names for n in names[d]}
    assert len(members) == 1
    # the URL word is part of the type's description, and only of that type's
    assert model.speller.url_words == {"members"}
    assert model.classes[members.pop()].path_counts["url:members"] == 18
    assert not any("url:members" in c.path_counts for c in model.classes.values() if c.size and
                   model.page_class[f"{base}core/qcorealpha.html"] == c.id)
