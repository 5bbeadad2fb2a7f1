"""Lint and layer rules: ``ruff check .`` and ``lint-imports`` (the contracts in pyproject.toml) find nothing,
and no module of the package takes part in an import cycle.

The two tools run from the bin directory of the Python running the tests (the venv the README's set-up
command makes, with the test extras); their output is the failure message.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grimp  # import-linter's import graph
import pytest

from helpers import PROJECT

BIN = Path(sys.executable).parent


COMMANDS = {
    "ruff": ["ruff", "check", "--no-cache", "--output-format", "concise", "."],
    "lint-imports": ["lint-imports", "--no-cache"],
}


@pytest.mark.parametrize("command", COMMANDS.values(), ids=COMMANDS.keys())
def test_tool_finds_nothing(command):
    res = subprocess.run([str(BIN / command[0]), *command[1:]], cwd=PROJECT, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, f"{' '.join(command)} (exit status {res.returncode}):\n{res.stdout}{res.stderr}"


def test_no_import_cycles():
    graph = grimp.build_graph("structcrawl", cache_dir=None)
    cycles = set()
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            chain = graph.find_shortest_chain(importer=imported, imported=module)
            if chain:
                cycles.add(" -> ".join((module, *chain)))
    assert not cycles, "import cycles:\n" + "\n".join(sorted(cycles))
