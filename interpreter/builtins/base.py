"""How a primitive's implementation is declared (checked model -> compiled program).

Every entry of the registry in `rulesvm.dsl.primitives` (its signature, documentation and
what it does besides its result) has one implementation here, declared with `@implements`:

- the *closure maker* (required): given the call's arguments (`Args`, compiled on demand,
  with the registry's defaults) it returns the closure fn(rt, L) doing the work, specialised
  on the static types the checker found;
- an *inline template* (optional): (generator, call, argument nodes) -> Python source for
  the call, or None to call the closure instead; the source generator writes it in place;
- a *statement template* (optional): the same for the call used as a statement, as lines.

The three sit together in the primitive's module, so one place says what a primitive means.
"""

from __future__ import annotations

from rulesvm.dsl import ast as A
from rulesvm.dsl.primitives import PRIMITIVES
from rulesvm.dsl.types import ANY

from ..context import NOT_LITERAL, CompileContext
from ..limits import charge_long

IMPLS: dict = {}          # name -> closure maker (Args) -> fn(rt, L)
INLINE: dict = {}         # name -> (gen, call, args: dict of nodes) -> source | None
STATEMENTS: dict = {}     # name -> (gen, call, args, pad) -> lines | None


def implements(*names: str, inline=None, statement=None):
    def register(fn):
        for name in names:
            IMPLS[name] = fn
            if inline is not None:
                INLINE[name] = inline
            if statement is not None:
                STATEMENTS[name] = statement
        return fn
    return register


class Args:
    """A call's arguments, compiled on demand by back end `c`, with defaults from the registry."""

    def __init__(self, c, node, args):
        self.c = c
        self.node = node
        self.spec = PRIMITIVES[node.func.id]
        self.nodes = dict(zip((p.name for p in self.spec.params), args))
        self.defaults = {p.name: p.default for p in self.spec.params}

    def given(self, name: str) -> bool:
        return self.nodes.get(name) is not None

    def type(self, name: str):
        n = self.nodes.get(name)
        return self.c.res.types.get(n, ANY) if n is not None else ANY

    def fn(self, name: str):
        n = self.nodes.get(name)
        if n is None:
            v = self.defaults[name]
            return lambda rt, L: v
        return self.c.expr(n)

    def seq(self, name: str):
        return self.c.list_expr(self.nodes[name])

    def walked(self, name: str):
        """The argument as a sequence the primitive walks once, charged one step per item
        (limits.charge), unless it is a comprehension written in place: that was charged
        for the items it walked, and the primitive touches no more."""
        xs = self.seq(name)
        node = self.nodes[name]
        if type(node) is A.Comprehension:
            return xs
        span, pay = self.node.span, self.c.pay(self.node)
        if pay is charge_long and self.c.ctx.always_short(node):
            return xs                   # charge_long would charge nothing
        return lambda rt, L: pay(rt, xs(rt, L), span)

    def const(self, name: str):
        """The argument's value if it is a literal (or defaulted), else NOT_LITERAL."""
        return CompileContext.literal(self.nodes.get(name), self.defaults[name])


def compile_primitive(c, node, args):
    impl = IMPLS.get(node.func.id)
    if impl is None:  # pragma: no cover - a test keeps the registry and IMPLS in step
        raise AssertionError(f"no implementation for primitive {node.func.id}")
    return impl(Args(c, node, args))


__all__ = ["IMPLS", "INLINE", "STATEMENTS", "implements", "Args", "compile_primitive", "NOT_LITERAL"]
