"""The checker: AST -> checked model (pipeline step two).

Like the resolver in Crafting Interpreters, it walks every declaration and body once,
resolves each name (local slot, variable, zone, option, procedure, primitive), gives each
expression a static type, and collects *all* diagnostics instead of stopping at the first.
Its findings go into the `Resolution` side tables of the `GameModel` that the compiler
reads. Codes: E2xx names and declarations, E3xx types and calls, W4xx warnings.
"""

from __future__ import annotations

from . import ast as A
from .diagnostics import Reporter, Span, did_you_mean
from .model import (EventDef, FieldDef, FuncDef, KindDef, OptionDef, ProcDef, Resolution,
                    TriggerDef, VarDef, ZoneDef)
from .primitives import (BUILTIN_ZONES, CARD_PROPERTIES, CARDLIKE, CONSTANTS, OPTION_MODIFIERS,
                         PLAYER_PROPERTIES, PRIMITIVES, VAR_MODIFIERS, ZONE_MODIFIERS)
from .types import (ABILITY, ANY, BOOL, CARD, CARDS, INT, NONE, PLAYER, SIMPLE, TEXT, VOID,
                    ZONE, Type, assignable, elem_of, is_listish, join, lambda_of, list_of,
                    substitute, tuple_of, unify)

ANY_LIST = list_of(ANY)

BUILTIN_EVENTS = {
    "moved": (("card", CARD), ("source", ZONE), ("target", ZONE)),
    "phase_start": (("phase", TEXT),),
    "phase_end": (("phase", TEXT),),
}
STATEMENT_ONLY = ("action", "decision")
_KIND_WORD = {"proc": "procedure", "phase": "phase"}


class _Scope:
    def __init__(self, parent: "_Scope | None" = None):
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


class _Frame:
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


def _zone_args(zone, example: bool = False) -> str:
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


class Checker:
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

    # ================================================================ declarations
    def _claim(self, name: str, what: str, span: Span) -> bool:
        reserved = set(PRIMITIVES) | set(CONSTANTS) | set(BUILTIN_ZONES)
        if name in reserved:
            self.r.error("E202", f"`{name}` is a built-in name and cannot be declared as a {what}", span,
                         "choose another name")
            return False
        if name in self._decl_spans:
            other_what, other = self._decl_spans[name]
            self.r.error("E201", f"`{name}` is already declared as a {other_what}", span,
                         notes=((f"first declaration of `{name}`", other),))
            return False
        self._decl_spans[name] = (what, span)
        return True

    def collect(self, files: list[A.RulesFile]) -> None:
        for rules in files:
            for decl in rules.decls:
                self._collect(decl)

    def _collect(self, d) -> None:
        if isinstance(d, A.KindDecl):
            self._collect_kind(d)
        elif isinstance(d, A.ZoneDecl):
            self._collect_zone(d)
        elif isinstance(d, A.VarDecl):
            self._collect_var(d)
        elif isinstance(d, A.OptionDecl):
            self._collect_option(d)
        elif isinstance(d, A.EventDecl):
            if self._claim(d.name, "event", d.span):
                params = tuple((p.name, resolve_type(p.type, self.r)) for p in d.params)
                self.events[d.name] = EventDef(d.name, params, False, d.span)
        elif isinstance(d, A.ProcDecl):
            self._collect_proc(d)
        elif isinstance(d, A.FuncDecl):
            if self._claim(d.name, "function", d.span):
                params = tuple((p.name, resolve_type(p.type, self.r)) for p in d.params)
                self.funcs[d.name] = FuncDef(d.name, params, resolve_type(d.returns, self.r), d, d.span)
        elif isinstance(d, A.TriggerDecl):
            self._collect_trigger(d)

    def _collect_kind(self, d: A.KindDecl) -> None:
        if not self._claim(d.name, "card kind", d.span):
            return
        fields = {}
        for f in d.fields:
            if f.name in fields:
                self.r.error("E201", f"field `{f.name}` is declared twice in kind `{d.name}`", f.span)
                continue
            if f.name in CARD_PROPERTIES or f.name in ("count", "image", "text", "faces", "back"):
                self.r.error("E202", f"`{f.name}` is a built-in card property and cannot be a field", f.span)
                continue
            t = resolve_type(f.type, self.r)
            default, has_default = None, f.default is not None
            if f.default is not None:
                default = const_value(f.default, self.r, "a field default")
                if not assignable(type_of_value(default), t):
                    self.r.error("E303", f"default of `{f.name}` should be {t}, found {type_of_value(default)}",
                                 f.default.span)
            prior = self.field_types.get(f.name)
            if prior is not None and prior != t:
                self.r.error("E304", f"field `{f.name}` is {t} here but {prior} in another kind", f.type.span,
                             "a field name has one type across all kinds",
                             notes=((f"`{f.name}` declared as {prior}", self.field_spans[f.name]),))
            else:
                self.field_types[f.name] = t
                self.field_spans.setdefault(f.name, f.span)
            fields[f.name] = FieldDef(f.name, t, default, has_default, f.span)
        self.kinds[d.name] = KindDef(d.name, fields, d.span)

    def _symbol(self, expr: A.Expr, allowed: tuple, what: str) -> str | None:
        if isinstance(expr, A.Name) and expr.id in allowed:
            return expr.id
        shown = " or ".join(f"`{a}`" for a in allowed)
        self.r.error("E203", f"{what} takes {shown}", expr.span)
        return None

    def _modifiers(self, mods, table: dict, what: str) -> dict:
        out = {}
        for m in mods:
            if m.name not in table:
                self.r.error("E204", f"unknown {what} modifier `{m.name}`", m.span,
                             did_you_mean(m.name, table) or "known: " + ", ".join(sorted(table)))
                continue
            if m.name in out:
                self.r.error("E201", f"modifier `{m.name}` is given twice", m.span)
            out[m.name] = m
        return out

    def _collect_zone(self, d: A.ZoneDecl) -> None:
        if not self._claim(d.name, "zone", d.span):
            return
        mods = self._modifiers(d.modifiers, ZONE_MODIFIERS, "zone")
        visible = "all"
        if "hidden" in mods:
            visible = "none"
        if "visible" in mods:
            args = mods["visible"].args
            if len(args) != 1:
                self.r.error("E305", "`visible` takes one argument: `all` or `owner`", mods["visible"].span)
            else:
                visible = self._symbol(args[0], ("all", "owner"), "`visible`") or "all"
            if "hidden" in mods:
                self.r.error("E205", "a zone cannot be both `hidden` and `visible`", mods["visible"].span)
        facedown = "none"
        if "facedown_visible" in mods:
            args = mods["facedown_visible"].args
            if len(args) != 1:
                self.r.error("E305", "`facedown_visible` takes one argument: `owner` or `all`",
                             mods["facedown_visible"].span)
            else:
                facedown = self._symbol(args[0], ("owner", "all"), "`facedown_visible`") or "none"
        if "faceup" in mods and "facedown" in mods:
            self.r.error("E205", "a zone cannot be both `faceup` and `facedown`", mods["facedown"].span)
        per_player = "per_player" in mods
        if visible == "owner" and not per_player:
            self.r.error("E205", "`visible(owner)` needs a `per_player` zone (a shared zone has no owner)",
                         mods["visible"].span)
        arrive = "up" if "faceup" in mods else "down" if "facedown" in mods else None
        for name in ("per_player", "ordered", "hidden", "faceup", "facedown", "compact"):
            if name in mods and mods[name].args:
                self.r.error("E305", f"`{name}` takes no arguments", mods[name].span)
        dims: tuple = ()
        if "indexed" in mods:
            sizes = [const_value(a, self.r, "a zone size") for a in mods["indexed"].args]
            if not 1 <= len(sizes) <= 2 or not all(isinstance(s, int) and not isinstance(s, bool) and 1 <= s <= 64
                                                   for s in sizes):
                self.r.error("E305", "`indexed` takes one or two sizes from 1 to 64: `indexed(6)`, `indexed(4, 5)`",
                             mods["indexed"].span)
            else:
                dims = tuple(sizes)
        if "compact" in mods and len(dims) != 1:
            self.r.error("E205", "`compact` needs a row of zones: `indexed(n), compact`", mods["compact"].span)
        self.zones[d.name] = ZoneDef(d.name, len(self.zones), per_player, "ordered" in mods, visible == "none",
                                     visible, facedown, arrive, d.span, dims, "compact" in mods and len(dims) == 1)

    def _collect_var(self, d: A.VarDecl) -> None:
        if not self._claim(d.name, "variable", d.span):
            return
        mods = self._modifiers(d.modifiers, VAR_MODIFIERS, "variable")
        scope = "global"
        if "per_player" in mods and "per_card" in mods:
            self.r.error("E205", "a variable cannot be both `per_player` and `per_card`", mods["per_card"].span)
        elif "per_player" in mods:
            scope = "player"
        elif "per_card" in mods:
            scope = "card"
        visible = "all"
        if "visible" in mods:
            args = mods["visible"].args
            if len(args) != 1:
                self.r.error("E305", "`visible` takes one argument: `all` or `owner`", mods["visible"].span)
            else:
                visible = self._symbol(args[0], ("all", "owner"), "`visible`") or "all"
            if visible == "owner" and scope != "player":
                self.r.error("E205", "`visible(owner)` applies to `per_player` variables", mods["visible"].span)
        if scope == "player" and d.name in PLAYER_PROPERTIES or scope == "card" and d.name in CARD_PROPERTIES:
            self.r.error("E202", f"`{d.name}` is a built-in property and cannot be a variable", d.span)
        t = resolve_type(d.type, self.r)
        index = self._var_counts[scope]
        self._var_counts[scope] += 1
        self.vars[d.name] = VarDef(d.name, index, scope, t, d.default, visible, d.span)

    def _collect_option(self, d: A.OptionDecl) -> None:
        if not self._claim(d.name, "option", d.span):
            return
        mods = self._modifiers(d.modifiers, OPTION_MODIFIERS, "option")
        t = resolve_type(d.type, self.r)
        default = const_value(d.default, self.r, "an option default")
        if not assignable(type_of_value(default), t):
            self.r.error("E303", f"default of option `{d.name}` should be {t}, found {type_of_value(default)}",
                         d.default.span)
        doc = ""
        if "doc" in mods:
            args = mods["doc"].args
            doc = const_value(args[0], self.r, "`doc`") if len(args) == 1 else ""
            if not isinstance(doc, str):
                self.r.error("E305", "`doc` takes one text argument", mods["doc"].span)
                doc = ""
        rng = None
        if "range" in mods:
            vals = tuple(const_value(a, self.r, "`range`") for a in mods["range"].args)
            if len(vals) != 2 or not all(isinstance(v, int) and not isinstance(v, bool) for v in vals):
                self.r.error("E305", "`range` takes two whole numbers: `range(1, 4)`", mods["range"].span)
            else:
                rng = vals
                if isinstance(default, int) and not vals[0] <= default <= vals[1]:
                    self.r.error("E303", f"default {default} is outside range {vals[0]}..{vals[1]}", d.default.span)
        choices = None
        if "choices" in mods:
            choices = tuple(const_value(a, self.r, "`choices`") for a in mods["choices"].args)
            if default not in choices:
                self.r.error("E303", f"default `{default}` is not one of the choices", d.default.span)
        self.options[d.name] = OptionDef(d.name, t, default, doc, rng, choices, d.span)

    def _collect_proc(self, d: A.ProcDecl) -> None:
        what = {"proc": "procedure", "phase": "phase", "ability": "ability",
                "setup": "setup block", "game": "game block"}[d.kind]
        if not self._claim(d.name, what, d.span):
            return
        if d.kind == "ability":
            params = (("self", CARD), ("you", PLAYER))
        else:
            params = tuple((p.name, resolve_type(p.type, self.r)) for p in d.params)
        returns = resolve_type(d.returns, self.r) if d.returns else None
        self.procs[d.name] = ProcDef(d.name, d.kind, params, returns, d, d.span)

    def _collect_trigger(self, d: A.TriggerDecl) -> None:
        index = len(self.triggers)
        if d.label is not None and not self._claim(d.label, "trigger", d.span):
            return
        decl = A.ProcDecl(d.span, "trigger", d.label or f"on {d.event}#{index + 1}", (), None, d.body)
        # Parameter types are known once all events are collected; fixed up in check().
        proc = ProcDef(decl.name, "trigger", tuple((n, ANY) for n, _ in d.names), None, decl, d.span)
        self.triggers.append(TriggerDef(index, d.event, proc, d.cond, d.span))
        self._trigger_decls = getattr(self, "_trigger_decls", [])
        self._trigger_decls.append(d)

    def add_snippet(self, name: str, body: A.Block, span: Span) -> None:
        """An ability written inline in card data: checked like a declared ability."""
        decl = A.ProcDecl(span, "ability", name, (), None, body)
        self.procs[name] = ProcDef(name, "snippet", (("self", CARD), ("you", PLAYER)), None, decl, span)
        self.use(name, from_data=True)

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
            frame = _Frame("default", None)
            t = self.expr(var.default, _Scope(), frame)
            if not assignable(t, var.type):
                self.r.error("E303", f"default of `{var.name}` should be {var.type}, found {t}", var.default.span)
            self.res.frame_sizes[var.default] = frame.size
        for func in list(self.funcs.values()):
            self._caller = func.name
            frame = _Frame("func", func.returns)
            scope = _Scope()
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
            frame = _Frame("func", None)
            scope = _Scope()
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
        frame = _Frame(proc.kind, proc.returns)
        scope = _Scope()
        for name, t in proc.params:
            scope.names[name] = (frame.alloc(), t)
        if cond is not None:
            t = self.expr(cond, scope, frame)
            self._expect(t, BOOL, cond, "a trigger condition")
        self.block(proc.decl.body, _Scope(scope), frame)
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

    # ---------------------------------------------------------------- statements
    def block(self, block: A.Block, scope: _Scope, frame: _Frame) -> None:
        for stmt in block.stmts:
            self.stmt(stmt, scope, frame)

    def stmt(self, s, scope: _Scope, frame: _Frame) -> None:
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
                self.block(body, _Scope(scope), frame)
            if s.else_ is not None:
                self.block(s.else_, _Scope(scope), frame)
        elif isinstance(s, A.For):
            t = self.expr(s.iterable, scope, frame)
            if not is_listish(t):
                self.r.error("E307", f"`for` needs a list or a zone, found {t}", s.iterable.span)
            inner = _Scope(scope)
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
            self.block(s.body, _Scope(scope), frame)
            frame.loop_depth -= 1
        elif isinstance(s, A.Repeat):
            self._expect(self.expr(s.count, scope, frame), INT, s.count, "a `repeat` count")
            self.res.slots[s] = frame.alloc()
            frame.loop_depth += 1
            self.block(s.body, _Scope(scope), frame)
            frame.loop_depth -= 1
        elif isinstance(s, A.Loop):
            frame.loop_depth += 1
            self.block(s.body, _Scope(scope), frame)
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

    def _assign(self, s: A.Assign, scope: _Scope, frame: _Frame) -> None:
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

    def _emit(self, s: A.Emit, scope: _Scope, frame: _Frame) -> None:
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

    # ---------------------------------------------------------------- expressions
    def _expect(self, t: Type, want: Type, expr, what: str) -> None:
        if not assignable(t, want):
            self.r.error("E303", f"{what} should be {want}, found {t}", expr.span)

    def expr(self, e, scope: _Scope, frame: _Frame, statement: bool = False) -> Type:
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
            inner = _Scope(scope)
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
        inner = _Scope(scope)
        slot = frame.alloc()
        self.res.slots[e] = slot
        inner.names[e.param] = (slot, param_t)
        return lambda_of(param_t, self.expr(e.body, inner, frame))

    def _name(self, e: A.Name, scope: _Scope) -> Type:
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
                self.r.error("E215", f"zone `{e.id}` needs {_zone_args(zone)}: write `{e.id}({_zone_args(zone, True)})`",
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

    # ---------------------------------------------------------------- calls
    def _call(self, e: A.Call, scope, frame, statement: bool) -> Type:
        if not isinstance(e.func, A.Name):
            self.expr(e.func, scope, frame)
            self.r.error("E221", "only named procedures, functions and primitives can be called", e.func.span,
                         "run a card's ability with `use(c.ability, c, p)`")
            return ANY
        name = e.func.id
        if name in PRIMITIVES:
            return self._call_primitive(e, PRIMITIVES[name], scope, frame, statement)
        if name in self.funcs:
            self.use(name)
            f = self.funcs[name]
            self._check_args(e, f.params, scope, frame, f"function `{name}`")
            self.res.calls[e] = ("func", name, tuple(e.args))
            return f.returns
        if name in self.procs:
            proc = self.procs[name]
            if proc.kind in ("setup", "game"):
                self.r.error("E222", f"the {name} block cannot be called", e.span)
                return ANY
            if proc.kind in ("ability", "snippet"):
                self.r.error("E222", f"`{name}` is an ability: run it with `use({name}, card, player)`", e.span)
                return ANY
            self.use(name)
            if not statement:
                self.r.error("E223", f"{_KIND_WORD.get(proc.kind, proc.kind)} `{name}` can only be called as a statement "
                             f"(`{name}(...)` or `let x = {name}(...)`)", e.span,
                             "procedures may pause for decisions; use a `func` for a value inside an expression")
            self._check_args(e, proc.params, scope, frame, f"{_KIND_WORD.get(proc.kind, proc.kind)} `{name}`")
            self.res.calls[e] = ("proc", name, tuple(e.args))
            return proc.returns or VOID
        zone = self.zones.get(name)
        if zone is not None:
            for a in e.args:
                self.expr(a, scope, frame)
            params = zone.call_params
            if not params:
                self.r.error("E215", f"zone `{name}` is shared: write `{name}` without arguments", e.span)
                return ZONE
            if len(e.args) != len(params) or e.kwargs:
                self.r.error("E305", f"zone `{name}` takes {_zone_args(zone)}: `{name}({_zone_args(zone, True)})`",
                             e.span)
                return ZONE
            for a, what in zip(e.args, params):
                self._expect(self.res.types[a], PLAYER if what == "player" else INT, a, f"the {what} of zone `{name}`")
            self.res.calls[e] = ("zone", name, tuple(e.args))
            return ZONE
        for a in e.args:
            self.expr(a, scope, frame)
        for k in e.kwargs:
            self.expr(k.value, scope, frame)
        if name in self.events:
            self.r.error("E224", f"`{name}` is an event: write `emit {name}(...)`", e.span)
            return ANY
        candidates = set(PRIMITIVES) | set(self.funcs) | set(self.procs) | \
            {z.name for z in self.zones.values() if z.per_player}
        self.r.error("E225", f"unknown procedure, function or primitive `{name}`", e.func.span,
                     did_you_mean(name, candidates))
        return ANY

    def _check_named(self, a, what: str) -> None:
        """A literal text that must name a card field or a card kind of the game."""
        if not (isinstance(a, A.StrLit) and all(isinstance(p, str) for p in a.parts)):
            return
        name = "".join(a.parts)
        known = self.field_types if what == "field" else self.kinds
        if name not in known:
            self.r.error("E228", f"no card {what} is called `{name}`", a.span,
                         did_you_mean(name, list(known)) or f"the {what}s are: {', '.join(sorted(known)) or 'none'}")

    def _check_args(self, e: A.Call, params, scope, frame, what: str) -> None:
        if e.kwargs:
            self.r.error("E305", f"{what} takes no keyword arguments", e.kwargs[0].span)
        if len(e.args) != len(params):
            self.r.error("E305", f"{what} takes {len(params)} argument(s), got {len(e.args)}", e.span)
        for i, a in enumerate(e.args):
            t = self.expr(a, scope, frame)
            if i < len(params) and not assignable(t, params[i][1]):
                self.r.error("E303", f"argument `{params[i][0]}` of {what} should be {params[i][1]}, found {t}",
                             a.span)

    def _call_primitive(self, e: A.Call, prim, scope, frame, statement: bool) -> Type:
        if prim.category in STATEMENT_ONLY and not statement:
            self.r.error("E223", f"`{prim.name}` is {a_(prim.category)} and can only be used as a statement "
                         f"(`{prim.name}(...)` or `let x = {prim.name}(...)`)", e.span)
        if prim.category in STATEMENT_ONLY and frame.kind in ("func", "default"):
            self.r.error("E226", f"`{prim.name}` changes the game and cannot be used in a function",
                         e.span, "functions compute values; use a `proc` for actions")
        params = prim.params
        by_name = {p.name: i for i, p in enumerate(params)}
        slots: list = [None] * len(params)
        if len(e.args) > len(params):
            self.r.error("E305", f"`{prim.name}` takes at most {len(params)} argument(s), got {len(e.args)}",
                         e.args[len(params)].span, f"signature: {prim.signature}")
        for i, a in enumerate(e.args[:len(params)]):
            slots[i] = a
        for k in e.kwargs:
            if k.name not in by_name:
                self.r.error("E227", f"`{prim.name}` has no parameter `{k.name}`", k.span,
                             did_you_mean(k.name, by_name) or f"signature: {prim.signature}")
                self.expr(k.value, scope, frame)
                continue
            i = by_name[k.name]
            if slots[i] is not None:
                self.r.error("E305", f"parameter `{k.name}` of `{prim.name}` is given twice", k.span)
            slots[i] = k.value
        binding: dict = {}
        for i, p in enumerate(params):
            a = slots[i]
            if a is None:
                if p.required:
                    self.r.error("E305", f"`{prim.name}` is missing its `{p.name}` argument", e.span,
                                 f"signature: {prim.signature}")
                continue
            if isinstance(a, A.Lambda) and p.type.name == "lambda":
                param_t = substitute(p.type.elem, binding)
                t = self._lambda(a, param_t, scope, frame)
                self.res.types[a] = t
            elif isinstance(a, A.ListLit) and p.type == ANY_LIST:
                # Where any values are welcome (`end_game`'s ranking: seats and tie groups),
                # a list literal's items may differ in type.
                for item in a.items:
                    self.expr(item, scope, frame)
                t = self.res.types[a] = ANY_LIST
            else:
                t = self.expr(a, scope, frame)
            if p.names:
                self._check_named(a, p.names)
            if p.type == CARDLIKE:
                ok = t in (CARD, ZONE, ANY, NONE) or (t.name == "list" and assignable(t, CARDS))
            else:
                ok = unify(p.type, t, binding)
            if not ok:
                self.r.error("E303", f"argument `{p.name}` of `{prim.name}` should be "
                             f"{'a card, a list of cards or a zone' if p.type == CARDLIKE else substitute(p.type, binding)}"
                             f", found {t}", a.span)
        self.res.calls[e] = ("prim", prim.name, tuple(slots))
        return substitute(prim.returns, binding)
