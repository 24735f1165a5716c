"""Where the names of a game stand in its rules (lsp: the language server; references, rename,
semantic tokens).

Walks parsed rules (a rules file, or the rules written in a YAML file) and lists every
name in them with where it stands and what it names: a name of the game's one namespace
(kinds, zones, variables, options, events, procedures, functions, phases), an attribute
after a dot (a field, a per-player or per-card variable), a card id or a field or kind
named by a text (`card("x")`, `field_at(c, "rank")`, `c.kind == "knight"`), or a local name (a
parameter, a `let`, a loop variable), which hides a declaration of the same name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rulesvm.dsl import ast as A
from rulesvm.dsl.primitives import PRIMITIVES

NAME, ATTR, CARD, LOCAL, PARAM = "name", "attr", "card", "local", "param"
# The primitive reading its text argument as a card id (`card("x")`).
CARD_ID_PRIMITIVE = "card"
# A card's built-in properties holding a name: compared with a text (`c.kind == "knight"`,
# `c.id in ["a", "b"]`), the text names a kind or a card.
NAMED_BY_TEXT = {"kind": NAME, "id": CARD}
COMPARISONS = ("==", "!=", "in", "not in")


@dataclass(frozen=True)
class Symbol:
    space: str          # NAME, ATTR or CARD (LOCAL, PARAM: a local name, renamed with nothing else)
    name: str


@dataclass(frozen=True)
class Occurrence:
    symbol: Symbol
    path: str           # absolute
    line: int           # 1-based, in code points; a name stands on one line
    col: int
    declaration: bool = False
    kind: str = ""      # of a declaration: "kind", "field", "zone", "var", "proc", ...

    @property
    def end_col(self) -> int:
        return self.col + len(self.symbol.name)


def _name_after(lines: list[str], span, word: str, name: str) -> tuple[int, int] | None:
    """(line, col) of `name` after the keyword `word` from `span`'s start (`let x`, `for c`)."""
    if not 1 <= span.line <= len(lines):
        return None
    found = re.compile(rf"\b{word}\s+({re.escape(name)})\b").search(lines[span.line - 1], max(span.col - 1, 0))
    return (span.line, found.start(1) + 1) if found else None


def _decl_name(lines: list[str], span, name: str) -> tuple[int, int]:
    """(line, col) of a declared name on its declaration's first line."""
    line = lines[span.line - 1] if 1 <= span.line <= len(lines) else ""
    found = re.compile(rf"\b{re.escape(name)}\b").search(line, max(span.col - 1, 0))
    return (span.line, found.start() + 1) if found else (span.line, span.col)


def _var_space(decl: A.VarDecl) -> str:
    return ATTR if {m.name for m in decl.modifiers} & {"per_player", "per_card"} else NAME


class _Walk:
    """One walk over the declarations of one file."""

    def __init__(self, path: str, lines: list[str]):
        self.path = path
        self.lines = lines
        self.out: list[Occurrence] = []

    def add(self, space: str, name: str, where, declaration: bool = False, kind: str = "") -> None:
        if where is not None and where[0] > 0:
            self.out.append(Occurrence(Symbol(space, name), self.path, where[0], where[1], declaration, kind))

    def decl(self, d) -> None:
        if isinstance(d, A.KindDecl):
            self.add(NAME, d.name, _decl_name(self.lines, d.span, d.name), True, "kind")
            for f in d.fields:
                self.add(ATTR, f.name, (f.span.line, f.span.col), True, "field")
                self.type(f.type)
                if f.default is not None:
                    self.expr(f.default, frozenset())
        elif isinstance(d, A.ZoneDecl):
            self.add(NAME, d.name, _decl_name(self.lines, d.span, d.name), True, "zone")
            self.modifiers(d.modifiers)
        elif isinstance(d, (A.VarDecl, A.OptionDecl)):
            space = _var_space(d) if isinstance(d, A.VarDecl) else NAME
            kind = "var" if isinstance(d, A.VarDecl) else "option"
            self.add(space, d.name, _decl_name(self.lines, d.span, d.name), True, kind)
            self.type(d.type)
            self.expr(d.default, frozenset())
            self.modifiers(d.modifiers)
        elif isinstance(d, A.EventDecl):
            self.add(NAME, d.name, _decl_name(self.lines, d.span, d.name), True, "event")
            self.params(d.params)
        elif isinstance(d, A.FuncDecl):
            self.add(NAME, d.name, _decl_name(self.lines, d.span, d.name), True, "func")
            bound = self.params(d.params)
            self.type(d.returns)
            self.expr(d.body, bound)
        elif isinstance(d, A.ProcDecl):
            if d.kind not in ("setup", "game"):
                self.add(NAME, d.name, _decl_name(self.lines, d.span, d.name), True, d.kind)
            bound = self.params(d.params)
            if d.returns is not None:
                self.type(d.returns)
            self.block(d.body, bound)
        elif isinstance(d, A.TriggerDecl):
            self.add(NAME, d.event, _name_after(self.lines, d.span, "on", d.event))
            bound = frozenset()
            for name, span in d.names:
                self.add(PARAM, name, (span.line, span.col), True)
                bound |= {name}
            if d.cond is not None:
                self.expr(d.cond, bound)
            self.block(d.body, bound)

    def params(self, params) -> frozenset:
        for p in params:
            self.add(PARAM, p.name, (p.span.line, p.span.col), True)
            self.type(p.type)
        return frozenset(p.name for p in params)

    def modifiers(self, modifiers) -> None:
        for m in modifiers:
            for arg in m.args:
                self.expr(arg, frozenset())

    def type(self, t) -> None:
        if t is None:
            return
        self.add(NAME, t.name, (t.span.line, t.span.col))
        for arg in t.args:
            self.type(arg)

    def block(self, block: A.Block, bound: frozenset) -> None:
        for s in block.stmts:
            bound = self.stmt(s, bound)

    def stmt(self, s, bound: frozenset) -> frozenset:
        """Walks a statement; returns the names bound after it (a `let` binds its name)."""
        if isinstance(s, A.Let):
            self.expr(s.value, bound)
            self.add(LOCAL, s.name, _name_after(self.lines, s.span, "let", s.name), True)
            return bound | {s.name}
        if isinstance(s, A.For):
            self.expr(s.iterable, bound)
            self.add(LOCAL, s.var, _name_after(self.lines, s.span, "for", s.var), True)
            self.block(s.body, bound | {s.var})
        elif isinstance(s, A.If):
            for cond, body in s.branches:
                self.expr(cond, bound)
                self.block(body, bound)
            if s.else_ is not None:
                self.block(s.else_, bound)
        elif isinstance(s, (A.While, A.Repeat)):
            self.expr(s.cond if isinstance(s, A.While) else s.count, bound)
            self.block(s.body, bound)
        elif isinstance(s, A.Loop):
            self.block(s.body, bound)
        elif isinstance(s, A.Assign):
            self.expr(s.target, bound)
            self.expr(s.value, bound)
        elif isinstance(s, A.Return):
            if s.value is not None:
                self.expr(s.value, bound)
        elif isinstance(s, A.Emit):
            self.add(NAME, s.event, _name_after(self.lines, s.span, "emit", s.event))
            for arg in s.args:
                self.expr(arg, bound)
        elif isinstance(s, A.ExprStmt):
            self.expr(s.expr, bound)
        return bound

    def expr(self, e, bound: frozenset) -> None:
        if isinstance(e, A.Name):
            self.add(LOCAL if e.id in bound else NAME, e.id, (e.span.line, e.span.col))
        elif isinstance(e, A.Attr):
            self.expr(e.obj, bound)
            if e.span.end_line > 0:
                self.add(ATTR, e.name, (e.span.end_line, e.span.end_col - len(e.name)))
        elif isinstance(e, A.Call):
            self.expr(e.func, bound)
            self.text_arguments(e)
            for arg in e.args:
                self.expr(arg, bound)
            for kw in e.kwargs:
                self.expr(kw.value, bound)
        elif isinstance(e, A.Comprehension):
            self.expr(e.iterable, bound)
            self.add(LOCAL, e.var, _name_after(self.lines, e.span, "for", e.var), True)
            inner = bound | {e.var}
            self.expr(e.elem, inner)
            if e.cond is not None:
                self.expr(e.cond, inner)
        elif isinstance(e, A.Lambda):
            self.add(PARAM, e.param, (e.span.line, e.span.col), True)
            self.expr(e.body, bound | {e.param})
        elif isinstance(e, A.StrLit):
            for part in e.parts:
                if not isinstance(part, str):
                    self.expr(part, bound)
        elif isinstance(e, A.Binary) and e.op in COMPARISONS and isinstance(e.left, A.Attr) \
                and e.left.name in NAMED_BY_TEXT:
            self.expr(e.left, bound)
            self.expr(e.right, bound)
            for text in (e.right.items if isinstance(e.right, (A.ListLit, A.TupleLit)) else (e.right,)):
                self.text(NAMED_BY_TEXT[e.left.name], text)
        elif isinstance(e, (A.Index, A.Unary, A.Binary, A.ListLit, A.TupleLit, A.IfExpr)):
            for value in (getattr(e, f) for f in e.__slots__):
                for item in (value if isinstance(value, tuple) else (value,)):
                    if isinstance(item, (A.Name, A.Attr, A.Call, A.Comprehension, A.Lambda, A.StrLit, A.Index,
                                         A.Unary, A.Binary, A.ListLit, A.TupleLit, A.IfExpr)):
                        self.expr(item, bound)

    def text_arguments(self, call: A.Call) -> None:
        """A text argument naming a card (`card("x")`), a field or a kind (`field_at(c, "rank")`)."""
        if not isinstance(call.func, A.Name) or call.func.id not in PRIMITIVES:
            return
        prim = PRIMITIVES[call.func.id]
        named = {kw.name: kw.value for kw in call.kwargs}
        for i, param in enumerate(prim.params):
            space = CARD if call.func.id == CARD_ID_PRIMITIVE and i == 0 else \
                ATTR if param.names == "field" else NAME if param.names == "kind" else None
            arg = call.args[i] if i < len(call.args) else named.get(param.name)
            if space:
                self.text(space, arg)

    def text(self, space: str, arg) -> None:
        """A text naming a card, a field or a kind: its name, inside the quotes."""
        if isinstance(arg, A.StrLit) and len(arg.parts) == 1 and isinstance(arg.parts[0], str) \
                and arg.span.line == arg.span.end_line and arg.parts[0]:
            name = arg.parts[0].split("#", 1)[0] if space == CARD else arg.parts[0]     # `card("x#2")`
            self.add(space, name, (arg.span.line, arg.span.col + 1))


def occurrences_in(tree, path: str, lines: list[str]) -> list[Occurrence]:
    """Every name in a parsed rules file (an `A.RulesFile`) or expression, where it stands;
    `lines`: the text it was parsed from (as padded for a YAML snippet)."""
    walk = _Walk(path, lines)
    if isinstance(tree, A.RulesFile):
        for d in tree.decls:
            walk.decl(d)
    else:
        walk.expr(tree, frozenset())
    return walk.out
