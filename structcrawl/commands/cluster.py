"""``structcrawl cluster``: UXClust or Vertex's shingle clustering over a stored crawl
(:mod:`structcrawl.store.cluster`), the clusters JSON written atomically, a progress display on stderr and a
summary table."""

from __future__ import annotations

import argparse
import sys
import time
from typing import IO

from structcrawl.analysis.shingles import ALIKE, SHINGLE_PATHS
from structcrawl.analysis.uxclust import Parameters
from structcrawl.commands.errors import CommandError
from structcrawl.commands.jobs import database_url
from structcrawl.core.model import FINGERPRINT_SIMILARITY
from structcrawl.files import atomic_write
from structcrawl.store import StoreError
from structcrawl.store.cluster import (
    MemberReader,
    NoProgress,
    Progress,
    StoredClustering,
    StoredShingles,
    cluster_store,
    shingle_cluster_store,
    shingles_document,
    write_document,
    write_with_members,
)


class ProgressDisplay:
    """Stage progress on stderr (a :class:`structcrawl.store.cluster.Progress`): a bar redrawn in place on a
    terminal, plain lines otherwise."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self._last = 0.0
        self._stage = ""

    def stage(self, name: str) -> None:
        self._end_bar()
        self._stage = name
        self.stream.write(f"{name} …\n" if not self.tty else f"{name} …")
        self.stream.flush()

    def advance(self, done: int, total: int) -> None:
        """``done`` of ``total`` items of the current stage (lines every 10 %, or a bar)."""
        if total <= 0:
            return
        now = time.monotonic()
        if self.tty:
            if now - self._last < 0.1 and done < total:
                return
            width = 30
            filled = width * done // total
            self.stream.write(f"\r{self._stage} [{'#' * filled}{'.' * (width - filled)}] {done:,}/{total:,}")
        else:
            step = max(1, total // 10)
            if done % step and done != total:
                return
            self.stream.write(f"{self._stage}: {done:,}/{total:,}\n")
        self._last = now
        self.stream.flush()

    def _end_bar(self) -> None:
        if self.tty and self._stage:
            self.stream.write("\n")

    def done(self) -> None:
        self._end_bar()
        self._stage = ""


def run_cluster(db: str, job: str | None, params: Parameters, group_by: str, output: str | None, members: bool,
                progress: Progress) -> tuple[StoredClustering, str]:
    """Cluster a stored job and write the clusters JSON to ``output`` (``-``: stdout) atomically; the
    clustering and where it was written (default ``<job>.clusters.json``)."""
    targets: list[str] = []

    def write(reader: MemberReader | None, stored: StoredClustering) -> None:
        target = output or f"{stored.job}.clusters.json"
        targets.append(target)
        if target == "-":
            write_document(sys.stdout, stored, reader)
            return
        with atomic_write(target, prefix=".clusters-") as fh:
            write_document(fh, stored, reader)

    if members:
        stored = cluster_store(db, job, params, group_by, progress,
                               members_to=lambda reader: write(reader, reader.stored))
    else:
        stored = cluster_store(db, job, params, group_by, progress)
        write(None, stored)
    return stored, targets[0]


def summary(stored: StoredClustering, output: str) -> str:
    """The summary table: one row per cluster, the unclustered bucket, totals and timings; ``output``: where
    the clusters JSON went."""
    r = stored.result
    total = r.pages or 1
    rows = [("CLUSTER", "PAGES", "SHARE", "GROUPS", "SAMPLE URL")]
    for c in r.clusters:
        rows.append((str(c.id), f"{c.size:,}", f"{c.size / total:.1%}", str(len(c.xpaths)), c.samples[0]))
    rows.append(("unclustered", f"{r.unclustered:,}", f"{r.unclustered / total:.1%}",
                 str(r.groups - r.groups_kept), "-"))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = ["  ".join([*(cell.rjust(w) if i in (1, 2, 3) else cell.ljust(w)
                         for i, (cell, w) in enumerate(zip(row[:4], widths))), row[4]]).rstrip() for row in rows]
    elapsed = sum(stored.seconds.values())
    lines.append(
        f"job {stored.job!r}: {r.pages:,} pages, {len(r.clusters)} clusters from {r.groups_kept} of {r.groups} "
        f"inbound-{stored.group_by} groups (cut-off {r.cutoff}), {r.unclustered:,} unclustered; "
        f"{elapsed:.1f} s ({r.pages / elapsed if elapsed else 0:,.0f} pages/s: "
        f"{', '.join(f'{stage} {t:.1f} s' for stage, t in stored.seconds.items())}); written to {output}")
    return "\n".join(lines)


def run_shingles(db: str, job: str | None, cutoff: int | None, samples: int, occurrence: float, seed: int,
                 length: int, output: str | None, members: bool, progress: Progress,
                 similarity: float = ALIKE) -> tuple[StoredShingles, str]:
    """Vertex's shingle clustering of a stored job, its clusters JSON written like :func:`run_cluster`'s."""
    stored = shingle_cluster_store(db, job, cutoff, samples, occurrence, seed, members, progress, length, similarity)
    doc, lists = shingles_document(stored)
    target = output or f"{stored.job}.clusters.json"
    if target == "-":
        write_with_members(sys.stdout, doc, lists)
    else:
        with atomic_write(target, prefix=".clusters-") as fh:
            write_with_members(fh, doc, lists)
    return stored, target


def shingles_summary(stored: StoredShingles, output: str) -> str:
    """The summary table of a shingle clustering: one row per cluster (its masked signature), the unclustered."""
    r = stored.result
    total = r.pages or 1
    rows = [("CLUSTER", "PAGES", "SHARE", "SIGNATURE", "SAMPLE URL")]
    for c in r.clusters:
        rows.append((str(c.id), f"{c.size:,}", f"{c.size / total:.1%}", c.signature, stored.sample_urls[c.id][0]))
    rows.append(("unclustered", f"{r.unclustered:,}", f"{r.unclustered / total:.1%}", "-", "-"))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = ["  ".join([*(cell.rjust(w) if i in (1, 2) else cell.ljust(w)
                         for i, (cell, w) in enumerate(zip(row[:4], widths))), row[4]]).rstrip() for row in rows]
    elapsed = sum(stored.seconds.values())
    lines.append(
        f"job {stored.job!r}: {r.pages:,} pages, {len(r.clusters)} clusters (shingle signatures of "
        f"{stored.tagsets:,} tag-path sets, {r.signatures:,} distinct; {r.kept:,} of {r.candidates:,} masked "
        f"vectors kept, cut-off {r.cutoff}), {r.unclustered:,} unclustered; "
        f"{elapsed:.1f} s ({r.pages / elapsed if elapsed else 0:,.0f} pages/s: "
        f"{', '.join(f'{stage} {t:.1f} s' for stage, t in stored.seconds.items())}); written to {output}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    try:
        params = Parameters(cutoff=args.cutoff, samples=args.samples, occurrence=args.occurrence,
                            similarity=FINGERPRINT_SIMILARITY if args.similarity is None else args.similarity,
                            seed=args.seed)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    length = SHINGLE_PATHS if args.shingle is None else args.shingle
    if length < 1:
        raise CommandError(f"--shingle must be >= 1, got {length}")
    progress = NoProgress() if args.quiet else ProgressDisplay()
    try:
        if args.method == "shingles":
            shingles, target = run_shingles(database_url(args), args.job, args.cutoff, args.samples,
                                            args.occurrence, args.seed, length, args.output, args.members,
                                            progress, ALIKE if args.similarity is None else args.similarity)
            text = shingles_summary(shingles, target)
        else:
            stored, target = run_cluster(database_url(args), args.job, params, args.group_by, args.output,
                                         args.members, progress)
            text = summary(stored, target)
    except StoreError as exc:
        raise CommandError(str(exc)) from None
    except OSError as exc:
        raise CommandError(f"could not write the clusters to {args.output}: {exc.strerror or exc}") from None
    print(text, file=sys.stderr if target == "-" else sys.stdout)
    return 0
