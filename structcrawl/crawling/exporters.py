"""Feed exporters for structcrawl's items (Scrapy's ``FEED_EXPORTERS``).

Scrapy 2.19's :class:`~scrapy.exporters.CsvItemExporter` writes a cell with
``str()`` unless the item's field declares a ``serializer``; it joins a list of
strings with ``join_multivalued`` and leaves any other value as it is, so the
harvest's ``fields`` (``{name: value}``) and ``records`` (``[{…}, …]``) came
out as Python reprs (``{'title': 'X'}``, ``None`` inside), which no CSV reader
can decode.  Items are plain dicts (no ``Field`` to carry a serializer), so
the exporter itself encodes them: a dict, list or tuple becomes one JSON cell
(``json.loads`` gives the item's value back; an empty list stays ``[]``, apart
from an empty cell for null, and a joined list of strings could not be split
again when a value holds the separator); every other value is written as
Scrapy writes it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from scrapy.exporters import CsvItemExporter


class JsonCellCsvItemExporter(CsvItemExporter):
    """CSV with nested values (dicts, lists) as JSON text in their cell."""

    def serialize_field(self, field: Any, name: str, value: Any) -> Any:
        if "serializer" not in field and isinstance(value, (Mapping, list, tuple)):
            return json.dumps(value, ensure_ascii=False)
        return super().serialize_field(field, name, value)
