"""The checker's calls (AST -> checked model): what a call names (primitive, function,
procedure, zone of a family), its arguments against the callee's signature (primitive
signatures come from the registry in primitives.py, with defaults, keyword arguments and
type variables), and where a call may stand (actions and decisions only as statements).
"""

from __future__ import annotations

from . import ast as A
from .check_support import ANY_LIST, a_, zone_args
from .diagnostics import did_you_mean, listing
from .primitives import CARDLIKE, PLAYERLIKE, PRIMITIVES
from .types import (ANY, CARD, CARDS, INT, NONE, PLAYER, PLAYERS, VOID, ZONE, Type, assignable, substitute,
                    unify)

_KIND_WORD = {"proc": "procedure", "phase": "phase"}
# How an error names what a parameter taking several shapes accepts.
LIKE_WORDS = {CARDLIKE: "a card, a list of cards or a zone", PLAYERLIKE: "a player or a list of players"}


class CallChecks:
    """Part of `Checker`: calls of primitives, functions, procedures and zones."""

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
                self.r.error("E305", f"zone `{name}` takes {zone_args(zone)}: `{name}({zone_args(zone, True)})`",
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
                         did_you_mean(name, list(known)) or f"the {what}s are: {listing(sorted(known), quote=False) or 'none'}")

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
        if prim.statement_only and not statement:
            self.r.error("E223", f"`{prim.name}` is {a_(prim.category)} and can only be used as a statement "
                         f"(`{prim.name}(...)` or `let x = {prim.name}(...)`)", e.span)
        if prim.statement_only and frame.kind in ("func", "default"):
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
            elif p.type == PLAYERLIKE:
                ok = t in (PLAYER, ANY, NONE) or (t.name == "list" and assignable(t, PLAYERS))
            else:
                ok = unify(p.type, t, binding)
            if not ok:
                self.r.error("E303", f"argument `{p.name}` of `{prim.name}` should be "
                             f"{LIKE_WORDS[p.type] if p.type in LIKE_WORDS else substitute(p.type, binding)}"
                             f", found {t}", a.span)
        if "steps" in by_name and slots[by_name["steps"]] is not None:
            self._check_steps(prim, slots, by_name, binding)
        self.res.calls[e] = ("prim", prim.name, tuple(slots))
        return substitute(prim.returns, binding)

    def _check_steps(self, prim, slots, by_name: dict, binding: dict) -> None:
        """A compound choice (`steps:`): every option is a list of picks, one per step."""
        steps = slots[by_name["steps"]]
        options_t = binding.get("T", ANY)
        if options_t.name != "list" and options_t not in (ANY, NONE):
            self.r.error("E303", f"with `steps:`, each option of `{prim.name}` should be a list of picks "
                         f"(one per step), found options of type {options_t}", (slots[0] or steps).span,
                         "e.g. options [[\"R1\", \"A+\"], [\"R2\", \"D-\"]] with steps: [\"Aim\", \"Move\"]")
        if isinstance(steps, A.ListLit) and not steps.items:
            self.r.error("E303", "`steps:` should name at least one step", steps.span,
                         "one text per pick, e.g. steps: [\"Aim\", \"Round 1\"]")
        if "pass" in by_name and slots[by_name["pass"]] is not None:
            self.r.error("E305", f"`{prim.name}` cannot take both `steps:` and `pass:`",
                         slots[by_name["pass"]].span, "make passing one of the picks of a step instead")
