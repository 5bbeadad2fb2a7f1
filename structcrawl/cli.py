"""The ``structcrawl`` command line: one sub-command per job.

Expected errors (bad arguments, unreadable files, unreachable databases) end in
one ``structcrawl: error: …`` line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import sys


class CommandError(Exception):
    """An expected failure: printed as one line, exit status 2."""


def _cmd_demo_site(args: argparse.Namespace) -> int:
    from structcrawl.demo.server import serve
    from structcrawl.demo.site import DemoSite

    site = DemoSite(pages=args.pages, seed=args.seed)
    if args.write_truth:
        with open(args.write_truth, "w", encoding="utf-8", newline="") as fh:
            n = site.write_truth(fh, base_url=args.base_url)
        print(f"wrote {n} pages of truth to {args.write_truth}", file=sys.stderr)
        return 0
    serve(site, host=args.host, port=args.port)
    return 0


def _cmd_evaluate(args: argparse.Namespace) -> int:
    from structcrawl.metrics import run_evaluate

    return run_evaluate(args.assignments, args.truth, as_json=args.json)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="structcrawl",
        description="Learn the page types of a website while crawling a small part of it.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__import__('structcrawl').__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser(
        "demo-site",
        help="serve the built-in demo bookshop on 127.0.0.1, or write its ground truth",
        description="Serve a deterministic, template-generated demo bookshop over HTTP on a "
        "loopback port, or write its url,class ground-truth CSV.",
    )
    p.add_argument("--port", type=int, default=8000, help="TCP port to listen on (default 8000; 0 picks a free one)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--pages", type=int, default=3000, help="approximate number of pages (default 3000)")
    p.add_argument("--seed", type=int, default=0, help="generator seed (default 0)")
    p.add_argument("--write-truth", metavar="FILE", help="write url,class CSV for every page and exit")
    p.add_argument(
        "--base-url",
        default="",
        help="prefix for URLs in the truth CSV (default: none, URLs are written as /path?query)",
    )
    p.set_defaults(func=_cmd_demo_site)

    p = sub.add_parser(
        "evaluate",
        help="score page-class assignments against a ground truth",
        description="Score assignments (JSON lines {\"url\":…, \"class\":…}) against a url,class "
        "truth CSV: F*, entropy, purity, adjusted Rand index, pairwise precision/recall. A page "
        "present in the truth but absent from the assignments, or assigned null, counts as a "
        "singleton cluster of its own. When truth URLs are relative (/path?query), assignment "
        "URLs are compared on their path and query only.",
    )
    p.add_argument("--assignments", required=True, metavar="FILE", help="JSON lines with url and class ('-' for stdin)")
    p.add_argument("--truth", required=True, metavar="TRUTH.csv", help="url,class CSV")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    p.set_defaults(func=_cmd_evaluate)

    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args) or 0
    except CommandError as exc:
        print(f"structcrawl: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
