"""``structcrawl extract MODEL.json INPUT...``: the fields and records of each page, as JSON lines.

Inputs as for ``structcrawl classify`` (http(s) URLs, local HTML files with
``--base-url``/``--root``, ``-`` for stdin).  Each page is classified with the
model, then its class's exported XPaths (``classes[].fields``,
``classes[].records``) are evaluated with parsel
(:class:`structcrawl.analysis.extract.Extractor`)::

    {"input": "…", "url": "…", "class": 6, "fields": {"book-h1": "Dune", …}, "records": null}

A page no class fits gives ``"class": null`` and empty fields; an input that
cannot be read gives an ``"error"`` message and exit status 1.
"""

from __future__ import annotations

import argparse
from functools import partial

from w3lib.encoding import html_to_unicode

from structcrawl.analysis.classify import Classifier
from structcrawl.analysis.extract import Extractor
from structcrawl.commands.classify import InputError, PageReader, is_url, run_pages
from structcrawl.commands.errors import CommandError
from structcrawl.core.urls import normalize_url
from structcrawl.sitemodel import LoadedModel


def extract_one(classifier: Classifier, extractor: Extractor, reader: PageReader, item: str) -> dict:
    """One output record (never raises for a bad input)."""
    record: dict = {"input": item, "url": normalize_url(item) or item if is_url(item) else None, "class": None,
                    "fields": {}, "records": None}
    try:
        final, body, ctype = reader.read(item)
    except InputError as exc:
        record["error"] = str(exc)
        return record
    url = normalize_url(final) or final
    record["url"] = url
    cls, _cost = classifier.classify(body, url, ctype)
    record["class"] = cls
    _encoding, text = html_to_unicode(ctype, body)
    record.update(extractor.extract(text, cls))
    return record


def _record_of(model: LoadedModel, reader: PageReader):
    try:
        extractor = Extractor(model.document)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    return partial(extract_one, Classifier(model), extractor, reader)


def run(args: argparse.Namespace) -> int:
    return run_pages(args, _record_of, "extract")
