"""Files structcrawl writes (site model, report, clusters JSON): atomic, and with the mode the umask gives
(0644 under umask 022), not mkstemp's 0600 that the host user of a container's ./out could not read."""

from __future__ import annotations

import json
import os
import stat
from contextlib import contextmanager

import pytest

from helpers import learn_offline
from structcrawl.commands.parser import main
from structcrawl.demo.site import DemoSite
from structcrawl.files import atomic_write
from structcrawl.sitemodel import model_document, write_model
from synthetic_store import fill

BASE = "http://127.0.0.1:8000"


@contextmanager
def umask(mask: int):
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture(scope="module")
def document():
    _fetch, explorer, samples = learn_offline(DemoSite(pages=300, seed=2), BASE + "/", "exhaust")
    return model_document(explorer, tag_paths=samples)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    db = f"sqlite:///{tmp_path_factory.mktemp('store') / 's.db'}"
    fill(db, 400, base_pages=400)
    return db


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002], ids=lambda mask: f"umask-{mask:03o}")
def test_model_report_and_clusters_follow_the_umask(document, store, tmp_path, capsys, mask):
    model, report, clusters = tmp_path / "m.json", tmp_path / "m.html", tmp_path / "c.json"
    with umask(mask):
        write_model(document, model)
        assert main(["report", str(model), "-o", str(report)]) == 0
        assert main(["cluster", "--db", store, "-o", str(clusters), "--cutoff", "20", "--members", "-q"]) == 0
    capsys.readouterr()
    assert {p.name: mode(p) for p in tmp_path.iterdir()} == {
        "m.json": 0o666 & ~mask, "m.html": 0o666 & ~mask, "c.json": 0o666 & ~mask}
    assert json.loads(clusters.read_text(encoding="utf-8"))["pages"] == 400


def test_an_existing_file_gets_the_umask_mode_too(document, tmp_path):
    model = tmp_path / "m.json"
    model.write_text("old", encoding="utf-8")
    model.chmod(0o600)
    with umask(0o022):
        write_model(document, model)
    assert mode(model) == 0o644 and json.loads(model.read_text(encoding="utf-8")) == document


def test_a_failed_write_leaves_the_old_file_and_no_temporary_one(tmp_path):
    target = tmp_path / "out.json"
    target.write_text("old", encoding="utf-8")
    with pytest.raises(RuntimeError), atomic_write(target) as fh:
        fh.write("half")
        raise RuntimeError("disk full")
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"] and target.read_text(encoding="utf-8") == "old"
    with atomic_write(target, binary=True) as fh:
        fh.write(b"new")
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"] and target.read_bytes() == b"new"
