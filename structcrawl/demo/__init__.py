"""The built-in demo site: a deterministic, template-generated bookshop with ground truth.

``DemoSite`` (in :mod:`structcrawl.demo.site`) generates every page on request from
``(pages, seed)``; :mod:`structcrawl.demo.server` serves it over HTTP on a loopback
port.  ``structcrawl demo-site`` is the command-line front end.
"""

from structcrawl.demo.site import CLASSES, DemoSite

__all__ = ["CLASSES", "DemoSite", "serve", "start_in_thread"]


def __getattr__(name: str):  # lazy: the server module is only needed when serving
    if name in ("serve", "start_in_thread", "make_server", "DemoHTTPServer"):
        from structcrawl.demo import server

        return getattr(server, name)
    raise AttributeError(name)
