"""The class table printed after a crawl (``structcrawl crawl``, ``structcrawl demo``)."""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from structcrawl.sitemodel import LoadedModel


def _path(url: str) -> str:
    parts = urlsplit(url)
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def class_table(model: LoadedModel, width: int = 48) -> list[str]:
    """Rows ``class  size  sample URL  URL pattern`` of a loaded model."""
    lines = [f"{'class':>5}  {'size':>5}  {'sample URL':<{width}}  URL pattern"]
    lines.append(f"{'-' * 5}  {'-' * 5}  {'-' * width}  {'-' * 11}")
    for cid in sorted(model.classes):
        info = model.classes[cid]
        sample = _path(info.samples[0]) if info.samples else ""
        if len(sample) > width:
            sample = sample[: width - 1] + "…"
        lines.append(f"{cid:>5}  {info.size:>5}  {sample:<{width}}  {info.url_pattern or ''}")
    return lines
