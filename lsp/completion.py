"""Completion items (lsp: the language server): what may be written where the cursor is.

After a dot, the fields of the card kinds, the per-player and per-card variables and the
built-in properties of cards and players; elsewhere, the primitives (with a snippet of
their required arguments), the game's zones, variables, options, procedures, functions and
kinds, and the built-in names.
"""

from __future__ import annotations

from lsprotocol import types

from rulesvm.dsl.primitives import (ABILITY_NAMES, BUILTIN_ZONES, CARD_PROPERTIES, CONSTANTS, PLAYER_PROPERTIES,
                                    PRIMITIVES, Primitive)

from .declarations import Decl
from .hover import WHAT, declaration_hover, primitive_hover

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
