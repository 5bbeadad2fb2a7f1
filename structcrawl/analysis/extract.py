"""Extraction with a site model's exported XPaths: a page's ``fields`` and ``records``, with parsel.

The pure part of ``structcrawl extract`` and of the harvest's items: the
model document's ``classes[].fields`` and ``classes[].records``
(:mod:`structcrawl.analysis.records`) are evaluated as written on the tree
parsel builds for the page text (``Selector(text=…)``), compiled once per
model with lxml's ``etree.XPath`` — the engine ``Selector.xpath`` runs — so a
page costs one parse and one pass per path.  A field's value is the own text
of the first node it selects that has text (``many`` fields: of every such
node, a list); absent nodes give ``None`` (``[]``), so every item of a class
has the same keys.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lxml import etree

from structcrawl.analysis.pagetree import normalize, own_text, parse


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


def _value(el: etree._Element, spec: FieldSpec) -> str | list[str] | None:
    texts = (t for t in map(_own_text, spec.compiled(el)) if t)
    if spec.many:
        return list(texts)
    return next(texts, None)


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
            self.classes[cid] = ClassSpec(
                _specs(entry.get("fields") or [], f"{where} fields"),
                _compile(records["xpath"], f"{where} records") if records else None,
                _specs(records.get("fields") or [], f"{where} record fields"))

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
        fields = {f.name: _value(root, f) for f in spec.fields}
        records = None
        if spec.records is not None:
            records = [{f.name: _value(rec, f) for f in spec.record_fields} for rec in spec.records(root)
                       if isinstance(rec, etree._Element)]
        return {"fields": fields, "records": records}
