"""The program's tables (checked model -> compiled program, first step): cards and zones.

Every card instance gets an integer id and every zone (each player's, each cell of an indexed
family) an integer index; the tables map them to names, kinds, printed fields, owners and
layouts. The code the compiler writes reads these tables, so they are built first.
"""

from __future__ import annotations

import hashlib
import json

from rulesvm.dsl.model import Formula
from rulesvm.dsl.schema import MAX_STEPS

from .program import Tables, ZoneInfo


def build_tables(model, options: dict) -> Tables:
    card_ids, card_names, card_kinds, card_defs = [], [], [], []
    for cd in model.cards:
        for iid in cd.instance_ids:
            card_ids.append(iid)
            card_names.append(cd.name.get("en", cd.id))
            card_kinds.append(cd.kind)
            card_defs.append(cd)
    card_fields = {name: tuple(cd.fields.get(name) for cd in card_defs) for name in model.field_types}
    # Names and fields that depend on the card's orientation: per card, (side, turn) -> value.
    face_names = tuple({k: face["name"].get("en", cd.id) for k, face in cd.faces.items() if "name" in face} or None
                       for cd in card_defs)
    face_fields = {}
    for name in model.field_types:
        table = tuple({k: face[name] for k, face in cd.faces.items() if name in face} or None for cd in card_defs)
        if any(t is not None for t in table):
            face_fields[name] = table
    max_players = model.players[1]
    zones, zone_names, zone_owner, zone_info = [], [], [], []
    ordered = sorted(model.zones.values(), key=lambda z: z.index)
    families = []      # (first zone index, number of zones) of each compacting row
    for z in [z for z in ordered if not z.per_player] + [z for z in ordered if z.per_player]:
        size = 1
        for d in z.dims:
            size *= d
        info = ZoneInfo(z.name, z.per_player, z.ordered, z.hidden, z.visible, z.facedown_visible,
                        z.arrive_face, len(zone_names), z.dims, size, z.compact)
        zones.append(info)
        for p in range(max_players if z.per_player else 1):
            if z.compact:
                families.append((len(zone_names), size))
            for k in range(size):
                zone_names.append(f"{z.name}{f'[{p + 1}]' if z.per_player else ''}{_where(z.dims, k)}")
                zone_owner.append(p if z.per_player else None)
                zone_info.append(info)
    compact_family = [None] * len(zone_names)
    for first, size in families:
        for k in range(size):
            compact_family[first + k] = (first, size)
    card_backs = tuple(cd.back for cd in card_defs)
    see_up, see_down, follows = _sight(zone_info, zone_owner, max_players)
    everyone = (1 << max_players) - 1
    card_backed = tuple(any(side == 1 for side, _ in cd.faces) for cd in card_defs)
    return Tables(
        model=model, options=dict(options), max_players=max_players, card_ids=tuple(card_ids),
        card_names=tuple(card_names), card_kinds=tuple(card_kinds), card_fields=card_fields,
        card_defs=tuple(card_defs), card_by_id={iid: i for i, iid in enumerate(card_ids)}, face_fields=face_fields,
        face_names=face_names if any(face_names) else None, zones=tuple(zones), zone_names=tuple(zone_names),
        zone_owner=tuple(zone_owner), zone_info=tuple(zone_info), nzones=len(zone_names),
        fingerprint=model.fingerprint, max_steps=min(model.max_steps, MAX_STEPS),
        card_fingerprint=_card_fingerprint(card_ids, card_kinds, card_defs), card_backs=card_backs,
        many_backs=len(set(card_backs)) > 1, compact_family=tuple(compact_family), has_compact=bool(families),
        see_up=see_up, see_down=see_down, follows=follows, everyone=everyone, card_backed=card_backed,
        tracks_knowledge=any(m != everyone for m in see_up + see_down))


def _sight(zone_info, zone_owner, max_players: int) -> tuple:
    """Per zone, as bitmasks of seats: who sees a face-up card there, who sees a face-down
    one (observation.can_see_card, written as masks), and whether a card leaving it can be
    told apart by everyone (any zone but one seen only by its owner, such as a hand)."""
    everyone = (1 << max_players) - 1
    up, down, follows = [], [], []
    for info, owner in zip(zone_info, zone_owner):
        mine = 1 << owner if owner is not None else 0
        if info.hidden:
            u = d = 0
        elif info.visible == "owner":
            u = d = mine
        else:
            u = everyone
            d = everyone if info.facedown_visible == "all" else mine if info.facedown_visible == "owner" else 0
        up.append(u)
        down.append(d)
        follows.append(info.hidden or info.visible != "owner")
    return tuple(up), tuple(down), tuple(follows)


def _where(dims: tuple, k: int) -> str:
    """The cell of zone `k` of an indexed family, as its name shows it: "(3)", "(1,2)"."""
    if len(dims) == 1:
        return f"({k})"
    if len(dims) == 2:
        return f"({k % dims[0]},{k // dims[0]})"
    return ""


def _card_fingerprint(card_ids, card_kinds, card_defs) -> str:
    """A hash of the physical cards (ids, kinds, fields): a log from other cards is refused.
    A formula counts by its text: its parse names the file as the command was given it, which
    must not make a log from one folder differ from the same game run from another."""
    h = hashlib.sha256()
    for iid, kind, cd in zip(card_ids, card_kinds, card_defs):
        h.update(json.dumps([iid, kind, sorted((k, v.text if isinstance(v, Formula) else str(v))
                                               for k, v in cd.fields.items())]).encode())
    return h.hexdigest()[:16]
