"""The targets a harvest has not seen yet (structcrawl.analysis.unseen), on hand-counted sightings."""

from __future__ import annotations

import math

from structcrawl.analysis.unseen import TargetSightings


def sightings(linked: dict[str, int], cls: int = 1) -> TargetSightings:
    """Targets harvested, each linked by the given number of fetched pages."""
    seen = TargetSightings()
    for url, pages in linked.items():
        for _ in range(pages):
            seen.linked(url)
        seen.harvested(url, cls)
    return seen


def test_chao_bound_and_good_turing_rate_from_the_pages_linking_each_target():
    seen = sightings({"a": 1, "b": 1, "c": 1, "d": 1, "e": 2, "f": 2, "g": 3})  # f1 = 4, f2 = 2
    assert seen.unseen() == 4 * 4 / (2 * 2)
    assert seen.discovery_rate() == 4 / (4 + 4 + 3)
    ratio = 4 / 2
    assert math.isclose(seen.unseen(z=2.0), 4.0 + 2.0 * math.sqrt(2 * (ratio ** 4 / 4 + ratio ** 3 + ratio ** 2 / 2)))


def test_a_link_after_the_harvest_moves_the_target_up_one_frequency():
    seen = sightings({"a": 1, "b": 2})
    seen.linked("a")
    assert seen.frequencies[1][1] == 0 and seen.frequencies[1][2] == 2
    assert seen.unseen() == 0.0
    assert seen.discovery_rate() == 0.0


def test_a_target_every_page_lists_once_is_no_evidence_of_few_left():
    """A complete listing links each target once: f2 = 0, the bound is large and every sighting was new."""
    seen = sightings({f"t{i}": 1 for i in range(30)})
    assert seen.unseen() == 30 * 29 / 2
    assert seen.discovery_rate() == 1.0
    assert seen.short_of(0.99, z=0.0)


def test_short_of_the_goal_until_the_upper_bound_is_below_it():
    many_twice = sightings({**{f"t{i}": 2 for i in range(200)}, "x": 1, "y": 1})  # f1 = 2, f2 = 200
    assert not many_twice.short_of(0.99, z=1.96)
    few_twice = sightings({**{f"t{i}": 2 for i in range(20)}, **{f"u{i}": 1 for i in range(10)}})
    assert few_twice.short_of(0.99, z=1.96)
    assert few_twice.unseen() == 10 * 10 / (2 * 20)


def test_classes_are_estimated_apart_and_summed():
    seen = sightings({"a": 1, "b": 2}, cls=1)
    for url, pages in {"c": 1, "d": 1, "e": 2}.items():
        for _ in range(pages):
            seen.linked(url)
        seen.harvested(url, 2)
    assert seen.unseen() == 1 / 2 + 4 / 2
    seen.harvested("a", 2)  # harvested once: a redirect's second report changes nothing
    assert seen.harvested_of == {1: 2, 2: 3}
