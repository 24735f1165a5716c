"""What the parts of the checker share (AST -> checked model): lexical scopes and slot
frames of the body being checked, type expressions resolved to types, constant values of
declarations, the built-in events, and the words of messages.
"""

from __future__ import annotations

from . import ast as A
from .diagnostics import Reporter, did_you_mean
from .types import ANY, BOOL, CARD, INT, NONE, SIMPLE, TEXT, ZONE, Type, join, list_of, tuple_of


ANY_LIST = list_of(ANY)

BUILTIN_EVENTS = {
    "moved": (("card", CARD), ("source", ZONE), ("target", ZONE)),
    "phase_start": (("phase", TEXT),),
    "phase_end": (("phase", TEXT),),
}


class Scope:
    def __init__(self, parent: "Scope | None" = None):
        self.parent = parent
        self.names: dict[str, tuple[int, Type]] = {}

    def lookup(self, name: str):
        scope = self
        while scope is not None:
            if name in scope.names:
                return scope.names[name]
            scope = scope.parent
        return None

    def all_names(self):
        scope, out = self, set()
        while scope is not None:
            out.update(scope.names)
            scope = scope.parent
        return out


class Frame:
    """Slot allocation for one procedure or function body."""

    def __init__(self, proc_kind: str, returns: Type | None):
        self.size = 0
        self.kind = proc_kind
        self.returns = returns
        self.loop_depth = 0

    def alloc(self) -> int:
        self.size += 1
        return self.size - 1


def resolve_type(texpr: A.TypeExpr, reporter: Reporter) -> Type:
    if texpr.args:
        args = [resolve_type(a, reporter) for a in texpr.args]
        if texpr.name == "tuple":
            return tuple_of(*args)
        if texpr.name != "list":
            reporter.error("E301", f"unknown generic type `{texpr.name}`", texpr.span,
                           "`list[T]` and `tuple[A, B, ...]` take types")
            return ANY
        if len(args) != 1:
            reporter.error("E301", f"`list` takes one type, found {len(args)}", texpr.span,
                           "a list's items have one type: `list[int]`; for fixed positions use `tuple[int, text]`")
            return ANY
        return list_of(args[0])
    t = SIMPLE.get(texpr.name)
    if t is None:
        reporter.error("E301", f"unknown type `{texpr.name}`", texpr.span,
                       did_you_mean(texpr.name, list(SIMPLE) + ["list"]) or
                       "types are int, bool, text, card, player, zone, ability, any, list[T] and tuple[A, B, ...]")
        return ANY
    return t


def const_value(expr: A.Expr, reporter: Reporter, what: str):
    """The value of a constant expression (option defaults, field defaults, modifier args)."""
    if isinstance(expr, A.IntLit):
        return expr.value
    if isinstance(expr, A.BoolLit):
        return expr.value
    if isinstance(expr, A.NoneLit):
        return None
    if isinstance(expr, A.StrLit) and all(isinstance(p, str) for p in expr.parts):
        return "".join(expr.parts)
    if isinstance(expr, A.Unary) and expr.op == "-" and isinstance(expr.operand, A.IntLit):
        return -expr.operand.value
    if isinstance(expr, (A.ListLit, A.TupleLit)):
        return tuple(const_value(i, reporter, what) for i in expr.items)
    reporter.error("E302", f"{what} must be a constant (a number, text, true/false or a list of them)",
                   expr.span)
    return None


def zone_args(zone, example: bool = False) -> str:
    params = zone.call_params
    if example:
        return ", ".join("p" if p == "player" else "i" if len(zone.dims) == 1 else ("col", "row")[k - (1 if zone.per_player else 0)]
                         for k, p in enumerate(params))
    words = (["a player"] if zone.per_player else []) + \
        (["an index"] if len(zone.dims) == 1 else ["a column and a row"] if zone.dims else [])
    return " and ".join(words)


def a_(t) -> str:
    """A type with its article, for messages: "an int", "a card"."""
    text = str(t)
    return ("an " if text[:1] in "aeio" else "a ") + text


def type_of_value(value) -> Type:
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, int):
        return INT
    if isinstance(value, str):
        return TEXT
    if isinstance(value, tuple):
        t = NONE
        for v in value:
            t = join(t, type_of_value(v))
        return list_of(ANY if t == NONE else t)
    return NONE

