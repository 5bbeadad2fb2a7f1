"""``structcrawl classify`` end to end: python -m structcrawl in a subprocess, real loopback HTTP."""

from __future__ import annotations

import json
import subprocess
from functools import partial
from pathlib import Path

import pytest

from helpers import learn_offline, serving, structcrawl, unused_port
from structcrawl.core.features import extract
from structcrawl.demo.site import DemoSite
from structcrawl.sitemodel import dumps, load_model, model_document, write_model

SITE = DemoSite(pages=300, seed=5)
classify = partial(structcrawl, "classify")


def lines(res: subprocess.CompletedProcess) -> list[dict]:
    return [json.loads(line) for line in res.stdout.splitlines()]


@pytest.fixture(scope="module")
def server():
    with serving(SITE) as base:
        yield base


@pytest.fixture(scope="module")
def model_path(tmp_path_factory, server):
    """A model learnt offline from the site's pages, with the served site's start URL."""
    _fetch, explorer, samples = learn_offline(SITE, server + "/", "exhaust")
    path = tmp_path_factory.mktemp("model") / "model.json"
    write_model(model_document(explorer, tag_paths=samples), path)
    return str(path)


@pytest.fixture(scope="module")
def model(model_path):
    return load_model(model_path)


def expected(model, path_qs: str, base: str) -> int | None:
    status, headers, body = SITE.render(path_qs)
    assert status == 200
    return model.classify_page(extract(body, base + path_qs, headers.get("Content-Type")))[0]


def assert_one_classified(res: subprocess.CompletedProcess, model, server: str, path_qs: str) -> None:
    """One input, reported under ``server + path_qs`` in the class the model gives that page."""
    assert res.returncode == 0, res.stderr
    [rec] = lines(res)
    assert rec["url"] == server + path_qs
    assert rec["class"] == expected(model, path_qs, server)


def test_urls_are_fetched_and_classified(model_path, model, server):
    paths = ["/", "/book/1.html", "/author/2", "/review/3", "/news/"]
    res = classify(model_path, *[server + p for p in paths])
    assert res.returncode == 0, res.stderr
    out = lines(res)
    assert [r["input"] for r in out] == [server + p for p in paths]
    for rec, p in zip(out, paths):
        assert set(rec) == {"input", "url", "class", "cost"}
        assert rec["url"] == server + p
        assert rec["class"] == expected(model, p, server)
        assert isinstance(rec["cost"], float)
    assert len({r["class"] for r in out}) >= 4  # different templates, different classes


def test_redirect_is_followed_and_reported_under_the_final_url(model_path, server):
    res = classify(model_path, server + "/b/7")
    assert res.returncode == 0, res.stderr
    [rec] = lines(res)
    assert rec["input"] == server + "/b/7"
    assert rec["url"] == server + "/book/7.html"
    assert rec["class"] is not None


def test_local_files_get_base_url_plus_relative_path(model_path, model, server, tmp_path):
    root = tmp_path / "mirror"
    wanted = {}
    for p in ["/book/3.html", "/author/4", "/category/" + SITE.category_slugs[0]]:
        status, _h, body = SITE.render(p)
        f = root / p.lstrip("/")
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(body)
        wanted[str(f)] = p
    res = classify(model_path, "--base-url", server + "/", "--root", str(root), *wanted)
    assert res.returncode == 0, res.stderr
    for rec in lines(res):
        p = wanted[rec["input"]]
        assert rec["url"] == server + p
        assert rec["class"] == expected(model, p, server)
    # relative paths, --root defaulting to the current directory
    res = classify(model_path, "--base-url", server, "book/3.html", cwd=str(root))
    assert_one_classified(res, model, server, "/book/3.html")


def foreign_page(kind: str, i: int) -> bytes:
    """A page of a type the demo site does not have: a Javadoc class page or an AsciiDoc manpage."""
    if kind == "javadoc":
        rows = "".join(f'<tr><td class="colFirst"><a href="m{i}{j}.html">m{j}</a></td>'
                       '<td class="colLast"><div class="block">d</div></td></tr>' for j in range(5))
        return (f'<html><head><title>C{i}</title></head><body><div class="header"><h2 class="title">Class C{i}'
                '</h2></div><div class="contentContainer"><ul class="inheritance"><li><a href="o.html">Object</a>'
                f'</li></ul><table class="memberSummary">{rows}</table><div class="details"><ul class="blockList">'
                '<li class="blockList"><h4>m</h4><pre>void m()</pre></li></ul></div></div></body></html>').encode()
    return (f'<html><head><title>M{i}</title></head><body class="manpage"><div id="header"><h1>cmd{i}(1)</h1>'
            '</div><div class="sect1"><h2>NAME</h2><div class="sectionbody"><div class="paragraph"><p>cmd - x '
            f'<a href="see{i}.html">see</a></p></div></div></div><div class="sect1"><h2>SYNOPSIS</h2>'
            '<div class="verseblock"><pre class="content">cmd</pre></div></div></body></html>').encode()


def test_pages_that_fit_no_class_are_grouped_by_kind_in_input_order(model_path, server, tmp_path):
    """Two kinds of page the crawl never saw, interleaved with a page it knows, classified by four
    threads: each fits no class, and the pages of one kind share their ``unseen`` group, numbered
    in input order whatever order the threads finish in; ``structcrawl evaluate`` scores each
    group as one cluster."""
    order = [("javadoc", 0), ("manpage", 0), ("javadoc", 1), ("book", 3), ("manpage", 1), ("javadoc", 2)]
    files = []
    for kind, i in order:
        f = tmp_path / f"{kind}{i}.html"
        f.write_bytes(SITE.render(f"/book/{i}.html")[2] if kind == "book" else foreign_page(kind, i))
        files.append(str(f))
    res = classify(model_path, "--base-url", server + "/", "--root", str(tmp_path), "--jobs", "4", *files)
    assert res.returncode == 0, res.stderr
    records = lines(res)
    assert [r.get("unseen") for r in records] == [1, 2, 1, None, 2, 1]
    assert [r["class"] is None for r in records] == [True, True, True, False, True, True]
    (tmp_path / "assigned.jsonl").write_text(res.stdout)
    (tmp_path / "truth.csv").write_text("url,class\n" + "".join(
        f"{r['url']},{kind}\n" for r, (kind, _i) in zip(records, order)))
    res = structcrawl("evaluate", "--assignments", str(tmp_path / "assigned.jsonl"),
                      "--truth", str(tmp_path / "truth.csv"), "--json")
    assert res.returncode == 0, res.stderr
    scores = json.loads(res.stdout)
    assert scores["fstar"] == 1.0 and scores["unassigned"] == 0


def test_base_url_defaults_to_the_model_start_url(model_path, model, server, tmp_path):
    status, _h, body = SITE.render("/author/5")
    (tmp_path / "author").mkdir()
    (tmp_path / "author" / "5").write_bytes(body)
    res = classify(model_path, "author/5", cwd=str(tmp_path))
    assert_one_classified(res, model, server, "/author/5")


def test_stdin_inputs_in_order_and_many(model_path, model, server, tmp_path):
    status, _h, body = SITE.render("/book/2.html")
    page = tmp_path / "book" / "2.html"
    page.parent.mkdir()
    page.write_bytes(body)
    n = 3000
    stdin = "# a comment\n\n" + "".join(f"{page}\n" for _ in range(n))
    res = classify(model_path, "--root", str(tmp_path), "--base-url", server, "-", stdin=stdin)
    assert res.returncode == 0, res.stderr
    out = res.stdout.splitlines()
    assert len(out) == n
    want = expected(model, "/book/2.html", server)
    assert all(json.loads(line)["class"] == want for line in out[:: n // 10])
    # inputs mixed: arguments and stdin keep their order
    res = classify(model_path, server + "/author/1", "-", server + "/", stdin=f"{server}/review/1\n")
    assert [r["input"] for r in lines(res)] == [server + "/author/1", server + "/review/1", server + "/"]


def test_output_file(model_path, server, tmp_path):
    out = tmp_path / "out.jsonl"
    res = classify(model_path, "-o", str(out), server + "/")
    assert res.returncode == 0, res.stderr
    assert res.stdout == ""
    assert json.loads(out.read_text())["url"] == server + "/"


def test_bad_inputs_give_error_lines_and_exit_1(model_path, server, tmp_path):
    res = classify(
        model_path, "--root", str(tmp_path), server + "/no/such/page", str(tmp_path / "missing.html"),
        server + "/robots.txt", server + "/",
    )
    assert res.returncode == 1
    out = lines(res)
    assert len(out) == 4
    assert out[0]["class"] is None and out[0]["cost"] is None and "404" in out[0]["error"]
    assert out[1]["class"] is None and "cannot read" in out[1]["error"]
    assert out[2]["class"] is None and "not HTML" in out[2]["error"]
    assert out[3]["class"] is not None and "error" not in out[3]
    assert "Traceback" not in res.stderr


def test_unreachable_url(model_path):
    res = classify(model_path, f"http://127.0.0.1:{unused_port()}/")
    assert res.returncode == 1
    [rec] = lines(res)
    assert rec["class"] is None and "cannot fetch" in rec["error"]


def test_root_reached_through_a_symlink(model_path, model, server, tmp_path):
    """--root and the inputs name one directory by two paths, one through a symlink: the files are under it."""
    real, link = tmp_path / "real", tmp_path / "link"
    (real / "book").mkdir(parents=True)
    (real / "book" / "3.html").write_bytes(SITE.render("/book/3.html")[2])
    link.symlink_to(real, target_is_directory=True)
    for root, page, cwd in [
        (link, "book/3.html", link),  # the current directory entered through the symlink (getcwd() resolves it)
        (link, real / "book" / "3.html", None),
        (real, link / "book" / "3.html", None),
    ]:
        res = classify(model_path, "--base-url", server, "--root", str(root), str(page), cwd=cwd and str(cwd))
        assert_one_classified(res, model, server, "/book/3.html")
    # a symlink under --root to a file elsewhere keeps its own name
    (tmp_path / "elsewhere.html").write_bytes(SITE.render("/book/3.html")[2])
    (real / "alias.html").symlink_to(tmp_path / "elsewhere.html")
    res = classify(model_path, "--base-url", server, "--root", str(real), str(real / "alias.html"))
    assert res.returncode == 0, res.stderr
    assert lines(res)[0]["url"] == server + "/alias.html"


def test_file_outside_root(model_path, tmp_path):
    (tmp_path / "a").mkdir()
    f = tmp_path / "b.html"
    f.write_text("<html></html>")
    res = classify(model_path, "--root", str(tmp_path / "a"), str(f))
    assert res.returncode == 1
    assert "not under --root" in lines(res)[0]["error"]


@pytest.mark.parametrize(
    "content, message",
    [
        ('{"format": "structcrawl-site-model", "format_version": 1, "classes": [{"id"', "truncated"),
        ('{"format": "structcrawl-site-model", "format_version": 9, "classes": []}', "unsupported format_version 9"),
        ("hello", "not valid JSON"),
    ],
)
def test_bad_model_is_one_line_exit_2(tmp_path, content, message):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    res = classify(str(bad), "http://127.0.0.1:1/")
    assert res.returncode == 2
    assert res.stderr.startswith("structcrawl: error: ")
    assert message in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
    assert res.stdout == ""


def test_missing_model_and_bad_options(tmp_path, model_path):
    res = classify(str(tmp_path / "nope.json"), "x.html")
    assert res.returncode == 2 and "cannot read model" in res.stderr
    res = classify(model_path, "--base-url", "ftp://x/", "x.html")
    assert res.returncode == 2 and "--base-url" in res.stderr
    res = classify(model_path, "--root", str(tmp_path / "nodir"), "x.html")
    assert res.returncode == 2 and "--root" in res.stderr


def test_model_text_round_trip(model_path):
    text = Path(model_path).read_text(encoding="utf-8")
    assert dumps(json.loads(text)) == text
