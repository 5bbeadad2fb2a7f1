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
from structcrawl.store.harvest import KIND as HARVEST_KIND
from structcrawl.store.harvest import harvest_counts
from structcrawl.store.workers import WorkerInfo, job_workers


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


def worker_record(worker: WorkerInfo) -> dict[str, Any]:
    return {
        "worker": worker.worker,
        "host": worker.host,
        "pid": worker.pid,
        "alive": worker.alive(DEFAULT_STALE_AFTER),
        "status": worker.status,
        "stop_reason": worker.stop_reason,
        "pages": worker.pages,
        "items": worker.items,
        "started": _when(worker.started_at),
        "heartbeat": _when(worker.heartbeat),
    }


def job_record(info: JobInfo, workers: list[WorkerInfo] | None = None) -> dict[str, Any]:
    record = {
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
    if info.strategy == HARVEST_KIND:
        # a harvest has no classes or batches of its own: its figures are pages fetched and items
        record["items"] = info.counts.get("items", 0)
    if workers:  # a harvest shared on Redis (structcrawl.store.workers)
        record["workers"] = [worker_record(w) for w in workers]
        record["pages"] = sum(w["pages"] for w in record["workers"])
        record["items"] = sum(w["items"] for w in record["workers"])
    return record


def write_jobs(records: list[dict[str, Any]], out: IO[str], as_json: bool = False) -> None:
    """The job records as a table, one line each (or as JSON lines)."""
    if as_json:
        for rec in records:
            out.write(json.dumps(rec, sort_keys=True) + "\n")
        return
    if not records:
        out.write("no jobs\n")
        return
    header = ("JOB", "KIND", "STATUS", "REASON", "PAGES", "CLASSES", "ITEMS", "BATCHES", "IN FLIGHT", "RUNS",
              "UPDATED", "START URL", "LOCK")
    rows = []
    for r in records:
        harvest = r["strategy"] == HARVEST_KIND
        rows.append((
            r["job"], "harvest" if harvest else "structure", r["status"], r["stop_reason"] or "-", str(r["pages"]),
            "-" if harvest else str(r["classes"]), str(r["items"]) if harvest else "-",
            "-" if harvest else str(r["batches"]),
            # a finished job's unanswered batches were dropped at its stop, not in flight
            "-" if harvest or r["status"] == "finished" else str(r["in_flight"]), str(r["runs"]), r["updated"],
            r["start_url"], r["lock"] or "-"))
    _table(out, header, rows)
    for r in records:
        if r.get("workers"):
            out.write(f"\nworkers of {r['job']}:\n")
            _table(out, ("WORKER", "ALIVE", "STATUS", "PAGES", "ITEMS", "LAST HEARTBEAT", "STARTED"),
                   [(w["worker"], "yes" if w["alive"] else "no", w["status"], str(w["pages"]), str(w["items"]),
                     w["heartbeat"], w["started"]) for w in r["workers"]])


def _table(out: IO[str], header: tuple[str, ...], rows: list[tuple[str, ...]]) -> None:
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(header)]
    for row in (header, *rows):
        out.write("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() + "\n")


def run(args: argparse.Namespace) -> int:
    try:
        store = CrawlStore(database_url(args), create=False)
        try:
            infos = store.jobs()
            with store.engine.connect() as conn:
                workers = {info.id: job_workers(conn, info.id) for info in infos}
                for info in infos:
                    if info.strategy == HARVEST_KIND and not workers[info.id]:
                        info.counts = harvest_counts(conn, info.id)
        finally:
            store.dispose()
    except StoreError as exc:
        raise CommandError(str(exc)) from None
    write_jobs([job_record(i, workers[i.id]) for i in infos], sys.stdout, as_json=args.json)
    return 0
