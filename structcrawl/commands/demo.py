"""``structcrawl demo``: serve the demo bookshop, crawl it with the structure spider, show the classes.

The demo site runs in a thread of this process on a free loopback port; the
crawl is the same in-process Scrapy run as ``structcrawl crawl``.  Afterwards
the written model is loaded back (the same path ``structcrawl classify``
takes) and, unless ``--no-evaluate``, every page of the demo's ground truth is
classified with it (rendered in-process, no HTTP) and scored.
"""

from __future__ import annotations

import argparse
import sys

from structcrawl.analysis.classify import Classifier, UnseenGroups
from structcrawl.analysis.metrics import evaluate
from structcrawl.commands.crawl import check_crawl_result
from structcrawl.commands.errors import CommandError
from structcrawl.core.features import extract
from structcrawl.crawling.runner import CrawlError, parse_setting_overrides, run_structure_crawl
from structcrawl.demo.server import start_in_thread
from structcrawl.demo.site import DemoSite
from structcrawl.report.table import class_table
from structcrawl.sitemodel import ModelFormatError, load_model


def score_against_truth(model, site, base_url: str) -> dict:
    """Every page of the site classified, as ``structcrawl classify`` does (pages that fit no class
    grouped by kind), scored against the site's truth."""
    classifier = Classifier(model)
    unseen = UnseenGroups(model.site_model.reference().skeleton)
    truth: dict[str, str] = {}
    assigned: dict[str, int | tuple[str, int] | None] = {}
    for path_qs, cls in site.truth():
        url = base_url + path_qs
        truth[url] = cls
        status, headers, body = site.render(path_qs)
        if status != 200:
            assigned[url] = None
            continue
        features = extract(body, url, headers.get("Content-Type"))
        assigned[url] = unseen.label(classifier.classify_features(features)[0], features.element_paths)
    return evaluate(assigned, truth)


def run(args: argparse.Namespace) -> int:
    if args.pages < 1:
        raise CommandError(f"--pages must be >= 1, got {args.pages}")
    try:
        overrides = parse_setting_overrides(args.set)
    except CrawlError as exc:
        raise CommandError(str(exc)) from None
    overrides.setdefault("LOG_LEVEL", (args.loglevel or "WARNING").upper())
    output = args.output or "demo.model.json"
    site = DemoSite(pages=args.pages, seed=args.seed)
    server, base = start_in_thread(site)
    try:
        print(f"Demo site: {len(site)} pages served at {base}/ (seed {args.seed})", flush=True)
        try:
            result = run_structure_crawl(
                base + "/",
                strategy=args.strategy,
                max_pages=args.max_pages,
                batch=args.batch,
                stop=args.stop,
                job="demo",
                members=True if args.members else None,
                model_out=output,
                settings=overrides,
            )
        except CrawlError as exc:
            raise CommandError(str(exc)) from None
        check_crawl_result(result)
        try:
            model = load_model(output)
        except ModelFormatError as exc:
            raise CommandError(str(exc)) from None
        doc = model.document
        fetched = result.stat("structcrawl/pages_fetched", 0)
        refused = result.stat("structcrawl/pages_refused", 0)
        share = fetched / len(site) if len(site) else 0.0
        print(
            f"Crawl stopped: {result.reason} after fetching {fetched} pages ({share:.1%} of the site; "
            f"{result.stat('structcrawl/model_updates', 0)} model updates, {refused} links refused by robots.txt)"
        )
        reason = doc["crawl"].get("stability_reason")
        print(f"  why: {reason or 'the stability rule did not fire'}")
        print(
            f"Site model: {len(model.classes)} classes over {doc['crawl']['pages_modelled']} pages, "
            f"MDL {doc['mdl']['total']:.0f} bits -> {output}"
        )
        print()
        for line in class_table(model):
            print(line)
        if not args.no_evaluate:
            scores = score_against_truth(model, site, base)
            print()
            print(
                f"Against the demo's ground truth ({scores['pages']} pages classified with the model): "
                f"F* {scores['fstar']:.3f}, ARI {scores['ari']:.3f}, purity {scores['purity']:.3f}"
            )
        sys.stdout.flush()
    finally:
        server.shutdown()
        server.server_close()
    return 0
