"""``structcrawl classify MODEL.json INPUT...``: which class of the site model is each page?

Each INPUT is an ``http(s)://`` URL (fetched, redirects followed) or a local
HTML file, whose URL is ``--base-url`` joined with the file's path relative to
``--root`` (default: the current directory; ``--base-url`` defaults to the
model's start URL), so its relative links resolve as on the live site.  ``-``
reads more inputs from stdin, one per line (blank lines and ``#`` comments
skipped).

Output: one JSON line per input, in input order::

    {"input": "…", "url": "…", "class": 3, "cost": 41.6}

``class`` and ``cost`` are :class:`structcrawl.analysis.classify.Classifier`'s
(class null when no class fits better than a class of its own).  A page that
fits no class also gets ``"unseen": k``: the pages that fit no class grouped by
kind in input order (:class:`structcrawl.analysis.classify.UnseenGroups`), so
pages of one type the crawl never reached share their k.  An input that
cannot be read, fetched or parsed as HTML gives ``"class": null, "cost": null``
and an ``"error"`` message; the exit status is then 1 (0 when every input was
classified, 2 for a bad model file or arguments).

Streaming: inputs are read lazily and classified by a small thread pool
(``--jobs``) through a bounded window, so memory does not grow with the
number of inputs and results come out as they are ready, in input order.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.request
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from typing import IO
from urllib.parse import quote, urljoin, urlsplit

from structcrawl import __version__
from structcrawl.analysis.classify import Classifier, UnseenGroups
from structcrawl.commands.errors import CommandError
from structcrawl.core.features import extract
from structcrawl.core.urls import normalize_url
from structcrawl.sitemodel import LoadedModel, ModelFormatError, load_model

#: Pages above this size are not classified (same order as the crawl's DOWNLOAD_MAXSIZE).
MAX_BYTES = 16 * 1024 * 1024
USER_AGENT = f"structcrawl-classify/{__version__} (+https://github.com/structcrawl)"
_SAFE_PATH = "/?=&;,:@+$!*'()~-._%"


class InputError(Exception):
    """This input cannot be classified (reported on its output line)."""


def iter_inputs(args: Iterable[str], stdin: IO[str] | None = None) -> Iterator[str]:
    """The inputs in order; ``-`` expands to the lines of stdin (read lazily)."""
    for arg in args:
        if arg == "-":
            for line in stdin if stdin is not None else sys.stdin:
                line = line.strip()
                if line and not line.startswith("#"):
                    yield line
        else:
            yield arg


def is_url(text: str) -> bool:
    return text[:8].lower().startswith(("http://", "https://"))


def relative_path(path: str, root: str) -> str:
    """``path`` relative to the directory ``root``, compared as given first (a symlink under ``root`` keeps
    its name), then with both sides resolved (``root``, or the current directory, reached through a
    symlink); InputError when it is not under ``root``."""
    for resolve in (os.path.abspath, os.path.realpath):
        rel = os.path.relpath(resolve(path), resolve(root))
        if rel not in (os.curdir, os.pardir) and not rel.startswith(os.pardir + os.sep):
            return rel
    raise InputError(f"{path} is not under --root {root}")


def file_url(path: str, base_url: str, root: str) -> str:
    """URL of a local file: ``base_url`` joined with its path relative to ``root``."""
    rel = relative_path(path, root).replace(os.sep, "/")
    base = base_url if base_url.endswith("/") else base_url + "/"
    url = normalize_url(urljoin(base, quote(rel, safe=_SAFE_PATH)))
    if url is None:
        raise InputError(f"cannot make an http(s) URL of {path} with base URL {base_url}")
    return url


class PageReader:
    """Reads an input: an http(s) URL is fetched, a local file read with the URL it has under ``root``."""

    def __init__(self, base_url: str, root: str = ".", timeout: float = 30.0) -> None:
        self.base_url = base_url
        self.root = root
        self.timeout = timeout

    def read(self, item: str) -> tuple[str, bytes, str | None]:
        """(URL, body, Content-Type or None) of an input; InputError when it cannot be read."""
        return self.fetch(item) if is_url(item) else self.read_file(item)

    def fetch(self, url: str) -> tuple[str, bytes, str | None]:
        request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT, "Accept": "text/html,*/*;q=0.5"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as resp:
                body = resp.read(MAX_BYTES + 1)
                final = resp.geturl()
                ctype = resp.headers.get("Content-Type")
        except urllib.error.HTTPError as exc:
            raise InputError(f"HTTP {exc.code}") from None
        except urllib.error.URLError as exc:
            raise InputError(f"cannot fetch: {exc.reason}") from None
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot fetch: {exc}") from None
        if len(body) > MAX_BYTES:
            raise InputError(f"page larger than {MAX_BYTES} bytes")
        if ctype and "html" not in ctype.lower():
            raise InputError(f"not HTML (Content-Type: {ctype})")
        return final, body, ctype

    def read_file(self, path: str) -> tuple[str, bytes, str | None]:
        url = file_url(path, self.base_url, self.root)
        try:
            with open(path, "rb") as fh:
                body = fh.read(MAX_BYTES + 1)
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror or exc}") from None
        if len(body) > MAX_BYTES:
            raise InputError(f"file larger than {MAX_BYTES} bytes")
        return url, body, None


def classify_one(classifier: Classifier, reader: PageReader, item: str) -> dict:
    """One output record (never raises for a bad input)."""
    record: dict = {"input": item, "url": None, "class": None, "cost": None}
    try:
        if is_url(item):
            record["url"] = normalize_url(item) or item
        final, body, ctype = reader.read(item)
        url = normalize_url(final) or final
        record["url"] = url
        features = extract(body, url, ctype)
        cls, cost = classifier.classify_features(features)
    except InputError as exc:
        record["error"] = str(exc)
        return record
    record["class"] = cls
    record["cost"] = round(cost, 6) + 0.0
    if cls is None:
        record[ELEMENT_PATHS] = features.element_paths  # grouped in input order (``unseen_in_order``)
    return record


#: A record's element paths, from ``classify_one`` to ``unseen_in_order``; never written.
ELEMENT_PATHS = "_element_paths"


def unseen_in_order(groups: UnseenGroups) -> Callable[[dict], None]:
    """``classify_stream``'s ``in_order`` step: a page that fits no class gets its unseen group."""

    def step(record: dict) -> None:
        paths = record.pop(ELEMENT_PATHS, None)
        if paths is not None:
            record["unseen"] = groups.group(paths)

    return step


def classify_stream(record_of: Callable[[str], dict], inputs: Iterable[str], out: IO[str],
                    jobs: int = 8, command: str = "classify",
                    in_order: Callable[[dict], None] | None = None) -> tuple[int, int]:
    """Write ``record_of(input)`` of each of ``inputs`` as JSON lines on ``out``, in order; (inputs, errors).
    ``in_order``: a step on each record in input order, before it is written (the pool classifies out of order)."""
    n = errors = 0
    window: deque[Future] = deque()
    limit = max(1, jobs) * 4

    def emit(record: dict) -> None:
        nonlocal n, errors
        if in_order is not None:
            in_order(record)
        n += 1
        if "error" in record:
            errors += 1
            print(f"structcrawl {command}: {record['input']}: {record['error']}", file=sys.stderr)
        out.write(json.dumps(record, ensure_ascii=False) + "\n")

    if jobs <= 1:
        for item in inputs:
            emit(record_of(item))
        out.flush()
        return n, errors
    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix=command) as pool:
        for item in inputs:
            window.append(pool.submit(record_of, item))
            if len(window) >= limit:
                emit(window.popleft().result())
        while window:
            emit(window.popleft().result())
    out.flush()
    return n, errors


def run(args: argparse.Namespace) -> int:
    return run_pages(args, lambda model, reader: partial(classify_one, Classifier(model), reader), "classify",
                     lambda model: unseen_in_order(UnseenGroups(model.site_model.reference().skeleton)))


def run_pages(args: argparse.Namespace, make_record_of: Callable[[LoadedModel, PageReader], Callable[[str], dict]],
              command: str, make_in_order: Callable[[LoadedModel], Callable[[dict], None]] | None = None) -> int:
    """``classify`` and ``extract``: check the arguments, then one JSON line per input from ``make_record_of``."""
    try:
        model = load_model(args.model)
    except ModelFormatError as exc:
        raise CommandError(str(exc)) from None
    if args.base_url is not None:
        parts = urlsplit(args.base_url)
        if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
            raise CommandError(f"--base-url must be an absolute http(s) URL, got {args.base_url!r}")
    if not os.path.isdir(args.root):
        raise CommandError(f"--root {args.root!r} is not a directory")
    if args.jobs < 1:
        raise CommandError(f"--jobs must be >= 1, got {args.jobs}")
    if not args.inputs:
        raise CommandError("no input: give URLs, HTML files, or - to read them from stdin")
    reader = PageReader(args.base_url or model.start_url, root=args.root, timeout=args.timeout)
    record_of = make_record_of(model, reader)
    if args.output and args.output != "-":
        try:
            fh = open(args.output, "w", encoding="utf-8")
        except OSError as exc:
            raise CommandError(f"cannot write {args.output!r}: {exc.strerror or exc}") from None
    else:
        fh = sys.stdout
    try:
        _n, errors = classify_stream(record_of, iter_inputs(args.inputs), fh, jobs=args.jobs, command=command,
                                     in_order=make_in_order(model) if make_in_order else None)
    except BrokenPipeError:
        return 0
    finally:
        if fh is not sys.stdout:
            fh.close()
    return 1 if errors else 0
