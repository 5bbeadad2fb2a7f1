"""The ``structcrawl`` argument parser and ``main``, the console script's entry point.

Every sub-command is declared here, so ``structcrawl --help`` imports nothing else; its module
(``structcrawl.commands.<name>``, ``-`` written ``_``) is imported only when it runs.  Expected errors
(:class:`~structcrawl.commands.errors.CommandError`) end in one ``structcrawl: error: …`` line on stderr and
exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from importlib import import_module

import structcrawl
from structcrawl.commands.errors import CommandError

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


def _add_command(sub, name: str, help: str, description: str, **defaults) -> argparse.ArgumentParser:
    """Sub-command ``name``, run by ``structcrawl.commands.<name, - written _>.run(args)``."""
    p = sub.add_parser(name, help=help, description=description)
    p.set_defaults(module=f"{__package__}.{name.replace('-', '_')}", **defaults)
    return p


def _add_crawl_options(p: argparse.ArgumentParser, default_output: str) -> None:
    p.add_argument("--strategy", choices=["densest", "sparsest"], help="link-collection priority (default densest)")
    p.add_argument("--max-pages", type=int, metavar="N", help="most pages to request (default: no limit)")
    p.add_argument("--batch", type=int, metavar="N",
                   help="most pages fetched per link collection per model update (default 10)")
    p.add_argument(
        "--stop",
        choices=["stable", "exhaust"],
        help="stop when the model is stable (default) or when the frontier is empty",
    )
    _add_shared(p, "output", metavar="MODEL.json",
                help=f"where to write the site model JSON (default {default_output})")
    _add_shared(p, "members", help="also export every class's member URLs")
    p.add_argument(
        "-s", "--set", action="append", metavar="NAME=VALUE", default=[],
        help="set a Scrapy/structcrawl setting (repeatable)"
    )
    p.add_argument("-L", "--loglevel", metavar="LEVEL", help="log level (default INFO)")


def _add_page_inputs(p: argparse.ArgumentParser) -> None:
    """The model and page inputs of ``classify`` and ``extract``."""
    _add_shared(p, "model")
    p.add_argument("inputs", metavar="INPUT", nargs="+", help="URL, HTML file, or - for stdin")
    p.add_argument("--base-url", metavar="URL", help="URL of --root for local files (default: the model's start URL)")
    p.add_argument("--root", default=".", metavar="DIR",
                   help="directory that --base-url stands for (default: current directory)")
    _add_shared(p, "output", metavar="FILE", help="write the JSON lines here (default stdout)")
    p.add_argument("-j", "--jobs", type=int, default=8, metavar="N", help="inputs read in parallel (default 8)")
    p.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS", help="per-URL fetch timeout (default 30)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="structcrawl",
        description="Learn the page types of a website while crawling a small part of it.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {structcrawl.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = _add_command(
        sub, "demo-site",
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
        sub, "evaluate",
        "score page-class assignments against a ground truth",
        "Score assignments (JSON lines {\"url\":…, \"class\":…}) against a url,class "
        "truth CSV: F*, entropy, purity, adjusted Rand index, pairwise precision/recall. A page "
        "present in the truth but absent from the assignments, or assigned null, counts as a "
        "singleton cluster of its own; a null class with \"unseen\": k (structcrawl classify's "
        "group of pages that fit no class) is the cluster of group k. When truth URLs are relative "
        "(/path?query), assignment URLs are compared on their path and query only.",
    )
    p.add_argument("--assignments", required=True, metavar="FILE", help="JSON lines with url and class ('-' for stdin)")
    p.add_argument("--truth", required=True, metavar="TRUTH.csv", help="url,class CSV")
    _add_shared(p, "json", help="print one JSON object instead of a table")

    p = _add_command(
        sub, "crawl",
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
        sub, "jobs",
        "list the crawl jobs of a database and their state",
        "List the jobs stored in a crawl database (STRUCTCRAWL_DB): status (running, stopped, "
        "finished), stop reason, pages, classes, batches completed and in flight, runs, last update, start "
        "URL and who holds the lock.  Read-only: works while a crawl runs.",
    )
    _add_shared(p, "db")
    _add_shared(p, "json", help="one JSON object per job instead of a table")

    p = _add_command(
        sub, "export",
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
        sub, "cluster",
        "cluster the pages of a stored crawl offline by the XPath of their inbound link (UXClust)",
        "UXClust (Grigalis & Cenys) over a stored crawl: group the pages by the link-collection path of "
        "their inbound link (the first link to them in crawl order), put groups under the cut-off into an "
        "'unclustered' bucket, fingerprint each other group from sampled pages (tag paths on >= OCCURRENCE "
        "of the samples) and merge groups whose fingerprints have Jaccard >= SIMILARITY (union-find), unless "
        "their samples show sections the other's never do. Writes "
        "the clusters JSON and prints a summary table; progress goes to stderr.",
    )
    _add_shared(p, "db")
    _add_shared(p, "job", help="the job to cluster (default: the database's only job)")
    p.add_argument(
        "--method",
        choices=["uxclust", "shingles"],
        default="uxclust",
        help="uxclust (the default: inbound links, fingerprints) or shingles (Vertex, Gulhane et al.: a "
        "min-hash signature of 8 values over each page's tag paths but those on 99%% of the site's pages, pages "
        "sharing >= 6 of the 8 in one cluster (checked on their tag paths), clusters with alike fingerprints merged; "
        "--group-by does not apply)",
    )
    p.add_argument("--shingle", type=int, metavar="N",
                   help="with --method shingles: sorted tag paths per shingle (default 1: "
                   "structcrawl.analysis.shingles.SHINGLE_PATHS)")
    p.add_argument(
        "--group-by",
        choices=["xpath", "path"],
        default="path",
        help="group pages by the link-collection path of their inbound link (no positions, id/class kept: "
        "Crescenzi et al.'s link collections; the default) or by its exact XPath (UXClust)",
    )
    p.add_argument("--cutoff", type=int, metavar="N",
                   help="smallest group clustered, in pages (default: 0.13%% of the crawl's pages, at least 2 - "
                   "UXClust's 100 pages on sites of 76,503 pages on average)")
    p.add_argument("--samples", type=int, default=10, metavar="N",
                   help="pages sampled per group for its fingerprint (default 10)")
    p.add_argument("--occurrence", type=float, default=0.3, metavar="F",
                   help="share of the samples a tag path must be on to enter the fingerprint (default 0.3)")
    p.add_argument("--similarity", type=float, metavar="F",
                   help="Jaccard of two fingerprints at which their groups merge (default 0.8; with --method "
                   "shingles 0.75, the 6 of 8 a signature match estimates)")
    _add_shared(p, "seed", help="sampling seed (default 0)")
    _add_shared(p, "output", metavar="FILE", help="clusters JSON, '-' for stdout (default <job>.clusters.json)")
    _add_shared(p, "members", help="list every cluster's member URLs, and the unclustered ones")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress display")

    p = _add_command(
        sub, "classify",
        "assign pages (URLs or HTML files) to the classes of a site model",
        "Classify each INPUT with the site model: an http(s) URL is fetched, a local HTML "
        "file gets the URL --base-url + its path relative to --root; '-' reads inputs from stdin, one "
        "per line. Prints JSON lines {\"input\", \"url\", \"class\", \"cost\"} in input order (class null "
        "when no class fits; an \"error\" key when the input could not be read). Exit status 1 when some "
        "input failed, 2 for a bad model or arguments.",
    )
    _add_page_inputs(p)

    p = _add_command(
        sub, "extract",
        "extract the fields and records of pages (URLs or HTML files) with a site model",
        "Classify each INPUT as 'classify' does, then evaluate its class's exported XPaths with parsel: "
        "prints JSON lines {\"input\", \"url\", \"class\", \"fields\": {name: value}, \"records\": "
        "[{name: value}, …] or null} in input order (an \"error\" key when the input could not be read). "
        "Exit status 1 when some input failed, 2 for a bad model or arguments.",
    )
    _add_page_inputs(p)

    p = _add_command(
        sub, "report",
        "write a self-contained HTML report of a site model",
        "Write one self-contained HTML page (no script, no network) about a site model: the "
        "classes as a graph with the class links, a table of classes (sample URLs, schema paths, URL "
        "pattern, fingerprint size), the learning curve and the crawl summary.",
    )
    _add_shared(p, "model")
    _add_shared(p, "output", metavar="FILE", help="the HTML file (default: MODEL with .json replaced by .html)")
    p.add_argument("--harvest", metavar="SUMMARY.json",
                   help="add the report of a harvest: the file its -s STRUCTCRAWL_HARVEST_SUMMARY=FILE wrote")

    p = _add_command(
        sub, "harvest",
        "fetch every page of the chosen classes of a site model, as Scrapy items",
        "Crawl the model's site following only the link collections that lead to the target classes "
        "(--classes, or the class of each --like page) and write one item per target page through Scrapy's "
        "feed exports (-O/-o FILE.jsonl|.csv|.json|.xml). Same as 'scrapy crawl harvest -a model=MODEL "
        "-a classes=…'.",
        loglevel=None,
    )
    _add_shared(p, "model")
    p.add_argument("--classes", action="append", metavar="ID,…", help="target class ids (repeatable)")
    p.add_argument("--like", action="append", metavar="URL", help="target the class of this page (repeatable)")
    p.add_argument("-O", "--overwrite-output", action="append", default=[], metavar="FILE",
                   help="write the items to FILE, replacing it (repeatable)")
    p.add_argument("-o", "--output", action="append", default=[], metavar="FILE",
                   help="append the items to FILE (repeatable; with --db, a resumed run adds the rest)")
    _add_shared(p, "db", help="keep the harvest in this database: run the same command again to resume it")
    _add_shared(p, "job", help="harvest job name in the database (default: <model's job>-harvest)")
    p.add_argument("--fresh", action="store_true", help="with --db: start the harvest job over")
    p.add_argument("--max-pages", type=int, metavar="N", help="most pages to request (default: no limit)")
    p.add_argument("--redis", metavar="URL",
                   help="share the harvest on this Redis (scrapy-redis) with other workers; needs a PostgreSQL --db")
    p.add_argument("--workers", type=int, metavar="N",
                   help="with --redis: worker processes to run here (default 1; 0 only creates and seeds the job)")
    p.add_argument("-s", "--set", action="append", metavar="NAME=VALUE", default=[],
                   help="set a Scrapy/structcrawl setting (repeatable)")
    p.add_argument("-L", "--loglevel", metavar="LEVEL", help="log level (default INFO)")

    p = _add_command(
        sub, "demo",
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
        return import_module(args.module).run(args) or 0
    except CommandError as exc:
        print(f"structcrawl: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
