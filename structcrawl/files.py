"""Writing the files structcrawl produces (site model, clusters JSON, report): atomically, with the mode the
umask gives, as ``open()`` would.

``tempfile.mkstemp`` creates its file with mode 0600 whatever the umask, so a model written by a container
was unreadable by the host user of the mounted ``./out``; the temporary file here is created with mode 0666
and the kernel takes the umask off (0644 under umask 022).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import IO, Any

_FLAGS = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
          | getattr(os, "O_BINARY", 0))


@contextmanager
def atomic_write(path: str | os.PathLike[str], binary: bool = False,
                 prefix: str = ".structcrawl-") -> Iterator[IO[Any]]:
    """A new file beside ``path`` to write (text in UTF-8, or ``binary``) that replaces ``path`` when the
    ``with`` block ends: a reader never sees a half-written file.  On an exception it is removed and
    ``path`` left as it was."""
    path = os.fspath(path)
    tmp = os.path.join(os.path.dirname(os.path.abspath(path)), f"{prefix}{secrets.token_hex(8)}.tmp")
    fd = os.open(tmp, _FLAGS, 0o666)
    try:
        with os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8") as fh:
            yield fh
        os.replace(tmp, path)
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp)
        raise
