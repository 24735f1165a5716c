"""Renaming a name of a game across its files (lsp: the language server's rename).

A name the game declares (a kind, zone, variable, option, event, procedure, function,
phase, ability, field or card id) is renamed wherever the game's index finds it (rules
files, YAML files, scenarios: lsp/index.py). Refused, with the reason: a primitive, a
built-in name or a keyword; a local name; a name the game does not declare; a name the
language gives a meaning (`evaluate`), or a field that shares its name with a built-in
property; a new name that is not a name, is a keyword, or is already taken; any rename while
a rules file of the game has syntax errors.
"""

from __future__ import annotations

import re

from rulesvm.dsl.files import display_path
from rulesvm.dsl.parser import KEYWORDS, is_identifier
from rulesvm.dsl.primitives import ABILITY_NAMES, BUILTIN_ZONES, CARD_PROPERTIES, CONSTANTS, PLAYER_PROPERTIES, PRIMITIVES
from rulesvm.dsl.schema import ID_PATTERN
from rulesvm.dsl.types import SIMPLE

from .index import GLOBAL, GameIndex
from .occurrences import ATTR, CARD, NAME, Occurrence

WHAT = {NAME: "name", ATTR: "field or variable", CARD: "card id"}
# Names the language gives a meaning when a game declares them.
MEANINGFUL = {"evaluate": "the function bots call to judge a position (`bots: playout:`)"}


class Refused(Exception):
    """Why a rename cannot be done (shown to the designer)."""


def builtin_meaning(word: str) -> str | None:
    """What a name the language itself defines is, or None."""
    if word in KEYWORDS:
        return "a keyword of the rules language"
    if word in PRIMITIVES:
        return "a primitive of the rules language"
    if word in CONSTANTS or word in ABILITY_NAMES or word in BUILTIN_ZONES:
        return "a built-in name of the rules language"
    if word in SIMPLE:
        return "a built-in type of the rules language"
    if word in CARD_PROPERTIES or word in PLAYER_PROPERTIES:
        return "a built-in property of the rules language"
    return None


def renamable(index: GameIndex, occ: Occurrence | None, word: str | None) -> Occurrence:
    """The occurrence to rename, or Refused saying why not."""
    if occ is None or occ.symbol.space not in GLOBAL:
        meaning = builtin_meaning(word) if word else None
        if meaning:
            raise Refused(f"`{word}` is {meaning}; only the game's own names can be renamed")
        if occ is not None:
            raise Refused(f"`{word}` is a local name (a parameter, a `let` or a loop variable); "
                          "rename the game's declarations: kinds, zones, variables, procedures, functions, "
                          "phases, fields and card ids")
        raise Refused("there is no name of the game here to rename")
    name = occ.symbol.name
    if occ.symbol.space == NAME and name in MEANINGFUL:
        raise Refused(f"`{name}` is {MEANINGFUL[name]}: under another name it would lose that meaning")
    if occ.symbol.space == ATTR and (name in CARD_PROPERTIES or name in PLAYER_PROPERTIES):
        raise Refused(f"`{name}` is also a built-in property (`c.{name}` or `p.{name}`): its uses after a dot "
                      "cannot be told apart from the declared one's; rename it by hand")
    if not index.declarations(occ.symbol):
        meaning = builtin_meaning(occ.symbol.name)
        if meaning and occ.symbol.space != CARD:
            raise Refused(f"`{occ.symbol.name}` is {meaning}; only the game's own names can be renamed")
        raise Refused(f"`{occ.symbol.name}` is not declared by this game (no {WHAT[occ.symbol.space]} of that name); "
                      "nothing to rename")
    return occ


def check_new_name(index: GameIndex, occ: Occurrence, new: str) -> None:
    """Refused if `new` cannot replace `occ`'s name."""
    space = occ.symbol.space
    if space == CARD:
        if not re.fullmatch(ID_PATTERN.strip("^$"), new):
            raise Refused(f"`{new}` is not a card id: letters, digits, `_`, `.` and `-`, not starting with a digit")
    elif not is_identifier(new):
        if new in KEYWORDS:
            raise Refused(f"`{new}` is a keyword of the rules language and cannot be a name")
        raise Refused(f"`{new}` is not a name: letters, digits and `_`, not starting with a digit")
    if new == occ.symbol.name:
        return
    meaning = builtin_meaning(new) if space == NAME else \
        builtin_meaning(new) if space == ATTR and (new in CARD_PROPERTIES or new in PLAYER_PROPERTIES) else None
    if meaning:
        raise Refused(f"`{new}` is {meaning}; choose another name")
    if space == NAME and new in MEANINGFUL:
        raise Refused(f"`{new}` is {MEANINGFUL[new]}; choose another name")
    taken = index.declared(space).get(new)
    if taken:
        what = ", ".join(sorted(k or WHAT[space] for k in taken))
        raise Refused(f"`{new}` is already declared by this game ({what}); choose another name")


def rename_edits(index: GameIndex, occ: Occurrence, new: str) -> dict:
    """path -> [(line, col, end col)] (1-based code points) of every occurrence of `occ`'s name."""
    check_new_name(index, occ, new)
    if index.unparsed:
        raise Refused(f"{display_path(index.unparsed[0])} has syntax errors: fix them first, or the rename "
                      "would miss the names they hide")
    out: dict = {}
    for o in sorted(set(index.of(occ.symbol)), key=lambda o: (o.path, o.line, o.col)):
        spots = out.setdefault(o.path, [])
        if (o.line, o.col, o.end_col) not in spots:
            spots.append((o.line, o.col, o.end_col))
    return out
