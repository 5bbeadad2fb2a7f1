"""``structcrawl jobs``: list the crawl jobs of a database and their state.

Read-only (it never takes a job's lock), so it works while a crawl is running:
SQLite is in WAL mode and PostgreSQL readers never block writers.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import IO, Any

from structcrawl.commands.errors import CommandError
from structcrawl.store import DEFAULT_STALE_AFTER, CrawlStore, JobInfo, StoreError, lock_state


def database_url(args: argparse.Namespace) -> str:
    """``--db``, else ``$STRUCTCRAWL_DB`` (the store commands: jobs, export, cluster)."""
    db = args.db or os.environ.get("STRUCTCRAWL_DB")
    if not db:
        raise CommandError("no database: give --db URL (or set STRUCTCRAWL_DB)")
    return db


def _when(value: Any) -> str:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ") if value is not None else "-"


def _lock(info: JobInfo) -> str | None:
    state, why = lock_state(info, DEFAULT_STALE_AFTER)
    if state == "free":
        return None
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
        "lock": _lock(info),
    }


def write_jobs(records: list[dict[str, Any]], out: IO[str], as_json: bool = False) -> None:
    """The job records as a table, one line each (or as JSON lines)."""
    if as_json:
        for rec in records:
            out.write(json.dumps(rec, sort_keys=True) + "\n")
        return
    if not records:
        out.write("no jobs\n")
        return
    header = ("JOB", "STATUS", "REASON", "PAGES", "CLASSES", "BATCHES", "IN FLIGHT", "RUNS", "UPDATED", "START URL",
              "LOCK")
    rows = [
        (r["job"], r["status"], r["stop_reason"] or "-", str(r["pages"]), str(r["classes"]), str(r["batches"]),
         str(r["in_flight"]), str(r["runs"]), r["updated"], r["start_url"], r["lock"] or "-")
        for r in records
    ]
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(header)]
    for row in (header, *rows):
        out.write("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() + "\n")


def run(args: argparse.Namespace) -> int:
    try:
        store = CrawlStore(database_url(args), create=False)
        try:
            infos = store.jobs()
        finally:
            store.dispose()
    except StoreError as exc:
        raise CommandError(str(exc)) from None
    write_jobs([job_record(i) for i in infos], sys.stdout, as_json=args.json)
    return 0
