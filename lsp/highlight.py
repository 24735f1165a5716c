"""Semantic tokens of a rules file (lsp: the language server): highlighting that follows the
checker's reading, not only the TextMate grammar.

Each name is coloured by what it names (lsp/occurrences.py, resolved against the game's
declarations): a card kind or type, a zone, a variable, an option, an event, a procedure
(phase, ability), a function, a field, a parameter or local name, a primitive or built-in
name; the keywords outside texts and comments too. Declarations carry the `declaration`
modifier, the language's own names `defaultLibrary`.
"""

from __future__ import annotations

import re

from rulesvm.dsl.parser import KEYWORDS
from rulesvm.dsl.primitives import ABILITY_NAMES, BUILTIN_ZONES, CARD_PROPERTIES, CONSTANTS, PLAYER_PROPERTIES, PRIMITIVES
from rulesvm.dsl.types import SIMPLE

from .declarations import Decl
from .occurrences import ATTR, CARD, LOCAL, NAME, PARAM, Occurrence
from .positions import client_column

TOKEN_TYPES = ["type", "namespace", "variable", "property", "parameter", "function", "method", "event",
               "keyword", "enumMember"]
TOKEN_MODIFIERS = ["declaration", "readonly", "defaultLibrary"]
BY_KIND = {"kind": "type", "zone": "namespace", "var": "variable", "option": "variable", "event": "event",
           "func": "function", "proc": "method", "phase": "method", "ability": "method", "field": "property"}
_LEXEMES = re.compile(r'"[^"\\\n]*(?:\\.[^"\\\n]*)*"|#[^\n]*|[A-Za-z_][A-Za-z0-9_]*')


def _modifiers(*names: str) -> int:
    return sum(1 << TOKEN_MODIFIERS.index(n) for n in names)


def classify(o: Occurrence, kinds: dict) -> tuple[str, int] | None:
    """(token type, modifier bits) of one name, or None (a card id, an unknown name)."""
    space, name = o.symbol.space, o.symbol.name
    declaration = ("declaration",) if o.declaration else ()
    if space == PARAM:
        return "parameter", _modifiers(*declaration)
    if space == LOCAL:
        return "variable", _modifiers(*declaration)
    if space == ATTR:
        if name in kinds.get(ATTR, {}):
            return "property", _modifiers(*declaration)
        if name in CARD_PROPERTIES or name in PLAYER_PROPERTIES:
            return "property", _modifiers("defaultLibrary")
        return None
    if space != NAME:
        return None
    kind = o.kind or kinds.get(NAME, {}).get(name)
    if kind in BY_KIND:
        return BY_KIND[kind], _modifiers(*declaration, *(("readonly",) if kind == "option" else ()))
    if name in PRIMITIVES:
        return "function", _modifiers("defaultLibrary")
    if name in BUILTIN_ZONES:
        return "namespace", _modifiers("defaultLibrary")
    if name in SIMPLE:
        return "type", _modifiers("defaultLibrary")
    if name in CONSTANTS or name in ABILITY_NAMES:
        return "variable", _modifiers("readonly", "defaultLibrary")
    return None


def declared_kinds(decls: list[Decl]) -> dict:
    """space -> name -> kind of declaration, from the game's declarations."""
    out: dict = {NAME: {}, ATTR: {}}
    for d in decls:
        attr = d.kind == "field" or (d.kind == "var" and d.owner != "global")
        out[ATTR if attr else NAME].setdefault(d.name, d.kind)
    return out


def semantic_tokens(occurrences: list[Occurrence], decls: list[Decl], text: str,
                    first_line: int = 0, last_line: int | None = None) -> list[int]:
    """The protocol's encoded tokens (five numbers each) for lines first..last (0-based)."""
    lines = text.splitlines()
    last_line = len(lines) - 1 if last_line is None else last_line
    kinds = declared_kinds(decls)
    tokens: dict = {}
    for o in occurrences:
        if o.symbol.space == CARD or not first_line <= o.line - 1 <= last_line:
            continue
        found = classify(o, kinds)
        if found is not None:
            tokens[(o.line - 1, o.col - 1)] = (len(o.symbol.name), *found)
    for n in range(max(first_line, 0), min(last_line, len(lines) - 1) + 1):
        for lexeme in _LEXEMES.finditer(lines[n]):
            if lexeme.group() in KEYWORDS and (n, lexeme.start()) not in tokens:
                tokens[(n, lexeme.start())] = (len(lexeme.group()), "keyword", 0)
    data, previous_line, previous_start = [], 0, 0
    for (line, col), (length, kind, modifiers) in sorted(tokens.items()):
        text_line = lines[line] if line < len(lines) else ""
        start = client_column(text_line, col)
        size = client_column(text_line, col + length) - start
        delta_line = line - previous_line
        data += [delta_line, start - previous_start if delta_line == 0 else start, size,
                 TOKEN_TYPES.index(kind), modifiers]
        previous_line, previous_start = line, start
    return data
