"""The harvest's plan and frontier (structcrawl.analysis.harvestplan) on a small hand-made class graph."""

from __future__ import annotations

from collections import Counter

from structcrawl.analysis.harvestplan import (
    BARREN_TARGETS,
    DEAD_WINDOW,
    FAR,
    LIST_EVIDENCE,
    LIST_MARK,
    PROBE_PAGES,
    QUIET_MIN,
    RECHECK_PAGES,
    Entry,
    Harvest,
    class_distances,
    harvest_collections,
)
from structcrawl.core.features import extract

H = "http://shop.test"
MENU, PAGER, ITEMS, REVIEWS, BACK, ODD = "nav/a", "div.pager/a", "ul.items/li/a", "ul.reviews/li/a", "p.about/a", "x/a"


def document() -> dict:
    """home (0) -menu-> list (1) -pager-> list, list -items-> item (2) -reviews-> review (3) -back-> item."""
    links = [(0, MENU, 1, 3), (1, PAGER, 1, 10), (1, ITEMS, 2, 40), (2, REVIEWS, 3, 12), (3, BACK, 2, 12)]
    sizes = {0: 1, 1: 5, 2: 40, 3: 12}
    patterns = {0: "^/$", 1: r"^/list/\d+$", 2: r"^/item/\d+$", 3: r"^/review/\d+$"}
    return {
        "classes": [{"id": c, "size": n, "url_pattern": patterns[c]} for c, n in sizes.items()],
        "class_links": [{"source": s, "path": p, "target": t, "count": n} for s, p, t, n in links],
    }


def harvest(**kw) -> Harvest:
    return Harvest(document(), [2], explore_share=kw.get("share", 0.0), explore_min=kw.get("minimum", 0))


def drain(h: Harvest) -> list[str]:
    out = []
    while (entry := h.pop()) is not None:
        out.append(entry.url)
    return out


def fetch(h: Harvest, class_of) -> list[str]:
    """A harvest one page at a time: each URL handed out is reported, of ``class_of(url)`` with no link."""
    out = []
    while (entry := h.pop()) is not None:
        out.append(entry.url)
        h.page(entry.url, entry.key, class_of(entry.url), {})
    return out


def test_distances_follow_the_class_graph_backwards():
    dist = class_distances([(0, 1), (1, 1), (1, 2), (2, 3), (3, 2), (4, 0)], [2])
    assert dist == {2: 0, 1: 1, 3: 1, 0: 2, 4: 3}
    assert class_distances([(0, 1)], [5])[0] == FAR


def test_items_first_reviews_never():
    h = harvest()
    h.seed(H + "/")
    assert drain(h) == [H + "/"]
    h.page(H + "/", None, 0, {MENU: [H + "/list/1"]})
    assert drain(h) == [H + "/list/1"]
    h.page(H + "/list/1", (0, MENU), 1, {PAGER: [H + "/list/2"], ITEMS: [H + "/item/1", H + "/item/2"]})
    # the targets before the next page of the listing
    assert drain(h) == [H + "/item/1", H + "/item/2", H + "/list/2"]
    out = h.page(H + "/item/1", (1, ITEMS), 2, {REVIEWS: [H + "/review/1"]})
    assert out.kind == "target" and h.harvested == 1
    assert drain(h) == []  # a review is farther from the items than the item itself
    assert h.collections[(2, REVIEWS)].decision == "skip"
    assert h.hubs() == {0, 1, 3}


def test_unseen_collection_is_probed_within_the_budget_and_followed_when_it_pays():
    h = harvest(minimum=3)
    h.seed(H + "/")
    drain(h)
    odd = [H + f"/odd/{i}" for i in range(10)]
    h.page(H + "/", None, 0, {ODD: odd})
    probes = drain(h)
    assert len(probes) == 3 <= PROBE_PAGES  # the budget: 3 pages
    assert all(h.collections[(0, ODD)].decision == "explore" for _ in probes)
    h.page(probes[0], (0, ODD), 2, {}, explore=True)  # it leads to an item: followed from now on
    assert h.collections[(0, ODD)].decision == "follow"
    rest = drain(h)
    assert set(rest) == set(odd) - set(probes)


def test_a_followed_collection_that_shows_nothing_new_dies():
    h = harvest()
    h.seed(H + "/")
    drain(h)
    lists = [H + f"/list/{i}" for i in range(40)]
    h.page(H + "/", None, 0, {MENU: lists, ITEMS: [H + "/item/1"]})
    assert h.collections[(0, MENU)].decision == "follow"
    drain(h)
    for url in lists:  # listings whose only item is known already
        h.page(url, (0, MENU), 1, {ITEMS: [H + "/item/1"]})
    assert h.collections[(0, MENU)].decision == "skip"


def lists_showing(h: Harvest, shown: list[list[int]]) -> None:
    """``h`` fetches the home page, then one listing per entry of ``shown`` (the items it links), each
    item the first time a listing shows it (a target)."""
    h.seed(H + "/")
    drain(h)
    lists = [H + f"/list/{i}" for i in range(len(shown) + 10)]
    h.page(H + "/", None, 0, {MENU: lists})
    drain(h)
    harvested = set()
    for url, items in zip(lists, shown):
        h.page(url, (0, MENU), 1, {ITEMS: [H + f"/item/{i}" for i in items]})
        for i in items:
            if i not in harvested:
                harvested.add(i)
                h.page(H + f"/item/{i}", (1, ITEMS), 2, {})


def test_listings_that_stop_showing_new_items_die_once_the_items_seen_say_few_are_left():
    """Ten listings each show a new item, ten more only items shown before: with every item shown twice,
    none is likely left (Chao's bound: 0) and the home's menu, useful on all its ten pages before, is dead
    after a run of DEAD_WINDOW; with two items shown once, some may be left (analysis.unseen): the chance
    that a listing shows one, 2 of 20 sightings, makes that run chance, and the menu is followed on."""
    twice = [[i] for i in range(10)] + [[i] for i in range(10)]
    h = harvest()
    lists_showing(h, twice)
    assert h.seen.unseen() == 0 and h.collections[(0, MENU)].useless_run == DEAD_WINDOW
    assert h.collections[(0, MENU)].decision == "skip"

    two_once = [[i] for i in range(10)] + [[i] for i in range(8)] + [[0], [1]]
    h = harvest()
    lists_showing(h, two_once)
    assert h.seen.discovery_rate() == 2 / 20 and h.collections[(0, MENU)].useless_run == DEAD_WINDOW
    assert h.collections[(0, MENU)].decision == "follow"


def listed(items: int = 8) -> Harvest:
    """A harvest that fetched the home page and one listing of ``items`` items, none fetched yet."""
    return through_listing(harvest(), [H + f"/item/{i}" for i in range(items)])


def through_listing(h: Harvest, items: list[str]) -> Harvest:
    """``h`` after fetching the home page and one listing of ``items`` (handed out, none fetched yet)."""
    h.seed(H + "/")
    drain(h)
    h.page(H + "/", None, 0, {MENU: [H + "/list/1"]})
    drain(h)
    h.page(H + "/list/1", (0, MENU), 1, {ITEMS: items})
    return h


def test_estimated_targets_from_the_link_counts():
    h = listed()
    assert h.estimated_targets() == 8  # every link of that collection led to an item in the model


def test_summary_per_class_roles_and_estimates():
    h = listed()
    h.pop()
    h.page(H + "/item/0", (1, ITEMS), 2, {})
    rows = {r["class"]: r for r in h.summary()}
    assert rows[2] == {"class": 2, "role": "target", "fetched": 1, "harvested": 1, "estimated": 8}
    assert rows[1] == {"class": 1, "role": "hub", "fetched": 1}
    assert rows[3]["role"] == "hub" and rows[3]["fetched"] == 0  # reviews link back to items
    assert [r["class"] for r in h.summary()] == [0, 1, 2, 3]


CRUMB, USES = "p.crumb/a", "nav.uses/a"


def test_a_target_page_leads_to_its_listing_but_not_to_its_reviews():
    """An item links its listing (a class whose pages link 8 items each): it may list items no other page
    links, so it is followed; its reviews (one item each) are not."""
    doc = document()
    doc["class_links"].append({"source": 2, "path": CRUMB, "target": 1, "count": 40})
    h = through_listing(Harvest(doc, [2], explore_share=0.0, explore_min=0), [H + "/item/1"])
    drain(h)
    h.page(H + "/item/1", (1, ITEMS), 2, {CRUMB: [H + "/list/9"], REVIEWS: [H + "/review/1"]})
    assert drain(h) == [H + "/list/9"]


def test_the_words_of_sample_urls_predict_a_url_its_class_pattern_misses():
    """A collection leading to listings and to 'use' pages (the targets), whose URL pattern was learnt
    from the pages of one folder: a 'use' page of another folder is predicted by its words, a target."""
    doc = document()
    doc["classes"] = [c for c in doc["classes"] if c["id"] != 2] + [
        {"id": 5, "size": 2, "url_pattern": r"^/math/use/[^/?]+\.html$",
         "samples": [H + "/math/use/Vector.html", H + "/math/use/Matrix.html"]}]
    doc["classes"][1]["samples"] = [H + "/list/1", H + "/list/2"]
    doc["class_links"] = [{"source": 0, "path": MENU, "target": 1, "count": 3},
                          {"source": 0, "path": MENU, "target": 5, "count": 1}]
    h = Harvest(doc, [5], explore_share=0.0, explore_min=0)
    h.seed(H + "/")
    drain(h)
    h.page(H + "/", None, 0, {MENU: [H + "/list/3", H + "/stats/use/Mean.html"]})
    # by the most frequent class of the collection it would be a listing, which leads to no target here
    assert drain(h) == [H + "/stats/use/Mean.html"]


def test_one_word_the_samples_of_a_class_share_does_not_predict_it():
    """A front page's menu leads to chapters (the targets) and to reference pages, all in one folder kind.
    The reference samples share one word beyond what the chapters' share, their folder ``html``: no
    evidence that a chapter in such a folder is a reference page; the longer URL pattern of the two, the
    chapters', predicts it.  Two shared words do predict (WORD_EVIDENCE)."""
    flip = "ul.flip/li/a"

    def doc(reference_samples: list[str]) -> dict:
        return {
            "classes": [
                {"id": 0, "size": 1, "url_pattern": "^/$"},
                # front pages: the longest pattern matching the menu's URLs, so not a target's (first rule)
                {"id": 1, "size": 5,
                 "url_pattern": r"^(?:/doc/[^/?]+/users_guide\.html|/lib/[^/?]+/doc/html/[^/?]+\.html)$"},
                {"id": 4, "size": 40, "url_pattern": r"^/lib/[^/?]+/doc/html/[^/?]+\.html$",
                 "samples": [H + u for u in reference_samples]},
                {"id": 6, "size": 30,
                 "url_pattern": r"^(?:/doc/[^/?]+/[^/?]+\.html|/lib/[^/?]+/doc/html/[^/?]+\.html)$",
                 "samples": [H + "/doc/guide/intro.html", H + "/lib/kernel-8/doc/html/start.html"]},
            ],
            "class_links": [{"source": 0, "path": MENU, "target": 1, "count": 5},
                            {"source": 1, "path": flip, "target": 4, "count": 44},
                            {"source": 1, "path": flip, "target": 6, "count": 41},
                            {"source": 4, "path": "p/a", "target": 6, "count": 20}],
        }

    def predicted(document: dict) -> list:
        h = Harvest(document, [6], explore_share=0.0, explore_min=0)
        h.seed(H + "/")
        drain(h)
        h.page(H + "/", None, 0, {MENU: [H + "/lib/ssl-10/doc/html/index.html"]})
        drain(h)
        front = H + "/lib/ssl-10/doc/html/index.html"
        h.page(front, (0, MENU), 1, {flip: [H + "/lib/ssl-10/doc/html/using_ssl.html"]})
        return list(h.buckets)

    assert predicted(doc(["/lib/stdlib-4/doc/html/re.html", "/erts/doc/html/erlang.html"])) == [6]
    assert predicted(doc(["/lib/stdlib-4/doc/html/re.html", "/lib/kernel-8/doc/html/file.html"])) == [4]


def test_the_pages_fetched_of_one_pages_menu_predict_its_other_links():
    """Two front pages' menus under one path and one URL shape: a reference manual's lists modules, a users'
    guide's chapters (the targets), all predicted chapters by the URL pattern.  Once three of the manual's
    are modules, its other links are predicted modules too: the guide's chapters go first."""
    flip = "ul.flip/li/a"
    doc = {
        "classes": [
            {"id": 0, "size": 1, "url_pattern": "^/$"},
            {"id": 1, "size": 5, "url_pattern": r"^/[^/?]+/index\.html$"},
            {"id": 4, "size": 40, "url_pattern": r"^/[^/?]+/[^/?]+\.html$"},
            {"id": 6, "size": 30, "url_pattern": r"^(?:/doc/[^/?]+\.html|/[^/?]+/[^/?]+\.html)$"},
        ],
        "class_links": [{"source": 0, "path": MENU, "target": 1, "count": 5},
                        {"source": 1, "path": flip, "target": 4, "count": 44},
                        {"source": 1, "path": flip, "target": 6, "count": 41},
                        {"source": 4, "path": "p/a", "target": 6, "count": 20}],
    }
    h = Harvest(doc, [6], explore_share=0.0, explore_min=0)
    h.seed(H + "/")
    drain(h)
    manual, guide = H + "/ssl/index.html", H + "/kernel/index.html"
    h.page(H + "/", None, 0, {MENU: [manual, guide]})
    drain(h)
    modules = [H + f"/ssl/mod{i}.html" for i in range(5)]
    chapters = [H + f"/kernel/chapter{i}.html" for i in range(3)]
    h.page(manual, (0, MENU), 1, {flip: modules})
    h.page(guide, (0, MENU), 1, {flip: chapters})
    for _ in range(3):
        entry = h.pop()
        h.page(entry.url, entry.key, 4, {})
    assert drain(h) == chapters + modules[3:]


def test_a_quiet_hub_class_is_parked_while_the_harvest_is_quiet():
    h = harvest()
    h.seed(H + "/")
    drain(h)
    h.page(H + "/", None, 0, {MENU: [H + f"/list/{i}" for i in range(1, QUIET_MIN + 2)]})
    for i in range(1, QUIET_MIN + 1):  # QUIET_MIN listings in a row: a next page each, no new item
        url = h.pop().url
        assert url.startswith(H + "/list/")
        h.page(url, (0, MENU), 1, {PAGER: [H + f"/list/next-{i}"]})
    assert h.quiet_hub(1) and not h.quiet_hub(3) and not h.quiet_hub(2)
    assert drain(h) == [] and len(h.parked) == QUIET_MIN + 1  # the listings wait
    h.page(H + "/item/1", None, 2, {})  # a target: something new
    # they come back, but the menu's last listing: QUIET_MIN listings from the menu never paid
    assert not h.quiet_hub(1) and h.quiet_hub(1, (0, MENU)) and len(drain(h)) == QUIET_MIN


def test_a_url_lacking_one_of_a_class_words_is_not_voted_into_it():
    """Two pages of a module class share 'lib erl interface'; a chapter's URL has only 'lib': by one word it
    is no module page.  The listing's pattern decides: a chapter (the target)."""
    doc = document()
    doc["classes"] = [
        {"id": 0, "size": 1, "url_pattern": "^/$", "samples": [H + "/"]},
        {"id": 4, "size": 50, "url_pattern": r"^/lib/[^/?]+/doc/[^/?]+\.html$",
         "samples": [H + "/lib/a-1/doc/x.html", H + "/lib/b-2/doc/y.html", H + "/lib/c-3/doc/z.html"]},
        {"id": 19, "size": 2, "url_pattern": r"^/lib/erl_interface-5/doc/[^/?]+\.html$",
         "samples": [H + "/lib/erl_interface-5/doc/ei.html", H + "/lib/erl_interface-5/doc/ei_connect.html"]},
    ]
    doc["class_links"] = [{"source": 0, "path": MENU, "target": 4, "count": 30},
                          {"source": 0, "path": MENU, "target": 19, "count": 2}]
    h = Harvest(doc, [4], explore_share=0.0, explore_min=0)
    h.seed(H + "/")
    drain(h)
    h.page(H + "/", None, 0, {MENU: [H + "/lib/debugger-5/doc/chapter.html"]})
    assert h.buckets and list(h.buckets) == [4]  # predicted a chapter: a target


def test_when_the_plan_runs_dry_a_skipped_collection_is_rechecked_and_followed_when_it_pays():
    reviews = [H + f"/review/{i}" for i in range(1, 4)]
    for budget, expected in ((0, 0), (20, 1)):  # re-checks spend the exploration budget, nothing more
        h = through_listing(harvest(minimum=budget), [H + "/item/1"])
        drain(h)
        h.page(H + "/item/1", (1, ITEMS), 2, {REVIEWS: reviews})
        assert drain(h) == []  # reviews are farther from the items than an item
        assert h.recheck() == expected
    probes = drain(h)
    assert sorted(probes) == reviews
    # a review links an item no other page linked: the collection pays, and is followed from now on
    h.page(probes[0], (2, REVIEWS), 3, {BACK: [H + "/item/1", H + "/item/9"]}, explore=True)
    assert h.collections[(2, REVIEWS)].decision == "follow"
    assert drain(h) == [H + "/item/9"]
    assert h.recheck() == 0  # each collection once


def test_a_collection_the_recheck_opened_is_followed_to_its_end():
    """The dead rule does not close a collection the re-check opened: the re-check found targets where the
    plan had stopped looking, and the pages that lead there are rarer than the run the rule allows
    (geos: the directories' source listings that show a class no page fetched links, 22 of 142)."""
    h = through_listing(harvest(minimum=20), [H + "/item/1"])
    drain(h)
    reviews = [H + f"/review/{i}" for i in range(1, 30)]
    h.page(H + "/item/1", (1, ITEMS), 2, {REVIEWS: reviews})
    assert h.recheck() == 1
    first = h.pop()
    h.page(first.url, (2, REVIEWS), 3, {BACK: [H + "/item/9"]}, explore=True)  # pays
    assert h.collections[(2, REVIEWS)].widened
    drained = drain(h)
    h.page(H + "/item/9", (3, BACK), 2, {})  # the target it led to
    rest = [u for u in drained if u.startswith(H + "/review/")]
    for url in rest:  # none shows anything new
        h.page(url, (2, REVIEWS), 3, {BACK: [H + "/item/1"]})
    assert h.collections[(2, REVIEWS)].decision == "follow"
    assert len(rest) == len(reviews) - 1 > 2 * DEAD_WINDOW


def test_a_widened_collection_leaves_the_urls_another_link_of_a_target_page_shows():
    """A collection the re-check widened is followed for the ground no fetched page reaches: a URL another
    collection of a fetched target page links is one link from a target harvested, and the plan judged that
    link there; it waits among the URLs the collection holds (geos: the directories' file lists, widened,
    list the source files of the class pages harvested too, which spent the re-check's window)."""
    doc = document()
    doc["class_links"].append({"source": 2, "path": ODD, "target": 3, "count": 5})  # an item's best reviews
    h = through_listing(Harvest(doc, [2], explore_share=0.0, explore_min=20), [H + "/item/1", H + "/item/2"])
    drain(h)
    reviews = [H + f"/review/{i}" for i in range(1, 30)]
    h.page(H + "/item/2", (1, ITEMS), 2, {ODD: reviews[20:]})  # a target page's other link to them
    h.page(H + "/item/1", (1, ITEMS), 2, {REVIEWS: reviews})
    assert h.recheck() == 1
    first = h.pop()
    assert first.key == (2, REVIEWS) and first.url in reviews[:20]
    h.page(first.url, (2, REVIEWS), 3, {BACK: [H + "/item/9"]}, explore=True)  # pays
    assert h.collections[(2, REVIEWS)].widened
    drained = drain(h)
    assert H + "/item/9" in drained
    assert sorted(u for u in drained if "/review/" in u) == sorted(set(reviews[:20]) - {first.url})
    assert {u for u, _r in h.collections[(2, REVIEWS)].held} == set(reviews[20:])


def test_the_recheck_probes_a_collection_never_sampled_first():
    """Of the skipped collections the re-check opens, those no page was fetched from yet go first: a
    collection the harvest sampled (its probes, or its pages before the dead rule closed it) was judged on
    evidence, one never sampled only by the model's link counts (geos: the source listings' links to their
    directories before the class pages' links to their source files, 17 of which had led nowhere; the
    budget, ~30 pages, is spent in that order)."""
    doc = document()
    doc["class_links"].append({"source": 2, "path": ODD, "target": 3, "count": 5})
    h = through_listing(Harvest(doc, [2], explore_share=0.0, explore_min=20), [H + "/item/1", H + "/item/2"])
    drain(h)
    h.page(H + "/item/1", (1, ITEMS), 2, {REVIEWS: [H + f"/review/{i}" for i in range(1, 9)]})
    h.page(H + "/item/2", (1, ITEMS), 2, {ODD: [H + f"/review/{i}" for i in range(11, 14)]})
    assert drain(h) == []
    h.page(H + "/review/1", (2, REVIEWS), 3, {})  # fetched from it once: sampled
    # the sampled one, whose URLs only target pages link, waits for a round of its own (the eleventh pass)
    assert h.recheck() == 1
    assert h.pop().key == (2, ODD)  # fewer novel URLs, but never sampled


def test_a_page_of_a_class_its_url_says_nothing_of_is_a_target_by_its_url():
    doc = document()
    samples = {0: ["/"], 1: ["/list/1", "/list/2"], 2: ["/item/1", "/item/2"], 3: ["/about", "/help/faq"]}
    for c in doc["classes"]:
        c["samples"] = [H + s for s in samples[c["id"]]]
    h = Harvest(doc, [2], explore_share=0.0, explore_min=0)
    # the model put an item page into class 3, whose sample URLs share no word: the URL says item
    assert h.page(H + "/item/7", (1, ITEMS), 3, {}).target == 2
    assert h.page(H + "/help/contact", (1, ITEMS), 3, {}).kind != "target"
    assert h.page(H + "/frames?item/8", (1, ITEMS), 3, {}).kind != "target"  # a query names another page
    assert h.page(H + "/item/7/src", (1, ITEMS), 3, {}).kind != "target"  # the item pattern does not match
    assert h.page(H + "/list/item/3", (1, PAGER), 1, {}).kind != "target"  # class 1's URLs say list
    assert h.harvested == 1 and h.summary()[2]["harvested"] == 1


def test_a_url_with_more_of_another_class_s_words_is_not_a_target_by_its_url():
    """commons-math3's "No usage of" stubs (``…/math3/analysis/class-use/X.html``), put with misc pages whose
    URLs share nothing: the class pages' URLs share ``org apache commons math``, which every stub's URL has,
    and their pattern matches it, but the class-use pages' URLs share those words and ``class use`` too."""
    doc = document()
    doc["classes"][2]["url_pattern"] = r"^/item(?:/[^/?]*)*$"
    doc["classes"].append({"id": 4, "size": 5, "url_pattern": r"^(?:/[^/?]*)*$"})
    with_samples(doc, {1: ["/list/1", "/list/2"], 2: ["/item/1", "/item/2"],
                       3: ["/item/1/reviews", "/item/2/reviews"], 4: ["/about", "/help/faq"]})
    h = Harvest(doc, [2], explore_share=0.0, explore_min=0)
    assert h.page(H + "/item/5/reviews", (1, ITEMS), 4, {}).kind != "target"
    assert h.page(H + "/item/7", (1, ITEMS), 4, {}).target == 2


def test_a_rechecked_collection_needs_urls_no_other_collection_links():
    """The re-check probes URLs that only the skipped collection links: one whose URLs other fetched pages
    link too leads nowhere those pages did not offer (the demo's footers, a book's author byline that the
    category pages list too), and its probes would only spend the budget."""
    doc = document()
    doc["class_links"].append({"source": 2, "path": ODD, "target": 3, "count": 5})  # an item's best reviews
    h = through_listing(Harvest(doc, [2], explore_share=0.0, explore_min=20), [H + "/item/1", H + "/item/2"])
    drain(h)
    reviews = [H + f"/review/{i}" for i in range(1, 4)]
    h.page(H + "/item/1", (1, ITEMS), 2, {REVIEWS: reviews})
    h.page(H + "/item/2", (1, ITEMS), 2, {ODD: reviews})  # both skipped: reviews are farther than an item
    assert drain(h) == []
    assert h.recheck() == 0


def test_a_url_of_a_collection_found_dead_once_handed_out_is_held_for_the_recheck():
    """A shared harvest's worker takes a request of a dead collection back from the queue (Harvest.hold),
    as pop does in one process: the URL is held by its collection, where the re-check probes it."""
    h = through_listing(harvest(minimum=20), [H + "/item/1"])
    drain(h)
    h.page(H + "/item/1", (1, ITEMS), 2, {REVIEWS: [H + "/review/1"]})
    assert drain(h) == []
    h.collections[(2, REVIEWS)].held.clear()  # as if followed once: its URL was handed out
    h.queued.add(H + "/review/1")
    entry = Entry(H + "/review/1", (2, REVIEWS), H + "/item/1", False)
    assert h.skipped(entry)
    h.hold(entry)
    h.hold(entry)  # told twice (a report resent): held once
    assert h.collections[(2, REVIEWS)].held == [(H + "/review/1", H + "/item/1")]
    assert h.recheck() == 1 and drain(h) == [H + "/review/1"]


def test_a_rechecked_collection_whose_pages_lead_to_no_new_target_is_closed_again():
    """The re-check opens a collection whose probes show new URLs nearer the targets; it stays open only if
    its pages, or the pages they lead to within YIELD_HOPS, lead to a target page (the demo's news archive:
    archive pages show new articles, which show known books only; the whole archive was fetched).  Closed
    again, what it queued waits, the next pages of its pages' listing too (an archive month links the month
    before)."""
    archive, article = 4, 5
    date, articles, books, prev = "p.date/a", "ul.news/li/a", "div.books/a", "a.prev"
    for new_item in (False, True):
        doc = document()
        doc["classes"] += [{"id": archive, "size": 40, "url_pattern": r"^/archive/\d+$"},
                           {"id": article, "size": 40, "url_pattern": r"^/article/\d+$"}]
        doc["class_links"] += [{"source": s, "path": p, "target": t, "count": n}
                               for s, p, t, n in ((2, date, archive, 40), (archive, articles, article, 40),
                                                  (article, books, 2, 40), (archive, prev, archive, 40))]
        h = through_listing(Harvest(doc, [2], explore_share=0.0, explore_min=40), [H + "/item/1"])
        drain(h)
        h.page(H + "/item/1", (1, ITEMS), 2, {date: [H + f"/archive/{i}" for i in range(40)]})
        assert drain(h) == []  # an archive is farther from the items than an item
        assert h.recheck() == 1
        fetched = Counter()
        while (entry := h.pop()) is not None:
            kind, number = entry.url.rsplit("/", 2)[-2:]
            fetched[kind] += 1
            fetched[entry.key[1]] += 1
            if kind == "archive":
                earlier = {prev: [H + f"/archive/{int(number) + 100}"]} if int(number) < 100 else {}
                h.page(entry.url, entry.key, archive, {articles: [H + f"/article/{number}"], **earlier},
                       explore=entry.explore)
            elif kind == "article":  # the first article shows an item no page showed, when new_item
                shown = H + "/item/2" if new_item and fetched[kind] == 1 else H + "/item/1"
                h.page(entry.url, entry.key, article, {books: [shown]})
            else:
                h.page(entry.url, entry.key, 2, {})
        opened = h.collections[(2, date)]
        if new_item:  # a target page two links from an archive page: followed to its end
            assert fetched[date] == 40 and opened.decision == "follow"
        else:
            # the probe that opened it and RECHECK_PAGES pages more; of the months before they show, those
            # handed out after it closed wait
            assert fetched[date] == 1 + RECHECK_PAGES and opened.decision == "skip"
            assert fetched[prev] < RECHECK_PAGES


def with_samples(doc: dict, samples: dict[int, list[str]]) -> dict:
    for c in doc["classes"]:
        c["samples"] = [H + s for s in samples.get(c["id"], ["/"])]
    return doc


def test_a_url_is_predicted_by_its_path_not_by_the_page_its_query_names():
    """Javadoc's frameset link ``index.html?org/…/package-summary.html`` on every package summary is a
    frameset, whatever page its query names: predicted a target by the query's words, every target page
    cost a frameset request more (commons-math3, 1,070)."""
    frames, nav = 4, "div.nav/a"
    doc = document()
    doc["classes"].append({"id": frames, "size": 2, "url_pattern": r"^/frames\.html(?:\?intro\.html)?$"})
    doc["class_links"] += [{"source": 2, "path": nav, "target": 2, "count": 40},
                           {"source": 2, "path": nav, "target": frames, "count": 2}]
    with_samples(doc, {1: ["/list/1", "/list/2"], 2: ["/item/1", "/item/2"], 3: ["/review/1", "/review/2"],
                       frames: ["/frames.html", "/frames.html?intro.html"]})
    h = through_listing(Harvest(doc, [2], explore_share=0.0, explore_min=0), [H + "/item/1"])
    assert drain(h) == [H + "/item/1"]
    h.page(H + "/item/1", (1, ITEMS), 2, {nav: [H + "/item/2", H + "/frames.html?item/1"]})
    assert drain(h) == [H + "/item/2"]  # the frameset is held: a target page's link to another class


def hubs_behind_targets(leads_to_targets: bool) -> tuple[Harvest, list[str]]:
    """A harvest whose home page shows 40 list pages and 40 review pages, each the one URL of a collection of
    its own, none of them showing anything new; returns it and the URLs fetched after the home page."""
    doc = document()
    menus = [f"m{i}/a" for i in range(80)]
    doc["class_links"] += [{"source": 0, "path": m, "target": 1 if i < 40 else 3, "count": 1}
                           for i, m in enumerate(menus)]
    if leads_to_targets:
        doc["class_links"] += [{"source": 0, "path": m, "target": 2, "count": 1} for m in menus]
    h = Harvest(doc, [2], explore_share=0.0, explore_min=0)
    h.seed(H + "/")
    drain(h)
    h.page(H + "/", None, 0, {m: [H + (f"/list/{i}" if i < 40 else f"/review/{i}")] for i, m in enumerate(menus)})
    fetched = []
    while (entry := h.pop()) is not None:
        fetched.append(entry.url)
        h.page(entry.url, entry.key, 1 if "/list/" in entry.url else 3, {})
    return h, fetched


def test_a_small_harvest_stops_fetching_hub_classes_whose_own_run_is_telling():
    """Once the harvest is quiet (QUIET_MIN pages showed nothing new), a hub class's URLs wait when its own
    run of such pages is too long to be chance, though shorter than QUIET_MIN: a small harvest fetches
    fewer pages than that of most hub classes (commons-math3's 76 package summaries: 190 hub pages after
    the last).  Not the URLs of collections that led to targets: their predicted class may be wrong."""
    h, fetched = hubs_behind_targets(leads_to_targets=False)
    assert len(fetched) == QUIET_MIN and len(h.parked) == 80 - QUIET_MIN  # 40 lists, then 10 reviews
    h, fetched = hubs_behind_targets(leads_to_targets=True)
    assert len(fetched) == 80 and not h.parked


def test_a_costlier_harvest_gives_a_reopened_collection_more_pages():
    """A collection the re-check opened is closed again after BARREN_TARGETS targets' worth of requests at
    the harvest's cost per target (RECHECK_PAGES at least): qtbase's module pages lead to its last
    obsolete-members pages through ~3 of their ~100 class pages, where each target costs ~7 requests."""
    h = through_listing(Harvest(document(), [2], explore_share=0.0, explore_min=0), [H + "/item/1"])
    drain(h)
    h.page(H + "/item/1", (1, ITEMS), 2, {})
    assert h.barren_window() == RECHECK_PAGES  # 3 requests for 1 target: 15 pages' worth
    for i in range(2, 10):  # 8 more list pages, no more target: 11 requests for 1
        h.page(H + f"/list/{i}", (0, MENU), 1, {})
    assert h.barren_window() == BARREN_TARGETS * 11


def test_new_urls_of_a_hub_class_that_stopped_paying_are_not_progress():
    """A new URL of a hub class nearer the targets counts as progress (the page is useful, the harvest not
    quiet) until that class's own pages stop paying for a run too long to be chance: the model's distance
    may be a mixture's (ghc's home page shares its class with the source pages, so every module page's
    links to source pages looked like progress, 560 pages after the last manual page)."""
    aside = "aside/a"
    doc = document()
    doc["class_links"].append({"source": 0, "path": aside, "target": 1, "count": 3})
    h = Harvest(doc, [2], explore_share=0.0, explore_min=0)
    h.seed(H + "/")
    drain(h)
    lists = [H + f"/list/{i}" for i in range(DEAD_WINDOW)]
    assert h.page(H + "/", None, 0, {MENU: lists}).useful
    for url in drain(h):
        assert not h.page(url, (0, MENU), 1, {}).useful  # listings that list nothing
    assert not h.page(H + "/about", None, 0, {aside: [H + "/list/99"]}).useful
    assert h.quiet == DEAD_WINDOW + 1


def test_a_collections_urls_of_a_class_that_never_paid_wait_while_the_harvest_goes_on():
    """QUIET_MIN pages of one class fetched from one collection, none of which showed a new target or a new
    URL nearer: that collection's URLs of that class wait, though the harvest still finds targets
    (commons-math3's FRAMES link on each class page: a frameset, 923 fetched); the same class from
    another collection goes on."""
    frames = "div.subNav/a"
    doc = document()
    # mostly frames, now and then an item: not a collection the dead rule closes
    doc["class_links"] += [{"source": 1, "path": frames, "target": 1, "count": 5},
                           {"source": 1, "path": frames, "target": 2, "count": 1}]
    h = Harvest(doc, [2], explore_share=0.0, explore_min=0)
    h.seed(H + "/")
    drain(h)
    h.page(H + "/", None, 0, {MENU: [H + "/list/0"]})
    for i in range(QUIET_MIN):  # a listing shows a new item and its frame; the item, the frame: nothing
        h.page(H + f"/list/{i}", (0, MENU), 1, {ITEMS: [H + f"/item/{i}"], frames: [H + f"/list/{i}?frame"]})
        h.page(H + f"/item/{i}", (1, ITEMS), 2, {})
        assert not h.quiet_hub(1, (1, frames))
        h.page(H + f"/list/{i}?frame", (1, frames), 1, {})
    assert not h.hubs_quiet()
    assert h.quiet_hub(1, (1, frames)) and not h.quiet_hub(1, (0, MENU))
    h.page(H + "/list/98", (0, MENU), 1, {frames: [H + "/list/98?frame"], PAGER: [H + "/list/99"]})
    assert drain(h) == [H + "/list/99"] and [e.url for e in h.parked] == [H + "/list/98?frame"]


SYMBOL = "html/body/section/table/tr/td/a.symbol"


def symbol_index(funcs: list[str], structs: list[str]) -> str:
    """gi-docgen's index, cut down: one table per kind of symbol, every link under one tag path."""
    def table(urls: list[str]) -> str:
        rows = "".join(f'<tr><td><a class="symbol" href="{u}">x</a></td><td>doc</td></tr>' for u in urls)
        return f"<section><table>{rows}</table></section>"
    return f"<html><body>{table(funcs)}{table(structs)}</body></html>"

def symbol_site():
    """A model of an index (class 0) listing functions (class 4) and structs (class 2, the targets) in two
    tables under one path, function pages linking structs under ``p/a``; the index page, its features and
    its harvest collections."""
    doc = {
        "classes": [{"id": c, "size": n, "url_pattern": r"^/[^/?]+\.html$"} for c, n in ((0, 1), (2, 10), (4, 30))],
        "class_links": [{"source": s, "path": SYMBOL, "target": t, "count": n} for s, t, n in ((0, 2, 10), (0, 4, 30))]
        + [{"source": 4, "path": "p/a", "target": 2, "count": 5}],
    }
    funcs = [f"{H}/func.f{i}.html" for i in range(20)]
    structs = [f"{H}/struct.s{i}.html" for i in range(10)]
    features = extract(symbol_index(funcs, structs).encode(), H + "/index.html", "text/html")
    return doc, funcs, structs, features, harvest_collections(features, features.collections, lambda path: path)


def spread(urls: list[str]) -> list[str]:
    """The LIST_EVIDENCE URLs of a list that go first while the rest waits: its first, middle and last."""
    return [urls[round(i * (len(urls) - 1) / (LIST_EVIDENCE - 1))] for i in range(LIST_EVIDENCE)]



def test_a_collection_holding_two_lists_follows_the_list_that_pays_and_parks_the_other():
    """An index lists functions and structs (the targets) in two tables under one spelled path, all of one URL
    pattern: nothing tells them apart before they are fetched.  Once LIST_EVIDENCE pages of the first table
    were functions that showed nothing new, its other URLs wait, and the structs' table is harvested."""
    doc, funcs, structs, features, collections = symbol_site()
    assert sorted(collections.values()) == [funcs, structs]  # two lists: one name each

    h = Harvest(doc, [2], explore_share=0.0, explore_min=0)
    h.seed(H + "/index.html")
    drain(h)
    stored: dict[str, list[str]] = {}  # the sightings as the store keeps them (and a shared harvest's stream)
    for url, (_cls, name) in h.page(H + "/index.html", None, 0, collections).new:
        stored.setdefault(name, []).append(url)
    first = [h.pop() for _ in range(LIST_EVIDENCE)]
    assert [e.url for e in first] == spread(funcs)  # predicted structs, as every symbol is
    for entry in first:
        h.page(entry.url, entry.key, 4, {})  # a function page: nothing new toward the structs
    assert fetch(h, lambda url: 2) == structs
    assert sorted(e.url for e in h.parked) == sorted(set(funcs) - set(spread(funcs)))

    # a resumed plan, fed the stored sightings, knows the same two lists and decides the same
    assert len(stored) == 2 and all(LIST_MARK in name for name in stored)
    again = Harvest(doc, [2], explore_share=0.0, explore_min=0)
    again.seed(H + "/index.html")
    drain(again)
    again.page(H + "/index.html", None, 0, stored)
    for entry in [again.pop() for _ in range(LIST_EVIDENCE)]:
        again.page(entry.url, entry.key, 4, {})
    assert fetch(again, lambda url: 2) == structs and len(again.parked) == len(funcs) - LIST_EVIDENCE


def test_new_urls_of_a_hub_class_no_target_links_are_judged_apart_from_those_next_to_targets():
    """The pages of a hub class that target pages link (next to ground the harvest covered) may stop paying
    while those of the same class no target page links still lead somewhere new: a new URL of that class is
    progress, or not, by the pages like it (geos: the source listings of harvested classes show nothing new;
    those only a directory lists show the classes no other page links)."""
    doc = document()
    doc["class_links"].append({"source": 2, "path": CRUMB, "target": 1, "count": 40})
    items = [H + f"/item/{i}" for i in range(DEAD_WINDOW)]
    h = through_listing(Harvest(doc, [2], explore_share=0.0, explore_min=0), items)
    for i, url in enumerate(drain(h)):
        h.page(url, (1, ITEMS), 2, {CRUMB: [H + f"/list/{100 + i}"]})  # each item's own listing
    for url in drain(h):
        assert not h.page(url, (2, CRUMB), 1, {}).useful  # listings next to the items: nothing new
    assert h.page(H + "/", None, 0, {MENU: [H + "/list/7"]}).useful  # a listing no item links: progress
    h.page(H + "/item/0", (1, ITEMS), 2, {CRUMB: [H + "/list/8"]})
    assert not h.page(H + "/about", None, 0, {MENU: [H + "/list/8"]}).useful  # one an item links: not


def test_after_a_dry_spell_hub_urls_wait_though_hub_pages_show_new_urls():
    """Once QUIET_MIN pages (and DRY_TARGETS targets' worth) brought no target, hub URLs wait, though the hub
    pages still showed new URLs nearer the targets, which keep the harvest from being quiet: those URLs
    turned out no targets (commons-math3's package summaries: 77 requests for the 76, then 156 more)."""
    h = through_listing(harvest(), [H + f"/item/{i}" for i in range(40)])
    for url in drain(h):
        h.page(url, (1, ITEMS), 2, {})
    h.page(H + "/list/2", (0, MENU), 1, {PAGER: [H + "/list/3"], ITEMS: [H + "/item/x2"]})
    hubs = 0
    while (entry := h.pop()) is not None:
        n = entry.url.rsplit("/", 1)[-1]
        if "/item/" in entry.url:  # predicted an item by its URL, but of another class
            h.page(entry.url, entry.key, 3, {})
        else:
            hubs += 1
            h.page(entry.url, entry.key, 1, {PAGER: [H + f"/list/{int(n) + 1}"], ITEMS: [H + f"/item/x{n}"]})
        assert h.quiet < QUIET_MIN  # each listing showed a new "item"
        assert hubs < 100
    assert h.dry_spell() and h.dry == QUIET_MIN and h.harvested == 40
    assert [e.url for e in h.parked] == [H + f"/list/{hubs + 3}"]


def test_a_url_waiting_by_its_first_list_is_fetched_by_another_collection_that_links_it():
    """A URL is queued under the collection (and list) it was first seen in, and waits by that list's rules
    (its pages showed nothing); a followed collection of another page that linked it meanwhile, under which
    it does not wait, brings it (qtbase: class pages first seen in a paragraph "list" of another class page
    waited, though the module page's class table lists them: 12 obsolete-members pages missed)."""
    doc, funcs, structs, features, collections = symbol_site()
    h = Harvest(doc, [2], explore_share=0.0, explore_min=0)
    h.seed(H + "/index.html")
    drain(h)
    h.page(H + "/index.html", None, 0, collections)
    for entry in [h.pop() for _ in range(LIST_EVIDENCE)]:
        h.page(entry.url, entry.key, 4, {})  # the functions' list shows nothing: its other URLs wait
    h.page(H + "/other.html", None, 4, {"p/a": [funcs[5]]})  # a page whose links lead to structs lists one
    drained = fetch(h, lambda url: 2 if url in structs else 4)
    assert funcs[5] in drained and set(structs) <= set(drained)
    assert sorted(e.url for e in h.parked) == sorted(set(funcs) - set(spread(funcs)) - {funcs[5]})


def item_linking_homes(explore_min: int) -> Harvest:
    """A harvest of the items with item 1 fetched, linking eight home pages (class 0) under ``p.home/a``;
    the model also has list pages linking home pages under ``p.up/a``."""
    doc = document()
    doc["class_links"] += [{"source": 2, "path": "p.home/a", "target": 0, "count": 5},
                           {"source": 1, "path": "p.up/a", "target": 0, "count": 5}]
    h = through_listing(Harvest(doc, [2], explore_share=0.0, explore_min=explore_min), [H + "/item/1"])
    drain(h)
    h.page(H + "/item/1", (1, ITEMS), 2, {"p.home/a": [H + f"/home/{i}" for i in range(1, 9)]})
    return h


def test_the_recheck_probes_first_a_collection_whose_urls_no_target_page_links():
    """Of two skipped collections as near, the re-check first probes the one holding more URLs that no fetched
    target page links: a target page's own link leads next to ground the harvest covered (geos: the class
    pages' links to their own source files took the budget, 36 pages with nothing new, before the
    directories' file lists, which alone list the source files of the classes no fetched page links)."""
    h = item_linking_homes(explore_min=20)
    h.page(H + "/list/5", (0, MENU), 1, {"p.up/a": [H + f"/home/{i}" for i in range(11, 14)]})
    assert drain(h) == []  # the home class is farther from the items than both pages
    assert h.recheck() == 2
    assert h.pop().key == (1, "p.up/a")  # fewer novel URLs, but no target page links them


def test_a_sampled_collection_whose_urls_only_target_pages_link_is_rechecked_in_the_last_round():
    """A collection sampled before (its pages showed nothing) whose URLs only fetched target pages link is
    re-checked only once no other collection is left: its URLs lie next to ground the harvest covered.  The
    collections the first round's probes fill come first (geos: the probes of the source listings' links to
    their directories fetch directories whose file lists, closed by the dead rule, hold the source files of
    the classes no page links; the class pages' links to their own source files, 16 fetched and none
    useful, took the 20 probes of the budget in that round: 0.920)."""
    h = item_linking_homes(explore_min=40)
    h.page(H + "/home/1", (2, "p.home/a"), 0, {})  # sampled: nothing
    assert drain(h) == [] and h.collections[(2, "p.home/a")].decision == "skip"
    assert h.recheck() == 1 and h._exploring == {(2, "p.home/a"): None}  # nothing else: last round now
    h2 = item_linking_homes(explore_min=40)
    h2.page(H + "/home/1", (2, "p.home/a"), 0, {})
    h2.page(H + "/list/5", (0, MENU), 1, {"p.up/a": [H + f"/home/{i}" for i in range(11, 14)]})
    assert drain(h2) == []
    assert h2.recheck() == 1 and list(h2._exploring) == [(1, "p.up/a")]


def test_the_recheck_probes_first_the_urls_of_the_folders_least_fetched():
    """Among the URLs a re-checked collection holds that as few collections link, those in the folders the
    harvest fetched fewest pages of go first: a region of the site the harvest has hardly been to is where
    pages no fetched page links lie (qtbase: the obsolete-members pages that link the ``qtxml`` classes no
    other page links sit in ``qtxml/``; 20 probes at random among ~170 missed them: 13 members pages)."""
    h = through_listing(harvest(minimum=20), [H + "/item/1"])
    drain(h)
    for i in range(3):
        h.page(H + f"/dense/x{i}", None, 0, {})  # a folder the harvest has fetched pages of
    reviews = [H + f"/dense/r{i}" for i in range(6)] + [H + f"/sparse/r{i}" for i in range(2)]
    h.page(H + "/item/1", (1, ITEMS), 2, {REVIEWS: reviews})
    assert drain(h) == [] and h.recheck() == 1
    probes = [h.pop().url for _ in range(3)]
    assert sorted(probes[:2]) == [H + "/sparse/r0", H + "/sparse/r1"] and "/dense/" in probes[2]


def test_the_columns_of_a_table_are_lists_of_their_own():
    """An index of modules whose second column names each module's application (erl_docgen's manual index:
    one tag path, one URL shape for both): once LIST_EVIDENCE module pages showed nothing, the modules'
    column waits while the applications' column, the targets, is harvested (880 -> 288 requests in replay
    for erlang's front pages)."""
    modules = [f"{H}/m{i}.html" for i in range(20)]
    apps = [f"{H}/app{i // 2}.html" for i in range(20)]
    rows = "".join(f'<tr><td><a href="{m}">m</a></td><td><a href="{a}">a</a></td></tr>'
                   for m, a in zip(modules, apps))
    features = extract(f"<html><body><table>{rows}</table></body></html>".encode(), H + "/index.html",
                       "text/html")
    collections = harvest_collections(features, features.collections, lambda path: path)
    assert sorted(collections.values()) == [sorted(set(apps)), modules]  # two columns, two lists
    path = "html/body/table/tr/td/a"
    doc = {
        "classes": [{"id": c, "size": n, "url_pattern": r"^/[^/?]+\.html$"} for c, n in ((0, 1), (1, 10), (4, 20))],
        "class_links": [{"source": 0, "path": path, "target": t, "count": n} for t, n in ((1, 10), (4, 20))],
    }
    h = Harvest(doc, [1], explore_share=0.0, explore_min=0)
    h.seed(H + "/index.html")
    drain(h)
    h.page(H + "/index.html", None, 0, collections)
    fetched = []
    while (entry := h.pop()) is not None:
        fetched.append(entry.url)
        h.page(entry.url, entry.key, 1 if "/app" in entry.url else 4, {})
    assert set(apps) <= set(fetched)
    assert len(set(fetched) & set(modules)) <= LIST_EVIDENCE


def with_dead_end(shape: str, source: int, path: str, listing: str) -> Harvest:
    """A harvest of items whose model has a class 4 (URLs of ``shape``) that leads nowhere, linked from
    class ``source`` under ``path``; the home page and its one listing, ``listing``, fetched."""
    doc = document()
    doc["classes"].append({"id": 4, "size": 5, "url_pattern": shape})
    doc["class_links"].append({"source": source, "path": path, "target": 4, "count": 40})
    h = Harvest(doc, [2], explore_share=0.0, explore_min=1000)
    h.seed(H + "/")
    drain(h)
    h.page(H + "/", None, 0, {MENU: [listing]})
    assert drain(h) == [listing]
    return h


def test_a_re_check_that_did_not_pay_leaves_what_it_did_not_probe_held():
    """A followed collection holds the URLs it does not want (predicted of a class that leads nowhere); the
    re-check probes RECHECK_PAGES of them, and when none paid the collection is followed as before, the rest
    still held for a later re-check -- not dropped (qtbase: the one obsolete-members page that leads to the
    ``qtxml`` classes was lost so)."""
    h = with_dead_end(r"^/about/\d+$", 1, ITEMS, H + "/list/1")
    abouts = [H + f"/about/{i}" for i in range(RECHECK_PAGES + 10)]
    h.page(H + "/list/1", (0, MENU), 1, {ITEMS: [H + "/item/1", *abouts]})
    assert drain(h) == [H + "/item/1"]
    h.page(H + "/item/1", (1, ITEMS), 2, {})
    assert h.recheck() == 1
    probes = drain(h)
    assert len(probes) == RECHECK_PAGES and set(probes) <= set(abouts)
    for url in probes:
        h.page(url, (1, ITEMS), 4, {}, explore=True)
    col = h.collections[(1, ITEMS)]
    assert col.decision == "follow"
    assert {u for u, _referer in col.held} == set(abouts) - set(probes)


def test_a_widened_menu_fetches_the_places_that_lead_on_and_parks_the_others():
    """Every item page holds a two-link menu: its source page (a class that leads nowhere, so the menu is
    skipped) and a listing.  The re-check's probes find that the menu's listings show new items, and the menu
    is followed to its end; its first place, whose LIST_EVIDENCE pages fetched were sources that showed
    nothing, waits (Haddock's page menu: 254 source pages fetched for the package contents pages that lead
    to ghc's last module pages)."""
    menu = "div.menu/a"
    h = with_dead_end(r"^/src/\d+$", 2, menu, H + "/a/0")
    items = [H + f"/item/{i}" for i in range(30)]
    h.page(H + "/a/0", (0, MENU), 1, {ITEMS: items})
    for url in drain(h):
        i = int(url.rsplit("/", 1)[1])
        h.page(url, (1, ITEMS), 2, {menu: [H + f"/src/{i}", H + f"/list/{100 + i}"]})
    assert h.collections[(2, menu)].decision == "skip" and h.recheck() == 1
    sources = lists = 0
    while (entry := h.pop()) is not None:
        if "/item/" in entry.url:
            h.page(entry.url, entry.key, 2, {}, explore=entry.explore)
        elif "/src/" in entry.url:
            sources += 1
            h.page(entry.url, entry.key, 4, {}, explore=entry.explore)
        else:
            lists += 1
            n = int(entry.url.rsplit("/", 1)[1])
            h.page(entry.url, entry.key, 1, {ITEMS: [H + f"/item/x{n}"]}, explore=entry.explore)
    assert h.collections[(2, menu)].widened
    assert lists == 30 and h.harvested == 60
    assert sources == LIST_EVIDENCE and len(h.parked) == 30 - LIST_EVIDENCE


def eighty_menus() -> tuple[Harvest, list[str]]:
    """A plan whose home page (0) links each of 80 listings (1) through a menu of its own, with a budget of
    two probes; returns it after the home page was handed out, and the menus' paths."""
    doc = document()
    menus = [f"m{i}/a" for i in range(80)]
    doc["class_links"] += [{"source": 0, "path": m, "target": 1, "count": 1} for m in menus]
    h = Harvest(doc, [2], explore_share=0.0, explore_min=2)
    h.seed(H + "/")
    drain(h)
    return h, menus


def test_urls_parked_when_the_plan_runs_dry_are_probed_in_one_round():
    """A harvest that ran dry with hub URLs parked (a quiet hub class) and nothing left to re-check probes
    them, one round of RECHECK_PAGES, whatever is left of its exploration budget (two probes here) and
    not from it: one that shows a new target brings the others back.  geos's directories: three parked,
    the only way to 6 of the 362 members lists."""
    h, menus = eighty_menus()
    h.page(H + "/", None, 0, {m: [H + f"/list/{i}"] for i, m in enumerate(menus)})
    while (entry := h.pop()) is not None:
        h.page(entry.url, entry.key, 1, {})
    assert len(h.parked) == 80 - QUIET_MIN
    assert h.recheck() == RECHECK_PAGES and len(h.parked) == 80 - QUIET_MIN - RECHECK_PAGES
    probe = h.pop()  # a followed collection's URL, not exploration
    assert not probe.explore and probe.url in {H + f"/list/{i}" for i in range(QUIET_MIN, 80)}
    h.page(probe.url, probe.key, 1, {ITEMS: [H + "/item/1"]})  # a new target: the hubs pay again
    rest = drain(h)
    assert H + "/item/1" in rest and len(rest) == 80 - QUIET_MIN  # the item, the other probes, the parked
    assert not h.parked


def parked_round() -> tuple[Harvest, Entry]:
    """``eighty_menus`` run dry with the quiet listings parked, its round of parked URLs handed out and all
    its probes but the first fetched, showing nothing; returns the plan and that first probe."""
    h, menus = eighty_menus()
    h.page(H + "/", None, 0, {m: [H + f"/list/{i}"] for i, m in enumerate(menus)})
    while (entry := h.pop()) is not None:
        h.page(entry.url, entry.key, 1, {})
    assert h.recheck() == RECHECK_PAGES
    first, *others = [h.pop() for _ in range(RECHECK_PAGES)]
    for probe in others:
        h.page(probe.url, probe.key, 1, {})
    return h, first


def test_a_url_the_last_rounds_probe_reveals_is_not_parked_again():
    """The round of parked URLs is the harvest's last: a hub URL one of its probes shows, of the quiet class,
    is fetched, not parked to end the harvest unfetched (the 2,952-page demo: the category pages past the
    second showed the books that alone link two publishers, which waited with the quiet book class, 0.966
    of the publishers in replay; 1.000 so)."""
    h, first = parked_round()
    hidden = H + "/list/200"  # a next page no other page links: no new target, nothing nearer
    h.page(first.url, first.key, 1, {PAGER: [hidden]})
    entry = h.pop()
    assert entry is not None and entry.url == hidden
    h.page(hidden, entry.key, 1, {ITEMS: [H + "/item/9"]})
    assert H + "/item/9" in drain(h)


def test_another_round_of_parked_urls_only_after_a_target():
    """The round of parked URLs comes again only once a target was harvested since the last: a probe whose
    page shows a new URL nearer the targets is no reason for another (the 2,952-page demo's authors: a second
    round after a first that led to no author, 627 -> 545 requests in replay); a target is (its publishers:
    the books behind the category pages past the second, the last two publishers)."""
    h, first = parked_round()
    assert h.page(first.url, first.key, 1, {ITEMS: [H + "/item/9"]}).useful  # it pays: a URL nearer the targets
    assert h.parked_probed
    entry = h.pop()
    assert entry is not None and entry.url == H + "/item/9"
    assert h.page(entry.url, entry.key, 2, {}).kind == "target"
    assert not h.parked_probed


def docbook_like(chapters: int = 10) -> tuple[Harvest, str]:
    """Chapters (2, the targets) listed by the home page (0), each linking its neighbours and its first
    section (1); a section's navigation header (NAV) leads to chapters and to sections alike, and every
    page is ``name.html``: a URL of it is a predicted chapter on the tie.  Returns the plan after the
    chapters were harvested, and the home page's URL."""
    pattern = r"^/[^/?]+\.html$"
    doc = {
        "classes": [{"id": c, "size": n, "url_pattern": pattern} for c, n in ((0, 1), (1, 40), (2, chapters))],
        "class_links": [{"source": s, "path": p, "target": t, "count": n} for s, p, t, n in
                         [(0, MENU, 2, chapters), (2, BACK, 2, 20), (2, ITEMS, 1, chapters), (1, ODD, 2, 5),
                          (1, ODD, 1, 5)]],
    }
    h = Harvest(doc, [2], explore_share=0.0, explore_min=0)
    home = H + "/index.html"
    h.seed(home)
    drain(h)
    names = [H + f"/chapter{i}.html" for i in range(chapters)]
    h.page(home, None, 0, {MENU: names})
    for entry in [h.pop() for _ in range(chapters)]:
        i = names.index(entry.url)
        h.page(entry.url, entry.key, 2, {BACK: [names[(i + 1) % chapters], names[i - 1]],
                                         ITEMS: [H + f"/section{i}-0.html"]})
    return h, home


def test_a_collection_whose_target_bets_kept_losing_predicts_its_most_frequent_class():
    """A tie of the URL evidence goes to the targets; once a collection's pages fetched as predicted targets
    were none for a run too long to be chance (DEAD_WINDOW here: none ever was), and the targets'
    sightings say few are left unseen (Chao's bound), the tie goes to the class it leads to most often.
    PostgreSQL's section pages, each fetched as a predicted chapter from the one before: 808 -> 586
    requests for its 77 chapters in replay."""
    fresh = H + "/fresh.html"
    for chao_short in (False, True):
        h, _home = docbook_like()
        if chao_short:  # two more chapters, each linked by one page: more may lie where no page was fetched
            for lone in (H + "/appendix0.html", H + "/appendix1.html"):
                h.seen.linked(lone)
                h.seen.harvested(lone, 2)
        entry = Entry(H + "/section0-0.html", (2, ITEMS), H + "/chapter0.html", False)  # a chapter's first section
        for k in range(DEAD_WINDOW):
            assert h._predicted((1, ODD), fresh) == 2  # the bet holds
            h.page(entry.url, entry.key, 1, {ODD: [H + f"/next{k}.html"]})
            entry = h.pop()
            assert entry.url == H + f"/next{k}.html" and entry.key == (1, ODD)
        h.page(entry.url, entry.key, 1, {})  # the tenth bet lost
        assert h._predicted((1, ODD), fresh) == (2 if chao_short else 1)


def test_a_bet_its_collection_keeps_losing_is_no_pay_though_the_plan_still_makes_it():
    """While Chao's bound says targets may be unseen, the plan goes on betting on a tie; but a page that
    shows one more URL of a collection whose bets lost for a run too long to be chance has not shown a
    target: it does not pay (PostgreSQL's sections kept paying with their neighbours, predicted chapters,
    hundreds of requests after the last chapter)."""
    h, _home = docbook_like()
    for lone in (H + "/appendix0.html", H + "/appendix1.html"):  # Chao: more may be unseen
        h.seen.linked(lone)
        h.seen.harvested(lone, 2)
    entry = Entry(H + "/section0-0.html", (2, ITEMS), H + "/chapter0.html", False)
    paid = []
    for k in range(DEAD_WINDOW + 2):  # page k is told the outcome of the k - 1 bets before it
        before = h.found_new[1]
        h.page(entry.url, entry.key, 1, {ODD: [H + f"/next{k}.html"]})
        paid.append(h.found_new[1] > before)
        entry = h.pop()
        assert entry.url == H + f"/next{k}.html"
    assert h._predicted((1, ODD), H + "/fresh.html") == 2  # still a bet
    assert all(paid[:DEAD_WINDOW + 1])  # until then each page that showed a bet paid
    assert not paid[DEAD_WINDOW + 1]  # after DEAD_WINDOW lost bets, showing one more pays nothing


def test_a_menu_place_that_held_no_target_stops_being_a_target_bet():
    """Front pages (1, the targets), listed by the home page (0), each list their application's documents
    in one menu: another front page, a manual (a front page too), then the release notes (2: no target, no
    hub) at the same place on every front page.  Every URL is ``name.html``: each is a predicted target when
    first seen, before any page of its place was fetched.  Once LIST_EVIDENCE notes came from that place,
    the notes still queued wait with the URLs the menu holds.  erl_docgen's front pages: 299 -> 279
    requests in replay."""
    apps = 8
    doc = {
        "classes": [{"id": c, "size": n, "url_pattern": r"^/[^/?]+/[^/?]+\.html$"}
                    for c, n in ((0, 1), (1, 3 * apps), (2, apps))],
        "class_links": [{"source": s, "path": p, "target": t, "count": n} for s, p, t, n in
                        [(0, MENU, 1, apps), (1, ITEMS, 1, 2 * apps), (1, ITEMS, 2, apps)]],
    }
    h = Harvest(doc, [1], explore_share=0.0, explore_min=0)
    home = H + "/index.html"
    h.seed(home)
    drain(h)
    h.page(home, None, 0, {MENU: [H + f"/app{i}/index.html" for i in range(apps)]})
    fetched = []
    while (entry := h.pop()) is not None:
        fetched.append(entry.url)
        app = entry.url.split("/")[3]
        if entry.url.endswith("/notes.html"):
            h.page(entry.url, entry.key, 2, {})
        else:
            h.page(entry.url, entry.key, 1, {ITEMS: [H + f"/{app}/guide.html", H + f"/{app}/manual.html",
                                                     H + f"/{app}/notes.html"]})
    assert sum(u.endswith("/notes.html") for u in fetched) == LIST_EVIDENCE
    assert {u for u in fetched if not u.endswith("/notes.html")} == {
        H + f"/app{i}/{name}.html" for i in range(apps) for name in ("index", "guide", "manual")}


def test_a_parked_url_a_target_links_is_probed_though_other_pages_link_it_too():
    """A parked hub URL that several fetched pages link is left out of the end's probes (it leads nowhere
    they did not), unless a target page links it: PostgreSQL's ECPG chapter, linked by the book index, its
    sections and the ``ecpg`` program's reference page, holds the 17 reference pages of its embedded SQL
    (0.938 of the refentries in one HTTP run in four to ten; ``harvest_replay.py --shuffle``: 4 of 5
    failing seeds fixed)."""
    h, menus = eighty_menus()
    lists = [H + f"/list/{i}" for i in range(80)]
    h.page(H + "/", None, 0, {**{m: [lists[i]] for i, m in enumerate(menus)}, "p.all/a": lists})
    while (entry := h.pop()) is not None:
        if entry.url == lists[0]:
            h.page(entry.url, entry.key, 1, {ITEMS: [H + "/item/1"]})
        elif entry.url == H + "/item/1":
            h.page(entry.url, entry.key, 2, {"p.up/a": [lists[79]]})
        else:
            h.page(entry.url, entry.key, 1, {})
    assert lists[79] in {e.url for e in h.parked} and h.sightings[lists[79]] == 3
    assert h.recheck() == 1  # every parked URL has two sightings: only the one the item links is probed
    assert h.pop().url == lists[79]


def test_a_skipped_menu_whose_place_paid_is_rechecked_first_at_that_place():
    """Item pages hold a two-link menu, their source page and a listing; the listings' first pages showed new
    items, the rest nothing, and the dead rule skipped the menu.  All it holds, target pages link, yet it is
    not of the last round (its pages showed something, at one place): the re-check opens it first, before a
    collection never sampled, and probes that place's URLs first (Haddock's page menu: the package contents
    page that alone leads to 192 of Cabal's modules waited for the last round, behind three collections never
    sampled that took the budget: 0.846 of ghc's module pages in replay; so 0.980)."""
    menu = "div.menu/a"
    doc = document()
    doc["classes"].append({"id": 4, "size": 5, "url_pattern": r"^/src/\d+$"})
    doc["class_links"] += [{"source": 2, "path": menu, "target": 4, "count": 20},
                           {"source": 2, "path": menu, "target": 1, "count": 20},
                           {"source": 2, "path": "p.home/a", "target": 0, "count": 5}]
    h = through_listing(Harvest(doc, [2], explore_share=0.0, explore_min=30), [H + f"/item/{i}" for i in range(40)])
    listings = 0
    while (entry := h.pop()) is not None:
        kind, n = entry.url.rsplit("/", 2)[1:]
        if kind == "item":
            links = {menu: [H + f"/src/{n}", H + f"/list/{100 + int(n)}"], "p.home/a": [H + f"/home/{n}"]}
            h.page(entry.url, entry.key, 2, links)
        else:
            listings += 1
            h.page(entry.url, entry.key, 1, {ITEMS: [H + f"/item/{200 + listings}"] if listings <= 3 else []})
    col = h.collections[(2, menu)]
    assert col.decision == "skip" and col.useful == 3 and not h.collections[(2, "p.home/a")].fetched
    assert h.recheck() == 2 and list(h._exploring)[0] == (2, menu)
    assert all("/list/" in h.pop().url for _ in range(4))  # not the sources, whose place never paid


def test_a_lists_urls_predicted_targets_on_a_tie_wait_for_its_first_pages():
    """Many fetches in flight: the index's URLs, all predicted structs, would all be handed out before the
    first functions' pages come back.  LIST_EVIDENCE of each table go, the rest of each waits for them; once
    they are back, the functions' table is no target and waits among the quiet, the structs' goes on
    (erl_docgen's front pages' menus of modules, predicted chapters on a tie)."""
    doc, funcs, structs, _features, collections = symbol_site()
    h = Harvest(doc, [2], explore_share=0.0, explore_min=0)
    h.seed(H + "/index.html")
    drain(h)
    h.page(H + "/index.html", None, 0, collections)
    in_flight = [h.pop() for _ in range(2 * LIST_EVIDENCE)]
    assert [e.url for e in in_flight] == spread(funcs) + spread(structs)
    assert h.waiting() == len(funcs) + len(structs) - 2 * LIST_EVIDENCE  # waiting, not dropped
    for entry in in_flight:
        h.page(entry.url, entry.key, 4 if entry.url in funcs else 2, {})
    assert sorted(drain(h)) == sorted(set(structs) - set(spread(structs)))
    assert sorted(e.url for e in h.parked) == sorted(set(funcs) - set(spread(funcs)))


def test_urls_waiting_for_a_lists_pages_go_once_those_failed():
    """The URLs that wait for their list's pages go once those are reported, failed too (the spider reports
    a request a Scrapy component dropped when it goes idle): none is lost, none waits for good."""
    doc, funcs, structs, _features, collections = symbol_site()
    h = Harvest(doc, [2], explore_share=0.0, explore_min=0)
    h.seed(H + "/index.html")
    drain(h)
    h.page(H + "/index.html", None, 0, collections)
    handed_out = []
    while batch := list(iter(h.pop, None)):  # LIST_EVIDENCE of each list, then a wait for their pages
        assert len(batch) <= 2 * LIST_EVIDENCE
        handed_out += [entry.url for entry in batch]
        for entry in batch:
            h.failed(entry)  # no page, no evidence: the next ones go
    assert sorted(handed_out) == sorted(funcs + structs)


def test_urls_waiting_for_a_lists_pages_go_when_the_spider_is_idle():
    """A page reported under a form its list does not know it by leaves the list waiting: once the spider is
    idle nothing is on its way, and the waiting URLs go."""
    doc, funcs, structs, _features, collections = symbol_site()
    h = Harvest(doc, [2], explore_share=0.0, explore_min=0)
    h.seed(H + "/index.html")
    drain(h)
    h.page(H + "/index.html", None, 0, collections)
    assert len(list(iter(h.pop, None))) == 2 * LIST_EVIDENCE
    assert h.idle() and list(iter(h.pop, None))  # what waited goes, as a list's next pages
    while h.idle():
        drain(h)
    assert h.waiting() == 0 and not h.deferred



def test_a_list_of_several_on_a_page_is_told_by_pages_spread_over_it():
    """An index of one alphabetical list per letter, all under one path and one URL pattern (PostgreSQL's):
    a letter's list holds sections and, in its middle, refentries (here functions and structs, the targets).
    Its first pages are its first, middle and last, as a one-list page's are: the middle one is a struct, the
    list is told nothing, and its other structs go as predicted targets.  Its first three would all have been
    functions: the list told "functions" and its structs waited among the quiet hubs."""
    doc, _funcs, _structs, _features, _collections = symbol_site()
    head, tail = [f"{H}/func.a{i}.html" for i in range(6)], [f"{H}/func.z{i}.html" for i in range(6)]
    structs = [f"{H}/struct.s{i}.html" for i in range(4)]
    other = [f"{H}/func.b{i}.html" for i in range(3)]
    features = extract(symbol_index(head + structs + tail, other).encode(), H + "/index.html", "text/html")
    collections = harvest_collections(features, features.collections, lambda path: path)
    assert sorted(collections.values()) == sorted([head + structs + tail, other])  # two lists: one name each
    h = Harvest(doc, [2], explore_share=0.0, explore_min=0)
    h.seed(H + "/index.html")
    drain(h)
    h.page(H + "/index.html", None, 0, collections)
    out = [e.url for e in iter(h.pop, None)]  # LIST_EVIDENCE of each list; the rest waits for them
    assert sorted(out) == sorted([head[0], structs[2], tail[-1], *other])
    for url in out:
        h.page(url, (0, SYMBOL), 2 if url in structs else 4, {})
    assert sorted(e.url for e in iter(lambda: h.pop(hubs=False), None)) == sorted(
        structs[:2] + structs[3:] + head[1:] + tail[:-1])  # the list goes on, all of it as predicted structs


def test_a_url_held_by_a_dead_collection_comes_back_with_a_followed_collection_that_linked_it():
    """A URL is queued under the collection it was first seen in; found dead when it comes up, that collection
    holds it, and a followed collection that linked it meanwhile brings it only if its pages paid so far.  One
    whose pages had not holds it too, and brings it once the re-check opens it: before, its pages, when they
    paid, showed the URL no more (qtbase: two class pages first seen on other class pages, dead, and listed by a
    module page's class table, not yet useful then and opened by the re-check near the end -- the only way to
    two obsolete-members pages, 0.988 in replay)."""
    h = harvest(minimum=20)
    h.seed(H + "/")
    drain(h)
    lists = [H + f"/list/{i}" for i in range(1, 13)]
    h.page(H + "/", None, 0, {MENU: lists + [H + "/list/99"]})
    first = [h.pop() for _ in lists]
    pager = [H + f"/list/{i}" for i in range(20, 32)]
    h.page(first[0].url, first[0].key, 1, {PAGER: [H + "/list/99", *pager]})  # linked while queued: waits
    for entry in first[1:]:
        h.page(entry.url, entry.key, 1, {})  # nothing new: the menu is dead
    assert h.collections[(0, MENU)].decision == "skip"
    for _ in pager:  # /list/99 comes up first, of the dead menu: held, the pager's pages not useful yet
        if (entry := h.pop()) is not None:
            h.page(entry.url, entry.key, 1, {})  # nothing new: the pager is dead too
    assert h.collections[(1, PAGER)].decision == "skip" and H + "/list/99" not in h.queued
    assert h.recheck() == 1  # the pager's URLs no other page links
    probe = h.pop()
    assert probe.key == (1, PAGER)
    h.page(probe.url, probe.key, 1, {ITEMS: [H + "/item/1"]}, explore=True)  # it pays: followed to its end
    assert h.collections[(1, PAGER)].widened
    assert H + "/list/99" in drain(h)
