"""The checker: AST -> checked model (pipeline step two).

Like the resolver in Crafting Interpreters, it walks every declaration and body once,
resolves each name (local slot, variable, zone, option, procedure, primitive), gives each
expression a static type, and collects *all* diagnostics instead of stopping at the first.
Its findings go into the `Resolution` side tables of the `GameModel` that the compiler
reads. Codes: E2xx names and declarations, E3xx types and calls, W4xx warnings.

`Checker` is assembled from one part per job: check_decls.py collects the declarations,
check_stmts.py checks statements, check_exprs.py types expressions, check_calls.py checks
calls against their signatures (primitives from the registry), check_support.py holds what
they share. This module runs the passes in order and decides what the game can reach.
"""

from __future__ import annotations

from . import ast as A
from .check_calls import CallChecks
from .check_decls import DeclarationPass
from .check_exprs import ExpressionChecks
from .check_stmts import StatementChecks
from .check_support import BUILTIN_EVENTS, Frame, Scope
from .diagnostics import Reporter, Span, did_you_mean
from .model import (EventDef, FuncDef, KindDef, OptionDef, ProcDef, Resolution, TriggerDef, VarDef,
                    ZoneDef)
from .primitives import BUILTIN_ZONES
from .types import ANY, BOOL, INT, PLAYER, Type, assignable


class Checker(DeclarationPass, StatementChecks, ExpressionChecks, CallChecks):
    """Collects declarations from rules files, then checks every body."""

    def __init__(self, reporter: Reporter):
        self.r = reporter
        self.res = Resolution()
        self.kinds: dict[str, KindDef] = {}
        self.field_types: dict[str, Type] = {}
        self.field_spans: dict[str, Span] = {}
        self.zones: dict[str, ZoneDef] = {}
        self.vars: dict[str, VarDef] = {}
        self.options: dict[str, OptionDef] = {}
        self.events: dict[str, EventDef] = {}
        self.procs: dict[str, ProcDef] = {}
        self.funcs: dict[str, FuncDef] = {}
        self.triggers: list[TriggerDef] = []
        self.calls_made: set[str] = set()     # procs/phases/abilities referenced anywhere
        self.uses: dict = {}                  # caller name (None: game data, defaults) -> names it uses
        self._caller: str | None = None
        self.emitted: set[str] = set()
        self._decl_spans: dict[str, tuple[str, Span]] = {}
        self._var_counts = {"global": 0, "player": 0, "card": 0}
        for name, params in BUILTIN_EVENTS.items():
            self.events[name] = EventDef(name, params, True, Span("<builtin>", 0, 0))
        for name in BUILTIN_ZONES:
            self.zones[name] = ZoneDef(name, 0, False, True, True, "none", "none", None, Span("<builtin>", 0, 0))

    def use(self, name: str, from_data: bool = False) -> None:
        """Record that the rule being checked (or the game's data) uses a procedure, phase,
        function or ability: reachability warnings follow these edges from the game block."""
        self.calls_made.add(name)
        self.uses.setdefault(None if from_data else self._caller, set()).add(name)

    # ================================================================ bodies
    def check(self) -> None:
        if "game" not in self.procs:
            self.r.error("E206", "the rules have no `game { ... }` block", Span(self._first_file(), 1, 1),
                         "the game block is the main flow of play; `setup { ... }` runs before it")
        for i, d in enumerate(getattr(self, "_trigger_decls", [])):
            self._fix_trigger(i, d)
        for var in sorted(self.vars.values(), key=lambda v: (v.scope, v.index)):
            frame = Frame("default", None)
            t = self.expr(var.default, Scope(), frame)
            if not assignable(t, var.type):
                self.r.error("E303", f"default of `{var.name}` should be {var.type}, found {t}", var.default.span)
            self.res.frame_sizes[var.default] = frame.size
        for func in list(self.funcs.values()):
            self._caller = func.name
            frame = Frame("func", func.returns)
            scope = Scope()
            for name, t in func.params:
                scope.names[name] = (frame.alloc(), t)
            t = self.expr(func.decl.body, scope, frame)
            if not assignable(t, func.returns):
                self.r.error("E303", f"function `{func.name}` should return {func.returns}, found {t}",
                             func.decl.body.span)
            self.res.frame_sizes[func.decl] = frame.size
        for proc in list(self.procs.values()):
            self._caller = proc.name
            self._check_proc(proc)
        for trig in self.triggers:
            self._caller = trig.proc.name
            self._check_proc(trig.proc, trig.cond)
        self._caller = None
        self._reachability()

    def check_standalone(self, expr, reporter: Reporter, bindings: dict | None = None) -> tuple:
        """Check an expression written outside the rules (a scenario expectation).

        Returns (type, frame size). `bindings` maps extra names to types; they get the first
        local slots in order. Diagnostics go to `reporter`, the checker's own are untouched.
        """
        saved, saved_caller = self.r, self._caller
        self.r = reporter
        self._caller = None                 # an expression of the data: it is reached
        try:
            frame = Frame("func", None)
            scope = Scope()
            for name, t in (bindings or {}).items():
                scope.names[name] = (frame.alloc(), t)
            t = self.expr(expr, scope, frame)
            return t, frame.size
        finally:
            self.r, self._caller = saved, saved_caller

    def _first_file(self) -> str:
        for _, span in self._decl_spans.values():
            return span.file
        return "<rules>"

    def _fix_trigger(self, i: int, d: A.TriggerDecl) -> None:
        trig = self.triggers[i]
        event = self.events.get(d.event)
        if event is None:
            self.r.error("E207", f"unknown event `{d.event}`", d.span,
                         did_you_mean(d.event, self.events) or "declare it with `event name(...)`")
            return
        if len(d.names) > len(event.params):
            self.r.error("E305", f"event `{d.event}` has {len(event.params)} parameter(s), "
                         f"the trigger names {len(d.names)}", d.span)
        params = tuple((n, event.params[k][1] if k < len(event.params) else ANY)
                       for k, (n, _) in enumerate(d.names))
        proc = ProcDef(trig.proc.name, "trigger", params, None, trig.proc.decl, d.span)
        self.triggers[i] = TriggerDef(trig.index, trig.event, proc, trig.cond, trig.span)

    def _check_proc(self, proc: ProcDef, cond: A.Expr | None = None) -> None:
        frame = Frame(proc.kind, proc.returns)
        scope = Scope()
        for name, t in proc.params:
            scope.names[name] = (frame.alloc(), t)
        if cond is not None:
            t = self.expr(cond, scope, frame)
            self._expect(t, BOOL, cond, "a trigger condition")
        self.block(proc.decl.body, Scope(scope), frame)
        self.res.frame_sizes[proc.decl] = frame.size

    def reached(self) -> set:
        """Names of the procedures, phases, functions and abilities the game can ever run:
        those used, directly or through others, by the game and setup blocks, the triggers,
        the card data (abilities, formulas), variable defaults and the bots' `evaluate`."""
        roots = {"game", "setup", "evaluate"} | {t.proc.name for t in self.triggers} | self.uses.get(None, set())
        seen: set = set()
        todo = list(roots)
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            todo.extend(self.uses.get(name, ()))
        return seen

    def _unreached(self, name: str, what: str, span) -> None:
        callers = sorted(c for c, used in self.uses.items() if c is not None and name in used and c != name)
        if not callers:
            code = {"phase": "W401", "procedure": "W401", "ability": "W402", "function": "W403"}[what]
            message = {"ability": f"ability `{name}` is not used by any card",
                       "function": f"function `{name}` is never used"}.get(what, f"{what} `{name}` is never called")
            hint = "call it from the game block, or remove it" if code == "W401" else None
        else:
            code = {"phase": "W401", "procedure": "W401", "ability": "W402", "function": "W403"}[what]
            shown = ", ".join(f"`{c}`" for c in callers[:3]) + (", ..." if len(callers) > 3 else "")
            message = f"{what} `{name}` is never reached: only {shown}, which the game never reaches, " + \
                ("calls" if what in ("phase", "procedure") else "uses") + " it"
            hint = "call it from a rule the game runs, or remove it"
        self.r.warning(code, message, span, hint)

    def _reachability(self) -> None:
        reached = self.reached()
        for proc in self.procs.values():
            if proc.kind in ("phase", "proc") and proc.name not in reached:
                self._unreached(proc.name, "phase" if proc.kind == "phase" else "procedure", proc.span)
            if proc.kind == "ability" and proc.name not in reached:
                self._unreached(proc.name, "ability", proc.span)
        evaluate = self.funcs.get("evaluate")
        if evaluate is not None:
            ok = len(evaluate.params) == 1 and evaluate.params[0][1] == PLAYER and evaluate.returns == INT
            if not ok:
                self.r.error("E309", "`evaluate` is the bots' judge of a position: declare it as "
                             "`func evaluate(p: player) -> int`", evaluate.span)
        for func in self.funcs.values():
            if func.name not in reached and func.name != "evaluate":
                self._unreached(func.name, "function", func.span)
        for ev in self.events.values():
            if not ev.builtin and ev.name not in self.emitted:
                self.r.warning("W404", f"event `{ev.name}` is never emitted", ev.span)

