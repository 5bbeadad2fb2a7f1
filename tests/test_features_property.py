"""Property-based tests: random and mutated HTML into page features and classification.

Whatever bytes come in, ``extract`` returns features without raising, and its
output keeps its invariants: every link's exact XPath resolves, on the parsed
tree, to the ``<a>``/``<area>`` element it came from (whose href gives the
link's URL); every collection path is the positions-free form of its XPath
with ``#id``/``.class`` decorations; every URL is a normalised http(s) URL; at
most ``max_links`` links.  Classification of such pages against a small model
never raises either.
"""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from structcrawl.core.features import extract, features_from_tree, parse_html
from structcrawl.core.urls import normalize_url

BASE = "http://site.test/dir/page.html"
TAGS = ["div", "ul", "li", "a", "p", "span", "table", "tr", "td", "nav", "section", "area", "map",
        "frameset", "frame", "b", "i", "form", "html", "body", "head", "base", "script", "style", "br", "img"]
HREFS = ["/", "x", "../up", "./same", "?q=1", "#frag", "//site.test/pr", "HTTP://SITE.TEST/Up",
         "javascript:void(0)", "mailto:a@b.test", "tel:1", "data:text/html,x", "ftp://f.test/",
         "file:///etc/passwd", " \t/ws \n", "/a&amp;b", "/caf\u00e9", "http://b\u00fccher.test/",
         "/x;jsessionid=1?PHPSESSID=2&a=1", "http://[::1", "", "%zz", "/\x00nul"]
ATTR_VALUES = st.sampled_from(["a", "b c", "item-12", "x_1 y", "", " ", "w-1/2", "a.b", "id#1", "\u00e9"])


@st.composite
def elements(draw, depth=0):
    tag = draw(st.sampled_from(TAGS))
    attrs = []
    if tag in ("a", "area", "base") and draw(st.booleans()):
        attrs.append(("href", draw(st.sampled_from(HREFS) | st.text(max_size=12))))
    if draw(st.booleans()):
        attrs.append(("id", draw(ATTR_VALUES)))
    if draw(st.booleans()):
        attrs.append(("class", draw(ATTR_VALUES)))
    attr_text = "".join(f' {k}="{v.replace(chr(34), "&quot;")}"' for k, v in attrs)
    children = []
    if depth < 3:
        children = draw(st.lists(elements(depth + 1), max_size=3))
    text = draw(st.sampled_from(["", "t", "&amp;", "&bogus;", "<", "\x00", "é"]))
    close = draw(st.sampled_from([f"</{tag}>", f"</{tag}>", "", "</div>"]))
    return f"<{tag}{attr_text}>{text}{''.join(children)}{close}"


documents = st.lists(elements(), min_size=0, max_size=3).map("".join)


def mutate(doc: bytes, data) -> bytes:
    """Delete, duplicate or overwrite random byte ranges."""
    for _ in range(data.draw(st.integers(0, 4))):
        if not doc:
            break
        i = data.draw(st.integers(0, len(doc) - 1))
        j = data.draw(st.integers(i, min(len(doc), i + 20)))
        op = data.draw(st.sampled_from(["cut", "dup", "junk"]))
        if op == "cut":
            doc = doc[:i] + doc[j:]
        elif op == "dup":
            doc = doc[:j] + doc[i:j] + doc[j:]
        else:
            doc = doc[:i] + data.draw(st.binary(max_size=8)) + doc[j:]
    return doc


_POSITIONS = re.compile(r"\[\d+\]")


def _tags_of_path(path: str) -> list[str]:
    tags = []
    for step in path.split("/"):
        tags.append(re.split(r"[#.]", step, maxsplit=1)[0])
    return tags


def check_invariants(body: bytes | str, ctype: str | None = None, max_links: int = 10_000) -> None:
    f = extract(body, BASE, ctype, max_links=max_links)
    assert len(f.links) <= max_links
    if not f.links:
        return
    root = parse_html(body, ctype)
    assert root is not None
    again = features_from_tree(root, BASE, max_links=max_links)  # the tree the XPaths are checked on
    assert again.links == f.links
    tree = root.getroottree()
    for link in f.links:
        assert normalize_url(link.url) == link.url
        assert link.url.startswith(("http://", "https://"))
        found = tree.xpath(link.xpath)
        assert len(found) == 1, (link.xpath, found)
        el = found[0]
        assert el.tag in ("a", "area")
        assert el.get("href") is not None
        # the collection path is the XPath without positions, steps decorated with #id/.class
        bare = _POSITIONS.sub("", link.xpath).lstrip("/")
        assert bare.split("/") == _tags_of_path(link.path), (link.xpath, link.path)
        assert link.path in f.schema
        assert link.url in f.collections[link.path]
    assert set(f.inbound()) == {link.url for link in f.links}


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents)
def test_random_html_keeps_the_invariants(doc):
    check_invariants(doc)
    check_invariants(doc.encode("utf-8"), "text/html; charset=utf-8")


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents, st.data(), st.sampled_from([None, "text/html", "text/html; charset=latin-1",
                                              "text/html; charset=utf-16", "text/html; charset=bogus"]))
def test_mutated_html_keeps_the_invariants(doc, data, ctype):
    body = mutate(("<html><body>" + doc + "</body></html>").encode("utf-8"), data)
    check_invariants(body, ctype)


def test_tags_that_are_not_xpath_names_are_renamed():
    for body in (b'<html><body><fb:like><a href="/">x</a></fb:like>', b'<html><body><d+iv><a href="/">x</a>',
                 b'<html><body><x*y class="k"><a href="/">x</a>'):
        check_invariants(body)
        (link,) = extract(body, BASE).links
        assert link.path.split("/")[2] in ("fb_like", "d_iv", "x_y.k")
    # a latin-1 byte read into a tag name: "¹" is a word character to Python, not an XPath NameChar
    body = b'<html><body><d\xb9v><a href="/">x</a>'
    check_invariants(body, "text/html; charset=latin-1")
    assert extract(body, BASE, "text/html; charset=latin-1").links[0].path.split("/")[2] == "d_v"


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=300))
def test_random_bytes_never_raise(body):
    check_invariants(body)


@settings(max_examples=100, deadline=None)
@given(documents, st.integers(0, 5))
def test_link_cap_holds(doc, cap):
    check_invariants(doc, max_links=cap)


def _explorer():
    from structcrawl.core.explorer import Explorer

    ex = Explorer("http://site.test/")
    batch = ex.next_batch()
    pages = [extract(f'<html><body><ul id="m"><li><a href="/{i}">x</a></li></ul>'
                     f'<div class="c c-{i}"><a href="/d/{i}">d</a></div></body></html>', f"http://site.test/{i}")
             for i in range(5)]
    ex.complete(batch, [pages[0]])
    while (batch := ex.next_batch()) is not None:
        ex.complete(batch, [p for p in pages if p.url in set(batch.urls)])
    return ex


EXPLORER = _explorer()


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents, st.data())
def test_classification_of_random_pages_never_raises(doc, data):
    body = mutate(doc.encode("utf-8"), data)
    page = extract(body, BASE)
    cls, cost = EXPLORER.classify(page)
    assert cls is None or cls in EXPLORER.model.classes
    assert cost >= 0
