"""A page as text nodes with addressable XPaths: the common ground of fields, records and extraction.

Pages are parsed with parsel as HTML (``Selector(text=html, type="html")``,
lxml's HTML parser, as Scrapy's ``HtmlResponse.xpath`` does: parsel alone takes
a text opening with an XML declaration for XML, XHTML's namespace then in
every tag), so every XPath written here works as written with
``response.xpath`` on the same page.  An element's **step** is its tag with the attributes that
address it on every page of a template: a stable ``id`` (no digit: ``book-123``
is per page) anchors the path (``//main[@id="content"]``), stable ``class``
tokens become a predicate, and per-page tokens (``item-123``) are dropped, as
the link-collection paths of :mod:`structcrawl.core.features` drop them.  The
**key** of a node is its step sequence from the nearest id anchor (or the
root); its **position** vector says which sibling of the same step it is at
each level, for the few fields that are told apart only by position (table
rows with a heading cell).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from lxml import etree
from parsel import Selector

#: Elements whose text is not page content.
SKIPPED_TAGS = frozenset({"script", "style", "noscript", "template"})
_DIGIT = re.compile(r"\d")
#: Separators inside a class token (``memitem:<hash>``, ``row-12``, ``col_3``).
_SEPARATORS = "-_:."
_LABEL_TAGS = frozenset({"th", "dt", "label"})
#: A tag that is an XPath name test as it stands (ASCII: Python's \w takes "¹", XPath's NameChar does not).
_NAME_TEST = re.compile(r"[^\W\d][\w\-.]*\Z", re.ASCII)


def parse(html: str) -> etree._Element:
    """The lxml root parsel builds for ``html`` as HTML (so XPaths tested here behave the same in parsel)."""
    if not html.strip():
        html = "<html></html>"
    return Selector(text=html, type="html").root


def normalize(text: str | None) -> str:
    return " ".join(text.split()) if text else ""


def own_text(el: etree._Element) -> str:
    """The element's own text: its text and its children's tails, whitespace collapsed."""
    if not len(el):  # most nodes a field selects (a source line's tokens, a cell) have no children
        return normalize(el.text)
    parts = [el.text or ""]
    parts.extend(child.tail or "" for child in el)
    return normalize(" ".join(parts))


def _literal(value: str) -> str | None:
    """``value`` as an XPath 1.0 string literal; None when it holds both quote kinds."""
    if '"' not in value:
        return f'"{value}"'
    if "'" not in value:
        return f"'{value}'"
    return None


def stable_id(el: etree._Element) -> str | None:
    value = el.get("id")
    if value and not _DIGIT.search(value) and value.strip() == value and _literal(value):
        return value
    return None


@lru_cache(maxsize=4096)
def _stable_tokens(value: str) -> tuple[str, ...]:
    return tuple(t for t in value.split() if not _DIGIT.search(t) and _literal(t))


def stable_classes(el: etree._Element) -> tuple[str, ...]:
    value = el.get("class")
    return _stable_tokens(value) if value else ()


def _stable_prefix(token: str) -> str | None:
    """The stable start of a per-page class token: up to the separator before its first segment with a digit
    (``memitem:`` of ``memitem:a1b2c3``, ``row-`` of ``row-12``); None when there is none (``h2``)."""
    first = _DIGIT.search(token)
    if first is None:
        return None
    cut = max(token.rfind(sep, 0, first.start()) for sep in _SEPARATORS)
    return token[:cut + 1] if cut > 0 else None


@lru_cache(maxsize=4096)
def class_tests(value: str) -> tuple[str, ...]:
    """What a class attribute says on every page of a template, as the padded strings an XPath ``contains``
    tests: ``" tok "`` for each stable token, ``" pre"`` for the stable prefix of a per-page token (a
    Doxygen member row ``memitem:<hash>``, a row ``row-12``: the kind of row, without the row)."""
    out: list[str] = []
    for t in value.split():
        test = f" {t} " if not _DIGIT.search(t) else (f" {prefix}" if (prefix := _stable_prefix(t)) else None)
        if test and '"' not in test and test not in out:  # written inside "…" (tests_step)
            out.append(test)
    return tuple(out)


@lru_cache(maxsize=4096)
def name_test(tag: str) -> str:
    """``tag`` as the node test of a step: the tag itself, or ``*[name()="o:p"]`` when it is no XPath
    name (libxml2's HTML parser keeps any tag it meets; a word processor's ``<o:p>`` has a prefix no
    namespace binds, and ``/o:p`` fails to evaluate)."""
    if _NAME_TEST.match(tag):
        return tag
    literal = _literal(tag)
    return f"*[name()={literal}]" if literal else "*"


def tests_step(tag: str, tests: tuple[str, ...]) -> str:
    """A step of ``tag`` whose class passes every one of ``tests`` (:func:`class_tests`)."""
    return name_test(tag) + "".join(f'[contains(concat(" ", normalize-space(@class), " "), "{t}")]' for t in tests)


@lru_cache(maxsize=4096)
def _class_step(tag: str, value: str) -> str:
    # memoised: a page repeats a few (tag, class) pairs many times, and huge pages made this a third of the cost
    if _stable_tokens(value) and len(_stable_tokens(value)) == len(value.split()) and _literal(value):
        return f"{name_test(tag)}[@class={_literal(value)}]"
    return tests_step(tag, class_tests(value))


def step(el: etree._Element) -> str:
    """The element's XPath step: tag plus what its class says on every page (the whole attribute when all its
    tokens are stable; else a test per stable token and per stable prefix of a per-page token)."""
    value = el.get("class")
    return _class_step(el.tag, value) if value else name_test(el.tag)


def anchor(el: etree._Element) -> str:
    """The absolute start of a path at an element with a stable id."""
    return f"//{name_test(el.tag)}[@id={_literal(stable_id(el))}]"


@dataclass(frozen=True)
class TextNode:
    """An element with own text on one page."""

    key: tuple[str, ...]  #: anchor or root step, then child steps
    positions: tuple[int, ...]  #: 1-based index among same-step siblings, one per step after the first
    counts: tuple[int, ...]  #: how many same-step siblings at each of those levels
    text: str
    label: str  #: text of a heading cell before it (th, dt, label), else ""
    name_hint: str  #: its last stable class token or id; else the nearest ancestor's and its tag; else its tag
    element: etree._Element = field(compare=False, repr=False)


def _label(el: etree._Element) -> str:
    """A heading cell just before the element or its cell parent (``<th>Price</th><td>…``)."""
    for node in (el, el.getparent()):
        if node is None:
            continue
        prev = node.getprevious()
        while prev is not None and not isinstance(prev.tag, str):
            prev = prev.getprevious()
        if prev is not None and prev.tag in _LABEL_TAGS:
            return normalize(prev.xpath("string()"))
    return ""


def text_nodes(root: etree._Element, start: str | None = None) -> list[TextNode]:
    """Every element with own text under ``root`` (itself included), in document order, with its key and positions.

    ``start``: the first step of every key (e.g. ``"."`` for paths relative to
    ``root``, which then never re-anchor at ids); by default the root's own
    absolute step, and any element with a stable id starts a new anchor.
    """
    anchors = start is None
    out: list[TextNode] = []
    # (element, key, positions, counts, hint)
    stack: list[tuple[etree._Element, tuple[str, ...], tuple[int, ...], tuple[int, ...], str]] = []
    if not isinstance(root.tag, str):
        return out
    if start is None:
        start = anchor(root) if stable_id(root) else f"/{name_test(root.tag)}"
    stack.append((root, (start,), (), (), ""))
    while stack:
        el, key, pos, cnt, inherited = stack.pop()
        own = _token(el)
        text = own_text(el)
        if text and el.tag not in SKIPPED_TAGS:
            hint = own or (f"{inherited}-{el.tag}" if inherited else el.tag)
            out.append(TextNode(key, pos, cnt, text, _label(el), hint, el))
        hint_down = own or inherited
        children = [c for c in el if isinstance(c.tag, str) and c.tag not in SKIPPED_TAGS]
        steps = [step(c) for c in children]
        totals: dict[str, int] = {}
        for s in steps:
            totals[s] = totals.get(s, 0) + 1
        seen: dict[str, int] = {}
        pushed = []
        for child, s in zip(children, steps):
            seen[s] = seen.get(s, 0) + 1
            if anchors and stable_id(child):
                pushed.append((child, (anchor(child),), (), (), hint_down))
            else:
                pushed.append((child, key + (s,), pos + (seen[s],), cnt + (totals[s],), hint_down))
        stack.extend(reversed(pushed))
    return out


def _token(el: etree._Element) -> str:
    """The element's own name-giving token: its last stable class, else its stable id, else ""."""
    classes = stable_classes(el)
    if classes:
        return classes[-1]
    return stable_id(el) or ""


def xpath(key: tuple[str, ...], positions: tuple[int, ...] | None = None,
          keep: tuple[bool, ...] | None = None) -> str:
    """The XPath of a key; ``positions`` at the levels ``keep`` marks."""
    parts = [key[0]]
    for i, s in enumerate(key[1:]):
        parts.append(f"{s}[{positions[i]}]" if positions is not None and keep is not None and keep[i] else s)
    return "/".join(parts)
