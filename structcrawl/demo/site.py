"""A deterministic, template-generated demo bookshop with ground truth.

``DemoSite(pages, seed)`` describes a whole web site of about ``pages`` HTML pages
without writing any of them anywhere: a few compact index arrays are built at
start-up (which books belong to which author, category, publisher, tag …) and
every page is rendered on request by :meth:`DemoSite.render`.  The same
``(pages, seed)`` always gives byte-identical pages; another seed gives another
site.

Truth classes (:data:`CLASSES`) and URL scheme
-----------------------------------------------
==============  =====================================================  ==========
class           URLs                                                   share
==============  =====================================================  ==========
home            ``/``                                                  1 page
category        ``/category/SLUG``, ``/category/SLUG?page=N`` (N ≥ 2)   ~5 %
book            ``/book/ID.html``                                      ~50 %
author          ``/author/ID``                                         ~10 %
publisher       ``/publisher/ID``                                      ~2 %
review          ``/review/ID``                                         ~17 %
search          ``/search?q=TAG``, ``/search?q=TAG&page=N`` (N ≥ 2)     ~4 %
news_index      ``/news/``, ``/news/?page=N`` (N ≥ 2)                   ~1 %
news_article    ``/news/YYYY/MM/SLUG-ID``                              ~8 %
archive         ``/archive/YYYY-MM``                                   ~1.5 %
info            ``/about``, ``/help``, ``/terms``, ``/contact``        4 pages
==============  =====================================================  ==========

IDs are 1-based integers; category slugs and tags are ``[a-z-]+``.  Very small
``pages`` values are padded up to per-class minimums (a few pages of every class),
so the smallest site has about 90 pages.

What makes it hard (on purpose)
-------------------------------
* Every page has the same global menu ``<nav id="menu"><ul><li><a>`` whose
  entries lead to structurally different pages (home, four categories, news,
  the latest archive month, a popular-tag search, about, help), the same header
  (logo, ``/cart`` link) and the same ``<footer>`` (about/help/terms/contact,
  plus an off-site "follow us" link to ``https://social.example/bookshop``).
* Variable-length lists: an author has 0–50 books, a book 0–12 reviews and 0–3
  tags, a search page 0–20 hits, a category page 20 books with a shorter last
  page, an archive month 0..n articles.
* Optional sections that do not make a new class: a book's "awards" box (links
  to other books), its reviews list, its "also in" categories; an author's
  "photo" block (off-site photo-credit link); a news article's "related books"
  box.
* ``author`` and ``publisher`` share the whole frame, the sidebar and an
  ``<article class="profile" id="profile-N">`` container with a list of books,
  but the book list is ``ul.author-books`` vs ``ul.publisher-books``; only
  authors have ``ul.co-authors`` (links to other authors) and the optional photo
  credit; only publishers have ``ul.imprints`` (links to categories) and
  ``p.website`` (off-site ``http://publisher-N.example/``).
* A ``<aside class="sidebar">`` "bestsellers" box (links to books) on home,
  category, book, author, publisher, search and news_article pages (not on
  review, news_index, archive and info pages).
* Deep pages: category/search/news pages 4+ are only reachable by walking the
  pager (it shows at most two pages either side); articles older than the news
  index (5 per page) only via the archive month pages (chained by prev/next
  links); reviews only via their book page (and sibling reviews).
* Per-page numbered ids/classes (``<li id="book-123" class="item item-123">``,
  ``<article id="post-7" class="news news-7">``, ``<li class="hit hit-3">``) that
  a crawler must normalise, inline ``<style>`` and ``<script>``, entities.
* ``/robots.txt`` disallows ``/cart``.  Every page links to ``/cart`` and book
  pages to ``/cart?add=ID``; **``/cart`` answers 200** with a small cart page
  (any query), but it is not part of the truth: a polite crawler never fetches it.
* Redirects: ``/b/ID`` (used by news articles' "related books") answers ``301``
  with ``Location: /book/ID.html``.  Non-canonical spellings of existing pages
  (``?page=1``, reordered or extra query parameters, ``/news``, leading zeros,
  a wrong slug or date in an article URL) answer ``301`` to the canonical URL.
  The truth lists canonical final URLs only.
* Off-site links only to reserved ``.example`` hosts (publisher websites, photo
  credits, social) — never a real host.

Every truth page is reachable from ``/`` by ``<a href>`` links (and redirects),
and every in-site link target exists (200, or a 301 to a 200) except ``/cart``.
Anything else is a ``404`` with a small HTML body.

Nothing here imports Scrapy; the module is stdlib-only.
"""

from __future__ import annotations

import csv
import math
import random
import unicodedata
from array import array
from bisect import bisect_right
from functools import partial
from html import escape, unescape
from itertools import accumulate
from typing import Iterator, TextIO
from urllib.parse import parse_qsl

#: Truth class names, in the order :meth:`DemoSite.truth` lists them.
CLASSES: list[str] = [
    "home",
    "category",
    "book",
    "author",
    "publisher",
    "review",
    "search",
    "news_index",
    "news_article",
    "archive",
    "info",
]

BOOKS_PER_PAGE = 20
HITS_PER_PAGE = 20
NEWS_PER_PAGE = 5
MAX_AUTHOR_BOOKS = 50
MAX_PUBLISHER_LIST = 50
MAX_REVIEWS = 12
MAX_TAGS = 3
PAGER_WINDOW = 2
LATEST_MONTH = (2024, 5)
MENU_CATEGORIES = 4

HTML_TYPE = "text/html; charset=utf-8"
TEXT_TYPE = "text/plain; charset=utf-8"

ROBOTS_TXT = b"User-agent: *\nDisallow: /cart\n"

SITE_NAME = "Folio &amp; Quill Books"
SOCIAL_URL = "https://social.example/bookshop"

_M64 = (1 << 64) - 1

# --------------------------------------------------------------------------- words

_GENRES = (
    "fiction", "poetry", "history", "science", "biography", "travel", "cookery", "crime",
    "fantasy", "romance", "philosophy", "art", "music", "children", "horror", "classics",
    "drama", "economics", "politics", "religion", "nature", "sport", "humour", "comics",
)
_GENRE_MODIFIERS = (
    "modern", "classic", "illustrated", "young-adult", "rare", "translated", "popular",
    "academic", "pocket", "collected", "regional",
)
CATEGORY_SLUGS: tuple[str, ...] = _GENRES + tuple(f"{m}-{g}" for m in _GENRE_MODIFIERS for g in _GENRES)

_TAG_NOUNS = (
    "dragons", "seafaring", "detectives", "war", "love", "exile", "gardens", "trains",
    "winter", "islands", "ghosts", "robots", "cities", "family", "friendship", "magic",
    "mountains", "rivers", "empire", "revolution", "music", "food", "wine", "horses",
    "space", "time", "memory", "childhood", "courts", "spies", "letters", "maps",
    "kings", "saints", "machines", "forests", "deserts", "storms", "circus", "theatre",
    "painters", "poets", "science", "medicine", "money", "chess", "cats", "dogs",
    "birds", "whales", "bridges", "libraries", "schools", "villages", "harbours",
    "lighthouses", "islands-life", "pilgrims", "heists", "myths",
)
_TAG_ADJS = (
    "dark", "cosy", "epic", "gothic", "comic", "tragic", "quiet", "nordic", "victorian",
    "medieval", "urban", "rural", "secret", "lost", "forgotten", "golden", "wild",
    "gentle", "brutal", "hidden", "ancient", "future", "little", "grand", "strange",
    "silent", "bright", "bitter", "sweet", "restless", "northern", "southern",
    "eastern", "western", "royal", "humble", "burning", "frozen", "drowned", "floating",
    "clockwork", "paper", "iron", "glass", "silver", "scarlet", "green", "blue",
    "midnight", "summer", "autumn", "spring", "coastal", "alpine", "tropical", "lunar",
    "solar", "electric", "velvet", "hollow",
)
_ADJS = (
    "Silent", "Hidden", "Last", "Crimson", "Endless", "Broken", "Golden", "Secret",
    "Winter", "Distant", "Forgotten", "Burning", "Quiet", "Wandering", "Paper",
    "Glass", "Iron", "Little", "Northern", "Restless", "Velvet", "Drowned", "Bright",
    "Bitter", "Hollow", "Midnight", "Scarlet", "Salt", "Summer", "Wild",
)
_NOUNS = (
    "Harbour", "Garden", "River", "Mountain", "Library", "Lighthouse", "Orchard",
    "Kingdom", "Voyage", "Archive", "Promise", "Mirror", "Station", "Island", "Forest",
    "Letter", "Empire", "Clock", "Bridge", "Circus", "Compass", "Cathedral", "Desert",
    "Lantern", "Map", "Ocean", "Piano", "Storm", "Tower", "Village", "Winter", "Café",
)
_FIRST = (
    "Anna", "Émile", "Zoë", "Marcus", "Ingrid", "Tomás", "Aoife", "Kenji", "Lucía",
    "Olu", "Priya", "Sven", "Hélène", "Jakub", "Mei", "Rafael", "Siobhán", "Yusuf",
    "Clara", "Dmitri", "Fatima", "Henrik", "Isabel", "Joaquín", "Leila", "Mateo",
    "Nadia", "Oskar", "Paulina", "Quentin", "Rosa", "Samuel", "Thea", "Ugo",
)
_LAST = (
    "O'Neill", "Brontë", "Ruiz-Zafón", "Okafor", "Lindqvist", "Moreau", "Tanaka",
    "Kowalski", "Haddad", "Fernández", "MacLeod", "Nakamura", "Rossi", "Schmidt",
    "Dubois", "Novak", "Andersen", "García", "Müller", "Petrov", "Silva", "Walsh",
    "Yilmaz", "Zhang", "Abbott", "Bianchi", "Costa", "Devi", "Eriksen", "Fitzgerald",
    "Gomes", "Hughes", "Ivanova", "Jansen",
)
_PUB_WORDS = (
    "Lantern", "Harbour", "Quill", "Meridian", "Oak", "Heron", "Beacon", "Juniper",
    "Kestrel", "Marble", "Northgate", "Orchard", "Pelican", "Riverside", "Saltmarsh",
    "Thistle", "Vellum", "Willow", "Yarrow", "Zephyr",
)
_PUB_FORMS = ("{w} Press", "{l} &amp; Sons", "{w} House", "Éditions {l}", "{w} &amp; {w2}", "{l} Books")
_PRIZES = (
    "Golden Quill Prize", "Harbour Fiction Award", "Prix des Lecteurs", "Northern Lights Medal",
    "Kestrel Debut Award", "Orchard Poetry Prize",
)
_SENT = (
    "A {adj} tale of {tag} and {tag2}, told with wit &amp; warmth.",
    "Critics called it &ldquo;{adj2} and unforgettable&rdquo;.",
    "Set between the {noun} and the {noun2}, it follows a family over three generations.",
    "The author&rsquo;s {adj2} prose rewards slow reading.",
    "Includes maps, a glossary &amp; notes on {tag}.",
    "Nothing here is quite what it seems &mdash; least of all the {noun}.",
    "A book about {tag}, {tag2} and the long road home.",
    "First published in {year}; this edition has a new afterword.",
)
_NEWS_FORMS = (
    "{name} wins the {prize}",
    "Our {adj} picks for {monthname}",
    "Interview: {name} on {tag}",
    "Events this week: {tag} &amp; {tag2}",
    "Shop news: the {noun} reading room reopens",
    "Ten books about {tag}",
)
_MONTH_NAMES = (
    "January", "February", "March", "April", "May", "June", "July", "August",
    "September", "October", "November", "December",
)
_INFO = {
    "about": ("About us", "We are an independent bookshop &amp; caf&eacute; founded by readers, for readers."),
    "help": ("Help", "Questions about orders, delivery &amp; returns are answered here."),
    "terms": ("Terms &amp; conditions", "By using this site you agree to these terms &mdash; please read them."),
    "contact": ("Contact", "Write to us at <a href=\"mailto:shop@bookshop.example\">shop@bookshop.example</a>."),
}
INFO_PAGES: tuple[str, ...] = ("about", "help", "terms", "contact")

_CSS = (
    "body{font-family:Georgia,serif;margin:0;color:#222}"
    "#menu ul{display:flex;gap:1em;list-style:none;padding:.5em 1em;background:#f4efe6}"
    "#page{display:flex;gap:2em;padding:1em}#content{flex:3}.sidebar{flex:1}"
    ".item,.hit{margin:.3em 0}.price{color:#a33}.pager a,.pager span{margin:0 .2em}"
    "footer{border-top:1px solid #ccc;padding:1em;font-size:90%}"
)


def _mix(x: int) -> int:
    """splitmix64 finaliser: a cheap, well-spread 64-bit hash of an int."""
    x = (x + 0x9E3779B97F4A7C15) & _M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _M64
    return x ^ (x >> 31)


def _slugify(text: str) -> str:
    text = unescape(text).replace("&", " ").replace("'", "")
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()
    out = []
    word = []
    for ch in ascii_text:
        if "a" <= ch <= "z":
            word.append(ch)
        elif word:
            out.append("".join(word))
            word = []
    if word:
        out.append("".join(word))
    return "-".join(out[:8]) or "story"


def _tag_name(i: int) -> str:
    n = len(_TAG_NOUNS)
    if i < n:
        return _TAG_NOUNS[i]
    i -= n
    a = len(_TAG_ADJS)
    if i < a * n:
        return f"{_TAG_ADJS[i // n]}-{_TAG_NOUNS[i % n]}"
    i -= a * n
    return f"{_TAG_ADJS[(i // n) % a]}-{_TAG_ADJS[(i // (n * a)) % a]}-{_TAG_NOUNS[i % n]}"


def _cat_title(slug: str) -> str:
    return slug.replace("-", " ").title()


def _invert(keys, nkeys: int) -> tuple[array, array]:
    """Counting sort: for key k, its item indexes are items[off[k]:off[k+1]] (ascending)."""
    counts = [0] * (nkeys + 1)
    for k in keys:
        counts[k + 1] += 1
    off = array("i", accumulate(counts))
    pos = list(off[:-1])
    items = array("i", bytes(4 * len(keys)))
    for i, k in enumerate(keys):
        items[pos[k]] = i
        pos[k] += 1
    return off, items


def _invert_pairs(src_off: array, values: array, nkeys: int) -> tuple[array, array]:
    """Invert a one-to-many relation (src -> values[src_off[src]:src_off[src+1]])."""
    counts = [0] * (nkeys + 1)
    for v in values:
        counts[v + 1] += 1
    off = array("i", accumulate(counts))
    pos = list(off[:-1])
    items = array("i", bytes(4 * len(values)))
    for src in range(len(src_off) - 1):
        for j in range(src_off[src], src_off[src + 1]):
            v = values[j]
            items[pos[v]] = src
            pos[v] += 1
    return off, items


def _weighted_index(cum: list[float], r: float) -> int:
    return bisect_right(cum, r * cum[-1])


class DemoSite:
    """The demo bookshop: ``len(site)`` pages, rendered on request.

    ``render(path_qs)`` → ``(status, headers, body)``; ``truth()`` → ``(path_qs, class)``
    for every page; ``write_truth(fh, base_url="")`` writes the url,class CSV.
    """

    home = "/"
    classes = list(CLASSES)

    def __init__(self, pages: int = 3000, seed: int = 0) -> None:
        pages = max(1, int(pages))
        self.pages_requested = pages
        self.seed = int(seed)
        self._salt = _mix(_mix(self.seed & _M64) ^ 0x5EED ^ (self.seed >> 64 & _M64))
        self._build(pages)

    # ------------------------------------------------------------------ building

    def _build(self, n: int) -> None:
        rng = random.Random(f"structcrawl-demo/{self.seed}")
        self.n_books = nb = max(40, round(0.50 * n))
        self.n_reviews = nr = max(10, round(0.17 * n))
        self.n_authors = na = max(8, round(0.10 * n))
        self.n_articles = nn = max(10, round(0.08 * n))
        self.n_publishers = npub = max(3, round(0.02 * n))
        self.n_months = nm = max(3, round(0.015 * n))
        news_pages_target = max(2, round(0.01 * n))
        self.n_categories = ncat = max(MENU_CATEGORIES, min(len(CATEGORY_SLUGS), round(math.sqrt(n) / 4)))
        self.n_tags = ntag = max(6, round(0.015 * n))

        self.category_slugs = CATEGORY_SLUGS[:ncat]
        self._cat_index = {s: i for i, s in enumerate(self.category_slugs)}

        # --- books: author (0..50 each, some authors with none), publisher, categories, tags
        weights = [0.0 if rng.random() < 0.06 else rng.paretovariate(1.4) for _ in range(na)]
        weights[0] = max(weights[0], 1.0)
        cum = list(accumulate(weights))
        book_author = array("i", rng.choices(range(na), cum_weights=cum, k=nb))
        counts = [0] * na
        for a in book_author:
            counts[a] += 1
        if max(counts) > MAX_AUTHOR_BOOKS:
            room = [a for a in range(na) if weights[a] > 0 and counts[a] < MAX_AUTHOR_BOOKS]
            for b in range(nb):
                a = book_author[b]
                if counts[a] > MAX_AUTHOR_BOOKS:
                    while True:
                        j = rng.randrange(len(room))
                        c = room[j]
                        if counts[c] < MAX_AUTHOR_BOOKS:
                            break
                        room[j] = room[-1]
                        room.pop()
                    counts[a] -= 1
                    counts[c] += 1
                    book_author[b] = c
        self.book_author = book_author
        self.author_off, self.author_books = _invert(book_author, na)

        pweights = [rng.paretovariate(1.2) for _ in range(npub)]
        pcum = list(accumulate(pweights))
        order = list(range(nb))
        rng.shuffle(order)
        book_pub = array("i", rng.choices(range(npub), cum_weights=pcum, k=nb))
        for p in range(min(npub, nb)):  # every publisher has at least one book
            book_pub[order[p]] = p
        self.book_publisher = book_pub
        self.pub_off, self.pub_books = _invert(book_pub, npub)

        # categories: a primary one (breadcrumb) plus 0-2 more; all listed in each category
        ccum = list(accumulate(rng.uniform(0.5, 2.0) for _ in range(ncat)))
        cat_off = array("i", [0])
        cat_vals = array("i")
        for b in range(nb):
            prim = b % ncat if b < ncat else _weighted_index(ccum, rng.random())
            cat_vals.append(prim)
            extra = (rng.random() < 0.6) + (rng.random() < 0.3)
            seen = {prim}
            for _ in range(extra):
                c = _weighted_index(ccum, rng.random())
                if c not in seen:
                    seen.add(c)
                    cat_vals.append(c)
            cat_off.append(len(cat_vals))
        self.book_cat_off, self.book_cats = cat_off, cat_vals
        self.cat_off, self.cat_books = _invert_pairs(cat_off, cat_vals, ncat)

        # tags: Zipf-like popularity, ~8 % of the tags used by no book (their search
        # pages have 0 hits and are linked from news articles only)
        tw = [0.0 if (t > 0 and rng.random() < 0.08) else 1.0 / (t + 1) ** 0.8 for t in range(ntag)]
        self._tag_cum = tcum = list(accumulate(tw))
        tag_off = array("i", [0])
        tag_vals = array("i")
        kdist = (0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 3, 3, 3)
        for _b in range(nb):
            k = kdist[rng.randrange(20)]
            chosen: list[int] = []
            for _ in range(k * 2):
                if len(chosen) == k:
                    break
                t = _weighted_index(tcum, rng.random())
                if t not in chosen:
                    chosen.append(t)
            chosen.sort()
            tag_vals.extend(chosen)
            tag_off.append(len(tag_vals))
        self.book_tag_off, self.book_tags = tag_off, tag_vals
        self.tag_off, self.tag_books = _invert_pairs(tag_off, tag_vals, ntag)
        self.tag_names = [_tag_name(t) for t in range(ntag)]
        self._tag_index = {name: t for t, name in enumerate(self.tag_names)}
        self.popular_tag = max(range(ntag), key=lambda t: (self.tag_off[t + 1] - self.tag_off[t], -t))
        zero_tags = [t for t in range(ntag) if self.tag_off[t + 1] == self.tag_off[t]]

        # --- reviews: 0..12 per book, popular books get more; contiguous ids per book
        bw = [rng.paretovariate(1.1) for _ in range(nb)]
        bcum = list(accumulate(bw))
        rcount = [0] * nb
        placed = 0
        while placed < nr:
            b = _weighted_index(bcum, rng.random())
            if b < nb and rcount[b] < MAX_REVIEWS:
                rcount[b] += 1
                placed += 1
        self.review_off = array("i", accumulate([0] + rcount))
        self.bestsellers = sorted(range(nb), key=lambda b: (-rcount[b], b))[:30]

        # --- co-authors: 1..6 each; every author without books is someone's co-author
        co: list[list[int]] = []
        for a in range(na):
            k = (1, 1, 1, 2, 2, 3, 4, 6)[rng.randrange(8)]
            lst: list[int] = []
            for _ in range(k):
                c = rng.randrange(na)
                if c != a and c not in lst:
                    lst.append(c)
            if not lst:
                lst.append((a + 1) % na)
            co.append(lst)
        with_books = [a for a in range(na) if self.author_off[a + 1] > self.author_off[a]]
        for a in range(na):
            if self.author_off[a + 1] == self.author_off[a]:
                host = with_books[rng.randrange(len(with_books))]
                if a not in co[host]:
                    co[host].append(a)
        co_off = array("i", [0])
        co_vals = array("i")
        for lst in co:
            co_vals.extend(lst)
            co_off.append(len(co_vals))
        self.co_off, self.co_vals = co_off, co_vals

        # --- news: articles sorted by month (id order = date order; newest is last)
        months = sorted(rng.randrange(nm) for _ in range(nn))
        months[-1] = nm - 1  # the newest article is in the latest month
        self.article_month = array("i", months)
        self.month_off, _ = _invert(self.article_month, nm)
        recent = min(nn, NEWS_PER_PAGE * news_pages_target - 2)
        self.n_recent = recent
        self.n_news_pages = max(1, -(-recent // NEWS_PER_PAGE))
        # zero-hit tags are forced onto news articles as topics
        self._forced_topics: dict[int, list[int]] = {}
        for j, t in enumerate(zero_tags):
            self._forced_topics.setdefault((j * 7919 + 13) % nn, []).append(t)

        # --- page counts
        self.cat_pages = [max(1, -(-(self.cat_off[c + 1] - self.cat_off[c]) // BOOKS_PER_PAGE)) for c in range(ncat)]
        self.tag_pages = [max(1, -(-(self.tag_off[t + 1] - self.tag_off[t]) // HITS_PER_PAGE)) for t in range(ntag)]
        self._counts = {
            "home": 1,
            "category": sum(self.cat_pages),
            "book": nb,
            "author": na,
            "publisher": npub,
            "review": nr,
            "search": sum(self.tag_pages),
            "news_index": self.n_news_pages,
            "news_article": nn,
            "archive": nm,
            "info": len(INFO_PAGES),
        }
        self._len = sum(self._counts.values())
        self._frame_top = self._build_frame_top()
        self._footer = self._build_footer()

    # ------------------------------------------------------------------ truth

    def __len__(self) -> int:
        return self._len

    def class_counts(self) -> dict[str, int]:
        """Number of truth pages per class, in :data:`CLASSES` order."""
        return dict(self._counts)

    def truth(self) -> Iterator[tuple[str, str]]:
        """``(path_qs, class_name)`` for every page, in a stable order."""
        yield "/", "home"
        for c, slug in enumerate(self.category_slugs):
            for p in range(1, self.cat_pages[c] + 1):
                yield self._paged(f"/category/{slug}", p), "category"
        for b in range(self.n_books):
            yield f"/book/{b + 1}.html", "book"
        for a in range(self.n_authors):
            yield f"/author/{a + 1}", "author"
        for p in range(self.n_publishers):
            yield f"/publisher/{p + 1}", "publisher"
        for r in range(self.n_reviews):
            yield f"/review/{r + 1}", "review"
        for t in range(len(self.tag_names)):
            for p in range(1, self.tag_pages[t] + 1):
                yield self._search_url(t, p), "search"
        for p in range(1, self.n_news_pages + 1):
            yield self._paged("/news/", p), "news_index"
        for i in range(self.n_articles):
            yield self.article_url(i), "news_article"
        for m in range(self.n_months):
            yield self.month_url(m), "archive"
        for name in INFO_PAGES:
            yield f"/{name}", "info"

    def write_truth(self, fh: TextIO, base_url: str = "") -> int:
        """Write ``url,class`` CSV (header first) to ``fh``; returns the number of pages."""
        prefix = base_url.rstrip("/") if base_url else ""
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(("url", "class"))
        n = 0
        for path_qs, cls in self.truth():
            writer.writerow((prefix + path_qs, cls))
            n += 1
        return n

    # ------------------------------------------------------------------ URLs & names

    @staticmethod
    def _paged(base: str, page: int) -> str:
        return base if page <= 1 else f"{base}?page={page}"

    def _search_url(self, t: int, page: int = 1) -> str:
        url = f"/search?q={self.tag_names[t]}"
        return url if page <= 1 else f"{url}&page={page}"

    def month_ym(self, m: int) -> tuple[int, int]:
        total = LATEST_MONTH[0] * 12 + LATEST_MONTH[1] - 1 - (self.n_months - 1 - m)
        return total // 12, total % 12 + 1

    def month_url(self, m: int) -> str:
        y, mo = self.month_ym(m)
        return f"/archive/{y:04d}-{mo:02d}"

    def _month_label(self, m: int) -> str:
        y, mo = self.month_ym(m)
        return f"{_MONTH_NAMES[mo - 1]} {y:04d}"

    def article_url(self, i: int) -> str:
        y, mo = self.month_ym(self.article_month[i])
        return f"/news/{y:04d}/{mo:02d}/{_slugify(self._article_title(i))}-{i + 1}"

    def _h(self, kind: int, i: int) -> int:
        return _mix(self._salt ^ (kind << 56) ^ i)

    def _rng(self, kind: int, i: int) -> random.Random:
        return random.Random(self._h(kind + 32, i))

    def _book_title(self, b: int) -> str:
        h = self._h(1, b)
        adj, noun = _ADJS[h % len(_ADJS)], _NOUNS[(h >> 8) % len(_NOUNS)]
        form = (h >> 16) % 6
        if form == 0:
            return f"The {adj} {noun}"
        if form == 1:
            return f"{noun} &amp; {_NOUNS[(h >> 24) % len(_NOUNS)]}"
        if form == 2:
            return f"The {noun} of {_FIRST[(h >> 24) % len(_FIRST)]}"
        if form == 3:
            return f"A {adj} {noun}"
        if form == 4:
            return f"{adj} {noun} &mdash; A Novel"
        return escape(f"{_LAST[(h >> 24) % len(_LAST)]}'s {noun}")

    def _author_name(self, a: int) -> str:
        h = self._h(2, a)
        return escape(f"{_FIRST[h % len(_FIRST)]} {_LAST[(h >> 8) % len(_LAST)]}")

    def _publisher_name(self, p: int) -> str:
        h = self._h(3, p)
        form = _PUB_FORMS[h % len(_PUB_FORMS)]
        return form.format(
            w=_PUB_WORDS[(h >> 8) % len(_PUB_WORDS)],
            w2=_PUB_WORDS[(h >> 16) % len(_PUB_WORDS)],
            l=escape(_LAST[(h >> 24) % len(_LAST)]),
        )

    def _price(self, b: int) -> str:
        cents = 499 + (self._h(1, b) >> 32) % 3000
        return f"&euro;{cents // 100}.{cents % 100:02d}"

    def _book_year(self, b: int) -> int:
        return 1950 + (self._h(1, b) >> 44) % 75

    def _article_title(self, i: int) -> str:
        h = self._h(4, i)
        form = _NEWS_FORMS[h % len(_NEWS_FORMS)]
        _, mo = self.month_ym(self.article_month[i])
        return form.format(
            name=self._author_name((h >> 8) % self.n_authors),
            prize=_PRIZES[(h >> 24) % len(_PRIZES)],
            adj=_ADJS[(h >> 28) % len(_ADJS)].lower(),
            monthname=_MONTH_NAMES[mo - 1],
            tag=self.tag_names[(h >> 36) % min(self.n_tags, 40)],
            tag2=self.tag_names[(h >> 44) % self.n_tags],
            noun=_NOUNS[(h >> 52) % len(_NOUNS)].lower(),
        )

    def _review_title(self, r: int) -> str:
        h = self._h(5, r)
        return ("Loved it", "A slow burn", "Not for me", "Five stars &amp; then some",
                "Beautifully written", "Overrated?", "Couldn&rsquo;t put it down", "Solid")[h % 8]

    def _review_book(self, r: int) -> int:
        return bisect_right(self.review_off, r) - 1

    def _text(self, rng: random.Random, sentences: int) -> str:
        out = []
        for _ in range(sentences):
            s = _SENT[rng.randrange(len(_SENT))]
            out.append(
                s.format(
                    adj=_ADJS[rng.randrange(len(_ADJS))].lower(),
                    adj2=_ADJS[rng.randrange(len(_ADJS))].lower(),
                    tag=self.tag_names[rng.randrange(self.n_tags)],
                    tag2=self.tag_names[rng.randrange(self.n_tags)],
                    noun=_NOUNS[rng.randrange(len(_NOUNS))].lower(),
                    noun2=_NOUNS[rng.randrange(len(_NOUNS))].lower(),
                    year=1950 + rng.randrange(75),
                )
            )
        return " ".join(out)

    # ------------------------------------------------------------------ frame

    def _build_frame_top(self) -> str:
        menu = ['<li><a href="/">Home</a></li>']
        for slug in self.category_slugs[:MENU_CATEGORIES]:
            menu.append(f'<li><a href="/category/{slug}">{_cat_title(slug)}</a></li>')
        menu.append('<li><a href="/news/">News</a></li>')
        menu.append(f'<li><a href="{self.month_url(self.n_months - 1)}">Archive</a></li>')
        pop = self.tag_names[self.popular_tag]
        menu.append(f'<li><a href="{self._search_url(self.popular_tag)}">Popular: {pop}</a></li>')
        menu.append('<li><a href="/about">About</a></li>')
        menu.append('<li><a href="/help">Help</a></li>')
        return (
            '<header id="top"><a class="logo" href="/">Folio &amp; Quill</a>\n'
            '<form class="search" action="/search" method="get"><input type="search" name="q" '
            'placeholder="Search books&hellip;"><button type="submit">Search</button></form>\n'
            '<a class="cart" href="/cart">Cart</a></header>\n'
            '<nav id="menu"><ul>' + "".join(menu) + "</ul></nav>\n"
        )

    def _build_footer(self) -> str:
        links = "".join(
            f'<li><a href="/{name}">{_INFO[name][0]}</a></li>' for name in INFO_PAGES
        )
        return (
            '<footer><ul class="links">' + links + "</ul>\n"
            f'<p class="follow">Follow us: <a href="{SOCIAL_URL}">@bookshop</a></p>\n'
            '<p class="copy">&copy; 2024 Folio &amp; Quill Books &middot; All prices include VAT.</p>'
            "</footer>\n"
        )

    def _page(self, title: str, main: str, page_key: int, sidebar: bool = True) -> bytes:
        parts = [
            '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n<title>',
            title,
            " &ndash; ",
            SITE_NAME,
            "</title>\n<style>",
            _CSS,
            "</style>\n<script>window.__pv=window.__pv||[];__pv.push(",
            str(page_key),
            ");if(1<2&&document.cookie.indexOf('seen')<0){document.cookie='seen=1';}</script>\n"
            "</head>\n<body>\n",
            self._frame_top,
            '<div id="page">\n<main id="content">\n',
            main,
            "</main>\n",
        ]
        if sidebar:
            parts.append(self._sidebar(page_key))
        parts.append("</div>\n")
        parts.append(self._footer)
        parts.append("</body>\n</html>\n")
        return "".join(parts).encode("utf-8")

    def _sidebar(self, key: int) -> str:
        best = self.bestsellers
        h = _mix(key ^ self._salt)
        start = h % len(best)
        items = []
        for j in range(5):
            b = best[(start + j * 7) % len(best)]
            items.append(f'<li><a href="/book/{b + 1}.html">{self._book_title(b)}</a></li>')
        return (
            '<aside class="sidebar"><h3>Bestsellers</h3><ol class="bestsellers">'
            + "".join(items)
            + "</ol>\n<p class=\"note\">Updated daily &mdash; free delivery over &euro;25.</p></aside>\n"
        )

    def _pager(self, base: str, page: int, npages: int, sep: str = "?") -> str:
        if npages <= 1:
            return ""

        def url(p: int) -> str:
            return base if p == 1 else f"{base}{sep}page={p}"

        out = ['<div class="pager">']
        if page > 1:
            out.append(f'<a class="prev" href="{url(page - 1)}" rel="prev">&laquo; Previous</a>')
        for p in range(max(1, page - PAGER_WINDOW), min(npages, page + PAGER_WINDOW) + 1):
            if p == page:
                out.append(f'<span class="current">{p}</span>')
            else:
                out.append(f'<a href="{url(p)}">{p}</a>')
        if page < npages:
            out.append(f'<a class="next" href="{url(page + 1)}" rel="next">Next &raquo;</a>')
        out.append(f'<span class="total">of {npages}</span></div>\n')
        return "".join(out)

    def _book_item(self, b: int, with_author: bool = True) -> str:
        s = (f'<li id="book-{b + 1}" class="item item-{b + 1}">'
             f'<a class="title" href="/book/{b + 1}.html">{self._book_title(b)}</a>')
        if with_author:
            a = self.book_author[b]
            s += f' <span class="by">by <a class="author" href="/author/{a + 1}">{self._author_name(a)}</a></span>'
        return s + f' <span class="price">{self._price(b)}</span></li>'

    # ------------------------------------------------------------------ pages

    def _home(self) -> bytes:
        rng = self._rng(0, 0)
        featured = rng.sample(range(self.n_books), min(8, self.n_books))
        cards = "".join(
            f'<div class="card" id="card-{b + 1}"><a href="/book/{b + 1}.html">{self._book_title(b)}</a>'
            f'<span class="by">{self._author_name(self.book_author[b])}</span></div>'
            for b in featured
        )
        news = "".join(
            f'<li><a href="{self.article_url(i)}">{self._article_title(i)}</a></li>'
            for i in range(self.n_articles - 1, max(-1, self.n_articles - 6), -1)
        )
        cats = "".join(
            f'<li><a href="/category/{slug}">{_cat_title(slug)}</a></li>' for slug in self.category_slugs
        )
        main = (
            '<section class="hero"><h1>Welcome to Folio &amp; Quill</h1>'
            f"<p>{self.n_books:,} books, {self.n_authors:,} authors &amp; a caf&eacute;.</p></section>\n"
            f'<section class="featured"><h2>Featured</h2><div class="cards">{cards}</div></section>\n'
            f'<section class="latest-news"><h2>Latest news</h2><ul>{news}</ul>'
            '<p class="more"><a href="/news/">All news &raquo;</a></p></section>\n'
            f'<section class="browse"><h2>Browse by category</h2><ul class="categories">{cats}</ul></section>\n'
        )
        return self._page("Independent bookshop", main, 0)

    def _category(self, c: int, page: int) -> bytes:
        slug = self.category_slugs[c]
        lo, hi = self.cat_off[c], self.cat_off[c + 1]
        start = lo + (page - 1) * BOOKS_PER_PAGE
        items = "".join(self._book_item(self.cat_books[j]) for j in range(start, min(hi, start + BOOKS_PER_PAGE)))
        title = _cat_title(slug)
        main = (
            f'<nav class="breadcrumb"><ol><li><a href="/">Home</a></li><li>{title}</li></ol></nav>\n'
            f"<h1>{title}</h1>\n<p class=\"count\">{hi - lo} books &middot; page {page} of {self.cat_pages[c]}</p>\n"
            f'<ul class="book-list">{items}</ul>\n'
            + self._pager(f"/category/{slug}", page, self.cat_pages[c])
        )
        heading = f"{title} books" + (f" (page {page})" if page > 1 else "")
        return self._page(heading, main, 1_000_000 + c * 10_000 + page)

    def _book(self, b: int) -> bytes:
        rng = self._rng(1, b)
        a = self.book_author[b]
        p = self.book_publisher[b]
        cats = self.book_cats[self.book_cat_off[b] : self.book_cat_off[b + 1]]
        prim = self.category_slugs[cats[0]]
        title = self._book_title(b)
        parts = [
            f'<nav class="breadcrumb"><ol><li><a href="/">Home</a></li>'
            f'<li><a href="/category/{prim}">{_cat_title(prim)}</a></li><li>{title}</li></ol></nav>\n'
            f'<article id="book-{b + 1}" class="book">\n<h1>{title}</h1>\n'
            f'<p class="byline">by <a href="/author/{a + 1}">{self._author_name(a)}</a></p>\n'
            '<table class="details">'
            f'<tr><th>Publisher</th><td><a href="/publisher/{p + 1}">{self._publisher_name(p)}</a></td></tr>'
            f"<tr><th>Published</th><td>{self._book_year(b)}</td></tr>"
            f'<tr><th>Price</th><td class="price">{self._price(b)}</td></tr>'
            f"<tr><th>ISBN</th><td>978-{(self._h(1, b) >> 8) % 10**9:09d}-{b % 10}</td></tr></table>\n"
            f'<p class="buy"><a class="add-to-cart" href="/cart?add={b + 1}" rel="nofollow">Add to cart</a></p>\n'
            f'<div class="description"><p>{self._text(rng, rng.randint(2, 4))}</p></div>\n'
        ]
        if len(cats) > 1:
            also = ", ".join(
                f'<a href="/category/{self.category_slugs[c]}">{_cat_title(self.category_slugs[c])}</a>'
                for c in cats[1:]
            )
            parts.append(f'<p class="also-in">Also in: {also}</p>\n')
        tags = self.book_tags[self.book_tag_off[b] : self.book_tag_off[b + 1]]
        if tags:
            parts.append(
                '<ul class="tags">'
                + "".join(f'<li><a href="{self._search_url(t)}">#{self.tag_names[t]}</a></li>' for t in tags)
                + "</ul>\n"
            )
        if (self._h(1, b) >> 56) % 100 < 12:  # the optional awards box
            items = []
            for _ in range(rng.randint(1, 3)):
                other = rng.randrange(self.n_books)
                items.append(
                    f'<li>{_PRIZES[rng.randrange(len(_PRIZES))]} {rng.randint(1990, 2024)}, shortlisted with '
                    f'<a href="/book/{other + 1}.html">{self._book_title(other)}</a></li>'
                )
            parts.append('<div class="awards"><h2>Awards</h2><ul>' + "".join(items) + "</ul></div>\n")
        r0, r1 = self.review_off[b], self.review_off[b + 1]
        parts.append(f'<section class="reviews"><h2>Reviews ({r1 - r0})</h2>')
        if r1 > r0:
            parts.append("<ul>")
            for r in range(r0, r1):
                stars = (self._h(5, r) >> 8) % 5 + 1
                parts.append(
                    f'<li id="review-{r + 1}" class="review review-{r + 1}"><a href="/review/{r + 1}">'
                    f'{self._review_title(r)}</a> <span class="stars">{"&#9733;" * stars}</span></li>'
                )
            parts.append("</ul>")
        else:
            parts.append('<p class="none">No reviews yet &mdash; be the first!</p>')
        parts.append("</section>\n")
        also = rng.sample(range(self.n_books), 4)
        parts.append(
            '<section class="also-bought"><h2>Customers also bought</h2><ul>'
            + "".join(f'<li><a href="/book/{o + 1}.html">{self._book_title(o)}</a></li>' for o in also)
            + "</ul></section>\n</article>\n"
        )
        return self._page(title, "".join(parts), 2_000_000 + b)

    def _profile_books(self, css: str, books) -> str:
        if not len(books):
            return '<p class="none">No books listed yet.</p>\n'
        return f'<ul class="{css}">' + "".join(self._book_item(b, with_author=False) for b in books) + "</ul>\n"

    def _author(self, a: int) -> bytes:
        rng = self._rng(2, a)
        name = self._author_name(a)
        books = self.author_books[self.author_off[a] : self.author_off[a + 1]]
        parts = [f'<article class="profile" id="profile-{a + 1}">\n<h1>{name}</h1>\n']
        if (self._h(2, a) >> 40) % 100 < 55:  # the optional photo block
            parts.append(
                f'<div class="photo"><img src="https://images.example/authors/{a + 1}.jpg" alt="{name}" width="160">'
                f'<p class="credit">Photo: <a href="https://photos.example/credit/{a + 1}">'
                f"Studio {_LAST[a % len(_LAST)]}</a></p></div>\n"
            )
        parts.append(f'<p class="bio">{self._text(rng, rng.randint(1, 3))}</p>\n')
        parts.append(f"<h2>Books ({len(books)})</h2>\n")
        parts.append(self._profile_books("author-books", books))
        co = self.co_vals[self.co_off[a] : self.co_off[a + 1]]
        parts.append(
            '<h2>Co-authors</h2>\n<ul class="co-authors">'
            + "".join(f'<li><a href="/author/{c + 1}">{self._author_name(c)}</a></li>' for c in co)
            + "</ul>\n</article>\n"
        )
        return self._page(name, "".join(parts), 3_000_000 + a)

    def _publisher(self, p: int) -> bytes:
        rng = self._rng(3, p)
        name = self._publisher_name(p)
        lo, hi = self.pub_off[p], self.pub_off[p + 1]
        books = self.pub_books[lo : min(hi, lo + MAX_PUBLISHER_LIST)]
        imprints = sorted(rng.sample(range(self.n_categories), rng.randint(1, min(4, self.n_categories))))
        parts = [
            f'<article class="profile" id="profile-{p + 1}">\n<h1>{name}</h1>\n'
            f'<p class="bio">{self._text(rng, rng.randint(1, 3))}</p>\n'
            f'<p class="website">Website: <a href="http://publisher-{p + 1}.example/">'
            f"publisher-{p + 1}.example</a></p>\n"
            f"<h2>Books ({hi - lo})</h2>\n",
            self._profile_books("publisher-books", books),
        ]
        if hi - lo > MAX_PUBLISHER_LIST:
            parts.append(f'<p class="more">&hellip; and {hi - lo - MAX_PUBLISHER_LIST} more.</p>\n')
        parts.append(
            '<h2>Imprints</h2>\n<ul class="imprints">'
            + "".join(
                f'<li><a href="/category/{self.category_slugs[c]}">{_cat_title(self.category_slugs[c])}</a></li>'
                for c in imprints
            )
            + "</ul>\n</article>\n"
        )
        return self._page(name, "".join(parts), 4_000_000 + p)

    def _review(self, r: int) -> bytes:
        rng = self._rng(5, r)
        b = self._review_book(r)
        a = self.book_author[b]
        stars = (self._h(5, r) >> 8) % 5 + 1
        title = self._review_title(r)
        h = self._h(5, r)
        reviewer = escape(f"{_FIRST[(h >> 16) % len(_FIRST)]} {_LAST[(h >> 24) % len(_LAST)][0]}.")
        parts = [
            f'<div id="review-{r + 1}" class="review review-{r + 1}">\n<h1>{title}</h1>\n'
            f'<p class="about">A review of <a href="/book/{b + 1}.html">{self._book_title(b)}</a> by '
            f'<a href="/author/{a + 1}">{self._author_name(a)}</a></p>\n'
            f'<p class="rating" title="{stars} of 5">{"&#9733;" * stars}{"&#9734;" * (5 - stars)}</p>\n'
            f'<div class="text"><p>{self._text(rng, rng.randint(2, 5))}</p></div>\n'
            f'<p class="reviewer">Reviewed by {reviewer}</p>\n'
        ]
        r0, r1 = self.review_off[b], self.review_off[b + 1]
        if r1 - r0 > 1:
            parts.append(
                '<div class="more"><h2>More reviews of this book</h2><ul>'
                + "".join(
                    f'<li><a href="/review/{o + 1}">{self._review_title(o)}</a></li>' for o in range(r0, r1) if o != r
                )
                + "</ul></div>\n"
            )
        parts.append("</div>\n")
        return self._page(f"Review: {title}", "".join(parts), 5_000_000 + r, sidebar=False)

    def _search(self, t: int, page: int) -> bytes:
        name = self.tag_names[t]
        lo, hi = self.tag_off[t], self.tag_off[t + 1]
        start = lo + (page - 1) * HITS_PER_PAGE
        parts = [
            f"<h1>Search results for &ldquo;{name}&rdquo;</h1>\n"
            f'<p class="summary">{hi - lo} books found</p>\n'
        ]
        if hi > lo:
            parts.append('<ol class="results">')
            for rank, j in enumerate(range(start, min(hi, start + HITS_PER_PAGE)), start=1):
                b = self.tag_books[j]
                a = self.book_author[b]
                parts.append(
                    f'<li class="hit hit-{rank}"><a href="/book/{b + 1}.html">{self._book_title(b)}</a> by '
                    f'<a class="author" href="/author/{a + 1}">{self._author_name(a)}</a> '
                    f'<span class="price">{self._price(b)}</span></li>'
                )
            parts.append("</ol>\n")
            parts.append(self._pager(f"/search?q={name}", page, self.tag_pages[t], sep="&"))
        else:
            pop = self.popular_tag
            parts.append(
                f'<p class="empty">No books match &ldquo;{name}&rdquo;. Try '
                f'<a href="{self._search_url(pop)}">{self.tag_names[pop]}</a> instead.</p>\n'
            )
        return self._page(f"Search: {name}", "".join(parts), 6_000_000 + t * 1000 + page)

    def _news_index(self, page: int) -> bytes:
        newest = self.n_articles - 1
        start = (page - 1) * NEWS_PER_PAGE
        items = []
        for k in range(start, min(self.n_recent, start + NEWS_PER_PAGE)):
            i = newest - k
            rng = self._rng(4, i)
            items.append(
                f'<li id="post-{i + 1}" class="news news-{i + 1}"><h2><a href="{self.article_url(i)}">'
                f"{self._article_title(i)}</a></h2><p class=\"date\">{self._article_date(i)}</p>"
                f'<p class="summary">{self._text(rng, 1)}</p></li>'
            )
        main = (
            "<h1>News</h1>\n"
            f'<ul class="news-list">{"".join(items)}</ul>\n'
            + self._pager("/news/", page, self.n_news_pages)
            + f'<p class="archive-link">Looking for older stories? Browse the '
            f'<a href="{self.month_url(self.n_months - 1)}">archive</a>.</p>\n'
        )
        return self._page("News" + (f" (page {page})" if page > 1 else ""), main, 7_000_000 + page, sidebar=False)

    def _article_date(self, i: int) -> str:
        y, mo = self.month_ym(self.article_month[i])
        day = 1 + (self._h(4, i) >> 58) % 28
        return f'<time datetime="{y:04d}-{mo:02d}-{day:02d}">{day} {_MONTH_NAMES[mo - 1]} {y:04d}</time>'

    def _article(self, i: int) -> bytes:
        rng = self._rng(4, i)
        m = self.article_month[i]
        title = self._article_title(i)
        paras = "".join(f"<p>{self._text(rng, rng.randint(2, 4))}</p>" for _ in range(rng.randint(1, 4)))
        topics: list[int] = []
        for _ in range(rng.randint(1, 3)):
            t = _weighted_index(self._tag_cum, rng.random())
            if t not in topics:
                topics.append(t)
        for t in self._forced_topics.get(i, ()):
            if t not in topics:
                topics.append(t)
        parts = [
            f'<article id="post-{i + 1}" class="news news-{i + 1}">\n<h1>{title}</h1>\n'
            f'<p class="meta">{self._article_date(i)} &middot; filed under '
            f'<a href="{self.month_url(m)}">{self._month_label(m)}</a></p>\n'
            f'<div class="body">{paras}</div>\n'
            '<ul class="topics">'
            + "".join(f'<li><a href="{self._search_url(t)}">#{self.tag_names[t]}</a></li>' for t in topics)
            + "</ul>\n"
        ]
        if rng.random() < 0.4:  # the optional related-books box, with short (redirecting) links
            rel = rng.sample(range(self.n_books), rng.randint(1, 4))
            parts.append(
                '<div class="related"><h2>Related books</h2><ul>'
                + "".join(f'<li><a href="/b/{b + 1}">{self._book_title(b)}</a></li>' for b in rel)
                + "</ul></div>\n"
            )
        parts.append('<p class="back"><a href="/news/">&laquo; Back to news</a></p>\n</article>\n')
        return self._page(title, "".join(parts), 8_000_000 + i)

    def _archive(self, m: int) -> bytes:
        lo, hi = self.month_off[m], self.month_off[m + 1]
        label = self._month_label(m)
        parts = [f"<h1>News archive: {label}</h1>\n"]
        if hi > lo:
            parts.append(
                '<ul class="archive-list">'
                + "".join(
                    f'<li id="post-{i + 1}" class="news news-{i + 1}"><a href="{self.article_url(i)}">'
                    f"{self._article_title(i)}</a> {self._article_date(i)}</li>"
                    for i in range(hi - 1, lo - 1, -1)
                )
                + "</ul>\n"
            )
        else:
            parts.append('<p class="empty">No stories this month.</p>\n')
        nav = []
        if m > 0:
            nav.append(f'<a class="prev" href="{self.month_url(m - 1)}">&laquo; {self._month_label(m - 1)}</a>')
        if m < self.n_months - 1:
            nav.append(f'<a class="next" href="{self.month_url(m + 1)}">{self._month_label(m + 1)} &raquo;</a>')
        parts.append('<div class="months">' + " ".join(nav) + "</div>\n")
        parts.append('<p class="latest"><a href="/news/">Latest news</a></p>\n')
        return self._page(f"Archive: {label}", "".join(parts), 9_000_000 + m, sidebar=False)

    def _info(self, name: str) -> bytes:
        title, text = _INFO[name]
        see = "".join(f'<li><a href="/{o}">{_INFO[o][0]}</a></li>' for o in INFO_PAGES if o != name)
        main = (
            f'<div class="info">\n<h1>{title}</h1>\n<p>{text}</p>\n'
            "<p>Opening hours: Monday&ndash;Saturday, 9&nbsp;am to 7&nbsp;pm.</p>\n"
            f'<h2>See also</h2><ul class="see-also">{see}</ul>\n</div>\n'
        )
        return self._page(title, main, 10_000_000 + INFO_PAGES.index(name), sidebar=False)

    def _cart(self, book: int | None) -> bytes:
        msg = (
            f"<p>Added <em>{self._book_title(book)}</em> to your cart.</p>"
            if book is not None
            else "<p>Your cart is empty.</p>"
        )
        main = f'<div class="cart">\n<h1>Your cart</h1>\n{msg}\n<p><a href="/">Continue shopping</a></p>\n</div>\n'
        return self._page("Cart", main, 11_000_000, sidebar=False)

    # ------------------------------------------------------------------ routing

    @staticmethod
    def _not_found(path: str) -> tuple[int, dict[str, str], bytes]:
        body = (
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>Not found</title></head>\n'
            f"<body><h1>404 Not found</h1><p>No page at <code>{escape(path[:200])}</code>.</p>"
            '<p><a href="/">Home</a></p></body></html>\n'
        ).encode("utf-8")
        return 404, {"Content-Type": HTML_TYPE}, body

    @staticmethod
    def _redirect(location: str) -> tuple[int, dict[str, str], bytes]:
        body = (
            f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>Moved</title></head>'
            f'<body><p>Moved to <a href="{location}">{location}</a>.</p></body></html>\n'
        ).encode("utf-8")
        return 301, {"Content-Type": HTML_TYPE, "Location": location}, body

    @staticmethod
    def _int(text: str) -> int | None:
        if not text or not text.isascii() or not text.isdigit() or len(text) > 9:
            return None
        return int(text)

    def _resolve(self, path: str, params: dict[str, str]) -> tuple[str, object] | None:
        """Map a request onto ``(canonical_url, page_builder)``; None when no such page."""
        page_param = params.get("page")
        page = 1
        if page_param is not None:
            page = self._int(page_param)
            if page is None or page < 1:
                return None

        if path == "/":
            return "/", self._home
        if path.startswith("/book/") and path.endswith(".html"):
            n = self._int(path[6:-5])
            if n is None or not 1 <= n <= self.n_books:
                return None
            return f"/book/{n}.html", lambda: self._book(n - 1)
        if path.startswith("/category/"):
            c = self._cat_index.get(path[10:])
            if c is None or page > self.cat_pages[c]:
                return None
            return self._paged(path, page), lambda: self._category(c, page)
        for prefix, count, build in (
            ("/author/", self.n_authors, self._author),
            ("/publisher/", self.n_publishers, self._publisher),
            ("/review/", self.n_reviews, self._review),
        ):
            if path.startswith(prefix):
                n = self._int(path[len(prefix) :])
                if n is None or not 1 <= n <= count:
                    return None
                return f"{prefix}{n}", partial(build, n - 1)
        if path == "/search":
            t = self._tag_index.get(params.get("q", ""))
            if t is None or page > self.tag_pages[t]:
                return None
            return self._search_url(t, page), lambda: self._search(t, page)
        if path in ("/news/", "/news"):
            if page > self.n_news_pages:
                return None
            return self._paged("/news/", page), lambda: self._news_index(page)
        if path.startswith("/news/"):
            tail = path.rsplit("-", 1)
            n = self._int(tail[1]) if len(tail) == 2 else None
            if n is None or not 1 <= n <= self.n_articles:
                return None
            return self.article_url(n - 1), lambda: self._article(n - 1)
        if path.startswith("/archive/") and len(path) == 16 and path[13] == "-":
            y, mo = self._int(path[9:13]), self._int(path[14:16])
            if y is None or mo is None or not 1 <= mo <= 12:
                return None
            m = (y * 12 + mo - 1) - (LATEST_MONTH[0] * 12 + LATEST_MONTH[1] - 1) + self.n_months - 1
            if not 0 <= m < self.n_months:
                return None
            return self.month_url(m), lambda: self._archive(m)
        if path[1:] in INFO_PAGES:
            return path, lambda: self._info(path[1:])
        return None

    def render(self, path_qs: str) -> tuple[int, dict[str, str], bytes]:
        """Answer a request target (``/path?query``): ``(status, headers, body)``.

        200 for pages (and ``/cart``, ``/robots.txt``), 301 with ``Location`` for
        ``/b/ID`` and non-canonical spellings of pages, 404 for anything else.
        """
        path, _, query = path_qs.partition("?")
        path = path.split("#", 1)[0]
        if path == "/robots.txt":
            return 200, {"Content-Type": TEXT_TYPE}, ROBOTS_TXT
        if path == "/cart":
            book = None
            if query:
                add = dict(parse_qsl(query, keep_blank_values=True)).get("add")
                n = self._int(add or "")
                if n is not None and 1 <= n <= self.n_books:
                    book = n - 1
            return 200, {"Content-Type": HTML_TYPE}, self._cart(book)
        if path.startswith("/b/"):
            n = self._int(path[3:])
            if n is None or not 1 <= n <= self.n_books:
                return self._not_found(path_qs)
            return self._redirect(f"/book/{n}.html")
        try:
            params = dict(parse_qsl(query, keep_blank_values=True)) if query else {}
        except ValueError:
            return self._not_found(path_qs)
        found = self._resolve(path, params)
        if found is None:
            return self._not_found(path_qs)
        canonical, build = found
        if canonical != path_qs:
            return self._redirect(canonical)
        return 200, {"Content-Type": HTML_TYPE}, build()

    def classify(self, path_qs: str) -> str | None:
        """The truth class of a canonical page URL (``/path?query``), else None."""
        path, _, query = path_qs.partition("?")
        try:
            params = dict(parse_qsl(query, keep_blank_values=True)) if query else {}
        except ValueError:
            return None
        found = self._resolve(path, params)
        if found is None or found[0] != path_qs:
            return None
        if path == "/":
            return "home"
        head = path.split("/")[1]
        return {
            "category": "category",
            "book": "book",
            "author": "author",
            "publisher": "publisher",
            "review": "review",
            "search": "search",
            "archive": "archive",
        }.get(head) or ("news_index" if path == "/news/" else "news_article" if head == "news" else "info")


def fetcher(site: DemoSite, base_url: str = "http://127.0.0.1:8000", max_redirects: int = 5):
    """A page source for ``structcrawl.core.explorer.run_offline``: url -> (final_url, body) | None.

    No HTTP: pages come straight from ``site.render``; redirects are followed,
    robots.txt's ``/cart`` is never fetched, off-site URLs give None.
    """

    def fetch(url: str):
        for _ in range(max_redirects + 1):
            if not url.startswith(base_url):
                return None
            path = url[len(base_url):] or "/"
            if path.startswith("/cart"):
                return None
            status, headers, body = site.render(path)
            if status in (301, 302):
                location = headers["Location"]
                url = base_url + location if location.startswith("/") else location
                continue
            return (url, body) if status == 200 else None
        return None

    return fetch
