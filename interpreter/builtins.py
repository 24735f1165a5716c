"""Implementations of the built-in primitives (compiled program <-> running game).

For every entry of the registry in `rulesvm.dsl.primitives` there is one compile function
here, registered with `@implements(name)`. It receives the compiler and the call's
arguments (in parameter order, None where the default applies) and returns the closure
that does the work at run time, specialised on the static types the checker found (for
example `count` of a zone reads the zone's length without copying it). Decision
primitives (`choose`, `choose_many`) are lowered by the compiler to VM instructions.
"""

from __future__ import annotations

from rulesvm.dsl.model import Formula
from rulesvm.dsl.primitives import PRIMITIVES
from rulesvm.dsl.types import ANY, CARD, ZONE

from . import errors as E
from .format import formatter
from .runtime import GameOver, Runtime

IMPLS: dict = {}


def implements(name: str):
    def register(fn):
        IMPLS[name] = fn
        return fn
    return register


class _Args:
    """A call's arguments, compiled on demand, with defaults from the registry."""

    def __init__(self, c, node, args):
        self.c = c
        self.node = node
        self.spec = PRIMITIVES[node.func.id]
        self.nodes = dict(zip((p.name for p in self.spec.params), args))
        self.defaults = {p.name: p.default for p in self.spec.params}

    def given(self, name: str) -> bool:
        return self.nodes.get(name) is not None

    def type(self, name: str):
        n = self.nodes.get(name)
        return self.c.res.types.get(n, ANY) if n is not None else ANY

    def fn(self, name: str):
        n = self.nodes.get(name)
        if n is None:
            v = self.defaults[name]
            return lambda rt, L: v
        return self.c.expr(n)

    def seq(self, name: str):
        n = self.nodes[name]
        return self.c.list_expr(n)

    def const(self, name: str):
        """The argument's value if it is a literal (or defaulted), else a sentinel."""
        from rulesvm.dsl import ast as A
        n = self.nodes.get(name)
        if n is None:
            return self.defaults[name]
        if isinstance(n, (A.IntLit, A.BoolLit)):
            return n.value
        if isinstance(n, A.StrLit) and all(isinstance(p, str) for p in n.parts):
            return "".join(n.parts)
        return _NOT_CONST


_NOT_CONST = object()


def compile_primitive(c, node, args):
    impl = IMPLS.get(node.func.id)
    if impl is None:  # pragma: no cover - a test keeps the registry and IMPLS in step
        raise AssertionError(f"no implementation for primitive {node.func.id}")
    return impl(_Args(c, node, args))


# ---------------------------------------------------------------------- lists and numbers

@implements("count")
def _count(a: _Args):
    if a.type("items") == ZONE:
        z = a.fn("items")
        return lambda rt, L: len(rt.st.zones[z(rt, L)])
    xs = a.fn("items")
    return lambda rt, L: len(xs(rt, L))


@implements("sum")
def _sum(a: _Args):
    xs = a.seq("items")
    return lambda rt, L: sum(xs(rt, L))


def _extreme(a: _Args, pick):
    xs = a.seq("items")
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


@implements("max")
def _max(a):
    return _extreme(a, max)


@implements("min")
def _min(a):
    return _extreme(a, min)


@implements("any")
def _any(a):
    xs = a.seq("items")
    return lambda rt, L: any(xs(rt, L))


@implements("all")
def _all(a):
    xs = a.seq("items")
    return lambda rt, L: all(xs(rt, L))


@implements("sorted")
def _sorted(a):
    xs = a.seq("items")
    desc = a.fn("desc")
    if a.given("key"):
        key = a.fn("key")
        return lambda rt, L: tuple(sorted(xs(rt, L), key=key(rt, L), reverse=bool(desc(rt, L))))
    return lambda rt, L: tuple(sorted(xs(rt, L), reverse=bool(desc(rt, L))))


@implements("reversed")
def _reversed(a):
    xs = a.seq("items")
    return lambda rt, L: tuple(reversed(xs(rt, L)))


@implements("distinct")
def _distinct(a):
    xs = a.seq("items")
    return lambda rt, L: tuple(dict.fromkeys(xs(rt, L)))


@implements("multiplicities")
def _multiplicities(a):
    xs = a.seq("items")

    def run(rt, L):
        counts: dict = {}
        for x in xs(rt, L):
            counts[x] = counts.get(x, 0) + 1
        return tuple(sorted(counts.values(), reverse=True))
    return run


@implements("product")
def _product(a):
    import itertools
    lists = a.fn("lists")
    return lambda rt, L: tuple(itertools.product(*lists(rt, L)))


@implements("permutations")
def _permutations(a):
    import itertools
    xs, size = a.seq("items"), a.fn("size")
    return lambda rt, L: tuple(itertools.permutations(xs(rt, L), size(rt, L)))


@implements("join")
def _join(a):
    xs, sep = a.seq("items"), a.fn("separator")
    return lambda rt, L: sep(rt, L).join(str(x) for x in xs(rt, L))


@implements("flatten")
def _flatten(a):
    xs = a.fn("lists")
    elem = a.type("lists")
    if elem.name == "list" and elem.elem == ZONE:
        return lambda rt, L: tuple(c for z in xs(rt, L) for c in rt.st.zones[z])

    def run(rt, L):
        out = []
        for x in xs(rt, L):
            if isinstance(x, int):              # a zone given where `any` was expected
                out.extend(rt.st.zones[x])
            else:
                out.extend(x)
        return tuple(out)
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


@implements("first")
def _first(a):
    if a.type("items") == ZONE:
        z = a.fn("items")

        def zfirst(rt, L):
            cards = rt.st.zones[z(rt, L)]
            return cards[0] if cards else None
        return zfirst
    xs = a.fn("items")

    def first(rt, L):
        v = xs(rt, L)
        return v[0] if v else None
    return first


@implements("last")
def _last(a):
    if a.type("items") == ZONE:
        z = a.fn("items")

        def zlast(rt, L):
            cards = rt.st.zones[z(rt, L)]
            return cards[-1] if cards else None
        return zlast
    xs = a.fn("items")

    def last(rt, L):
        v = xs(rt, L)
        return v[-1] if v else None
    return last


@implements("slice")
def _slice(a):
    xs, start, end = a.seq("items"), a.fn("start"), a.fn("end")
    return lambda rt, L: tuple(xs(rt, L)[start(rt, L):end(rt, L)])


@implements("index_of")
def _index_of(a):
    xs, item = a.seq("items"), a.fn("item")

    def run(rt, L):
        seq = xs(rt, L)
        v = item(rt, L)
        return seq.index(v) if v in seq else -1
    return run


@implements("abs")
def _abs(a):
    v = a.fn("value")
    return lambda rt, L: abs(v(rt, L))


@implements("sign")
def _sign(a):
    v = a.fn("value")
    return lambda rt, L: (v(rt, L) > 0) - (v(rt, L) < 0)


@implements("clamp")
def _clamp(a):
    v, lo, hi = a.fn("value"), a.fn("low"), a.fn("high")
    return lambda rt, L: max(lo(rt, L), min(hi(rt, L), v(rt, L)))


@implements("text")
def _text(a):
    v = a.fn("value")
    fmt = formatter(a.type("value"), lambda: a.c.prog)
    return lambda rt, L: fmt(v(rt, L), rt)


@implements("digits")
def _digits(a):
    v = a.fn("value")
    return lambda rt, L: tuple(int(d) for d in str(abs(v(rt, L))))


# ---------------------------------------------------------------------- players

@implements("next_player")
def _next_player(a):
    p, steps = a.fn("player"), a.fn("steps")
    return lambda rt, L: (p(rt, L) + steps(rt, L)) % rt.n


@implements("players_from")
def _players_from(a):
    p = a.fn("player")

    def run(rt, L):
        start = p(rt, L)
        n = rt.n
        return tuple((start + k) % n for k in range(n))
    return run


@implements("distance")
def _distance(a):
    x, y = a.fn("from"), a.fn("to")
    return lambda rt, L: (y(rt, L) - x(rt, L)) % rt.n


@implements("player")
def _player(a):
    seat = a.fn("seat")
    span = a.node.span

    def run(rt, L):
        s = seat(rt, L)
        if not 1 <= s <= rt.n:
            raise E.no_seat(s, rt.n, span)
        return s - 1
    return run


@implements("opponent")
def _opponent(a):
    p = a.fn("player")
    span = a.node.span

    def run(rt, L):
        if rt.n != 2:
            raise E.not_two_players(span)
        return 1 - p(rt, L)
    return run


# ---------------------------------------------------------------------- cards and zones

@implements("top")
def _top(a):
    z = a.fn("zone")

    def run(rt, L):
        cards = rt.st.zones[z(rt, L)]
        return cards[-1] if cards else None
    return run


@implements("bottom")
def _bottom(a):
    z = a.fn("zone")

    def run(rt, L):
        cards = rt.st.zones[z(rt, L)]
        return cards[0] if cards else None
    return run


@implements("owner")
def _owner(a):
    c = a.fn("card")
    return lambda rt, L: rt.prog.zone_owner[rt.st.where[c(rt, L)]]


@implements("zone_of")
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
        value = rt.below(n) + 1
        rt.emit({"type": "roll", "sides": n, "value": value})
        return value
    return run


@implements("random_pick")
def _random_pick(a):
    xs = a.seq("items")
    span = a.node.span

    def run(rt, L):
        seq = xs(rt, L)
        if not seq:
            raise E.empty_pick(span)
        return seq[rt.below(len(seq))]
    return run


# ---------------------------------------------------------------------- actions

def _cards_fn(a: _Args, name: str):
    """A closure giving a list of cards from a card, a list of cards or a zone argument."""
    t = a.type(name)
    fn = a.fn(name)
    if t == ZONE:
        return lambda rt, L: list(rt.st.zones[fn(rt, L)])
    if t == CARD:
        def one(rt, L):
            c = fn(rt, L)
            return [] if c is None else [c]
        return one

    def many(rt, L):
        v = fn(rt, L)
        if v is None:
            return []
        if isinstance(v, int):
            return [v]
        return list(dict.fromkeys(v))
    return many


def _face_value(a: _Args, span):
    face = a.const("face")
    if face is not _NOT_CONST:
        if face not in ("up", "down", "keep"):
            raise E.bad_face(face, span)
        return lambda rt, L: face
    fn = a.fn("face")

    def check(rt, L):
        v = fn(rt, L)
        if v not in ("up", "down", "keep"):
            raise E.bad_face(v, span)
        return v
    return check


@implements("move")
def _move(a):
    cards = _cards_fn(a, "cards")
    to = a.fn("to")
    span = a.node.span
    at = a.const("at")
    face = _face_value(a, span)
    if at is not _NOT_CONST and at not in ("top", "bottom"):
        raise E.bad_at(at, span)
    at_fn = a.fn("at")
    const_face = a.const("face")
    if at is not _NOT_CONST and const_face is not _NOT_CONST:
        bottom = at == "bottom"
        if a.type("cards") in (CARD, ZONE):
            card = a.fn("cards")
            how = Runtime.move_card if a.type("cards") == CARD else Runtime.move_zone
            return lambda rt, L: how(rt, to(rt, L), card(rt, L), bottom, const_face, span)

        def fast(rt, L):
            dest = to(rt, L)
            if dest is None:
                raise E.move_to_none(span)
            rt.move(cards(rt, L), dest, bottom, const_face)
        return fast

    def run(rt, L):
        where = at_fn(rt, L)
        if where not in ("top", "bottom"):
            raise E.bad_at(where, span)
        dest = to(rt, L)
        if dest is None:
            raise E.move_to_none(span)
        rt.move(cards(rt, L), dest, where == "bottom", face(rt, L))
    return run


@implements("draw")
def _draw(a):
    src, dst, n = a.fn("from"), a.fn("to"), a.fn("n")
    span = a.node.span
    face = _face_value(a, span)

    def run(rt, L):
        zone = rt.st.zones[src(rt, L)]
        k = max(0, min(n(rt, L), len(zone)))
        if k == 0:
            return ()
        drawn = zone[-k:][::-1]     # the top card first
        dest = dst(rt, L)
        f = face(rt, L)
        for c in drawn:
            rt.move_card(dest, c, False, f, span)
        return tuple(drawn)
    return run


@implements("shuffle")
def _shuffle(a):
    z = a.fn("zone")
    return lambda rt, L: rt.shuffle_zone(z(rt, L))


# Card actions: one function each, called by the closures below and by generated code
# (codegen.py), so both back ends share their meaning. `value` is the degrees argument of
# `rotate`/`set_turn` (None for the others).

def _no_card(name, span):
    return E.of_none(f"`{name}`", span)


def _bad_degrees(value, span):
    return E.bad_degrees(value, span)


def flip_card(rt, card, value, span) -> None:
    if card is None:
        raise _no_card("flip", span)
    rt.st.faceup[card] = not rt.st.faceup[card]
    if rt.sink is not None:         # no record to build when nobody listens (bots, rollouts)
        rt.sink({"type": "flip", "card": rt.prog.card_ids[card]})


def _face_setter(name: str, up: bool):
    def act(rt, card, value, span) -> None:
        if card is None:
            raise _no_card(name, span)
        rt.st.faceup[card] = up
        if rt.sink is not None:
            rt.sink({"type": name, "card": rt.prog.card_ids[card]})
    return act


face_up_card = _face_setter("face_up", True)
face_down_card = _face_setter("face_down", False)


def rotate_card(rt, card, value, span) -> None:
    if card is None:
        raise _no_card("rotate", span)
    if value % 90:
        raise _bad_degrees(value, span)
    rt.st.turn[card] = (rt.st.turn[card] + value) % 360
    if rt.sink is not None:
        rt.sink({"type": "rotate", "card": rt.prog.card_ids[card]})


def set_turn_card(rt, card, value, span) -> None:
    if card is None:
        raise _no_card("set_turn", span)
    if value % 90:
        raise _bad_degrees(value, span)
    rt.st.turn[card] = value % 360
    if rt.sink is not None:
        rt.sink({"type": "set_turn", "card": rt.prog.card_ids[card]})


CARD_ACTIONS = {"flip": flip_card, "face_up": face_up_card, "face_down": face_down_card,
                "rotate": rotate_card, "set_turn": set_turn_card}


def _card_action(a):
    act = CARD_ACTIONS[a.node.func.id]
    c = a.fn("card")
    span = a.node.span
    if "degrees" not in a.nodes:
        return lambda rt, L: act(rt, c(rt, L), None, span)
    deg = a.fn("degrees")
    return lambda rt, L: act(rt, c(rt, L), deg(rt, L), span)


for _name in CARD_ACTIONS:
    implements(_name)(_card_action)


@implements("log")
def _log(a):
    msg = a.fn("message")
    to = a.fn("to")
    if log_text_draws_random(a.c, a.node):
        def eager(rt, L):
            text, seat = msg(rt, L), to(rt, L)
            if rt.sink is not None:
                rt.log(text, seat)
        return eager

    def run(rt, L):
        if rt.sink is not None:
            rt.log(msg(rt, L), to(rt, L))
    return run


def log_text_draws_random(compiler, call) -> bool:
    """A log line's text is built only when someone listens (bots and playouts run without
    a log), unless building it draws random numbers: then it is always built, so that the
    game never depends on whether it is logged."""
    return any(compiler.consts.draws_random(arg) for arg in call.args) or \
        any(compiler.consts.draws_random(k.value) for k in call.kwargs)


@implements("end_game")
def _end_game(a):
    ranking, scores, winner, outcome = a.fn("ranking"), a.fn("scores"), a.fn("winner"), a.fn("outcome")

    def seat(p):
        if isinstance(p, tuple):
            return [seat(x) for x in p]
        return None if p is None else p + 1

    def run(rt, L):
        rank = ranking(rt, L)
        sc = scores(rt, L)
        win = winner(rt, L)
        result = {
            "ranking": [seat(p) for p in rank] if rank is not None else None,
            "scores": {str(i + 1): s for i, s in enumerate(sc)} if sc is not None else None,
            "winner": seat(win),
            "outcome": outcome(rt, L),
        }
        if result["winner"] is None and rank and not isinstance(rank[0], tuple):
            if len(rank) == 1 or rt.n == 1:
                result["winner"] = None
        rt.st.result = result
        rt.emit({"type": "end", "result": result})
        raise GameOver
    return run


@implements("use")
def _use(a):
    # Only reached when abilities never pause: run the ability's closure directly.
    ability, card, player = a.fn("ability"), a.fn("card"), a.fn("player")
    procs = a.c.procs

    def run(rt, L):
        name = ability(rt, L)
        if name is None:
            return
        procs[name].direct(rt, [card(rt, L), player(rt, L)])
    return run


@implements("choose")
def _choose(a):  # pragma: no cover - lowered to a VM instruction by the compiler
    raise AssertionError("choose is compiled as a decision")


@implements("choose_many")
def _choose_many(a):  # pragma: no cover - lowered to a VM instruction by the compiler
    raise AssertionError("choose_many is compiled as a decision")
