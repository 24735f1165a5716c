"""Primitives that act: moving and drawing cards, shuffling, turning cards, showing cards
(`reveal`), logging, ending the game, using an ability (see `base.py` for the shape of an implementation: closure maker,
inline and statement templates, metadata in the registry). Decisions are instructions of
their own (`lower.py`, `decisions.py`).
"""

from __future__ import annotations

from rulesvm.dsl import ast as A
from rulesvm.dsl.types import CARD, ZONE

from .. import errors as E
from .. import knowledge as K
from ..runtime import GameOver, Runtime
from ..state import canonical_ranking
from .base import NOT_LITERAL, Args, implements


def _cards_fn(a: Args, name: str):
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


def _face_value(a: Args, span):
    face = a.const("face")
    if face is not NOT_LITERAL:
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


def move_how(ctx, a: dict) -> tuple | None:
    """(at, face) of a `move` whose `at` and `face` are literal and plain, else None."""
    at = ctx.literal(a["at"], ctx.prim_default("move", "at"))
    face = ctx.literal(a["face"], ctx.prim_default("move", "face"))
    return (at, face) if at in ("top", "bottom") and face in ("up", "down", "keep") else None


def _move_source(g, e, a):
    """One card or a whole zone, `at` and `face` literal: the runtime's cheap move."""
    kind = g.res.types.get(a["cards"])
    how = move_how(g.ctx, a) if kind in (CARD, ZONE) else None
    if how is None:
        return None
    at, face = how
    method = "move_card" if kind == CARD else "move_zone"
    return f"rt.{method}({g.expr(a['to'])}, {g.expr(a['cards'])}, {at == 'bottom'}, {face!r}, {g.name(e.span, 'S')})"


def _move_statement(g, e, a, pad: str) -> list[str] | None:
    """`move(card, zone)` as a statement in a game where no zone compacts and no trigger
    waits for `moved`: when nobody listens and neither is none, the card changes lists
    right here; otherwise `Runtime.move_card`, which raises the errors and tells the
    listener (the arguments are evaluated once, in the same order)."""
    ctx = g.ctx
    if ctx.tables.has_compact or "moved" in ctx.evented:
        return None
    how = move_how(ctx, a)
    if g.res.types.get(a["cards"]) != CARD or how is None:
        return None
    at, face = how
    arrive = face
    if face == "keep":
        # The face a card takes on arriving: the zone's, known when the zone is named.
        to, res = a["to"], g.res
        name = (res.calls[to][1] if type(to) is A.Call and res.calls.get(to, ("",))[0] == "zone"
                else res.names[to][1] if type(to) is A.Name and res.names.get(to, ("",))[0] == "zone"
                else None)
        if name is None:
            return None
        arrive = ctx.zone_info(name).arrive_face or "keep"
    t, c = g.temp("t"), g.temp("c")

    def arrival(source: str) -> list[str]:
        """The card leaves `source`'s list for the top or bottom of the target's, face as it arrives."""
        return ([f"{pad}    st.zones[{source}].remove({c})",
                 f"{pad}    st.zones[{t}].{'insert(0, ' if at == 'bottom' else 'append('}{c})",
                 f"{pad}    st.where[{c}] = {t}"]
                + ([f"{pad}    st.faceup[{c}] = {arrive == 'up'}"] if arrive != "keep" else []))
    lines = [f"{pad}{t} = {g.expr(a['to'])}",
             f"{pad}{c} = {g.expr(a['cards'])}",
             f"{pad}if {c} is None or {t} is None or rt.slow_moves:",
             f"{pad}    rt.move_card({t}, {c}, {at == 'bottom'}, {face!r}, {g.name(e.span, 'S')})",
             # Nobody keeps knowledge or watches moves (a simulation of random bots): the
             # card only changes lists.
             f"{pad}elif rt.plain_moves:",
             *arrival(f"st.where[{c}]"),
             f"{pad}else:"]
    tracks = ctx.tables.tracks_knowledge
    # Where the card was: knowledge (who knows it where it arrives depends on where it was
    # and how it lay, knowledge.py) and a watcher of moves (Runtime.on_move) read it.
    s, up = g.temp("s"), g.temp("u")
    lines += [f"{pad}    {s} = st.where[{c}]"] + ([f"{pad}    {up} = st.faceup[{c}]"] if tracks else []) + arrival(s)
    if tracks:
        # knowledge.moved written out (it runs for every card moved): a call only for a card
        # a seat must forget.
        tb = ctx.tables
        upm, downm, backed, follows = (g.name(tb.see_up, "k"), g.name(tb.see_down, "k"), g.name(tb.card_backed, "k"),
                                       g.name(tb.follows, "k"))
        b, m = g.temp("b"), g.temp("m")
        lines += [f"{pad}    if rt.tracks:",
                  f"{pad}        {b} = {backed}[{c}]",
                  f"{pad}        {m} = ({upm}[{s}] if {up} or {b} else {downm}[{s}]) | "
                  f"({upm}[{t}] if {b} or st.faceup[{c}] else {downm}[{t}])",
                  f"{pad}        if {follows}[{s}] or {m} == {tb.everyone} or not st.zones[{s}]:",
                  f"{pad}            st.known[{c}] |= {m}",
                  f"{pad}        else:",
                  f"{pad}            st.known[{c}] = {m}",
                  f"{pad}            {m} = {tb.everyone} & ~{m}",
                  # Most often nobody knew anything else there: that is checked in C.
                  f"{pad}            if any(map({m}.__and__, map(st.known.__getitem__, st.zones[{s}]))):",
                  f"{pad}                {g.name(K.forget_in, 'f')}(rt.prog, st, {s}, {m})"]
    lines += [f"{pad}    if rt.on_move is not None:", f"{pad}        rt.on_move({c}, {s}, {t})"]
    return lines


@implements("move", inline=_move_source, statement=_move_statement)
def _move(a):
    cards = _cards_fn(a, "cards")
    to = a.fn("to")
    span = a.node.span
    at = a.const("at")
    face = _face_value(a, span)
    if at is not NOT_LITERAL and at not in ("top", "bottom"):
        raise E.bad_at(at, span)
    at_fn = a.fn("at")
    const_face = a.const("face")
    if at is not NOT_LITERAL and const_face is not NOT_LITERAL:
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


@implements("shuffle_into")
def _shuffle_into(a):
    """Each card in turn leaves its zone and goes to a random position of the destination
    (the log says where from and to, not the position: a deck's order stays secret)."""
    to = a.fn("to")
    cards = _cards_fn(a, "cards")
    span = a.node.span
    face = _face_value(a, span)

    def run(rt, L):
        dest = to(rt, L)
        if dest is None:
            raise E.move_to_none(span, "shuffle_into")
        f = face(rt, L)
        for c in cards(rt, L):
            rt.move([c], dest, False, f, anywhere=True)
    return run


@implements("shuffle")
def _shuffle(a):
    z = a.fn("zone")
    return lambda rt, L: rt.shuffle_zone(z(rt, L))


# Card actions: one function each, called by the closures below and by generated code
# (pysource.py), so both back ends share their meaning. `value` is the degrees argument of
# `rotate`/`set_turn` (None for the others).

def _no_card(name, span):
    return E.of_none(f"`{name}`", span)


def _bad_degrees(value, span):
    return E.bad_degrees(value, span)


def flip_card(rt, card, value, span) -> None:
    if card is None:
        raise _no_card("flip", span)
    rt.st.faceup[card] = not rt.st.faceup[card]
    if rt.tracks:
        K.turned(rt.prog, rt.st, card)
    if rt.sink is not None:         # no record to build when nobody listens (bots, rollouts)
        rt.sink({"type": "flip", "card": rt.prog.card_ids[card]})


def _face_setter(name: str, up: bool):
    def act(rt, card, value, span) -> None:
        if card is None:
            raise _no_card(name, span)
        rt.st.faceup[card] = up
        if rt.tracks:
            K.turned(rt.prog, rt.st, card)
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


def _card_action_source(g, e, a):
    name = e.func.id
    value = "None"
    if "degrees" in a:
        deg = a["degrees"]
        value = g.expr(deg) if deg is not None else repr(g.ctx.prim_default(name, "degrees"))
    return f"{g.name(CARD_ACTIONS[name], 'f')}(rt, {g.expr(a['card'])}, {value}, {g.name(e.span, 'S')})"


def _known_ints(e) -> set | None:
    """Every value e can have, when it is an integer literal or a choice between them."""
    if type(e) is A.IntLit:
        return {e.value}
    if type(e) is A.IfExpr:
        a, b = _known_ints(e.then), _known_ints(e.else_)
        return a | b if a is not None and b is not None else None
    return None


def _card_store_statement(g, e, a, pad: str) -> list[str] | None:
    """`face_up(c)`, `face_down(c)`, `set_turn(c, d)` as a statement: when nobody listens
    (no event to build) and the card is there, one store; otherwise the primitive, which
    raises its errors and tells the listener."""
    name = e.func.id
    c = g.temp("c")
    lines = [f"{pad}{c} = {g.expr(a['card'])}"]
    if name == "set_turn":
        # Only turns known to be valid (0, 90, 180 or 270) skip the primitive's checks.
        known = _known_ints(a["degrees"])
        if known is None or not all(0 <= k < 360 and k % 90 == 0 for k in known):
            return None
        value = g.temp("d")
        lines.append(f"{pad}{value} = {g.expr(a['degrees'])}")
        fast = f"st.turn[{c}] = {value}"
    else:
        fast = f"st.faceup[{c}] = {name == 'face_up'}"
        tb = g.ctx.tables
        if tb.tracks_knowledge:
            # knowledge.turned written out: whoever sees the card now knows it too.
            if name == "face_up":
                sight = f"{g.name(tb.see_up, 'k')}[st.where[{c}]]"
            else:
                sight = (f"({g.name(tb.see_up, 'k')} if {g.name(tb.card_backed, 'k')}[{c}] else "
                         f"{g.name(tb.see_down, 'k')})[st.where[{c}]]")
            fast += f"\n{pad}    if rt.tracks:\n{pad}        st.known[{c}] |= {sight}"
        value = "None"
    act = g.name(CARD_ACTIONS[name], "f")
    return lines + [f"{pad}if {c} is None or rt.sink is not None:",
                    f"{pad}    {act}(rt, {c}, {value}, {g.name(e.span, 'S')})",
                    f"{pad}else:",
                    f"{pad}    {fast}"]


def _card_action(a):
    act = CARD_ACTIONS[a.node.func.id]
    c = a.fn("card")
    span = a.node.span
    if "degrees" not in a.nodes:
        return lambda rt, L: act(rt, c(rt, L), None, span)
    deg = a.fn("degrees")
    return lambda rt, L: act(rt, c(rt, L), deg(rt, L), span)


implements("flip", "rotate", inline=_card_action_source)(_card_action)
implements("face_up", "face_down", "set_turn", inline=_card_action_source, statement=_card_store_statement)(_card_action)


def _log_source(g, e, a):
    to = g.expr(a["to"]) if a["to"] is not None else "None"
    if log_text_draws_random(g.ctx, e):
        return f"{g.name(_log_always, 'f')}(rt, {g.expr(a['message'])}, {to})"
    return f"(rt.log({g.expr(a['message'])}, {to}) if rt.sink is not None else None)"


def _log_always(rt, text, seat) -> None:
    """A log line whose text was built anyway (it draws random numbers)."""
    if rt.sink is not None:
        rt.log(text, seat)


@implements("log", inline=_log_source)
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


@implements("reveal")
def _reveal(a):
    cards = _cards_fn(a, "cards")
    to = a.fn("to")

    def run(rt, L):
        shown, who = cards(rt, L), to(rt, L)
        seats = range(rt.n) if who is None else (who,) if isinstance(who, int) else [p for p in who if p is not None]
        mask = 0
        for p in seats:
            mask |= 1 << p
        K.reveal(rt, shown, mask)
        if rt.sink is not None and shown:
            prog = rt.prog
            names = [prog.display_name(rt.st, c) for c in shown]
            to_seats = None if who is None else sorted({p + 1 for p in seats})
            whom = "everyone" if to_seats is None else " and ".join(f"Player {p}" for p in to_seats) or "nobody"
            rt.sink({"type": "reveal", "cards": [prog.card_ids[c] for c in shown], "to": to_seats,
                     "text": f"Shown to {whom}: {', '.join(names)}"})
    return run


def log_text_draws_random(ctx, call) -> bool:
    """A log line's text is built only when someone listens (bots and playouts run without
    a log), unless building it draws random numbers: then it is always built, so that the
    game never depends on whether it is logged."""
    return any(ctx.consts.draws_random(arg) for arg in call.args) or \
        any(ctx.consts.draws_random(k.value) for k in call.kwargs)


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
            "ranking": canonical_ranking([seat(p) for p in rank]) if rank is not None else None,
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
