"""``structcrawl report MODEL.json``: write a self-contained HTML report of a site model."""

from __future__ import annotations

import argparse
import sys

from structcrawl.commands.errors import CommandError
from structcrawl.report import report_path_for, write_report
from structcrawl.report.harvest import harvest_sentence, load_summary
from structcrawl.report.page import lead_sentence
from structcrawl.sitemodel import ModelFormatError, load_model


def run(args: argparse.Namespace) -> int:
    try:
        document = load_model(args.model).document
    except ModelFormatError as exc:
        raise CommandError(str(exc)) from None
    harvest = None
    if args.harvest:
        try:
            harvest = load_summary(args.harvest)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
    target = args.output or report_path_for(args.model)
    try:
        write_report(document, target, harvest=harvest)
    except OSError as exc:
        raise CommandError(f"could not write the report to {target}: {exc.strerror or exc}") from None
    lead = lead_sentence(document)
    if harvest:
        lead += "\n" + harvest_sentence(harvest, (document.get("crawl") or {}).get("pages_requested"))
    print(f"{lead}\nwrote the report to {target}", file=sys.stderr)
    return 0
