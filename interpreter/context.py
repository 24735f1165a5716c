"""What every back end reads while one program is compiled (checked model -> compiled program).

The compile context holds the checked model and its resolution tables, the option values,
the program's tables (cards and zones), which procedures pause, the compiled procedures'
objects (so code can call them before their own code exists) and the analyses that more
than one back end asks (constant expressions, recursion). It is a read-only view for the
back ends; only the compiler driver creates it.
"""

from __future__ import annotations

from rulesvm.dsl import ast as A
from rulesvm.dsl.primitives import PRIMITIVES
from rulesvm.dsl.schema import MAX_STEPS
from rulesvm.dsl.types import ZONE

from .limits import FREE_WALK, short
from .purity import (Bounded, ConstantAnalysis, Flatness, call_weights, recursive_functions, recursive_procedures, paid_walks,
                     syntax_nodes)

NOT_LITERAL = object()


class CompileContext:
    def __init__(self, model, options: dict, tables, suspension, procs: dict):
        self.m = model
        self.res = model.resolution
        self.options = options
        self.tables = tables                  # program.Tables: what the running program's tables will be
        self.suspension = suspension
        self.evented = suspension.evented
        self.procs = procs                    # name -> CompiledProc
        self.zone_base = {z.name: z.base for z in tables.zones}
        self.consts = ConstantAnalysis(self.res, model.funcs)
        self.recursive_functions = recursive_functions(self.res, model.funcs)
        self.recursive_procedures = recursive_procedures(self.res, model.procs)
        self.call_weights = call_weights(self.res, model.funcs, self.recursive_functions, MAX_STEPS + 1)
        bodies = [p.decl.body for p in model.procs.values()] + [t.proc.decl.body for t in model.triggers]
        self.flat = Flatness(self.res, model.funcs, self.recursive_functions)
        self.bounded = Bounded(self.res, model.funcs, self.recursive_functions, self._data_number)
        # A function may be called per item: its body is not paid for, but the items of the
        # comprehensions written in it are.
        self.paid_walks = paid_walks(bodies, self.flat, [f.decl.body for f in model.funcs.values()])
        # With no `simultaneous` loop anywhere, no decision is ever inside one.
        self.has_simultaneous = any(type(x) is A.For and x.simultaneous for x in syntax_nodes(bodies))
        # With fewer cards than FREE_WALK in all, no zone ever holds a long walk.
        self.zones_short = len(tables.card_ids) < FREE_WALK
        self._players_short = model.players[1] < FREE_WALK

    def always_short(self, node) -> bool:
        """Does node hold fewer than FREE_WALK items whatever the state: a zone in a game of
        fewer cards, a list literal of fewer items, `players` or `players_from(p)` in a game
        of fewer players? A free walk of it needs no test (limits.charge_long would charge
        nothing)."""
        t = type(node)
        if t is A.ListLit or t is A.TupleLit:
            return len(node.items) < FREE_WALK
        if self.res.types.get(node) == ZONE:
            return self.zones_short
        return self._players_short and self.all_players(node)

    def all_players(self, e) -> bool:
        """Is e `players` or `players_from(p)` (every player once)?"""
        if type(e) is A.Name:
            return self.res.names.get(e) == ("const", "players")
        kind = self.res.calls.get(e) if type(e) is A.Call else None
        return kind is not None and kind[0] == "prim" and kind[1] == "players_from"

    def short(self, node) -> bool:
        """Does node always read short (limits.short), counting a printed card field whose
        every value is a number or a text shorter than FREE_WALK as short?"""
        return short(node, self.res.types, self._short_field)

    def _short_field(self, node) -> bool:
        kind = self.res.attrs.get(node)
        if kind is None or kind[0] not in ("field", "cprop"):
            return False
        name = kind[1]
        if kind[0] == "cprop":
            texts = {"id": self.tables.card_ids, "kind": self.tables.card_kinds, "name": self.tables.card_names}
            return name in texts and all(len(v) < FREE_WALK for v in texts[name])
        return all(v is None or type(v) in (int, bool) or (type(v) is str and len(v) < FREE_WALK)
                   for v in self._field_values(name))

    def _data_number(self, name: str) -> bool:
        """Is every card's value of field `name` (on every face) a number written in the
        files (not a formula)?"""
        values = self._field_values(name)
        return bool(values) and all(v is None or type(v) in (int, bool) for v in values)

    def _field_values(self, name: str) -> list:
        """Every card's value of field `name`, on every face (a formula as its Formula)."""
        values = list(self.tables.card_fields.get(name) or ())
        for faces in self.tables.face_fields.get(name) or ():
            values.extend((faces or {}).values())
        return values

    def prog_ref(self):
        """The tables, for formatters that look names up while the game runs."""
        return self.tables

    def zone_info(self, name: str):
        return next(z for z in self.tables.zones if z.name == name)

    @staticmethod
    def prim_args(name: str, args) -> dict:
        """A primitive call's argument nodes by parameter name (None where not given)."""
        return dict(zip((p.name for p in PRIMITIVES[name].params), args))

    @staticmethod
    def prim_default(name: str, param: str):
        return next(p.default for p in PRIMITIVES[name].params if p.name == param)

    @staticmethod
    def literal(node, default):
        """A literal argument's value (the default when not given), or NOT_LITERAL."""
        if node is None:
            return default
        if isinstance(node, (A.IntLit, A.BoolLit)):
            return node.value
        if isinstance(node, A.StrLit) and all(isinstance(p, str) for p in node.parts):
            return "".join(node.parts)
        return NOT_LITERAL
