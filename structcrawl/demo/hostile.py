"""The demo bookshop plus everything the web throws at a crawler (``structcrawl demo-site --hostile``).

:class:`HostileSite` wraps a :class:`~structcrawl.demo.site.DemoSite`: every demo
page is served unchanged except the home page, which gains one extra link list
``<div id="hostile"><ul><li><a>`` leading into ``/hostile/…``:

* non-HTML: ``doc.pdf``, ``img.png``, ``data.json``, ``plain.txt``, ``blob``
  (octet-stream); ``html-as-text`` (an HTML page served as ``text/plain``);
* broken markup: ``unclosed``, ``deep`` (5,000-deep nesting), ``nul`` (NUL
  bytes), ``frameset`` (its frames ``f1`` and ``f2`` are pages), ``empty-body``, ``zero`` (a 0-byte 200), ``latin1-lie``
  (declared latin-1, UTF-8 bytes), ``bom`` (UTF-8 BOM), ``meta-lie``
  (``<meta charset=utf-16>`` on a UTF-8 page), each linking ``to/<its name>``;
* size: ``big`` (6.7 MB of HTML), ``bomb`` (gzip of 64 MB of spaces), ``many-links``
  (100,000 links to ``/hostile/ml/N``);
* HTTP: ``chain/5`` (a 5-hop redirect chain to ``/about``), ``loop-a`` ↔
  ``loop-b``, ``rel-redirect`` (``Location: ../about``), ``meta-refresh``,
  ``e404``, ``e410``, ``e500``, ``e503``, ``slow`` (answers after
  :attr:`HostileSite.slow_seconds`), ``reset`` (sends half the headers, then
  drops the connection);
* traps: ``cal?month=N`` (an endless calendar), ``s/SESSION/page`` (a fresh
  session id in the path on every page), ``grow?q=a…`` (an ever-growing query),
  ``self?r=N`` (links to itself with a fresh parameter), ``long`` (links to a
  URL of 3,000 characters);
* links: ``links`` (``javascript:``, ``mailto:``, ``tel:``, ``data:``,
  ``file:``, ``ftp:``, protocol-relative, upper-case scheme, IDN and off-site
  hosts, ``..`` segments, whitespace and entities in hrefs), ``based/``
  (``<base href="sub/">`` with relative links).

Nothing here imports Scrapy.  The server side (slow answers, dropped
connections) is :class:`HostileHandler`; :func:`start_in_thread` starts one.
"""

from __future__ import annotations

import gzip
import socket
import struct
import threading
from html import escape
from http.server import ThreadingHTTPServer

from structcrawl.demo import server as demo_server
from structcrawl.demo.site import DemoSite

HTML = "text/html; charset=utf-8"
_FRAME = ('<html><head><title>{t}</title></head><body><div id="hostile-page"><h1>{t}</h1>'
          '<ul class="out">{links}</ul></div></body></html>')

#: the hostile entry points linked from the home page
ENTRIES = [
    "doc.pdf", "img.png", "data.json", "plain.txt", "blob", "html-as-text",
    "unclosed", "deep", "nul", "frameset", "empty-body", "zero", "latin1-lie", "bom", "meta-lie",
    "big", "bomb", "many-links",
    "chain/5", "loop-a", "rel-redirect", "meta-refresh", "e404", "e410", "e500", "e503", "slow", "reset",
    "cal?month=1", "s/A1B2C3D4E5/page", "grow?q=a", "self?r=0", "long",
    "links", "based/",
]
TRAP_PREFIXES = ("/hostile/cal", "/hostile/s/", "/hostile/grow", "/hostile/self")


def _page(title: str, hrefs: list[str] = ()) -> bytes:
    links = "".join(f'<li><a href="{escape(h)}">{escape(h)}</a></li>' for h in hrefs)
    return _FRAME.format(t=title, links=links).encode("utf-8")


_BOMB = None


def _bomb() -> bytes:
    global _BOMB
    if _BOMB is None:
        _BOMB = gzip.compress(b"<html><body>" + b" " * (64 << 20) + b"</body></html>", compresslevel=9)
    return _BOMB


class HostileSite:
    """A :class:`DemoSite` whose home page also links to hostile pages under ``/hostile/``."""

    def __init__(self, site: DemoSite | None = None, slow_seconds: float = 5.0) -> None:
        self.site = site or DemoSite()
        self.slow_seconds = slow_seconds
        self._session = 0
        self.port = 0  #: set by the server once bound (links to this host spelled other ways)
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.site)

    def truth(self):
        return self.site.truth()

    def write_truth(self, fh, base_url: str = "") -> int:
        return self.site.write_truth(fh, base_url=base_url)

    def _fresh(self) -> int:
        with self._lock:
            self._session += 1
            return self._session

    def render(self, path_qs: str) -> tuple[int, dict[str, str], bytes]:
        if path_qs == "/" or path_qs.startswith("/?"):
            status, headers, body = self.site.render(path_qs)
            extra = "".join(f'<li><a href="/hostile/{e}">{e}</a></li>' for e in ENTRIES)
            body = body.replace(b"</body>", f'<div id="hostile"><ul>{extra}</ul></div></body>'.encode(), 1)
            return status, headers, body
        if not path_qs.startswith("/hostile/"):
            return self.site.render(path_qs)
        return self._hostile(path_qs[len("/hostile/"):])

    def _hostile(self, rest: str) -> tuple[int, dict[str, str], bytes]:  # noqa: C901 - a table of cases
        path, _, query = rest.partition("?")
        ok = lambda body, ctype=HTML: (200, {"Content-Type": ctype}, body)  # noqa: E731
        redirect = lambda to, code=302: (code, {"Location": to, "Content-Type": HTML}, b"")  # noqa: E731
        if path == "doc.pdf":
            return ok(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj<<>>endobj\n%%EOF\n", "application/pdf")
        if path == "img.png":
            return ok(b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + b"\x00" * 17, "image/png")
        if path == "data.json":
            return ok(b'{"html": "<a href=\\"/hostile/never-json\\">x</a>"}', "application/json")
        if path == "plain.txt":
            return ok(b'see <a href="/hostile/never-text">this</a>\n', "text/plain; charset=utf-8")
        if path == "blob":
            return ok(bytes(range(256)) * 4, "application/octet-stream")
        if path == "html-as-text":
            return ok(_page("html served as text", ["/hostile/sniffed"]), "text/plain")
        if path == "unclosed":
            return ok(b"<html><body><div><ul><li><a href='/hostile/u1'>one<li><a href=/hostile/u2>two<p><b><i>")
        if path == "deep":
            return ok(b"<html><body>" + b"<div>" * 5000 + b'<a href="/hostile/deep-end">x</a>' + b"</div>" * 5000
                      + b"</body></html>")
        if path == "nul":
            return ok(b"<html><body>\x00<ul>\x00<li><a href='/hostile/n\x001'>x</a></li></ul>\x00</body></html>")
        if path == "frameset":
            return ok(b'<html><frameset cols="50%,50%"><frame src="/hostile/f1"><frame src="/hostile/f2">'
                      b"</frameset></html>")
        if path in ("f1", "f2"):
            return ok(_page(f"frame {path}", [f"/hostile/to/{path}"]))
        if path == "empty-body":
            return ok(b"<html><head></head><body></body></html>")
        if path == "zero":
            return ok(b"")
        if path == "latin1-lie":
            return ok("<html><body><p>caf\u00e9 \u00fcber</p><a href='/hostile/to/latin1-lie'>on</a>"
                      "</body></html>".encode(), "text/html; charset=iso-8859-1")
        if path == "bom":
            return ok(b"\xef\xbb\xbf" + _page("bom \u00e9t\u00e9", ["/hostile/to/bom"]), "text/html")
        if path == "meta-lie":
            return ok(b'<html><head><meta charset="utf-16"></head><body><a href="/hostile/to/meta-lie">t\xc3\xa9</a>'
                      b"</body></html>", "text/html")
        if path == "big":
            return ok(b"<html><body>" + b"<p>filler filler filler</p>" * 250_000 + b"</body></html>")
        if path == "bomb":
            return 200, {"Content-Type": HTML, "Content-Encoding": "gzip"}, _bomb()
        if path == "many-links":
            return ok(b"<html><body><ul>" + b"".join(b'<li><a href="/hostile/ml/%d">%d</a></li>' % (i, i)
                                                     for i in range(100_000)) + b"</ul></body></html>")
        if path.startswith("chain/"):
            n = int(path[6:] or 0) if path[6:].isdigit() else 0
            return redirect("/about") if n <= 0 else redirect(f"/hostile/chain/{n - 1}")
        if path == "loop-a":
            return redirect("/hostile/loop-b")
        if path == "loop-b":
            return redirect("/hostile/loop-a")
        if path == "rel-redirect":
            return redirect("../contact", 301)
        if path.startswith("to/"):
            return ok(_page(f"reached from {path[3:]}"))
        if path == "meta-refresh":
            return ok(b'<html><head><meta http-equiv="refresh" content="0; url=/about"></head><body></body></html>')
        if path in ("e404", "e410", "e500", "e503"):
            return int(path[1:]), {"Content-Type": HTML}, _page(f"error {path[1:]}")
        if path == "cal":
            month = int(query.split("=", 1)[1]) if query.startswith("month=") and query[6:].isdigit() else 1
            return ok(_page(f"calendar {month}",
                            [f"/hostile/cal?month={month + 1}", f"/hostile/cal?month={max(month - 1, 1)}"]))
        if path.startswith("s/"):
            return ok(_page("session",
                            [f"/hostile/s/{self._fresh():010X}/page", f"/hostile/s/{self._fresh():010X}/other"]))
        if path == "grow":
            q = query.split("=", 1)[1] if "=" in query else "a"
            return ok(_page("grow", [f"/hostile/grow?q={q}a", f"/hostile/grow?q={q}b"]))
        if path == "self":
            return ok(_page("self", [f"/hostile/self?r={self._fresh()}"]))
        if path == "long":
            return ok(_page("long", ["/hostile/too-long?q=" + "x" * 3000]))
        if path == "links":
            hrefs = ["javascript:alert(1)", "mailto:a@b.example", "tel:+100", "data:text/html,<a href=/x>",
                     "file:///etc/passwd", "ftp://127.0.0.1/hostile/ftp",
                     "//127.0.0.1:{port}/hostile/protocol-relative",
                     "HTTP://127.0.0.1:{port}/hostile/upper-scheme", "http://b\u00fccher.example/idn",
                     "http://localhost:{port}/hostile/other-host", "/hostile/x/../dotted", " \n/hostile/white space\t ",
                     "/hostile/entity?a=1&b=2", "/hostile/links#frag"]  # escaped by _page: &amp; in the href
            return ok(_page("links", [h.replace("{port}", str(self.port)) for h in hrefs]))
        if path == "based/":
            body = (b'<html><head><base href="sub/"></head><body><ul class="out">'
                    b'<li><a href="page">p</a></li><li><a href="../up">u</a></li></ul></body></html>')
            return ok(body)
        return 404, {"Content-Type": HTML}, _page("not found")


class HostileHandler(demo_server._Handler):
    """The demo handler plus two answers no ``render`` can give: slow, and dropped half-way."""

    def _answer(self, send_body: bool) -> None:
        target = self.path.split("?", 1)[0]
        if target == "/hostile/slow":
            log = self.server.access_log
            if log is not None:
                log(self.command, self.path, 200)
            self.server.stopping.wait(self.server.site.slow_seconds)  # the client times out first
            try:
                self.send_response(200)
                self.send_header("Content-Type", HTML)
                self.send_header("Content-Length", "30")
                self.end_headers()
                self.wfile.write(b"<html><body>late</body></html>")
            except OSError:
                pass
            self.close_connection = True
            return
        if target == "/hostile/reset":
            log = self.server.access_log
            if log is not None:
                log(self.command, self.path, 200)
            try:
                self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 5000\r\n\r\n<html><bo")
                self.wfile.flush()
                # RST instead of FIN: the connection is reset half-way through the body
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            except OSError:
                pass
            self.close_connection = True
            return
        super()._answer(send_body)


class HostileHTTPServer(demo_server.DemoHTTPServer):
    def __init__(self, site: HostileSite, address, access_log=None) -> None:
        self.stopping = threading.Event()
        self.site = site
        self.access_log = demo_server._as_callback(access_log)
        ThreadingHTTPServer.__init__(self, address, HostileHandler)
        site.port = self.server_address[1]

    def shutdown(self) -> None:
        self.stopping.set()
        super().shutdown()

    def server_close(self) -> None:
        self.stopping.set()  # slow pages end at once
        super().server_close()


def make_server(site: HostileSite, host: str = "127.0.0.1", port: int = 0, access_log=None) -> HostileHTTPServer:
    return HostileHTTPServer(site, (host, port), access_log=access_log)


def start_in_thread(site: HostileSite, host: str = "127.0.0.1", port: int = 0, access_log=None):
    """Start serving ``site`` in a daemon thread; returns ``(server, base_url)``."""
    return demo_server._run_in_thread(make_server(site, host, port, access_log), "hostile-site")


def serve(site: HostileSite, host: str = "127.0.0.1", port: int = 8000, access_log=None) -> None:
    """Serve until interrupted (Ctrl-C); blocking."""
    demo_server._serve_until_interrupted(make_server(site, host, port, access_log),
                                         f"hostile demo site ({len(site)} pages + /hostile/)")
