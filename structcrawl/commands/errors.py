"""The one exception the command modules raise for an expected failure."""

from __future__ import annotations


class CommandError(Exception):
    """An expected failure (bad arguments, unreadable files, unreachable databases): ``main`` prints it as one
    ``structcrawl: error: …`` line on stderr and exits with status 2, never a traceback."""
