"""How values read as text: in log lines, option labels and string interpolation.

A list is written out piece by piece and refused (R015) as soon as its text passes the size
limit, so a list that shares itself many times never takes the time or memory to write out.
Cards, players and zones are ints at run time; the compiler knows each value's static
type and picks the matching formatter once, at compile time.
"""

from __future__ import annotations

from rulesvm.dsl.types import BOOL, CARD, PLAYER, ZONE, Type

from .limits import bounded_pieces


def player_name(p) -> str:
    return "none" if p is None else f"Player {p + 1}"


def formatter(t: Type, prog_ref):
    """A function value -> text for values of static type t. `prog_ref()` gives the program."""
    if t == CARD:
        def card_text(v, rt=None):
            if v is None:
                return "none"
            prog = prog_ref()
            return prog.display_name(rt.st, v) if rt is not None else prog.card_names[v]
        return card_text
    if t == PLAYER:
        return lambda v, rt=None: player_name(v)
    if t == BOOL:
        return lambda v, rt=None: "none" if v is None else ("true" if v else "false")
    if t == ZONE:
        def zone_text(z, rt=None):
            if rt is None or z is None:
                return "a zone"
            cards = rt.st.zones[z]
            prog = prog_ref()
            return ", ".join(prog.display_name(rt.st, c) for c in cards) if cards else "nothing"
        return zone_text
    if t.name == "list":
        inner = formatter(t.elem, prog_ref) if t.elem is not None else (lambda v, rt=None: plain(v))
        return lambda v, rt=None: "none" if v is None else (bounded_pieces(inner(x, rt) for x in v) if v else "nothing")
    if t.name == "tuple":
        parts = [formatter(i, prog_ref) for i in t.items]
        return lambda v, rt=None: "(" + bounded_pieces(f(x, rt) for f, x in zip(parts, v)) + ")"
    return lambda v, rt=None: plain(v)


def plain(v) -> str:
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, tuple):
        return bounded_pieces(plain(x) for x in v)
    return str(v)
