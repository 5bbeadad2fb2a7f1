"""structcrawl's CSV feed exporter: nested item values as JSON cells, everything else as Scrapy writes it."""

from __future__ import annotations

import csv
import io
import json

from scrapy.exporters import CsvItemExporter

from structcrawl.crawling.exporters import JsonCellCsvItemExporter


def rows_of(exporter_class, items) -> list[dict[str, str]]:
    out = io.BytesIO()
    exporter = exporter_class(out)
    exporter.start_exporting()
    for item in items:
        exporter.export_item(item)
    exporter.finish_exporting()
    return list(csv.DictReader(io.StringIO(out.getvalue().decode("utf-8"))))


ITEM = {"url": "http://127.0.0.1/b/1", "class": 3, "fields": {"title": "Ça, \"quoted\"", "authors": ["A", "B"],
                                                               "price": None},
        "records": [{"title": "x"}, {"title": None}], "tags": ["a", "b"], "referer": None}


def test_nested_values_are_json_cells():
    (row,) = rows_of(JsonCellCsvItemExporter, [ITEM])
    assert json.loads(row["fields"]) == ITEM["fields"]
    assert json.loads(row["records"]) == ITEM["records"]
    assert json.loads(row["tags"]) == ["a", "b"]
    # scalars as Scrapy's own exporter writes them (None an empty cell)
    (plain,) = rows_of(CsvItemExporter, [ITEM])
    for name in ("url", "class", "referer"):
        assert row[name] == plain[name]
    assert plain["fields"].startswith("{'title'")  # what Scrapy alone writes: a Python repr


def test_an_empty_list_is_not_a_null():
    (row, null) = rows_of(JsonCellCsvItemExporter, [{**ITEM, "records": [], "fields": {}}, {**ITEM, "records": None}])
    assert (row["records"], row["fields"], null["records"]) == ("[]", "{}", "")
