"""Rebuild ``tests/data/erlang.model.json.gz``, the real-site model of the report's browser test.

A ``--stop exhaust`` structure crawl of the erlang-doc corpus (benchmarks/corpora.py) served on
127.0.0.1, its model kept small for the repository: ``tag_counts`` and ``member_schemas`` dropped
(the report reads neither), the schema paths on < ``KEEP_SHARE`` of a class's members dropped, and
the served address rewritten to ``http://127.0.0.1:8000/`` so that rebuilding changes only what
the crawl found.

    python benchmarks/report_model.py [-o tests/data/erlang.model.json.gz]
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import corpora  # noqa: E402
from real_sites import serve, structcrawl  # noqa: E402

#: a schema path kept in the test model is on at least this share of its class's members
KEEP_SHARE = 0.1
#: the address the served corpus is rewritten to
STABLE_BASE = "http://127.0.0.1:8000/"


def shrink(document: dict) -> dict:
    for entry in document["classes"]:
        entry.pop("tag_counts", None)
        entry.pop("member_schemas", None)
        size = entry["size"] or 1
        kept = {p: n for p, n in entry["path_counts"].items() if n / size >= KEEP_SHARE}
        entry["path_counts"] = kept
        entry["schema"] = sorted(kept)
    return document


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", default=str(HERE.parent / "tests" / "data" / "erlang.model.json.gz"))
    args = parser.parse_args(argv)
    root = corpora.ensure("erlang")
    server, base = serve(root)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            model = Path(tmp) / "erlang.model.json"
            proc = structcrawl("crawl", base + corpora.CORPORA["erlang"]["entry"], "--stop", "exhaust",
                               "-o", str(model), "-L", "WARNING", capture_output=True, text=True)
            if proc.returncode != 0:
                raise SystemExit(f"crawl of erlang failed:\n{proc.stderr[-3000:]}")
            text = model.read_text(encoding="utf-8")
    finally:
        server.terminate()
        server.wait()
    served, stable = urlsplit(base).netloc, urlsplit(STABLE_BASE).netloc
    text = text.replace(served, stable).replace(served.replace(":", "_"), stable.replace(":", "_"))
    document = shrink(json.loads(text))
    with gzip.open(args.output, "wt", encoding="utf-8") as fh:
        json.dump(document, fh, sort_keys=True, separators=(",", ":"))
    print(f"{len(document['classes'])} classes, {document['crawl']['pages_modelled']} pages -> {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
