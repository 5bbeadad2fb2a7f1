"""Extraction with a site model's exported XPaths: a page's ``fields`` and ``records``, with parsel.

The pure part of ``structcrawl extract`` and of the harvest's items: the
model document's ``classes[].fields`` and ``classes[].records``
(:mod:`structcrawl.analysis.records`) are evaluated as written with
``parsel.Selector.xpath`` on the page text.  A field's value is the own text
of the first node it selects that has text (``many`` fields: of every such
node, a list); absent nodes give ``None`` (``[]``), so every item of a class
has the same keys.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from parsel import Selector

from structcrawl.analysis.pagetree import normalize


@dataclass(frozen=True)
class FieldSpec:
    name: str
    xpath: str
    many: bool


@dataclass(frozen=True)
class ClassSpec:
    fields: tuple[FieldSpec, ...]
    records: str | None
    record_fields: tuple[FieldSpec, ...]


def _specs(entries: Sequence[Mapping[str, Any]] | None) -> tuple[FieldSpec, ...]:
    return tuple(FieldSpec(e["name"], e["xpath"], bool(e.get("many"))) for e in entries or ())


def _own_text(sel: Selector) -> str:
    return normalize(" ".join(sel.xpath("text()").getall()))


def _value(sel: Selector, spec: FieldSpec) -> str | list[str] | None:
    texts = (t for t in map(_own_text, sel.xpath(spec.xpath)) if t)
    if spec.many:
        return list(texts)
    return next(texts, None)


class Extractor:
    """The fields and records of pages of a model's classes."""

    def __init__(self, document: Mapping[str, Any]) -> None:
        self.classes: dict[int, ClassSpec] = {}
        for entry in document.get("classes") or ():
            records = entry.get("records") or {}
            self.classes[int(entry["id"])] = ClassSpec(
                _specs(entry.get("fields")), records.get("xpath"), _specs(records.get("fields")))

    def has_data(self, class_id: int | None) -> bool:
        spec = self.classes.get(class_id) if class_id is not None else None
        return spec is not None and bool(spec.fields or spec.records)

    def extract(self, text: str, class_id: int | None) -> dict[str, Any]:
        """``{"fields": {name: value}, "records": [{name: value}, …] or None}`` of a page of ``class_id``.

        ``records`` is None for a class that is not a list; an unknown class gives no fields.
        """
        spec = self.classes.get(class_id) if class_id is not None else None
        if spec is None:
            return {"fields": {}, "records": None}
        sel = Selector(text=text if text.strip() else "<html></html>")
        fields = {f.name: _value(sel, f) for f in spec.fields}
        records = None
        if spec.records:
            records = [{f.name: _value(rec, f) for f in spec.record_fields} for rec in sel.xpath(spec.records)]
        return {"fields": fields, "records": records}
