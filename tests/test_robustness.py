"""Issue #8: a crawl of the hostile demo site (``structcrawl.demo.hostile``) over real loopback HTTP.

One crawl of the small demo site plus its ``/hostile/`` pages runs in a
subprocess (module fixture); each test checks one family of cases on the
server's access log, the Scrapy/structcrawl stats in the crawl log, and the
model written at close.  Tight limits keep it fast: DOWNLOAD_TIMEOUT=2,
RETRY_TIMES=1, DOWNLOAD_MAXSIZE=5 MB, DOWNLOAD_WARNSIZE=1 MB, at most 800 pages.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections import Counter
from urllib.parse import unquote

import pytest

from helpers import PYTHON, QUIET, AccessLog, run, serving, structcrawl, unused_port
from structcrawl.demo.hostile import HostileSite
from structcrawl.demo.site import DemoSite

MAX_PAGES = 800
SETTINGS = [*QUIET, "-s", "DOWNLOAD_TIMEOUT=2", "-s", "RETRY_TIMES=1", "-s", f"DOWNLOAD_MAXSIZE={5 << 20}",
            "-s", f"DOWNLOAD_WARNSIZE={1 << 20}"]


class Crawl:
    def __init__(self, res, model, entries, base) -> None:
        self.res, self.model, self.entries, self.base = res, model, entries, base
        self.log = res.stderr
        self.paths = Counter(unquote(p) for _m, p, _s in entries)
        self.failed = {k: int(v) for k, v in re.findall(r"'structcrawl/failed/([^']+)': (\d+)", self.log)}

    def hits(self, prefix: str) -> int:
        return sum(n for p, n in self.paths.items() if p.startswith(prefix))

    def stat(self, name: str):
        m = re.search(rf"'{re.escape(name)}': ([^,\n}}]+)", self.log)
        return None if m is None else eval(m.group(1))  # noqa: S307 - Scrapy's stats dump


def _crawl(site: HostileSite | DemoSite, tmp, *extra: str) -> Crawl:
    log = AccessLog()
    with serving(site, log) as base:
        res = structcrawl("crawl", base + "/", "-o", "m.json", "--members", "--max-pages", str(MAX_PAGES), *SETTINGS,
                          *extra, cwd=tmp)
    assert res.returncode == 0, res.stderr[-3000:]
    model = json.loads((tmp / "m.json").read_text(encoding="utf-8"))
    return Crawl(res, model, log.since(0), base)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    return _crawl(HostileSite(DemoSite(pages=150, seed=1), slow_seconds=6), tmp_path_factory.mktemp("hostile"))


@pytest.fixture(scope="module")
def hostile_exhaust(tmp_path_factory):
    """sparsest-first and stop=exhaust: nothing but the trap rules stops the traps (with stop=stable the
    model can settle before a trap shows its tenth page)."""
    return _crawl(HostileSite(DemoSite(pages=150, seed=1), slow_seconds=6), tmp_path_factory.mktemp("exhaust"),
                  "--strategy", "sparsest", "--stop", "exhaust")


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    return _crawl(DemoSite(pages=150, seed=1), tmp_path_factory.mktemp("clean"))


def _truth_classes(crawl: Crawl, site: DemoSite) -> set[frozenset[str]]:
    """The demo truth classes each model class holds (classes of /hostile/ pages left out)."""
    truth = {crawl.base + p: c for p, c in site.truth()}
    found = set()
    for cls in crawl.model["classes"]:
        names = frozenset(truth[u] for u in cls["members"] if u in truth)
        if names:
            found.add(names)
    return found


# -- the crawl carries on, with the model intact ---------------------------------


def test_the_crawl_completes_and_writes_the_model(hostile):
    assert hostile.model["crawl"]["stop_reason"] in ("model_stable", "finished", "max_pages")
    assert hostile.model["crawl"]["pages_modelled"] > 100
    assert "lost" not in hostile.failed  # every request accounted for: failed batches completed their model step
    assert "Traceback" not in hostile.log and "Unhandled error" not in hostile.log
    assert hostile.stat("structcrawl/model_updates") == hostile.model["crawl"]["model_updates"]


def test_hostile_crawl_finds_the_clean_classes(hostile, clean):
    site = DemoSite(pages=150, seed=1)
    want = _truth_classes(clean, site)
    got = _truth_classes(hostile, site)
    assert {n for s in want for n in s} == {c for _p, c in site.truth()}
    assert got == want


# -- non-HTML ----------------------------------------------------------------------


def test_non_html_is_recorded_and_skipped_never_parsed(hostile):
    for path in ("data.json", "plain.txt", "blob"):
        assert hostile.paths[f"/hostile/{path}"] == 1
        assert re.search(rf"Skipped non-HTML page \S+/hostile/{re.escape(path)} \(Content-Type: ", hostile.log)
    assert hostile.failed["non_html"] >= 3
    # a PDF or an image by its extension is not even requested, as Scrapy's LinkExtractor skips it
    for path in ("doc.pdf", "img.png"):
        assert hostile.paths[f"/hostile/{path}"] == 0
    assert hostile.failed["ignored_extension"] >= 2
    assert not hostile.hits("/hostile/never-")  # hrefs inside JSON and text are not links
    members = {u for c in hostile.model["classes"] for u in c["members"]}
    assert not {u for u in members if re.search(r"/hostile/(doc\.pdf|img\.png|data\.json|plain\.txt|blob)$", u)}


def test_html_with_a_wrong_content_type_is_sniffed(hostile):
    assert hostile.paths["/hostile/sniffed"] == 1


# -- broken markup and encodings ----------------------------------------------------


def test_broken_markup_is_modelled_and_its_links_followed(hostile):
    members = {u.replace(hostile.base, "") for c in hostile.model["classes"] for u in c["members"]}
    for path in ("unclosed", "deep", "nul", "latin1-lie", "bom", "meta-lie", "frameset", "empty-body"):
        assert hostile.paths[f"/hostile/{path}"] == 1
        assert f"/hostile/{path}" in members, path
    assert hostile.paths["/hostile/u1"] == 1 and hostile.paths["/hostile/u2"] == 1  # unclosed <li><a>
    assert hostile.paths["/hostile/n1"] == 1  # NUL bytes dropped, also inside an href
    assert hostile.paths["/hostile/f1"] == 1 and hostile.paths["/hostile/f2"] == 1  # a frameset's frames
    assert {"/hostile/f1", "/hostile/f2"} <= members
    assert hostile.paths["/hostile/zero"] == 1 and "/hostile/zero" in members  # 0-byte 200: an empty page
    for path in ("latin1-lie", "bom", "meta-lie"):  # charset lies and BOMs: the link is still read
        assert hostile.paths[f"/hostile/to/{path}"] == 1, path


# -- size limits --------------------------------------------------------------------


def test_download_maxsize_and_warnsize_are_honoured(hostile):
    # cancelled at the size limit once, never retried for it; on a loaded machine the 2 s
    # DOWNLOAD_TIMEOUT can fire on a first attempt, which is retried once (RETRY_TIMES=1;
    # seen once in a full run with three crawls beside it)
    cancels = re.findall(r"larger than download max size \(5242880\) in request <GET \S+/hostile/big>", hostile.log)
    assert len(cancels) == 1
    assert 1 <= hostile.paths["/hostile/big"] <= 2
    assert re.search(r"larger than download warn size \(1048576\) in request <GET \S+/hostile/many-links>", hostile.log)
    assert hostile.failed.get("DownloadCancelledError", 0) >= 1


def test_compression_bomb_is_cut_off(hostile):
    assert hostile.paths["/hostile/bomb"] == 1
    assert re.search(r"Ignored response <200 \S+/hostile/bomb> because its body .* exceeded DOWNLOAD_MAXSIZE",
                     hostile.log)


def test_a_page_with_100000_links_is_bounded_work(hostile):
    assert hostile.paths["/hostile/many-links"] == 1
    members = {u for c in hostile.model["classes"] for u in c["members"]}
    assert hostile.base + "/hostile/many-links" in members
    assert hostile.hits("/hostile/ml/") <= 30  # a collection of 404s is emptied as a trap


# -- HTTP -----------------------------------------------------------------------------


def test_redirect_chains_loops_and_meta_refresh(hostile):
    for n in range(6):
        assert hostile.paths[f"/hostile/chain/{n}"] == 1
    assert hostile.paths["/about"] >= 1
    assert 1 <= hostile.paths["/hostile/loop-a"] <= 11 and hostile.paths["/hostile/loop-b"] <= 11
    assert hostile.paths["/hostile/rel-redirect"] == 1 and hostile.paths["/contact"] == 1  # Location: ../contact
    assert hostile.paths["/hostile/meta-refresh"] == 1
    assert hostile.stat("structcrawl/redirects") >= 3


def test_http_errors_timeouts_and_resets_are_retried_then_failed(hostile):
    assert hostile.paths["/hostile/e404"] == 1 and hostile.paths["/hostile/e410"] == 1  # not retried
    assert hostile.failed["http_404"] >= 1 and hostile.failed["http_410"] == 1
    for path in ("e500", "e503", "slow", "reset"):  # RETRY_TIMES=1: two attempts each
        assert hostile.paths[f"/hostile/{path}"] == 2, path
        assert re.search(rf"Gave up retrying <GET \S+/hostile/{path}> \(failed 2 times\)", hostile.log), path
    assert hostile.failed["http_500"] == 1 and hostile.failed["http_503"] == 1
    assert hostile.failed["DownloadTimeoutError"] == 1
    assert hostile.failed["ResponseDataLossError"] == 1


# -- spider traps -------------------------------------------------------------------------


def test_traps_do_not_flood_the_model(hostile):
    trap_only = [c for c in hostile.model["classes"]
                 if all(u.replace(hostile.base, "").startswith(("/hostile/cal", "/hostile/s/", "/hostile/grow",
                                                                 "/hostile/self")) for u in c["members"])]
    assert len(trap_only) <= 4


def test_self_links_and_calendar_are_contained(hostile):
    assert hostile.hits("/hostile/self") <= 30
    assert hostile.hits("/hostile/cal") <= 30


def test_session_paths_and_growing_queries_are_contained(hostile):
    assert hostile.hits("/hostile/s/") <= 50
    assert hostile.hits("/hostile/grow") <= 50
    assert hostile.model["crawl"]["stop_reason"] != "max_pages"


def test_traps_are_found_by_rule_and_logged(hostile_exhaust):
    hostile = hostile_exhaust
    shapes = [m for m in re.findall(r"Spider trap: 10 pages of URL shape (\S+) ", hostile.log)]
    host = hostile.base.split("//", 1)[1]
    assert {s.replace(host, "") for s in shapes} >= {"/hostile/s/*/page", "/hostile/grow?q", "/hostile/self?r"}
    assert re.search(r"Spider trap: 10 pages in a row each an echo .*/hostile/cal\?month=", hostile.log)
    assert hostile.failed["trap"] >= 1
    assert hostile.stat("structcrawl/trap_shapes") == len(shapes)
    # refused URLs never reach the network, nor the max_pages budget
    assert hostile.stat("structcrawl/pages_refused") >= hostile.failed["trap"]


def test_url_length_limit(hostile):
    assert hostile.paths["/hostile/long"] == 1
    assert not hostile.hits("/hostile/too-long")
    assert hostile.failed["url_too_long"] == 1


def test_traps_are_contained_whatever_the_priorities(hostile_exhaust):
    """sparsest-first and stop=exhaust: nothing but the rules stops the traps, and the crawl ends."""
    crawl = hostile_exhaust
    assert crawl.model["crawl"]["stop_reason"] == "finished"
    site = DemoSite(pages=150, seed=1)
    assert {crawl.base + p for p, _c in site.truth()} <= {u for c in crawl.model["classes"] for u in c["members"]}
    for prefix in ("/hostile/s/", "/hostile/grow", "/hostile/self", "/hostile/cal"):
        assert crawl.hits(prefix) <= 50, prefix


def test_a_resumed_crawl_remembers_its_traps(tmp_path):
    """Interrupted (SIGINT) once a trap was found, then resumed: the replay rebuilds the traps."""
    import signal
    import time

    log = AccessLog()
    with serving(HostileSite(DemoSite(pages=150, seed=1), slow_seconds=6), log) as base:
        # stop=exhaust: a stable model may come before the crawl meets a trap
        cmd = [PYTHON, "-m", "structcrawl", "crawl", base + "/", "-o", "m.json", "--stop", "exhaust", "--db",
               f"sqlite:///{tmp_path / 'c.db'}", *SETTINGS]
        err = tmp_path / "first.err"
        with open(err, "w") as fh:
            proc = subprocess.Popen(cmd, cwd=str(tmp_path), stdout=subprocess.DEVNULL, stderr=fh)
            deadline = time.monotonic() + 120
            while "Spider trap: " not in err.read_text() and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.01)  # a polling interval, not a wait for timing
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=120)
        first = err.read_text()
        assert "Spider trap: " in first and "Closing spider (shutdown)" in first, first[-3000:]
        second = run(cmd, cwd=tmp_path, timeout=300)
    assert second.returncode == 0, second.stderr[-3000:]
    assert "Resuming job" in second.stderr
    assert re.search(r"'structcrawl/trap_shapes': [1-9]", second.stderr)
    found = re.findall(r"Spider trap: 10 pages of URL shape (\S+) ", first)
    assert found and not [s for s in found if f"URL shape {s} " in second.stderr]  # not found again: remembered
    paths = Counter(unquote(p) for _m, p, _s in log.entries)
    for prefix in ("/hostile/s/", "/hostile/grow", "/hostile/self", "/hostile/cal"):
        assert sum(n for p, n in paths.items() if p.startswith(prefix)) <= 50, prefix
    assert json.loads((tmp_path / "m.json").read_text())["crawl"]["stop_reason"] in ("model_stable", "finished")


def test_traps_switched_off_run_to_the_page_ceiling(tmp_path):
    crawl = _crawl(HostileSite(DemoSite(pages=150, seed=1), slow_seconds=6), tmp_path, "-s", "STRUCTCRAWL_TRAP_PAGES=0",
                   "--stop", "exhaust")
    assert crawl.model["crawl"]["stop_reason"] == "max_pages"
    assert "trap" not in crawl.failed


# -- links and scope -----------------------------------------------------------------------


def test_links_are_resolved_and_only_http_in_scope_fetched(hostile):
    for path in ("/hostile/protocol-relative", "/hostile/upper-scheme", "/hostile/dotted", "/hostile/white space",
                 "/hostile/entity?a=1&b=2", "/hostile/based/sub/page", "/hostile/based/up"):
        assert hostile.paths[path] == 1, path
    assert hostile.paths["/hostile/links"] == 1  # '#frag' is the same page
    for bad in ("ftp", "idn", "other-host", "/etc/passwd", "alert", "/x"):
        assert not [p for p in hostile.paths if p.endswith(bad)], bad
    assert not hostile.hits("/cart")  # robots.txt obeyed by default
    assert hostile.paths["/robots.txt"] == 1


def test_demo_site_hostile_switch(tmp_path):
    """``structcrawl demo-site --hostile`` serves the hostile pages; polled with a deadline, then stopped."""
    import time
    import urllib.request

    port = unused_port()
    proc = subprocess.Popen(
        [PYTHON, "-m", "structcrawl", "demo-site", "--hostile", "--pages", "100", "--port", str(port)],
        cwd=str(tmp_path), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        home = None
        while home is None and time.monotonic() < deadline and proc.poll() is None:
            try:
                home = urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5).read()
            except OSError:
                time.sleep(0.05)
        assert home is not None, "demo-site --hostile did not answer"
        assert b'<div id="hostile">' in home and b'href="/hostile/cal?month=1"' in home
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/hostile/doc.pdf", timeout=5) as resp:
            assert resp.headers["Content-Type"] == "application/pdf"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_ignored_extensions_are_a_setting():
    from scrapy.settings import Settings

    from structcrawl.core.traps import TrapDetector
    from structcrawl.crawling.refusals import ignored_extensions, refusal

    assert ignored_extensions(Settings({"STRUCTCRAWL_IGNORED_EXTENSIONS": "pdf, .PNG"})) == {".pdf", ".png"}
    ignored = ignored_extensions(Settings({"STRUCTCRAWL_IGNORED_EXTENSIONS": ["pdf"]}))
    traps = TrapDetector(10)
    assert refusal("http://h.test/doc/Manual.PDF", 0, traps, ignored) == "ignored_extension"
    assert refusal("http://h.test/doc/manual.pdf.html", 0, traps, ignored) is None  # a page about a PDF
    assert refusal("http://h.test/doc/manual.pdf?page=2", 0, traps, ignored) == "ignored_extension"
    assert refusal("http://h.test/doc/manual.pdf", 0, traps, frozenset()) is None  # empty: fetched
