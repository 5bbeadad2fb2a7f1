"""``structcrawl jobs`` and ``structcrawl export``: reading a crawl store from the command line.

Both only read (they never take a job's lock), so they work while a crawl is
running: SQLite is in WAL mode and PostgreSQL readers never block writers.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from structcrawl.store import CrawlStore, lock_state
from structcrawl.store.jobs import DEFAULT_STALE_AFTER, JobInfo


def _when(value: Any) -> str:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ") if value is not None else "-"


def _lock(info: JobInfo) -> str:
    state, why = lock_state(info, DEFAULT_STALE_AFTER)
    if state == "free":
        return "-"
    return f"{why}{' (stale)' if state == 'stale' else ''}"


def job_record(info: JobInfo) -> dict[str, Any]:
    return {
        "job": info.name,
        "status": info.status,
        "stop_reason": info.stop_reason,
        "start_url": info.seed_url,
        "strategy": info.strategy,
        "runs": info.runs,
        "pages": info.counts.get("pages", 0),
        "classes": info.counts.get("classes", 0),
        "links": info.counts.get("links", 0),
        "failures": info.counts.get("failures", 0),
        "batches": info.counts.get("batches", 0),
        "in_flight": info.counts.get("in_flight", 0),
        "created": _when(info.created_at),
        "updated": _when(info.updated_at),
        "lock": None if _lock(info) == "-" else _lock(info),
    }


def run_jobs(db: str, as_json: bool = False, out=None) -> int:
    """List the jobs of a store, one line each (or JSON lines)."""
    out = out or sys.stdout
    store = CrawlStore(db, create=False)
    try:
        infos = store.jobs()
    finally:
        store.dispose()
    records = [job_record(i) for i in infos]
    if as_json:
        for rec in records:
            out.write(json.dumps(rec, sort_keys=True) + "\n")
        return 0
    if not records:
        out.write("no jobs\n")
        return 0
    header = ("JOB", "STATUS", "REASON", "PAGES", "CLASSES", "BATCHES", "IN FLIGHT", "RUNS", "UPDATED", "START URL", "LOCK")
    rows = [
        (r["job"], r["status"], r["stop_reason"] or "-", str(r["pages"]), str(r["classes"]), str(r["batches"]),
         str(r["in_flight"]), str(r["runs"]), r["updated"], r["start_url"], r["lock"] or "-")
        for r in records
    ]
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(header)]
    for row in (header, *rows):
        out.write("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() + "\n")
    return 0


def run_export(db: str, job: str | None, output: str | None, members: bool | None = None) -> tuple[str, dict]:
    """Write the site model of a stored job; returns (where, document)."""
    from structcrawl.sitemodel import dumps, write_model

    store = CrawlStore(db, create=False)
    try:
        info = store.job(job)
        document = store.export_document(info.name, members=members)
    finally:
        store.dispose()
    target = output or f"{info.name}.model.json"
    if target == "-":
        sys.stdout.write(dumps(document))
    else:
        write_model(document, target)
    return target, document
