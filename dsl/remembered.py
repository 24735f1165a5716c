"""Parses remembered while a language server checks a game again and again (pipeline: source text -> AST).

A language server checks a game on every keystroke, and all its texts but the one being
typed are the same as the time before (the rules files not edited, every formula and
ability written in its YAML files). Within `remembered_parses(previous)`, a parser
function marked `@remember` gives the tree it gave the check before for the same arguments. Trees are
immutable (frozen nodes; the checker's findings live in side tables keyed by node, one set
per load), so one tree serves every load. Unset (the command line), every text is parsed.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools

_memo: contextvars.ContextVar = contextvars.ContextVar("remembered_parses", default=None)


@contextlib.contextmanager
def remembered_parses(previous: dict):
    """Within the block, a text parsed in the block before (`previous`: what that block
    yielded) is not parsed again. Yields this block's memo, which ends up holding what the
    block parsed or took from `previous`, no more: hand it to the next block."""
    current: dict = {}
    token = _memo.set((previous, current))
    try:
        yield current
    finally:
        _memo.reset(token)


def remembering() -> bool:
    """Whether parses are remembered here (a language server's check)."""
    return _memo.get() is not None


def recall(key: tuple, compute):
    """`compute()`, or within `remembered_parses` the value it gave for `key` (hashable, and
    saying everything the value depends on) in this block or the block before."""
    memo = _memo.get()
    if memo is None:
        return compute()
    previous, current = memo
    if key not in current:
        current[key] = previous[key] if key in previous else compute()
    return current[key]


def remember(parse):
    """`parse`, consulting the memo of `remembered_parses` (successful parses only)."""
    @functools.wraps(parse)
    def remembering(*args, **kwargs):
        memo = _memo.get()
        if memo is None or kwargs:
            return parse(*args, **kwargs)
        previous, current = memo
        key = (parse.__name__, *args)
        if key not in current:
            current[key] = previous[key] if key in previous else parse(*args)
        return current[key]
    return remembering
