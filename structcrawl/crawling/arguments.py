"""The structure spider's arguments (``-a NAME=VALUE``) and settings, checked before anything starts.

``scrapy crawl structure``, ``structcrawl crawl`` and Python callers all go
through :func:`crawl_config`, so a misspelt argument or a bad value gets the
same one-line message everywhere.  No scrapy import: the settings are any
object with Scrapy's ``get``/``getint``/``getfloat``/``getbool``/``getlist``/
``getdict`` readers.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from structcrawl.core.config import ExplorerConfig
from structcrawl.core.urls import normalize_url

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

#: ``-a`` arguments of the structure spider.
KNOWN_ARGUMENTS = ("start_url", "strategy", "max_pages", "batch", "stop", "job", "members", "fresh")
#: Passed to every spider by Scrapy tooling (scrapyd's job id), not by the user.
TOOLING_ARGUMENTS = ("_job",)
STOPS = ("stable", "exhaust")
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


class StartError(SystemExit):
    """The crawl cannot start (bad argument or setting, store refused the job …).

    A ``SystemExit`` (status 2) so that ``scrapy crawl`` ends with the one ERROR
    line already logged and no traceback; ``message`` says what to do.
    """

    def __init__(self, message: str) -> None:
        super().__init__(2)
        self.message = message


def parse_bool(value: Any, what: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError(f"{what} must be true or false, got {value!r}")


def parse_int(value: Any, what: str, minimum: int) -> int:
    try:
        number = int(str(value).strip())
    except ValueError:
        raise ValueError(f"{what} must be an integer, got {value!r}") from None
    if number < minimum:
        raise ValueError(f"{what} must be >= {minimum}, got {number}")
    return number


def check_start_url(value: Any) -> str:
    """The normalised start URL, or ValueError with a message for the user."""
    if not value or not str(value).strip():
        raise ValueError("the start_url spider argument is required, e.g. -a start_url=http://127.0.0.1:8000/")
    text = str(value).strip()
    parts = urlsplit(text)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ValueError(f"start_url must be an absolute http(s) URL, got {text!r}")
    url = normalize_url(text)
    if url is None:
        raise ValueError(f"start_url is not a valid http(s) URL: {text!r}")
    return url


def check_argument_names(arguments: Mapping[str, Any]) -> None:
    """ValueError naming the unknown ``-a`` arguments (and the closest known one) and listing the known ones."""
    unknown = sorted(set(arguments) - set(KNOWN_ARGUMENTS) - set(TOOLING_ARGUMENTS))
    if not unknown:
        return
    hints = []
    for name in unknown:
        close = difflib.get_close_matches(name, KNOWN_ARGUMENTS, n=1)
        hints.append(f"{name!r}" + (f" (did you mean {close[0]}?)" if close else ""))
    raise ValueError(
        f"unknown spider argument{'s' if len(unknown) > 1 else ''} {', '.join(hints)}; "
        f"known: {', '.join(KNOWN_ARGUMENTS)}"
    )


def default_job(start_url: str) -> str:
    """Default job name: the start URL's host[:port], safe as a file name."""
    return urlsplit(start_url).netloc.replace(":", "_") or "structure"


@dataclass(frozen=True)
class CrawlConfig:
    """What one structure crawl is: the explorer's parameters, the crawl's own and the export's."""

    explorer: ExplorerConfig
    stop: str
    max_pages: int
    job: str
    members: bool
    fresh: bool
    model_out: str
    samples: int
    fingerprint_pages: int
    occurrence: float
    field_pages: int  #: member pages per class kept for its fields and records
    trap_pages: int
    max_inflight: int  #: popped URLs not yet in the model, at most

    @property
    def start_url(self) -> str:
        return self.explorer.start_url

    def document_parameters(self) -> dict[str, Any]:
        """The ``parameters`` the model document adds to the explorer's own."""
        scope = self.explorer.to_dict()["scope"]
        return {"stop": self.stop, "max_pages": self.max_pages or None, "scope": scope}

    def store_parameters(self) -> dict[str, Any]:
        """What the job is in the crawl store: the model parameters (a resume must match them) and the export's."""
        return {
            **self.explorer.to_dict(),
            "stop": self.stop,
            "max_pages": self.max_pages,
            "document": {
                "parameters": self.document_parameters(),
                "members": self.members,
                "samples": self.samples,
                "fingerprint_pages": self.fingerprint_pages,
                "occurrence": self.occurrence,
                "field_pages": self.field_pages,
            },
        }


def crawl_config(arguments: Mapping[str, Any], settings: BaseSettings) -> CrawlConfig:
    """Spider arguments over settings; ValueError with a one-line message for the user.

    Also refuses ``JOBDIR``: Scrapy's own resume would restore its request queue
    without the site model (a second run closed with 0 classes and overwrote
    the first run's model); the crawl store resumes both.
    """
    check_argument_names(arguments)
    if settings.get("JOBDIR"):
        raise ValueError(
            "JOBDIR is not supported by the structure spider (Scrapy's queue would resume without the site "
            "model): keep the crawl state with -s STRUCTCRAWL_DB=sqlite:///crawl.db (structcrawl crawl --db) "
            "and run the same command again to resume"
        )
    start_url = check_start_url(arguments.get("start_url"))

    def given(name: str, setting: str) -> Any:
        value = arguments.get(name)
        return settings.get(setting) if value is None else value

    stop = given("stop", "STRUCTCRAWL_STOP")
    if stop not in STOPS:
        raise ValueError(f"stop must be one of {', '.join(STOPS)}, got {stop!r}")
    explorer = ExplorerConfig(
        start_url,
        strategy=given("strategy", "STRUCTCRAWL_STRATEGY"),
        batch_size=parse_int(given("batch", "STRUCTCRAWL_BATCH_SIZE"), "batch", 1),
        dt=settings.getfloat("STRUCTCRAWL_DT"),
        costs={k: _number(v, f"STRUCTCRAWL_COSTS[{k!r}]") for k, v in settings.getdict("STRUCTCRAWL_COSTS").items()},
        stability_window=settings.getint("STRUCTCRAWL_STABILITY_WINDOW"),
        stability_epsilon=settings.getfloat("STRUCTCRAWL_STABILITY_EPSILON"),
        stability_min_pages=settings.getint("STRUCTCRAWL_STABILITY_MIN_PAGES"),
        check_pages=settings.getint("STRUCTCRAWL_CHECK_PAGES"),
        recluster=settings.getbool("STRUCTCRAWL_RECLUSTER"),
        allow_subdomains=settings.getbool("STRUCTCRAWL_ALLOW_SUBDOMAINS"),
        extra_domains=tuple(settings.getlist("STRUCTCRAWL_ALLOWED_DOMAINS")),
    )
    job = str(arguments.get("job") or default_job(start_url))
    inflight = settings.getint("STRUCTCRAWL_MAX_INFLIGHT")
    return CrawlConfig(
        explorer=explorer,
        stop=stop,
        max_pages=parse_int(given("max_pages", "STRUCTCRAWL_MAX_PAGES"), "max_pages", 0),
        job=job,
        members=parse_bool(given("members", "STRUCTCRAWL_EXPORT_MEMBERS"), "members"),
        fresh=parse_bool(arguments.get("fresh") or False, "fresh"),
        model_out=str(settings.get("STRUCTCRAWL_MODEL_OUT") or f"{job}.model.json"),
        samples=settings.getint("STRUCTCRAWL_SAMPLES"),
        fingerprint_pages=settings.getint("STRUCTCRAWL_FINGERPRINT_PAGES"),
        occurrence=settings.getfloat("STRUCTCRAWL_FINGERPRINT_OCCURRENCE"),
        field_pages=parse_int(settings.getint("STRUCTCRAWL_FIELD_PAGES"), "STRUCTCRAWL_FIELD_PAGES", 0),
        trap_pages=parse_int(settings.getint("STRUCTCRAWL_TRAP_PAGES"), "STRUCTCRAWL_TRAP_PAGES", 0),
        max_inflight=inflight if inflight > 0 else 2 * max(1, settings.getint("CONCURRENT_REQUESTS")),
    )


def _number(value: Any, what: str) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a number, got {value!r}") from None
