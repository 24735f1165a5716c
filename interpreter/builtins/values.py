"""Primitives over values: lists, numbers, texts and players (see `base.py` for the shape of
an implementation: closure maker, inline template, metadata in the registry)."""

from __future__ import annotations

import itertools
import math

from rulesvm.dsl import ast as A
from rulesvm.dsl.types import ZONE

from .. import errors as E
from ..format import formatter
from ..limits import FREE_WALK, bounded_count, charge, charge_count, checked_int, joined_text
from .base import Args, implements


def last_of(cards):
    return cards[-1] if cards else None


def first_of(cards):
    return cards[0] if cards else None


def players_from(start, n):
    return tuple([(start + k) % n for k in range(n)])


def _no_seat(seat, n, span):
    raise E.no_seat(seat, n, span)


def _not_two(span):
    raise E.not_two_players(span)


def _count_source(g, e, a):
    x = a["items"]
    if g.res.types.get(x) == ZONE:
        return f"len(st.zones[{g.expr(x)}])"
    return f"len({g.consumed(x)})"


@implements("count", inline=_count_source)
def _count(a: Args):
    if a.type("items") == ZONE:
        z = a.fn("items")
        return lambda rt, L: len(rt.st.zones[z(rt, L)])
    xs = a.fn("items")
    return lambda rt, L: len(xs(rt, L))


def _charged(g, e, items) -> str:
    """Source of `items` read once, charged one step per item (limits.charge) unless it is a
    comprehension written in place, charged already for the items it walked (Args.walked)."""
    if type(items) is A.Comprehension:
        return g.consumed(items)
    return g.walk(e, g.consumed(items), g.ctx.always_short(items))


def _builtin_source(g, e, a):
    """sum, any, all: Python's own, over the items read once; a sum stays within 64 bits."""
    src = f"{e.func.id}({_charged(g, e, a['items'])})"
    if e.func.id == "sum":
        return g.int_result(src, e.span)
    return src


@implements("sum", inline=_builtin_source)
def _sum(a: Args):
    xs = a.walked("items")
    span = a.node.span
    return lambda rt, L: checked_int(sum(xs(rt, L)), span)


def _extreme(a: Args, pick):
    xs = a.walked("items")
    default = a.fn("default")
    has_default = a.given("default")
    span = a.node.span
    name = a.node.func.id

    def run(rt, L):
        values = xs(rt, L)
        if values:
            return pick(values)
        if has_default:
            return default(rt, L)
        raise E.empty_list(name, span, f"give a default: `{name}(..., default: 0)`")
    return run


def _extreme_source(g, e, a):
    if a.get("default") is None:
        return None
    return f"{e.func.id}({_charged(g, e, a['items'])}, default={g.expr(a['default'])})"


@implements("max", inline=_extreme_source)
def _max(a):
    return _extreme(a, max)


@implements("min", inline=_extreme_source)
def _min(a):
    return _extreme(a, min)


@implements("any", inline=_builtin_source)
def _any(a):
    xs = a.walked("items")
    return lambda rt, L: any(xs(rt, L))


@implements("all", inline=_builtin_source)
def _all(a):
    xs = a.walked("items")
    return lambda rt, L: all(xs(rt, L))


@implements("sorted")
def _sorted(a):
    xs = a.walked("items")
    desc = a.fn("desc")
    if a.given("key"):
        key = a.fn("key")
        return lambda rt, L: tuple(sorted(xs(rt, L), key=key(rt, L), reverse=bool(desc(rt, L))))
    return lambda rt, L: tuple(sorted(xs(rt, L), reverse=bool(desc(rt, L))))


@implements("reversed")
def _reversed(a):
    xs = a.walked("items")
    return lambda rt, L: tuple(reversed(xs(rt, L)))


def _distinct_source(g, e, a):
    return f"tuple(dict.fromkeys({_charged(g, e, a['items'])}))"


@implements("distinct", inline=_distinct_source)
def _distinct(a):
    xs = a.walked("items")
    return lambda rt, L: tuple(dict.fromkeys(xs(rt, L)))


@implements("multiplicities")
def _multiplicities(a):
    xs = a.walked("items")

    def run(rt, L):
        counts: dict = {}
        for x in xs(rt, L):
            counts[x] = counts.get(x, 0) + 1
        return tuple(sorted(counts.values(), reverse=True))
    return run


@implements("product")
def _product(a):
    lists, span = a.fn("lists"), a.node.span

    def run(rt, L):
        factors = lists(rt, L)
        n = bounded_count(math.prod(len(f) for f in factors), span)
        charge_count(rt, n * max(len(factors), 1), span)
        return tuple(itertools.product(*factors))
    return run


@implements("permutations")
def _permutations(a):
    xs, size, span = a.seq("items"), a.fn("size"), a.node.span

    def run(rt, L):
        items, k = xs(rt, L), size(rt, L)
        n = len(items) if k is None else k
        if 0 <= n <= len(items):
            charge_count(rt, bounded_count(math.perm(len(items), n), span) * max(n, 1), span)
        return tuple(itertools.permutations(items, k))
    return run


@implements("join")
def _join(a):
    xs, sep, span = a.walked("items"), a.fn("separator"), a.node.span
    return lambda rt, L: joined_text(rt, sep(rt, L), [str(x) for x in xs(rt, L)], span)


@implements("flatten")
def _flatten(a):
    xs = a.fn("lists")
    elem = a.type("lists")
    span = a.node.span
    if elem.name == "list" and elem.elem == ZONE:
        return lambda rt, L: charge(rt, tuple(c for z in charge(rt, xs(rt, L), span) for c in rt.st.zones[z]), span)

    def run(rt, L):
        out = []
        for x in charge(rt, xs(rt, L), span):
            if isinstance(x, int):              # a zone given where `any` was expected
                out.extend(rt.st.zones[x])
            else:
                out.extend(x)
            if len(out) > E.MAX_ITEMS:
                raise E.too_long(len(out), span)
        return charge(rt, tuple(out), span)
    return run


@implements("zone_index")
def _zone_index(a):
    z = a.fn("zone")
    infos = a.c.prog.zone_info

    def run(rt, L):
        zone = z(rt, L)
        info = infos[zone]
        if not info.dims:
            return -1
        return (zone - info.base) % info.size
    return run


def _end_source(g, e, a):
    """first, last: the end of the items, none when there are none."""
    return f"{g.name(first_of if e.func.id == 'first' else last_of, 'f')}({g.consumed(a['items'])})"


@implements("first", "last", inline=_end_source)
def _end(a):
    """The first or last item (a zone's bottom or top card), none when there is none."""
    pick = first_of if a.node.func.id == "first" else last_of
    xs = a.fn("items")
    if a.type("items") == ZONE:
        return lambda rt, L: pick(rt.st.zones[xs(rt, L)])
    return lambda rt, L: pick(xs(rt, L))


def _slice_source(g, e, a):
    x, start, end = a["items"], a["start"], a["end"]
    src = f"st.zones[{g.expr(x)}]" if g.res.types.get(x) == ZONE else g.expr(x)
    # Literal bounds, or a zone of a game of few cards: fewer than FREE_WALK items whatever the state.
    fixed = type(start) is A.IntLit and type(end) is A.IntLit and 0 <= start.value <= end.value < start.value + FREE_WALK
    return g.walk(e, f"tuple({src}[{g.expr(start)}:{g.expr(end)}])", fixed or g.ctx.always_short(x))


@implements("slice", inline=_slice_source)
def _slice(a):
    xs, start, end, span, pay = a.seq("items"), a.fn("start"), a.fn("end"), a.node.span, a.c.pay(a.node)
    return lambda rt, L: pay(rt, tuple(xs(rt, L)[start(rt, L):end(rt, L)]), span)


@implements("index_of")
def _index_of(a):
    xs, item = a.walked("items"), a.fn("item")

    def run(rt, L):
        seq = xs(rt, L)
        v = item(rt, L)
        return seq.index(v) if v in seq else -1
    return run


def _abs_source(g, e, a):
    return f"abs({g.expr(a['value'])})"


@implements("abs", inline=_abs_source)
def _abs(a):
    v = a.fn("value")
    return lambda rt, L: abs(v(rt, L))


@implements("sign")
def _sign(a):
    v = a.fn("value")
    return lambda rt, L: (v(rt, L) > 0) - (v(rt, L) < 0)


def _clamp_source(g, e, a):
    return f"max({g.expr(a['low'])}, min({g.expr(a['high'])}, {g.expr(a['value'])}))"


@implements("clamp", inline=_clamp_source)
def _clamp(a):
    v, lo, hi = a.fn("value"), a.fn("low"), a.fn("high")
    return lambda rt, L: max(lo(rt, L), min(hi(rt, L), v(rt, L)))


@implements("text")
def _text(a):
    v = a.fn("value")
    fmt = formatter(a.type("value"), lambda: a.c.prog)
    span = a.node.span
    return lambda rt, L: charge(rt, fmt(v(rt, L), rt), span)


@implements("digits")
def _digits(a):
    v = a.fn("value")
    return lambda rt, L: tuple(int(d) for d in str(abs(v(rt, L))))


# ---------------------------------------------------------------------- players

@implements("next_player")
def _next_player(a):
    p, steps = a.fn("player"), a.fn("steps")
    return lambda rt, L: (p(rt, L) + steps(rt, L)) % rt.n


def _players_from_source(g, e, a):
    return f"{g.name(players_from, 'f')}({g.expr(a['player'])}, rt.n)"


@implements("players_from", inline=_players_from_source)
def _players_from(a):
    p = a.fn("player")

    def run(rt, L):
        start = p(rt, L)
        n = rt.n
        return tuple((start + k) % n for k in range(n))
    return run


def _distance_source(g, e, a):
    return f"(({g.expr(a['to'])} - {g.expr(a['from'])}) % rt.n)"


@implements("distance", inline=_distance_source)
def _distance(a):
    x, y = a.fn("from"), a.fn("to")
    return lambda rt, L: (y(rt, L) - x(rt, L)) % rt.n


def _player_source(g, e, a):
    seat = a["seat"]
    if not isinstance(seat, A.IntLit) or seat.value < 1:
        return None
    k = seat.value
    if k <= g.ctx.m.players[0]:
        return str(k - 1)        # every allowed player count has this seat
    return f"({k - 1} if rt.n >= {k} else {g.name(_no_seat, 'f')}({k}, rt.n, {g.name(e.span, 'S')}))"


@implements("player", inline=_player_source)
def _player(a):
    seat = a.fn("seat")
    span = a.node.span

    def run(rt, L):
        s = seat(rt, L)
        if not 1 <= s <= rt.n:
            raise E.no_seat(s, rt.n, span)
        return s - 1
    return run


def _opponent_source(g, e, a):
    return f"(1 - {g.expr(a['player'])} if rt.n == 2 else {g.name(_not_two, 'f')}({g.name(e.span, 'S')}))"


@implements("opponent", inline=_opponent_source)
def _opponent(a):
    p = a.fn("player")
    span = a.node.span

    def run(rt, L):
        if rt.n != 2:
            raise E.not_two_players(span)
        return 1 - p(rt, L)
    return run


