"""Spider-trap rules (structcrawl.core.traps) on small hand-made link graphs."""

from __future__ import annotations

import pytest

from structcrawl.core.features import Link, PageFeatures
from structcrawl.core.traps import TrapDetector, url_shape

H = "http://h.example"
FRAME = frozenset({"html", "html/body", "html/body/ul", "html/body/ul/li", "html/body/ul/li/a"})


def page(url: str, *targets: str, tags: frozenset[str] = FRAME) -> PageFeatures:
    links = tuple(Link(H + t, f"/html/body/ul/li[{i + 1}]/a", "html/body/ul/li/a") for i, t in enumerate(targets))
    return PageFeatures(H + url, links, tags)


def test_url_shape():
    assert url_shape(H + "/s/0A1B2C3D4E/page") == "h.example/s/*/page"
    assert url_shape(H + "/book/15000.html") == "h.example/book/*"
    assert url_shape(H + "/grow?q=aaaa") == "h.example/grow?q"
    assert url_shape(H + "/search?page=2&q=x&page=3") == "h.example/search?page&q"
    assert url_shape(H + "/category/art") != url_shape(H + "/category/music")  # no digit: literal
    assert url_shape(H + "/") == "h.example/"


def test_session_ids_in_the_path_are_a_trap_after_n_pages():
    det = TrapDetector(pages=3)
    assert det.observe(page("/", "/s/A1/page")) is None
    found = []
    for i in range(1, 4):  # each session page links a fresh id, nobody links it again
        found.append(det.observe(page(f"/s/A{i}/page", f"/s/A{i + 1}/page")))
    assert found == [None, None, "h.example/s/*/page"]
    assert det.traps == ["h.example/s/*/page"]
    assert det.refuses(H + "/s/A4/page")  # found only on a trap page
    assert not det.refuses(H + "/s/A1/page")  # found on the home page
    assert not det.refuses(H + "/elsewhere")


def test_shapes_that_feed_each_other_are_refused_together():
    det = TrapDetector(pages=2)
    det.observe(page("/", "/s/1/page"))
    for i in range(1, 4):
        det.observe(page(f"/s/{i}/page", f"/s/{i + 1}/page", f"/s/{i}x/other"))
        det.observe(page(f"/s/{i}x/other", f"/s/{i}y/other", f"/s/{i}z/page"))
    assert set(det.traps) == {"h.example/s/*/page", "h.example/s/*/other"}
    assert det.refuses(H + "/s/3y/other") and det.refuses(H + "/s/3z/page")


def test_a_trap_url_also_linked_from_outside_is_fetched():
    det = TrapDetector(pages=2)
    det.observe(page("/", "/g?q=a"))
    det.observe(page("/g?q=a", "/g?q=aa"))
    det.observe(page("/g?q=aa", "/g?q=aaa"))
    assert det.traps == ["h.example/g?q"] and det.refuses(H + "/g?q=aaa")
    det.observe(page("/index", "/g?q=aaa"))
    assert not det.refuses(H + "/g?q=aaa")


def test_self_links_with_a_fresh_parameter_are_a_trap():
    det = TrapDetector(pages=3)
    det.observe(page("/", "/self?r=0"))
    for i in range(3):
        det.observe(page(f"/self?r={i}", f"/self?r={i + 1}", f"/self?r={i}"))
    assert det.traps == ["h.example/self?r"] and det.refuses(H + "/self?r=3")


def test_a_pager_is_no_trap():
    """Pages N-2..N+2 linked from page N (the demo's pager): each page is linked twice."""
    det = TrapDetector(pages=3)
    det.observe(page("/news/", "/news/?page=2", "/news/?page=3"))
    for n in range(2, 60):
        window = [f"/news/?page={p}" for p in range(max(2, n - 2), n + 3) if p != n]
        items = [f"/article/{n}-{k}" for k in range(5)]
        assert det.observe(page(f"/news/?page={n}", *window, *items)) is None
    assert det.traps == [] and not det.refuses(H + "/news/?page=62")


def test_related_links_that_are_linked_twice_are_no_trap():
    det = TrapDetector(pages=3)
    for i in range(20):  # every product links two fresh products and the same bestseller
        assert det.observe(page(f"/p/{i}", f"/p/{2 * i + 1}", f"/p/{2 * i + 2}", "/p/999")) is None
    assert not det.refuses(H + "/p/41")


def test_items_linked_once_from_an_index_are_no_trap():
    det = TrapDetector(pages=3)
    det.observe(page("/", *[f"/post/{i}" for i in range(50)]))
    for i in range(50):
        det.observe(page(f"/post/{i}", "/about"))
    assert det.traps == [] and not det.refuses(H + "/post/7")


def test_a_calendar_is_an_echo_chain():
    """Month N links months N+1 (fresh) and N-1: linked twice, but every month is the same page."""
    det = TrapDetector(pages=4)
    det.observe(page("/", "/cal?month=1"))
    found = [det.observe(page(f"/cal?month={m}", f"/cal?month={m + 1}", f"/cal?month={max(m - 1, 1)}"))
             for m in range(1, 7)]
    assert found == [None, None, None, None, "echo chain at http://h.example/cal?month=5", None]
    assert det.traps == [] and det.echo_chains == 1
    assert not det.refuses(H + "/cal?month=5")  # first found on month 4, depth 3
    assert det.refuses(H + "/cal?month=6")  # first found on month 5, the 4th echo in a row


def test_pages_listing_different_items_are_no_echoes():
    det = TrapDetector(pages=3)
    det.observe(page("/", "/cat?page=2"))
    for n in range(2, 30):
        det.observe(page(f"/cat?page={n}", f"/cat?page={n + 1}", f"/cat?page={n - 1}", f"/book/{n}"))
    assert det.echo_chains == 0 and not det.refuses(H + "/cat?page=31")


def test_an_echo_needs_the_same_tag_paths():
    det = TrapDetector(pages=2)
    det.observe(page("/", "/cal?m=1"))
    for m in range(1, 8):
        tags = FRAME | {f"html/body/p{m % 2}"}  # alternating templates: never an echo of its parent
        det.observe(page(f"/cal?m={m}", f"/cal?m={m + 1}", f"/cal?m={max(m - 1, 1)}", tags=tags))
    assert det.echo_chains == 0


def test_switched_off():
    det = TrapDetector(pages=0)
    for i in range(30):
        assert det.observe(page(f"/s/{i}/page", f"/s/{i + 1}/page")) is None
    assert not det.refuses(H + "/s/30/page")
    with pytest.raises(ValueError):
        TrapDetector(pages=-1)
