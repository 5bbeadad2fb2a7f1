"""The ``structcrawl`` command line: one sub-command per job.

Expected errors (bad arguments, unreadable files, unreachable databases) end in
one ``structcrawl: error: …`` line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import os
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
    if getattr(args, "hostile", False):
        from structcrawl.demo import hostile

        hostile.serve(hostile.HostileSite(site), host=args.host, port=args.port)
        return 0
    serve(site, host=args.host, port=args.port)
    return 0


def _cmd_evaluate(args: argparse.Namespace) -> int:
    from structcrawl.analysis.metrics import run_evaluate

    return run_evaluate(args.assignments, args.truth, as_json=args.json)


def _cmd_crawl(args: argparse.Namespace) -> int:
    from structcrawl.crawling.runner import CrawlError, parse_setting_overrides, run_structure_crawl

    try:
        overrides = parse_setting_overrides(args.set)
        if args.loglevel:
            overrides["LOG_LEVEL"] = args.loglevel.upper()
        if getattr(args, "db", None):
            overrides["STRUCTCRAWL_DB"] = args.db
        result = run_structure_crawl(
            args.url,
            strategy=args.strategy,
            max_pages=args.max_pages,
            batch=args.batch,
            stop=args.stop,
            job=args.job,
            members=True if args.members else None,
            fresh=True if getattr(args, "fresh", False) else None,
            model_out=args.output,
            settings=overrides,
        )
    except CrawlError as exc:
        raise CommandError(str(exc)) from None
    _check_crawl_result(result)
    print(
        f"{result.reason}: {result.stat('structcrawl/pages_requested', 0)} pages requested, "
        f"{result.stat('structcrawl/pages_modelled', 0)} modelled, {result.stat('structcrawl/classes', 0)} classes; "
        f"model written to {result.model_out}"
    )
    from structcrawl.report.table import class_table
    from structcrawl.sitemodel import ModelFormatError, load_model

    try:
        model = load_model(result.model_out)
    except ModelFormatError as exc:
        raise CommandError(str(exc)) from None
    print()
    print("\n".join(class_table(model)))
    return 0


def _check_crawl_result(result) -> None:
    if result.bootstrap_failed and not result.stats:
        raise CommandError("the crawl could not start (see the log above)")
    if result.stat("structcrawl/export_error"):
        raise CommandError(
            f"could not write the site model to {result.model_out}: {result.stat('structcrawl/export_error')}"
        )
    if not result.stat("structcrawl/pages_modelled"):
        failures = sorted(k.split("/", 2)[2] for k in result.stats if k.startswith("structcrawl/failed/"))
        why = f" (failures: {', '.join(failures)})" if failures else ""
        raise CommandError(f"no page could be modelled, the start URL gave nothing usable{why}")


def _db_url(args: argparse.Namespace) -> str:
    db = args.db or os.environ.get("STRUCTCRAWL_DB")
    if not db:
        raise CommandError("no database: give --db URL (or set STRUCTCRAWL_DB)")
    return db


def _cmd_jobs(args: argparse.Namespace) -> int:
    from structcrawl.store import StoreError
    from structcrawl.store.commands import run_jobs

    try:
        return run_jobs(_db_url(args), as_json=args.json)
    except StoreError as exc:
        raise CommandError(str(exc)) from None


def _cmd_export(args: argparse.Namespace) -> int:
    from structcrawl.store import StoreError
    from structcrawl.store.commands import run_export

    try:
        target, document = run_export(_db_url(args), args.job, args.output, members=args.members)
    except StoreError as exc:
        raise CommandError(str(exc)) from None
    except OSError as exc:
        raise CommandError(f"could not write the site model to {args.output}: {exc.strerror or exc}") from None
    if target != "-":
        crawl = document["crawl"]
        print(
            f"wrote the site model of job {crawl.get('job')!r} ({len(document['classes'])} classes, "
            f"{crawl['pages_modelled']} pages modelled, stop reason {crawl.get('stop_reason')}) to {target}",
            file=sys.stderr,
        )
    return 0


def _cmd_cluster(args: argparse.Namespace) -> int:
    from structcrawl.store import StoreError
    from structcrawl.store.cluster import Progress, run_cluster, summary
    from structcrawl.analysis.uxclust import Parameters

    try:
        params = Parameters(cutoff=args.cutoff, samples=args.samples, occurrence=args.occurrence,
                            similarity=args.similarity, seed=args.seed)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    try:
        stored = run_cluster(_db_url(args), args.job, params, args.group_by, args.output, args.members,
                             Progress(enabled=not args.quiet))
    except StoreError as exc:
        raise CommandError(str(exc)) from None
    except OSError as exc:
        raise CommandError(f"could not write the clusters to {args.output}: {exc.strerror or exc}") from None
    print(summary(stored), file=sys.stderr if stored.output == "-" else sys.stdout)
    return 0


def _cmd_classify(args: argparse.Namespace) -> int:
    from structcrawl.analysis.classify import run_classify

    return run_classify(
        args.model,
        args.inputs,
        base_url=args.base_url,
        root=args.root,
        output=args.output,
        jobs=args.jobs,
        timeout=args.timeout,
    )


def _cmd_report(args: argparse.Namespace) -> int:
    from structcrawl.sitemodel import ModelFormatError, load_model
    from structcrawl.report import report_path_for, write_report

    try:
        document = load_model(args.model).document
    except ModelFormatError as exc:
        raise CommandError(str(exc)) from None
    target = args.output or report_path_for(args.model)
    try:
        write_report(document, target)
    except OSError as exc:
        raise CommandError(f"could not write the report to {target}: {exc.strerror or exc}") from None
    print(f"wrote the report ({len(document['classes'])} classes) to {target}", file=sys.stderr)
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from structcrawl.commands.demo import run_demo

    return run_demo(args)


# Options that several sub-commands share, declared once; a sub-command passes only what differs (help, …).
_SHARED_OPTIONS: dict[str, tuple[tuple[str, ...], dict]] = {
    "model": (("model",), {"metavar": "MODEL.json", "help": "site model written by a crawl"}),
    "db": (("--db",), {"metavar": "URL", "help": "database URL (default: $STRUCTCRAWL_DB)"}),
    "job": (("--job",), {"metavar": "NAME"}),
    "output": (("-o", "--output"), {}),
    "members": (("--members",), {"action": "store_true"}),
    "json": (("--json",), {"action": "store_true"}),
    "pages": (("--pages",), {"type": int, "default": 3000}),
    "seed": (("--seed",), {"type": int, "default": 0}),
}


def _add_shared(p: argparse.ArgumentParser, name: str, **kwargs) -> None:
    flags, shared = _SHARED_OPTIONS[name]
    p.add_argument(*flags, **{**shared, **kwargs})


def _add_command(sub, name: str, func, help: str, description: str, **defaults) -> argparse.ArgumentParser:
    p = sub.add_parser(name, help=help, description=description)
    p.set_defaults(func=func, **defaults)
    return p


def _add_crawl_options(p: argparse.ArgumentParser, default_output: str) -> None:
    p.add_argument("--strategy", choices=["densest", "sparsest"], help="link-collection priority (default densest)")
    p.add_argument("--max-pages", type=int, metavar="N", help="most pages to request (default: no limit)")
    p.add_argument("--batch", type=int, metavar="N", help="most pages fetched per link collection per model update (default 10)")
    p.add_argument(
        "--stop",
        choices=["stable", "exhaust"],
        help="stop when the model is stable (default) or when the frontier is empty",
    )
    _add_shared(p, "output", metavar="MODEL.json", help=f"where to write the site model JSON (default {default_output})")
    _add_shared(p, "members", help="also export every class's member URLs")
    p.add_argument(
        "-s", "--set", action="append", metavar="NAME=VALUE", default=[], help="set a Scrapy/structcrawl setting (repeatable)"
    )
    p.add_argument("-L", "--loglevel", metavar="LEVEL", help="log level (default INFO)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="structcrawl",
        description="Learn the page types of a website while crawling a small part of it.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__import__('structcrawl').__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = _add_command(
        sub, "demo-site", _cmd_demo_site,
        "serve the built-in demo bookshop on 127.0.0.1, or write its ground truth",
        "Serve a deterministic, template-generated demo bookshop over HTTP on a "
        "loopback port, or write its url,class ground-truth CSV.",
    )
    p.add_argument("--port", type=int, default=8000, help="TCP port to listen on (default 8000; 0 picks a free one)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    _add_shared(p, "pages", help="approximate number of pages (default 3000)")
    _add_shared(p, "seed", help="generator seed (default 0)")
    p.add_argument("--write-truth", metavar="FILE", help="write url,class CSV for every page and exit")
    p.add_argument(
        "--hostile",
        action="store_true",
        help="also serve /hostile/ pages linked from the home page: non-HTML, broken markup, huge pages, "
        "redirect loops, errors, timeouts, resets, spider traps, odd links (structcrawl.demo.hostile)",
    )
    p.add_argument(
        "--base-url",
        default="",
        help="prefix for URLs in the truth CSV (default: none, URLs are written as /path?query)",
    )

    p = _add_command(
        sub, "evaluate", _cmd_evaluate,
        "score page-class assignments against a ground truth",
        "Score assignments (JSON lines {\"url\":…, \"class\":…}) against a url,class "
        "truth CSV: F*, entropy, purity, adjusted Rand index, pairwise precision/recall. A page "
        "present in the truth but absent from the assignments, or assigned null, counts as a "
        "singleton cluster of its own. When truth URLs are relative (/path?query), assignment "
        "URLs are compared on their path and query only.",
    )
    p.add_argument("--assignments", required=True, metavar="FILE", help="JSON lines with url and class ('-' for stdin)")
    p.add_argument("--truth", required=True, metavar="TRUTH.csv", help="url,class CSV")
    _add_shared(p, "json", help="print one JSON object instead of a table")

    p = _add_command(
        sub, "crawl", _cmd_crawl,
        "crawl a site with the structure spider and write its site model",
        "Crawl URL with the structure spider (the settings of structcrawl.settings "
        "plus -s overrides) until the site model is stable, then write the model JSON. Equivalent to "
        "'scrapy crawl structure -a start_url=URL …' in the project directory.",
    )
    p.add_argument("url", metavar="URL", help="start URL (http or https)")
    _add_shared(p, "job", metavar=None, help="job name, used for the default output file (default: the start host)")
    _add_crawl_options(p, "<job>.model.json")
    _add_shared(
        p, "db",
        help="keep the crawl state in this database (sqlite:///FILE, a file path, or postgresql+psycopg://…): "
        "the job can be stopped and resumed by running the same command again (= -s STRUCTCRAWL_DB=URL)",
    )
    p.add_argument("--fresh", action="store_true", help="with --db: start the job over, discarding its stored state")

    p = _add_command(
        sub, "jobs", _cmd_jobs,
        "list the crawl jobs of a database and their state",
        "List the jobs stored in a crawl database (STRUCTCRAWL_DB): status (running, stopped, "
        "finished), stop reason, pages, classes, batches completed and in flight, runs, last update, start "
        "URL and who holds the lock.  Read-only: works while a crawl runs.",
    )
    _add_shared(p, "db")
    _add_shared(p, "json", help="one JSON object per job instead of a table")

    p = _add_command(
        sub, "export", _cmd_export,
        "write the site model JSON of a job stored in a database",
        "Rebuild a stored job's crawl state (replaying its history) and write its site model "
        "JSON: the same document, byte for byte, as the spider writes at close for that state.  Works at "
        "any time, also while the crawl runs (the state of its last commit).",
    )
    _add_shared(p, "db")
    _add_shared(p, "job", help="the job to export (default: the database's only job)")
    _add_shared(p, "output", metavar="MODEL.json", help="output file, '-' for stdout (default <job>.model.json)")
    _add_shared(
        p, "members",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="include (or not) every class's member URLs (default: as the crawl was configured)",
    )

    p = _add_command(
        sub, "cluster", _cmd_cluster,
        "cluster the pages of a stored crawl offline by the XPath of their inbound link (UXClust)",
        "UXClust (Grigalis & Cenys) over a stored crawl: group the pages by the exact XPath of "
        "their inbound link (the first link to them in crawl order), put groups under the cut-off into an "
        "'unclustered' bucket, fingerprint each other group from sampled pages (tag paths on >= OCCURRENCE "
        "of the samples) and merge groups whose fingerprints have Jaccard >= SIMILARITY (union-find). Writes "
        "the clusters JSON and prints a summary table; progress goes to stderr.",
    )
    _add_shared(p, "db")
    _add_shared(p, "job", help="the job to cluster (default: the database's only job)")
    p.add_argument(
        "--group-by",
        choices=["xpath", "path"],
        default="xpath",
        help="group pages by the exact XPath of their inbound link (UXClust, the default) or by its "
        "link-collection path (no positions, id/class kept: Crescenzi et al.'s link collections)",
    )
    p.add_argument("--cutoff", type=int, default=100, metavar="N", help="smallest group clustered, in pages (default 100)")
    p.add_argument("--samples", type=int, default=5, metavar="N", help="pages sampled per group for its fingerprint (default 5)")
    p.add_argument("--occurrence", type=float, default=0.3, metavar="F",
                   help="share of the samples a tag path must be on to enter the fingerprint (default 0.3)")
    p.add_argument("--similarity", type=float, default=0.8, metavar="F",
                   help="Jaccard of two fingerprints at which their groups merge (default 0.8)")
    _add_shared(p, "seed", help="sampling seed (default 0)")
    _add_shared(p, "output", metavar="FILE", help="clusters JSON, '-' for stdout (default <job>.clusters.json)")
    _add_shared(p, "members", help="list every cluster's member URLs, and the unclustered ones")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress display")

    p = _add_command(
        sub, "classify", _cmd_classify,
        "assign pages (URLs or HTML files) to the classes of a site model",
        "Classify each INPUT with the site model: an http(s) URL is fetched, a local HTML "
        "file gets the URL --base-url + its path relative to --root; '-' reads inputs from stdin, one "
        "per line. Prints JSON lines {\"input\", \"url\", \"class\", \"cost\"} in input order (class null "
        "when no class fits; an \"error\" key when the input could not be read). Exit status 1 when some "
        "input failed, 2 for a bad model or arguments.",
    )
    _add_shared(p, "model")
    p.add_argument("inputs", metavar="INPUT", nargs="+", help="URL, HTML file, or - for stdin")
    p.add_argument("--base-url", metavar="URL", help="URL of --root for local files (default: the model's start URL)")
    p.add_argument("--root", default=".", metavar="DIR", help="directory that --base-url stands for (default: current directory)")
    _add_shared(p, "output", metavar="FILE", help="write the JSON lines here (default stdout)")
    p.add_argument("-j", "--jobs", type=int, default=8, metavar="N", help="inputs classified in parallel (default 8)")
    p.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS", help="per-URL fetch timeout (default 30)")

    p = _add_command(
        sub, "report", _cmd_report,
        "write a self-contained HTML report of a site model",
        "Write one self-contained HTML page (no script, no network) about a site model: the "
        "classes as a graph with the class links, a table of classes (sample URLs, schema paths, URL "
        "pattern, fingerprint size), the learning curve and the crawl summary.",
    )
    _add_shared(p, "model")
    _add_shared(p, "output", metavar="FILE", help="the HTML file (default: MODEL with .json replaced by .html)")

    p = _add_command(
        sub, "demo", _cmd_demo,
        "serve the demo bookshop, crawl it with the structure spider and show the classes",
        "Start the demo site on a free loopback port, crawl it with the structure spider, "
        "write the model JSON and print the discovered classes (size, a sample URL each), how the "
        "crawl stopped, and how the model scores against the demo's ground truth.",
        loglevel=None,
    )
    _add_shared(p, "pages", help="approximate number of demo pages (default 3000)")
    _add_shared(p, "seed", help="demo site generator seed (default 0)")
    _add_crawl_options(p, "demo.model.json")
    p.add_argument("--no-evaluate", action="store_true", help="skip scoring the model against the ground truth")

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
