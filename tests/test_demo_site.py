"""The demo bookshop: determinism, class counts, routing, and a real-HTTP walk of the
default 3,000-page site that checks reachability, link integrity and the "hard
features" the structure crawler is meant to cope with."""

from __future__ import annotations

import csv
import http.client
import io
import re
import subprocess
import sys
import urllib.robotparser
from collections import Counter, defaultdict, deque
from urllib.parse import urljoin, urlsplit

import pytest
from lxml import html as lxml_html

from structcrawl.demo.server import start_in_thread
from structcrawl.demo.site import CLASSES, DemoSite

SIDEBAR_CLASSES = {"home", "category", "book", "author", "publisher", "news_article", "search"}
_VARYING = re.compile(r"[^\s\-_]*\d[^\s\-_]*")


@pytest.fixture(scope="module")
def site() -> DemoSite:
    return DemoSite()


# --------------------------------------------------------------------------- pure API


def test_classes_and_counts(site: DemoSite) -> None:
    assert site.classes == CLASSES
    assert len(CLASSES) == 11
    counts = Counter(cls for _, cls in site.truth())
    assert set(counts) == set(CLASSES)
    assert counts == Counter(site.class_counts())
    assert sum(counts.values()) == len(site)
    assert abs(len(site) - 3000) <= 150
    assert counts["home"] == 1 and counts["info"] == 4
    share = {c: counts[c] / len(site) for c in CLASSES}
    assert 0.45 <= share["book"] <= 0.55
    assert 0.14 <= share["review"] <= 0.20
    assert 0.08 <= share["author"] <= 0.12
    assert 0.06 <= share["news_article"] <= 0.10
    assert 0.03 <= share["category"] <= 0.07
    assert 0.025 <= share["search"] <= 0.055
    assert 0.01 <= share["publisher"] <= 0.03
    assert 0.01 <= share["archive"] <= 0.02
    assert 0.005 <= share["news_index"] <= 0.015
    urls = [u for u, _ in site.truth()]
    assert len(set(urls)) == len(urls)
    assert urls[0] == site.home == "/"


def test_small_site_has_every_class() -> None:
    small = DemoSite(pages=300)
    counts = Counter(cls for _, cls in small.truth())
    assert set(counts) == set(CLASSES)
    assert all(counts[c] >= 3 for c in CLASSES if c != "home")
    assert 250 <= len(small) <= 350


def test_determinism_and_seed() -> None:
    a, b = DemoSite(pages=3000, seed=0), DemoSite(pages=3000, seed=0)
    urls = [u for u, _ in a.truth()]
    assert urls == [u for u, _ in b.truth()]
    for u in urls[::37] + ["/b/3", "/nope", "/robots.txt", "/cart?add=2"]:
        assert a.render(u) == b.render(u)
        assert a.render(u) == a.render(u)
    c = DemoSite(pages=3000, seed=1)
    assert a.render("/book/1.html") != c.render("/book/1.html")
    assert a.render("/") != c.render("/")
    assert [u for u, _ in c.truth()] != urls


def test_truth_classify_agree(site: DemoSite) -> None:
    for url, cls in site.truth():
        assert site.classify(url) == cls, url


def test_routing_404_and_redirects(site: DemoSite) -> None:
    n_books = site.class_counts()["book"]
    for bad in (
        "/nope",
        "/book/0.html",
        f"/book/{n_books + 1}.html",
        "/book/abc.html",
        "/book/12",
        "/author/0",
        "/publisher/99999",
        "/review/-1",
        "/category/no-such-thing",
        "/category/fiction?page=999",
        "/category/fiction?page=0",
        "/category/fiction?page=x",
        "/search?q=no-such-tag",
        "/search",
        "/news/?page=9999",
        "/news/2024/05/whatever-999999",
        "/archive/1999-13",
        "/archive/3000-01",
        "/b/0",
        "/b/x",
        "/favicon.ico",
    ):
        status, headers, body = site.render(bad)
        assert status == 404, bad
        assert headers["Content-Type"].startswith("text/html") and body.startswith(b"<!DOCTYPE html>")
    assert site.render("/b/7")[:2] == (301, {"Content-Type": "text/html; charset=utf-8", "Location": "/book/7.html"})
    for noncanonical, canonical in (
        ("/category/fiction?page=1", "/category/fiction"),
        ("/news", "/news/"),
        ("/news/?page=1", "/news/"),
        ("/book/007.html", "/book/7.html"),
        ("/author/3?utm_source=x", "/author/3"),
        ("/?ref=1", "/"),
    ):
        status, headers, _ = site.render(noncanonical)
        assert (status, headers.get("Location")) == (301, canonical)
    article = next(u for u, c in site.truth() if c == "news_article")
    wrong = re.sub(r"/news/\d{4}/\d\d/[a-z-]+-", "/news/1999/01/wrong-slug-", article)
    assert site.render(wrong)[1].get("Location") == article
    tag_url = next(u for u, c in site.truth() if c == "search" and "&page=" in u)
    q, page = re.match(r"/search\?q=([a-z-]+)&page=(\d+)", tag_url).groups()
    assert site.render(f"/search?page={page}&q={q}")[1].get("Location") == tag_url
    status, headers, body = site.render("/robots.txt")
    assert status == 200 and headers["Content-Type"].startswith("text/plain")
    assert body == b"User-agent: *\nDisallow: /cart\n"
    assert site.render("/cart")[0] == 200 and site.render("/cart?add=5")[0] == 200
    assert site.classify("/cart") is None and "/cart" not in {u for u, _ in site.truth()}


def test_markup(site: DemoSite) -> None:
    status, headers, body = site.render("/book/12.html")
    assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
    text = body.decode("utf-8")
    assert text.startswith("<!DOCTYPE html>")
    assert '<meta charset="utf-8">' in text and "<title>" in text
    assert "<script>" in text and "<style>" in text and "&amp;" in text
    assert '<nav id="menu"><ul><li><a href="/">' in text and "<footer>" in text
    assert '<aside class="sidebar">' in text
    assert 'href="/cart?add=12"' in text and 'id="book-12"' in text


def test_variable_lists(site: DemoSite) -> None:
    author_books = [site.author_off[a + 1] - site.author_off[a] for a in range(site.n_authors)]
    assert min(author_books) == 0 and max(author_books) == 50
    reviews = [site.review_off[b + 1] - site.review_off[b] for b in range(site.n_books)]
    assert min(reviews) == 0 and max(reviews) == 12
    hits = [site.tag_off[t + 1] - site.tag_off[t] for t in range(site.n_tags)]
    assert min(hits) == 0 and max(hits) > 20
    cat_sizes = [site.cat_off[c + 1] - site.cat_off[c] for c in range(site.n_categories)]
    assert any(n % 20 for n in cat_sizes)  # a shorter last page
    months = [site.month_off[m + 1] - site.month_off[m] for m in range(site.n_months)]
    assert min(months) >= 0 and max(months) > 5


def test_write_truth(site: DemoSite) -> None:
    fh = io.StringIO()
    n = site.write_truth(fh)
    rows = list(csv.reader(io.StringIO(fh.getvalue())))
    assert rows[0] == ["url", "class"] and n == len(rows) - 1 == len(site)
    assert rows[1] == ["/", "home"]
    fh = io.StringIO()
    site.write_truth(fh, base_url="http://127.0.0.1:8000/")
    assert fh.getvalue().splitlines()[1] == "http://127.0.0.1:8000/,home"


def test_scales_to_100k_pages() -> None:
    big = DemoSite(pages=100_000, seed=3)
    counts = big.class_counts()
    assert abs(len(big) - 100_000) <= 5_000
    assert counts["book"] == 50_000 and counts["review"] == 17_000 and counts["author"] == 10_000
    firsts: dict[str, list[str]] = defaultdict(list)
    for url, cls in big.truth():
        if len(firsts[cls]) < 3:
            firsts[cls].append(url)
    firsts["book"].append("/book/50000.html")
    firsts["review"].append("/review/17000")
    firsts["author"].append("/author/10000")
    assert set(firsts) == set(CLASSES)
    for cls, urls in firsts.items():
        for url in urls:
            status, _, body = big.render(url)
            assert status == 200 and big.classify(url) == cls, url
            assert b"</html>" in body


def test_cli_write_truth(tmp_path) -> None:
    out = tmp_path / "truth.csv"
    proc = subprocess.run(
        [sys.executable, "-m", "structcrawl", "demo-site", "--write-truth", str(out), "--pages", "500"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    with open(out, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["url", "class"]
    assert len(rows) - 1 == len(DemoSite(500))
    assert f"wrote {len(rows) - 1} pages" in proc.stderr


# --------------------------------------------------------------------------- real HTTP walk


def _collection_paths(root) -> list[tuple[str, str]]:
    """(href, link-collection path) for every <a href>: tags with normalised #id/.class."""
    out = []
    for a in root.iter("a"):
        href = a.get("href")
        if href is None:
            continue
        steps = []
        node = a
        while node is not None:
            step = node.tag
            if node.get("id"):
                step += "#" + _VARYING.sub("*", node.get("id"))
            if node.get("class"):
                step += "." + ".".join(sorted({_VARYING.sub("*", t) for t in node.get("class").split()}))
            steps.append(step)
            node = node.getparent()
        out.append((href, "/".join(reversed(steps))))
    return out


class Walk:
    def __init__(self) -> None:
        self.pages: dict[str, dict] = {}  # 200 HTML pages: url -> info
        self.redirects: dict[str, str] = {}  # in-site url -> Location
        self.other: dict[str, int] = {}  # any other status
        self.disallowed: set[str] = set()
        self.offsite: set[str] = set()
        self.inbound: dict[str, set[str]] = defaultdict(set)  # target -> source pages
        self.log: list[tuple[str, str, int]] = []


@pytest.fixture(scope="module")
def walk(site: DemoSite) -> Walk:
    w = Walk()
    server, base = start_in_thread(site, access_log=lambda m, p, s: w.log.append((m, p, s)))
    netloc = urlsplit(base).netloc
    conn = http.client.HTTPConnection(netloc, timeout=10)

    def get(path_qs: str) -> tuple[int, dict, bytes]:
        conn.request("GET", path_qs)
        resp = conn.getresponse()
        body = resp.read()
        assert resp.getheader("Content-Length") == str(len(body))
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, body

    try:
        status, headers, body = get("/robots.txt")
        assert status == 200
        robots = urllib.robotparser.RobotFileParser()
        robots.parse(body.decode().splitlines())

        seen = {"/"}
        queue = deque(["/"])
        while queue:
            url = queue.popleft()
            status, headers, body = get(url)
            targets: list[str] = []
            if status in (301, 302, 303, 307, 308):
                loc = urljoin(base + url, headers["location"])
                assert urlsplit(loc).netloc == netloc, loc
                w.redirects[url] = _path_qs(loc)
                targets.append(_path_qs(loc))
            elif status == 200:
                assert headers["content-type"] == "text/html; charset=utf-8"
                root = lxml_html.fromstring(body)
                links = _collection_paths(root)
                w.pages[url] = {"paths": links, "body": body}
                for href, _path in links:
                    absolute = urljoin(base + url, href)
                    parts = urlsplit(absolute)
                    if parts.scheme not in ("http", "https"):
                        continue
                    if parts.netloc != netloc:
                        w.offsite.add(absolute)
                        continue
                    target = _path_qs(absolute)
                    if not robots.can_fetch("*", absolute):
                        w.disallowed.add(target)
                        continue
                    w.inbound[target].add(url)
                    targets.append(target)
            else:
                w.other[url] = status
            for t in targets:
                if t not in seen:
                    seen.add(t)
                    queue.append(t)
    finally:
        conn.close()
        server.shutdown()
        server.server_close()
    return w


def _path_qs(url: str) -> str:
    parts = urlsplit(url)
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def test_walk_reaches_exactly_the_truth(site: DemoSite, walk: Walk) -> None:
    truth = dict(site.truth())
    assert walk.other == {}  # no broken in-site link
    assert set(walk.pages) == set(truth)  # every reached page is in the truth, and vice versa
    for url in walk.pages:
        assert site.classify(url) == truth[url]


def test_walk_redirects_and_robots(site: DemoSite, walk: Walk) -> None:
    assert walk.redirects, "no redirecting links found"
    for src, dst in walk.redirects.items():
        assert src.startswith("/b/"), src  # only short links redirect: all other links are canonical
        assert dst in walk.pages and site.classify(dst) == "book"
        assert dst == f"/book/{src[3:]}.html"
    assert "/cart" in walk.disallowed and any(u.startswith("/cart?add=") for u in walk.disallowed)
    assert all(u.startswith("/cart") for u in walk.disallowed)
    assert walk.offsite
    for url in walk.offsite:
        host = urlsplit(url).hostname
        assert host and host.endswith(".example"), url
    assert "https://social.example/bookshop" in walk.offsite
    assert any(re.fullmatch(r"http://publisher-\d+\.example/", u) for u in walk.offsite)
    # the access log saw every fetch exactly once, with its status
    fetched = Counter(p for _, p, _ in walk.log)
    assert all(n == 1 for n in fetched.values())
    assert fetched.keys() == set(walk.pages) | set(walk.redirects) | {"/robots.txt"}
    assert all(m == "GET" for m, _, _ in walk.log)


def _schema(walk: Walk, url: str) -> set[str]:
    return {path for _, path in walk.pages[url]["paths"]}


def test_walk_frame_menu_footer_sidebar(site: DemoSite, walk: Walk) -> None:
    truth = dict(site.truth())
    menu = "html/body/nav#menu/ul/li/a"
    for url, page in walk.pages.items():
        schema = _schema(walk, url)
        menu_links = [h for h, p in page["paths"] if p == menu]
        assert len(menu_links) == 10, url
        assert {"html/body/footer/ul.links/li/a", "html/body/footer/p.follow/a"} <= schema
        has_sidebar = "html/body/div#page/aside.sidebar/ol.bestsellers/li/a" in schema
        assert has_sidebar == (truth[url] in SIDEBAR_CLASSES), url
    menu_targets = [h for h, p in walk.pages["/"]["paths"] if p == menu]
    assert {truth[t] for t in menu_targets} == {"home", "category", "news_index", "archive", "search", "info"}


def test_walk_author_vs_publisher(site: DemoSite, walk: Walk) -> None:
    truth = dict(site.truth())
    prof = "html/body/div#page/main#content/article#profile-*.profile"
    only = {
        "author": {f"{prof}/ul.co-authors/li/a"},
        "publisher": {f"{prof}/ul.imprints/li/a", f"{prof}/p.website/a"},
    }
    lists = {
        "author": f"{prof}/ul.author-books/li#book-*.item.item-*/a.title",
        "publisher": f"{prof}/ul.publisher-books/li#book-*.item.item-*/a.title",
    }
    schemas = {c: [_schema(walk, u) for u in walk.pages if truth[u] == c] for c in ("author", "publisher")}
    for cls, other in (("author", "publisher"), ("publisher", "author")):
        assert all(only[cls] <= s for s in schemas[cls])
        assert not any(only[cls] & s for s in schemas[other])
        assert not any(lists[cls] in s for s in schemas[other])
    assert all(lists["publisher"] in s for s in schemas["publisher"])
    with_books = sum(lists["author"] in s for s in schemas["author"])
    assert 0 < with_books < len(schemas["author"])  # some authors have no books
    photo = f"{prof}/div.photo/p.credit/a"
    n_photo = sum(photo in s for s in schemas["author"])
    assert 0.2 * len(schemas["author"]) < n_photo < 0.9 * len(schemas["author"])
    # same frame: the paths outside <main> are identical on both
    frame = {p for s in schemas["author"] + schemas["publisher"] for p in s if "main#content" not in p}
    assert all(frame == {p for p in s if "main#content" not in p}
               for s in schemas["author"][:20] + schemas["publisher"][:20])


def test_walk_optional_sections_and_numbered_ids(site: DemoSite, walk: Walk) -> None:
    truth = dict(site.truth())
    art = "html/body/div#page/main#content/article#book-*.book"
    books = [_schema(walk, u) for u in walk.pages if truth[u] == "book"]
    for optional in (
        f"{art}/div.awards/ul/li/a",
        f"{art}/section.reviews/ul/li#review-*.review.review-*/a",
        f"{art}/ul.tags/li/a",
        f"{art}/p.also-in/a",
    ):
        n = sum(optional in s for s in books)
        assert 0 < n < len(books), optional
    assert all(f"{art}/p.buy/a.add-to-cart" in s for s in books)
    news = [_schema(walk, u) for u in walk.pages if truth[u] == "news_article"]
    related = "html/body/div#page/main#content/article#post-*.news.news-*/div.related/ul/li/a"
    assert 0 < sum(related in s for s in news) < len(news)
    hits = "html/body/div#page/main#content/ol.results/li.hit.hit-*/a"
    searches = [_schema(walk, u) for u in walk.pages if truth[u] == "search"]
    assert 0 < sum(hits in s for s in searches) < len(searches)  # some searches find nothing
    body = walk.pages["/category/fiction"]["body"].decode()
    assert re.search(r'<li id="book-\d+" class="item item-\d+">', body)


def test_walk_deep_pages(site: DemoSite, walk: Walk) -> None:
    truth = dict(site.truth())
    # reviews are linked only from book and review pages
    for url, cls in truth.items():
        if cls == "review":
            assert {truth[s] for s in walk.inbound[url]} <= {"book", "review"}, url
    # older articles only from archive months; deep pager pages only from their own listing
    articles = [u for u, c in truth.items() if c == "news_article"]
    old = [u for u in articles if not any(truth[s] == "news_index" for s in walk.inbound[u])]
    assert old and all({truth[s] for s in walk.inbound[u]} == {"archive"} for u in old)
    deep = [u for u, c in truth.items() if c == "category" and re.search(r"page=([4-9]|\d\d)", u)]
    assert deep and all({truth[s] for s in walk.inbound[u]} == {"category"} for u in deep)


def test_server_head_keepalive_and_file_log(site: DemoSite) -> None:
    log = io.StringIO()
    server, base = start_in_thread(site, access_log=log)
    try:
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+", base)
        conn = http.client.HTTPConnection(urlsplit(base).netloc, timeout=10)
        conn.request("HEAD", "/book/1.html")
        resp = conn.getresponse()
        assert resp.status == 200 and resp.read() == b""
        assert int(resp.getheader("Content-Length")) == len(site.render("/book/1.html")[2])
        conn.request("GET", "/nope")  # same connection: kept alive
        resp = conn.getresponse()
        assert resp.status == 404 and resp.read().startswith(b"<!DOCTYPE html>")
        conn.request("GET", "/b/4")
        resp = conn.getresponse()
        resp.read()
        assert resp.status == 301 and resp.getheader("Location") == "/book/4.html"
        conn.close()
    finally:
        server.shutdown()
        server.server_close()
    assert log.getvalue().splitlines() == ["HEAD /book/1.html 200", "GET /nope 404", "GET /b/4 301"]
