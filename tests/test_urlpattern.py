"""URL regular expressions per cluster (Vertex §IV-A)."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from structcrawl.analysis.urlpattern import generalize, matches, url_key, url_pattern


def check(urls: list[str], pattern: str) -> None:
    assert re.compile(pattern)
    for u in urls:
        assert matches(pattern, u), (pattern, u)


def test_book_pages():
    urls = ["https://shop.example/book/12.html", "https://shop.example/book/345.html",
            "https://shop.example/book/7.html"]
    p = url_pattern(urls)
    assert p == r"^/book/\d+\.html$"
    check(urls, p)
    assert matches(p, "http://shop.example/book/99999.html")
    assert not matches(p, "/book/12.htm")
    assert not matches(p, "/book/abc.html")
    assert not matches(p, "/book/12.html?x=1")
    assert not matches(p, "/category/fiction")


def test_category_pages_with_optional_page_parameter():
    urls = ["/category/fiction?page=2", "/category/poetry", "/category/travel?page=11",
            "/category/science-fiction"]
    p = url_pattern(urls)
    assert p == r"^/category/[^/?]+(?:\?page=\d+)?$"
    check(urls, p)
    assert matches(p, "/category/history?page=3")
    assert not matches(p, "/category/history?sort=asc")
    assert not matches(p, "/category/history/sub")
    assert not matches(p, "/book/1.html")


def test_news_slugs():
    urls = ["/news/2024/05/some-slug-12", "/news/2023/11/another-much-longer-story-345",
            "/news/2024/01/x-9"]
    p = url_pattern(urls)
    assert p == r"^/news/\d+/\d+/[^/?]+-\d+$"
    check(urls, p)
    assert matches(p, "/news/2025/12/brand-new-1")
    assert not matches(p, "/news/2025/12/no-number")
    assert not matches(p, "/news/2025/12")


def test_single_url_is_literal():
    p = url_pattern(["https://x.example/about-us.html"])
    assert p == r"^/about-us\.html$"
    assert matches(p, "/about-us.html") and not matches(p, "/about-us.htm")


def test_constant_segments_literal_and_words_kept_whole():
    p = url_pattern(["/p/fiction", "/p/fantasy"])
    assert p == r"^/p/[^/?]+$"  # not "f[^/?]+": a common first letter is not a prefix
    assert matches(p, "/p/poetry")
    p = url_pattern(["/shop/page2", "/shop/page17"])
    assert p == r"^/shop/page\d+$"
    p = url_pattern(["/v/2024", "/v/2023"])
    assert p == r"^/v/\d+$"  # "202" is not a prefix of a number


def test_file_names_the_generator_writes_in_every_directory_stay_words():
    # each application's front page is index.html, the general guides' users_guide.html: a name
    # written under two parents or more is the template's, and the pattern keeps it, so that the
    # pattern does not take every page of those directories
    urls = ["/lib/stdlib-4.2/doc/html/index.html", "/lib/kernel-8.5/doc/html/index.html",
            "/lib/ssl-10.8/doc/html/users_guide.html", "/lib/ssh-4.15/doc/html/users_guide.html"]
    p = url_pattern(urls)
    check(urls, p)
    assert matches(p, "/lib/mnesia-4.21/doc/html/index.html")
    assert not matches(p, "/lib/stdlib-4.2/doc/html/lists.html")
    # a name seen under one parent only is an entity's (a category's pages), as are numbers
    p = url_pattern(["/category/fiction/2", "/category/fiction/3", "/category/poetry/2", "/category/poetry/4"])
    assert matches(p, "/category/history/2")
    p = url_pattern(["/a/2023/x", "/b/2023/y", "/a/2024/y", "/b/2024/x"])
    assert matches(p, "/c/2025/x")
    # more names than MAX_ALTERNATIVES: a wildcard
    p = url_pattern([f"/{d}/{n}.html" for d in "ab" for n in ("one", "two", "three", "four")])
    assert matches(p, "/c/five.html")


def test_scheme_host_and_param_order_ignored():
    urls = ["https://a.example/s?q=x&page=1", "http://www.a.example/s?page=2&q=y"]
    p = url_pattern(urls)
    assert p == r"^/s\?page=\d+&q=[^&]+$"
    assert matches(p, "/s?q=z&page=5")
    assert url_key("https://a.example/s?q=x&page=1#frag") == "/s?page=1&q=x"
    assert url_key("https://a.example") == "/"
    assert url_key("relative/path") == "/relative/path"


def test_root_and_index():
    p = url_pattern(["https://a.example/", "https://a.example/index.html", "https://a.example"])
    assert p == r"^/(?:index\.html)?$"
    assert not matches(p, "/other.html")


def test_mixed_depths_alternation_and_fallback():
    urls = ["/c/books", "/c/books/fiction", "/c/music/rock"]
    p = url_pattern(urls)
    assert p == r"^(?:/c/books|/c/[^/?]+/[^/?]+)$"
    check(urls, p)
    deep = ["/docs/a", "/docs/a/b", "/docs/a/b/c", "/docs/x/y/z/w"]
    p = url_pattern(deep)  # 4 depths > 3 alternatives
    check(deep, p)
    assert matches(p, "/docs/q/r/s/t/u/v")
    assert not matches(p, "/blog/a")


def test_many_query_shapes_fall_back_to_optional_params():
    urls = ["/s?q=a", "/s?q=b&page=2", "/s?q=c&sort=asc", "/s?q=d&page=3&sort=desc",
            "/s?q=e&view=grid"]
    p = url_pattern(urls)
    check(urls, p)
    assert matches(p, "/s?view=grid&q=f&page=9")
    assert not matches(p, "/s?page=2")  # q is always present
    assert not matches(p, "/s?q=a&other=1")
    assert not matches(p, "/s")


def test_too_many_params_accept_any_query():
    urls = [f"/f?facet{i}=1" for i in range(12)]
    p = url_pattern(urls)
    check(urls, p)
    assert matches(p, "/f?anything=goes&x")
    assert not matches(p, "/g?facet1=1")


def test_params_without_value_and_empty_values():
    p = url_pattern(["/x?flag", "/x?flag=1"])
    assert p == r"^/x\?flag(?:=\d+)?$"
    p = url_pattern(["/x?q=", "/x?q=abc"])
    check(["/x?q=", "/x?q=abc"], p)
    assert url_pattern(["/x?a=1&&b=2"]) == r"^/x\?a=\d+&b=\d+$"


def test_regex_metacharacters_escaped():
    urls = ["/a+b/(1).html", "/a+b/(22).html"]
    p = url_pattern(urls)
    assert p == r"^/a\+b/\(\d+\)\.html$"
    check(urls, p)


def test_generalize():
    assert generalize(["12.html", "345.html"]) == r"\d+\.html"
    assert generalize(["a"]) == "a"
    assert generalize(["", "2"]) == "2?"
    assert generalize(["red-shoe-12", "blue-hat-34"]) == r"[^/?]+-\d+"
    assert generalize(["12-foo", "345-bar"]) == r"\d+-[^/?]+"
    assert generalize(["x", "y"], wildcard="[^&]+") == "[^&]+"
    with pytest.raises(ValueError):
        generalize([])


def test_errors_and_order_independence():
    with pytest.raises(ValueError):
        url_pattern([])
    urls = ["/category/fiction?page=2", "/category/poetry", "/book/1.html", "/news/2024/05/a-1"]
    shuffled = urls[:]
    random.Random(1).shuffle(shuffled)
    assert url_pattern(urls) == url_pattern(shuffled)
    assert url_pattern(iter(urls)) == url_pattern(urls)


segment = st.text(alphabet="abz019-._~%+()", min_size=0, max_size=8)
query_value = st.text(alphabet="ab019-._%+/?=", min_size=0, max_size=6)


@st.composite
def url(draw):
    path = "/" + "/".join(draw(st.lists(segment, max_size=4)))
    params = draw(st.lists(st.tuples(st.sampled_from(["q", "page", "id", "s", "x(y)"]), query_value),
                           max_size=3))
    return path + ("?" + "&".join(f"{k}={v}" for k, v in params) if params else "")


@settings(max_examples=400, deadline=None)
@given(st.lists(url(), min_size=1, max_size=8))
def test_pattern_matches_all_its_urls(urls):
    p = url_pattern(urls)
    for u in urls:
        assert matches(p, u), (p, u)
