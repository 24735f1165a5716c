"""The abstract syntax tree of a rules script (pipeline step: source text -> **AST**).

Every node is a frozen dataclass carrying the `Span` it was parsed from, so the checker,
the compiler and runtime errors can all point back at the designer's text. Nodes compare
by identity (`eq=False`): the checker keeps its findings in side tables keyed by node, as
the resolver in Crafting Interpreters does. `ast_equal` compares two trees structurally,
ignoring spans (used by the formatter's round-trip guarantee).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, is_dataclass

from .diagnostics import Span

node = dataclass(frozen=True, eq=False, slots=True)


# ----------------------------------------------------------------------------- types

@node
class TypeExpr:
    span: Span
    name: str
    args: tuple = ()        # of TypeExpr: list[T] has one, tuple[A, B, ...] one per item

    def __str__(self) -> str:
        return f"{self.name}[{', '.join(map(str, self.args))}]" if self.args else self.name


# ----------------------------------------------------------------------------- expressions

@node
class IntLit:
    span: Span
    value: int


@node
class StrLit:
    """A string; `parts` alternates text and embedded `{expr}` interpolations."""
    span: Span
    parts: tuple  # of str | Expr


@node
class BoolLit:
    span: Span
    value: bool


@node
class NoneLit:
    span: Span


@node
class Name:
    span: Span
    id: str


@node
class Attr:
    span: Span
    obj: "Expr"
    name: str


@node
class Keyword:
    span: Span
    name: str
    value: "Expr"


@node
class Call:
    span: Span
    func: "Expr"
    args: tuple  # of Expr
    kwargs: tuple  # of Keyword


@node
class Index:
    span: Span
    obj: "Expr"
    index: "Expr"


@node
class Unary:
    span: Span
    op: str  # "-" or "not"
    operand: "Expr"


@node
class Binary:
    """Arithmetic (+ - * / %), comparisons (== != < <= > >= in, not in), and/or, range (..)."""
    span: Span
    op: str
    left: "Expr"
    right: "Expr"


@node
class ListLit:
    span: Span
    items: tuple


@node
class TupleLit:
    span: Span
    items: tuple


@node
class Comprehension:
    span: Span
    elem: "Expr"
    var: str
    iterable: "Expr"
    cond: "Expr | None"


@node
class Lambda:
    span: Span
    param: str
    body: "Expr"


@node
class IfExpr:
    span: Span
    cond: "Expr"
    then: "Expr"
    else_: "Expr"


Expr = (IntLit | StrLit | BoolLit | NoneLit | Name | Attr | Call | Index | Unary | Binary
        | ListLit | TupleLit | Comprehension | Lambda | IfExpr)


# ----------------------------------------------------------------------------- statements

@node
class Block:
    span: Span
    stmts: tuple


@node
class Let:
    span: Span
    name: str
    value: Expr


@node
class Assign:
    span: Span
    target: Expr
    op: str  # "=", "+=", "-="
    value: Expr


@node
class If:
    span: Span
    branches: tuple  # of (cond Expr, Block)
    else_: Block | None


@node
class For:
    span: Span
    var: str
    iterable: Expr
    body: Block
    simultaneous: bool = False   # `simultaneous for`: every decision inside is secret


@node
class While:
    span: Span
    cond: Expr
    body: Block


@node
class Repeat:
    span: Span
    count: Expr
    body: Block


@node
class Loop:
    span: Span
    body: Block


@node
class Break:
    span: Span


@node
class Continue:
    span: Span


@node
class Return:
    span: Span
    value: Expr | None


@node
class Emit:
    span: Span
    event: str
    args: tuple


@node
class ExprStmt:
    span: Span
    expr: Expr


Stmt = Let | Assign | If | For | While | Repeat | Loop | Break | Continue | Return | Emit | ExprStmt


# ----------------------------------------------------------------------------- declarations

@node
class Param:
    span: Span
    name: str
    type: TypeExpr


@node
class Modifier:
    span: Span
    name: str
    args: tuple  # of Expr


@node
class FieldDecl:
    span: Span
    name: str
    type: TypeExpr
    default: Expr | None


@node
class KindDecl:
    span: Span
    name: str
    fields: tuple  # of FieldDecl


@node
class ZoneDecl:
    span: Span
    name: str
    modifiers: tuple


@node
class VarDecl:
    span: Span
    name: str
    type: TypeExpr
    default: Expr
    modifiers: tuple


@node
class OptionDecl:
    span: Span
    name: str
    type: TypeExpr
    default: Expr
    modifiers: tuple


@node
class EventDecl:
    span: Span
    name: str
    params: tuple


@node
class ProcDecl:
    """A procedure. `kind` is "proc", "phase", "ability", "setup", "game" or "trigger"."""
    span: Span
    kind: str
    name: str
    params: tuple  # of Param
    returns: TypeExpr | None
    body: Block


@node
class FuncDecl:
    span: Span
    name: str
    params: tuple
    returns: TypeExpr
    body: Expr


@node
class TriggerDecl:
    span: Span
    event: str
    names: tuple  # of (name, Span)
    cond: Expr | None
    body: Block
    label: str | None = None  # `on moved(c) as name`: lets a variant replace the trigger


Decl = KindDecl | ZoneDecl | VarDecl | OptionDecl | EventDecl | ProcDecl | FuncDecl | TriggerDecl


@node
class RulesFile:
    span: Span
    path: str
    decls: tuple


def ast_equal(a, b) -> bool:
    """Structural equality of two trees, ignoring source spans."""
    if type(a) is not type(b):
        return False
    if isinstance(a, Span):     # (a Span is a dataclass too: test it first)
        return True
    if is_dataclass(a):
        return all(ast_equal(getattr(a, f.name), getattr(b, f.name))
                   for f in fields(a) if f.name != "span")
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(ast_equal(x, y) for x, y in zip(a, b))
    return a == b
