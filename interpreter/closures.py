"""The closures back end (checked model -> compiled program): expressions and never-pausing
statements as trees of small Python closures `f(rt, L)` (runtime, local slots).

This is the reference meaning of every expression and statement: direct, one closure per
node, easy to read. The Python-source back end (`pysource.py`) writes the same meaning as
generated source for speed, and calls these closures for whatever it does not write itself
(most primitives, and code Python cannot compile); with `RULESVM_CODEGEN=0` these closures
run everything, which is how the tests check the generator against them.

`expr` compiles a subexpression the way the program is being compiled (through the
generator when there is one); `closure` always builds this back end's own closure.
"""

from __future__ import annotations

from contextlib import contextmanager, nullcontext

from rulesvm.dsl import ast as A
from rulesvm.dsl.model import Formula
from rulesvm.dsl.types import ANY, INT, ZONE

from . import errors as E
from .builtins import card_property, compile_primitive
from .errors import MAX_CALL_DEPTH
from .format import formatter
from .limits import (HEAVY_CALL, bounded_join, bounded_range, charge, charge_count, charge_long, checked_int, equal,
                     grows, joined, may_double, nests, sized, zone_chain)
from .purity import paid_walks
from .runtime import BREAK, CONTINUE, Return, as_rules_error, family_zone, grid_zone, list_item, zone_item


class ClosureBackend:
    def __init__(self, ctx):
        self.ctx = ctx
        self.m = ctx.m
        self.res = ctx.res
        self.consts = ctx.consts
        self.prog = ctx.tables
        self.procs = ctx.procs
        self.gen = None                 # the source generator, when the program uses one
        self._bodies: dict = {}
        self._bodies_once: dict = {}
        self._formula_cache: dict = {}
        # While a function's body is compiled for a call in a paid place (once_call): the
        # walks of that body paid for by the step that paid for the call.
        self._also_once: frozenset = frozenset()
        self._once_sets: dict = {}

    # ================================================================ statements
    def block(self, block: A.Block, rule: str, frame: tuple[int, int] | None = None):
        """A block that never pauses as one function (rt, L) -> signal; `frame`: (number of
        parameters, of slots) when the block is a body called with a list of its own."""
        if self.gen is not None:
            fn = self.gen.block_function(block, rule, frame)
            if fn is not None:
                return fn
        return _seq([self.stmt(s, rule) for s in block.stmts])

    def stmt(self, s, rule: str):
        if isinstance(s, A.Let):
            slot = self.res.slots[s]
            value = self.value(s.value)

            def let(rt, L):
                L[slot] = value(rt, L)
            return let
        if isinstance(s, A.Assign):
            return self.assign(s, self.value(s.value))
        if isinstance(s, A.ExprStmt):
            fn = self.value(s.expr)

            def run(rt, L):
                fn(rt, L)
            return run
        if isinstance(s, A.If):
            return _if([(self.expr(c), self.block(b, rule)) for c, b in s.branches],
                       self.block(s.else_, rule) if s.else_ is not None else None)
        if isinstance(s, A.For):
            return self._for(s, rule)
        if isinstance(s, (A.While, A.Loop, A.Repeat)):
            return self._loop(s, rule)
        if isinstance(s, A.Break):
            return lambda rt, L: BREAK
        if isinstance(s, A.Continue):
            return lambda rt, L: CONTINUE
        if isinstance(s, A.Return):
            if s.value is None:
                return lambda rt, L: Return(None)
            value = self.expr(s.value)
            return lambda rt, L: Return(value(rt, L))
        if isinstance(s, A.Emit):
            args = [self.expr(a) for a in s.args]
            event = s.event
            return lambda rt, L: rt.fire(event, tuple(a(rt, L) for a in args))
        raise AssertionError(type(s))  # pragma: no cover

    def _for(self, s: A.For, rule: str):
        slot = self.res.slots[s]
        seq = self.list_expr(s.iterable)

        def rounds(rt, L):
            for v in seq(rt, L):
                L[slot] = v
                yield
        return _looping(rounds, self.block(s.body, rule), s.span, rule)

    def _loop(self, s, rule: str):
        """`while`, `loop` and `repeat`."""
        if isinstance(s, A.Repeat):
            count = self.expr(s.count)

            def rounds(rt, L):
                return range(count(rt, L))
        else:
            cond = self.expr(s.cond) if isinstance(s, A.While) else (lambda rt, L: True)

            def rounds(rt, L):
                while cond(rt, L):
                    yield
        return _looping(rounds, self.block(s.body, rule), s.span, rule)

    def value(self, e):
        """An expression at statement level: may be a call of a non-pausing procedure."""
        if isinstance(e, A.Call):
            kind = self.res.calls.get(e)
            if kind and kind[0] == "proc":
                return self.direct_call(self.procs[kind[1]], self.args_for(kind[2], self.m.procs[kind[1]].params))
        return self.expr(e)

    def assign(self, s: A.Assign, value):
        kind, detail = self.res.targets[s]
        op = s.op
        at = s.span
        if op != "=":
            # `+=` and `-=` count in 64 bits, as `+` and `-` do (unless adding a bounded amount).
            amount, sign = value, (1 if op == "+=" else -1)
            check = checked_int if may_double(op, s.target, s.value, self.ctx.bounded) else (lambda v, span: v)

            def step(rt, L, old):
                return check(old + sign * amount(rt, L), at)
        if kind == "local":
            slot = detail
            if op == "=":
                def a(rt, L):
                    L[slot] = value(rt, L)
            else:
                def a(rt, L):
                    L[slot] = step(rt, L, L[slot])
            return a
        if kind == "global":
            i = detail

            def a(rt, L):
                g = rt.st.gvars
                g[i] = value(rt, L) if op == "=" else step(rt, L, g[i])
            return a
        obj = self.expr(s.target.obj)
        i = detail
        attr = "pvars" if kind == "pvar" else "cvars"
        name, span = s.target.name, s.target.span

        def a(rt, L):
            who = obj(rt, L)
            if who is None:
                raise E.set_of_none(name, span)
            row = getattr(rt.st, attr)[i]
            row[who] = value(rt, L) if op == "=" else step(rt, L, row[who])
        return a

    def args_for(self, nodes, params):
        """Compiled arguments; a zone given for a list parameter becomes the list of its cards."""
        out = []
        for node, (_, ptype) in zip(nodes, params):
            if ptype.name == "list" and self.res.types.get(node) == ZONE:
                out.append(self.list_expr(node))
            else:
                out.append(self.expr(node))
        return out

    @staticmethod
    def direct_call(proc, args):
        def call(rt, L):
            return proc.direct(rt, [a(rt, L) for a in args])
        return call

    # ================================================================ expressions
    def expr(self, e):
        if self.gen is not None:
            return self.gen.function(e)
        return self.closure(e)

    def pay(self, e):
        """How a walk of items by e is charged: one step per item (limits.charge), or, in a paid
        place (is_once), only from FREE_WALK items on (limits.charge_long)."""
        return charge_long if self.is_once(e) else charge

    def is_once(self, e) -> bool:
        """Is every run of e paid a step before it (purity.paid_walks): written in a statement,
        in the item of a comprehension charged per item, or in the body of a light function
        called from one of those?"""
        return e in self.ctx.paid_walks or e in self._also_once

    def once_call(self, e, func) -> bool:
        """Is this call of `func` one whose body is a paid place: the call is paid for (is_once),
        and the function cannot recurse and makes fewer than HEAVY_CALL calls in all (so what its
        body walks for free is bounded by the size of the rules, as a statement's is)."""
        return (self.is_once(e) and func.name not in self.ctx.recursive_functions
                and self.ctx.call_weights.get(func.name, 1) < HEAVY_CALL and not self.consts.call_is_constant(e))

    @contextmanager
    def once_within(self, func):
        """While `func`'s body is written for a call in a paid place (once_call)."""
        nodes = self._once_sets.get(func.name)
        if nodes is None:
            nodes = self._once_sets[func.name] = paid_walks([func.decl.body], self.ctx.flat)
        saved = self._also_once
        self._also_once = saved | nodes
        try:
            yield
        finally:
            self._also_once = saved

    def list_expr(self, e):
        """Compile e as a sequence: a zone becomes a snapshot tuple of its cards."""
        fn = self.expr(e)
        if self.res.types.get(e) == ZONE:
            return lambda rt, L: tuple(rt.st.zones[fn(rt, L)])
        return fn

    def closure(self, e):
        make = _EXPRESSIONS.get(type(e))
        if make is None:  # pragma: no cover
            raise AssertionError(type(e))
        return make(self, e)

    def _literal(self, e):
        v = e.value
        return lambda rt, L: v

    def _unary(self, e):
        x = self.expr(e.operand)
        if e.op == "-":
            return lambda rt, L: -x(rt, L)
        return lambda rt, L: not x(rt, L)

    def _items(self, e):
        items = [self.expr(i) for i in e.items]
        span = e.span
        if nests(self.res.types.get(e)):
            return lambda rt, L: sized(rt, tuple(i(rt, L) for i in items), span)
        return lambda rt, L: tuple(i(rt, L) for i in items)

    def _comprehension(self, e):
        seq = self.list_expr(e.iterable)
        slot = self.res.slots[e]
        elem = self.expr(e.elem)
        cond = self.expr(e.cond) if e.cond is not None else (lambda rt, L: True)
        span = e.span
        # Memory is bounded by the charges of whatever made the items; what they add up to
        # written out is sized when they may be lists.
        sized_whole = nests(self.res.types.get(e))
        # In a paid place and short: no dearer than the step that paid (limits.charge_long).
        pay = self.pay(e)

        def comp(rt, L):
            out = []
            for v in pay(rt, seq(rt, L), span):
                L[slot] = v
                if cond(rt, L):
                    out.append(elem(rt, L))
            return sized(rt, tuple(out), span) if sized_whole else tuple(out)
        return comp

    def _lambda(self, e):
        slot = self.res.slots[e]
        body = self.expr(e.body)

        def make(rt, L):
            def fn(v):
                L[slot] = v
                return body(rt, L)
            return fn
        return make

    def _if_expr(self, e):
        c, a, b = self.expr(e.cond), self.expr(e.then), self.expr(e.else_)
        return lambda rt, L: a(rt, L) if c(rt, L) else b(rt, L)

    def _string(self, e: A.StrLit):
        parts = []
        for p in e.parts:
            if isinstance(p, str):
                parts.append((None, p))
            else:
                parts.append((self.expr(p), formatter(self.res.types.get(p, ANY), self.ctx.prog_ref)))
        if len(parts) == 1 and parts[0][0] is None:
            text = parts[0][1]
            return lambda rt, L: text
        growing = any(not isinstance(p, str) and grows(self.res.types.get(p, ANY)) for p in e.parts)
        span = e.span

        def string(rt, L):
            out = []
            for fn, x in parts:
                out.append(x if fn is None else x(fn(rt, L), rt))
            text = "".join(out)
            return joined(rt, text, span) if growing else text
        return string

    def _name(self, e: A.Name):
        kind, detail = self.res.names[e]
        if kind == "local":
            slot = detail
            return lambda rt, L: L[slot]
        if kind == "global":
            i = detail
            return lambda rt, L: rt.st.gvars[i]
        if kind == "const" and detail == "players":
            return lambda rt, L: rt.players
        if kind == "const" and detail == "player_count":
            return lambda rt, L: rt.n
        v = self.ctx.options[detail] if kind == "option" else self.ctx.zone_base[detail] if kind == "zone" \
            else detail if kind == "ability" else _unknown((kind, detail))
        return lambda rt, L: v

    def _attr(self, e: A.Attr):
        kind, detail = self.res.attrs[e]
        obj = self.expr(e.obj)
        if kind == "pvar":
            i = detail
            return lambda rt, L: rt.st.pvars[i][obj(rt, L)]
        if kind == "cvar":
            i = detail
            return lambda rt, L: rt.st.cvars[i][obj(rt, L)]
        if kind == "field":
            return self._field(detail, obj)
        if kind == "pprop":
            return lambda rt, L: obj(rt, L) + 1
        return card_property(self, detail, obj)

    def _field(self, detail: str, obj):
        values = self.prog.card_fields[detail]
        formulas = self.formulas(detail)
        if formulas is not None:
            def formula_field(rt, L):
                # A continuous ability: the value is computed from the board now.
                c = obj(rt, L)
                if c is None:
                    return None
                f = formulas[c]
                if f is not None:
                    return f(rt, c)
                return values[c]
            return formula_field
        if self.prog.face_fields.get(detail) is None:
            def field(rt, L):
                c = obj(rt, L)
                return None if c is None else values[c]
            return field
        read = self.face_reader(detail)
        return lambda rt, L: read(rt.st, obj(rt, L))

    def face_reader(self, detail: str):
        """(state, card) -> the field's value printed on the side and end of the card that is
        up now (none for no card); for fields whose value depends on the card's face."""
        values = self.prog.card_fields[detail]
        faced = self.prog.face_fields[detail]
        backs = [any(side == 1 for side, _ in cd.faces) for cd in self.prog.card_defs]

        def read(st, c):
            if c is None:
                return None
            faces = faced[c]
            if faces is not None:
                # A single-sided card face down is still read by its front.
                side = 0 if st.faceup[c] or not backs[c] else 1
                key = (side, st.turn[c])
                if key in faces:
                    return faces[key]
                key = (side, None)
                if key in faces:
                    return faces[key]
            return values[c]
        return read

    def _index(self, e: A.Index):
        obj = self.expr(e.obj)
        idx = self.expr(e.index)
        span = e.span
        if self.res.types.get(e.obj) == ZONE:
            return lambda rt, L: zone_item(rt.st.zones[obj(rt, L)], idx(rt, L), span)
        return lambda rt, L: list_item(obj(rt, L), idx(rt, L), span)

    def _binary(self, e: A.Binary):
        op = e.op
        if op in ("in", "not in"):
            return self._membership(e)
        types = self.res.types
        a = self.expr(e.left) if types.get(e.left) != ZONE or op in ("==", "!=") else self.list_expr(e.left)
        b = self.expr(e.right) if types.get(e.right) != ZONE or op in ("==", "!=") else self.list_expr(e.right)
        span = e.span
        if op == "and":
            return lambda rt, L: a(rt, L) and b(rt, L)
        if op == "or":
            return lambda rt, L: a(rt, L) or b(rt, L)
        if op in ("/", "%"):
            def div(rt, L):
                x, y = a(rt, L), b(rt, L)
                if y == 0:
                    raise E.division_by_zero(op, span)
                return x // y if op == "/" else x % y
            return div
        if op == "..":
            return lambda rt, L: bounded_range(rt, a(rt, L), b(rt, L), span)
        if op == "+" and types.get(e) != INT:
            zones = zone_chain(e, types)
            if zones is not None:
                # zone + zone + ...: one tuple of their cards, charged once (as generated code does).
                terms = [self.expr(z) for z in zones]
                return lambda rt, L: joined(rt, tuple(c for z in terms for c in rt.st.zones[z(rt, L)]), span)
            nested = nests(types.get(e))
            return lambda rt, L: bounded_join(rt, a(rt, L), b(rt, L), span, nested)
        if op in ("==", "!=") and not self.ctx.short(e.left) and not self.ctx.short(e.right):
            if op == "==":
                return lambda rt, L: equal(rt, a(rt, L), b(rt, L), span)
            return lambda rt, L: not equal(rt, a(rt, L), b(rt, L), span)
        f = _OPERATORS[op]
        if op in ("+", "-", "*") and may_double(op, e.left, e.right, self.ctx.bounded):
            return lambda rt, L: checked_int(f(a(rt, L), b(rt, L)), span)
        return lambda rt, L: f(a(rt, L), b(rt, L))

    def _membership(self, e: A.Binary):
        item = self.expr(e.left)
        negate = e.op == "not in"
        if self.res.types.get(e.right) == ZONE:
            zone = self.expr(e.right)

            def in_zone(rt, L):
                c = item(rt, L)
                return (c is not None and rt.st.where[c] == zone(rt, L)) != negate
            return in_zone
        seq, pay, span = self.expr(e.right), self.pay(e), e.span
        return lambda rt, L: (item(rt, L) in pay(rt, seq(rt, L), span)) != negate

    def _call(self, e: A.Call):
        kind = self.res.calls[e]
        if kind[0] == "func":
            func = self.m.funcs[kind[1]]
            args = self.args_for(kind[2], func.params)
            bodies = self.func_body(func, once=self.once_call(e, func))
            name = func.name
            pad = [None] * (self.res.frame_sizes[func.decl] - len(args))
            weight = self.ctx.call_weights.get(name, 1)
            if weight >= HEAVY_CALL:
                span = e.span

                def call(rt, L):
                    charge_count(rt, weight, span)      # a heavy call: its weight first
                    return bodies[name](rt, [a(rt, L) for a in args] + pad)
            else:
                def call(rt, L):
                    return bodies[name](rt, [a(rt, L) for a in args] + pad)
            return once(call) if self.consts.call_is_constant(e) else call
        if kind[0] == "zone":
            return self._zone_call(e, kind[1], [self.expr(a) for a in kind[2]])
        if kind[0] == "prim":
            return compile_primitive(self, e, kind[2])
        raise AssertionError(kind)  # pragma: no cover

    def _zone_call(self, e, name: str, args: list):
        """`hand(p)`, `column(i)`, `cell(col, row)`, `slot(p, i)` -> a zone index, bounds checked."""
        info = self.ctx.zone_info(name)
        base, size, dims = info.base, info.size, info.dims
        span = e.span
        per_player = info.per_player
        if per_player and not dims:
            p = args[0]

            def player_zone(rt, L):
                who = p(rt, L)
                if who is None:
                    raise E.zone_of_none(name, span)
                return base + who
            return player_zone

        if not per_player:
            if len(dims) == 1:
                (at,) = args
                return lambda rt, L: family_zone(base, at(rt, L), dims[0], name, span)
            col, row = args
            return lambda rt, L: grid_zone(base, col(rt, L), row(rt, L), dims, name, span)
        p, rest = args[0], args[1:]

        def zone(rt, L):
            who, values = p(rt, L), [a(rt, L) for a in rest]
            if who is None:
                raise E.zone_of_none(name, span)
            if len(dims) == 1:
                return family_zone(base + who * size, values[0], dims[0], name, span)
            return grid_zone(base + who * size, *values, dims, name, span)
        return zone

    # ================================================================ definitions
    def formulas(self, field: str):
        """Per card, a compiled formula for this field, or None when no card has one."""
        if field in self._formula_cache:
            return self._formula_cache[field]
        if not any(isinstance(cd.fields.get(field), Formula) for cd in self.prog.card_defs):
            self._formula_cache[field] = None
            return None
        # In the cache before any formula is compiled: a formula reading its own field (or one
        # reading it back) finds this table, filled in below, instead of compiling for ever.
        table = self._formula_cache[field] = [None] * len(self.prog.card_defs)
        owners = self.prog.zone_owner
        for i, cd in enumerate(self.prog.card_defs):
            value = cd.fields.get(field)
            if isinstance(value, Formula):
                table[i] = _formula(self.expr(value.expr), max(value.nslots, 2), owners, value.expr.span, field)
        return table

    def default(self, v):
        """A variable's default, evaluated when a game starts: outside the VM loop, so it
        turns its own failures (endless recursion, say) into the rules' errors."""
        fn = self.expr(v.default)
        rule = f"the default of `{v.name}`"

        def default(rt, L):
            try:
                return fn(rt, L)
            except Exception as exc:
                err = as_rules_error(exc, v.default.span, rule)
                if err is exc:
                    raise
                raise err from exc
        return default

    def func_body(self, func, once: bool = False) -> dict:
        """The compiled bodies of `func`s by name, this one included, shared by every call. Each
        call of a function that can recurse counts as a step, so one that recurses exponentially
        meets the step limit like a loop does (other calls do bounded work and are not counted).
        `once`: the bodies compiled for calls in a paid place (once_call), where what a body
        walks is paid for by the step that paid for the call."""
        bodies = self._bodies_once if once else self._bodies
        name = func.name
        if name not in bodies:
            bodies[name] = None          # placeholder: a recursive call finds it at run time
            frame = (len(func.params), self.res.frame_sizes[func.decl])
            with self.once_within(func) if once else nullcontext():
                body = self.gen.function(func.decl.body, frame) if self.gen is not None \
                    else self.closure(func.decl.body)
            bodies[name] = body if name not in self.ctx.recursive_functions else \
                _counted(body, func.decl.span, f"function `{name}`")
        return bodies


def _looping(rounds, body, span, rule: str):
    """A loop: the body once per round (a step each), until `break`, or `return` leaves it."""
    def loop(rt, L):
        for _ in rounds(rt, L):
            rt.tick(span, rule)
            r = body(rt, L)
            if r is not None:
                if r is BREAK:
                    break
                if r is CONTINUE:
                    continue
                return r
    return loop


def _formula(fn, size: int, owners, span, field: str):
    """A card's formula for `field` as (rt, card) -> value. Formulas may read fields with
    formulas, their own included: they nest at most MAX_CALL_DEPTH deep (R004), as calls do."""
    rule = f"the formula of `{field}`"

    def run(rt, c):
        L = [None] * size
        L[0] = c
        L[1] = owners[rt.st.where[c]]
        rt.depth += 1
        if rt.depth > MAX_CALL_DEPTH:
            raise E.too_deep(span, rule)
        value = fn(rt, L)
        rt.depth -= 1           # (as _counted: a failure ends the run, and a run starts at depth 0)
        return value
    return run


def _counted(body, span, rule: str):
    def counted(rt, L):
        rt.steps += 1
        if rt.steps > rt.max_steps:
            rt.tick(span, rule)
        rt.depth += 1
        if rt.depth > MAX_CALL_DEPTH:
            raise E.too_deep(span, rule)
        value = body(rt, L)
        rt.depth -= 1
        return value
    return counted


def _unknown(what):  # pragma: no cover - the checker resolves every name
    raise AssertionError(what)


_OPERATORS = {
    "==": lambda x, y: x == y, "!=": lambda x, y: x != y, "<": lambda x, y: x < y, "<=": lambda x, y: x <= y,
    ">": lambda x, y: x > y, ">=": lambda x, y: x >= y, "+": lambda x, y: x + y, "-": lambda x, y: x - y,
    "*": lambda x, y: x * y,
}

# This back end's table, keyed by the kind of expression node.
_EXPRESSIONS = {
    A.IntLit: ClosureBackend._literal, A.BoolLit: ClosureBackend._literal,
    A.NoneLit: lambda self, e: (lambda rt, L: None), A.StrLit: ClosureBackend._string,
    A.Name: ClosureBackend._name, A.Attr: ClosureBackend._attr, A.Call: ClosureBackend._call,
    A.Index: ClosureBackend._index, A.Unary: ClosureBackend._unary, A.Binary: ClosureBackend._binary,
    A.ListLit: ClosureBackend._items, A.TupleLit: ClosureBackend._items,
    A.Comprehension: ClosureBackend._comprehension, A.Lambda: ClosureBackend._lambda,
    A.IfExpr: ClosureBackend._if_expr,
}


def once(fn):
    """`fn` (a constant expression) evaluated on first use, then its value reused."""
    box = []

    def cached(rt, L):
        if box:
            return box[0]
        value = fn(rt, L)
        box.append(value)
        return value
    return cached


def _if(branches, else_):
    if len(branches) == 1:
        (c1, b1), = branches
        if else_ is None:
            def if1(rt, L):
                if c1(rt, L):
                    return b1(rt, L)
            return if1

        def if2(rt, L):
            if c1(rt, L):
                return b1(rt, L)
            return else_(rt, L)
        return if2

    def ifn(rt, L):
        for c, b in branches:
            if c(rt, L):
                return b(rt, L)
        if else_ is not None:
            return else_(rt, L)
    return ifn


def _seq(fns):
    if not fns:
        return lambda rt, L: None
    if len(fns) == 1:
        return fns[0]
    if len(fns) == 2:
        f1, f2 = fns

        def seq2(rt, L):
            r = f1(rt, L)
            if r is not None:
                return r
            return f2(rt, L)
        return seq2
    fns = tuple(fns)

    def seq(rt, L):
        for f in fns:
            r = f(rt, L)
            if r is not None:
                return r
    return seq
