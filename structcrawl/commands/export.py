"""``structcrawl export``: write the site model JSON of a job stored in a database.

Read-only (it never takes the job's lock): works at any time, also while the
crawl runs (the state of its last commit).
"""

from __future__ import annotations

import argparse
import sys

from structcrawl.commands.errors import CommandError
from structcrawl.commands.jobs import database_url
from structcrawl.sitemodel import dumps, write_model
from structcrawl.store import CrawlStore, StoreError


def run(args: argparse.Namespace) -> int:
    try:
        store = CrawlStore(database_url(args), create=False)
        try:
            info = store.job(args.job)
            document = store.export_document(info.name, members=args.members)
        finally:
            store.dispose()
    except StoreError as exc:
        raise CommandError(str(exc)) from None
    target = args.output or f"{info.name}.model.json"
    if target == "-":
        sys.stdout.write(dumps(document))
        return 0
    try:
        write_model(document, target)
    except OSError as exc:
        raise CommandError(f"could not write the site model to {target}: {exc.strerror or exc}") from None
    crawl = document["crawl"]
    print(
        f"wrote the site model of job {crawl.get('job')!r} ({len(document['classes'])} classes, "
        f"{crawl['pages_modelled']} pages modelled, stop reason {crawl.get('stop_reason')}) to {target}",
        file=sys.stderr,
    )
    return 0
