"""``structcrawl demo-site``: serve the built-in demo bookshop on a loopback port, or write its ground truth."""

from __future__ import annotations

import argparse
import sys

from structcrawl.demo import hostile
from structcrawl.demo.server import serve
from structcrawl.demo.site import DemoSite


def run(args: argparse.Namespace) -> int:
    site = DemoSite(pages=args.pages, seed=args.seed)
    if args.write_truth:
        with open(args.write_truth, "w", encoding="utf-8", newline="") as fh:
            n = site.write_truth(fh, base_url=args.base_url)
        print(f"wrote {n} pages of truth to {args.write_truth}", file=sys.stderr)
        return 0
    if args.hostile:
        hostile.serve(hostile.HostileSite(site), host=args.host, port=args.port)
        return 0
    serve(site, host=args.host, port=args.port)
    return 0
