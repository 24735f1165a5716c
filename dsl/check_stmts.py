"""The checker's statements (AST -> checked model): scopes and local slots of `let` and
loop variables, assignments to variables and fields, loops, `return`, `emit` and the other
statements of procedure bodies; expressions inside them are typed by check_exprs.py.
"""

from __future__ import annotations

from . import ast as A
from .check_support import Frame, Scope, a_
from .diagnostics import did_you_mean
from .primitives import CARD_PROPERTIES, PLAYER_PROPERTIES
from .types import ANY, BOOL, CARD, INT, NONE, PLAYER, VOID, assignable, elem_of, is_listish


class StatementChecks:
    """Part of `Checker`: statements of procedure bodies."""

    def block(self, block: A.Block, scope: Scope, frame: Frame) -> None:
        for stmt in block.stmts:
            self.stmt(stmt, scope, frame)

    def stmt(self, s, scope: Scope, frame: Frame) -> None:
        if isinstance(s, A.Let):
            t = self.expr(s.value, scope, frame, statement=True)
            if t == VOID:
                self.r.error("E306", "this action returns no value", s.value.span)
                t = ANY
            slot = frame.alloc()
            self.res.slots[s] = slot
            scope.names[s.name] = (slot, NONE if t == NONE else t)
        elif isinstance(s, A.Assign):
            self._assign(s, scope, frame)
        elif isinstance(s, A.If):
            for cond, body in s.branches:
                self._expect(self.expr(cond, scope, frame), BOOL, cond, "an `if` condition")
                self.block(body, Scope(scope), frame)
            if s.else_ is not None:
                self.block(s.else_, Scope(scope), frame)
        elif isinstance(s, A.For):
            t = self.expr(s.iterable, scope, frame)
            if not is_listish(t):
                self.r.error("E307", f"`for` needs a list or a zone, found {t}", s.iterable.span)
            inner = Scope(scope)
            slot = frame.alloc()
            frame.alloc()   # the iteration index (used when the loop can pause)
            frame.alloc()   # the materialised sequence
            self.res.slots[s] = slot
            inner.names[s.var] = (slot, elem_of(t))
            frame.loop_depth += 1
            self.block(s.body, inner, frame)
            frame.loop_depth -= 1
        elif isinstance(s, A.While):
            self._expect(self.expr(s.cond, scope, frame), BOOL, s.cond, "a `while` condition")
            frame.loop_depth += 1
            self.block(s.body, Scope(scope), frame)
            frame.loop_depth -= 1
        elif isinstance(s, A.Repeat):
            self._expect(self.expr(s.count, scope, frame), INT, s.count, "a `repeat` count")
            self.res.slots[s] = frame.alloc()
            frame.loop_depth += 1
            self.block(s.body, Scope(scope), frame)
            frame.loop_depth -= 1
        elif isinstance(s, A.Loop):
            frame.loop_depth += 1
            self.block(s.body, Scope(scope), frame)
            frame.loop_depth -= 1
        elif isinstance(s, (A.Break, A.Continue)):
            if frame.loop_depth == 0:
                word = "break" if isinstance(s, A.Break) else "continue"
                self.r.error("E208", f"`{word}` outside a loop", s.span)
        elif isinstance(s, A.Return):
            if s.value is not None:
                t = self.expr(s.value, scope, frame)
                if frame.returns is None:
                    self.r.error("E308", "this procedure declares no result; `return` takes no value here",
                                 s.value.span, "declare one with `-> type` after the parameters")
                elif not assignable(t, frame.returns):
                    self.r.error("E303", f"should return {frame.returns}, found {t}", s.value.span)
        elif isinstance(s, A.Emit):
            self._emit(s, scope, frame)
        elif isinstance(s, A.ExprStmt):
            t = self.expr(s.expr, scope, frame, statement=True)
            if not isinstance(s.expr, A.Call) or t not in (VOID, ANY, NONE) and \
                    self.res.calls.get(s.expr, ("",))[0] not in ("prim", "proc"):
                self.r.warning("W405", "this expression's value is not used", s.span)
        else:  # pragma: no cover - the parser builds no other statements
            raise AssertionError(type(s))

    def _assign(self, s: A.Assign, scope: Scope, frame: Frame) -> None:
        value_t = self.expr(s.value, scope, frame, statement=True)
        target = s.target
        target_t = ANY
        if isinstance(target, A.Name):
            local = scope.lookup(target.id)
            if local is not None:
                self.res.targets[s] = ("local", local[0])
                target_t = local[1]
                if target_t == NONE:       # `let x = none` then assigned: learn the type
                    target_t = value_t
            elif target.id in self.vars and self.vars[target.id].scope == "global":
                self.res.targets[s] = ("global", self.vars[target.id].index)
                target_t = self.vars[target.id].type
            elif target.id in self.options:
                self.r.error("E209", f"option `{target.id}` cannot be changed by the rules", target.span,
                             "options are set before a game starts; use a variable")
                return
            else:
                self.r.error("E210", f"unknown variable `{target.id}`", target.span,
                             did_you_mean(target.id, scope.all_names() | set(self.vars)) or
                             f"declare it with `let {target.id} = ...` or `var {target.id}: type = ...`")
                return
        elif isinstance(target, A.Attr):
            obj_t = self.expr(target.obj, scope, frame)
            var = self.vars.get(target.name)
            if obj_t == PLAYER and var is not None and var.scope == "player":
                self.res.targets[s] = ("pvar", var.index)
                target_t = var.type
            elif obj_t == CARD and var is not None and var.scope == "card":
                self.res.targets[s] = ("cvar", var.index)
                target_t = var.type
            elif obj_t == CARD and (target.name in self.field_types or target.name in CARD_PROPERTIES):
                self.r.error("E209", f"`{target.name}` is printed on the card and cannot be changed", target.span,
                             f"declare `var {target.name}_now: ..., per_card` for a value that changes")
                return
            elif obj_t == PLAYER and target.name in PLAYER_PROPERTIES:
                self.r.error("E209", f"`{target.name}` is a built-in property and cannot be changed", target.span)
                return
            else:
                scope_word = "per_player" if obj_t == PLAYER else "per_card" if obj_t == CARD else None
                candidates = [v.name for v in self.vars.values() if scope_word and v.scope == scope_word[4:]]
                self.r.error("E211", f"`{target.name}` is not a variable of {a_(obj_t)}", target.span,
                             did_you_mean(target.name, candidates) or
                             (f"declare it with `var {target.name}: type = ..., {scope_word}`" if scope_word else None))
                return
        else:
            self.r.error("E212", "you can only assign to a variable, `p.var` or `c.var`", target.span)
            return
        self.res.types[target] = target_t
        if s.op in ("+=", "-="):
            self._expect(target_t, INT, target, f"`{s.op}`")
            self._expect(value_t, INT, s.value, f"`{s.op}`")
        elif not assignable(value_t, target_t):
            self.r.error("E303", f"cannot assign {a_(value_t)} to {a_(target_t)} variable", s.value.span)

    def _emit(self, s: A.Emit, scope: Scope, frame: Frame) -> None:
        event = self.events.get(s.event)
        for a in s.args:
            self.expr(a, scope, frame)
        if event is None:
            self.r.error("E207", f"unknown event `{s.event}`", s.span,
                         did_you_mean(s.event, self.events) or "declare it with `event name(...)`")
            return
        if event.builtin:
            self.r.error("E213", f"`{s.event}` is a built-in event; the engine emits it", s.span)
            return
        self.emitted.add(s.event)
        if len(s.args) != len(event.params):
            self.r.error("E305", f"event `{s.event}` takes {len(event.params)} argument(s), got {len(s.args)}", s.span)
            return
        for a, (pname, pt) in zip(s.args, event.params):
            t = self.res.types.get(a, ANY)
            if not assignable(t, pt):
                self.r.error("E303", f"argument `{pname}` of event `{s.event}` should be {pt}, found {t}", a.span)

