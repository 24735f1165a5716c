"""Primitives about cards and zones, and randomness (see `base.py` for the shape of an
implementation: closure maker, inline template, metadata in the registry)."""

from __future__ import annotations

from rulesvm.dsl.model import Formula
from rulesvm.dsl.types import ANY, CARD, ZONE

from .. import errors as E
from ..format import formatter
from .base import implements
from .values import first_of, last_of


def _pile_end_source(g, e, a):
    """top, bottom of a zone: its last or first card, none when it is empty."""
    if a["zone"] is None:
        return None
    return f"{g.name(last_of if e.func.id == 'top' else first_of, 'f')}(st.zones[{g.expr(a['zone'])}])"


@implements("top", "bottom", inline=_pile_end_source)
def _pile_end(a):
    pick = last_of if a.node.func.id == "top" else first_of
    z = a.fn("zone")
    return lambda rt, L: pick(rt.st.zones[z(rt, L)])


def _owner_source(g, e, a):
    return f"{g.name(g.ctx.tables.zone_owner, 'O')}[st.where[{g.expr(a['card'])}]]"


@implements("owner", inline=_owner_source)
def _owner(a):
    c = a.fn("card")
    return lambda rt, L: rt.prog.zone_owner[rt.st.where[c(rt, L)]]


def _zone_of_source(g, e, a):
    return f"st.where[{g.expr(a['card'])}]"


@implements("zone_of", inline=_zone_of_source)
def _zone_of(a):
    c = a.fn("card")
    return lambda rt, L: rt.st.where[c(rt, L)]


@implements("position")
def _position(a):
    c = a.fn("card")

    def run(rt, L):
        card = c(rt, L)
        return rt.st.zones[rt.st.where[card]].index(card)
    return run


@implements("zone_owner")
def _zone_owner(a):
    z = a.fn("zone")
    return lambda rt, L: rt.prog.zone_owner[z(rt, L)]


def _side_and_turn(side: str, turn: int, span) -> tuple:
    if side not in ("front", "back") or turn % 90 or not 0 <= turn < 360:
        raise E.bad_side(side, turn, span)
    return (0 if side == "front" else 1), turn


def _printed(table: dict, key: tuple, default):
    """What a card shows on a side and end: that end's own value, else the side's, else the card's."""
    for k in (key, (key[0], None)):
        if k in table:
            return table[k]
    return default


@implements("field_at")
def _field_at(a):
    card, field, side, turn = a.fn("card"), a.fn("field"), a.fn("side"), a.fn("turn")
    prog, span = a.c.prog, a.node.span

    def run(rt, L):
        c = card(rt, L)
        if c is None:
            raise E.of_none("`field_at`", span)
        name = field(rt, L)
        key = _side_and_turn(side(rt, L), turn(rt, L), span)
        plain = prog.card_fields.get(name)
        default = plain[c] if plain is not None else None
        faces = (prog.face_fields.get(name) or [None] * len(prog.card_ids))[c]
        value = _printed(faces, key, default) if faces else default
        if isinstance(value, Formula):          # a computed field: its value now
            return a.c.formulas(name)[c](rt, c)
        return value
    return run


@implements("name_at")
def _name_at(a):
    card, side, turn = a.fn("card"), a.fn("side"), a.fn("turn")
    prog, span = a.c.prog, a.node.span

    def run(rt, L):
        c = card(rt, L)
        if c is None:
            raise E.of_none("`name_at`", span)
        key = _side_and_turn(side(rt, L), turn(rt, L), span)
        names = prog.face_names[c] if prog.face_names is not None else None
        return _printed(names, key, prog.card_names[c]) if names else prog.card_names[c]
    return run


@implements("cards_of_kind")
def _cards_of_kind(a):
    k = a.fn("kind")
    kinds = a.c.prog.card_kinds
    return lambda rt, L: tuple(i for i, kind in enumerate(kinds) if kind == k(rt, L))


@implements("card")
def _card(a):
    ident = a.fn("id")
    span = a.node.span
    table = a.c.prog.card_by_id

    def run(rt, L):
        key = ident(rt, L)
        if key not in table:
            raise E.no_card_id(key, span)
        return table[key]
    return run


def card_property(c, name: str, obj):
    prog = c.prog
    if name == "id":
        return lambda rt, L: prog.card_ids[obj(rt, L)]
    if name == "kind":
        return lambda rt, L: prog.card_kinds[obj(rt, L)]
    if name == "name":
        return lambda rt, L: prog.card_names[obj(rt, L)]
    if name == "faceup":
        return lambda rt, L: rt.st.faceup[obj(rt, L)]
    if name == "turn":
        return lambda rt, L: rt.st.turn[obj(rt, L)]
    if name == "owner":
        return lambda rt, L: prog.zone_owner[rt.st.where[obj(rt, L)]]
    if name == "zone":
        return lambda rt, L: rt.st.where[obj(rt, L)]
    raise AssertionError(name)  # pragma: no cover


# ---------------------------------------------------------------------- randomness

@implements("roll")
def _roll(a):
    sides = a.fn("sides")

    def run(rt, L):
        n = sides(rt, L)
        value = rt.roll(n)
        rt.emit({"type": "roll", "sides": n, "value": value})
        return value
    return run


@implements("random_pick")
def _random_pick(a):
    xs = a.seq("items")
    span = a.node.span
    t = a.type("items")
    elem = CARD if t == ZONE else (t.elem if t.name == "list" and t.elem is not None else ANY)
    # How an outcome reads when the pick is a chance decision (explicit chance).
    text = formatter(elem, a.c.ctx.prog_ref)
    value_type = elem.name

    def run(rt, L):
        seq = xs(rt, L)
        if not seq:
            raise E.empty_pick(span)
        return rt.pick(seq, text, value_type)
    return run


