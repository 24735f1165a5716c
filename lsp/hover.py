"""Hover texts (lsp: the language server): what a name under the cursor is.

A primitive shows its signature, meaning, parameters and example from the registry
(dsl/primitives.py); a declaration of the rules its declaration line, doc comment and
where it is declared; a built-in name (`players`, `c.owner`, `box`) its meaning.
"""

from __future__ import annotations

from rulesvm.dsl.files import display_path
from rulesvm.dsl.primitives import (ABILITY_NAMES, BUILTIN_ZONES, CARD_PROPERTIES, CONSTANTS, PLAYER_PROPERTIES,
                                    PRIMITIVES, Primitive)

from .declarations import Decl
from .yaml_names import CardEntry

WHAT = {"kind": "card kind", "field": "field", "zone": "zone", "var": "variable", "option": "option",
        "event": "event", "func": "function", "proc": "procedure", "phase": "phase", "ability": "ability",
        "setup": "setup", "game": "game"}


def primitive_hover(prim: Primitive) -> str:
    """The registry's entry for a primitive, as Markdown."""
    out = [f"```rules\n{prim.signature}\n```", f"*{prim.category}* — {prim.doc}"]
    params = [f"- `{p.name}`: {p.doc}" for p in prim.params if p.doc]
    if params:
        out.append("\n".join(params))
    if prim.example:
        out.append(f"Example: `{prim.example}`")
    return "\n\n".join(out)


def declaration_hover(decl: Decl) -> str:
    what = WHAT.get(decl.kind, decl.kind)
    if decl.kind == "field":
        what = f"field of card kind `{decl.owner}`"
    elif decl.kind == "var" and decl.owner != "global":
        what = f"variable, {decl.owner}"
    out = [f"```rules\n{decl.line.strip()}\n```", f"*{what}*, {display_path(decl.path)} line {decl.span.line}"]
    if decl.doc:
        out.append(decl.doc)
    return "\n\n".join(out)


def card_hover(entry: CardEntry) -> str:
    """A card's entry as written in its YAML file, and where."""
    return f"```yaml\n{entry.text.strip()}\n```\n\n*card*, {display_path(entry.path)} line {entry.line}"


def _builtin(description: tuple, name: str, what: str) -> str:
    type_, doc = description
    return f"```rules\n{name}: {type_}\n```\n\n*{what}* — {doc}"


def hover_text(word: str, is_attribute: bool, decls: list[Decl]) -> str | None:
    """Markdown for the name `word` (after a dot if `is_attribute`), or None if unknown."""
    if is_attribute:
        texts = [declaration_hover(d) for d in decls if d.name == word and
                 (d.kind == "field" or (d.kind == "var" and d.owner != "global"))]
        if word in CARD_PROPERTIES:
            texts.append(_builtin(CARD_PROPERTIES[word], word, "card property"))
        if word in PLAYER_PROPERTIES:
            texts.append(_builtin(PLAYER_PROPERTIES[word], word, "player property"))
        return "\n\n---\n\n".join(texts) or None
    for d in decls:
        if d.name == word and d.kind != "field":
            return declaration_hover(d)
    if word in PRIMITIVES:
        return primitive_hover(PRIMITIVES[word])
    if word in CONSTANTS:
        return _builtin(CONSTANTS[word], word, "built-in name")
    if word in ABILITY_NAMES:
        return _builtin(ABILITY_NAMES[word], word, "in an ability or a computed field")
    if word in BUILTIN_ZONES:
        return f"```rules\nzone {word}\n```\n\n*built-in zone* — {BUILTIN_ZONES[word]}"
    return None
