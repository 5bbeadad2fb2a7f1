"""``structcrawl evaluate``: score JSON-lines page-class assignments against a url,class truth CSV.

The measures are :mod:`structcrawl.analysis.metrics`; this module reads the two files (every malformed
line is a :class:`~structcrawl.commands.errors.CommandError` naming its line) and prints the result.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from collections.abc import Hashable, Iterator, Mapping
from contextlib import contextmanager
from typing import TextIO

from structcrawl.analysis.metrics import evaluate
from structcrawl.commands.errors import CommandError

# scheme://authority or //authority, then the path+query (group 1), then an optional #fragment
_ABSOLUTE = re.compile(r"(?:[A-Za-z][A-Za-z0-9+.\-]*:)?//[^/?#]*([^#]*)")


def _path_query(url: str) -> str:
    """``scheme://host[:port]/path?query#frag`` → ``/path?query``; a relative ``/path?query``
    keeps its path and query (fragment dropped).  A regex, as ``urlsplit`` is ten times
    slower over a million URLs."""
    m = _ABSOLUTE.match(url)
    if m is None:
        return url.partition("#")[0]
    tail = m.group(1)
    if not tail.startswith("/"):
        tail = "/" + tail
    return tail


@contextmanager
def _open_text(path: str, what: str, name: str | None = None) -> Iterator[TextIO]:
    """``path`` as text (``-``: stdin, left open); an OSError opening or reading it is a CommandError."""
    try:
        fh = sys.stdin if path == "-" else open(path, encoding="utf-8-sig", newline="")
        try:
            yield fh
        finally:
            if fh is not sys.stdin:
                fh.close()
    except OSError as exc:
        raise CommandError(f"cannot read {what} {name or path!r}: {exc.strerror or exc}") from None


def load_truth(path: str) -> dict[str, str]:
    """Read a ``url,class`` CSV (header required, other columns ignored) → {url: class}.

    Raises ``CommandError`` on unreadable files, a missing header, empty url or
    class values, or a url listed twice with different classes.
    """
    truth: dict[str, str] = {}
    with _open_text(path, "truth") as fh:
        reader = csv.reader(fh)
        try:
            header = next(reader, None)
            if header is None:
                raise CommandError(f"{path}: empty truth file, expected a 'url,class' header")
            names = [h.strip().lower() for h in header]
            if "url" not in names or "class" not in names:
                raise CommandError(
                    f"{path}: line 1: expected a header with 'url' and 'class' columns, got {','.join(header)!r}"
                )
            ui, ci = names.index("url"), names.index("class")
            width = max(ui, ci)
            setdefault = truth.setdefault
            for row in reader:
                if len(row) > width:
                    url, cls = row[ui].strip(), row[ci].strip()
                    if url and cls:
                        old = setdefault(url, cls)
                        if old is cls or old == cls:
                            continue
                        raise CommandError(
                            f"{path}: line {reader.line_num}: {url} has class {cls!r} but earlier {old!r}"
                        )
                if not any(c.strip() for c in row):
                    continue  # blank line
                line = reader.line_num
                if len(row) <= width:
                    raise CommandError(f"{path}: line {line}: expected url and class, got {len(row)} field(s)")
                if not url:
                    raise CommandError(f"{path}: line {line}: empty url")
                raise CommandError(f"{path}: line {line}: empty class for {url}")
        except csv.Error as exc:
            raise CommandError(f"{path}: line {reader.line_num}: malformed CSV: {exc}") from None
        except UnicodeDecodeError:
            raise CommandError(f"{path}: not UTF-8 text") from None
    return truth


def load_assignments(path: str, relative: bool = False) -> dict[str, Hashable | None]:
    """Read JSON lines ``{"url": …, "class": …, …}`` (``-`` = stdin) → {url: class or None}.

    A null class with ``"unseen": k`` (``structcrawl classify``'s group of pages that fit no
    class) is the cluster ``("unseen", k)``; a null class without it is unassigned.

    Other keys are ignored, blank lines skipped; a url listed twice keeps its
    last class.  With ``relative``, urls are reduced to their path+query.
    Raises ``CommandError`` (with the line number) on malformed lines.
    """
    assigned: dict[str, Hashable | None] = {}
    name = "<stdin>" if path == "-" else path
    lineno = 0
    raw_decode = json.JSONDecoder().raw_decode
    with _open_text(path, "assignments", name) as fh:
        try:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                line = line.strip()
                try:
                    obj, end = raw_decode(line)  # twice as fast as json.loads on a million lines
                    if end != len(line):
                        raise ValueError(f"extra data after the JSON value at column {end + 1}")
                except ValueError as exc:
                    raise CommandError(f"{name}: line {lineno}: not valid JSON: {exc}") from None
                if not isinstance(obj, dict):
                    raise CommandError(f"{name}: line {lineno}: expected a JSON object with url and class")
                url = obj.get("url")
                if not isinstance(url, str) or not url:
                    raise CommandError(f"{name}: line {lineno}: missing or non-string \"url\"")
                if "class" not in obj:
                    raise CommandError(f"{name}: line {lineno}: missing \"class\" (use null for unassigned)")
                cls = obj["class"]
                if isinstance(cls, (list, dict)):
                    raise CommandError(f"{name}: line {lineno}: \"class\" must be a string, number or null")
                if cls is None and "unseen" in obj:
                    group = obj["unseen"]
                    if not isinstance(group, int) or isinstance(group, bool):
                        raise CommandError(f"{name}: line {lineno}: \"unseen\" must be an integer")
                    cls = ("unseen", group)
                assigned[_path_query(url) if relative else url] = cls
        except UnicodeDecodeError:
            raise CommandError(f"{name}: line {lineno + 1}: not UTF-8 text") from None
    return assigned


_ROWS = [
    ("pages", "pages evaluated (truth)", "d"),
    ("classes", "reference classes", "d"),
    ("clusters", "computed clusters", "d"),
    ("unassigned", "unassigned pages (singletons)", "d"),
    ("ignored", "assigned pages not in truth", "d"),
    ("fstar", "F*", ".4f"),
    ("entropy", "entropy (bits)", ".4f"),
    ("purity", "purity", ".4f"),
    ("ari", "adjusted Rand index", ".4f"),
    ("pair_precision", "pairwise precision", ".4f"),
    ("pair_recall", "pairwise recall", ".4f"),
]


def format_table(result: Mapping[str, object]) -> str:
    """Two-column ``measure  value`` table of an :func:`evaluate` result."""
    width = max(len(label) for _, label, _ in _ROWS)
    lines = [f"{'measure':<{width}}  value", f"{'-' * width}  {'-' * 6}"]
    for key, label, fmt in _ROWS:
        lines.append(f"{label:<{width}}  {format(result[key], fmt)}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Score ``--assignments`` against ``--truth``.

    If any truth URL is relative (starts with ``/``), every URL on both sides is
    compared on its path+query only.  Prints a table, or one JSON object with
    ``--json``.
    """
    truth_path = args.truth
    truth = load_truth(truth_path)
    if not truth:
        raise CommandError(f"{truth_path}: the truth has no pages")
    relative = any(url.startswith("/") for url in truth)
    if relative and not all(url.startswith("/") and "#" not in url for url in truth):
        reduced: dict[str, str] = {}
        for url, cls in truth.items():
            key = _path_query(url)
            old = reduced.setdefault(key, cls)
            if old != cls:
                raise CommandError(f"{truth_path}: {key} has classes {old!r} and {cls!r}")
        truth = reduced
    assigned = load_assignments(args.assignments, relative=relative)
    result = evaluate(assigned, truth)
    if args.json:
        print(json.dumps(result, sort_keys=True))
    else:
        print(format_table(result))
    return 0

