"""What one seat may see of a running game (pipeline: running game -> agents).

An observation is plain JSON-able data built from the zone and variable declarations:
hidden zones show only their size; a zone visible to its owner shows its cards to that
owner and only a count to the others; face-down cards show as backs unless the zone lets
this seat see them; the cards the seat knows but does not see (knowledge.py) are listed
under `known`, with where each lies; per-player variables declared `visible(owner)` appear only for their
owner; a secret decision shows that it is being made, not its options. Agents and the
terminal and web front ends read only this, so they cannot learn what a seat may not know.
"""

from __future__ import annotations

from rulesvm.dsl.types import ANY, CARD, PLAYER, ZONE

from .errors import RulesRuntimeError
from .knowledge import known_unseen, knows, sight
from .limits import MAX_WRITTEN, spend, written_text


# How a variable shows a card the seat cannot see (no card id can look like this).
HIDDEN_CARD = "(hidden card)"


def _value(v, t, prog, st=None, seat: int = -1, budget: list | None = None):
    """A variable's value as `seat` may read it: a card it cannot see where the card lies now
    (in a hidden zone, in another player's hand, face down) is HIDDEN_CARD, never its id.
    Refused (R015) past limits.MAX_WRITTEN characters or items written out."""
    if v is None:
        return None
    if budget is None:
        budget = [MAX_WRITTEN]
    spend(budget, 1)
    if t == CARD:
        if seat >= 0 and st is not None and not knows(prog, st, v, seat):
            return HIDDEN_CARD
        return prog.card_ids[v]
    if t == PLAYER:
        return v + 1
    if t == ZONE:
        return prog.zone_names[v]
    if t.name == "list" and isinstance(v, tuple):
        return [_value(x, t.elem, prog, st, seat, budget) for x in v]
    if t.name == "tuple" and isinstance(v, tuple) and len(t.items) == len(v):
        return [_value(x, i, prog, st, seat, budget) for x, i in zip(v, t.items)]
    if isinstance(v, tuple):
        return [_value(x, ANY, prog, st, seat, budget) for x in v]
    if isinstance(v, str):
        return written_text(budget, v)
    return v


def field_value(prog, st, card: int, name: str, rt=None):
    """A printed field as the card lies now (orientation-dependent values from `faces`)."""
    table = prog.face_fields.get(name)
    faces = table[card] if table is not None else None
    if faces:
        side = 0 if st.faceup[card] or not has_back(prog, card) else 1
        for key in ((side, st.turn[card]), (side, None)):
            if key in faces:
                return faces[key]
    value = prog.card_fields[name][card]
    formulas = prog.formulas.get(name)
    if formulas is not None and formulas[card] is not None:
        try:
            return formulas[card](rt, card)
        except RulesRuntimeError:
            return None     # e.g. a formula about "your" cards, for a card nobody holds
    return value


def has_back(prog, card: int) -> bool:
    """A double-sided card: its back carries data, so a card lying back up is readable."""
    return prog.card_backed[card]


def can_see_card(prog, st, card: int, zone: int, seat: int) -> bool:
    """Can `seat` (0-based; -1 = everything) see the face of `card` in `zone`? The zone's
    declaration says it, as the program's masks of seats (tables._sight)."""
    return seat < 0 or bool(sight(prog, card, zone, st.faceup[card]) >> seat & 1)


def card_view(prog, st, card: int, visible: bool, held: bool = False, rt=None, seat: int = -1) -> dict:
    """One card as `seat` sees it; `held` cards (in a hand) have no face-up/down state."""
    if not visible:
        # A card back shows which back it has (when cards differ), and whether it lies
        # sideways, not which end points where.
        view = {"facedown": True}
        if prog.many_backs:
            view["back"] = prog.card_backs[card]
        if st.turn[card] % 180 == 90:
            view["turn"] = 90
        return view
    cd = prog.card_defs[card]
    view = {"id": prog.card_ids[card], "name": prog.display_name(st, card), "kind": prog.card_kinds[card]}
    if not st.faceup[card] and not held:
        view["side" if has_back(prog, card) else "facedown"] = "back" if has_back(prog, card) else True
    if st.turn[card]:
        view["turn"] = st.turn[card]
    for name in cd.fields:
        value = field_value(prog, st, card, name, rt)
        view[name] = list(value) if isinstance(value, tuple) else value
    model = prog.model
    for var in model.vars_of("card"):
        v = st.cvars[var.index][card]
        view[var.name] = _value(v, var.type, prog, st, seat)
    return view


def zone_view(prog, st, zone: int, seat: int, rt=None) -> dict:
    info = prog.zone_info[zone]
    cards = st.zones[zone]
    owner = prog.zone_owner[zone]
    shows_cards = seat < 0 or (not info.hidden and (info.visible == "all" or owner == seat))
    if not shows_cards:
        if not prog.many_backs or not cards:
            return {"count": len(cards)}
        backs: dict = {}
        for c in cards:
            b = prog.card_backs[c]
            backs[b] = backs.get(b, 0) + 1
        return {"count": len(cards), "backs": dict(sorted(backs.items()))}
    seq = cards if info.ordered or seat < 0 else sorted(cards, key=lambda c: (prog.card_ids[c]))
    return {"count": len(cards),
            "cards": [card_view(prog, st, c, can_see_card(prog, st, c, zone, seat), info.visible == "owner", rt,
                                seat) for c in seq]}


def _family_view(prog, st, info, first: int, seat: int, rt):
    """One zone, or an indexed family: a list by index (1D), or rows of columns (2D)."""
    if not info.dims:
        return zone_view(prog, st, first, seat, rt)
    views = [zone_view(prog, st, first + k, seat, rt) for k in range(info.size)]
    if len(info.dims) == 1:
        return views
    cols = info.dims[0]
    return [views[r * cols:(r + 1) * cols] for r in range(info.dims[1])]


def observe(match, seat: int) -> dict:
    """The observation of `seat` (0-based); seat -1 sees everything (replays, debugging)."""
    prog, st = match.program, match.state
    model = prog.model
    zones: dict = {}
    for info in prog.zones:
        if info.per_player:
            zones[info.name] = {str(p + 1): _family_view(prog, st, info, info.base + p * info.size, seat, match.rt)
                                for p in range(match.players)}
        else:
            zones[info.name] = _family_view(prog, st, info, info.base, seat, match.rt)
    gvars = {v.name: _value(st.gvars[v.index], v.type, prog, st, seat) for v in model.vars_of("global")}
    pvars: dict = {}
    for v in model.vars_of("player"):
        row = {}
        for p in range(match.players):
            if v.visible == "all" or seat < 0 or seat == p:
                row[str(p + 1)] = _value(st.pvars[v.index][p], v.type, prog, st, seat)
        pvars[v.name] = row
    obs = {"game": model.id, "seat": seat + 1 if seat >= 0 else None, "players": match.players,
           "zones": zones, "vars": gvars, "player_vars": pvars, "decisions": st.decisions}
    if seat >= 0 and prog.tracks_knowledge:
        obs["known"] = known_view(prog, st, seat, match.rt)
    d = st.pending
    if d is not None:
        if seat < 0 or d.player == seat:
            d = decision_for(prog, st, d, seat)
            obs["decision"] = {"player": d.player + 1 if d.player >= 0 else None, "prompt": d.prompt, "options": d.labels,
                               "secret": d.secret, "picked": picked_labels(prog, st, d)}
        elif d.kind == "chance":
            # A random event (explicit chance): what is drawn, never the outcomes (the cards
            # of a shuffle may be cards the seat does not know).
            obs["waiting_for"] = {"player": None, "chance": True, "prompt": d.prompt}
        else:
            obs["waiting_for"] = {"player": d.player + 1, "prompt": None if d.secret else d.prompt}
    if st.result is not None:
        obs["result"] = st.result
    return obs


def known_view(prog, st, seat: int, rt=None) -> list[dict]:
    """The cards `seat` knows but does not see (knowledge.py), each with where it lies: its
    zone and, in an ordered zone, its position counted from the top (0 = the top card)."""
    out = []
    for c in known_unseen(prog, st, seat):
        z = st.where[c]
        view = card_view(prog, st, c, True, prog.zone_info[z].visible == "owner", rt, seat)
        view["zone"] = prog.zone_names[z]
        if prog.zone_info[z].ordered:
            cards = st.zones[z]
            view["from_top"] = len(cards) - 1 - cards.index(c)
        out.append(view)
    return out


def decision_for(prog, st, d, seat: int):
    """The pending decision as `seat` may read it: where an option is a card the seat cannot
    see (a face-down card, a card in a hidden zone), the card's name in its label becomes
    "face-down card K", so a label never tells what the table hides. Other labels, and what
    each option does, are unchanged."""
    if d is None or d.value_type != "card" or seat < 0:
        return d
    options, hidden, changed = [], 0, False
    for o in d.options:
        v = o.value
        if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < len(prog.card_ids) \
                and not knows(prog, st, v, seat):
            hidden += 1
            label = o.label
            # Longest first, in a fixed order: the result must not depend on set order.
            for name in sorted({prog.display_name(st, v), prog.card_names[v]}, key=lambda n: (-len(n), n)):
                label = label.replace(name, f"face-down card {hidden}")
            if label != o.label:
                o = o._replace(label=label)
                changed = True
        options.append(o)
    return d._replace(options=tuple(options)) if changed else d


def picked_labels(prog, st, d) -> list:
    """What a `choose_many` picked so far, as the decider reads it: cards by their name."""
    out = []
    for v in d.picked:
        if d.value_type == "card" and isinstance(v, int) and not isinstance(v, bool) and 0 <= v < len(prog.card_ids):
            out.append(prog.display_name(st, v))
        else:
            out.append(v if isinstance(v, (str, int, bool)) or v is None else str(v))
    return out
