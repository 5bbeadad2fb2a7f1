"""Bad user input: one clear ``structcrawl: error: …`` line, exit status 2, no traceback."""

from __future__ import annotations

from functools import partial

import pytest

from helpers import assert_one_error, structcrawl, unused_port

QUIET = ["-s", "LOG_LEVEL=CRITICAL", "-s", "RETRY_ENABLED=False"]
run = partial(structcrawl, timeout=120)


@pytest.mark.parametrize("url", ["http://", "not a url", "file:///etc/passwd", "ftp://127.0.0.1/", "javascript:x",
                                 "//127.0.0.1/"])
def test_malformed_start_url(tmp_path, url):
    assert_one_error(run("crawl", url, *QUIET, cwd=tmp_path), "start_url must be an absolute http(s) URL")


def test_unparsable_start_url(tmp_path):
    res = run("crawl", "http://[::1", *QUIET, cwd=tmp_path)
    assert_one_error(res, "IPv6")


def test_unreachable_start_url(tmp_path):
    res = run("crawl", f"http://127.0.0.1:{unused_port()}/", *QUIET, cwd=tmp_path)
    assert_one_error(res, "no page could be modelled")


@pytest.mark.parametrize("command", ["classify", "report"])
@pytest.mark.parametrize(
    "content, message",
    [
        ('{"format": "structcrawl-site-model", "format_version": 1, "cla', "not valid JSON"),
        ('{"format": "structcrawl-site-model", "format_version": 99, "classes": []}', "unsupported format_version 99"),
        ("", "empty file"),
        ("[1, 2]", ""),
    ],
)
def test_bad_model_json(tmp_path, command, content, message):
    (tmp_path / "m.json").write_text(content, encoding="utf-8")
    (tmp_path / "p.html").write_text("<html><body><a href='/x'>x</a></body></html>", encoding="utf-8")
    args = ["classify", "m.json", "p.html"] if command == "classify" else ["report", "m.json"]
    assert_one_error(run(*args, cwd=tmp_path), message)


def test_missing_model_file(tmp_path):
    assert_one_error(run("report", "missing.json", cwd=tmp_path), "cannot read model")


def test_unknown_strategy_option(tmp_path):
    res = run("crawl", "http://127.0.0.1:1/", "--strategy", "bogus", cwd=tmp_path)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert "invalid choice: 'bogus'" in res.stderr


def test_unknown_strategy_setting(tmp_path):
    res = run("crawl", f"http://127.0.0.1:{unused_port()}/", "-s", "STRUCTCRAWL_STRATEGY=bogus", *QUIET, cwd=tmp_path)
    assert_one_error(res, "strategy must be one of densest, sparsest")


@pytest.mark.parametrize("db, message", [
    ("sqlite:////nonexistent-dir/x/y.db", "does not exist"),
    ("bogus://x", "bogus"),
])
def test_export_with_a_database_that_cannot_be_opened(tmp_path, db, message):
    assert_one_error(run("export", "--db", db, cwd=tmp_path), message)


@pytest.mark.parametrize("db", ["sqlite:////nonexistent-dir/x/y.db", "bogus://x"])
def test_crawl_with_a_database_that_cannot_be_opened(tmp_path, db):
    res = run("crawl", f"http://127.0.0.1:{unused_port()}/", "--db", db, *QUIET, cwd=tmp_path)
    assert_one_error(res, "")
