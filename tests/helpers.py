"""Helpers shared by the end-to-end tests (imported like tests/dbfixtures.py): demo servers in a thread of
the test process that record what they answer, ``structcrawl`` and ``scrapy`` subprocesses, offline crawls.

Subprocesses run ``sys.executable`` and the ``scrapy`` next to it: CI runs the tests in a fresh .venv.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest

from structcrawl.core.explorer import run_offline
from structcrawl.core.features import extract
from structcrawl.demo import hostile, server
from structcrawl.demo.site import DemoSite
from structcrawl.sitemodel import TagPathSamples

PYTHON = sys.executable
SCRAPY = str(Path(PYTHON).with_name("scrapy"))
PROJECT = Path(__file__).resolve().parent.parent
QUIET = ["-s", "LOG_LEVEL=INFO", "-s", "STRUCTCRAWL_LOGSTATS_INTERVAL=0"]


class AccessLog:
    """Thread-safe list of (method, path_qs, status) answered by a demo server."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.entries: list[tuple[str, str, int]] = []

    def __call__(self, method: str, path_qs: str, status: int) -> None:
        with self.lock:
            self.entries.append((method, path_qs, status))

    def mark(self) -> int:
        with self.lock:
            return len(self.entries)

    def since(self, mark: int) -> list[tuple[str, str, int]]:
        with self.lock:
            return list(self.entries[mark:])

    def gets(self, mark: int = 0) -> list[str]:
        with self.lock:
            return [p for m, p, _s in self.entries[mark:] if m == "GET" and p != "/robots.txt"]


class Demo:
    """A demo site served for a whole module (see the ``demo`` fixtures), with its access log."""

    def __init__(self, site: DemoSite) -> None:
        self.site = site
        self.log = AccessLog()
        self.server, self.base = server.start_in_thread(site, access_log=self.log)
        self.url = self.base + "/"

    def path(self, url: str) -> str:
        assert url.startswith(self.base), url
        return url[len(self.base):] or "/"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@contextmanager
def serving(site: DemoSite | hostile.HostileSite, access_log=None):
    """Serve ``site`` (demo or hostile) in a thread for the ``with`` block; yields its base URL."""
    start = hostile.start_in_thread if isinstance(site, hostile.HostileSite) else server.start_in_thread
    srv, base = start(site, access_log=access_log)
    try:
        yield base
    finally:
        srv.shutdown()
        srv.server_close()


@contextmanager
def serving_handler(handler: type[BaseHTTPRequestHandler]):
    """Serve ``handler`` on a loopback port in a thread for the ``with`` block; yields its base URL
    (no trailing slash)."""
    srv = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()


def unused_port() -> int:
    """A loopback port nobody listens on (until someone binds it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(cmd: list[str], cwd: Path | str | None = PROJECT, stdin: str | None = None,
        timeout: float = 600) -> subprocess.CompletedProcess:
    """Run ``cmd`` to its end, output captured as text; ``cwd=None``: the test process's directory.
    Past ``timeout`` the test fails with the end of what the command wrote: a hang is then
    diagnosed from the CI log, not guessed at."""
    try:
        return subprocess.run(cmd, cwd=None if cwd is None else str(cwd), input=stdin, capture_output=True,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        def tail(out: bytes | str | None) -> str:
            text = out.decode(errors="replace") if isinstance(out, bytes) else out or ""
            return text[-4000:]
        pytest.fail(f"{cmd[:4]}… still running after {timeout:.0f} s\n--- stderr (end) ---\n{tail(exc.stderr)}"
                    f"\n--- stdout (end) ---\n{tail(exc.stdout)}", pytrace=False)


def structcrawl(*args: str, cwd: Path | str | None = None, stdin: str | None = None,
                timeout: float = 300) -> subprocess.CompletedProcess:
    """``python -m structcrawl ARGS…`` to its end."""
    return run([PYTHON, "-m", "structcrawl", *args], cwd=cwd, stdin=stdin, timeout=timeout)


def assert_one_error(res: subprocess.CompletedProcess, message: str) -> None:
    """Exit status 2, no traceback, one ``structcrawl: error:`` line that says ``message``."""
    assert res.returncode == 2, res.stderr[-2000:]
    assert "Traceback" not in res.stderr, res.stderr[-3000:]
    errors = [line for line in res.stderr.splitlines() if line.startswith("structcrawl: error: ")]
    assert len(errors) == 1, res.stderr[-2000:]
    assert message in errors[0], errors[0]


class Recorder:
    """A fetch function over a DemoSite (redirects followed, /cart refused) keeping features."""

    def __init__(self, site: DemoSite) -> None:
        self.site = site
        self.features = {}

    def __call__(self, url: str, depth: int = 0):
        parts = urlsplit(url)
        path_qs = parts.path + (f"?{parts.query}" if parts.query else "")
        if parts.path.startswith("/cart"):
            return None
        status, headers, body = self.site.render(path_qs)
        if status in (301, 302) and depth < 5:
            return self(urljoin(url, headers["Location"]), depth + 1)
        if status != 200:
            return None
        self.features[url] = extract(body, url, headers.get("Content-Type"))
        return url, body


def learn_offline(site: DemoSite, start_url: str, stop: str, **samples: int):
    """Crawl ``site`` offline (no HTTP, no Scrapy): the fetch Recorder, the explorer and the tag-path samples."""
    fetch = Recorder(site)
    explorer = run_offline(fetch, start_url, stop=stop)
    tag_paths = TagPathSamples(**samples)
    tag_paths.keep(fetch.features.values(), explorer.model.page_class)
    return fetch, explorer, tag_paths
