"""The outline of a rules file (lsp: the language server's document symbols).

One symbol per declaration, in the order written; a card kind holds its fields.
"""

from __future__ import annotations

from lsprotocol import types

from .declarations import Decl
from .positions import to_range

S = types.SymbolKind
SYMBOL_KINDS = {"kind": S.Class, "field": S.Field, "zone": S.Struct, "var": S.Variable, "option": S.Constant,
                "event": S.Event, "func": S.Function, "proc": S.Method, "phase": S.Method, "ability": S.Method,
                "setup": S.Constructor, "game": S.Constructor}


def _symbol(d: Decl, lines: list[str]) -> types.DocumentSymbol:
    whole = to_range(d.span, lines)
    name = to_range(d.name_span, lines)
    if not (whole.start.line, whole.start.character) <= (name.start.line, name.start.character):
        whole = name
    return types.DocumentSymbol(name=d.name, kind=SYMBOL_KINDS.get(d.kind, S.Function), range=whole,
                                selection_range=name, detail=d.kind if d.kind != "field" else f"of {d.owner}",
                                children=[])


def document_symbols(decls: list[Decl], lines: list[str]) -> list[types.DocumentSymbol]:
    """The declarations of one file (`decls`, in order) as an outline."""
    out = []
    kinds = {}
    for d in decls:
        symbol = _symbol(d, lines)
        if d.kind == "field" and d.owner in kinds:
            kinds[d.owner].children.append(symbol)
            continue
        if d.kind == "kind":
            kinds[d.name] = symbol
        out.append(symbol)
    return out
