"""The HTML report in a real headless browser (Debian's ``chromium``), with no network.

The page must load without a single console message (it has no script, so any
message is an error: a CSP violation, a failed load …), and the rendered DOM
must show one graph node per class.  A screenshot is kept in
``tests/artifacts/report.png``.  Without chromium this test FAILS: CI installs
it (``.ci/run``); locally ``apt-get install chromium``, or point
``STRUCTCRAWL_CHROMIUM`` at a Chromium binary.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from lxml import html as LH

from structcrawl.core.explorer import run_offline
from structcrawl.demo.site import DemoSite
from structcrawl.report import write_report
from structcrawl.sitemodel import TagPathSamples, model_document
from test_export import BASE, Recorder

ARTIFACTS = Path(__file__).parent / "artifacts"


def chromium() -> str:
    exe = os.environ.get("STRUCTCRAWL_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        pytest.fail("chromium is not installed: the report's browser test needs it (apt-get install chromium)")
    return exe


def run_browser(tmp_path: Path, url: str, *extra: str) -> subprocess.CompletedProcess:
    """Headless chromium with networking cut off: every host resolves to nothing, no proxy, no background fetches."""
    profile = tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"
    cmd = [
        chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-extensions", "--disable-default-apps", "--no-proxy-server",
        "--host-resolver-rules=MAP * ~NOTFOUND", f"--user-data-dir={profile}",
        "--enable-logging=stderr", "--v=0", *extra, url,
    ]
    env = dict(os.environ, HOME=str(tmp_path))
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)


def console_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    site = DemoSite(pages=600, seed=5)
    fetch = Recorder(site)
    explorer = run_offline(fetch, BASE + "/", stop="stable")
    samples = TagPathSamples(per_class=20)
    samples.keep(fetch.features.values(), explorer.model.page_class)
    doc = json.loads(json.dumps(model_document(explorer, crawl={"stop_reason": "model_stable"}, tag_paths=samples)))
    path = tmp_path_factory.mktemp("report") / "demo.model.html"
    write_report(doc, path)
    return doc, path


def test_console_capture_works(tmp_path):
    """Negative control: the log scraping does see a page's console errors."""
    bad = tmp_path / "bad.html"
    bad.write_text("<html><body><script>undefinedFunction();</script></body></html>")
    proc = run_browser(tmp_path, bad.as_uri(), "--dump-dom")
    assert any("undefinedFunction" in line for line in console_lines(proc.stderr)), proc.stderr[-2000:]


def test_report_loads_cleanly_and_shows_one_node_per_class(report, tmp_path):
    doc, path = report
    proc = run_browser(tmp_path, path.as_uri(), "--dump-dom")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert console_lines(proc.stderr) == []
    dom = LH.document_fromstring(proc.stdout)
    nodes = dom.xpath("//svg[@id='model-graph']//g[contains(concat(' ', @class, ' '), ' node ')]")
    assert sorted(int(n.get("data-class")) for n in nodes) == sorted(c["id"] for c in doc["classes"])
    assert len(doc["classes"]) >= 5
    rows = dom.xpath("//table[@id='class-table']//tr[@data-class]")
    assert len(rows) == len(doc["classes"])
    assert dom.xpath("//svg[@id='learning-curve']//polyline[@data-key='classes']")
    assert "pages modelled" in dom.get_element_by_id("lead").text_content()


def test_report_screenshot(report, tmp_path):
    _doc, path = report
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "report.png"
    if shot.exists():
        shot.unlink()
    proc = run_browser(tmp_path, path.as_uri(), f"--screenshot={shot}", "--window-size=1400,2600",
                       "--hide-scrollbars")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert console_lines(proc.stderr) == []
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000  # a real, non-blank picture
