"""The checker's first pass (AST -> checked model): collect every declaration of the rules
files (kinds, zones, variables, options, events, procedures, functions, triggers) into the
checker's tables, reporting names declared twice or clashing with built-ins, before any
body is checked (so bodies may use what is declared later).
"""

from __future__ import annotations

from . import ast as A
from .check_support import const_value, resolve_type, type_of_value
from .diagnostics import Span, did_you_mean
from .model import (EventDef, FieldDef, FuncDef, KindDef, OptionDef, ProcDef, TriggerDef, VarDef,
                    ZoneDef)
from .primitives import (ABILITY_NAMES, BUILTIN_ZONES, CARD_PROPERTIES, CONSTANTS,
                         OPTION_MODIFIERS, PLAYER_PROPERTIES, PRIMITIVES, VAR_MODIFIERS,
                         ZONE_MODIFIERS)
from .types import ANY, assignable


# What an ability's body is called with: `self` (its card) and `you` (the player using it).
_ABILITY_PARAMS = tuple((name, t) for name, (t, _) in ABILITY_NAMES.items())


class DeclarationPass:
    """Part of `Checker`: the declarations pass."""

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

    def _visible_modifier(self, mods) -> str | None:
        """The value of a `visible(all|owner)` modifier; None when malformed (reported here)."""
        args = mods["visible"].args
        if len(args) != 1:
            self.r.error("E305", "`visible` takes one argument: `all` or `owner`", mods["visible"].span)
            return None
        return self._symbol(args[0], ("all", "owner"), "`visible`") or "all"

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
        visible = "none" if "hidden" in mods else "all"
        if "visible" in mods:
            visible = self._visible_modifier(mods) or visible
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
            visible = self._visible_modifier(mods) or visible
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
            params = _ABILITY_PARAMS
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
        self.procs[name] = ProcDef(name, "snippet", _ABILITY_PARAMS, None, decl, span)
        self.use(name, from_data=True)

