"""Page titles (core.features), kept as the samples' titles in the model, and class names from them."""

from __future__ import annotations

import pytest

from structcrawl.core.features import MAX_TITLE, extract
from structcrawl.report.names import class_names, shared_title_words

H = "http://h.test"


@pytest.mark.parametrize("body, title", [
    (b"<html><head><title>\n  Fiction   books \n</title></head><body><h1>No</h1></body></html>", "Fiction books"),
    (b"<html><body><h1>Dune <small>(1965)</small></h1><h1>Second</h1></body></html>", "Dune (1965)"),
    (b"<html><head><title> </title></head><body><h1>From the heading</h1></body></html>", "From the heading"),
    (b"<html><body><p>no title, no heading</p></body></html>", ""),
    (b"", ""),
])
def test_title_is_the_title_else_the_first_heading(body, title):
    assert extract(body, H + "/x").title == title


def test_a_long_title_is_cut_and_does_not_change_what_the_page_is():
    long = extract(b"<title>" + b"word " * 200 + b"</title><a href='/a'>a</a>", H + "/x")
    assert len(long.title) == MAX_TITLE
    other = extract(b"<title>another</title><a href='/a'>a</a>", H + "/x")
    assert long == other  # the title is for a person: the algorithms compare links and tag paths


def entry(cid, samples, titles, size=10):
    return {"id": cid, "size": size, "samples": [H + s for s in samples],
            "sample_titles": {H + s: t for s, t in zip(samples, titles) if t}, "url_pattern": None,
            "schema": [], "path_counts": {}, "fingerprint": []}


def test_shared_title_words_need_most_titles():
    titles = ["geos::geom::Point Class Reference", "geos::io::WKTReader Class Reference",
              "geos::geom::Polygon Class Reference", "geos::geom::LineString Class Reference",
              "geos::algorithm::Angle Class Reference"]
    assert shared_title_words(titles) == ["geos", "class", "reference"]  # "geom": 3 of 5 titles
    assert shared_title_words(["Search: dragons – Shop"] * 3 + ["Search: trains – Shop"] * 2) == ["search", "shop"]
    assert shared_title_words([]) == []


def test_names_from_titles_without_the_site_name_else_from_urls():
    site = "GEOS"
    classes = [
        entry(1, ["/classgeos_1_1A.html", "/classgeos_1_1B.html"],
              [f"{site}: geos::A Class Reference", f"{site}: geos::B Class Reference"]),
        entry(2, ["/a_8h.html", "/b_8h.html"], [f"{site}: a.h File Reference", f"{site}: b.h File Reference"]),
        entry(3, ["/namespacegeos_1_1io.html", "/namespacegeos_1_1geom.html"],
              [f"{site}: geos::io Namespace Reference", f"{site}: geos::geom Namespace Reference"]),
        # titles that share only what every class's titles have: named by its URLs
        entry(4, ["/category/x", "/category/y"], [f"{site}: x", f"{site}: y"]),
        # no titles at all (a model written before titles were kept): URL words as before
        entry(5, ["/book/1.html", "/book/2.html"], ["", ""]),
    ]
    names = class_names(classes)
    # "geos" and "reference" are in most classes' titles: they name nothing
    assert names == {1: "class", 2: "file", 3: "namespace", 4: "category", 5: "book"}


def test_classes_whose_titles_agree_are_told_apart_by_their_urls():
    classes = [
        entry(1, ["/news/1", "/news/2"], ["News – Shop", "News – Shop"]),
        entry(2, ["/archive/1", "/archive/2"], ["News – Shop", "News – Shop"]),
        entry(3, ["/book/1", "/book/2"], ["A – Shop", "B – Shop"]),
        entry(4, ["/author/1", "/author/2"], ["C – Shop", "D – Shop"]),
        entry(5, ["/review/1", "/review/2"], ["Review: E – Shop", "Review: F – Shop"]),
    ]
    names = class_names(classes)
    assert names == {1: "news", 2: "news · archive", 3: "book", 4: "author", 5: "review"}
