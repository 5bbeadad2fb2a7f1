"""Serve a :class:`~structcrawl.demo.site.DemoSite` over HTTP/1.1 on a loopback port.

* ``serve(site, host="127.0.0.1", port=8000, access_log=None)`` — blocking; prints
  ``serving demo site (N pages) on http://HOST:PORT/`` to stderr; Ctrl-C stops it
  cleanly.
* ``start_in_thread(site, host="127.0.0.1", port=0, access_log=None)`` →
  ``(server, base_url)``: binds (port 0 picks a free port), runs ``serve_forever``
  in a daemon thread and returns at once; stop with ``server.shutdown()`` then
  ``server.server_close()``.
* ``access_log``: None (silent — nothing is logged per request), a callable
  receiving ``(method, path_qs, status)`` for every answered request (called from
  the request's thread just before the response is sent), or a text file object that gets one
  ``METHOD path_qs STATUS`` line per request.

Responses carry ``Content-Length`` and connections are kept alive (HTTP/1.1);
each response is written with one ``send`` and Nagle is off, so a keep-alive
client never waits on delayed ACKs.  Only GET and HEAD are answered.
"""

from __future__ import annotations

import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, TextIO, Union
from urllib.parse import urlsplit

from structcrawl.demo.site import DemoSite

AccessLog = Union[Callable[[str, str, int], object], TextIO, None]

__all__ = ["DemoHTTPServer", "make_server", "serve", "start_in_thread"]


def _as_callback(access_log: AccessLog) -> Callable[[str, str, int], object] | None:
    if access_log is None:
        return None
    if hasattr(access_log, "write") and not callable(access_log):
        fh = access_log
        lock = threading.Lock()

        def write(method: str, path_qs: str, status: int) -> None:
            with lock:
                fh.write(f"{method} {path_qs} {status}\n")

        return write
    return access_log  # type: ignore[return-value]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "structcrawl-demo/0.1"
    disable_nagle_algorithm = True
    wbufsize = 1 << 16  # buffered: headers + body leave in one send on flush
    timeout = 60  # idle keep-alive connections are closed after this many seconds

    server: "DemoHTTPServer"

    def _answer(self, send_body: bool) -> None:
        target = self.path
        if not target.startswith("/"):
            # absolute-form request target (proxy style): keep path and query only
            parts = urlsplit(target)
            target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        try:
            status, headers, body = self.server.site.render(target)
        except Exception:  # never kill the connection thread on a generator bug
            status, headers, body = 500, {"Content-Type": "text/plain; charset=utf-8"}, b"internal error\n"
        log = self.server.access_log
        if log is not None:  # before answering: a client that has its response sees its log entry
            log(self.command, target, status)
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if send_body:
            self.wfile.write(body)

    def version_string(self) -> str:
        return self.server_version

    def do_GET(self) -> None:  # noqa: N802
        self._answer(True)

    def do_HEAD(self) -> None:  # noqa: N802
        self._answer(False)

    def log_message(self, format: str, *args) -> None:  # noqa: A002
        pass  # quiet: no per-request stderr output


class DemoHTTPServer(ThreadingHTTPServer):
    """A threading HTTP server (daemon threads) answering from one ``DemoSite``."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, site: DemoSite, address: tuple[str, int], access_log: AccessLog = None) -> None:
        self.site = site
        self.access_log = _as_callback(access_log)
        super().__init__(address, _Handler)

    @property
    def base_url(self) -> str:
        host, port = self.server_address[:2]
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{port}"


def make_server(site: DemoSite, host: str = "127.0.0.1", port: int = 0, access_log: AccessLog = None) -> DemoHTTPServer:
    """Bind (but do not start) a server for ``site``."""
    return DemoHTTPServer(site, (host, port), access_log=access_log)


def start_in_thread(
    site: DemoSite, host: str = "127.0.0.1", port: int = 0, access_log: AccessLog = None
) -> tuple[DemoHTTPServer, str]:
    """Start serving ``site`` in a daemon thread; returns ``(server, base_url)``.

    Stop it with ``server.shutdown()`` then ``server.server_close()``.
    """
    return _run_in_thread(make_server(site, host, port, access_log), "demo-site")


def serve(site: DemoSite, host: str = "127.0.0.1", port: int = 8000, access_log: AccessLog = None) -> None:
    """Serve ``site`` until interrupted (Ctrl-C); blocking."""
    _serve_until_interrupted(make_server(site, host, port, access_log), f"demo site ({len(site)} pages)")


# The demo and the hostile site (structcrawl.demo.hostile) start and stop their servers alike.
def _run_in_thread(server: DemoHTTPServer, name: str) -> tuple[DemoHTTPServer, str]:
    thread = threading.Thread(target=server.serve_forever, name=f"{name}:{server.server_address[1]}", daemon=True)
    thread.start()
    return server, server.base_url


def _serve_until_interrupted(server: DemoHTTPServer, what: str) -> None:
    print(f"serving {what} on {server.base_url}/", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
