"""robots.txt is obeyed by every request, also those that wait while it is fetched (structcrawl.crawling.robots)."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler

import pytest
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy.settings import Settings

import helpers
from structcrawl.crawling.extensions import StructureLogStats, install_defaults
from structcrawl.crawling.robots import SharedRobotsTxtMiddleware

#: Requests in flight while robots.txt is fetched: Scrapy 2.19 let all but the first two through.
WAITING = 12

SPIDER = f'''
import scrapy

from structcrawl.crawling.extensions import StructureLogStats, install_defaults


class Many(scrapy.Spider):
    """Starts with {WAITING} disallowed URLs at once, as a harvest worker joining a shared queue takes them."""

    name = "many"

    @classmethod
    def update_settings(cls, settings):
        super().update_settings(settings)
        install_defaults(settings, StructureLogStats)

    async def start(self):
        for n in range({WAITING}):
            yield scrapy.Request(f"{{self.base}}/private/{{n}}")
        yield scrapy.Request(f"{{self.base}}/open")

    def parse(self, response):
        return None
'''


class _Site(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    paths: list[str] = []

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802
        self.paths.append(self.path)
        body = b"User-agent: *\nDisallow: /private\n" if self.path == "/robots.txt" else b"<html>page</html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/plain" if self.path == "/robots.txt" else "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture()
def site():
    _Site.paths = []
    with helpers.serving_handler(_Site) as base:
        yield base, _Site.paths


def test_requests_waiting_for_robots_txt_obey_it(site, tmp_path):
    base, paths = site
    spider = tmp_path / "many.py"
    spider.write_text(SPIDER, encoding="utf-8")
    res = helpers.run([helpers.SCRAPY, "runspider", str(spider), "-a", f"base={base}", *helpers.QUIET])
    assert res.returncode == 0, res.stderr[-3000:]
    assert "/open" in paths  # the crawl ran
    assert not [p for p in paths if p.startswith("/private")], paths
    assert f"'robotstxt/forbidden': {WAITING}" in res.stderr


def test_installed_in_place_of_scrapys_unless_a_project_set_it():
    settings = Settings()
    install_defaults(settings, StructureLogStats)
    middlewares = settings.getdict("DOWNLOADER_MIDDLEWARES")
    assert middlewares[SharedRobotsTxtMiddleware] == 100
    assert middlewares[RobotsTxtMiddleware] is None
    own = Settings({"DOWNLOADER_MIDDLEWARES": {"scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None}})
    install_defaults(own, StructureLogStats)
    assert SharedRobotsTxtMiddleware not in own.getdict("DOWNLOADER_MIDDLEWARES")  # robots.txt stays off
