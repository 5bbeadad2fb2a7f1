"""``structcrawl report``: one self-contained HTML page about a site model.

Modules, one concept each:

* :mod:`.names` — class names a person reads, distinguishing paths;
* :mod:`.graph` — the class graph as Graphviz DOT (drawn in the page by the
  vendored viz-js);
* :mod:`.curve` — the learning curve and the stop rule's measure (SVG);
* :mod:`.harvest` — the section of a harvest (from its summary file);
* :mod:`.page` — the HTML page;
* :mod:`.quality` — Q and F* of a model state against a URL ground truth;
* :mod:`.table` — the plain-text class table the crawl commands print.
"""

from __future__ import annotations

import os
from typing import Any, Mapping

from structcrawl.files import atomic_write
from structcrawl.report.curve import curve_svg
from structcrawl.report.graph import graph_dot
from structcrawl.report.names import class_names, distinguishing_paths
from structcrawl.report.page import render_report
from structcrawl.report.quality import quality_point

__all__ = [
    "class_names",
    "curve_svg",
    "distinguishing_paths",
    "graph_dot",
    "quality_point",
    "render_report",
    "report_path_for",
    "write_report",
]


def report_path_for(model_path: str) -> str:
    """Default report file: ``site.model.json`` → ``site.model.html``."""
    base = model_path[:-5] if model_path.endswith(".json") else model_path
    return base + ".html"


def write_report(document: Mapping[str, Any], path: str | os.PathLike[str],
                 harvest: Mapping[str, Any] | None = None) -> None:
    """Write the report of ``document`` (and of a ``harvest`` summary) atomically (temp file + rename;
    mode as the umask gives)."""
    text = render_report(document, harvest=harvest)
    with atomic_write(path, prefix=".report-") as fh:
        fh.write(text)
