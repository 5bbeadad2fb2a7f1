"""The README's promises that drift silently: its two commands are the scripts CI runs, and
every link and figure command in README.md and docs/ points at something that exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def commands(text: str) -> list[str]:
    """The command lines of a shell text: comments and blank lines dropped."""
    lines = (line.split("#", 1)[0].strip() for line in text.splitlines())
    return [line for line in lines if line and not line.startswith(("set ", "cd "))]


def readme_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## The two commands", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block, "no sh block under 'The two commands'"
    return commands(block.group(1))


def test_the_readme_has_two_commands_and_ci_runs_exactly_them():
    setup, test = readme_commands()
    for command in (setup, test):
        script = command.split()[-1]
        assert command == f"bash {script}" and (ROOT / script).is_file(), command
    assert commands((ROOT / ".ci/run").read_text()) == [setup, test]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_relative_link_resolves(doc):
    text = re.sub(r"```.*?```", "", doc.read_text(), flags=re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+://", target):
            continue
        path, _, anchor = target.partition("#")
        linked = (doc.parent / path).resolve() if path else doc
        assert linked.is_file(), f"{doc.name}: {target} does not exist"
        if anchor and linked.suffix == ".md":
            headings = re.findall(r"^#+ (.+)$", linked.read_text(), re.M)
            assert anchor in {slug(h) for h in headings}, f"{doc.name}: no heading for #{anchor} in {linked.name}"


def test_every_figure_command_names_an_existing_file():
    readme = (ROOT / "README.md").read_text()
    figures = readme.split("## Main figures", 1)[1].split("\n## ", 1)[0]
    files = re.findall(r"`python (?:-m pytest (?:-\w+ )*)?((?:benchmarks|tests)/\w+\.py)", figures)
    assert len(files) >= 4
    for name in files:
        assert (ROOT / name).is_file(), name
