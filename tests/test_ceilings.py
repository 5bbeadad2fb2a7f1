"""Page and wall-time ceilings: the crawl closes with its reason, the job resumes past it.

Real ``structcrawl crawl --db`` subprocesses against the demo server of
``test_resume`` (its access log counts what was fetched), SQLite store.  The
wall-time ceiling fires on a slow crawl (``DOWNLOAD_DELAY``), never on a sleep
of the test.
"""

from __future__ import annotations

import json
from pathlib import Path

from test_resume import cli_crawl_cmd as crawl_cmd
from test_resume import committed, demo, job_info, partition, reference, run  # noqa: F401


def resume_to_the_end(demo, db: str, out: Path, reference) -> list[str]:
    """Run the job again without ceilings: it resumes, fetches nothing committed again, ends as uninterrupted."""
    done = committed(db, demo)
    mark = demo.log.mark()
    res = run(crawl_cmd(demo, db, out), cwd=out.parent)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "Resuming job 'shop'" in res.stderr
    again = demo.log.gets(mark)
    assert not done & set(again), f"committed, fetched again: {sorted(done & set(again))[:5]}"
    model = json.loads(out.read_text(encoding="utf-8"))
    assert model["crawl"]["stop_reason"] == "finished"
    assert partition(model) == partition(reference)
    assert job_info(db).status == "finished"
    return again


def test_page_ceiling_closes_and_the_job_resumes_past_it(demo, reference, tmp_path):
    db, out = f"sqlite:///{tmp_path / 'crawl.db'}", tmp_path / "model.json"
    mark = demo.log.mark()
    res = run(crawl_cmd(demo, db, out, "--max-pages", "60"), cwd=tmp_path)
    assert res.returncode == 0, res.stderr[-3000:]
    assert res.stdout.startswith("max_pages: ")
    assert "Closing spider (max_pages)" in res.stderr and "Closing: max_pages=60 reached" in res.stderr
    first = demo.log.gets(mark)
    assert 0 < len(first) <= 60
    model = json.loads(out.read_text(encoding="utf-8"))
    assert model["crawl"]["stop_reason"] == "max_pages" and model["parameters"]["max_pages"] == 60
    info = job_info(db)
    assert info.status == "stopped" and info.stop_reason == "max_pages" and info.lock_token is None

    # the same ceiling again: it counts over all runs, so nothing more is fetched
    mark = demo.log.mark()
    res = run(crawl_cmd(demo, db, out, "--max-pages", "60"), cwd=tmp_path)
    assert res.returncode == 0 and "Resuming job 'shop'" in res.stderr and "Closing spider (max_pages)" in res.stderr
    assert demo.log.gets(mark) == []

    second = resume_to_the_end(demo, db, out, reference)
    members = {demo.path(u) for c in reference["classes"] for u in c["members"]}
    assert set(first) | set(second) >= members


def test_wall_time_ceiling_closes_and_the_job_resumes_past_it(demo, reference, tmp_path):
    db, out = f"sqlite:///{tmp_path / 'crawl.db'}", tmp_path / "model.json"
    mark = demo.log.mark()
    # ~600 pages at 0.1 s each would take a minute: the 2-second ceiling ends it
    res = run(crawl_cmd(demo, db, out, "-s", "CLOSESPIDER_TIMEOUT=2", "-s", "DOWNLOAD_DELAY=0.1"), cwd=tmp_path)
    assert res.returncode == 0, res.stderr[-3000:]
    assert res.stdout.startswith("closespider_timeout: ")
    assert "Closing spider (closespider_timeout)" in res.stderr
    first = demo.log.gets(mark)
    assert 0 < len(first) < 300
    model = json.loads(out.read_text(encoding="utf-8"))
    assert model["crawl"]["stop_reason"] == "closespider_timeout" and model["crawl"]["pages_modelled"] > 0
    info = job_info(db)
    assert info.status == "stopped" and info.stop_reason == "closespider_timeout" and info.lock_token is None
    second = resume_to_the_end(demo, db, out, reference)
    members = {demo.path(u) for c in reference["classes"] for u in c["members"]}
    assert set(first) | set(second) >= members
