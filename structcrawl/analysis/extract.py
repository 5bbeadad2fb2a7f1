"""Extraction with a site model's exported XPaths: a page's ``fields`` and ``records``, with parsel.

The pure part of ``structcrawl extract`` and of the harvest's items: the
model document's ``classes[].fields`` and ``classes[].records``
(:mod:`structcrawl.analysis.records`) are evaluated as written on the tree
parsel builds for the page text (``Selector(text=…)``): the paths the model
writes are matched in one walk down the tree (:class:`_Walk`), any other with
lxml's ``etree.XPath`` — the engine ``Selector.xpath`` runs — compiled once per
model, to the same nodes.  A field's value is the own text
of the first node it selects that has text (``many`` fields: of every such
node, a list); absent nodes give ``None`` (``[]``), so every item of a class
has the same keys.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lxml import etree

from structcrawl.analysis.pagetree import normalize, own_text, parse

#: Steps of a path the walk takes at most: it recurses once a step, and a page nested 2,000 deep gives
#: fields 2,000 steps long (lxml's XPath takes those).
WALK_STEPS = 200
#: A step the model writes (``pagetree.step``, ``pagetree.xpath``) that the walk matches as XPath does: a
#: tag (an XPath name test as it stands), its whole class attribute at most, then a position at most.
_PLAIN_STEP = re.compile(r'([^\W\d][\w\-.]*)(?:\[@class="([^"]*)"\])?(?:\[([1-9]\d*)\])?(?:/|\Z)', re.ASCII)
#: The start of a path at an element with a stable id (``pagetree.anchor``).
_ANCHOR = re.compile(r'//([^\W\d][\w\-.]*)\[@id="([^"]*)"\](?:/|\Z)', re.ASCII)


@dataclass(frozen=True)
class FieldSpec:
    name: str
    xpath: str
    many: bool
    compiled: etree.XPath


@dataclass(frozen=True)
class ClassSpec:
    fields: tuple[FieldSpec, ...]
    records: etree.XPath | None
    record_fields: tuple[FieldSpec, ...]
    walk: _Walk  #: finds the fields' nodes on a page
    record_walk: _Walk  #: finds the record fields' nodes in a record


def _compile(xpath: Any, where: str) -> etree.XPath:
    try:
        return etree.XPath(xpath)
    except (etree.XPathSyntaxError, TypeError, ValueError):
        raise ValueError(f"{where}: not an XPath 1.0 expression: {xpath!r}") from None


def _specs(entries: Any, where: str) -> tuple[FieldSpec, ...]:
    if not isinstance(entries, (list, tuple)) or not all(
            isinstance(e, Mapping) and isinstance(e.get("name"), str) for e in entries):
        raise ValueError(f"{where} must be a list of {{name, xpath, …}} objects")
    return tuple(FieldSpec(e["name"], e["xpath"], bool(e.get("many")), _compile(e.get("xpath"), f"{where} {e['name']}"))
                 for e in entries)


def _own_text(el: Any) -> str:
    if not isinstance(el, etree._Element):  # a path ending in text() or an attribute: the string itself
        return normalize(str(el))
    # its text and its children's tails, as XPath's text() gives them, without an XPath call per
    # node: on geos source listings (a many-valued field of ~350 lines) extraction took 15.3 ms a page
    # with an XPath call per node, 11.0 ms with this (benchmarks: docs/benchmarks.md, harvest)
    return own_text(el)


def _value(nodes: Sequence[Any], spec: FieldSpec) -> str | list[str] | None:
    texts = (t for t in map(_own_text, nodes) if t)
    if spec.many:
        return list(texts)
    return next(texts, None)


Step = tuple[str, "str | None", "int | None"]  #: tag, class, position


def _plain_path(xpath: str, relative: bool) -> tuple[tuple[str, str] | None, tuple[Step, ...]] | None:
    """(anchor (tag, id) or None, steps) of ``/html/a/b[@class="c"][2]``, ``//div[@id="x"]/a`` or, when
    ``relative``, ``./a/…``; None for any other XPath (or one longer than WALK_STEPS)."""
    anchor = None
    if relative:
        if not xpath.startswith("./"):
            return None
        at = 2
    elif (m := _ANCHOR.match(xpath)) is not None:
        anchor, at = (m.group(1), m.group(2)), m.end()
    elif xpath.startswith("/") and not xpath.startswith("//"):
        at = 1
    else:
        return None
    steps: list[Step] = []
    while at < len(xpath):
        m = _PLAIN_STEP.match(xpath, at)
        trailing = m is not None and m.group(0).endswith("/") and m.end() == len(xpath)
        if m is None or trailing or len(steps) >= WALK_STEPS:
            return None
        steps.append((m.group(1), m.group(2), int(m.group(3)) if m.group(3) else None))
        at = m.end()
    if not steps and anchor is None:
        return None
    return anchor, tuple(steps)


class _Level:
    """The steps at one depth below a start: tag -> [(class, position, the level below, fields ending)]."""

    def __init__(self) -> None:
        self.by_tag: dict[str, list[tuple[str | None, int | None, _Level, list[int]]]] = {}
        self.positional = False

    def branch(self, step: Step) -> tuple[_Level, list[int]]:
        tag, cls, pos = step
        branches = self.by_tag.setdefault(tag, [])
        for c, p, below, ends in branches:
            if c == cls and p == pos:
                return below, ends
        below, ends = _Level(), []
        branches.append((cls, pos, below, ends))
        self.positional = self.positional or pos is not None
        return below, ends


class _Walk:
    """The fields of a class, their nodes found in one walk down the tree for the paths the model writes
    (from the root or from an element with an id, child steps of a tag, an exact class and a position:
    ``analysis.fields``, ``analysis.records``), by lxml's XPath for the others.  An XPath call a field
    walks a page once a field: a Doxygen source listing's twenty fields (line, lineno, comment, keyword,
    …) each its ~350 lines, QDoc's forty from ``//div[@id="qtdocheader"]`` each the whole page for that
    id.  Each field's nodes come in document order, as XPath gives them: steps are matched parent before
    child, siblings in order; an id on two elements leaves the fields below it to XPath."""

    def __init__(self, fields: tuple[FieldSpec, ...], relative: bool) -> None:
        self.fields = fields
        self.other: list[int] = []
        #: start (None: the root, or the record; else an anchor (tag, id)) -> the level below it, and the
        #: fields that are the start itself
        self.starts: dict[tuple[str, str] | None, tuple[_Level, list[int]]] = {}
        self.anchors: dict[tuple[str, str], etree.XPath] = {}
        self.relative = relative
        for i, f in enumerate(fields):
            plain = _plain_path(f.xpath, relative)
            if plain is None:
                self.other.append(i)
                continue
            anchor, steps = plain
            level, ends = self.starts.setdefault(anchor, (_Level(), []))
            if anchor is not None and anchor not in self.anchors:
                self.anchors[anchor] = etree.XPath(f'//{anchor[0]}[@id="{anchor[1]}"]')
            for step in steps:
                level, ends = level.branch(step)
            ends.append(i)

    def nodes(self, el: etree._Element) -> list[list[Any]]:
        """Each field's nodes under ``el`` (a page's root; a record for relative paths)."""
        found: list[list[Any]] = [[] for _ in self.fields]
        fallback = list(self.other)
        for start, (level, ends) in self.starts.items():
            if start is None:
                self._down(el if self.relative else (el.getroottree().getroot(),), level, found)
                continue
            anchored = self.anchors[start](el)
            if len(anchored) > 1:  # an id on two elements: their paths' order is XPath's to give
                fallback.extend(self._fields_below(level, ends))
                continue
            for i in ends:
                found[i].extend(anchored)
            for node in anchored:
                self._down(node, level, found)
        for i in fallback:
            found[i] = self.fields[i].compiled(el)
        return found

    def _fields_below(self, level: _Level, ends: list[int]) -> list[int]:
        out = list(ends)
        for branches in level.by_tag.values():
            for _c, _p, below, below_ends in branches:
                out.extend(self._fields_below(below, below_ends))
        return out

    def _down(self, children: Any, level: _Level, found: list[list[Any]]) -> None:
        counts: dict | None = {} if level.positional else None
        for child in children:
            branches = level.by_tag.get(child.tag)  # a comment's or a PI's tag is a function: never a key
            if branches is None:
                continue
            cls = child.get("class")
            if counts is not None:  # a step's position counts the siblings that pass its tag and class
                tag = child.tag
                counts[tag, None] = counts.get((tag, None), 0) + 1
                if cls is not None:
                    counts[tag, cls] = counts.get((tag, cls), 0) + 1
            for want, pos, below, ends in branches:
                if want is not None and want != cls:
                    continue
                if pos is not None and counts[child.tag, want] != pos:
                    continue
                for i in ends:
                    found[i].append(child)
                if below.by_tag:
                    self._down(child, below, found)


class Extractor:
    """The fields and records of pages of a model's classes."""

    def __init__(self, document: Mapping[str, Any]) -> None:
        """ValueError (one line) when a class's fields or records are malformed."""
        self.classes: dict[int, ClassSpec] = {}
        for entry in document.get("classes") or ():
            cid = int(entry["id"])
            where = f"model class {cid}"
            records = entry.get("records") or {}
            if not isinstance(records, Mapping):
                raise ValueError(f"{where}: records must be an object or null")
            fields = _specs(entry.get("fields") or [], f"{where} fields")
            record_fields = _specs(records.get("fields") or [], f"{where} record fields")
            self.classes[cid] = ClassSpec(
                fields, _compile(records["xpath"], f"{where} records") if records else None, record_fields,
                _Walk(fields, relative=False), _Walk(record_fields, relative=True))

    def extract(self, text: str, class_id: int | None) -> dict[str, Any]:
        """``{"fields": {name: value}, "records": [{name: value}, …] or None}`` of a page of ``class_id``.

        ``records`` is None for a class that is not a list; an unknown class gives no fields.
        """
        return self.extract_tree(None if self.classes.get(class_id) is None else parse(text), class_id)

    def extract_tree(self, root: etree._Element | None, class_id: int | None) -> dict[str, Any]:
        """The same off a page already parsed as parsel parses it (the harvest's tree of the page's
        features: ``core.features.extract_with_tree``)."""
        spec = self.classes.get(class_id) if class_id is not None else None
        if spec is None or root is None:
            return {"fields": {}, "records": None}
        fields = {f.name: _value(nodes, f) for f, nodes in zip(spec.fields, spec.walk.nodes(root))}
        records = None
        if spec.records is not None:
            records = [{f.name: _value(nodes, f) for f, nodes in zip(spec.record_fields, spec.record_walk.nodes(rec))}
                       for rec in spec.records(root) if isinstance(rec, etree._Element)]
        return {"fields": fields, "records": records}
