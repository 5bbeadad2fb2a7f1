"""``structcrawl classify MODEL.json INPUT...``: which class of the site model is each page?

Each INPUT is an ``http(s)://`` URL (fetched, redirects followed) or a local
HTML file, whose URL is ``--base-url`` joined with the file's path relative to
``--root`` (default: the current directory; ``--base-url`` defaults to the
model's start URL), so its relative links resolve as on the live site.  ``-``
reads more inputs from stdin, one per line (blank lines and ``#`` comments
skipped).

Output: one JSON line per input, in input order::

    {"input": "…", "url": "…", "class": 3, "cost": 41.6}

``class`` is the class minimising the page's encoding cost under the model
(``SiteModel.classify``, Crescenzi et al. §4.1), null when no class fits better than a
class of its own; ``cost`` is that cost.  An input that cannot be read,
fetched or parsed as HTML gives ``"class": null, "cost": null`` and an
``"error"`` message; the exit status is then 1 (0 when every input was
classified, 2 for a bad model file or arguments).

Streaming: inputs are read lazily and classified by a small thread pool
(``--jobs``) through a bounded window, so memory does not grow with the
number of inputs and results come out as they are ready, in input order.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from typing import IO, Iterable, Iterator
from urllib.parse import quote, urljoin, urlsplit

from structcrawl.sitemodel import LoadedModel, ModelFormatError, load_model
from structcrawl.core.features import extract
from structcrawl.core.urls import normalize_url

#: Pages above this size are not classified (same order as the crawl's DOWNLOAD_MAXSIZE).
MAX_BYTES = 16 * 1024 * 1024
USER_AGENT = "structcrawl-classify/{version} (+https://github.com/structcrawl)"
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


def file_url(path: str, base_url: str, root: str) -> str:
    """URL of a local file: ``base_url`` joined with its path relative to ``root``."""
    rel = os.path.relpath(os.path.abspath(path), os.path.abspath(root))
    if rel == os.curdir or rel.startswith(os.pardir + os.sep) or rel == os.pardir:
        raise InputError(f"{path} is not under --root {root}")
    rel = rel.replace(os.sep, "/")
    base = base_url if base_url.endswith("/") else base_url + "/"
    url = normalize_url(urljoin(base, quote(rel, safe=_SAFE_PATH)))
    if url is None:
        raise InputError(f"cannot make an http(s) URL of {path} with base URL {base_url}")
    return url


class Classifier:
    def __init__(self, model: LoadedModel, base_url: str | None = None, root: str = ".", timeout: float = 30.0) -> None:
        self.model = model
        self.base_url = base_url or model.start_url
        self.root = root
        self.timeout = timeout
        from structcrawl import __version__

        self.user_agent = USER_AGENT.format(version=__version__)

    def fetch(self, url: str) -> tuple[str, bytes, str | None]:
        request = urllib.request.Request(url, headers={"User-Agent": self.user_agent, "Accept": "text/html,*/*;q=0.5"})
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

    def classify_one(self, item: str) -> dict:
        """One output record (never raises for a bad input)."""
        record: dict = {"input": item, "url": None, "class": None, "cost": None}
        try:
            if is_url(item):
                record["url"] = normalize_url(item) or item
                final, body, ctype = self.fetch(item)
            else:
                final, body, ctype = self.read_file(item)
            url = normalize_url(final) or final
            record["url"] = url
            feats = extract(body, url, ctype)
            cls, cost = self.model.classify_page(feats)
        except InputError as exc:
            record["error"] = str(exc)
            return record
        record["class"] = cls
        record["cost"] = round(cost, 6) + 0.0
        return record


def classify_stream(
    classifier: Classifier, inputs: Iterable[str], out: IO[str], jobs: int = 8
) -> tuple[int, int]:
    """Classify ``inputs`` into JSON lines on ``out``, in order; returns (inputs, errors)."""
    n = errors = 0
    window: deque[Future] = deque()
    limit = max(1, jobs) * 4

    def emit(record: dict) -> None:
        nonlocal n, errors
        n += 1
        if "error" in record:
            errors += 1
            print(f"structcrawl classify: {record['input']}: {record['error']}", file=sys.stderr)
        out.write(json.dumps(record, ensure_ascii=False) + "\n")

    if jobs <= 1:
        for item in inputs:
            emit(classifier.classify_one(item))
        out.flush()
        return n, errors
    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="classify") as pool:
        for item in inputs:
            window.append(pool.submit(classifier.classify_one, item))
            if len(window) >= limit:
                emit(window.popleft().result())
        while window:
            emit(window.popleft().result())
    out.flush()
    return n, errors


def run_classify(
    model_path: str,
    inputs: list[str],
    base_url: str | None = None,
    root: str = ".",
    output: str | None = None,
    jobs: int = 8,
    timeout: float = 30.0,
) -> int:
    """``structcrawl classify``; expected failures raise ``structcrawl.cli.CommandError``."""
    from structcrawl.cli import CommandError

    try:
        model = load_model(model_path)
    except ModelFormatError as exc:
        raise CommandError(str(exc)) from None
    if base_url is not None:
        parts = urlsplit(base_url)
        if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
            raise CommandError(f"--base-url must be an absolute http(s) URL, got {base_url!r}")
    if not os.path.isdir(root):
        raise CommandError(f"--root {root!r} is not a directory")
    if jobs < 1:
        raise CommandError(f"--jobs must be >= 1, got {jobs}")
    if not inputs:
        raise CommandError("no input: give URLs, HTML files, or - to read them from stdin")
    classifier = Classifier(model, base_url=base_url, root=root, timeout=timeout)
    if output and output != "-":
        try:
            fh = open(output, "w", encoding="utf-8")
        except OSError as exc:
            raise CommandError(f"cannot write {output!r}: {exc.strerror or exc}") from None
    else:
        fh = sys.stdout
    try:
        _n, errors = classify_stream(classifier, iter_inputs(inputs), fh, jobs=jobs)
    except BrokenPipeError:
        return 0
    finally:
        if fh is not sys.stdout:
            fh.close()
    return 1 if errors else 0
