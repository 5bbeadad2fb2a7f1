"""Jobs: creation, the crash-proof lock, listing, and starting afresh.

The lock lives in the job's row: a random owner token, pid, host name and a
heartbeat timestamp that the writer thread refreshes in every transaction (and
at least every ``heartbeat`` seconds when idle).  A lock is **stale** — and
may be taken over — when its heartbeat is older than ``stale_after`` seconds,
or when it was taken on this host by a process that no longer exists (a
kill -9 or a crash is then detected at once, without waiting).  Taking the lock
is a compare-and-set on the token seen (``UPDATE … WHERE lock_token = seen``),
so of two processes racing for a stale lock exactly one wins; and every write
transaction re-checks the token (``UPDATE … WHERE lock_token = mine``), so a
process that lost its lock (paused for longer than ``stale_after``) stops
instead of corrupting the job.
"""

from __future__ import annotations

import datetime as _dt
import os
import secrets
import socket
from dataclasses import dataclass, field
from typing import Any, Mapping

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from structcrawl.store import schema as S
from structcrawl.store.schema import StoreError, as_utc, utcnow

#: Seconds without a heartbeat after which a lock is stale (STRUCTCRAWL_DB_LOCK_TIMEOUT).
DEFAULT_STALE_AFTER = 60.0
#: Seconds between heartbeats of an idle writer.
DEFAULT_HEARTBEAT = 10.0

RUNNING, STOPPED, FINISHED = "running", "stopped", "finished"
#: Close reasons after which a job is finished (anything else, the page and time ceilings
#: too, leaves it resumable).
FINISHED_REASONS = frozenset({"model_stable", "finished"})
#: ``parameters["kind"]`` of a focused-harvest job (structcrawl.store.harvest); structure crawls have none.
HARVEST_KIND = "harvest"
#: How a user starts a job over, in the command line's words and the spider's.
_AFRESH = "`--fresh` (`-a fresh=1` with scrapy crawl)"
#: Parameters that change what the model step does: a resume must use the same ones.
MODEL_PARAMETERS = ("strategy", "batch_size", "dt", "costs", "stability", "check_pages", "recluster", "scope",
                    "refine")


class JobLockedError(StoreError):
    """Another live process crawls this job."""


class JobFinishedError(StoreError):
    """The job is finished: nothing to resume."""


class JobMismatchError(StoreError):
    """The job exists with another start URL or other model parameters."""


class NoSuchJobError(StoreError):
    pass


@dataclass
class JobInfo:
    id: int
    name: str
    seed_url: str
    strategy: str
    parameters: dict[str, Any]
    status: str
    stop_reason: str | None
    crawl: dict[str, Any]
    runs: int
    created_at: _dt.datetime
    updated_at: _dt.datetime
    lock_token: str | None
    lock_pid: int | None
    lock_host: str | None
    lock_heartbeat: _dt.datetime | None
    counts: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_row(cls, row: Any) -> "JobInfo":
        m = row._mapping
        return cls(
            id=m["id"], name=m["name"], seed_url=m["seed_url"], strategy=m["strategy"],
            parameters=dict(m["parameters"] or {}), status=m["status"], stop_reason=m["stop_reason"],
            crawl=dict(m["crawl"] or {}), runs=m["runs"] or 0,
            created_at=as_utc(m["created_at"]), updated_at=as_utc(m["updated_at"]),
            lock_token=m["lock_token"], lock_pid=m["lock_pid"], lock_host=m["lock_host"],
            lock_heartbeat=as_utc(m["lock_heartbeat"]),
        )


def hostname() -> str:
    return socket.gethostname()


def pid_alive(pid: int) -> bool:
    """Is process ``pid`` (on this host) alive?  Zombies count as dead."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
        state = stat[stat.rindex(b")") + 2 : stat.rindex(b")") + 3]
        return state not in (b"Z", b"X")
    except (OSError, ValueError):
        return True


def lock_state(info: JobInfo, stale_after: float, now: _dt.datetime | None = None) -> tuple[str, str]:
    """``("free" | "held" | "stale", description)`` of the job's lock."""
    if not info.lock_token:
        return "free", "not locked"
    now = now or utcnow()
    age = (now - info.lock_heartbeat).total_seconds() if info.lock_heartbeat else float("inf")
    who = f"pid {info.lock_pid} on {info.lock_host}"
    if info.lock_host == hostname() and info.lock_pid is not None:
        if info.lock_pid == os.getpid() or not pid_alive(info.lock_pid):
            return "stale", f"{who}, which is gone"
    if age > stale_after:
        return "stale", f"{who}, no heartbeat for {age:.0f} s"
    return "held", f"{who}, heartbeat {max(0.0, age):.0f} s ago"


def get_job(conn: Connection, name: str) -> JobInfo | None:
    row = conn.execute(sa.select(S.jobs).where(S.jobs.c.name == name)).first()
    return JobInfo.from_row(row) if row is not None else None


def list_jobs(engine: Engine) -> list[JobInfo]:
    """Every job with its page/batch counts, by name."""
    with engine.connect() as conn:
        infos = [JobInfo.from_row(r) for r in conn.execute(sa.select(S.jobs).order_by(S.jobs.c.name))]
        for info in infos:
            info.counts = job_counts(conn, info.id)
    return infos


def job_counts(conn: Connection, job_id: int) -> dict[str, int]:
    def count(table: sa.Table, *where: Any) -> int:
        query = sa.select(sa.func.count()).select_from(table).where(table.c.job_id == job_id, *where)
        return conn.execute(query).scalar()

    b = S.batches
    return {
        "pages": count(S.pages),
        "classes": conn.execute(
            sa.select(sa.func.count(sa.distinct(S.pages.c.class_id))).where(S.pages.c.job_id == job_id)
        ).scalar(),
        "links": count(S.links),
        "failures": count(S.failures),
        "batches": count(b, b.c.state == "completed"),
        "in_flight": count(b, b.c.state == "issued"),
    }


def model_parameters(parameters: Mapping[str, Any]) -> dict[str, Any]:
    return {k: parameters.get(k) for k in MODEL_PARAMETERS}


def _describe(params: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={params[k]!r}" for k in sorted(params))


@dataclass
class Lease:
    """A job whose lock this process holds."""

    job: JobInfo
    token: str
    resumed: bool  #: the job existed and is continued (False: created or started afresh)
    took_over: str | None = None  #: the stale lock taken over (its description), if any


def acquire(
    engine: Engine,
    name: str,
    seed_url: str,
    parameters: Mapping[str, Any],
    *,
    fresh: bool = False,
    stale_after: float = DEFAULT_STALE_AFTER,
) -> Lease:
    """Create the job or take its lock; errors say what to do.

    * a live holder: :class:`JobLockedError`;
    * finished (and not ``fresh``): :class:`JobFinishedError`;
    * another start URL or other model parameters (and not ``fresh``): :class:`JobMismatchError`;
    * ``fresh``: every row of the old job is deleted and it starts over.
    """
    token = secrets.token_hex(16)
    parameters = dict(parameters)
    for _attempt in range(5):
        now = utcnow()
        with engine.connect() as conn:
            info = get_job(conn, name)
        if info is None:
            try:
                with engine.begin() as conn:
                    conn.execute(
                        sa.insert(S.jobs).values(
                            name=name, seed_url=seed_url, strategy=parameters.get("strategy", ""),
                            parameters=parameters, status=RUNNING, stop_reason=None, crawl={}, runs=1,
                            created_at=now, updated_at=now, lock_token=token, lock_pid=os.getpid(),
                            lock_host=hostname(), lock_heartbeat=now,
                        )
                    )
                    created = get_job(conn, name)
            except sa.exc.IntegrityError:
                continue  # created by another process meanwhile: look again
            assert created is not None
            return Lease(created, token, resumed=False)

        state, why = lock_state(info, stale_after, now)
        if state == "held":
            raise JobLockedError(
                f"job {name!r} is locked by a running crawl ({why}); wait for it to end or stop it "
                f"(a crashed crawl's lock is taken over once its process is gone, or after {stale_after:.0f} s "
                "without heartbeat)"
            )
        if not fresh:
            if info.status == FINISHED:
                with engine.connect() as conn:
                    n = job_counts(conn, info.id)["pages"]
                raise JobFinishedError(
                    f"job {name!r} is finished ({info.stop_reason or 'done'}, {n} pages modelled); export its "
                    "model with `structcrawl export`, or crawl it again from scratch with " + _AFRESH
                )
            if info.seed_url != seed_url:
                raise JobMismatchError(
                    f"job {name!r} was started from {info.seed_url}, not {seed_url}; use another job name "
                    "(`--job NAME`; `-a job=NAME` with scrapy crawl) or start it afresh with " + _AFRESH
                )
            old, new = model_parameters(info.parameters), model_parameters(parameters)
            if old != new:
                diff = {k: old[k] for k in old if old[k] != new[k]}
                raise JobMismatchError(
                    f"job {name!r} was started with {_describe(diff)}; resume it with the same parameters "
                    "or start it afresh with " + _AFRESH
                )
        # compare-and-set on the token we saw
        seen = S.jobs.c.lock_token.is_(None) if info.lock_token is None else S.jobs.c.lock_token == info.lock_token
        with engine.begin() as conn:
            values: dict[str, Any] = dict(
                lock_token=token, lock_pid=os.getpid(), lock_host=hostname(), lock_heartbeat=now,
                status=RUNNING, updated_at=now, parameters=parameters,
            )
            if fresh:
                values.update(seed_url=seed_url, strategy=parameters.get("strategy", ""), stop_reason=None,
                              crawl={}, runs=1, created_at=now)
            else:
                values.update(runs=S.jobs.c.runs + 1)
            res = conn.execute(sa.update(S.jobs).where(S.jobs.c.id == info.id, seen).values(**values))
            if res.rowcount != 1:
                continue  # someone else took it first: look again
            if fresh:
                for table in S.JOB_TABLES:
                    conn.execute(sa.delete(table).where(table.c.job_id == info.id))
            taken = get_job(conn, name)
        assert taken is not None
        return Lease(taken, token, resumed=not fresh, took_over=why if state == "stale" else None)
    raise JobLockedError(f"job {name!r}: could not take its lock (another process keeps taking it)")


def release(engine: Engine, job_id: int, token: str, status: str, stop_reason: str | None,
            crawl: Mapping[str, Any] | None = None) -> bool:
    """Set the final status and drop the lock (only if still ours)."""
    now = utcnow()
    values: dict[str, Any] = dict(status=status, stop_reason=stop_reason, updated_at=now,
                                  lock_token=None, lock_pid=None, lock_host=None, lock_heartbeat=None)
    if crawl is not None:
        values["crawl"] = dict(crawl)
    with engine.begin() as conn:
        res = conn.execute(
            sa.update(S.jobs).where(S.jobs.c.id == job_id, S.jobs.c.lock_token == token).values(**values)
        )
    return res.rowcount == 1
