"""Scrapy settings of a structcrawl project, with every ``STRUCTCRAWL_*`` default.

``settings/__init__.py`` (the module ``scrapy.cfg`` points at) imports this
module, and ``structcrawl crawl`` / ``structcrawl demo`` load it directly, so
``scrapy crawl structure`` inside the project and ``structcrawl crawl`` from
anywhere run with the same settings.  Override any of them with
``-s NAME=VALUE`` on either command line.

Every ``STRUCTCRAWL_*`` default is written here and nowhere else (the model
parameters' defaults come from :class:`~structcrawl.core.config.ExplorerConfig`,
the export's from :mod:`structcrawl.sitemodel`, so each value has one home);
code reads them plainly (``settings.getint("STRUCTCRAWL_BATCH_SIZE")``).  The
``structure`` spider adds :data:`STRUCTCRAWL_DEFAULTS` at Scrapy's ``default``
priority (``update_settings``), so it also works from a Scrapy project whose
settings module knows nothing about structcrawl.
"""

from __future__ import annotations

from scrapy.linkextractors import IGNORED_EXTENSIONS

from structcrawl.core.config import ExplorerConfig
from structcrawl.core.model import FINGERPRINT_OCCURRENCE
from structcrawl.sitemodel import DEFAULT_FIELD_PAGES, DEFAULT_FINGERPRINT_PAGES, DEFAULT_SAMPLES

# -- Scrapy ------------------------------------------------------------------
BOT_NAME = "structcrawl"
SPIDER_MODULES = ["structcrawl.spiders"]
NEWSPIDER_MODULE = "structcrawl.spiders"

#: Polite by default: robots.txt is obeyed (``-s ROBOTSTXT_OBEY=False`` to ignore it).
ROBOTSTXT_OBEY = True
#: Scrapy's own concurrency defaults, spelled out; AutoThrottle is off unless
#: the user turns it on (``-s AUTOTHROTTLE_ENABLED=True``).
CONCURRENT_REQUESTS = 16
CONCURRENT_REQUESTS_PER_DOMAIN = 8
#: Huge pages are not worth modelling: abort downloads above 16 MiB (the
#: page is then recorded as failed), warn above 4 MiB.
DOWNLOAD_MAXSIZE = 16 * 1024 * 1024
DOWNLOAD_WARNSIZE = 4 * 1024 * 1024
#: Longer URLs are not fetched (Scrapy's default, spelled out): the structure
#: spider applies it to every URL the frontier hands out (``failed/url_too_long``);
#: Scrapy's own UrlLengthMiddleware only sees requests returned by callbacks.
URLLENGTH_LIMIT = 2083
LOG_LEVEL = "INFO"
#: No code-execution back doors into a crawler that talks to arbitrary sites
#: (Scrapy's telnet console and remote-control HTTP server); turn them on
#: with -s when you need them.
TELNETCONSOLE_ENABLED = False
REMOTE_CONTROL_ENABLED = False
FEED_EXPORT_ENCODING = "utf-8"
#: CSV feeds write nested item values (the harvest's ``fields`` and ``records``) as JSON cells,
#: not Python reprs (:mod:`structcrawl.crawling.exporters`).
FEED_EXPORTERS = {"csv": "structcrawl.crawling.exporters.JsonCellCsvItemExporter"}

#: The periodic structure log line and the ``structcrawl/…`` stats
#: (the spider adds it too when a project's settings lack it).
EXTENSIONS = {
    "structcrawl.crawling.extensions.StructureLogStats": 500,
}

# -- structcrawl ---------------------------------------------------------------
#: Where the site model JSON is written when the crawl closes; None means
#: ``<job>.model.json`` in the current directory (job: the ``job`` spider
#: argument, by default the start URL's host, ``:`` replaced by ``_``).
STRUCTCRAWL_MODEL_OUT = None
#: Also export every class's member URLs (``-a members=true`` does the same).
STRUCTCRAWL_EXPORT_MEMBERS = False

#: Link-collection priority: ``densest`` or ``sparsest`` (``-a strategy=``).
STRUCTCRAWL_STRATEGY = ExplorerConfig.strategy
#: Most URLs fetched per link collection per model update, Crescenzi et al.'s n (``-a batch=``).
STRUCTCRAWL_BATCH_SIZE = ExplorerConfig.batch_size
#: ``stable``: close with reason ``model_stable`` once the stability rule fires;
#: ``exhaust``: keep going until the frontier is empty (``-a stop=``).
STRUCTCRAWL_STOP = "stable"
#: Page ceiling: most pages requested by the spider over all runs of a job (0:
#: no limit); ``-a max_pages=``.  A batch that would cross it is not fetched;
#: the crawl closes with reason ``max_pages`` and the job stays resumable: run
#: it again with a higher ceiling to go on.  Scrapy's CLOSESPIDER_PAGECOUNT
#: works as well (responses of this run; reason ``closespider_pagecount``).
STRUCTCRAWL_MAX_PAGES = 0
#: Wall-time ceiling: Scrapy's, in seconds of this run (0: none; Scrapy's
#: default, spelled out).  The crawl closes with reason ``closespider_timeout``,
#: the model is written and the job stays resumable.
CLOSESPIDER_TIMEOUT = 0
#: Candidate-selection distance threshold (Crescenzi et al. footnote 5).
STRUCTCRAWL_DT = ExplorerConfig.dt
#: MDL code weights, overrides of ``structcrawl.core.model.Costs`` fields
#: (e.g. ``{"c_i": 0.8}``); missing keys keep the core's defaults.
STRUCTCRAWL_COSTS = {}

#: Stability rule: every 25 new pages the model of the previous check predicts
#: their classes; stable after WINDOW checks in a row where at most EPSILON of
#: the new pages went elsewhere and at most EPSILON of the earlier pages moved;
#: not before MIN_PAGES pages are modelled.
STRUCTCRAWL_STABILITY_WINDOW = ExplorerConfig.stability_window
STRUCTCRAWL_STABILITY_EPSILON = ExplorerConfig.stability_epsilon
STRUCTCRAWL_STABILITY_MIN_PAGES = ExplorerConfig.stability_min_pages
#: New pages modelled between two checks of the model's predictions.
STRUCTCRAWL_CHECK_PAGES = ExplorerConfig.check_pages
#: Re-cluster every modelled page at each check (structcrawl.core.recluster); off by default.
STRUCTCRAWL_RECLUSTER = ExplorerConfig.recluster

#: Scope: the start URL's host only, unless subdomains of it (and of the extra
#: domains) are allowed; extra host names may be listed.
STRUCTCRAWL_ALLOW_SUBDOMAINS = ExplorerConfig.allow_subdomains
STRUCTCRAWL_ALLOWED_DOMAINS = []

#: Most URLs handed out by the frontier but not yet taken into the model
#: (requested, downloading, or waiting for the rest of their batch).  0 means
#: 2 × CONCURRENT_REQUESTS.  Larger keeps the downloader busier; smaller makes
#: the frontier's choices follow the model more closely.
STRUCTCRAWL_MAX_INFLIGHT = 0

#: Spider traps (``structcrawl.core.traps``): once this many pages of one URL shape
#: (host, path with digit-holding segments generalised, query keys) each linked
#: to fresh URLs of that shape, and no URL of it was linked from two pages, the
#: URLs of that shape found only on such pages are not fetched
#: (``failed/trap``).  Session ids in the path, ever-growing query strings and
#: pages linking to themselves with a fresh parameter end there; pagers,
#: related-item links and menus link URLs twice and never do.  0 switches it off.
STRUCTCRAWL_TRAP_PAGES = 10
#: Links whose path ends in one of these extensions are not fetched by either spider
#: (``failed/ignored_extension``): the archives, images, audio, video, office documents and PDFs
#: Scrapy's LinkExtractor ignores by default, as a CrawlSpider does; they still count among the
#: page's links.  A list or a comma-separated string; empty fetches them (and skips them as non-HTML).
STRUCTCRAWL_IGNORED_EXTENSIONS = list(IGNORED_EXTENSIONS)

#: Seconds between the periodic "Structure: …" log lines (0 disables them):
#: short, so that a user sees the crawl move within seconds, not a minute.
STRUCTCRAWL_LOGSTATS_INTERVAL = 10.0

#: Export: sample URLs per class, the member tag-path sets kept per class for
#: fingerprints and samples (bounded memory), and the fingerprint occurrence
#: threshold (UXClust §3.3).
STRUCTCRAWL_SAMPLES = DEFAULT_SAMPLES
STRUCTCRAWL_FINGERPRINT_PAGES = DEFAULT_FINGERPRINT_PAGES
STRUCTCRAWL_FINGERPRINT_OCCURRENCE = FINGERPRINT_OCCURRENCE
#: Member pages per class whose HTML is kept (in memory, and in the crawl store
#: with STRUCTCRAWL_DB) to find the class's fields and records for the model
#: (docs/model-format.md); 0 keeps none and exports no fields.
STRUCTCRAWL_FIELD_PAGES = DEFAULT_FIELD_PAGES

#: Crawl state in a database (issue #5): a SQLAlchemy URL (``sqlite:///shop.db``,
#: a bare file path meaning a SQLite file, or ``postgresql+psycopg://user@host/db``).
#: The crawl is then the job ``-a job=NAME`` (default the start URL's host) of
#: that database: stop it any way you like and the same command resumes it;
#: ``structcrawl export --db URL`` writes its model.  None: nothing is stored.
STRUCTCRAWL_DB = None
#: Seconds without a heartbeat after which a job's lock is stale and may be
#: taken over (a lock whose process is gone on this host is taken over at once).
STRUCTCRAWL_DB_LOCK_TIMEOUT = 60.0
#: Seconds between heartbeats of an idle crawl (every write refreshes it too).
STRUCTCRAWL_DB_HEARTBEAT = 10.0
#: Most operations (about two per batch) queued for the store's writer thread:
#: beyond it no new batch is handed out until the writer catches up, so a slow
#: database bounds memory instead of letting the queue grow.
STRUCTCRAWL_DB_MAX_BACKLOG = 1000
#: A transaction the database refuses (connection lost, disk or lock error) is
#: retried this many times, 0.5 s after the first failure and doubling (15.5 s
#: in all for 5); then the crawl closes with reason ``store_error`` and the job
#: stays at its last commit: run the same command again to resume it.
STRUCTCRAWL_DB_RETRIES = 5

#: Focused harvest (``scrapy crawl harvest``, ``structcrawl harvest``): pages fetched to explore link
#: collections the model never saw, or pages that fit no class, and to re-check skipped collections once
#: nothing is left to fetch — at most EXPLORE_MIN pages plus this share of the pages fetched
#: (structcrawl.analysis.harvestplan).
STRUCTCRAWL_HARVEST_EXPLORE = 0.05
STRUCTCRAWL_HARVEST_EXPLORE_MIN = 10
#: Put the page body (text) into each harvested item.
STRUCTCRAWL_HARVEST_BODY = False
#: Write the harvest's figures per class (targets harvested and estimated, pages fetched, requests)
#: to this JSON file when it closes, for ``structcrawl report MODEL --harvest FILE`` (None: not written).
STRUCTCRAWL_HARVEST_SUMMARY = None
#: A harvest with a store (STRUCTCRAWL_DB) that holds its model's structure crawl reads the pages that crawl
#: fetched from the store instead of fetching them again, but for the target pages (an item is a fresh
#: fetch).  Turn it off when the site changed since the structure crawl (new links on its listings).
STRUCTCRAWL_HARVEST_REUSE = True

#: Scale-out (issue 15): with ``REDIS_URL`` set, the harvest spider is one worker of a harvest shared on
#: Redis by scrapy-redis, its items and state in PostgreSQL (STRUCTCRAWL_DB).  These scrapy-redis settings
#: are installed then (a ``-s`` of the same name wins): the leasing scheduler and queue
#: (structcrawl.crawling.distributed), JSON rather than pickle in Redis (a Redis others reach must not
#: run code here), the queue kept when a worker stops, one queue and dupefilter per harvest job.
STRUCTCRAWL_REDIS_SCHEDULER = {
    "SCHEDULER": "structcrawl.crawling.distributed.LeasingScheduler",
    "SCHEDULER_QUEUE_CLASS": "structcrawl.crawling.leasequeue.LeasedPriorityQueue",
    "SCHEDULER_SERIALIZER": "structcrawl.crawling.redisjson",
    "SCHEDULER_PERSIST": True,
    "SCHEDULER_QUEUE_KEY": "structcrawl:%(job)s:requests",
    "SCHEDULER_DUPEFILTER_KEY": "structcrawl:%(job)s:dupefilter",
    "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
}
#: Seconds a worker's heartbeat in Redis lives (renewed every third of it): a worker silent that long is
#: dead, and the requests it had taken are handed out again.
STRUCTCRAWL_WORKER_TTL = 10.0
#: Seconds a worker keeps retrying a Redis that went away (a restart) before it gives up.
STRUCTCRAWL_REDIS_WAIT = 60.0

#: Every STRUCTCRAWL_* setting with its default (the spider's ``update_settings``
#: adds them at ``default`` priority).
STRUCTCRAWL_DEFAULTS = {
    name: value for name, value in dict(globals()).items()
    if name.startswith("STRUCTCRAWL_") and name != "STRUCTCRAWL_DEFAULTS"
}
