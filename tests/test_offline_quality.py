"""Issue #3 acceptance: the Compute-Model loop on the default demo site, offline
(pages straight from the generator, no HTTP), scored against the truth."""

from collections import Counter, deque

import pytest

from structcrawl.analysis.metrics import evaluate
from structcrawl.core.explorer import Explorer, run_offline
from structcrawl.core.features import extract
from structcrawl.demo.site import DemoSite, fetcher

BASE = "http://127.0.0.1:8000"


@pytest.fixture(scope="module")
def site():
    return DemoSite()


@pytest.fixture(scope="module")
def truth(site):
    return {BASE + path: cls for path, cls in site.truth()}


@pytest.fixture(scope="module")
def features(site, truth):
    fetch = fetcher(site, BASE)
    return {url: extract(fetch(url)[1], url) for url in truth}


def crawl_and_score(site, truth, features, strategy):
    explorer = run_offline(fetcher(site, BASE), BASE + "/", strategy=strategy)
    assigned = {url: explorer.classify(f)[0] for url, f in features.items()}
    return explorer, evaluate(assigned, truth)


def test_densest_first_stops_early_with_a_faithful_model(site, truth, features):
    explorer, score = crawl_and_score(site, truth, features, "densest")
    fetched = len(explorer.model.pages)
    assert explorer.stable and "predicted the class" in explorer.stability.reason
    assert fetched <= 0.10 * len(truth), fetched  # issue 13: the demo within 10 %
    assert score["fstar"] >= 0.98, score
    assert score["ari"] >= 0.95, score
    # every truth class with >= 20 pages is the majority of some model class
    found = set()
    for cls in explorer.model.classes.values():
        majority, _n = Counter(truth[u] for u in cls.members).most_common(1)[0]
        found.add(majority)
    big = {c for c, n in Counter(truth.values()).items() if n >= 20}
    assert big <= found, big - found


def test_sparsest_first(site, truth, features):
    explorer, score = crawl_and_score(site, truth, features, "sparsest")
    assert explorer.stable
    assert len(explorer.model.pages) <= 0.10 * len(truth)
    assert score["fstar"] >= 0.98, score


def crawl_in_flight(site, hold: bool, inflight: int = 32):
    """The spider's order: batches handed out while fewer than ``inflight`` URLs are out,
    stepped in hand-out order; with ``hold``, a batch handed out while the URLs sent already
    bring the check that may stop the crawl its pages (``pages_to_a_possible_stop``) is sent
    only once that check ran (the audit always, and what was held before it).  Returns the
    explorer and the pages fetched (sent URLs that gave a page)."""
    fetch = fetcher(site, BASE)
    explorer = Explorer(BASE + "/")
    out: deque = deque()  # [batch, sent]
    fetched = 0

    def waits() -> bool:
        needed = explorer.pages_to_a_possible_stop()
        sent = sum(len(b.urls) for b, s in out if s)
        return hold and needed is not None and 0 < sent >= needed

    while not explorer.stable:
        if not waits():
            for entry in out:
                entry[1] = True
        while sum(len(b.urls) for b, _s in out) < inflight:
            held = any(not s for _b, s in out) or waits()
            batch = explorer.next_batch()
            if batch is None:
                break
            if batch is explorer.audit:
                for entry in out:
                    entry[1] = True
            out.append([batch, batch is explorer.audit or not held])
        batch, sent = out.popleft()
        assert sent, "a held batch is due: nothing sent is left to wait for"
        got = [fetch(u) for u in batch.urls]
        fetched += sum(1 for g in got if g)
        explorer.complete(batch, [extract(g[1], g[0]) for g in got if g],
                          [u for u, g in zip(batch.urls, got) if g is None])
    fetched += sum(len(b.urls) for b, s in out if s)  # sent, and fetched for nothing
    return explorer, fetched


def test_holding_what_the_stop_may_not_need_fetches_nothing_for_nothing(site):
    """Holding back what is handed out past the check that may stop the crawl changes
    nothing in the model's course, and at the spider's default 32 URLs out every page
    fetched is a page modelled."""
    plain, plain_fetched = crawl_in_flight(site, hold=False)
    held, held_fetched = crawl_in_flight(site, hold=True)
    assert held.model.page_class == plain.model.page_class
    assert plain_fetched > len(plain.model.pages)  # URLs were out at the stop
    assert held_fetched == len(held.model.pages) <= 0.10 * len(site)  # issue 13: the demo within 10 %


def test_exhaust_models_every_page(site, truth):
    explorer = run_offline(fetcher(site, BASE), BASE + "/", stop="exhaust")
    assert set(explorer.model.pages) == set(truth)
    assert explorer.frontier.pop(lambda c: 2) is None


def test_replaying_batches_rebuilds_the_same_state(site):
    """What a store keeps (batches in order, their pages) is enough to resume exactly."""
    fetch = fetcher(site, BASE)
    log = []  # (batch, features, failed) as a store would hold them
    explorer = Explorer(BASE + "/")
    while len(log) < 25:
        batch = explorer.next_batch()
        pages, failed = [], []
        for u in batch.urls:
            got = fetch(u)
            if got is None:
                failed.append(u)
                continue
            if got[0] != u:
                explorer.redirected(u, got[0])
            pages.append(extract(got[1], got[0]))
        explorer.complete(batch, pages, failed)
        log.append((batch, pages, failed))
    resumed = Explorer(BASE + "/")
    for batch, pages, failed in log:
        for u in batch.urls:
            got = fetch(u)
            if got and got[0] != u:
                resumed.redirected(u, got[0])
        resumed.replay(batch, pages, failed)
    assert resumed.model.page_class == explorer.model.page_class
    assert resumed.model.mdl == explorer.model.mdl
    assert resumed.frontier.issued == explorer.frontier.issued
    # and both pick the same next batches
    for _ in range(5):
        assert resumed.next_batch() == explorer.next_batch()


def test_online_refinement_keeps_or_improves_fstar(site, truth, features):
    with_refinement, score_on = crawl_and_score(site, truth, features, "densest")
    explorer = run_offline(fetcher(site, BASE), BASE + "/", refiner=False)
    score_off = evaluate({u: explorer.classify(f)[0] for u, f in features.items()}, truth)
    assert score_on["fstar"] >= score_off["fstar"], (score_on, score_off)
    # the two deliberately similar templates were never merged
    majority = {
        cid: Counter(truth[u] for u in cls.members).most_common(1)[0][0]
        for cid, cls in with_refinement.model.classes.items()
    }
    authors = [c for c, m in majority.items() if m == "author"]
    publishers = [c for c, m in majority.items() if m == "publisher"]
    assert authors and publishers and not set(authors) & set(publishers)
    for merge in with_refinement.merges:
        assert merge.similarity >= 0.8


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("strategy", ["densest", "sparsest"])
def test_every_class_is_one_template_on_other_demo_sites(seed, strategy):
    """Other seeds of the demo site: all 11 templates found, no class mixes two.  (Seed 3,
    sparsest: a batch of author pages is a tag-path twin of the publisher class; the twin
    rule took it in until it respected the sections that tell the two apart.)"""
    site = DemoSite(seed=seed)
    truth = {BASE + path: cls for path, cls in site.truth()}
    explorer = run_offline(fetcher(site, BASE), BASE + "/", strategy=strategy)
    kinds = {cid: {truth[u] for u in cls.members} for cid, cls in explorer.model.classes.items()}
    assert {cid: k for cid, k in kinds.items() if len(k) > 1} == {}
    assert len(kinds) == len(set(truth.values())) == 11


def test_copies_are_aliases_and_a_collection_of_copies_is_a_trap():
    """A home page listing 40 items, each linking to a frameset wrapper
    /index.html?N that is the same page under endless URLs."""
    base = "http://trap.test"
    items = "".join(f'<li><a href="/item/{i}">i{i}</a></li>' for i in range(40))
    home = f"<html><body><ul class='items'>{items}</ul></body></html>".encode()

    def item(i):
        return (f"<html><body><h1>{i}</h1><p class='wrap'><a href='/index.html?{i}'>frames</a></p>"
                "</body></html>").encode()

    frameset = b"<html><frameset><frame src='/menu.html'></frameset></html>"
    fetched = []

    def fetch(url):
        fetched.append(url)
        path = url[len(base):]
        if path == "/":
            return url, home
        if path.startswith("/item/"):
            return url, item(int(path.rsplit("/", 1)[1]))
        if path.startswith("/index.html?"):
            return url, frameset
        return None

    explorer = run_offline(fetch, base + "/", stop="exhaust")
    wrappers = [u for u in fetched if "index.html?" in u]
    assert len(wrappers) == 15  # a probe of 5 and a batch of 10 copies, then the collection is emptied
    assert explorer.traps and explorer.traps[0][1].endswith("p.wrap/a")
    first = min(wrappers, key=wrappers.index)
    assert all(explorer.aliases[u] == first for u in wrappers if u != first)
    assert len([u for u in explorer.model.pages if "index.html?" in u]) == 1


def test_a_collection_whose_links_all_fail_is_emptied():
    base = "http://dead.test"
    home = ("<html><body><ul class='ok'>" + "".join(f"<li><a href='/p/{i}'>p</a></li>" for i in range(5))
            + "</ul><ul class='dead'>" + "".join(f"<li><a href='/gone/{i}'>x</a></li>" for i in range(40))
            + "</ul></body></html>").encode()
    fetched = []

    def fetch(url):
        fetched.append(url)
        path = url[len(base):]
        if path == "/":
            return url, home
        if path.startswith("/p/"):
            return url, b"<html><body><p>page</p></body></html>"
        return None  # robots.txt refusal, 404, ...

    explorer = run_offline(fetch, base + "/", stop="exhaust")
    assert len([u for u in fetched if "/gone/" in u]) == 15  # a probe of 5, a batch of 10
    assert any(key[1].endswith("ul.dead/li/a") for key in explorer.traps)


def test_a_directory_or_file_type_where_every_url_failed_is_not_fetched_again():
    """Dead links spread over twelve collections, three each, into a subtree that is not
    there (a sibling package not installed), and each page's JSON twin (not HTML): no
    collection fails often enough to be a trap, but the directory and the file type do.
    A live directory keeps its broken links fetched."""
    base = "http://dead.test"
    names = "red orange yellow green blue indigo violet black white grey brown pink".split()
    lists = "".join(f"<ul class='{name}'><li><a href='/p/{k}'>p</a></li><li><a href='/p/x{k}'>broken</a></li>"
                    f"<li><a href='/p/{k}.json'>json</a></li>"
                    + "".join(f"<li><a href='/gone/{k}/{j}'>x</a></li>" for j in range(3)) + "</ul>"
                    for k, name in enumerate(names))
    home = f"<html><body>{lists}</body></html>".encode()
    fetched = []

    def fetch(url):
        fetched.append(url)
        path = url[len(base):]
        if path == "/":
            return url, home
        if path.startswith("/p/") and "x" not in path and "." not in path:
            return url, f"<html><body><h{1 + len(path) % 2}>page</h{1 + len(path) % 2}></body></html>".encode()
        return None  # 404, or not HTML

    explorer = run_offline(fetch, base + "/", stop="exhaust")
    gone = [u for u in fetched if "/gone/" in u]
    assert 10 <= len(gone) <= 12, gone  # the failures of the batch that made it ten, none after
    assert 10 <= len([u for u in fetched if u.endswith(".json")]) <= 11
    assert sorted(explorer.frontier.dead.found) == [base + "/*.json", base + "/gone/"]
    assert len([u for u in fetched if "/p/x" in u]) == 12  # /p/ answered: its broken links are tried
    assert len([u for u in fetched if u.startswith(base + "/p/") and "x" not in u and not u.endswith(".json")]) == 12
    assert not explorer.traps


# -- a small synthetic site: one template whose pages show optional sections ----------

def _sectioned_site(items=1000, lists=40, seed=7):
    """Home -> list pages -> item pages.  Every item page shows each of six optional link
    sections with probability 0.3 (so most pages have a link schema no other page has)
    and an image map whose id is spelled from the item's name."""
    import random

    rnd = random.Random(seed)
    base = "http://opt.test"
    nav = '<div id="nav"><a href="/">Home</a> <a href="/list/0">Lists</a></div>'
    pages, truth = {}, {}
    pages["/"] = nav + "".join(f'<ul class="lists"><li><a href="/list/{i}">L{i}</a></li></ul>' for i in range(lists))
    truth["/"] = "home"
    per = items // lists
    for i in range(lists):
        links = "".join(f'<li><a href="/item/{j}">I{j}</a></li>' for j in range(i * per, (i + 1) * per))
        pager = f'<p class="pager"><a href="/list/{(i + 1) % lists}">next</a></p>'
        pages[f"/list/{i}"] = nav + f'<ul class="items">{links}</ul>' + pager
        truth[f"/list/{i}"] = "list"
    sections = ["related", "inherited", "seealso", "members", "examples", "notes"]
    for j in range(items):
        body = nav + f'<div class="main"><p>in <a href="/list/{j // per}">list</a></p>'
        body += f'<map id="ns::Item{chr(65 + j % 26)}::x_map"><area href="/item/{(j + 1) % items}"></map>'
        for name in sections:
            if rnd.random() < 0.3:
                targets = rnd.sample(range(items), 3)
                lis = "".join(f'<li><a href="/item/{t}">x</a></li>' for t in targets)
                body += f'<div class="{name}"><ul>' + lis + "</ul></div>"
        pages[f"/item/{j}"] = body + "</div>"
        truth[f"/item/{j}"] = "item"
    html = {base + p: f"<html><body>{b}</body></html>".encode() for p, b in pages.items()}
    return base, html, {base + p: c for p, c in truth.items()}


def test_optional_sections_make_one_class_and_the_crawl_stops():
    """Regression (geos): under the flat §3.2 code every optional-section combination
    founded a class of its own and the stop rule never fired."""
    base, html, truth = _sectioned_site()
    explorer = run_offline(lambda u: (u, html[u]) if u in html else None, base + "/")
    assert explorer.stable
    assert len(explorer.model.pages) <= 0.3 * len(truth)
    assigned = {u: explorer.classify(extract(html[u], u))[0] for u in truth}
    score = evaluate(assigned, truth)
    assert score["fstar"] >= 0.99, score  # the flat code: 576 of 1,041 pages, 4 classes, F* 0.956
    item_classes = Counter(assigned[u] for u, c in truth.items() if c == "item")
    assert item_classes.most_common(1)[0][1] >= 0.95 * 1000, item_classes
