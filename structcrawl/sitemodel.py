"""Site model JSON: export of a crawl's model, and loading it back as a classifier.

Pure Python, no Scrapy import: the spider calls :func:`model_document` and
:func:`write_model` when the crawl closes, ``structcrawl classify`` calls
:func:`load_model`.  The format is documented in ``docs/model-format.md``.

Determinism: the document is a function of the crawl state only (the
explorer, the kept member tag paths and the crawl figures passed in), ids are
the model's class ids, every list has a defined order and the text is written
with ``sort_keys=True``, so two exports of the same state are byte-identical.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Mapping
from urllib.parse import urlsplit

from structcrawl.core.features import PageFeatures
from structcrawl.core.model import FINGERPRINT_OCCURRENCE, Costs, Page, PageClass, SiteModel
from structcrawl.core.placement import from_document as placement_from_document
from structcrawl.core.placement import to_document as placement_document
from structcrawl.core.spelling import PathSpeller
from structcrawl.files import atomic_write

logger = logging.getLogger(__name__)

FORMAT = "structcrawl-site-model"
FORMAT_VERSION = 2

#: Defaults of the export's own knobs (the spider passes the STRUCTCRAWL_* settings).
DEFAULT_SAMPLES = 5
DEFAULT_FINGERPRINT_PAGES = 100
DEFAULT_OCCURRENCE = FINGERPRINT_OCCURRENCE
#: Member pages per class whose HTML is kept for its fields and records (Vertex keeps a sample too).
DEFAULT_FIELD_PAGES = 20
#: MDL figures are rounded to this many decimals (sums of 0.8s are not exact in binary).
MDL_DECIMALS = 4


class ModelFormatError(ValueError):
    """The file is not a site model this version of structcrawl can read."""


# ---------------------------------------------------------------------------
# Member tag paths, kept on the crawler side (the explorer does not keep them)
# ---------------------------------------------------------------------------


class TagPathSamples:
    """Tag-path sets of up to ``per_class`` members of each class, for fingerprints and samples.

    Memory is bounded: at most ``per_class`` sets per class, and identical
    sets (pages of one template usually have the same set of tag paths) are
    stored once.
    """

    def __init__(self, per_class: int = DEFAULT_FINGERPRINT_PAGES) -> None:
        self.per_class = per_class
        self.by_url: dict[str, frozenset[str]] = {}
        self._per_class: Counter = Counter()
        self._interned: dict[frozenset[str], frozenset[str]] = {}

    def keep(self, pages: Iterable[PageFeatures], page_class: Mapping[str, int]) -> None:
        """After a model update: keep the tag paths of the pages just put into classes."""
        for feats in pages:
            cid = page_class.get(feats.url)
            if cid is None or feats.url in self.by_url or self._per_class[cid] >= self.per_class:
                continue
            paths = self._interned.setdefault(feats.tag_paths, feats.tag_paths)
            self.by_url[feats.url] = paths
            self._per_class[cid] += 1

    def get(self, url: str) -> frozenset[str] | None:
        return self.by_url.get(url)

    def __len__(self) -> int:
        return len(self.by_url)


class PageBodies:
    """The HTML texts of up to ``per_class`` members of each class, for its fields and records.

    A page is chosen at the model step that puts it into a class, while that
    class has fewer than ``per_class`` chosen pages; the choice depends only on
    the steps, so a resumed crawl (which replays them) and ``structcrawl
    export`` choose the same pages and read their texts from the crawl store.
    """

    def __init__(self, per_class: int = DEFAULT_FIELD_PAGES) -> None:
        self.per_class = per_class
        self.texts: dict[str, str | None] = {}  #: chosen page -> its text (None until read)
        self._per_class: Counter = Counter()

    def keep(self, urls: Iterable[str], page_class: Mapping[str, int],
             texts: Mapping[str, str] | None = None) -> list[str]:
        """After a model step: choose among the pages it modelled; the URLs chosen."""
        chosen = []
        for url in urls:
            cid = page_class.get(url)
            if cid is None or url in self.texts or self._per_class[cid] >= self.per_class:
                continue
            self._per_class[cid] += 1
            self.texts[url] = texts.get(url) if texts is not None else None
            chosen.append(url)
        return chosen

    def get(self, url: str) -> str | None:
        return self.texts.get(url)


def storable_text(text: str) -> str:
    """``text`` as it comes back from UTF-8 storage (lone surrogates replaced), so every export sees the same."""
    return text.encode("utf-8", "replace").decode("utf-8")


class PageTitles(dict):
    """Page URL -> its title (:attr:`PageFeatures.title`), kept on the crawler side for the samples'
    titles: the explorer keeps no text.  Fed the pages of every model step, live or replayed from
    the store, so the spider's export and the store's are the same."""

    def keep(self, pages: Iterable[PageFeatures]) -> None:
        for feats in pages:
            if feats.title:
                self[feats.url] = feats.title


# ---------------------------------------------------------------------------
# Export
# ---------------------------------------------------------------------------


def _round(x: float) -> float:
    return round(float(x), MDL_DECIMALS) + 0.0  # + 0.0: never "-0.0"


def _member_schemas(model: SiteModel) -> dict[int, list[tuple[frozenset[str], int]]]:
    """Class id -> its members' distinct schemas with how many members have each."""
    out: dict[int, list[tuple[frozenset[str], int]]] = {}
    for schema, counts in model.schema_classes.items():
        for cid, n in counts.items():
            out.setdefault(cid, []).append((schema, n))
    return out


def _class_entry(
    cls: PageClass,
    member_schemas: list[tuple[frozenset[str], int]],
    tag_paths: Mapping[str, frozenset[str]] | TagPathSamples,
    members: bool,
    samples: int,
    fingerprint_pages: int,
    occurrence: float,
    titles: Mapping[str, str],
) -> dict[str, Any]:
    from structcrawl.analysis.fingerprint import fingerprint

    getter = tag_paths.get
    kept: list[tuple[str, frozenset[str]]] = []
    for url in cls.members:  # membership order: part of the crawl state
        paths = getter(url)
        if paths is not None:
            kept.append((url, paths))
            if len(kept) >= fingerprint_pages:
                break
    tag_counts = getattr(cls, "tag_counts", None)
    if tag_counts:
        # the class keeps tag-path counts over all its members: the fingerprint of all of them
        n = cls.size
        fp = sorted(p for p, c in tag_counts.items() if c / n >= occurrence)
        fp_pages = n
    else:
        sets = [p for _, p in kept]
        fp = sorted(fingerprint(sets, occurrence)) if sets else []
        fp_pages = len(sets)
    sample_urls = _samples(cls, kept, samples)
    schema = sorted(cls.path_counts)
    index = {p: i for i, p in enumerate(schema)}
    pattern = _pattern(cls.members)
    entry: dict[str, Any] = {
        "id": cls.id,
        "size": cls.size,
        "schema": schema,
        "path_counts": {p: int(n) for p, n in cls.path_counts.items()},
        "schema_total": cls.schema_total,
        "url_total": cls.url_total,
        "fingerprint": fp,
        "fingerprint_pages": fp_pages,
        "samples": sample_urls,
        "sample_titles": {u: titles[u] for u in sample_urls if titles.get(u)},
        "url_pattern": pattern,
        "link_pattern": _link_pattern(pattern, cls.members),
        # what classification compares a page with (SiteModel.classify): each distinct member
        # schema as indices into "schema", with its member count
        "member_schemas": sorted(
            ({"paths": sorted(index[p] for p in ms), "members": int(n)} for ms, n in member_schemas),
            key=lambda e: e["paths"],
        ),
    }
    if tag_counts:
        entry["tag_counts"] = {p: int(c) for p, c in tag_counts.items()}
    if members:
        entry["members"] = sorted(cls.members)
    return entry


def _samples(cls: PageClass, kept: list[tuple[str, frozenset[str]]], k: int) -> list[str]:
    """Up to ``k`` structurally diverse members (Vertex weighted greedy), topped up in membership order."""
    chosen: list[str] = []
    if kept and k > 0:
        try:
            from structcrawl.analysis.samples import choose_samples
        except ImportError:  # pragma: no cover - samples.py is part of the package
            choose_samples = None
        if choose_samples is not None:
            chosen = [kept[i][0] for i in choose_samples([p for _, p in kept], k=k)]
    for url in cls.members:
        if len(chosen) >= k:
            break
        if url not in chosen:
            chosen.append(url)
    return chosen


def _pattern(urls: list[str]) -> str | None:
    if not urls:
        return None
    try:
        from structcrawl.analysis.urlpattern import url_pattern
    except ImportError:  # pragma: no cover
        return None
    try:
        return url_pattern(sorted(urls))
    except (ValueError, AssertionError):
        return None


def _link_pattern(pattern: str | None, urls: list[str]) -> str | None:
    if pattern is None:
        return None
    from structcrawl.analysis.urlpattern import absolute_pattern

    return absolute_pattern(pattern, urls)


def model_document(
    explorer: Any,
    *,
    crawl: Mapping[str, Any] | None = None,
    parameters: Mapping[str, Any] | None = None,
    tag_paths: Mapping[str, frozenset[str]] | TagPathSamples | None = None,
    members: bool = False,
    samples: int = DEFAULT_SAMPLES,
    fingerprint_pages: int = DEFAULT_FINGERPRINT_PAGES,
    occurrence: float = DEFAULT_OCCURRENCE,
    bodies: Mapping[str, str] | PageBodies | None = None,
    field_pages: int = DEFAULT_FIELD_PAGES,
    titles: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The JSON-ready site model of an :class:`~structcrawl.core.explorer.Explorer`.

    ``bodies``: the HTML text of member pages (URL -> text); each class's
    ``fields`` and ``records`` come from its first ``field_pages`` members
    (membership order) that have one (:mod:`structcrawl.analysis.records`).

    ``crawl``: figures of the crawl that the explorer does not know (pages
    requested/fetched, stop reason, timestamps …), merged over the ones it
    does (pages modelled, failed, model updates, stability).  ``parameters``:
    extra parameters (stop rule, scope …) merged over the model's own
    (strategy, batch size, dt, costs, stability rule).  ``titles``: page URL ->
    its title (:class:`PageTitles`), for the samples' titles.
    """
    model: SiteModel = explorer.model
    stability = explorer.stability
    start_url = explorer.start_url
    if tag_paths is None:
        tag_paths = getattr(explorer, "tag_paths", None) or {}

    crawl_doc: dict[str, Any] = {
        "pages_modelled": len(model.pages),
        "pages_failed": len(explorer.failed),
        "redirects": len(explorer.aliases),
        "model_updates": explorer.updates,
        "stable": bool(explorer.stable),
        "stability_reason": stability.reason,
        "queue_urls": explorer.frontier.pending_urls(),
    }
    crawl_doc.update(crawl or {})

    params: dict[str, Any] = {
        "strategy": explorer.frontier.strategy,
        "batch_size": explorer.frontier.batch_size,
        "dt": explorer.dt,
        "costs": asdict(model.costs),
        "stability": {
            "window": stability.window,
            "epsilon": stability.epsilon,
            "min_pages": stability.min_pages,
        },
    }
    params.update(parameters or {})

    member_schemas = _member_schemas(model)
    classes = [
        _class_entry(model.classes[cid], member_schemas.get(cid, []), tag_paths, members, samples,
                     fingerprint_pages, occurrence, titles or {})
        for cid in sorted(model.classes)
    ]
    for entry, data in zip(classes, _class_data(model, bodies or {}, field_pages)):
        entry.update(data)
    links = [
        {"source": src, "path": path, "target": dst, "count": count}
        for (src, path, dst), count in sorted(explorer.class_links().items())
    ]
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "site": {"start_url": start_url, "host": urlsplit(start_url).netloc},
        "crawl": crawl_doc,
        "parameters": params,
        "mdl": {
            "model_bits": _round(model.model_bits),
            "data_bits": _round(model.data_bits),
            "total": _round(model.mdl),
        },
        "classes": classes,
        "class_links": links,
        # where classification places a page whose links are all the site's chrome: the distinct tag-path
        # sets of the members with links beyond it and of those without, with their classes
        # (structcrawl.core.placement)
        "placement": placement_document(model.reference(), model.bare()),
        # online refinement (structcrawl.core.refine, UXClust §3.3 during the crawl): which class was folded into
        # which, after which model update, at which fingerprint similarity; in the order they happened
        # the template ids kept in collection paths ("place#id", structcrawl.core.spelling), the
        # layout wrappers dropped from them ([place, wrapper steps]) and the class tokens that mark
        # where a page sits in a navigation tree ([tag, [tokens], [marker tokens]]): a page is
        # spelled with them before it is classified
        "spelling": {"ids": sorted(model.speller.kept),
                     "wrappers": [list(w) for w in sorted(model.speller.wrappers)],
                     "markers": [[tag, list(tokens), list(marker)]
                                 for tag, tokens, marker in sorted(model.speller.markers)]},
        "merges": [
            {"kept": int(m.kept), "merged": int(m.merged), "similarity": float(m.similarity), "update": int(m.update)}
            for m in getattr(explorer, "merges", ())
        ],
        "history": [
            {
                "update": int(pt.update),
                "pages": int(pt.pages),
                "classes": int(pt.classes),
                "mdl": _round(pt.mdl),
                # no "queue" yet: a resumed crawl replays without its in-flight batches, so the points
                # before the resume would count them as waiting, and the export (which replays them as
                # popped) would differ from the spider's; see docs/model-format.md
            }
            for pt in getattr(explorer, "history", ())
        ],
        # the stop rule's own measure, one object per prediction check (structcrawl.core.stability.Check):
        # the report plots it against parameters.stability.epsilon to show why the crawl stopped where it did
        "checks": [asdict(check) for check in getattr(stability, "checks", ())],
    }


def _class_data(model: SiteModel, bodies: Mapping[str, str] | PageBodies,
                field_pages: int) -> list[dict[str, Any]]:
    """Each class's ``field_pages``, ``fields`` and ``records`` (and ``fields_note``), in class id order."""
    from structcrawl.analysis.records import analyse

    texts: dict[int, list[str]] = {}
    for cid in sorted(model.classes):
        kept = texts[cid] = []
        for url in model.classes[cid].members:
            text = bodies.get(url)
            if text is not None:
                kept.append(text)
                if len(kept) >= field_pages:
                    break
    data = analyse(texts)
    return [data[cid].document() for cid in sorted(model.classes)]


def dumps(document: Mapping[str, Any]) -> str:
    """The canonical text of a model document (sorted keys, 2-space indent, UTF-8, final newline)."""
    return json.dumps(document, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_model(document: Mapping[str, Any], path: str | os.PathLike[str]) -> None:
    """Write atomically: a reader never sees a half-written model (temp file + rename; mode as
    the umask gives).

    A model file with more pages modelled than ``document`` is not lost: it is
    kept as ``PATH.prev`` and a warning names both counts (a rerun with a lower
    ceiling, or a crawl that found nothing, would otherwise silently replace a
    better model).
    """
    text = dumps(document).encode("utf-8")
    path = os.fspath(path)
    pages = int((document.get("crawl") or {}).get("pages_modelled") or 0)
    before = _pages_modelled(path)
    if before is not None and before > pages:
        os.replace(path, path + ".prev")
        logger.warning(
            "%s had a model of %d pages; the new one has %d: the old model is kept as %s.prev",
            path, before, pages, path,
        )
    with atomic_write(path, binary=True, prefix=".model-") as fh:
        fh.write(text)


def _pages_modelled(path: str) -> int | None:
    """Pages modelled by the site model at ``path``; None when there is none (or it is not a model)."""
    try:
        with open(path, "rb") as fh:
            document = json.loads(fh.read())
        return int(document["crawl"]["pages_modelled"]) if document.get("format") == FORMAT else None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


# ---------------------------------------------------------------------------
# Load
# ---------------------------------------------------------------------------


@dataclass
class ClassInfo:
    """What the model file says about one class (besides its schema)."""

    id: int
    size: int
    samples: list[str] = field(default_factory=list)
    url_pattern: str | None = None
    fingerprint: list[str] = field(default_factory=list)
    members: list[str] | None = None


class LoadedModel:
    """A site model read from JSON: classifies pages with the core's MDL cost.

    ``site_model`` is a :class:`structcrawl.core.model.SiteModel` rebuilt from the
    exported class schemas and statistics (members only when they were
    exported), so :meth:`classify` is exactly ``SiteModel.classify``.
    """

    def __init__(self, document: dict[str, Any], site_model: SiteModel, classes: dict[int, ClassInfo]) -> None:
        self.document = document
        self.site_model = site_model
        self.classes = classes

    @property
    def start_url(self) -> str:
        return self.document["site"]["start_url"]

    @property
    def costs(self) -> Costs:
        return self.site_model.costs

    def classify(self, schema: frozenset[str], url_count: int) -> tuple[int | None, float]:
        return self.site_model.classify(schema, url_count)

    def classify_page(self, feats: PageFeatures) -> tuple[int | None, float]:
        return self.site_model.classify(*self.site_model.spelled(feats.collections), feats.element_paths)


def _fail(source: str, message: str) -> ModelFormatError:
    return ModelFormatError(f"{source}: {message}")


def _expect(cond: bool, source: str, message: str) -> None:
    if not cond:
        raise _fail(source, message)


def parse_model(document: Any, source: str = "<model>") -> LoadedModel:
    """Validate a decoded model document and rebuild the classifier."""
    _expect(isinstance(document, dict), source, "not a structcrawl site model (expected a JSON object)")
    _expect(
        document.get("format") == FORMAT,
        source,
        f"not a structcrawl site model (format is {document.get('format')!r}, expected {FORMAT!r})",
    )
    version = document.get("format_version")
    _expect(
        isinstance(version, int) and not isinstance(version, bool),
        source,
        f"bad format_version {version!r} (expected an integer)",
    )
    _expect(
        version == FORMAT_VERSION,
        source,
        f"unsupported format_version {version} (this structcrawl {_version()} reads version {FORMAT_VERSION})",
    )
    for key in ("site", "parameters", "mdl"):
        _expect(isinstance(document.get(key), dict), source, f"missing or malformed {key!r} section")
    site = document["site"]
    _expect(isinstance(site.get("start_url"), str), source, "site.start_url missing")
    costs_doc = document["parameters"].get("costs", {})
    _expect(isinstance(costs_doc, dict), source, "parameters.costs must be an object")
    known = set(Costs.__dataclass_fields__)
    unknown = set(costs_doc) - known
    _expect(not unknown, source, f"unknown MDL cost(s) {sorted(unknown)} in parameters.costs")
    try:
        costs = Costs(**{k: float(v) for k, v in costs_doc.items()})
    except (TypeError, ValueError):
        raise _fail(source, "parameters.costs values must be numbers") from None

    raw_classes = document.get("classes")
    _expect(isinstance(raw_classes, list), source, "missing or malformed 'classes' list")
    specs: list[dict[str, Any]] = []
    infos: dict[int, ClassInfo] = {}
    for i, entry in enumerate(raw_classes):
        where = f"classes[{i}]"
        _expect(isinstance(entry, dict), source, f"{where} must be an object")
        cid = entry.get("id")
        _expect(isinstance(cid, int) and not isinstance(cid, bool), source, f"{where}.id must be an integer")
        _expect(cid not in infos, source, f"{where}: class id {cid} listed twice")
        counts = entry.get("path_counts")
        _expect(
            isinstance(counts, dict)
            and all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in counts.values()),
            source,
            f"{where}.path_counts must map paths to positive integers",
        )
        schema = entry.get("schema", sorted(counts))
        _expect(
            isinstance(schema, list) and set(schema) == set(counts),
            source,
            f"{where}.schema does not match its path_counts",
        )
        size = entry.get("size")
        _expect(
            isinstance(size, int) and not isinstance(size, bool) and size >= 1,
            source,
            f"{where}.size must be a positive integer",
        )
        _expect(max(counts.values(), default=0) <= size, source, f"{where}: a path count exceeds the class size")
        members = entry.get("members")
        _expect(
            members is None
            or (isinstance(members, list) and len(members) == size and all(isinstance(u, str) for u in members)),
            source,
            f"{where}.members must be a list of its {size} member URLs",
        )
        totals = [entry.get("schema_total", 0), entry.get("url_total", 0)]
        _expect(
            all(isinstance(t, int) and not isinstance(t, bool) and t >= 0 for t in totals),
            source,
            f"{where}.schema_total and url_total must be non-negative integers",
        )
        tag_counts = entry.get("tag_counts") or {}
        _expect(
            isinstance(tag_counts, dict)
            and all(isinstance(n, int) and not isinstance(n, bool) and 0 < n <= size for n in tag_counts.values()),
            source,
            f"{where}.tag_counts must map tag paths to counts between 1 and the class size",
        )
        schema = entry["schema"]
        member_schemas = entry.get("member_schemas")
        _expect(
            isinstance(member_schemas, list)
            and all(isinstance(e, dict) and isinstance(e.get("members"), int) and e["members"] >= 1
                    and isinstance(e.get("paths"), list)
                    and all(isinstance(i, int) and 0 <= i < len(schema) for i in e["paths"])
                    for e in member_schemas)
            and sum(e["members"] for e in member_schemas) == size,
            source,
            f"{where}.member_schemas must list its members' schemas (indices into schema) and counts "
            f"adding up to its size",
        )
        specs.append(
            {"id": cid, "size": size, "path_counts": counts, "members": members,
             "schema_total": totals[0], "url_total": totals[1], "tag_counts": tag_counts,
             "member_schemas": [(frozenset(schema[i] for i in e["paths"]), e["members"])
                                for e in member_schemas]}
        )
        infos[cid] = ClassInfo(
            id=cid,
            size=size,
            samples=list(entry.get("samples") or []),
            url_pattern=entry.get("url_pattern"),
            fingerprint=list(entry.get("fingerprint") or []),
            members=list(members) if members is not None else None,
        )
    spelling = document.get("spelling")
    _expect(isinstance(spelling, dict) and isinstance(spelling.get("ids"), list)
            and all(isinstance(i, str) for i in spelling["ids"]),
            source, "missing or malformed 'spelling' section (expected {\"ids\": [strings]})")
    wrappers = spelling.get("wrappers", [])  # models written before wrappers were dropped have none
    _expect(isinstance(wrappers, list) and all(isinstance(w, list) and len(w) == 2
                                               and all(isinstance(x, str) for x in w) for w in wrappers),
            source, "malformed 'spelling.wrappers' (expected a list of [place, wrapper] string pairs)")
    markers = spelling.get("markers", [])  # models written before markers were dropped have none
    _expect(isinstance(markers, list) and all(
        isinstance(m, list) and len(m) == 3 and isinstance(m[0], str)
        and all(isinstance(t, list) and all(isinstance(x, str) for x in t) for t in m[1:]) for m in markers),
            source, "malformed 'spelling.markers' (expected a list of [tag, [tokens], [marker tokens]])")
    model = rebuild_site_model(costs, specs)
    model.speller = PathSpeller(spelling["ids"], [tuple(w) for w in wrappers], markers)
    placing = document.get("placement")  # models written before it place no page by its tag paths
    if placing is not None:
        _expect(_placement_ok(placing, infos), source,
                "malformed 'placement' (expected paths: [strings], sets and bare: [{paths: [indices], "
                "classes: [[class id, pages]]}] naming listed classes, skeleton: [indices])")
        model.set_references(*placement_from_document(placing))
    mdl = document["mdl"]
    try:
        model.model_bits = float(mdl.get("model_bits", 0.0))
        model.data_bits = float(mdl.get("data_bits", 0.0))
    except (TypeError, ValueError):
        raise _fail(source, "mdl figures must be numbers") from None
    return LoadedModel(document, model, infos)


def _placement_ok(doc: Any, classes: Mapping[int, ClassInfo]) -> bool:
    if not (isinstance(doc, dict) and isinstance(doc.get("paths"), list)
            and isinstance(doc.get("sets"), list) and isinstance(doc.get("bare", doc.get("unplaced")), list)):
        return False
    n = len(doc["paths"])
    skeleton = doc.get("skeleton", [])  # models written before it read the skeleton off the sets
    return all(isinstance(p, str) for p in doc["paths"]) and isinstance(skeleton, list) and all(
        isinstance(i, int) and 0 <= i < n for i in skeleton) and all(
        isinstance(e, dict) and isinstance(e.get("paths"), list) and isinstance(e.get("classes"), list)
        and all(isinstance(i, int) and 0 <= i < n for i in e["paths"])
        and all(isinstance(c, list) and len(c) == 2 and c[0] in classes and isinstance(c[1], int) and c[1] > 0
                for c in e["classes"])
        for e in doc["sets"] + doc.get("bare", doc.get("unplaced")))


def rebuild_site_model(costs: Costs, specs: Iterable[Mapping[str, Any]]) -> SiteModel:
    """A ``SiteModel`` with the exported classes, so that its ``classify`` is the core's.

    Built through public attributes (the core has no constructor from exported
    classes yet): each class gets its id, path counts, schema/URL totals and
    ``size`` members (and tag-path counts, when the core keeps them) — the exported member URLs, or placeholders
    ``#member-<class>-<i>`` when members were not exported — and every member is
    registered in ``pages``/``page_class`` (with an empty schema: each page's
    schema is not part of the export), so class sizes and the page total, which
    the classification code uses, are those of the crawl; the distinct member
    schemas with their counts (``member_schemas``) are what it compares a page with.
    """
    model = SiteModel(costs)
    for spec in specs:
        cid = spec["id"]
        members = spec.get("members")
        if members is None:
            members = [f"#member-{cid}-{i}" for i in range(spec["size"])]
        cls = PageClass(
            cid,
            members=list(members),
            path_counts=Counter(spec["path_counts"]),
            schema_total=int(spec.get("schema_total", 0)),
            url_total=int(spec.get("url_total", 0)),
        )
        if spec.get("tag_counts") and hasattr(cls, "tag_counts"):
            cls.tag_counts = Counter(spec["tag_counts"])
        model.classes[cid] = cls
        model.known_paths.update(cls.path_counts)
        for schema, n in spec["member_schemas"]:
            model.schema_classes.setdefault(schema, Counter())[cid] += n
        empty: frozenset[str] = frozenset()
        for url in cls.members:
            model.pages[url] = Page(url, empty, 0)
            model.page_class[url] = cid
    return model


def loads_model(text: str | bytes, source: str = "<model>") -> LoadedModel:
    try:
        document = json.loads(text)
    except UnicodeDecodeError:
        raise _fail(source, "not UTF-8 text") from None
    except ValueError as exc:
        hint = " (truncated?)" if "Expecting" in str(exc) or "Unterminated" in str(exc) else ""
        raise _fail(source, f"not valid JSON{hint}: {exc}") from None
    return parse_model(document, source)


def load_model(path: str | os.PathLike[str]) -> LoadedModel:
    """Read a site model file; :class:`ModelFormatError` (a ``ValueError``) if it cannot be used.

    ``OSError`` (missing, unreadable file) is turned into ``ModelFormatError``
    too, with the path in the message.
    """
    source = os.fspath(path)
    try:
        with open(source, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise ModelFormatError(f"cannot read model {source!r}: {exc.strerror or exc}") from None
    if not data.strip():
        raise _fail(source, "empty file, not a structcrawl site model")
    return loads_model(data, source)


def _version() -> str:
    mod = sys.modules.get("structcrawl")
    return getattr(mod, "__version__", "?")
