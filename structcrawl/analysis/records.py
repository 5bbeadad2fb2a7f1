"""Records on list pages (U-REST, Shen & Karger) and the per-class analysis the model exports.

U-REST finds records in two stages: clustering the page's subtrees into
repeated, structurally similar regions, then ranking the clusters by how
record-like they are — *contiguity*, *content coverage* (the share of the
page's content the cluster holds) and *variation* (records hold several
differently formatted fields).  Here, on the pages kept for one class:

1. Repeated regions: sibling elements with the same step (tag and stable
   classes, :mod:`structcrawl.analysis.pagetree`) under one parent — the
   "identical subtrees" of U-REST's tree-edit clustering, cheaply; their
   XPath addresses every record of the region.  As the issue frames records
   (the subtree around each item of a link collection), most of a region's
   elements must hold a link: a run of paragraphs is text, not a list.
2. Ranking: content coverage, measured on *informative* text only (the
   class's fields, :mod:`structcrawl.analysis.fields`), so menus and footers,
   repeated on every page, never count (U-REST's navigational repetitions),
   averaged over the class's pages (0 where the region is missing) — a
   record's text being its element's and that of the siblings of its tag
   after it up to the next record (a member row and its description row:
   :func:`_spans`) — among
   regions whose records are alike (the largest holds at most
   :data:`MAX_RECORD_SHARE` of the region's text: two layout columns are not
   records).  The best region is the class's record list when it covers
   :data:`MIN_COVERAGE` of that content with :data:`MIN_RECORDS` records or
   more per page (median): category pages, search results, indexes.
3. The record's fields: the text paths inside a record, relative to it,
   ranked as page fields are with records as the units (a label that every
   record repeats, like ``by``, has I(X) = 0).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from lxml import etree

from structcrawl.analysis.fields import MAX_FIELDS, MIN_UNITS, Field, candidates, rank, template_values
from structcrawl.analysis.pagetree import (
    SKIPPED_TAGS,
    TextNode,
    anchor,
    class_tests,
    name_test,
    parse,
    stable_id,
    step,
    tests_step,
    text_nodes,
)

#: Share of a page's informative text the records must hold (median page of the class).
MIN_COVERAGE = 0.5
#: Records per page (median over the pages that have the region) for a class to be a list.
MIN_RECORDS = 3
#: At most this share of a region's informative text in its largest record (mean over pages): records
#: are alike (U-REST's clusters of similar subtrees); a layout column holding the page is not a record.
MAX_RECORD_SHARE = 0.5
#: Regions whose XPath is evaluated on every kept page, the best on the grouped siblings first.
EXACT_REGIONS = 40
#: Coverages closer than this are equal (sums of the same characters in another order).
_TIE = 1e-9
#: Records of a class used to find its record fields (bounded work on huge lists).
RECORD_SAMPLE = 2000
#: HTML characters of one class analysed at most: the export's cost is about linear in them (0.5-1 s per
#: million on this project's machine), and multi-megabyte pages (a Haddock module page: 13 MB) made one
#: class cost up to a minute.  See :func:`analysed_texts`.
CLASS_CHARS = 3_000_000
#: A longer page is analysed on its first this many characters (a page alone never takes the class's budget:
#: CLASS_CHARS / PAGE_CHARS pages at least fit).
PAGE_CHARS = 500_000
DECIMALS = 4


def path_of(el: etree._Element) -> str:
    """The XPath of an element without positions: from its nearest ancestor-or-self with a stable id, or the root."""
    steps: list[str] = []
    node = el
    while node is not None:
        if stable_id(node):
            steps.append(anchor(node))
            break
        parent = node.getparent()
        steps.append(step(node) if parent is not None else f"/{name_test(node.tag)}")
        node = parent
    return "/".join(reversed(steps))


def _kind(el: etree._Element) -> str:
    """What a record's subtree starts with: the step of its first element child ("" for none)."""
    for child in el:
        if isinstance(child.tag, str):
            return step(child)
    return ""


def _region_step(els: Sequence[etree._Element]) -> str:
    """The step selecting every one of ``els`` (same tag): their common step, else the tag with the class
    tests they all pass (:func:`~structcrawl.analysis.pagetree.class_tests`)."""
    steps = {step(e) for e in els}
    if len(steps) == 1:
        return steps.pop()
    common = [set(class_tests(e.get("class") or "")) for e in els]
    shared = set.intersection(*common)
    return tests_step(els[0].tag, tuple(t for t in class_tests(els[0].get("class") or "") if t in shared))


def _continuations(groups: dict[tuple, list[etree._Element]],
                   children: Sequence[etree._Element]) -> dict[tuple, tuple]:
    """Groups of a parent's children that continue another group's records: head key -> continuation key.

    Rows B continue rows A when the class tests cannot tell them apart (same region step) and B rows come
    only right after an A row without a link or another B row, while every A row without a link is followed
    by a B row: an entry with several targets written as a heading row and one row per target (Haddock's
    index: an identifier defined in several modules).  A list whose items merely start differently (an
    optional image) has links in every item and never matches.
    """
    key_of = {c: k for k, g in groups.items() for c in g}
    after = dict(zip(children, children[1:]))
    before = {b: a for a, b in after.items()}
    out: dict[tuple, tuple] = {}
    for ka, heads in groups.items():
        if not ka[1] or ka in out.values():
            continue
        headings = [a for a in heads if not _linked(a)]
        if not headings:
            continue
        for kb, rows in groups.items():
            if kb == ka or kb[0] != ka[0] or kb in out or _region_step(rows) != _region_step(heads):
                continue
            if all(key_of.get(after.get(a)) == kb for a in headings) and all(
                    (p := before.get(b)) is not None and (key_of.get(p) == kb or (key_of.get(p) == ka
                                                                                  and not _linked(p)))
                    for b in rows):
                out[ka] = kb
                break
    return out


def regions(root: etree._Element) -> dict[str, list[etree._Element]]:
    """The page's repeated regions: XPath -> its elements (two or more siblings of one tag whose subtrees
    start alike under a parent, whatever their classes: striped rows ``altColor``/``rowColor`` are one list;
    rows of two kinds, ``memitem:…`` and ``memdesc:…``, are two; heading rows with their continuation rows
    (:func:`_continuations`) are selected by their heads' first child)."""
    found: dict[str, list[etree._Element]] = {}
    for el in root.iter():
        if not isinstance(el.tag, str) or el.tag in SKIPPED_TAGS:
            continue
        groups: dict[tuple[str, str, tuple[str, ...]], list[etree._Element]] = {}
        children = [c for c in el if isinstance(c.tag, str) and c.tag not in SKIPPED_TAGS]
        for child in children:
            # the kind of a row (its class tests of per-page tokens' prefixes) and its first child
            prefixes = tuple(t for t in class_tests(child.get("class") or "") if not t.endswith(" "))
            groups.setdefault((child.tag, _kind(child), prefixes), []).append(child)
        if not any(len(g) >= 2 for g in groups.values()):
            continue
        continued = _continuations(groups, children)
        base = path_of(el)
        for key, g in groups.items():
            if key in continued.values():
                continue  # rows of the records of another group (their spans)
            if key in continued:
                found.setdefault(f"{base}/{_region_step(g)}[*[1][self::{key[1]}]]", []).extend(g)
            elif len(g) >= 2:
                found.setdefault(f"{base}/{_region_step(g)}", []).extend(g)
    return found


def _subtree_chars(root: etree._Element, nodes: Sequence[TextNode], keys: set) -> dict[etree._Element, int]:
    """Informative characters under each element (its own included)."""
    chars: dict[etree._Element, int] = {}
    for node in nodes:
        if node.key in keys:
            chars[node.element] = chars.get(node.element, 0) + len(node.text)
    # bottom-up: reversed document order visits children before parents
    for el in reversed(list(root.iter())):
        n = chars.get(el, 0)
        parent = el.getparent()
        if n and parent is not None:
            chars[parent] = chars.get(parent, 0) + n
    return chars


def _linked(el: etree._Element) -> bool:
    """A record is the subtree around an item of a link collection: it holds a link."""
    return (el.tag == "a" and el.get("href") is not None) or bool(el.xpath(".//a[@href]"))


def _spans(els: Sequence[etree._Element]) -> list[list[etree._Element]]:
    """Each record with its continuations: the siblings of its own tag that follow it up to the next record
    (a Doxygen member row ``tr``, its description row and separator row).  Siblings of another tag end a
    record (a heading is not a record with the paragraphs after it), and every record takes at most as many
    continuations as lie between two records anywhere on the page, so a list's last record does not take
    the rows after the list."""
    chosen = set(els)
    following: list[tuple[list[etree._Element], bool]] = []
    for el in els:
        sibs = []
        sib = el.getnext()
        while sib is not None and sib not in chosen and (sib.tag == el.tag or not isinstance(sib.tag, str)):
            if isinstance(sib.tag, str):
                sibs.append(sib)
            sib = sib.getnext()
        following.append((sibs, sib is not None and sib in chosen))
    gap = max((len(sibs) for sibs, closed in following if closed), default=0)
    return [[el, *sibs[:gap]] for el, (sibs, _) in zip(els, following)]


@dataclass(frozen=True)
class Records:
    xpath: str
    coverage: float
    per_page: tuple[int, ...]  #: records on each page that has the region
    fields: tuple[Field, ...]

    def document(self) -> dict:
        return {
            "xpath": self.xpath,
            "coverage": self.coverage,
            "pages": len(self.per_page),
            "per_page_min": min(self.per_page),
            "per_page_max": max(self.per_page),
            "fields": [f.document() for f in self.fields],
        }


def _score(selected: Sequence[Sequence[etree._Element]], roots: Sequence[etree._Element],
           chars: Sequence[dict], strict: bool = True) -> tuple[float, list[int], float]:
    """U-REST content coverage of a region (mean over all pages), its record count on each page that has it,
    and the share of its records holding a link (continuations included); (-1, [], 0) when its records are
    not alike (see :data:`MAX_RECORD_SHARE`).  ``strict=False``: coverage only (no link or likeness test),
    to rank regions before their exact evaluation."""
    total = largest = 0.0
    counts: list[int] = []
    linked = records = 0
    for els, root, ch in zip(selected, roots, chars):
        page_total = ch.get(root, 0)
        if len(els) < 2 or not page_total:
            continue
        spans = _spans(els)
        with_link = sum(any(map(_linked, span)) for span in spans) if strict else len(spans)
        if 2 * with_link < len(spans):
            continue
        held = [sum(ch.get(e, 0) for e in span) for span in spans]
        if not sum(held):
            continue
        counts.append(len(els))
        linked += with_link
        records += len(spans)
        total += sum(held) / page_total
        largest += max(held) / sum(held)
    if not counts or (strict and largest / len(counts) > MAX_RECORD_SHARE):
        return -1.0, [], 0.0
    return total / len(roots), counts, linked / records


def find_records(roots: Sequence[etree._Element], nodes: Sequence[Sequence[TextNode]],
                 informative_keys: set) -> Records | None:
    """The class's record list (U-REST), or None when its pages are not lists."""
    m = len(roots)
    if m == 0:
        return None
    found = [regions(root) for root in roots]
    chars = [_subtree_chars(root, ns, informative_keys) for root, ns in zip(roots, nodes)]
    # Scored on what each region's XPath selects, as extraction will (it may select more than the siblings
    # grouped under one step: `tr` selects every row, classed or not).  Evaluating every region's XPath on
    # every page is costly (127 s on 20 qtbase class pages), so regions are first ranked on the grouped
    # siblings (one walk per page) and only the EXACT_REGIONS best are evaluated.
    grouped = sorted(set().union(*found))
    ranked = sorted(grouped, key=lambda x: -_score([regs.get(x, []) for regs in found], roots, chars, False)[0])
    best: tuple[float, float, str] | None = None
    best_counts: list[int] = []
    for x in sorted(ranked[:EXACT_REGIONS]):
        compiled = etree.XPath(x)
        score, counts, linked = _score([compiled(root) for root in roots], roots, chars)
        # equal coverage: the records that all hold a link (heads with their continuations, not every row)
        if counts and (best is None or score > best[0] + _TIE or (score >= best[0] - _TIE and linked > best[1])):
            best, best_counts = (score, linked, x), counts
    if best is None or best[0] < MIN_COVERAGE or statistics.median(best_counts) < MIN_RECORDS:
        return None
    coverage, _, x = best
    units: list[list[TextNode]] = []
    per_page: list[int] = []
    for root in roots:
        els = root.xpath(x)
        if len(els) >= 2:
            per_page.append(len(els))
        for el in els[: max(0, RECORD_SAMPLE - len(units))]:
            units.append(text_nodes(el, start="."))
    fields = tuple(rank(candidates(units))[:MAX_FIELDS]) if len(units) >= MIN_UNITS else ()
    return Records(x, round(coverage, DECIMALS), tuple(per_page), fields)


@dataclass(frozen=True)
class ClassData:
    pages: int
    fields: tuple[Field, ...]
    records: Records | None
    note: str | None

    def document(self) -> dict:
        doc: dict = {
            "field_pages": self.pages,
            "fields": [f.document() for f in self.fields],
            "records": self.records.document() if self.records else None,
        }
        if self.note:
            doc["fields_note"] = self.note
        return doc


def analysed_texts(texts: Sequence[str]) -> list[str]:
    """The part of a class's kept pages the analysis reads: each page cut to :data:`PAGE_CHARS`, taken in
    order while the class's total stays within :data:`CLASS_CHARS` (a page that would pass it is left out
    and later, smaller ones still taken).  A cut page is a prefix: lxml closes its open elements, and the
    template's paths (header, first sections, the first records) are near the top; the records counted on
    it are those of the prefix."""
    out: list[str] = []
    used = 0
    for text in texts:
        part = text[:PAGE_CHARS]
        if used + len(part) > CLASS_CHARS:
            continue
        out.append(part)
        used += len(part)
    return out


def analyse(bodies: Mapping[int, Sequence[str]]) -> dict[int, ClassData]:
    """Fields and records of each class from the HTML texts of its kept member pages (within the budget of
    :func:`analysed_texts`)."""
    roots = {cid: [parse(text) for text in analysed_texts(texts)] for cid, texts in bodies.items()}
    nodes = {cid: [text_nodes(r) for r in rs] for cid, rs in roots.items()}
    cands = {cid: candidates(ns) for cid, ns in nodes.items()}
    template = template_values(cands)
    out: dict[int, ClassData] = {}
    for cid in sorted(bodies):
        m = len(roots[cid])
        if m < MIN_UNITS:
            note = ("no page of this class was kept" if m == 0 else
                    "one page: informativeness needs two pages or more of the class")
            out[cid] = ClassData(m, (), None, note)
            continue
        ranked = rank(cands[cid], template.get(cid))
        informative = {f.key for f in ranked}
        records = find_records(roots[cid], nodes[cid], informative)
        note = None if ranked else "no text varies across the class's pages"
        out[cid] = ClassData(m, tuple(ranked[:MAX_FIELDS]), records, note)
    return out
