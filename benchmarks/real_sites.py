"""Real-site benchmark: learn the page types of real generated documentation sites.

    python benchmarks/real_sites.py [--corpus geos --corpus ghc …] [--strategy densest --strategy sparsest]

For each corpus (Debian -doc packages, see ``benchmarks/corpora.py``; fetched
with ``apt-get download`` + ``dpkg -x`` into a cache dir when missing) and each
strategy: serve the html root with a plain static server
(``python -m http.server`` on 127.0.0.1), run ``structcrawl crawl`` from the
entry page (stop=stable, state in a throw-away SQLite store), then classify
every page of the site with the exported model (``structcrawl classify`` on
the files) and score it against the URL-regex ground truth: F*, entropy,
purity, ARI, pairwise precision/recall, classes found vs truth classes, and
the confusion of truth classes with found classes (on stderr).  The
learning curve of the crawl (replayed from its store) gets, after every model
update, the queue size, the Q measure (Crescenzi et al. §4.3; reference schemas = union of the
schemas of each truth class's crawled pages) and F* over the pages modelled so
far; it is saved in the model and drawn in ``structcrawl report``
(``benchmarks/out/<corpus>-<strategy>.html``, ``…-curve.svg``).

Baseline, same corpora, same run (``--no-baseline`` skips it): a full
breadth-first crawl with a plain Scrapy spider, then offline UXClust (UXClust
§3.3, ``benchmarks/bfs_baseline.py``) — once as the paper has it (exact XPath
of the inbound link, similarity 0.8) and once by link-collection path
(similarity 0.9), both at cut-off 20; unclustered pages count as singletons; and issue 13's simple
baseline, the tag-path sets of the same pages joined at Jaccard 0.8 (``tagpath_baseline.join_sets``).
Prints one table.  Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import unquote, urlsplit

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import corpora  # noqa: E402
from bfs_baseline import cluster_crawl, crawl_site  # noqa: E402
from offline_real import print_confusion  # noqa: E402
from structcrawl.analysis.metrics import evaluate  # noqa: E402
from structcrawl.analysis.uxclust import Parameters  # noqa: E402
from structcrawl.report import curve_svg, quality_point, write_report  # noqa: E402
from structcrawl.sitemodel import write_model  # noqa: E402
from tagpath_baseline import join_sets  # noqa: E402

#: the baseline's UXClust settings: (label, grouping, parameters)
BASELINES = (("BFS + UXClust, exact XPath 0.8", "xpath", Parameters(cutoff=20, similarity=0.8)),
             ("BFS + UXClust, collection path 0.9", "path", Parameters(cutoff=20, similarity=0.9)))

OUT = HERE / "out"
BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(root: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(port),
                             "--directory", root], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    return proc, f"http://127.0.0.1:{port}/"


def structcrawl(*args: str, **kw) -> subprocess.CompletedProcess:
    exe = BIN / "structcrawl"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "structcrawl"]
    return subprocess.run(cmd + list(args), **kw)


def relpath_of(url: str, base: str) -> str | None:
    from urllib.parse import unquote, urlsplit

    if not url.startswith(base):
        return None
    p = unquote(urlsplit(url).path)[len(urlsplit(base).path):]
    return p or "index.html"


def learning_curve(db: str, job: str, corpus: str, base: str) -> list[dict] | None:
    """Replay the stored crawl; after every update, Q and F* of the model so far against the truth."""
    try:
        from structcrawl.store import CrawlStore
    except ImportError:
        return None

    def lab(url: str):
        rel = relpath_of(url, base)
        return corpora.label(corpus, rel) if rel else None

    # reference schemas: union of each truth class's crawled page schemas (final state)
    _info, final, _res = CrawlStore(db).rebuild(job)
    ref: dict[str, set[str]] = {}
    for url, page in final.model.pages.items():
        c = lab(url)
        if c is not None:
            ref.setdefault(c, set()).update(page.schema)
    points: list[dict] = []

    def hook(explorer):
        def step(_sb, _report):
            m = explorer.model
            qp = quality_point(m.page_class, lambda u: m.pages[u].schema, lab, ref)
            qp["queue"] = explorer.frontier.pending_urls()  # the replay pops as the crawl did
            points.append(qp)
        return step

    CrawlStore(db).rebuild(job, on_step=hook)
    return points


def run_one(corpus: str, strategy: str, tmp: Path, log, settings: list[str] = ()) -> dict:
    root = corpora.ensure(corpus, log)
    pages = corpora.html_pages(corpus)
    truth = {p: corpora.label(corpus, p) for p in pages}
    truth = {p: c for p, c in truth.items() if c is not None}
    server, base = serve(root)
    name = f"{corpus}-{strategy}"
    model = tmp / f"{name}.model.json"
    db = f"sqlite:///{tmp / (name + '.db')}"
    try:
        t0 = time.monotonic()
        proc = structcrawl("crawl", base + corpora.CORPORA[corpus]["entry"], "--strategy", strategy,
                           "--stop", "stable", "-o", str(model), "--db", db, "--job", name, "--fresh", "--members",
                           "-L", "WARNING", *(a for kv in settings for a in ("-s", kv)),
                           capture_output=True, text=True)
        wall = time.monotonic() - t0
        if proc.returncode != 0:
            raise SystemExit(f"crawl of {corpus} failed:\n{proc.stderr[-3000:]}")
    finally:
        server.terminate()
        server.wait()
    doc = json.loads(model.read_text())
    # classify every page of the site from disk: URL = base + path relative to the root
    assigned_path = tmp / f"{name}.assigned.jsonl"
    proc = structcrawl("classify", str(model), "-", "--base-url", base, "--root", root, "-o", str(assigned_path),
                       input="\n".join(os.path.join(root, p) for p in pages) + "\n", capture_output=True, text=True)
    if proc.returncode == 2:
        raise SystemExit(f"classify failed: {proc.stderr[-2000:]}")
    assigned = {}
    for line in assigned_path.read_text().splitlines():
        rec = json.loads(line)
        rel = os.path.relpath(rec["input"], root).replace(os.sep, "/")
        cls = rec.get("class")
        assigned[rel] = ("unseen", rec["unseen"]) if cls is None and "unseen" in rec else cls
    res = evaluate({p: assigned.get(p) for p in truth}, truth)
    # classification agrees with the model's own membership (every member that is a file of the site)
    members = {unquote(urlsplit(u).path).lstrip("/"): c["id"] for c in doc["classes"] for u in c["members"]}
    shared = [p for p in members if p in assigned]
    agree = sum(1 for p in shared if assigned[p] == members[p]) / max(1, len(shared))
    coarse_map = corpora.CORPORA[corpus].get("coarse")
    res_coarse = None
    if coarse_map:
        ct = {p: coarse_map.get(c, c) for p, c in truth.items()}
        res_coarse = evaluate({p: assigned.get(p) for p in ct}, ct)
    stubs = corpora.stub_truth(corpus, truth)
    res_stubs = evaluate({p: assigned.get(p) for p in stubs}, stubs) if stubs else None
    log(f"   confusion (truth class, pages, found class: pages) of {corpus} / {strategy}:")
    print_confusion({p: assigned.get(p) for p in truth}, stubs or truth, sys.stderr)
    curve = None
    try:
        curve = learning_curve(db, name, corpus, base)
    except Exception as exc:  # the curve is a by-product: report and go on
        log(f"   (learning curve replay failed: {exc})")
    if curve and len(curve) == len(doc.get("history") or []):
        for point, qp in zip(doc["history"], curve):
            point.update(qp)
    OUT.mkdir(exist_ok=True)
    write_model(doc, OUT / f"{name}.model.json")
    write_report(doc, OUT / f"{name}.html")
    (OUT / f"{name}-curve.svg").write_text(curve_svg(doc.get("history") or []))
    fetched = doc["crawl"].get("pages_fetched") or doc["crawl"]["pages_modelled"]
    return dict(corpus=corpus, strategy=strategy, site=len(pages), fetched=fetched, wall=wall,
                stop=doc["crawl"].get("stop_reason"), found=len(doc["classes"]),
                truth=len(set(truth.values())), res=res, coarse=res_coarse, stubs=res_stubs,
                q=(doc["history"][-1].get("q") if doc.get("history") else None), agree=agree)


def run_baseline(corpus: str, log) -> list[dict]:
    """The full breadth-first crawl of ``corpus`` once, clustered each way of ``BASELINES``; rows for ``table``."""
    root = corpora.ensure(corpus, log)
    pages = corpora.html_pages(corpus)
    truth = {p: c for p in pages if (c := corpora.label(corpus, p)) is not None}
    server, base = serve(root)
    try:
        t0 = time.monotonic()
        crawl, _elapsed = crawl_site(base + corpora.CORPORA[corpus]["entry"])
        wall = time.monotonic() - t0
    finally:
        server.terminate()
        server.wait()

    def label(url: str):
        rel = relpath_of(url, base)
        return truth.get(rel) if rel else None

    coarse_map = corpora.CORPORA[corpus].get("coarse")
    ct = {p: coarse_map.get(c, c) for p, c in truth.items()} if coarse_map else None
    stubs = corpora.stub_truth(corpus, truth)

    def row(name: str, assignment: dict, stop: str, found: int) -> dict:
        by_rel = {relpath_of(u, base): c for u, c in assignment.items()}
        assigned = {p: by_rel.get(p) for p in truth}  # None (unclustered, not reached): a singleton
        return dict(corpus=corpus, strategy=name, site=len(pages), fetched=len(assignment), wall=wall, stop=stop,
                    found=found, truth=len(set(truth.values())), res=evaluate(assigned, truth),
                    coarse=evaluate(assigned, ct) if ct else None,
                    stubs=evaluate(assigned, stubs) if stubs else None, q=None)

    rows = []
    for name, group_by, params in BASELINES:
        res = cluster_crawl(crawl, wall, label, params=params, group_by=group_by)
        c = res.clustering
        rows.append(row(name, res.assignment, f"{c.unclustered / max(1, c.pages):.0%} unclustered", len(c.clusters)))
    # issue 13's simple baseline: every page's tag-path set, sets joined at Jaccard 0.8
    group = join_sets([frozenset(r["tag_paths"]) for r in crawl])
    assignment = {r["url"]: group[frozenset(r["tag_paths"])] for r in crawl}
    rows.append(row("BFS + tag-path sets, Jaccard 0.8", assignment, "every page grouped", len(set(group.values()))))
    return rows


def table(rows: list[dict]) -> str:
    head = ("| corpus | strategy | site pages | fetched | wall s | stop | F* | entropy | purity | ARI | "
            "pair P | pair R | Q (crawl) | classes found / truth | classify = membership |")
    lines = [head, "|" + "|".join("---" for _ in range(15)) + "|"]
    for r in rows:
        variants = ((r["corpus"], r["res"], r["truth"]),
                    (r["corpus"] + " (coarse)", r["coarse"], r["coarse"]["classes"] if r["coarse"] else 0),
                    (r["corpus"] + " (stubs apart)", r["stubs"], r["stubs"]["classes"] if r["stubs"] else 0))
        for label, res, truth in variants:
            if res is None:
                continue
            lines.append(
                f"| {label} | {r['strategy']} | {r['site']:,} | "
                f"{r['fetched']:,} ({100 * r['fetched'] / r['site']:.1f} %) "
                f"| {r['wall']:.1f} | {r['stop']} | {res['fstar']:.3f} | {res['entropy']:.3f} | {res['purity']:.3f} | "
                f"{res['ari']:.3f} | {res['pair_precision']:.3f} | {res['pair_recall']:.3f} | "
                f"{'—' if r['q'] is None else format(r['q'], '.3f')} | {r['found']} / {truth} | "
                f"{'—' if r.get('agree') is None else format(r['agree'], '.3f')} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", action="append", choices=sorted(corpora.CORPORA),
                    help="corpus to run (repeatable; default all)")
    ap.add_argument("--strategy", action="append", choices=["densest", "sparsest"],
                    help="strategy (repeatable; default both)")
    ap.add_argument("--no-baseline", action="store_true",
                    help="skip the full breadth-first crawl + offline UXClust rows")
    ap.add_argument("-s", "--set", action="append", default=[], metavar="NAME=VALUE",
                    help="Scrapy setting for the structure crawls (repeatable), e.g. CONCURRENT_REQUESTS=32")
    args = ap.parse_args(argv)
    import tempfile

    rows = []
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    with tempfile.TemporaryDirectory(prefix="structcrawl-real-") as tmp:
        for corpus in args.corpus or ["geos", "commons-math3", "ghc", "qtbase", "erlang"]:
            for strategy in args.strategy or ["densest", "sparsest"]:
                log(f"== {corpus} / {strategy}")
                r = run_one(corpus, strategy, Path(tmp), log, args.set)
                log(f"   fetched {r['fetched']} of {r['site']}, {r['wall']:.1f} s, F* {r['res']['fstar']:.3f}")
                rows.append(r)
            if not args.no_baseline:
                log(f"== {corpus} / full breadth-first crawl + UXClust")
                rows.extend(run_baseline(corpus, log))
    print(table(rows))
    print(f"\nreports: {OUT}/<corpus>-<strategy>.html")
    return 0


if __name__ == "__main__":
    sys.exit(main())
