"""The ``structure`` spider end to end: real crawls of real loopback servers, in subprocesses.

Each crawl runs in its own process (``python -m structcrawl crawl …`` or
``scrapy crawl structure …`` in the project directory) so that the Twisted
reactor never meets pytest; the HTTP servers run in threads of the test
process and record every request they answer.
"""

from __future__ import annotations

import json
import re
import subprocess
import textwrap
from collections import Counter
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from helpers import PROJECT, PYTHON, QUIET, SCRAPY, Demo, Recorder, run, serving_handler, unused_port
from structcrawl.core.explorer import run_offline
from structcrawl.demo.site import DemoSite


@pytest.fixture(scope="module")
def demo():
    d = Demo(DemoSite())  # the default demo site
    yield d
    d.close()


@pytest.fixture(scope="module")
def small_demo():
    d = Demo(DemoSite(pages=150, seed=1))
    yield d
    d.close()


def crawl(url: str, tmp_path: Path, *args: str, out: str = "model.json") -> tuple[subprocess.CompletedProcess, dict]:
    res = run([PYTHON, "-m", "structcrawl", "crawl", url, "-o", out, *QUIET, *args], cwd=tmp_path)
    assert res.returncode == 0, res.stderr[-3000:]
    return res, json.loads((tmp_path / out).read_text(encoding="utf-8"))


def scrapy_stat(stderr: str, name: str):
    m = re.search(rf"'{re.escape(name)}': ([^,\n]+)", stderr)
    return None if m is None else eval(m.group(1))  # noqa: S307 - Scrapy's own stats dump


def page_gets(entries) -> list[str]:
    return [p for m, p, _s in entries if m == "GET" and p != "/robots.txt"]


def write_truth(site: DemoSite, base: str, path: Path) -> list[str]:
    with open(path, "w", encoding="utf-8", newline="") as fh:
        site.write_truth(fh, base_url=base)
    return [base + p for p, _c in site.truth()]


def classify_and_score(demo: Demo, model: Path, tmp_path: Path) -> dict:
    """All truth pages through ``structcrawl classify`` (over HTTP), scored by ``structcrawl evaluate``."""
    urls = write_truth(demo.site, demo.base, tmp_path / "truth.csv")
    res = run([PYTHON, "-m", "structcrawl", "classify", str(model), "-", "-o", "assign.jsonl"], tmp_path,
              stdin="\n".join(urls) + "\n")
    assert res.returncode == 0, res.stderr[-3000:]
    assert sum(1 for _ in open(tmp_path / "assign.jsonl", encoding="utf-8")) == len(urls)
    res = run([PYTHON, "-m", "structcrawl", "evaluate", "--assignments", "assign.jsonl",
               "--truth", "truth.csv", "--json"], tmp_path)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


# ---------------------------------------------------------------------------
# Acceptance on the default demo site
# ---------------------------------------------------------------------------


def test_densest_stops_when_stable_and_the_model_classifies_the_site(demo, tmp_path):
    mark = demo.log.mark()
    res, model = crawl(demo.url, tmp_path, "--strategy", "densest", "-s", "STRUCTCRAWL_LOGSTATS_INTERVAL=0.2")
    entries = demo.log.since(mark)
    gets = page_gets(entries)
    n = len(demo.site)

    # early stop, said so and why
    assert model["crawl"]["stop_reason"] == "model_stable"
    assert res.stdout.startswith("model_stable: ")
    assert "Closing spider (model_stable)" in res.stderr
    assert "Closing: the site model is stable — " + model["crawl"]["stability_reason"] in res.stderr
    assert model["crawl"]["stability_reason"]
    # issue 13: the demo within 10 % over HTTP too — no request handed out past the check that stopped it
    assert len(gets) <= 0.10 * n, f"fetched {len(gets)} of {n} pages"

    # progress line and stats
    assert re.search(r"Structure: \d+ pages fetched \(at \d+ pages/min\), \d+ modelled in \d+ classes, MDL", res.stderr)
    assert scrapy_stat(res.stderr, "structcrawl/classes") == len(model["classes"])
    assert scrapy_stat(res.stderr, "structcrawl/pages_modelled") == model["crawl"]["pages_modelled"]
    assert scrapy_stat(res.stderr, "structcrawl/model_updates") == model["crawl"]["model_updates"]
    assert scrapy_stat(res.stderr, "structcrawl/mdl_bits") == pytest.approx(model["mdl"]["total"], abs=0.1)

    # robots.txt obeyed, nothing fetched twice, nothing fetched off-site
    assert ("GET", "/robots.txt", 200) in entries
    assert not [p for p in gets if p.startswith("/cart")]
    assert not [p for p, k in Counter(gets).items() if k > 1]
    assert scrapy_stat(res.stderr, "robotstxt/forbidden") > 0
    assert scrapy_stat(res.stderr, "downloader/request_count") == len(entries)  # every download reached us

    # the model
    assert model["format"] == "structcrawl-site-model" and model["format_version"] == 2
    assert model["parameters"]["strategy"] == "densest"
    scores = classify_and_score(demo, tmp_path / "model.json", tmp_path)
    print(f"densest: fetched {len(gets)}/{n} ({len(gets) / n:.1%}), {len(model['classes'])} classes, "
          f"F* {scores['fstar']:.4f}, ARI {scores['ari']:.4f}")
    assert scores["fstar"] >= 0.95
    assert scores["ari"] >= 0.90


def test_sparsest_with_scrapy_crawl_in_the_project(demo, tmp_path):
    out = tmp_path / "sparsest.json"
    mark = demo.log.mark()
    res = run([SCRAPY, "crawl", "structure", "-a", f"start_url={demo.url}", "-a", "strategy=sparsest",
               "-s", f"STRUCTCRAWL_MODEL_OUT={out}", *QUIET], cwd=PROJECT)
    assert res.returncode == 0, res.stderr[-3000:]
    model = json.loads(out.read_text(encoding="utf-8"))
    gets = page_gets(demo.log.since(mark))
    assert model["parameters"]["strategy"] == "sparsest"
    assert model["crawl"]["stop_reason"] == "model_stable"
    assert not [p for p in gets if p.startswith("/cart")]
    scores = classify_and_score(demo, out, tmp_path)
    print(f"sparsest: fetched {len(gets)}/{len(demo.site)}, {len(model['classes'])} classes, "
          f"F* {scores['fstar']:.4f}, ARI {scores['ari']:.4f}")
    assert scores["fstar"] >= 0.90


def test_max_pages(demo, tmp_path):
    mark = demo.log.mark()
    res, model = crawl(demo.url, tmp_path, "--max-pages", "40", "--batch", "5")
    gets = page_gets(demo.log.since(mark))
    assert model["crawl"]["stop_reason"] == "max_pages"
    assert "Closing spider (max_pages)" in res.stderr
    assert 0 < len(gets) <= 40
    assert model["parameters"]["max_pages"] == 40 and model["parameters"]["batch_size"] == 5


def test_same_settings_same_model(small_demo, tmp_path):
    """Model steps run in frontier order, so two crawls of one site learn the same model."""
    docs = []
    for i in range(2):
        _res, model = crawl(small_demo.url, tmp_path, out=f"m{i}.json")
        for key in ("started", "finished", "pages_fetched"):  # wall clock, in-flight answers at the stop
            model["crawl"].pop(key)
        docs.append(model)
    assert docs[0] == docs[1]


def test_the_offline_loop_with_urls_in_flight_learns_what_the_spider_learns(demo, tmp_path):
    """``run_offline(inflight=2 × CONCURRENT_REQUESTS)`` is the spider's order without HTTP
    (batches popped ahead of the model, stepped in pop order): the benchmarks' fast loop
    reproduces a crawl over HTTP update by update."""
    _res, model = crawl(demo.url, tmp_path, "--strategy", "densest", "-s", "CONCURRENT_REQUESTS=8")
    explorer = run_offline(Recorder(demo.site), demo.url, strategy="densest", inflight=16)
    offline = [(p.update, p.pages, p.classes) for p in explorer.history]
    assert [(p["update"], p["pages"], p["classes"]) for p in model["history"]] == offline
    assert [p["mdl"] for p in model["history"]] == pytest.approx([p.mdl for p in explorer.history], abs=0.01)
    sequential = run_offline(Recorder(demo.site), demo.url, strategy="densest")
    assert [(p.pages, p.classes) for p in sequential.history] != [p[1:] for p in offline]


# ---------------------------------------------------------------------------
# Scope, robots.txt, redirects, dupefilter: a whole small site, stop=exhaust
# ---------------------------------------------------------------------------


def test_exhaust_fetches_every_page_once(small_demo, tmp_path):
    mark = small_demo.log.mark()
    res, model = crawl(small_demo.url, tmp_path, "--stop", "exhaust", "--members")
    entries = small_demo.log.since(mark)
    gets = page_gets(entries)
    truth = [p for p, _c in small_demo.site.truth()]

    assert model["crawl"]["stop_reason"] == "finished"
    assert "Closing spider (finished)" in res.stderr
    counts = Counter(gets)
    assert [p for p, k in counts.items() if k > 1] == []  # dupefilter: no URL fetched twice
    assert set(truth) <= set(counts)  # every page reached
    assert not [p for p in counts if p.startswith("/cart")]  # robots.txt
    redirects = [p for p in counts if p.startswith("/b/")]
    assert redirects, "the small demo site has /b/ID links"
    for p in redirects:  # a redirecting link is followed once, its target fetched once
        book = "/book/" + p.split("/")[2] + ".html"
        assert counts[p] == 1 and counts[book] == 1
    assert scrapy_stat(res.stderr, "downloader/request_count") == len(entries)  # off-site: never downloaded
    members = {u for c in model["classes"] for u in c["members"]}
    assert members == {small_demo.base + p for p in truth}  # pages recorded under their final URLs
    assert model["crawl"]["pages_modelled"] == len(truth)
    assert model["crawl"]["redirects"] >= len(redirects)
    targets = {(link["source"], link["target"]) for link in model["class_links"]}
    assert targets


def test_export_is_byte_identical_for_one_crawl_state(small_demo, tmp_path):
    """Write the model at close, then export the same spider state twice more: same bytes."""
    script = textwrap.dedent(
        f"""
        from scrapy.crawler import CrawlerProcess
        from structcrawl.sitemodel import dumps
        from structcrawl.crawling.runner import build_settings
        from structcrawl.spiders.structure import StructureSpider

        settings = build_settings({{"STRUCTCRAWL_MODEL_OUT": "m.json", "LOG_LEVEL": "WARNING",
                                    "STRUCTCRAWL_EXPORT_MEMBERS": True}})
        process = CrawlerProcess(settings)
        crawler = process.create_crawler(StructureSpider)
        process.crawl(crawler, start_url={small_demo.url!r}, max_pages=60)
        process.start()
        spider = crawler.spider
        written = open("m.json", encoding="utf-8").read()
        again = [dumps(spider.model_document()) for _ in range(2)]
        assert again[0] == again[1] == written, "exports differ"
        print("identical", len(written))
        """
    )
    res = run([PYTHON, "-c", script], cwd=tmp_path)
    assert res.returncode == 0, res.stderr[-3000:]
    assert res.stdout.startswith("identical")


# ---------------------------------------------------------------------------
# A hostile little site: every way a request can fail or vanish
# ---------------------------------------------------------------------------

PAGE = """<html><head><title>{title}</title></head><body>
<nav id="menu"><ul>{menu}</ul></nav>
<main><ul class="items">{items}</ul></main>
</body></html>"""


class _Tricky(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    log: list = []

    def log_message(self, *args) -> None:
        pass

    def _send(self, status: int, body: bytes = b"", ctype: str = "text/html; charset=utf-8", **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802
        host = self.headers.get("Host", "")
        port = self.server.server_address[1]
        self.log.append((host.split(":")[0], self.path))
        p = self.path
        if p == "/robots.txt":
            return self._send(200, b"User-agent: *\nDisallow: /private\n", "text/plain")
        if p == "/":
            menu = "".join(f'<li><a href="{u}">{u}</a></li>' for u in (
                "/item/1", "/item/2", "/item/3", "/pdf", "/text", "/json", "/missing", "/error",
                "/redir-home", "/redir-item", "/loop1", "/away", "/private/x", f"http://localhost:{port}/offsite",
                "mailto:a@b.example", "javascript:void(0)", "/deep/1"))
            return self._send(200, PAGE.format(title="home", menu=menu, items="").encode())
        if p.startswith("/item/") or p.startswith("/deep/"):
            n = int(p.rsplit("/", 1)[1])
            items = "".join(f'<li><a href="/item/{k}">{k}</a></li>' for k in range(1, 6)
                            if p.startswith("/deep/") or k != n)
            if p.startswith("/deep/") and n < 4:
                items += f'<li><a href="/deep/{n + 1}">deeper</a></li>'
            return self._send(200, PAGE.format(title=p, menu='<li><a href="/">home</a></li>', items=items).encode())
        if p == "/pdf":
            return self._send(200, b"%PDF-1.4 binary", "application/pdf")
        if p == "/text":
            return self._send(200, b"just text", "text/plain")
        if p == "/json":
            return self._send(200, b'{"a": 1}', "application/json")
        if p == "/error":
            return self._send(500, b"<html>oops</html>")
        if p == "/redir-home":
            return self._send(301, b"", Location="/")
        if p == "/redir-item":
            return self._send(302, b"", Location="/item/2")
        if p == "/loop1":
            return self._send(302, b"", Location="/loop2")
        if p == "/loop2":
            return self._send(302, b"", Location="/loop1")
        if p == "/away":
            return self._send(301, b"", Location=f"http://localhost:{port}/elsewhere")
        return self._send(404, b"<html>not found</html>")


@pytest.fixture()
def tricky():
    _Tricky.log = []
    with serving_handler(_Tricky) as base:
        yield base + "/", _Tricky.log


def test_every_request_is_accounted_for(tricky, tmp_path):
    url, log = tricky
    res, model = crawl(url, tmp_path, "--stop", "exhaust", "--members", "--batch", "3",
                       "-s", "RETRY_ENABLED=False")
    assert model["crawl"]["stop_reason"] == "finished"  # no batch left hanging
    hosts = {h for h, _p in log}
    paths = Counter(p for _h, p in log)
    assert hosts == {"127.0.0.1"}  # the localhost links and redirect were never followed
    assert "/private/x" not in paths  # robots.txt
    assert [p for p, k in paths.items() if k > 1] == []
    assert paths["/item/2"] == 1 and paths["/redir-item"] == 1  # redirect to a page also linked directly
    members = {u.replace(url, "/") for c in model["classes"] for u in c["members"]}
    assert members == {"/", "/item/1", "/item/2", "/item/3", "/item/4", "/item/5",
                       "/deep/1", "/deep/2", "/deep/3", "/deep/4"}
    failed = {k.split("/", 2)[2]: v for k, v in re.findall(r"'(structcrawl/failed/[^']+)': (\d+)", res.stderr)}
    assert failed.get("non_html") == "3"  # pdf, text, json: skipped, logged
    assert failed.get("http_404") == "1" and failed.get("http_500") == "1"
    assert failed.get("robots_txt") == "1"
    assert failed.get("redirect_off_site") == "1"
    assert "lost" not in failed
    assert "Skipped non-HTML page" in res.stderr
    assert model["crawl"]["pages_modelled"] == 10


_COLOURS = "red orange yellow green blue indigo violet black white grey brown pink".split()


class _MissingSubtree(BaseHTTPRequestHandler):
    """A home page of twelve link lists, each a live page, a broken link beside it and three links
    into ``/gone/`` (a sibling package not installed: 404)."""

    protocol_version = "HTTP/1.1"
    log: list = []

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802
        p = self.path
        self.log.append(p)
        if p == "/":
            body = "".join(f'<ul class="{c}"><li><a href="/p/{k}">p</a></li><li><a href="/p/x{k}">x</a></li>'
                           + "".join(f'<li><a href="/gone/{k}/{j}">g</a></li>' for j in range(3)) + "</ul>"
                           for k, c in enumerate(_COLOURS))
            status = 200
        elif p.startswith("/p/") and "x" not in p:
            body, status = f'<h1>{p}</h1><p><a href="/">home</a></p>', 200
        else:
            body, status = "not found", 404
        data = f"<html><body>{body}</body></html>".encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def test_a_directory_whose_urls_all_fail_is_not_fetched_again(tmp_path):
    _MissingSubtree.log = []
    with serving_handler(_MissingSubtree) as base:
        res, model = crawl(base + "/", tmp_path, "--stop", "exhaust", "-s", "CONCURRENT_REQUESTS=1",
                           "-s", "RETRY_ENABLED=False")
    gone = [p for p in _MissingSubtree.log if p.startswith("/gone/")]
    assert 10 <= len(gone) < 20, gone  # ten failed, then only what was already handed out (of 36)
    assert len([p for p in _MissingSubtree.log if p.startswith("/p/x")]) == 12  # /p/ answered: all tried
    assert f"Dead region {base}/gone/: 10 or more of its URLs failed and none answered" in res.stderr
    assert scrapy_stat(res.stderr, "structcrawl/dead_regions") == 1
    assert model["crawl"]["stop_reason"] == "finished"


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, message",
    [
        (["not-a-url"], "start_url must be an absolute http(s) URL"),
        (["ftp://127.0.0.1/"], "start_url must be an absolute http(s) URL"),
        (["http://127.0.0.1:1/", "--batch", "0"], "batch must be >= 1"),
        (["http://127.0.0.1:1/", "-s", "NOEQUALS"], "use -s NAME=VALUE"),
    ],
)
def test_crawl_cli_errors_are_one_line(tmp_path, args, message):
    res = run([PYTHON, "-m", "structcrawl", "crawl", *args], cwd=tmp_path)
    assert res.returncode == 2
    assert res.stderr.startswith("structcrawl: error: ") and message in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


def test_crawl_cli_unreachable_start(tmp_path):
    res = run([PYTHON, "-m", "structcrawl", "crawl", f"http://127.0.0.1:{unused_port()}/", "-s", "LOG_LEVEL=CRITICAL",
               "-s", "RETRY_ENABLED=False"], cwd=tmp_path)
    assert res.returncode == 2
    assert "structcrawl: error: no page could be modelled" in res.stderr


def test_scrapy_crawl_without_start_url(tmp_path):
    res = run([SCRAPY, "crawl", "structure", "-s", f"STRUCTCRAWL_MODEL_OUT={tmp_path / 'x.json'}"], cwd=PROJECT)
    assert res.returncode != 0
    assert "the start_url spider argument is required" in res.stderr
    assert not (tmp_path / "x.json").exists()
