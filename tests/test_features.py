"""Page features on hand-written HTML: exact XPaths, collection paths, URLs, encodings."""

from structcrawl.core.features import extract, list_containers, parse_html
from structcrawl.core.urls import normalize_url

PAGE = b"""<!DOCTYPE html>
<html><head><title>t</title></head>
<body>
  <div id="menu"><ul>
    <li><a href="/">Home</a></li>
    <li><a href="/books?page=2">Books</a></li>
  </ul></div>
  <div id="content" class="main col-12">
    <ul class="books">
      <li class="item item-17"><a href="book/17.html">B17</a></li>
      <li class="item item-18"><a href="book/18.html#reviews">B18</a></li>
      <li class="item item-19"><a href="/">Home again</a></li>
      <li class="item item-20"><a href="mailto:x@example.org">mail</a></li>
    </ul>
    <p><a href="javascript:void(0)">js</a><a href="tel:+123">tel</a><a href="data:text/html,x">d</a>
       <a href="">empty</a><a>no href</a><a href="ftp://files.example.org/x">ftp</a></p>
    <map name="m"><area href="/map/1" shape="rect"></map>
  </div>
</body></html>"""


def test_links_xpaths_and_collection_paths():
    f = extract(PAGE, "http://shop.test/dir/index.html")
    got = [(link.url, link.xpath, link.path) for link in f.links]
    assert got == [
        ("http://shop.test/", "/html/body/div[1]/ul/li[1]/a", "html/body/div#menu/ul/li/a"),
        ("http://shop.test/books?page=2", "/html/body/div[1]/ul/li[2]/a", "html/body/div#menu/ul/li/a"),
        ("http://shop.test/dir/book/17.html", "/html/body/div[2]/ul/li[1]/a",
         "html/body/div#content.col-*.main/ul.books/li.item.item-*/a"),
        ("http://shop.test/dir/book/18.html", "/html/body/div[2]/ul/li[2]/a",
         "html/body/div#content.col-*.main/ul.books/li.item.item-*/a"),
        ("http://shop.test/", "/html/body/div[2]/ul/li[3]/a",
         "html/body/div#content.col-*.main/ul.books/li.item.item-*/a"),
        ("http://shop.test/map/1", "/html/body/div[2]/map/area", "html/body/div#content.col-*.main/map/area"),
    ]
    assert f.schema == {
        "html/body/div#menu/ul/li/a",
        "html/body/div#content.col-*.main/ul.books/li.item.item-*/a",
        "html/body/div#content.col-*.main/map/area",
    }
    # collections: distinct URLs per path, document order
    assert f.collections["html/body/div#menu/ul/li/a"] == ("http://shop.test/", "http://shop.test/books?page=2")
    assert f.url_count == 2 + 3 + 1


def test_inbound_is_topmost_occurrence():
    f = extract(PAGE, "http://shop.test/dir/index.html")
    inbound = f.inbound()
    assert inbound["http://shop.test/"].xpath == "/html/body/div[1]/ul/li[1]/a"
    assert len(inbound) == 5


def test_xpaths_resolve_back_to_the_link_elements():
    f = extract(PAGE, "http://shop.test/")
    root = parse_html(PAGE)
    for link in f.links:
        (el,) = root.getroottree().xpath(link.xpath)
        assert el.tag in ("a", "area")
        # collection path is the XPath without positions, plus id/class
        bare = [step.split("#")[0].split(".")[0] for step in link.path.split("/")]
        assert [s.split("[")[0] for s in link.xpath.strip("/").split("/")] == bare


def test_tag_paths_are_a_set_without_text_or_positions():
    f = extract(PAGE, "http://shop.test/")
    assert "html/body/div/ul/li/a" in f.tag_paths
    assert "html/body/div/map/area" in f.tag_paths
    assert "html/head/title" in f.tag_paths
    assert not any("[" in p or "#" in p for p in f.tag_paths)


def test_session_ids_removed_case_insensitively():
    base = "http://shop.test/a/"
    assert normalize_url("x.php?PHPSESSID=abc&id=3", base) == "http://shop.test/a/x.php?id=3"
    assert normalize_url("x.php?id=3&sid=9&Cfid=1&CFTOKEN=2", base) == "http://shop.test/a/x.php?id=3"
    assert normalize_url("x.jsp;jsessionid=ABC123?p=1", base) == "http://shop.test/a/x.jsp?p=1"
    assert normalize_url("x.asp?ASPSESSIONIDQQGGQGPK=xyz&k=v", base) == "http://shop.test/a/x.asp?k=v"
    assert normalize_url("x?side=1", base) == "http://shop.test/a/x?side=1"  # not a session id


def test_url_normalisation():
    base = "http://shop.test/a/b.html"
    assert normalize_url("HTTP://Shop.TEST:80/x#frag") == "http://shop.test/x"
    assert normalize_url("https://shop.test:443") == "https://shop.test/"
    assert normalize_url("//other.test/x", base) == "http://other.test/x"
    assert normalize_url("../../../c", base) == "http://shop.test/c"
    assert normalize_url("http://shop.test/a/./b/../c") == "http://shop.test/a/c"
    assert normalize_url("  /x\n/y  ", base) == "http://shop.test/x/y"
    assert normalize_url("http://bücher.test/ä b") == "http://xn--bcher-kva.test/%C3%A4%20b"
    for bad in ("", "   ", "javascript:alert(1)", "mailto:a@b", "tel:1", "data:,x", "ftp://h/x", "file:///etc"):
        assert normalize_url(bad, base) is None


def test_base_href_is_honoured():
    html = b'<html><head><base href="http://cdn.test/root/"></head><body><a href="p.html">p</a></body></html>'
    assert [link.url for link in extract(html, "http://shop.test/x/y").links] == ["http://cdn.test/root/p.html"]
    rel = b'<html><head><base href="../up/"></head><body><a href="p.html">p</a></body></html>'
    assert [link.url for link in extract(rel, "http://shop.test/x/y/z").links] == ["http://shop.test/x/up/p.html"]


def test_broken_markup_still_gives_features():
    html = b"<html><body><div><ul><li><a href='/1'>one<li><a href='/2'>two</ul><p><b><a href='/3'>x</div>"
    f = extract(html, "http://shop.test/")
    assert [link.url for link in f.links] == ["http://shop.test/1", "http://shop.test/2", "http://shop.test/3"]
    # libxml2's recovery nests the second <li> inside the open <a>: positions follow the repaired tree
    assert f.links[0].xpath == "/html/body/div/ul/li/a"


def test_degenerate_documents():
    for body in (b"", b"   ", b"\x00\x00", b"<!-- only a comment -->"):
        f = extract(body, "http://shop.test/")
        assert f.links == () and f.schema == frozenset()
    nul = extract(b"<html><body><a href='/a'>a\x00</a>\x00<a href='/b'>b</a></body></html>", "http://shop.test/")
    assert [link.url for link in nul.links] == ["http://shop.test/a", "http://shop.test/b"]
    # libxml2 stops at depth 2048: what is above it still gives features, nothing crashes
    deep = b"<html><body><a href='/top'>t</a>" + b"<div>" * 5000 + b"<a href='/deep'>d</a>" + b"</div>" * 5000
    f = extract(deep, "http://shop.test/")
    assert [link.url for link in f.links] == ["http://shop.test/top"]
    assert max(p.count("/") for p in f.tag_paths) <= 2048


def test_encodings():
    text = '<html><head><meta charset="{cs}"></head><body><a href="/caf\u00e9">Caf\u00e9 \u00fc</a></body></html>'
    for cs in ("utf-8", "latin-1", "cp1252", "utf-16"):
        body = text.format(cs=cs).encode(cs)
        f = extract(body, "http://shop.test/")
        assert [link.url for link in f.links] == ["http://shop.test/caf%C3%A9"], cs
    # header charset wins over sniffing; BOM wins over everything
    latin = '<html><body><a href="/\u00e9t\u00e9">x</a></body></html>'.encode("latin-1")
    assert extract(latin, "http://shop.test/", "text/html; charset=iso-8859-1").links[0].url.endswith("/%C3%A9t%C3%A9")
    bom = '<html><head><meta charset="latin-1"></head><body><a href="/\u00e9">x</a></body></html>'.encode()
    bom = b"\xef\xbb\xbf" + bom
    assert extract(bom, "http://shop.test/").links[0].url == "http://shop.test/%C3%A9"
    assert extract('<a href="/str">s</a>', "http://shop.test/").links[0].url == "http://shop.test/str"
    # a <meta> naming UTF-16 on an ASCII-compatible page lies: UTF-8
    lie = '<html><head><meta charset="utf-16"></head><body><a href="/t\u00e9">t</a></body></html>'.encode()
    assert [link.url for link in extract(lie, "http://shop.test/", "text/html").links] == ["http://shop.test/t%C3%A9"]


def test_link_cap_bounds_work():
    html = ("<html><body>" + "".join(f"<a href='/p{i}'>x</a>" for i in range(50)) + "</body></html>").encode()
    f = extract(html, "http://shop.test/", max_links=10)
    assert len(f.links) == 10 and f.truncated


def test_ids_spelled_from_content_become_a_wildcard():
    html = (b'<html><body><div id="nav-path"><a href="/a">a</a></div>'
            b'<map id="geos::geom::Point_map" name="x"><area href="/b"></map>'
            b'<div id="section 2.1"><a href="/c">c</a></div><div id="main_col"><a href="/d">d</a></div></body></html>')
    f = extract(html, "http://t.test/")
    assert sorted(f.schema) == ["html/body/div#*/a", "html/body/div#main_col/a", "html/body/div#nav-path/a",
                                "html/body/map#*/area"]


def test_a_tag_name_holding_a_dot_does_not_read_as_a_class():
    """libxml2 reads ``<href="../up">`` as a tag; its "." would split the path step."""
    f = extract('<html><body><href="../up"><a href="/">x</a></body></html>', "http://s.test/p")
    (link,) = f.links
    step = link.path.split("/")[2]
    assert "." not in step, link.path
    assert link.xpath.split("/")[3].split("[")[0] == step


def test_the_lists_of_a_collection_are_its_repeated_elements_containers():
    """Rows repeat (``tr``), not the cells of a row nor the sections that hold one table each: two tables are
    two lists, and a table of two link columns two lists too (one per field), however many links a cell has."""
    two_columns = ["/html/body/table/tr[1]/td[1]/a", "/html/body/table/tr[1]/td[2]/a",
                   "/html/body/table/tr[2]/td[1]/a", "/html/body/table/tr[3]/td[2]/a[2]"]
    assert list_containers(two_columns) == ["/html/body/table|/tr/td[1]", "/html/body/table|/tr/td[2]"] * 2
    two_tables = ["/html/body/section[1]/table/tr[1]/td/a", "/html/body/section[1]/table/tr[2]/td/a",
                  "/html/body/section[1]/table/tr[3]/td/a", "/html/body/section[2]/table/tr[1]/td/a"]
    assert list_containers(two_tables) == ["/html/body/section[1]/table"] * 3 + ["/html/body/section[2]/table"]
    assert len(set(list_containers(["/html/body/p/a"]))) == 1


def test_a_void_element_the_parser_nests_content_in_is_no_step_of_a_path():
    # libxml2's HTML 4 parser nests what follows <wbr> (or <source>, <track>, <embed>) inside it, so a
    # link after a word break in a name would make a collection of its own (Javadoc 17, rustdoc)
    page = (b"<html><body><code>Foo<a href='/a'>A</a></code>"
            b"<code>Long<wbr>Name<a href='/b'>B</a><span>s</span></code></body></html>")
    f = extract(page, "http://t/")
    assert [link.path for link in f.links] == ["html/body/code/a", "html/body/code/a"]
    assert f.links[1].xpath == "/html/body/code[2]/wbr/a"  # the exact XPath stays parsel's
    (el,) = parse_html(page).getroottree().xpath(f.links[1].xpath)
    assert el.get("href") == "/b"
    assert "html/body/code/span" in f.tag_paths and "html/body/code/wbr" in f.tag_paths
    assert not any("wbr/" in p for p in f.tag_paths | f.element_paths)


def test_a_link_leaving_the_site_is_spelled_without_its_own_classes():
    """Javadoc marks a link to the JDK's pages ``a.external-link``: a method whose return type is the
    library's own and one whose return type is the JDK's fill one slot of the template, one section."""
    def signature(href: str, cls: str = "") -> bytes:
        attr = f' class="{cls}"' if cls else ""
        return (f'<html><body><div class="nav"><a class="home" href="/index.html">i</a></div>'
                f'<div class="sig"><span class="return-type"><a{attr} href="{href}">T</a></span></div>'
                f"</body></html>").encode()
    own = extract(signature("/lang3/Pair.html"), "http://lib.test:8000/lang3/A.html")
    jdk = extract(signature("https://docs.oracle.com/String.html", "external-link"),
                  "http://lib.test:8000/lang3/B.html")
    assert own.schema == jdk.schema == {"html/body/div.nav/a.home", "html/body/div.sig/span.return-type/a"}
    # the same host at another port or scheme is the site; a link within it keeps its classes
    same = extract(signature("https://lib.test/lang3/Pair.html", "external-link"), "http://lib.test:8000/lang3/C.html")
    assert "html/body/div.sig/span.return-type/a.external-link" in same.schema
    assert extract(signature("http://[::1]:9/x", "k"), "http://[::1]:8000/").links[1].path.endswith("a.k")


def test_a_frameset_s_frames_are_its_links_an_iframe_is_not():
    """A frames Javadoc starts at a ``<frameset>`` whose only ``<a>`` sits in ``<noframes>`` (dropped by
    libxml2): without its frames, a crawl seeded there models one page and ends."""
    f = extract(b'<html><frameset cols="20%,80%"><frameset rows="50%,50%"><frame src="overview-frame.html">'
                b'<frame src="allclasses-frame.html"></frameset><frame src="overview-summary.html">'
                b'<noframes><a href="overview-summary.html">no frames</a></noframes></frameset></html>',
                "http://docs.test/api/index.html")
    assert [(link.url, link.path) for link in f.links] == [
        ("http://docs.test/api/overview-frame.html", "html/frameset/frameset/frame"),
        ("http://docs.test/api/allclasses-frame.html", "html/frameset/frameset/frame"),
        ("http://docs.test/api/overview-summary.html", "html/frameset/frame"),
    ]
    page = extract(b'<html><body><iframe src="/widget"></iframe><a href="/next">next</a></body></html>',
                   "http://docs.test/")
    assert [link.url for link in page.links] == ["http://docs.test/next"]
