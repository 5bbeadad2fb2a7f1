"""ExplorerConfig: the one place that validates, stores and builds an Explorer's parameters."""

from __future__ import annotations

import json

import pytest

from structcrawl.core.config import ExplorerConfig
from structcrawl.crawling.arguments import crawl_config
from structcrawl.crawling.runner import build_settings
from structcrawl.store import explorer_for

SEED = "http://127.0.0.1:8000/"


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"strategy": "widest"}, "strategy must be one of densest, sparsest, got 'widest'"),
        ({"batch_size": 0}, "batch_size must be >= 1, got 0"),
        ({"batch_size": "10"}, "batch_size must be an integer, got '10'"),
        ({"stability_window": 0}, "stability_window must be >= 1"),
        ({"dt": -0.1}, "dt must be a number >= 0"),
        ({"costs": {"c_x": 1.0}}, "costs: unknown cost(s) c_x (known: c_u, c_p, c_i, c_miss)"),
        ({"refine": True}, "refine must be None, False or a mapping"),
    ],
)
def test_bad_parameters_are_one_line_errors(kwargs, message):
    with pytest.raises(ValueError) as info:
        ExplorerConfig(SEED, **kwargs)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_stored_parameters_give_the_same_config_and_explorer():
    config = ExplorerConfig(SEED, strategy="sparsest", batch_size=7, costs={"c_i": 0.5}, stability_window=9,
                            allow_subdomains=True, extra_domains=("CDN.example",), refine={"similarity": 0.7})
    stored = json.loads(json.dumps(config.to_dict()))  # as the store keeps it
    assert ExplorerConfig.from_dict(SEED, stored) == config
    explorer = explorer_for(SEED, stored)
    assert (explorer.frontier.strategy, explorer.frontier.batch_size) == ("sparsest", 7)
    assert explorer.model.costs.c_i == 0.5 and explorer.stability.window == 9
    assert explorer.scope("http://a.cdn.example/x") and explorer.refiner.similarity == 0.7
    # a record written before ExplorerConfig existed (no "refine" key) still rebuilds
    stored.pop("refine")
    assert ExplorerConfig.from_dict(SEED, stored).refine is None


def test_settings_defaults_are_the_config_defaults():
    """Spider arguments over settings over the defaults of structcrawl.settings, which are ExplorerConfig's."""
    settings = build_settings()
    assert crawl_config({"start_url": SEED}, settings).explorer == ExplorerConfig(SEED)
    config = crawl_config({"start_url": SEED, "strategy": "sparsest", "batch": "4"},
                          build_settings({"STRUCTCRAWL_STRATEGY": "densest", "STRUCTCRAWL_BATCH_SIZE": "12"}))
    assert (config.explorer.strategy, config.explorer.batch_size) == ("sparsest", 4)
