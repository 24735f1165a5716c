"""Reading a file a designer (or a stranger) names: the one way rulesvm opens files for reading
(pipeline: source text). A leaf module: the loaders and the diagnostic renderer both use it.
"""

from __future__ import annotations

import os
import stat

# The most bytes of any file rulesvm reads as game data (docs/security.md).
MAX_BYTES = 8 * 1024 * 1024


class NotRegularFile(OSError):
    """A path naming a FIFO, a device or a socket: reading it could block or never end."""


def read_bytes(path: str, limit: int | None = None) -> bytes:
    """A regular file's bytes, at most `limit` + 1 (MAX_BYTES by default; the caller reports a
    larger file).

    The file is opened without blocking and checked before any read: a FIFO (which would
    wait for a writer), a device (`/dev/zero` never ends) or a socket is NotRegularFile.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(path)
        if not stat.S_ISREG(mode):
            kind = "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
            raise NotRegularFile(kind)
        with os.fdopen(fd, "rb") as fh:
            fd = -1
            return fh.read((MAX_BYTES if limit is None else limit) + 1)
    finally:
        if fd >= 0:
            os.close(fd)
