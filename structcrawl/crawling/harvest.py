"""The harvest spider's arguments and settings, the ``like`` page, and the feeds of a resumable harvest.

``scrapy crawl harvest`` and ``structcrawl harvest`` both go through
:func:`harvest_config`, so a bad model file, an unknown class id or a ``like``
page that fits no class is the same one-line message everywhere.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import urllib.error
import urllib.request
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, BinaryIO

from structcrawl import __version__
from structcrawl.analysis.classify import Classifier
from structcrawl.analysis.extract import Extractor
from structcrawl.crawling.arguments import parse_bool, parse_int
from structcrawl.sitemodel import LoadedModel, ModelFormatError, load_model

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

#: ``-a`` arguments of the harvest spider.
KNOWN_ARGUMENTS = ("model", "classes", "like", "job", "fresh", "max_pages")
_LIKE_TIMEOUT = 30.0
_LIKE_MAX_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class HarvestConfig:
    model: LoadedModel
    model_path: str
    model_digest: str
    targets: tuple[int, ...]
    like: tuple[str, ...]  #: example pages, fetched first (they are targets)
    job: str
    fresh: bool
    max_pages: int
    explore_share: float
    explore_min: int
    body: bool
    reuse: bool  #: read the pages the model's structure crawl fetched from the store (STRUCTCRAWL_HARVEST_REUSE)
    extractor: Extractor  #: the item's ``fields`` and ``records``, from the model's XPaths
    summary: str | None  #: the JSON file of the harvest's figures per class (STRUCTCRAWL_HARVEST_SUMMARY)
    trap_pages: int
    max_inflight: int

    def store_parameters(self) -> dict[str, Any]:
        return {"model": self.model_digest, "targets": list(self.targets)}


def _split(value: Any) -> list[str]:
    return [v.strip() for v in str(value or "").replace(" ", ",").split(",") if v.strip()]


def classify_like(classifier: Classifier, url: str) -> int:
    """The class of the example page at ``url`` (fetched now); ValueError when it cannot be read or fits no class."""
    request = urllib.request.Request(url, headers={"User-Agent": f"structcrawl-harvest/{__version__}"})
    try:
        with urllib.request.urlopen(request, timeout=_LIKE_TIMEOUT) as resp:
            body, final, ctype = resp.read(_LIKE_MAX_BYTES), resp.geturl(), resp.headers.get("Content-Type")
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise ValueError(f"cannot fetch the like page {url}: {getattr(exc, 'reason', exc)}") from None
    if ctype and "html" not in ctype.lower():
        raise ValueError(f"the like page {url} is not HTML (Content-Type: {ctype})")
    cls, _cost = classifier.classify(body, final, ctype)
    if cls is None:
        raise ValueError(f"the like page {url} fits no class of the model: name the classes with classes=ID,…")
    return cls


def harvest_config(arguments: Mapping[str, Any], settings: BaseSettings) -> HarvestConfig:
    """Spider arguments over settings; ValueError with a one-line message for the user."""
    unknown = sorted(set(arguments) - set(KNOWN_ARGUMENTS) - {"_job"})
    if unknown:
        raise ValueError(f"unknown spider argument(s) {', '.join(unknown)}; known: {', '.join(KNOWN_ARGUMENTS)}")
    path = arguments.get("model")
    if not path:
        raise ValueError("the model spider argument is required, e.g. -a model=site.model.json")
    try:
        model = load_model(path)
    except ModelFormatError as exc:
        raise ValueError(str(exc)) from None
    with open(path, "rb") as fh:
        digest = hashlib.sha256(fh.read()).hexdigest()[:16]
    targets: list[int] = []
    for text in _split(arguments.get("classes")):
        try:
            targets.append(int(text))
        except ValueError:
            raise ValueError(f"classes must be class ids separated by commas, got {text!r}") from None
    unknown_ids = sorted(set(targets) - set(model.classes))
    if unknown_ids:
        raise ValueError(f"unknown class id{'s' if len(unknown_ids) > 1 else ''} {', '.join(map(str, unknown_ids))}"
                         f" (the model's classes: {', '.join(map(str, sorted(model.classes)))})")
    like = tuple(_split(arguments.get("like")))
    classifier = Classifier(model)
    for url in like:
        targets.append(classify_like(classifier, url))
    if not targets:
        raise ValueError("no target classes: give classes=ID,… or like=URL")
    share = settings.getfloat("STRUCTCRAWL_HARVEST_EXPLORE")
    if not 0 <= share <= 1:
        raise ValueError(f"STRUCTCRAWL_HARVEST_EXPLORE must be between 0 and 1, got {share}")
    job = str(arguments.get("job") or f"{model.document['crawl'].get('job') or 'site'}-harvest")
    inflight = settings.getint("STRUCTCRAWL_MAX_INFLIGHT")
    return HarvestConfig(
        model=model, model_path=str(path), model_digest=digest,
        targets=tuple(sorted(set(targets))), like=like, job=job,
        fresh=parse_bool(arguments.get("fresh") or False, "fresh"),
        max_pages=parse_int(arguments.get("max_pages") or settings.get("STRUCTCRAWL_MAX_PAGES"), "max_pages", 0),
        explore_share=share,
        explore_min=parse_int(settings.getint("STRUCTCRAWL_HARVEST_EXPLORE_MIN"), "STRUCTCRAWL_HARVEST_EXPLORE_MIN", 0),
        body=parse_bool(settings.get("STRUCTCRAWL_HARVEST_BODY"), "STRUCTCRAWL_HARVEST_BODY"),
        reuse=parse_bool(settings.get("STRUCTCRAWL_HARVEST_REUSE"), "STRUCTCRAWL_HARVEST_REUSE"),
        extractor=Extractor(model.document),
        summary=settings.get("STRUCTCRAWL_HARVEST_SUMMARY") or None,
        trap_pages=parse_int(settings.getint("STRUCTCRAWL_TRAP_PAGES"), "STRUCTCRAWL_TRAP_PAGES", 0),
        max_inflight=inflight if inflight > 0 else 2 * max(1, settings.getint("CONCURRENT_REQUESTS")),
    )


def _local_feeds(settings: BaseSettings) -> Iterator[tuple[str, str, str, str]]:
    """(URI, path, format, encoding) of the local JSON-lines and CSV files of ``FEEDS`` that exist:
    the feeds a resumed harvest can read back.  The format is ``jsonlines`` or ``csv`` by its exporter:
    ``scrapy crawl -o out.jsonl`` names it ``jsonl`` (``.jl``: ``jl``), one exporter under three names."""
    from scrapy.exporters import CsvItemExporter, JsonLinesItemExporter
    from scrapy.utils.misc import load_object

    exporters = settings.getwithbase("FEED_EXPORTERS")
    for uri, options in settings.getdict("FEEDS").items():
        uri, options = str(uri), options or {}
        path = uri[len("file://"):] if uri.startswith("file://") else uri
        exporter = exporters.get(options.get("format"))
        if "://" in path or not exporter or not os.path.isfile(path):
            continue
        exporter = load_object(exporter)
        fmt = ("jsonlines" if issubclass(exporter, JsonLinesItemExporter)
               else "csv" if issubclass(exporter, CsvItemExporter) else None)
        if fmt:
            yield uri, path, fmt, options.get("encoding") or settings.get("FEED_EXPORT_ENCODING") or "utf-8"


def written_urls(settings: BaseSettings, urls: Iterable[str]) -> set[str]:
    """Those of ``urls`` that an item of the local JSON-lines or CSV feeds of ``FEEDS`` already holds.

    A resumed harvest asks this about the few target pages whose item Scrapy got but the store had
    not marked written when the last run was killed: found, the item is not emitted again.  Other
    feed formats and storages cannot be read back: their items are emitted again.
    """
    wanted = set(urls)
    found: set[str] = set()
    for _uri, path, fmt, encoding in _local_feeds(settings):
        with open(path, encoding=encoding, newline="") as fh:
            if fmt == "csv":
                found.update(row.get("url") for row in csv.DictReader(fh))
                continue
            for line in fh:
                try:
                    found.add(json.loads(line).get("url"))
                except (ValueError, AttributeError):
                    continue
    return wanted & found


def mend_torn_feeds(settings: BaseSettings) -> list[str]:
    """Cut the torn last record a ``kill -9`` left in the local JSON-lines and CSV feeds; the paths cut.

    Linux checks for a fatal signal between the pages a ``write`` copies, so a
    kill can stop an item's write part-way: the file then ends mid-record, and
    the resumed run's first item, appended, would continue that line (two
    items on one line, neither readable).  The torn item was not marked emitted
    (the mark follows the flush), so the resumed run writes it again, whole.
    """
    cut = []
    for _uri, path, fmt, encoding in _local_feeds(settings):
        with open(path, "rb+") as fh:
            end = _end_of_last_record(fh, fmt, encoding)
            if end < fh.seek(0, os.SEEK_END):
                fh.truncate(end)
                cut.append(path)
    return cut


def continue_csv_feeds(settings: BaseSettings) -> None:
    """A resumed harvest appends to local CSV feeds that hold rows already: no second header line.

    Scrapy's CSV exporter writes the header at the start of every run; in the
    middle of a file it reads back as one more row, a page whose URL is "url".
    """
    feeds = {str(uri): dict(options or {}) for uri, options in settings.getdict("FEEDS").items()}
    going_on = [uri for uri, path, fmt, _encoding in _local_feeds(settings)
                if fmt == "csv" and os.path.getsize(path) > 0 and not feeds[uri].get("overwrite")]
    if not going_on:
        return
    for uri in going_on:
        feeds[uri]["item_export_kwargs"] = {**feeds[uri].get("item_export_kwargs", {}), "include_headers_line": False}
    settings.set("FEEDS", feeds, priority=settings.getpriority("FEEDS") or "spider")


def _end_of_last_record(fh: BinaryIO, fmt: str, encoding: str) -> int:
    """The byte offset just after the last whole record of a JSON-lines or CSV file."""
    fh.seek(0)
    offset = whole = 0
    if fmt == "jsonlines":  # JSON escapes newlines: a record is whole once its line ends
        for raw in fh:
            offset += len(raw)
            if raw.endswith(b"\n"):
                whole = offset
        return whole
    line_ended = False

    def lines() -> Iterator[str]:
        nonlocal offset, line_ended
        for raw in fh:
            offset += len(raw)
            line_ended = raw.endswith(b"\n")
            yield raw.decode(encoding)

    width = None
    try:
        # a quoted cell (a page body) may hold newlines: a row is whole when the reader closes it at a
        # line's end with the header's width; strict, a file ending inside quotes is an error
        for row in csv.reader(lines(), strict=True):
            width = len(row) if width is None else width
            if line_ended and len(row) == width:
                whole = offset
    except (csv.Error, UnicodeDecodeError):
        pass
    return whole


def flush_feeds(crawler: Crawler) -> None:
    """Push what Scrapy's feed exporters buffered to their files (the OS keeps it through a kill -9).

    Called after each item of a harvest kept in a store, before the item is
    recorded as emitted: a resumed harvest then emits only the items not
    already written.  Reaches into FeedExporter's slots (Scrapy 2.19: ``slots``,
    each with ``file`` and its ``exporter``; the CSV exporter's ``stream`` wraps the file).
    """
    from scrapy.extensions.feedexport import FeedExporter

    for ext in crawler.extensions.middlewares:
        if not isinstance(ext, FeedExporter):
            continue
        for slot in ext.slots:
            if not getattr(slot, "_exporting", False):
                continue
            stream = getattr(slot.exporter, "stream", None)
            for out in (stream, slot.file):
                if out is not None and hasattr(out, "flush"):
                    out.flush()
