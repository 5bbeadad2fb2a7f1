"""Replay a focused harvest offline on a corpus's link graph, and say why targets were missed.

    python benchmarks/harvest_replay.py MODEL [--corpus qtbase | --demo-pages 30000]
        (--truth obsolete_members | --classes 13)
        [--inflight 32] [--hub-inflight 8] [--explore 0.05] [--explore-min 10] [--paths 20] [--waste 15]
        [--shuffle SEED] [--no-store]

The harvest's plan (:class:`structcrawl.analysis.harvestplan.Harvest`) is fed the corpus's pages
as the spider feeds it: the same classifier, the same spelled collections, the same trap rule, up
to ``--inflight`` URLs handed out at once and hub pages only while fewer than ``--hub-inflight`` are
(the spider's ``STRUCTCRAWL_MAX_INFLIGHT`` and ``CONCURRENT_REQUESTS_PER_DOMAIN``), the ones handed
out waiting in a last-in-first-out queue (Scrapy's default scheduler) for eight download slots that
finish first in, first out.  No server: a URL's page is the corpus file its path names, so a run
takes seconds and is the same every time for a model; the spider's order differs, by the timing of
the pages in flight.  ``--shuffle SEED`` lets the downloads in progress finish in an order drawn from
``random.Random(SEED)``, as a server's answers do: a failure seen in one HTTP run in several is then
replayed at will (PostgreSQL's refentries lose 19 targets at seeds 11, 31 and 39; docs/design.md,
Focused harvest, "Fifteenth pass").  The model's members are its structure crawl's pages: as a harvest
with that crawl's store does, the replay reads them rather than requesting them, but for targets
(``--no-store``: a harvest without the store).

Printed: recall against the truth pages reachable from the entry page by the pages' links,
requests, precision; beside them what the site's links allow (:func:`bound`): the fewest non-target
pages a crawler must fetch to reach every target (a greedy Steiner-tree approximation, so at most
that many), the best precision it gives, and the requests of a breadth-first crawl to full recall on
the same links — a harvest's requests beyond the bound are the plan's waste, not the site's; for every
missed target whether it was fetched and classified into another
class or never fetched, and then the shortest path to it from the entry page, each page on it with
its model class, its truth class, whether the replay fetched it and the collection that links the
next page with the plan's decision on it; then the requests that led to no target (no target among
the pages fetched from what they queued), by class and by the collection they were fetched from.
``--classes`` takes model class ids; ``--truth`` the truth class, whose targets are the model classes
whose members are mostly of it (as ``benchmarks/harvest.py`` picks them: the model needs ``--members``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from collections import Counter, deque
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import corpora  # noqa: E402
from structcrawl.analysis.classify import Classifier  # noqa: E402
from structcrawl.analysis.harvestplan import Entry, Harvest, harvest_collections  # noqa: E402
from structcrawl.core.explorer import Scope  # noqa: E402
from structcrawl.core.features import extract  # noqa: E402
from structcrawl.core.traps import TrapDetector  # noqa: E402
from structcrawl.crawling.refusals import ignored_extensions, refusal  # noqa: E402
from structcrawl.crawling.runner import build_settings  # noqa: E402
from structcrawl.sitemodel import load_model  # noqa: E402

#: Download slots of the spider's one domain (CONCURRENT_REQUESTS_PER_DOMAIN, structcrawl.settings).
DOWNLOAD_SLOTS = 8
#: STRUCTCRAWL_TRAP_PAGES's default (structcrawl.settings).
TRAP_PAGES = 10
#: URLLENGTH_LIMIT, Scrapy's default.
MAX_URL_LENGTH = 2083
#: STRUCTCRAWL_IGNORED_EXTENSIONS's default (structcrawl.settings).
IGNORED = ignored_extensions(build_settings())
#: A page no path reaches (cost of :func:`bound`).
FAR_COST = 1 << 30


class Site:
    """A site's pages as the spider would see them at the model's address: features, class, links.

    ``corpus``: the files of a corpus of ``benchmarks/corpora.py``; else the demo bookshop of
    ``demo_pages`` pages, rendered in-process (its redirects followed)."""

    def __init__(self, model, classifier: Classifier, corpus: str | None = None, demo_pages: int = 0) -> None:
        self.corpus = corpus
        self.model = model
        self.classifier = classifier
        start = model.start_url
        parts = urlsplit(start)
        self.base = f"{parts.scheme}://{parts.netloc}/"
        scope = model.document.get("parameters", {}).get("scope") or {}
        self.scope = Scope(start, allow_subdomains=bool(scope.get("allow_subdomains")),
                           extra_domains=tuple(scope.get("extra_domains") or ()))
        self.cache: dict[str, tuple | None] = {}
        if corpus is not None:
            self.root = corpora.root_dir(corpus)
            self.demo = None
        else:
            from structcrawl.demo.site import DemoSite

            self.demo = DemoSite(pages=demo_pages)
            self.demo_truth = dict(self.demo.truth())

    def relpath(self, url: str) -> str | None:
        if not url.startswith(self.base):
            return None
        rel = unquote(urlsplit(url).path)[1:]
        return rel + "index.html" if rel == "" or rel.endswith("/") else rel

    def label(self, url: str) -> str | None:
        if self.demo is not None:
            return self.demo_truth.get(_path_qs(url)) if url.startswith(self.base) else None
        rel = self.relpath(url)
        if rel is None or "?" in url:  # a static file's query names no other page (benchmarks/harvest.py)
            return None
        return corpora.label(self.corpus, rel)

    def final(self, url: str) -> str:
        """The URL ``url`` redirects to (itself if it does not)."""
        if self.demo is None or not url.startswith(self.base):
            return url
        status, headers, _body = self.demo.render(_path_qs(url))
        location = headers.get("Location")
        return urljoin(url, location) if 300 <= status < 400 and location else url

    def _body(self, url: str) -> bytes | None:
        if self.demo is not None:
            if not url.startswith(self.base):
                return None
            status, headers, body = self.demo.render(_path_qs(url))
            return body if status == 200 and "html" in headers.get("Content-Type", "") else None
        rel = self.relpath(url)
        full = os.path.join(self.root, rel) if rel else None
        if full and os.path.isfile(full) and full.lower().endswith((".html", ".htm")):
            with open(full, "rb") as fh:
                return fh.read()
        return None

    def page(self, url: str):
        """(features, class, spelled in-scope collections) of the page at ``url``; None: no HTML page."""
        if url in self.cache:
            return self.cache[url]
        body = self._body(url)
        got = None
        if body is not None:
            features = extract(body, url, "text/html")
            cls, _cost = self.classifier.classify_features(features)
            spelled = self.model.site_model.speller.collections(features.collections)
            collections = {p: [u for u in us if self.scope(u)] for p, us in spelled.items()}
            got = (features, cls, collections)
        self.cache[url] = got
        return got

    def reachable(self, start: str) -> dict[str, tuple[str, str] | None]:
        """Every page reachable from ``start`` by in-scope links: url -> (page linking it first, collection path)."""
        parent: dict[str, tuple[str, str] | None] = {start: None}
        queue = deque([start])
        while queue:
            url = queue.popleft()
            got = self.page(url)
            if got is None:
                continue
            for path, urls in got[2].items():
                for u in urls:
                    u = self.final(u)
                    if u not in parent:
                        parent[u] = (url, path)
                        queue.append(u)
        return parent


def link_graph(site: Site, start: str) -> dict[str, list[str]]:
    """The pages reachable from ``start`` by the in-scope links the harvest sees (redirects followed), in
    breadth-first order (the order a FIFO crawler requests them: the start page, then what it links …),
    each with the pages it links; a URL that gives no HTML page (an error, a PDF) links nothing."""
    graph: dict[str, list[str]] = {start: []}
    queue = deque([start])
    while queue:
        url = queue.popleft()
        got = site.page(url)
        if got is None:
            continue
        out: dict[str, None] = {}
        for urls in got[2].values():
            for u in urls:
                out[site.final(u)] = None
        graph[url] = [u for u in out if u != url]
        for u in graph[url]:
            if u not in graph:
                graph[u] = []
                queue.append(u)
    return graph


@dataclass
class Bound:
    """What the site's links allow a harvest of ``targets`` pages (:func:`bound`)."""

    targets: int  #: target pages reachable from the start page
    hubs: list[str]  #: non-target pages a crawler must fetch to reach them all (greedy: at most this many)
    bfs: int  #: requests of a breadth-first crawl until it has them all (every link it sees, FIFO)

    @property
    def requests(self) -> int:
        return self.targets + len(self.hubs)

    @property
    def precision(self) -> float:
        return self.targets / max(1, self.requests)


def bound(graph: dict[str, list[str]], start: str, targets: set[str]) -> Bound:
    """The fewest non-target pages a crawler starting at ``start`` must fetch to reach every target page of
    ``graph`` (:func:`link_graph`), approximated: a node-weighted directed Steiner tree (a target page costs
    nothing, it is fetched anyway; any other page one request) grown by the shortest-path heuristic
    (Takahashi & Matsuyama 1980): from the pages fetched so far, the target that the fewest non-target
    pages reach is joined by its cheapest path, until every target is; a 0-1 breadth-first search keeps
    each page's cost from the tree.  An upper bound on the fewest (the best precision is at least
    targets / (targets + hubs)), exact when every target is one hub away from the tree (an index)."""
    targets = targets & graph.keys()
    position = {u: i for i, u in enumerate(graph)}
    bfs = max((position[u] for u in targets), default=-1) + 1
    hubs = [] if start in targets else [start]
    cost: dict[str, int] = {start: 0}
    parent: dict[str, str] = {}
    tree = {start}

    def spread(sources: list[str]) -> None:
        queue = deque(sources)
        while queue:
            u = queue.popleft()
            for v in graph.get(u, ()):
                step = 0 if v in targets or v in tree else 1
                if cost[u] + step < cost.get(v, FAR_COST):
                    cost[v] = cost[u] + step
                    parent[v] = u
                    if step:
                        queue.append(v)
                    else:
                        queue.appendleft(v)

    spread([start])
    while True:
        open_targets = [t for t in targets if cost.get(t, FAR_COST) > 0]
        if not open_targets:
            break
        best = min(open_targets, key=lambda t: (cost.get(t, FAR_COST), position[t]))
        if cost.get(best, FAR_COST) >= FAR_COST:
            break
        joined = []
        u = best
        while cost[u] > 0:
            if u not in targets:
                hubs.append(u)
            joined.append(u)
            tree.add(u)
            cost[u] = 0
            u = parent[u]
        spread(joined)
    return Bound(len(targets), hubs, bfs)


def _path_qs(url: str) -> str:
    parts = urlsplit(url)
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def model_targets(document: dict, site: Site, truth: set[str]) -> list[int]:
    """The model classes whose members are mostly of a truth class of ``truth`` (benchmarks/harvest.py's rule)."""
    out = []
    for c in document["classes"]:
        votes = Counter(site.label(u) for u in c.get("members") or ())
        votes.pop(None, None)
        if votes and votes.most_common(1)[0][0] in truth:
            out.append(c["id"])
    if not out:
        raise SystemExit(f"no model class holds {truth} pages (a model written with --members?)")
    return out


def replay(site: Site, harvest: Harvest, inflight_max: int, hub_inflight: int, shuffle: random.Random | None = None,
           stored: set[str] | None = None):
    """Feed ``harvest`` the site's pages in the spider's order (with ``shuffle``, the downloads in progress
    finish in a random order; ``stored``: the structure crawl's pages, read as the spider reads them from
    its store, not requested, but for targets); returns (requests, fetched: url -> entry, pages read)."""
    stored = set(stored or ())
    read = 0
    traps = TrapDetector(TRAP_PAGES)
    inflight: dict[str, Entry] = {}
    scheduled: deque[Entry] = deque()  # in the plan's order: the spider's requests carry it as their priority
    downloading: deque[Entry] = deque()
    fetched: dict[str, Entry] = {}  # in fetch order
    requests = 0

    def read_stored(entry: Entry) -> bool:
        nonlocal read
        if entry.url not in stored:
            return False
        stored.discard(entry.url)
        got = site.page(entry.url)
        if got is None or got[1] in harvest.targets or harvest.target_by_url(entry.url, got[1]) is not None:
            return False
        features, cls, collections = got
        traps.observe(features)
        harvest.page(entry.url, entry.key, cls,
                     harvest_collections(features, collections, site.model.site_model.speller.spell),
                     entry.explore, entry.url)
        fetched[entry.url] = entry
        read += 1
        return True

    def top_up() -> None:
        nonlocal requests
        while len(inflight) < inflight_max:
            entry = harvest.pop(hubs=len(inflight) < hub_inflight)
            if entry is None:
                return
            why = refusal(entry.url, MAX_URL_LENGTH, traps, IGNORED)
            if why == "trap" and harvest.looks_like_target(entry.url):
                why = None
            if why is not None:
                harvest.failed(entry)
                continue
            if read_stored(entry):
                continue
            requests += 1
            inflight[entry.url] = entry
            scheduled.append(entry)

    def fill() -> None:
        while len(downloading) < DOWNLOAD_SLOTS and scheduled:
            downloading.append(scheduled.popleft())

    while True:
        top_up()
        fill()
        while downloading:
            if shuffle is not None:
                downloading.rotate(-shuffle.randrange(len(downloading)))
            entry = downloading.popleft()
            inflight.pop(entry.url, None)
            final = site.final(entry.url)
            got = site.page(final)
            if final != entry.url and final in harvest.done:
                harvest.failed(entry, alias=True)
            elif got is None:
                harvest.failed(entry)
            else:
                fetched[final] = entry
                features, cls, collections = got
                traps.observe(features)
                harvest.page(final, entry.key, cls,
                             harvest_collections(features, collections, site.model.site_model.speller.spell),
                             entry.explore, entry.url)
            top_up()
            fill()
        if not inflight and (harvest.idle() or harvest.recheck()):
            continue
        if not inflight:
            return requests, fetched, read


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("--corpus", choices=sorted(corpora.CORPORA), help="default: the demo bookshop")
    ap.add_argument("--demo-pages", type=int, default=30000, help="the demo's size, as the model's crawl had it")
    ap.add_argument("--truth", help="the truth classes harvested, comma-separated (their model classes are "
                                    "the targets)")
    ap.add_argument("--classes", help="target model class ids, comma-separated (default: by --truth)")
    ap.add_argument("--inflight", type=int, default=32)
    ap.add_argument("--hub-inflight", type=int, default=DOWNLOAD_SLOTS)
    ap.add_argument("--explore", type=float, default=0.05, help="STRUCTCRAWL_HARVEST_EXPLORE")
    ap.add_argument("--explore-min", type=int, default=10, help="STRUCTCRAWL_HARVEST_EXPLORE_MIN")
    ap.add_argument("--no-store", action="store_true",
                    help="every page requested (a harvest without its structure crawl's store: the model's "
                         "members are that crawl's pages)")
    ap.add_argument("--paths", type=int, default=20, help="missed targets whose path is printed")
    ap.add_argument("--waste", type=int, default=15, help="rows of the requests that led to no target")
    ap.add_argument("--shuffle", type=int, metavar="SEED",
                    help="downloads in progress finish in a random order drawn from this seed")
    args = ap.parse_args(argv)

    model = load_model(args.model)
    document = model.document
    site = Site(model, Classifier(model), args.corpus, args.demo_pages)
    names = set(args.truth.split(",")) if args.truth else None
    targets = [int(c) for c in args.classes.split(",")] if args.classes else model_targets(document, site, names)
    harvest = Harvest(document, targets, explore_share=args.explore, explore_min=args.explore_min)
    start = model.start_url
    harvest.seed(start)
    shuffle = random.Random(args.shuffle) if args.shuffle is not None else None
    stored = set() if args.no_store else {u for c in document["classes"] for u in c.get("members") or ()}
    requests, fetched, read = replay(site, harvest, args.inflight, args.hub_inflight, shuffle, stored)

    parent = site.reachable(start)
    names = names or {Counter(site.label(u) for c in document["classes"] if c["id"] in targets
                              for u in c.get("members") or ()).most_common(1)[0][0]}
    truth_name = "+".join(sorted(names))
    truth_pages = {u for u in parent if site.label(u) in names and site.page(u) is not None}
    got = {u for u in fetched if (p := site.page(u)) is not None
           and (p[1] in harvest.targets or harvest.target_by_url(u, p[1]) is not None)}
    found = truth_pages & got
    order = list(fetched)
    last = max((i for i, u in enumerate(order) if u in found), default=-1) + 1
    print(f"{args.corpus or 'demo'} {truth_name} (classes {','.join(map(str, targets))}): recall "
          f"{len(found) / max(1, len(truth_pages)):.3f} ({len(found)} of {len(truth_pages)} reachable), "
          f"{requests} requests ({read} pages read from the structure crawl's store), "
          f"precision {len(found) / max(1, requests):.2f}; "
          f"{harvest.explored} explored; false items {len(got - truth_pages)}; "
          f"last target at page {last} of {len(order)}")
    print("   fetched by class:", dict(sorted(harvest.pages_of.items(), key=lambda kv: -kv[1])))
    best = bound(link_graph(site, start), start, truth_pages)
    print(f"   bound by the site's links: {len(best.hubs)} non-target pages reach every target -> at best "
          f"{best.requests} requests, precision {best.precision:.2f} (measured {len(found) / max(1, requests):.2f}, "
          f"{requests - best.requests:+d} requests); breadth-first to full recall {best.bfs} requests "
          f"(harvest / BFS: at best {best.requests / max(1, best.bfs):.2f}, measured "
          f"{requests / max(1, best.bfs):.2f})")
    print("   the hubs it needs (model class, truth class):",
          dict(Counter((site.page(u)[1], site.label(u)) for u in best.hubs).most_common(8)))

    missed = sorted(truth_pages - got)
    for url in missed[: args.paths]:
        if url in fetched:
            print(f" * {url[len(site.base):]}: fetched, classified {site.page(url)[1]}")
            continue
        print(f" * {url[len(site.base):]}: never fetched; linked by {_linkers(site, harvest, url, fetched)}")
        chain = []
        u = url
        while parent.get(u) is not None:
            chain.append(parent[u])
            u = parent[u][0]
        for src, path in reversed(chain):
            cls = site.page(src)[1]
            col = harvest.collections.get((cls, path))
            state = "unseen" if col is None else col.decision + (" barren" if col.barren else "") \
                + (" rechecked" if col.rechecked else "")
            print(f"     {'F' if src in fetched else '-'} {src[len(site.base):]} [class {cls}, "
                  f"{site.label(src)}] --{path[-60:]} ({state})-->")
    if len(missed) > args.paths:
        print(f"   … {len(missed) - args.paths} more missed")

    # the fetch tree: a request led to a target when a target was fetched from what it queued
    leads: set[str] = set()
    for url in got:
        u: str | None = url
        while u is not None and u not in leads:
            leads.add(u)
            u = fetched[u].referer if u in fetched else None
    waste_by: Counter = Counter()
    for url, entry in fetched.items():
        if url not in leads:
            p = site.page(url)
            waste_by[(p[1] if p else "no page", entry.key, entry.explore)] += 1
    print(f"   requests that led to no target: {sum(waste_by.values())}")
    for (cls, key, explore), n in waste_by.most_common(args.waste):
        decision = harvest.collections[key].decision if key in harvest.collections else "-"
        print(f"     {n:5d}  class {cls} from {key and (key[0], key[1][-70:])} {decision}{' probe' if explore else ''}")
    print(json.dumps({"recall": round(len(found) / max(1, len(truth_pages)), 3), "requests": requests,
                      "targets": len(found), "truth": len(truth_pages), "bound_hubs": len(best.hubs),
                      "bound_precision": round(best.precision, 2), "bfs": best.bfs}))
    return 0


def _linkers(site: Site, harvest: Harvest, url: str, fetched: dict) -> str:
    """The fetched pages that link ``url``: (class, collection path, the plan's decision) of each, counted."""
    seen: Counter = Counter()
    for src in fetched:
        got = site.page(src)
        if got is None:
            continue
        for path, urls in got[2].items():
            if url in urls:
                col = harvest.collections.get((got[1], path))
                seen[(got[1], path[-50:], col.decision if col else "-")] += 1
    return ", ".join(f"{n}× {k}" for k, n in seen.most_common(4)) or "no fetched page"


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
