"""Reading a file a designer (or a stranger) names: the one way rulesvm opens files for reading
(pipeline: source text). A leaf module: the loaders and the diagnostic renderer both use it.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import stat

# The most bytes of any file rulesvm reads (docs/security.md); saves and logs have their own.
MAX_BYTES = 8 * 1024 * 1024

# What one game may hold (docs/security.md, "Budgets"): chosen by measuring (benchmarks/budgets.py)
# so that a game just under every cap is validated or run within 30 s and 1 GB on two cores.
# A rules file, and the rules text of a game together: its rules files, its variants' and
# what is written as rules in its YAML files (card formulas and abilities, variant rules).
MAX_RULES_BYTES = 128 * 1024
# A YAML file: a game file, a card set, a variant, a scenario, a hand.
MAX_YAML_BYTES = 1024 * 1024
# Every file one game reads, together: game file, rules files, card sets, variants; and the
# values of its YAML files together (each mapping, list, key and scalar; aliases expanded),
# which cost far more than bytes (a YAML file alone holds at most 200,000: dsl/yaml_loader.py).
MAX_GAME_BYTES = 2 * 1024 * 1024
MAX_GAME_VALUES = 250_000
# What `rulesvm validate` reads to check a game alone and with each of its variants (it reads
# the game's files again for each).
MAX_CHECK_BYTES = 5 * 512 * 1024
MAX_CHECK_VALUES = 300_000


# Texts given for paths (an editor's unsaved buffers): while set, reading one of these paths
# gives its text instead of the file on disk. Unset (the command line), files are read as they are.
_given: contextvars.ContextVar = contextvars.ContextVar("given_texts", default=None)


@contextlib.contextmanager
def given_texts(texts: dict):
    """Within the block, reading a path of `texts` (path -> text) reads that text, not the file
    on disk: how a language server checks what is in the editor before it is saved. Paths are
    compared after `os.path.realpath`."""
    keyed = {os.path.realpath(path): text.encode("utf-8", "surrogatepass") for path, text in texts.items()}
    token = _given.set(keyed)
    try:
        yield
    finally:
        _given.reset(token)


class NotRegularFile(OSError):
    """A path naming a FIFO, a device or a socket: reading it could block or never end."""


def read_bytes(path: str, limit: int | None = None) -> bytes:
    """A regular file's bytes, at most `limit` + 1 (MAX_BYTES by default; the caller reports a
    larger file).

    The file is opened without blocking and checked before any read: a FIFO (which would
    wait for a writer), a device (`/dev/zero` never ends) or a socket is NotRegularFile.
    Within `given_texts`, a path it names reads the given text.
    """
    given = _given.get()
    if given:
        raw = given.get(os.path.realpath(path))
        if raw is not None:
            return raw[:(MAX_BYTES if limit is None else limit) + 1]
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
