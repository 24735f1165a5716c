"""Completion items (lsp: the language server): what may be written where the cursor is.

After a dot, the fields of the card kinds, the per-player and per-card variables and the
built-in properties of cards and players; elsewhere, the primitives (with a snippet of
their required arguments), the game's zones, variables, options, procedures, functions and
kinds, and the built-in names. In a game's YAML files (scenarios, variants, card sets),
its card ids, and under `options:` its option names.
"""

from __future__ import annotations

import re

from lsprotocol import types

from rulesvm.dsl.primitives import (ABILITY_NAMES, BUILTIN_ZONES, CARD_PROPERTIES, CONSTANTS, PLAYER_PROPERTIES,
                                    PRIMITIVES, Primitive)

from .declarations import Decl
from .hover import WHAT, card_hover, declaration_hover, primitive_hover
from .index import GameIndex
from .positions import code_point_column

K = types.CompletionItemKind
DECL_KINDS = {"kind": K.Class, "field": K.Field, "zone": K.Struct, "var": K.Variable, "option": K.Constant,
              "event": K.Event, "func": K.Function, "proc": K.Method, "phase": K.Method, "ability": K.Method}
NOT_CALLED = {"setup", "game", "event"}      # declared, never written by name in a body


def snippet(prim: Primitive) -> str:
    """`move(${1:cards}, ${2:to})`: the call with its required arguments as placeholders."""
    args = [f"${{{i}:{p.name}}}" for i, p in enumerate((p for p in prim.params if p.required), 1)]
    return f"{prim.name}({', '.join(args)})"


def _markdown(text: str) -> types.MarkupContent:
    return types.MarkupContent(kind=types.MarkupKind.Markdown, value=text)


def attribute_items(decls: list[Decl]) -> list[types.CompletionItem]:
    """What may follow a dot: fields, per-player and per-card variables, built-in properties."""
    items, seen = [], set()
    for d in decls:
        if (d.kind == "field" or (d.kind == "var" and d.owner != "global")) and (d.name, d.owner) not in seen:
            seen.add((d.name, d.owner))
            detail = f"field of {d.owner}" if d.kind == "field" else f"variable, {d.owner}"
            items.append(types.CompletionItem(d.name, kind=DECL_KINDS[d.kind], detail=detail,
                                              documentation=_markdown(declaration_hover(d))))
    for table, what in ((CARD_PROPERTIES, "card property"), (PLAYER_PROPERTIES, "player property")):
        for name, (type_, doc) in table.items():
            items.append(types.CompletionItem(name, kind=K.Property, detail=f"{what}: {type_}", documentation=doc))
    return items


def name_items(decls: list[Decl]) -> list[types.CompletionItem]:
    """Every name a body may use: the game's declarations, the primitives, the built-in names."""
    items = []
    for d in decls:
        if d.kind in NOT_CALLED or d.kind == "field":
            continue
        items.append(types.CompletionItem(d.name, kind=DECL_KINDS.get(d.kind, K.Function),
                                          detail=WHAT.get(d.kind, d.kind),
                                          documentation=_markdown(declaration_hover(d))))
    for prim in PRIMITIVES.values():
        items.append(types.CompletionItem(
            prim.name, kind=K.Function, detail=prim.signature, documentation=_markdown(primitive_hover(prim)),
            insert_text=snippet(prim), insert_text_format=types.InsertTextFormat.Snippet))
    for table, kind in ((CONSTANTS, K.Constant), (ABILITY_NAMES, K.Variable)):
        for name, (type_, doc) in table.items():
            items.append(types.CompletionItem(name, kind=kind, detail=str(type_), documentation=doc))
    for name, doc in BUILTIN_ZONES.items():
        items.append(types.CompletionItem(name, kind=K.Struct, detail="built-in zone", documentation=doc))
    return items


def completion_items(decls: list[Decl], is_attribute: bool) -> list[types.CompletionItem]:
    return attribute_items(decls) if is_attribute else name_items(decls)


def parent_key(lines: list[str], line: int, col: int) -> str | None:
    """The YAML key the cursor is under: the key its line gives a value to (`options: {la`),
    or the nearest key less indented above it."""
    text = lines[line][:col] if line < len(lines) else ""
    own = re.match(r"\s*(?:-\s+)?([\w-]+):", text)
    if own:
        return own.group(1)
    indent = len(text) - len(text.lstrip(" -"))
    for above in reversed(lines[:line]):
        stripped = above.lstrip(" -")
        if stripped and not stripped.startswith("#") and len(above) - len(stripped) < indent:
            found = re.match(r"([\w-]+):", stripped)
            return found.group(1) if found else None
    return None


def yaml_items(index: GameIndex, decls: list[Decl], lines: list[str], position: types.Position
               ) -> list[types.CompletionItem]:
    """In a game's YAML file: option names under `options:`, else its card ids."""
    line = lines[position.line] if position.line < len(lines) else ""
    key = parent_key(lines, position.line, code_point_column(line, position.character))
    if key == "options":
        return [types.CompletionItem(d.name, kind=K.Constant, detail="option",
                                     documentation=_markdown(declaration_hover(d))) for d in decls if d.kind == "option"]
    return [types.CompletionItem(card.id, kind=K.Value, detail="card id", documentation=_markdown(card_hover(card)))
            for card in sorted(index.cards.values(), key=lambda c: c.id)]
