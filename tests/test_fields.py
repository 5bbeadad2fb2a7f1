"""Fields, records and extraction on small hand-written pages: the rules, and bad input and limits."""

from __future__ import annotations

import pytest
from parsel import Selector

from structcrawl.analysis.extract import Extractor
from structcrawl.analysis.records import CLASS_CHARS, PAGE_CHARS, analyse, analysed_texts


def page(main: str, title: str = "Shop") -> str:
    return (f"<html><head><title>{title}</title></head><body><nav id='menu'><a href='/'>Home</a>"
            f"<a href='/about'>About</a></nav><main id='content'>{main}</main>"
            "<footer><p class='copy'>(c) Shop</p></footer></body></html>")


def product(i: int, extra: str = "") -> str:
    return page(f"<h1>Product {i}</h1><table class='details'><tr><th>Price</th><td>{i}.99</td></tr>"
                f"<tr><th>Colour</th><td>colour {i % 7}</td></tr><tr><th>Made in</th><td>country {i}</td></tr>"
                f"</table><p class='note'>Free delivery</p>{extra}", title=f"Product {i}")


def listing(n: int, k: int) -> str:
    items = "".join(f"<li class='row row-{j}'><a href='/p/{j}'>Item {k}-{j}</a> by "
                    f"<span class='maker'>maker {j % 5}</span></li>" for j in range(n))
    return page(f"<h1>List {k}</h1><ul class='items'>{items}</ul>")


def document(data: dict[int, object]) -> dict:
    return {"classes": [{"id": cid, **d.document()} for cid, d in data.items()]}


def test_informative_paths_are_ranked_and_template_paths_left_out():
    data = analyse({1: [product(i) for i in range(10)]})[1]
    xpaths = {f.name: f for f in data.fields}
    assert not any("menu" in f.xpath or "footer" in f.xpath or "note" in f.xpath for f in data.fields)
    assert {"price", "colour", "made-in", "content-h1", "title"} <= set(xpaths)  # names from the page, not invented
    assert xpaths["price"].xpath == '//main[@id="content"]/table[@class="details"]/tr[1]/td'
    weights = [f.support * f.informativeness for f in data.fields]
    assert weights == sorted(weights, reverse=True)
    # 7 colours over 10 pages: less informative than the unique prices
    assert xpaths["colour"].informativeness < xpaths["price"].informativeness
    sel = Selector(text=product(42))
    assert sel.xpath(xpaths["price"].xpath + "/text()").get() == "42.99"


def test_a_field_on_few_pages_is_kept_and_its_constant_heading_is_not():
    pages = [product(i, "<div class='awards'><h2>Awards</h2><p>Prize " + str(i) + "</p></div>" if i < 3 else "")
             for i in range(12)]
    fields = {f.name: f for f in analyse({1: pages})[1].fields}
    assert "awards-p" in fields and fields["awards-p"].support == 0.25
    assert not any(f.xpath.endswith("/h2") for f in fields.values())


def test_chrome_with_rotating_content_shared_by_two_classes_is_template():
    def with_box(html: str, i: int) -> str:
        box = "".join(f"<li><a href='/b/{j}'>Best {j}</a></li>" for j in range((i * 3) % 10, (i * 3) % 10 + 4))
        return html.replace("<footer>", f"<aside class='box'><ol>{box}</ol></aside><footer>")

    data = analyse({1: [with_box(product(i), i) for i in range(10)],
                    2: [with_box(listing(5, k), k + 3) for k in range(10)]})
    for cid in (1, 2):
        assert not any("aside" in f.xpath for f in data[cid].fields)


def test_list_class_records_and_their_fields():
    data = analyse({1: [listing(3 + k, k) for k in range(6)], 2: [product(i) for i in range(6)]})
    records = data[1].records
    assert records is not None and data[2].records is None
    assert records.per_page == tuple(3 + k for k in range(6))
    names = [f.name for f in records.fields]
    assert "maker" in names and not any(f.xpath == "." for f in records.fields)  # " by " is a constant label
    out = Extractor(document(data)).extract(listing(4, 99), 1)
    assert [r["maker"] for r in out["records"]] == ["maker 0", "maker 1", "maker 2", "maker 3"]
    assert [r[names[0]] if names[0] != "maker" else r[names[1]] for r in out["records"]] == [
        f"Item 99-{j}" for j in range(4)]


def test_one_page_class_and_empty_pages_say_why():
    data = analyse({1: [product(1)], 2: ["", "   ", "<html></html>"], 3: []})
    assert data[1].fields == () and "one page" in data[1].note
    assert data[2].fields == () and data[2].records is None and "no text" in data[2].note
    assert "no page" in data[3].note
    out = Extractor(document(data)).extract("", 2)
    assert out == {"fields": {}, "records": None}


def test_extraction_of_pages_without_the_nodes_or_of_unknown_classes():
    data = analyse({1: [product(i) for i in range(5)]})
    extractor = Extractor(document(data))
    out = extractor.extract("<html><body><p>nothing</p></body></html>", 1)
    assert set(out["fields"]) == {f.name for f in data[1].fields}
    assert all(v is None or v == [] for v in out["fields"].values())
    assert extractor.extract(product(3), None) == {"fields": {}, "records": None}
    assert extractor.extract(product(3), 77) == {"fields": {}, "records": None}


def test_huge_list_gives_every_record():
    n = 100_000
    huge = listing(n, 0)
    assert len(huge) > PAGE_CHARS
    data = analyse({1: [listing(20, k) for k in range(3)] + [huge]})
    # the analysis reads the page's first PAGE_CHARS characters: the records of that prefix
    assert data[1].records is not None and 20 < max(data[1].records.per_page) < n
    records = Extractor(document(data)).extract(huge, 1)["records"]
    assert len(records) == n and records[-1]["maker"] == f"maker {(n - 1) % 5}"


def test_analysis_reads_a_bounded_share_of_huge_pages():
    huge = listing(PAGE_CHARS // 50, 0)
    mid = listing(PAGE_CHARS // 150, 1)
    small = listing(5, 99)
    assert len(huge) > PAGE_CHARS > len(mid) > PAGE_CHARS // 2
    texts = analysed_texts([huge] + [mid] * 20 + [small])
    assert texts[0] == huge[:PAGE_CHARS] and sum(map(len, texts)) <= CLASS_CHARS
    mids = (CLASS_CHARS - PAGE_CHARS) // len(mid)
    assert texts[1:] == [mid] * mids + [small]  # a page past the budget is left out, a later small one taken
    data = analyse({1: [huge] + [mid] * 20 + [small]})[1]
    assert data.pages == len(texts) and data.records is not None


def test_nested_lists_pick_one_level_and_count_it_exactly():
    def nested(k: int) -> str:
        groups = "".join(
            f"<li class='group'><h3>Group {k}-{g}</h3><ul class='members'>"
            + "".join(f"<li><a href='/m/{g}/{j}'>member {k}-{g}-{j}</a></li>" for j in range(g + 2))
            + "</ul></li>" for g in range(3))
        return page(f"<ul class='groups'>{groups}</ul>")

    data = analyse({1: [nested(k) for k in range(5)]})
    records = data[1].records
    assert records is not None
    sel = Selector(text=nested(9))
    out = Extractor(document(data)).extract(nested(9), 1)["records"]
    assert len(out) == len(sel.xpath(records.xpath)) in (3, 2 + 3 + 4)


def test_layout_tables_and_awkward_attributes():
    def layout(i: int) -> str:
        return ("<html><body><table><tr><td><table><tr><td class='nav'><a href='/'>Home</a></td></tr></table></td>"
                f"<td><table><tr><td class='x\"y'><b>Name {i}</b></td></tr><tr><td>{i * 3} units</td></tr>"
                "</table></td></tr></table></body></html>")

    data = analyse({1: [layout(i) for i in range(6)]})
    assert data[1].fields
    for f in data[1].fields:  # every XPath is valid XPath 1.0 for parsel, and finds its node
        assert Selector(text=layout(99)).xpath(f.xpath), f.xpath
    values = Extractor(document(data)).extract(layout(99), 1)["fields"].values()
    assert "Name 99" in values and "297 units" in values


def test_xhtml_with_an_xml_declaration_gives_the_xpaths_scrapy_evaluates():
    # parsel alone reads a text opening with an XML declaration as XML, every tag in XHTML's namespace;
    # Scrapy's HtmlResponse reads it as HTML: the model's XPaths must be the ones response.xpath runs
    # (the export of a DocBook XSL site's model failed on a namespaced path)
    from scrapy.http import HtmlResponse

    def xhtml(k: int) -> str:
        return ('<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n<html xmlns="http://www.w3.org/1999/xhtml">'
                + listing(3 + k, k).removeprefix("<html>"))

    data = analyse({1: [xhtml(k) for k in range(6)]})[1]
    assert data.records is not None and not any("{" in f.xpath for f in data.fields)
    response = HtmlResponse("http://shop.test/list", body=xhtml(9).encode(), encoding="utf-8")
    assert len(response.xpath(data.records.xpath)) == 12
    assert Extractor(document({1: data})).extract(xhtml(9), 1)["records"][0]["maker"] == "maker 0"


def test_a_tag_with_an_unbound_prefix_is_addressed_by_its_name():
    # word processors write <o:p>: libxml2 keeps the tag, and a step "o:p" fails to evaluate
    def office(i: int) -> str:
        rows = "".join(f"<o:p class='row'><a href='/p/{j}'>Part {i}-{j}</a> <i>size {j}</i></o:p>" for j in range(4))
        return page(f"<h1>Parts {i}</h1><div class='parts'>{rows}</div>")

    data = analyse({1: [office(i) for i in range(6)]})[1]
    assert data.records is not None and 'name()="o:p"' in data.records.xpath
    assert len(Selector(text=office(9)).xpath(data.records.xpath)) == 4
    for f in data.fields:
        Selector(text=office(9)).xpath(f.xpath)


@pytest.mark.parametrize("bad", ["\x00\x01binary", "<html><body>" + "<div>" * 2000 + "deep", "<<<>>>", "plain text"])
def test_broken_markup_gives_a_result_not_an_exception(bad):
    data = analyse({1: [bad, bad + " more"]})
    Extractor(document(data)).extract(bad, 1)


def test_striped_rows_are_one_list_and_rows_of_another_kind_are_not_records():
    """Rows told apart only by a zebra class (``altColor``/``rowColor``) are one record list; rows whose class
    says their kind through a per-page token (``memitem:<hash>`` vs ``memdesc:<hash>``, both on every record)
    are told apart by the token's stable prefix."""
    def striped(k: int) -> str:
        rows = "".join(f"<tr class='{('altColor', 'rowColor')[j % 2]}'><td class='colFirst'><a href='/c/{k}/{j}'>"
                       f"Class{k}x{j}</a></td><td class='colLast'>about class {k}-{j}</td></tr>" for j in range(4 + k))
        return page(f"<h1>Package {k}</h1><div class='block'>Package {k} does things.</div>"
                    f"<table class='summary'><tr><th>Class</th><th>Description</th></tr><tbody>{rows}</tbody></table>")

    def members(k: int) -> str:
        rows = "".join(f"<tr class='memitem:{k:x}{j:04x}ab'><td class='memItemLeft'>int</td><td class='memItemRight'>"
                       f"<a href='/m/{k}/{j}'>member{k}_{j}</a></td></tr><tr class='memdesc:{k:x}{j:04x}ab'>"
                       f"<td class='mdescLeft'></td><td class='mdescRight'>does {k}-{j} <a href='#d{j}'>More</a>"
                       "</td></tr>"
                       f"<tr class='separator:{k:x}{j:04x}ab'><td class='memSeparator' colspan='2'></td></tr>"
                       for j in range(3 + k))
        return page(f"<h1>Namespace {k}</h1><table class='memberdecls'><tr class='heading'><td colspan='2'><h2>"
                    f"Functions</h2></td></tr>{rows}</table>")

    data = analyse({1: [striped(k) for k in range(6)], 2: [members(k) for k in range(6)]})
    assert data[1].records is not None and data[1].records.per_page == tuple(4 + k for k in range(6))
    assert "altColor" not in data[1].records.xpath and "rowColor" not in data[1].records.xpath
    assert data[2].records is not None and data[2].records.per_page == tuple(3 + k for k in range(6))
    assert '" memitem:"' in data[2].records.xpath
    out = Extractor(document(data)).extract(members(20), 2)["records"]
    assert len(out) == 23 and "member20_22" in out[-1].values()


def test_an_entry_with_continuation_rows_is_one_record():
    """An index whose entry for a name defined in several places is a heading row (no link) and one row per
    place, rows told apart only by their first cell's class: one record per entry.  A list whose items
    start differently (an optional image) but each hold a link stays one record per item."""
    def index(k: int) -> str:
        rows = []
        for j in range(6 + k):
            name = f"name{k}x{j}"
            if j % 3 == 1:
                rows.append(f"<tr><td class='src'>{name}</td><td>&nbsp;</td></tr>")
                rows += [f"<tr><td class='alt'>{n} (Function)</td><td class='module'><a href='/m/{k}/{j}/{n}'>"
                         f"Mod{k}.{j}.{n}</a></td></tr>" for n in (1, 2)]
            else:
                rows.append(f"<tr><td class='src'>{name}</td><td class='module'><a href='/m/{k}/{j}'>Mod{k}.{j}</a>"
                            "</td></tr>")
        return page(f"<h1>Index {k}</h1><div id='index'><table>{''.join(rows)}</table></div>")

    def gallery(k: int) -> str:
        items = "".join((f"<li><img src='/i/{j}.png'/><a href='/g/{k}/{j}'>Picture {k}-{j}</a></li>" if j % 2 else
                         f"<li><a href='/g/{k}/{j}'>Picture {k}-{j}</a> (no image)</li>") for j in range(5 + k))
        return page(f"<h1>Gallery {k}</h1><ul class='pictures'>{items}</ul>")

    data = analyse({1: [index(k) for k in range(6)], 2: [gallery(k) for k in range(6)]})
    records = data[1].records
    assert records is not None and records.per_page == tuple(6 + k for k in range(6))
    assert records.xpath.endswith('/tr[*[1][self::td[@class="src"]]]')
    assert len(Selector(text=index(30)).xpath(records.xpath)) == 36
    assert data[2].records is not None and data[2].records.per_page == tuple(5 + k for k in range(6))


def test_the_harvest_reads_the_fields_off_the_features_tree_as_parsel_does():
    # the harvest parses a page once, for its features and its item's fields: a comment splitting a text
    # node must give what parsel's tree gives, and a tag renamed for the features leaves no tree to share
    from structcrawl.core.features import extract_with_tree

    def noted(i: int) -> str:
        return product(i, extra=f"<p class='stock'>{i}<!-- units -->left<!-- in stock --> today</p>")

    data = analyse({1: [noted(i) for i in range(6)]})
    extractor = Extractor(document(data))
    for i in (7, 8, 9):
        _features, tree = extract_with_tree(noted(i).encode(), f"http://shop.test/p/{i}")
        assert tree is not None
        assert extractor.extract_tree(tree, 1) == extractor.extract(noted(i), 1)
    assert extractor.extract(noted(9), 1)["fields"] != {}
    office = page("<o:p class='row'><a href='/p/1'>Part 1</a></o:p>")
    assert extract_with_tree(office.encode(), "http://shop.test/parts")[1] is None


def test_one_walk_finds_each_fields_nodes_as_its_xpath_does():
    """The paths the model writes for fields (from the root or an element with an id, child steps of a tag,
    an exact class and a position) are matched in one walk down the tree, any other by lxml; every field
    gets the nodes its XPath selects, in document order: repeated steps, a class on some siblings only, a
    comment among them, positions counted among the siblings of that tag and class, an id on one element
    or two (nested), relative record paths."""
    from hypothesis import given, settings
    from hypothesis import strategies as st
    from lxml import etree

    from structcrawl.analysis.extract import FieldSpec, _Walk

    tags, classes, ids = ["div", "p", "span"], [None, "a", "a/b", "a b"], [None, None, "x", "y"]

    @st.composite
    def trees(draw, depth=0):
        tag = draw(st.sampled_from(tags))
        cls, ident = draw(st.sampled_from(classes)), draw(st.sampled_from(ids))
        kids = draw(st.lists(trees(depth + 1), max_size=0 if depth >= 3 else 4))
        attrs = ("" if cls is None else f' class="{cls}"') + ("" if ident is None else f' id="{ident}"')
        return f"<{tag}{attrs}>t<!-- c -->{''.join(kids)}</{tag}>"

    steps = st.tuples(st.sampled_from(tags), st.sampled_from(classes + ['" or "1"="1']),
                      st.sampled_from([None, None, 1, 2]))
    starts = st.sampled_from(["/html/body/", "//div[@id=\"x\"]/", "//span[@id=\"y\"]/", "./", "//p/"])

    def spelled(path):
        return "/".join(t + ("" if c is None else f'[@class="{c}"]') + ("" if n is None else f"[{n}]")
                        for t, c, n in path)

    @settings(max_examples=300, deadline=None)
    @given(trees(), st.lists(st.tuples(starts, st.lists(steps, max_size=4)), min_size=1, max_size=6),
           st.booleans())
    def check(body, paths, relative):
        root = etree.fromstring(f"<html><body>{body}</body></html>", etree.HTMLParser())
        xpaths = [(start + spelled(p)).rstrip("/") or "." for start, p in paths] + ['//div[@id="x"]']
        fields = tuple(FieldSpec(str(i), x, True, etree.XPath(x)) for i, x in enumerate(xpaths))
        start = root.find("body") if relative else root
        assert _Walk(fields, relative).nodes(start) == [f.compiled(start) for f in fields]

    check()
