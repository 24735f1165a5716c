"""Limits on what the rules may build while a game runs (pipeline: running game).

The step limit stops rules that loop for ever; these stop rules that grow for ever, so an
untrusted game file cannot exhaust the machine's memory: a list or text the rules build
(`xs + xs`, `a..b`) may hold at most `MAX_ITEMS` items, else the game stops with R015; and
calls may nest `MAX_CALL_DEPTH` deep, else R004.
"""

from __future__ import annotations

from itertools import chain

from .errors import MAX_ITEMS, too_deep, too_long


def bounded_range(a: int, b: int, span) -> tuple:
    """`a..b`, refusing ranges too long to build."""
    if b - a >= MAX_ITEMS:
        raise too_long(b - a + 1, span)
    return tuple(range(a, b + 1))


def bounded_text(text: str, span) -> str:
    """A text built by interpolation, refused past MAX_ITEMS characters (`s = "{s}{s}"` in a
    loop doubles it each round: it must stop long before it exhausts memory)."""
    if len(text) > MAX_ITEMS:
        raise too_long(len(text), span)
    return text


def grows(t) -> bool:
    """Can an interpolated value of static type t be of any length (a text, a list...)? A card,
    a player, a number or a truth value always reads short."""
    return t is None or t.name not in ("card", "player", "int", "bool", "none", "zone")


def bounded_join(a, b, span):
    """`a + b` for lists and texts, refusing results too long to build."""
    if type(a) in (tuple, list, str) and len(a) + len(b) > MAX_ITEMS:
        raise too_long(len(a) + len(b), span)
    return a + b


def concat_lists(span, *lists) -> tuple:
    """`a + b + c ...` of several lists (zones' cards) as one tuple, refusing results too long."""
    out = tuple(chain(*lists))
    if len(out) > MAX_ITEMS:
        raise too_long(len(out), span)
    return out


__all__ = ["bounded_range", "bounded_join", "bounded_text", "grows", "concat_lists", "too_deep"]
