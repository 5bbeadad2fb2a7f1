"""Page features from one lxml parse: links with exact XPaths, link collections,
page schema and bag of tag paths.

* **Link collection** (Crescenzi et al. §2, footnote 3): the root-to-link DOM path
  without positions, each step carrying the element's ``id`` and ``class`` so
  that presentation properties tell collections apart
  (``html/body/div#content/ul.books/li/a``); an HTML void element (``wbr``)
  the parser nested content in is no step.  Tokens of id/class values that
  contain a digit vary per page (``item-123``) and become ``*``; so does an id
  with characters other than letters, digits, ``_`` and ``-``
  (``map#geos::geom::Point_map``): it is spelled from the content.  A link
  to another host is spelled without its own class tokens: generators mark
  such links (Javadoc's ``a.external-link``), and the slot a link fills (a
  method's return type) is one section whether the item it names lives on
  the site or elsewhere (docs/design.md, item 41).
* **Links**: ``<a href>``, ``<area href>`` and a frameset's ``<frame src>``.
* **Exact XPath** (UXClust §3.3): the positional path of the link element,
  in lxml's ``getpath`` form (``/html/body/div[2]/ul/li[4]/a``); when a URL
  occurs several times on a page, its inbound XPath is the first (topmost)
  occurrence in document order.
* **Schema**: the set of link-collection paths of the page.
* **Tag paths**: the set of root-to-element tag paths (no positions, no
  attributes, no text, repeated runs of steps folded by ``collapse_runs``) —
  the raw material of fingerprints.
* **Title**: the text of the ``<title>``, else of the first ``<h1>``,
  whitespace folded, at most ``MAX_TITLE`` characters — what a person reads
  (the report names classes by their titles' common words).

Nothing here imports Scrapy: features are computed the same way from a live
response, a stored page or a test string.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from urllib.parse import urlsplit

from lxml import etree
from w3lib.encoding import html_to_unicode, http_content_type_encoding, read_bom

from structcrawl.core.urls import normalize_url

#: Links considered per page; beyond it the rest of the page's links are ignored
#: (bounded work on hostile pages with 100,000 links).
MAX_LINKS = 10_000

#: Characters of a page title kept (a title is for a person to read, not for the algorithms).
MAX_TITLE = 200

# Comments and processing instructions are kept, as parsel keeps them: the harvest evaluates a model's
# field XPaths, written on parsel's tree, on this one (a comment splits a text node); the features
# read elements only (the same features on the 12,900 pages of nine corpora either way).
_PARSER = etree.HTMLParser(encoding="utf-8")
# From the first part holding a digit to the end: "item-123" -> "item-*",
# "pub_methods_classgeos_1_1geom_1_1Point" -> "pub_methods_classgeos_*".
_VARYING_TOKEN = re.compile(r"(?<![^\-_])[^\-_]*\d.*")
# An id holding anything but word characters and hyphens ("geos::geom::Point_map",
# "section 2.1", "/docs/intro") is spelled from the page's content, not its layout.
_CONTENT_ID = re.compile(r"[^\w\-]")
# "/" separates path steps: a class token holding one ("w-1/2", a mangled "</area")
# would add a step
_STEP_SEPARATOR = re.compile(r"/")
#: link element -> the attribute holding its URL.  A frameset's frames are its links: a frames
#: Javadoc (JDK 8 and before) starts at a ``<frameset>`` whose only ``<a>`` sits in ``<noframes>``,
#: which libxml2 drops, and its package lists are linked by ``<frame src>`` only; a crawl seeded
#: there modelled one page and ended.  Not ``<iframe>``: it embeds a widget in a page, it does
#: not lay out the site.
_LINK_ATTRIBUTES = {"a": "href", "area": "href", "frame": "src"}
# HTML's void elements hold no content, but libxml2's HTML 4 parser does not know the newer ones and
# nests what follows them inside them (``code/wbr/a`` for a link after a word break): a path does
# not pass through one, as in the tree an HTML5 parser builds (WHATWG HTML §13.1.2, void elements)
_VOID_TAGS = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "keygen", "link",
                        "meta", "param", "source", "track", "wbr"})
# One step of an exact XPath (``getpath``'s form): tag, position if it has siblings of its tag.
_XPATH_STEPS = re.compile(r"/([^/\[]+)(?:\[(\d+)\])?")
# Tags that are XPath name tests.  libxml2 keeps any tag name it meets
# (``<fb:like>``, ``<d+iv>``); ``getpath`` would then give an XPath that does not
# evaluate, so such elements are renamed (bad characters -> ``_``) before paths are taken.
# ASCII only: Python's \w takes "¹" (a latin-1 byte read as a tag), XPath's NameChar does not.
# No "." either, though XPath allows it: a path step spells its classes after a "."
# (``<href="../up">`` is a tag ``href="../up"`` to libxml2).
_XPATH_NAME = re.compile(r"[^\W\d][\w\-]*\Z", re.ASCII)
_BAD_NAME_CHARS = re.compile(r"[^\w\-]", re.ASCII)
_TAGS_OK: set[str] = set()


def _xpath_safe_tag(el: etree._Element) -> str:
    """``el.tag``, after renaming the element when its tag is not an XPath name test."""
    tag = el.tag
    if _XPATH_NAME.match(tag):
        if len(_TAGS_OK) < 4096:
            _TAGS_OK.add(tag)
        return tag
    tag = _BAD_NAME_CHARS.sub("_", tag)
    if not _XPATH_NAME.match(tag):
        tag = "_" + tag
    el.tag = tag
    return tag


@dataclass(frozen=True, slots=True)
class Link:
    """One ``<a href>``/``<area href>``/``<frame src>`` occurrence on a page."""

    url: str  #: resolved, normalised absolute URL
    xpath: str  #: exact positional XPath of the element
    path: str  #: link-collection path (tags with id/class, no positions)


@dataclass(frozen=True, slots=True)
class PageFeatures:
    """Everything the algorithms need to know about one page."""

    url: str
    #: every http(s) link occurrence, in document order
    links: tuple[Link, ...] = ()
    #: root-to-element tag paths present on the page
    tag_paths: frozenset[str] = frozenset()
    #: the same with each step's class tokens, normalised as in collection paths (no ids): what
    #: places a page whose links are all the site's chrome (``structcrawl.core.placement``)
    element_paths: frozenset[str] = frozenset()
    #: True when the page had more than MAX_LINKS links and was cut
    truncated: bool = False
    collections: dict[str, tuple[str, ...]] = field(default_factory=dict, compare=False, repr=False)
    #: the page's ``<title>``, else its first ``<h1>`` ("" when it has neither)
    title: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if not self.collections and self.links:
            groups: dict[str, dict[str, None]] = {}
            for link in self.links:
                groups.setdefault(link.path, {})[link.url] = None
            object.__setattr__(self, "collections", {p: tuple(u) for p, u in groups.items()})

    @property
    def schema(self) -> frozenset[str]:
        """The page schema: its set of link-collection paths (Crescenzi et al. §2)."""
        return frozenset(self.collections)

    @property
    def url_count(self) -> int:
        """Number of URLs the page encodes: distinct URLs per collection, summed."""
        return sum(len(u) for u in self.collections.values())

    def inbound(self) -> dict[str, Link]:
        """Per distinct URL, its topmost occurrence (UXClust §3.3)."""
        first: dict[str, Link] = {}
        for link in self.links:
            first.setdefault(link.url, link)
        return first


def list_containers(xpaths: Sequence[str]) -> list[str]:
    """The list each of one page's links of one collection belongs to: its container's exact XPath and,
    when the records of a list hold links in several places, the link's place in its record (its column).
    A spelled collection may hold several lists: an index page's one table per kind of symbol under one
    tag path (gi-docgen: ``section[k]/div/div/table/tbody/tr[i]/td[1]/a``).  The repeated element is the
    step whose position takes the most values among the links (of as many steps; the deepest on a tie):
    ``tr[i]`` there, not ``td[j]`` of a table of several columns, nor the ``section[k]`` that tells the
    tables apart.  Its parent's XPath, positions kept, is the container (``…/section[k]/div/div/table/
    tbody``); one link, or links that differ in no position, make one list.  The steps from the repeated one
    to the link, positions kept below it, are the column (``/tr/td[2]``; several links in one cell are one
    field): UXClust (Grigalis & Čenys §3.3) groups pages by the exact XPath of their inbound link, and a
    table's columns are its fields — an index of modules whose second column names each module's
    application links two page types under one tag path."""
    parsed = [_XPATH_STEPS.findall(x) for x in xpaths]
    repeated: dict[int, int] = {}  # steps -> index of the repeated step
    for n in {len(steps) for steps in parsed}:
        values: list[set[str]] = [set() for _ in range(n)]
        for steps in parsed:
            if len(steps) == n:
                for i, (_tag, pos) in enumerate(steps):
                    values[i].add(pos)
        repeated[n] = max(range(n), key=lambda i: (len(values[i]), i)) if n else 0
    containers = [_spell_steps(steps[:repeated[len(steps)]]) for steps in parsed]
    columns = [_spell_steps(steps[repeated[len(steps)]:-1], first_position=False) for steps in parsed]
    several = {c for c in containers if len({col for c2, col in zip(containers, columns) if c2 == c}) > 1}
    return [f"{c}{COLUMN_MARK}{col}" if c in several else c for c, col in zip(containers, columns)]


#: Between a list's container and its column in the names of :func:`list_containers`.
COLUMN_MARK = "|"


def _spell_steps(steps: Sequence[tuple[str, str]], first_position: bool = True) -> str:
    """``/tag[pos]…`` of XPath steps; the first step's position left out unless ``first_position``."""
    return "".join(f"/{tag}[{pos}]" if pos and (i or first_position) else f"/{tag}"
                   for i, (tag, pos) in enumerate(steps))


@lru_cache(maxsize=1 << 14)
def _step(tag: str, ident: str | None, cls: str | None) -> str:
    """A collection-path step: tag plus normalised ``#id`` and sorted ``.class`` tokens."""
    step = tag
    if ident:
        ident = ident.strip()
        step += "#" + ("*" if _CONTENT_ID.search(ident) else _VARYING_TOKEN.sub("*", ident, count=1))
    if cls:
        tokens = sorted({_STEP_SEPARATOR.sub("*", _VARYING_TOKEN.sub("*", t, count=1)) for t in cls.split()})
        if tokens:
            step += "." + ".".join(tokens)
    return step


#: Longest repeated run of steps folded by ``collapse_runs``.
MAX_RUN = 3


@lru_cache(maxsize=1 << 16)
def collapse_runs(path: str) -> str:
    """``path`` with each run of steps repeated back to back kept once:
    ``ul/li/ul/li/ul/li/a`` -> ``ul/li/a``, ``div/div/div/p`` -> ``div/p``.

    Recursive structures (nested lists, an inheritance tree one level deeper
    per ancestor, nested sections) write one path per depth; the depth is the
    page's content, not its template, and split one page type into one class
    per depth."""
    steps = path.split("/")
    i = 0
    while i < len(steps):
        for run in range(1, MAX_RUN + 1):
            while steps[i:i + run] == steps[i + run:i + 2 * run] and i + 2 * run <= len(steps):
                del steps[i + run:i + 2 * run]
        i += 1
    return "/".join(steps)


@lru_cache(maxsize=1 << 16)
def _normalize(href: str, base: str) -> str | None:
    return normalize_url(href, base)


def _base_keys(base: str) -> tuple[str, str]:
    """(origin, directory) of a normalised base URL: what a relative href depends on."""
    path_start = base.find("/", base.find("//") + 2)
    if path_start < 0:
        return base, base + "/"
    origin = base[:path_start]
    path = base.split("?", 1)[0]
    return origin, path[: path.rfind("/") + 1]


def _resolver(base: str):
    """href -> normalised URL, memoised on the part of ``base`` each href depends on
    (menus, footers and sidebars repeat the same hrefs on every page)."""
    origin, directory = _base_keys(base)

    def resolve(href: str) -> str | None:
        href = href.strip()
        if not href:
            return None
        first = href[0]
        if first == "/":
            key = base if href.startswith("//") else origin
        elif first in "?#":
            key = base
        elif href.startswith(("http://", "https://")):
            key = ""
        else:
            key = directory
        return _normalize(href, key)

    return resolve


def decode_html(body: bytes | str, content_type: str | None = None) -> str:
    """Decode ``body`` by BOM, HTTP header, ``<meta charset>`` or sniffing (w3lib).

    A ``<meta>`` naming UTF-16 or UTF-32 was itself read as ASCII, so it lies:
    the page is decoded as UTF-8 (WHATWG's prescan rule).
    """
    if isinstance(body, str):
        return body
    encoding, text = html_to_unicode(content_type, body)
    if encoding.startswith(("utf-16", "utf-32")) and read_bom(body)[0] is None and \
            not http_content_type_encoding(content_type):
        return body.decode("utf-8", "replace")
    return text


def parse_html(body: bytes | str, content_type: str | None = None) -> etree._Element | None:
    """Parse into an lxml tree; None when there is no document at all."""
    text = decode_html(body, content_type)
    if "\x00" in text:
        text = text.replace("\x00", "")
    if not text.strip():
        return None
    try:
        root = etree.fromstring(text.encode("utf-8", "surrogatepass"), _PARSER)
    except (etree.ParserError, etree.XMLSyntaxError, ValueError):
        return None
    return root


def extract(
    body: bytes | str, url: str, content_type: str | None = None, max_links: int = MAX_LINKS
) -> PageFeatures:
    """Features of the page ``body`` fetched from ``url`` (already normalised or not)."""
    return extract_with_tree(body, url, content_type, max_links)[0]


def extract_with_tree(
    body: bytes | str, url: str, content_type: str | None = None, max_links: int = MAX_LINKS
) -> tuple[PageFeatures, etree._Element | None]:
    """The features and the parsed tree, as parsed: the harvest reads a target page's fields off the same
    tree.  The tree is None when there is no document, or when a tag that is no XPath name test was renamed
    for the features (``_xpath_safe_tag``), since the fields' XPaths name it as parsel parses it."""
    page_url = normalize_url(url) or url
    root = parse_html(body, content_type)
    if root is None:
        return PageFeatures(url=page_url), None
    features, renamed = _features(root, page_url, max_links)
    return features, None if renamed else root


def features_from_tree(root: etree._Element, url: str, max_links: int = MAX_LINKS) -> PageFeatures:
    """Features from an already-parsed tree (the root element)."""
    return _features(root, url, max_links)[0]


def _features(root: etree._Element, url: str, max_links: int) -> tuple[PageFeatures, bool]:
    """The features, and whether an element of the tree was renamed (``_xpath_safe_tag``)."""
    tree = root.getroottree()
    base = url
    base_el = root.find(".//base[@href]")
    if base_el is not None:
        base = normalize_url(base_el.get("href", ""), url) or url

    # One pass over the elements: tag path and collection path of each from its parent's.
    original = root.tag
    root_tag = original if original in _TAGS_OK else _xpath_safe_tag(root)
    renamed = root_tag != original
    # (tag path, element path, collection path) of each element, from its parent's; a page repeats a few
    # hundred distinct paths over thousands of elements, so each path string is built once (``joined``)
    # and an element's steps are spelled once per (tag, id, class) (``spelled``): a fifth less time on geos's pages
    paths: dict[etree._Element, tuple[str, str, str]] = {
        root: (root_tag, root_tag, _step(root_tag, root.get("id"), root.get("class")))}
    joined: dict[tuple[tuple[str, str, str], tuple[str, str, str]], tuple[str, str, str]] = {}
    spelled: dict[tuple[str, str | None, str | None], tuple[str, str, str]] = {}
    anchors: list[tuple[etree._Element, str, str]] = []  #: link element, its parent's collection path, its tag
    #: void element -> the paths its children extend: its parent's
    voids: dict[etree._Element, tuple[str, str, str]] = {}
    for el in root.iterdescendants(etree.Element):
        tag = el.tag
        if tag not in _TAGS_OK:
            safe = _xpath_safe_tag(el)
            renamed = renamed or safe != tag
            tag = safe
        get = el.get
        ident, cls = get("id"), get("class")
        steps = spelled.get((tag, ident, cls))
        if steps is None:
            steps = spelled[(tag, ident, cls)] = (tag, _step(tag, None, cls), _step(tag, ident, cls))
        parent_el = el.getparent()
        parent = voids[parent_el] if voids and parent_el in voids else paths[parent_el]
        own = joined.get((parent, steps))
        if own is None:
            own = joined[(parent, steps)] = (parent[0] + "/" + tag, parent[1] + "/" + steps[1],
                                            parent[2] + "/" + steps[2])
        paths[el] = own
        if tag in _VOID_TAGS:
            voids[el] = parent
        if tag in _LINK_ATTRIBUTES:
            anchors.append((el, parent[2], tag))
    title = _title(root)
    distinct = set(paths.values())
    # interned: thousands of stored pages share the same few hundred paths
    tag_paths = frozenset(sys.intern(collapse_runs(p[0])) for p in distinct)
    element_paths = frozenset(sys.intern(collapse_runs(p[1])) for p in distinct)

    resolve = _resolver(base)
    site = urlsplit(url).hostname
    links: list[Link] = []
    truncated = False
    for el, parent_path, tag in anchors:
        href = el.get(_LINK_ATTRIBUTES[tag])
        if href is None:
            continue
        link_url = resolve(href)
        if link_url is None:
            continue
        if len(links) >= max_links:
            truncated = True
            break
        path = paths[el][2]
        if el.get("class") and urlsplit(link_url).hostname != site:
            path = f"{parent_path}/{_step(tag, el.get('id'), None)}"
        links.append(Link(link_url, tree.getpath(el), sys.intern(path)))
    return PageFeatures(url=url, links=tuple(links), tag_paths=tag_paths, element_paths=element_paths,
                        truncated=truncated, title=title), renamed


def _title(root: etree._Element) -> str:
    """The text of the first non-empty ``<title>``, else of the first non-empty ``<h1>``: whitespace folded,
    at most ``MAX_TITLE`` characters."""
    for tag in ("title", "h1"):
        for el in root.iter(tag):
            text = " ".join("".join(el.itertext()).split())
            if text:
                return text[:MAX_TITLE]
    return ""
