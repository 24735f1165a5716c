"""Limits on what the rules may build while a game runs (pipeline: running game).

The step limit stops rules that loop for ever; these stop rules that grow for ever, so an
untrusted game file cannot exhaust the machine's memory: a list or text the rules build
(`xs + xs`, `a..b`) may hold at most `MAX_ITEMS` items, else the game stops with R015; and
calls may nest `MAX_CALL_DEPTH` deep, else R004.
"""

from __future__ import annotations

from itertools import chain

from .errors import MAX_CALL_DEPTH, MAX_ITEMS, RulesRuntimeError


def _too_long(n: int, span) -> RulesRuntimeError:
    return RulesRuntimeError(f"the rules built a list or text of {n:,} items, more than the {MAX_ITEMS:,} "
                             "allowed", span, None, "R015", "a loop that keeps growing a list?")


def bounded_range(a: int, b: int, span) -> tuple:
    """`a..b`, refusing ranges too long to build."""
    if b - a >= MAX_ITEMS:
        raise _too_long(b - a + 1, span)
    return tuple(range(a, b + 1))


def bounded_join(a, b, span):
    """`a + b` for lists and texts, refusing results too long to build."""
    if type(a) in (tuple, list, str) and len(a) + len(b) > MAX_ITEMS:
        raise _too_long(len(a) + len(b), span)
    return a + b


def concat_lists(span, *lists) -> tuple:
    """`a + b + c ...` of several lists (zones' cards) as one tuple, refusing results too long."""
    out = tuple(chain(*lists))
    if len(out) > MAX_ITEMS:
        raise _too_long(len(out), span)
    return out


def too_deep(span, rule: str) -> RulesRuntimeError:
    """R004 for calls nested deeper than MAX_CALL_DEPTH."""
    return RulesRuntimeError(f"the rules call themselves too deeply: more than {MAX_CALL_DEPTH} calls inside "
                             "each other (endless recursion?)", span, rule, "R004",
                             "a function or procedure that calls itself needs a case that stops")
