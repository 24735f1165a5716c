"""The checker's expression typing (AST -> checked model): gives every expression its
static type and resolves every name (local slot, variable, zone, option, constant) and
attribute (card field, built-in property) into the `Resolution` side tables; calls are
checked by check_calls.py.
"""

from __future__ import annotations

from . import ast as A
from .check_support import Frame, Scope, a_, zone_args
from .diagnostics import did_you_mean
from .primitives import CARD_PROPERTIES, CONSTANTS, PLAYER_PROPERTIES, PRIMITIVES
from .types import (ABILITY, ANY, BOOL, CARD, CARDS, INT, NONE, PLAYER, TEXT, ZONE, Type,
                    assignable, elem_of, is_listish, join, lambda_of, list_of, tuple_of)


class ExpressionChecks:
    """Part of `Checker`: types of expressions."""

    def _expect(self, t: Type, want: Type, expr, what: str) -> None:
        if not assignable(t, want):
            self.r.error("E303", f"{what} should be {want}, found {t}", expr.span)

    def expr(self, e, scope: Scope, frame: Frame, statement: bool = False) -> Type:
        t = self._expr(e, scope, frame, statement)
        self.res.types[e] = t
        return t

    def _expr(self, e, scope, frame, statement) -> Type:
        if isinstance(e, A.IntLit):
            return INT
        if isinstance(e, A.BoolLit):
            return BOOL
        if isinstance(e, A.NoneLit):
            return NONE
        if isinstance(e, A.StrLit):
            for part in e.parts:
                if not isinstance(part, str):
                    self.expr(part, scope, frame)
            return TEXT
        if isinstance(e, A.Name):
            return self._name(e, scope)
        if isinstance(e, A.Attr):
            return self._attr(e, scope, frame)
        if isinstance(e, A.Call):
            return self._call(e, scope, frame, statement)
        if isinstance(e, A.Index):
            obj = self.expr(e.obj, scope, frame)
            self._expect(self.expr(e.index, scope, frame), INT, e.index, "an index")
            if obj.name == "tuple":
                if isinstance(e.index, A.IntLit) and e.index.value < len(obj.items):
                    return obj.items[e.index.value]
                return ANY
            if not is_listish(obj):
                self.r.error("E307", f"cannot index {a_(obj)}", e.obj.span)
                return ANY
            return elem_of(obj)
        if isinstance(e, A.Unary):
            t = self.expr(e.operand, scope, frame)
            if e.op == "-":
                self._expect(t, INT, e.operand, "`-`")
                return INT
            self._expect(t, BOOL, e.operand, "`not`")
            return BOOL
        if isinstance(e, A.Binary):
            return self._binary(e, scope, frame)
        if isinstance(e, (A.ListLit, A.TupleLit)):
            ts = [self.expr(i, scope, frame) for i in e.items]
            if isinstance(e, A.TupleLit):
                return tuple_of(*ts)
            t = NONE
            for item, it in zip(e.items, ts):
                joined = join(t, it)
                if joined == ANY and ANY not in (t, it):
                    self.r.error("E303", f"list items should all be {t}, found {it}", item.span)
                t = joined
            return list_of(ANY if t == NONE else t)
        if isinstance(e, A.Comprehension):
            it = self.expr(e.iterable, scope, frame)
            if not is_listish(it):
                self.r.error("E307", f"`for` needs a list or a zone, found {it}", e.iterable.span)
            inner = Scope(scope)
            slot = frame.alloc()
            self.res.slots[e] = slot
            inner.names[e.var] = (slot, elem_of(it))
            if e.cond is not None:
                self._expect(self.expr(e.cond, inner, frame), BOOL, e.cond, "a filter")
            return list_of(self.expr(e.elem, inner, frame))
        if isinstance(e, A.Lambda):
            # A bare lambda outside a primitive argument has an unknown parameter type.
            return self._lambda(e, ANY, scope, frame)
        if isinstance(e, A.IfExpr):
            self._expect(self.expr(e.cond, scope, frame), BOOL, e.cond, "an `if` condition")
            a = self.expr(e.then, scope, frame)
            b = self.expr(e.else_, scope, frame)
            j = join(a, b)
            if j == ANY and ANY not in (a, b):
                self.r.error("E303", f"both branches should have one type, found {a} and {b}", e.span)
            return j
        raise AssertionError(type(e))  # pragma: no cover

    def _lambda(self, e: A.Lambda, param_t: Type, scope, frame) -> Type:
        inner = Scope(scope)
        slot = frame.alloc()
        self.res.slots[e] = slot
        inner.names[e.param] = (slot, param_t)
        return lambda_of(param_t, self.expr(e.body, inner, frame))

    def _name(self, e: A.Name, scope: Scope) -> Type:
        local = scope.lookup(e.id)
        if local is not None:
            self.res.names[e] = ("local", local[0])
            return local[1]
        var = self.vars.get(e.id)
        if var is not None:
            if var.scope != "global":
                self.r.error("E214", f"`{e.id}` is a {'per-player' if var.scope == 'player' else 'per-card'} "
                             f"variable: write `{'p' if var.scope == 'player' else 'c'}.{e.id}`", e.span)
                return var.type
            self.res.names[e] = ("global", var.index)
            return var.type
        if e.id in self.options:
            self.res.names[e] = ("option", e.id)
            return self.options[e.id].type
        zone = self.zones.get(e.id)
        if zone is not None:
            if zone.call_params:
                self.r.error("E215", f"zone `{e.id}` needs {zone_args(zone)}: write `{e.id}({zone_args(zone, True)})`",
                             e.span)
                return ZONE
            self.res.names[e] = ("zone", e.id)
            return ZONE
        if e.id in CONSTANTS:
            self.res.names[e] = ("const", e.id)
            return CONSTANTS[e.id][0]
        proc = self.procs.get(e.id)
        if proc is not None and proc.kind in ("ability", "snippet"):
            self.res.names[e] = ("ability", e.id)
            self.use(e.id)
            return ABILITY
        if e.id in self.kinds:
            self.r.error("E216", f"`{e.id}` is a card kind; compare with `c.kind == \"{e.id}\"`", e.span)
            return ANY
        if e.id in self.procs or e.id in self.funcs or e.id in PRIMITIVES:
            self.r.error("E216", f"`{e.id}` must be called: `{e.id}(...)`", e.span)
            return ANY
        candidates = scope.all_names() | set(self.vars) | set(self.options) | set(self.zones) | set(CONSTANTS)
        self.r.error("E217", f"unknown name `{e.id}`", e.span, did_you_mean(e.id, candidates))
        return ANY

    def _attr(self, e: A.Attr, scope, frame) -> Type:
        obj = self.expr(e.obj, scope, frame)
        var = self.vars.get(e.name)
        if obj == PLAYER:
            if var is not None and var.scope == "player":
                self.res.attrs[e] = ("pvar", var.index)
                return var.type
            if e.name in PLAYER_PROPERTIES:
                self.res.attrs[e] = ("pprop", e.name)
                return PLAYER_PROPERTIES[e.name][0]
            cands = [v.name for v in self.vars.values() if v.scope == "player"] + list(PLAYER_PROPERTIES)
            self.r.error("E218", f"players have no variable `{e.name}`", e.span,
                         did_you_mean(e.name, cands) or f"declare it: `var {e.name}: int = 0, per_player`")
            return ANY
        if obj == CARD:
            if var is not None and var.scope == "card":
                self.res.attrs[e] = ("cvar", var.index)
                return var.type
            if e.name in CARD_PROPERTIES:
                self.res.attrs[e] = ("cprop", e.name)
                return CARD_PROPERTIES[e.name][0]
            if e.name in self.field_types:
                self.res.attrs[e] = ("field", e.name)
                return self.field_types[e.name]
            cands = list(self.field_types) + list(CARD_PROPERTIES) + \
                [v.name for v in self.vars.values() if v.scope == "card"]
            self.r.error("E219", f"cards have no field `{e.name}`", e.span,
                         did_you_mean(e.name, cands) or "declare it in a `kind`, or as `var ..., per_card`")
            return ANY
        if obj == ANY:
            self.r.error("E220", f"cannot tell whether `.{e.name}` is read from a card or a player here",
                         e.span, "give the value a type (a typed parameter, or a `let` from a typed value)")
            return ANY
        self.r.error("E220", f"{a_(obj)} has no `.{e.name}`", e.span)
        return ANY

    def _binary(self, e: A.Binary, scope, frame) -> Type:
        lt = self.expr(e.left, scope, frame)
        rt = self.expr(e.right, scope, frame)
        op = e.op
        if op in ("and", "or"):
            self._expect(lt, BOOL, e.left, f"`{op}`")
            self._expect(rt, BOOL, e.right, f"`{op}`")
            return BOOL
        if op == "..":
            self._expect(lt, INT, e.left, "a range")
            self._expect(rt, INT, e.right, "a range")
            return list_of(INT)
        if op in ("in", "not in"):
            if not is_listish(rt):
                self.r.error("E307", f"`{op}` needs a list or a zone on the right, found {rt}", e.right.span)
            elif not assignable(lt, elem_of(rt)) and not assignable(elem_of(rt), lt):
                self.r.error("E303", f"cannot look for {a_(lt)} in {a_(rt)}", e.span)
            return BOOL
        if op in ("==", "!="):
            if not (assignable(lt, rt) or assignable(rt, lt)):
                self.r.error("E303", f"comparing {a_(lt)} with {a_(rt)} is always {'false' if op == '==' else 'true'}",
                             e.span)
            return BOOL
        if op in ("<", "<=", ">", ">="):
            ok = lambda t: t in (INT, TEXT, ANY, NONE) or t.name == "tuple"
            if not ok(lt) or not ok(rt) or not (assignable(lt, rt) or assignable(rt, lt)):
                self.r.error("E303", f"cannot order {a_(lt)} and {a_(rt)} with `{op}`", e.span)
            return BOOL
        if op == "+":
            if lt.name == "list" or rt.name == "list" or ZONE in (lt, rt):
                if not (is_listish(lt) and is_listish(rt)):
                    self.r.error("E303", f"cannot add {a_(lt)} and {a_(rt)}", e.span)
                    return ANY
                return join(lt if lt != ZONE else CARDS, rt if rt != ZONE else CARDS)
            if lt == TEXT or rt == TEXT:
                if not (assignable(lt, TEXT) and assignable(rt, TEXT)):
                    self.r.error("E303", f"cannot add {a_(lt)} and {a_(rt)}", e.span,
                                 "write `\"{x}\"` to turn a value into text")
                return TEXT
        self._expect(lt, INT, e.left, f"`{op}`")
        self._expect(rt, INT, e.right, f"`{op}`")
        return INT

