"""The Python-source back end (checked model -> compiled program): expressions written as
Python source and compiled once, the way Jinja compiles templates.

Where the closures back end (`closures.py`) builds a tree of small closures (one Python call
per node), this one writes the same meaning as source and lets CPython compile it: a rule
like `sum([c.number for c in row(p) if c.faceup])` becomes one function with a list
comprehension, reading the state's lists directly. Anything it does not know how to write
(most primitives) is called as the closure the reference back end builds for it, so both
stay interchangeable (the tests compare them). Statements are written by `pystatements.py`;
the generated source of every function is kept on the program (`Program.sources`).
"""

from __future__ import annotations

import re
from contextlib import contextmanager

from rulesvm.dsl import ast as A
from rulesvm.dsl.types import ANY, CARD, INT, PLAYER, ZONE

from . import errors as E
from .builtins import INLINE
from .format import formatter
from .limits import (FREE_RANGE, FREE_WALK, HEAVY_CALL, MAX_INT, MIN_INT, bounded_join, bounded_range,
                     charge, charge_count, charge_long, checked_int, equal, grows, joined, may_double, nests, overflow,
                     sized, zone_chain)
from .namespace import Unsupported
from .purity import syntax_nodes
from .pystatements import StatementWriter, SIMPLE
from .runtime import BREAK, CONTINUE, Return, family_zone, grid_zone, list_item, zone_item

# Sources that read the same value again at no cost (a fixed zone's list, a variable):
# where Python forbids `:=` (a comprehension's iterable) they are read twice instead.
_REREAD = re.compile(r"^(st\.zones\[\d+\]|L\[\d+\]|v\d+|_q\d+)$")
# Python locals and number literals: read again for less than a cell costs (see _in_item).
_FAST = re.compile(r"^(v\d+|_q\d+|-?\d+)$")

# A function body larger than this (in syntax nodes) is called, not inlined.
_INLINE_NODES = 40


class _Lying:
    """Just the faces and turns of a state: how `_face_table` asks the reader about each way
    a card can lie."""
    __slots__ = ("faceup", "turn")


def _div(a, b):
    if b == 0:
        raise E.division_by_zero("/", None)
    return a // b


def _mod(a, b):
    if b == 0:
        raise E.division_by_zero("%", None)
    return a % b


class PyGen(StatementWriter):
    """Writes Python source for a program's expressions and never-pausing blocks."""

    Unsupported = Unsupported

    def __init__(self, ctx, closures, nsp):
        self.ctx = ctx
        self.cl = closures              # the reference back end: what this one cannot write, it calls
        self.nsp = nsp                  # where the generated code's constants and functions live
        self.res = ctx.res
        # While a function body is written inline: its parameter slots -> the caller's sources.
        self._subst: dict | None = None
        # Inside a comprehension's iterable, where Python forbids `:=`.
        self._in_iterable = 0
        # Inside a comprehension's item or condition, where a name bound with `:=` would be a
        # cell of the enclosing function (allocated at each call, read indirectly).
        self._in_item = 0
        self._inlinable: dict = {}
        # Writing a body that has a frame of its own (a function, a never-pausing procedure's
        # body): its variables are Python locals `v<slot>`, not slots of the list L, which
        # nobody reads once the body returns.
        self._locals = False
        self._nslots = 0
        # Sources of variables that hold a player for sure while the code using them is
        # written (a loop over `players` that never assigns its variable): no test for none.
        self._players: set = set()
        # While a block is pasted into a runner: how its `break`/`continue`/`return` leave it.
        self._signals: dict | None = None
        self._face_tables: dict = {}
        self._readers: dict = {}

    # ------------------------------------------------------------------ namespace
    def name(self, value, prefix: str = "k") -> str:
        return self.nsp.name(value, prefix)

    def closure_call(self, e) -> str:
        return f"{self.name(self.cl.closure(e), 'c')}(rt, {self.frame_list(e)})"

    def frame_list(self, e) -> str:
        """The list a closure for e reads the variables from: L, or, where they are Python
        locals, a list of their values now (an expression assigns no variable a later
        statement reads, so what a closure writes in it may be dropped)."""
        if self.ctx.consts.is_constant(e, frozenset()):
            return "L"                       # reads no variable
        if self._subst is not None:
            raise Unsupported("a closure would read the inlined function's parameters from L")
        if self._locals:
            return "[" + ", ".join(f"v{k}" for k in range(self._nslots)) + "]"
        return "L"

    def temp(self, prefix: str) -> str:
        """A fresh Python name bound with `:=` (or Unsupported where Python forbids that)."""
        if self._in_iterable:
            raise Unsupported("`:=` in a comprehension's iterable")
        return self.nsp.fresh(prefix)

    def build(self, src_body: str, fname: str):
        """Define `def fname(rt, L)` with this body (Unsupported if Python cannot compile it)."""
        return self.nsp.define(f"def {fname}(rt, L):\n    st = rt.st\n{src_body}", f"<rules:{fname}>", fname)

    def slot(self, k: int) -> str:
        """Where local variable `k` lives in the code being written."""
        return f"v{k}" if self._locals else f"L[{k}]"

    def _bound_var(self, k: int) -> str:
        """The name a comprehension binds for its variable `k`: in a function body written
        inline, a fresh name (the caller's slots are not the callee's)."""
        if self._subst is not None:
            return self._subst[k]
        return self.slot(k)

    @contextmanager
    def _writing(self, frame: tuple[int, int] | None = None):
        """Write one generated function, whatever the function being written when this one
        was needed (a callee compiled on first use) was doing; with `frame` (number of
        parameters, of slots) its variables are Python locals."""
        saved = self._locals, self._nslots, self._subst, self._in_iterable, self._in_item, self._players
        self._locals, self._nslots = frame is not None, frame[1] if frame is not None else 0
        self._subst, self._in_iterable, self._in_item, self._players = None, 0, 0, set()
        try:
            yield
        finally:
            self._locals, self._nslots, self._subst, self._in_iterable, self._in_item, self._players = saved

    def _is_player(self, e) -> bool:
        """Is e a player in every case (never none): `player(2)`, `opponent(p)`, a variable
        known to hold a player, or a choice between such?"""
        t = type(e)
        if t is A.IfExpr:
            return self._is_player(e.then) and self._is_player(e.else_)
        if t is A.Name:
            return self.res.names.get(e, ("",))[0] == "local" and self.expr(e) in self._players
        if t is A.Call:
            kind = self.res.calls.get(e)
            if kind and kind[0] == "prim":
                if kind[1] == "opponent":
                    return True             # or it stops the game with an error
                if kind[1] == "player" and type(kind[2][0]) is A.IntLit:
                    return kind[2][0].value >= 1
        return False

    def _assigns(self, scope, slot: int) -> bool:
        """Does code in `scope` assign local variable `slot`?"""
        return any(type(x) is A.Assign and self.res.targets.get(x) == ("local", slot) for x in syntax_nodes(scope))

    @contextmanager
    def _player_var(self, iterable, slot: int, body):
        """While the body of a loop (or comprehension) over `players` is written, its variable
        is known to hold a player, unless the body assigns it."""
        src = self._bound_var(slot)
        known = self.ctx.all_players(iterable) and src not in self._players and not self._assigns(body, slot)
        if known:
            self._players.add(src)
        try:
            yield
        finally:
            if known:
                self._players.discard(src)

    @staticmethod
    def _prologue(nparams: int, nslots: int) -> str:
        """An own-frame body's start: its parameters out of L, its other variables unset."""
        lines = [f"    v{k} = L[{k}]\n" for k in range(nparams)]
        if nslots > nparams:
            lines.append("    " + " = ".join(f"v{k}" for k in range(nparams, nslots)) + " = None\n")
        return "".join(lines)

    # ------------------------------------------------------------------ expressions
    def function(self, e, frame: tuple[int, int] | None = None):
        """A Python function (rt, L) -> value for expression e. With `frame` (number of
        parameters, of slots), e is a body called with a list of its own (a function's), so
        its variables may be Python locals; otherwise it reads and writes the caller's L."""
        if frame is not None:
            with self._writing(frame):
                try:
                    return self.build(self._prologue(*frame) + f"    return {self.expr(e)}\n", self.nsp.fresh("e"))
                except Unsupported:
                    pass
        with self._writing():
            try:
                src = self.expr(e)
            except Unsupported:
                return self.cl.closure(e)
            if src.endswith("(rt, L)") and src[:-7] in self.nsp.ns and src[:-7].startswith("_c"):
                return self.nsp.ns[src[:-7]]         # the whole expression is a closure: no wrapper
            try:
                return self.build(f"    return {src}\n", self.nsp.fresh("e"))
            except Unsupported:
                return self.cl.closure(e)

    def expr(self, e) -> str:
        t = type(e)
        if t is A.IntLit or t is A.BoolLit:
            return repr(e.value)
        if t is A.NoneLit:
            return "None"
        if t is A.Name:
            return self._name(e)
        if t is A.Attr:
            return self._attr(e)
        if t is A.Binary:
            return self._binary(e)
        if t is A.Unary:
            x = self.expr(e.operand)
            return f"(-{x})" if e.op == "-" else f"(not {x})"
        if t is A.IfExpr:
            return f"({self.expr(e.then)} if {self.expr(e.cond)} else {self.expr(e.else_)})"
        if t is A.ListLit or t is A.TupleLit:
            items = ", ".join(self.expr(i) for i in e.items)
            src = f"({items},)" if items else "()"
            if nests(self.res.types.get(e)):
                return f"{self.name(sized, 'f')}(rt, {src}, {self.name(e.span, 'S')})"
            return src
        if t is A.Comprehension:
            return self._comprehension(e)
        if t is A.Call:
            return self._call(e)
        if t is A.Index:
            return self._index(e)
        if t is A.StrLit:
            return self._string(e)
        if t is A.Lambda:
            if self._locals:
                return f"(lambda {self.slot(self.res.slots[e])}: {self.expr(e.body)})"
            # The parameter lives in its slot, as everywhere else (nested closures read it there).
            return f"(lambda _v: (L.__setitem__({self.res.slots[e]}, _v), {self.expr(e.body)})[1])"
        return self.closure_call(e)

    def _string(self, e) -> str:
        """Text with interpolations, each value shown by its static type (as `format.py` does)."""
        parts = []
        for p in e.parts:
            if isinstance(p, str):
                if p:
                    parts.append(repr(p))
                continue
            t = self.res.types.get(p, ANY)
            src = self.expr(p)
            prog = self.ctx.tables
            if t == CARD and prog.face_names is None:
                names = dict(enumerate(prog.card_names))
                names[None] = "none"
                parts.append(f"{self.name(names, 'N')}[{src}]")
            elif t == PLAYER:
                parts.append(f"{self.name(_player_text, 'f')}({src})")
            elif t.name == "int":
                parts.append(f"{self.name(_int_text, 'f')}({src})")
            elif t.name == "text":
                parts.append(f"{self.name(_text_text, 'f')}({src})")
            else:
                fmt = formatter(t, self.ctx.prog_ref)
                parts.append(f"{self.name(fmt, 'fmt')}({src}, rt)")
        if not parts:
            return "''"
        growing = any(not isinstance(p, str) and grows(self.res.types.get(p, ANY)) for p in e.parts)
        if len(parts) == 1 and not growing:
            return parts[0] if parts[0].startswith(("'", '"')) else f"str({parts[0]})"
        text = "(" + " + ".join(parts) + ")" if len(parts) > 1 else f"str({parts[0]})"
        return self._joined(text, e.span) if growing else text

    def seq(self, e) -> str:
        """e as a sequence: a zone reads as a snapshot tuple of its cards."""
        if self.res.types.get(e) == ZONE:
            return f"tuple(st.zones[{self.expr(e)}])"
        return self.expr(e)

    def _name(self, e) -> str:
        kind, detail = self.res.names[e]
        if kind == "local":
            if self._subst is not None:
                return self._subst[detail]
            return self.slot(detail)
        if kind == "global":
            return f"st.gvars[{detail}]"
        if kind == "option":
            v = self.ctx.options[detail]
            return repr(v) if isinstance(v, (int, str, bool, tuple)) or v is None else self.name(v)
        if kind == "zone":
            return str(self.ctx.zone_base[detail])
        if kind == "const":
            if detail == "players":
                return "rt.players"
            if detail == "player_count":
                return "rt.n"
        if kind == "ability":
            return repr(detail)
        raise Unsupported(kind)

    def _attr(self, e) -> str:
        kind, detail = self.res.attrs[e]
        obj = self.expr(e.obj)
        if kind == "pvar":
            return f"st.pvars[{detail}][{obj}]"
        if kind == "cvar":
            return f"st.cvars[{detail}][{obj}]"
        if kind == "field":
            prog = self.ctx.tables
            if self.cl.formulas(detail) is None:
                if prog.face_fields.get(detail) is None:
                    table = {c: v for c, v in enumerate(prog.card_fields[detail])}
                    table[None] = None
                    return f"{self.name(table, 'F')}[{obj}]"
                return self._face_field(detail, obj)
            return self.closure_call(e)
        if kind == "pprop":
            return f"({obj} + 1)"
        if kind == "cprop":
            prog = self.ctx.tables
            if detail == "kind":
                return f"{self.name(prog.card_kinds, 'K')}[{obj}]"
            if detail == "faceup":
                return f"st.faceup[{obj}]"
            if detail == "turn":
                return f"st.turn[{obj}]"
            if detail == "zone":
                return f"st.where[{obj}]"
            if detail == "owner":
                return f"{self.name(prog.zone_owner, 'O')}[st.where[{obj}]]"
            return self.closure_call(e)
        raise Unsupported(kind)

    def _binary(self, e) -> str:
        op = e.op
        if op in ("in", "not in"):
            item = self.expr(e.left)
            if self.res.types.get(e.right) == ZONE:
                test = f"({self.name(_in_zone, 'f')}(st, {item}, {self.expr(e.right)}))"
                return test if op == "in" else f"(not {test})"
            return f"({item} {op} {self.walk(e, self.expr(e.right), self.ctx.always_short(e.right))})"
        lt, rt_ = self.res.types.get(e.left), self.res.types.get(e.right)
        if op in ("==", "!=") and (type(e.left) is A.NoneLit or type(e.right) is A.NoneLit):
            other = e.right if type(e.left) is A.NoneLit else e.left
            return f"({self.expr(other)} {'is' if op == '==' else 'is not'} None)"
        if op in ("==", "!=") and not self.ctx.short(e.left) and not self.ctx.short(e.right):
            test = f"{self.name(equal, 'f')}(rt, {self.expr(e.left)}, {self.expr(e.right)}, {self.name(e.span, 'S')})"
            return test if op == "==" else f"(not {test})"
        if op in ("==", "!=", "and", "or"):
            a, b = self.expr(e.left), self.expr(e.right)
        else:
            a = self.seq(e.left) if lt == ZONE else self.expr(e.left)
            b = self.seq(e.right) if rt_ == ZONE else self.expr(e.right)
        if op == "/":
            return f"_div({a}, {b})"
        if op == "%":
            return f"_mod({a}, {b})"
        if op == "..":
            if type(e.left) is A.IntLit and type(e.right) is A.IntLit and e.right.value - e.left.value < FREE_RANGE - 1:
                return repr(tuple(range(e.left.value, e.right.value + 1)))     # e.g. 0..2: a constant
            return f"{self.name(bounded_range, 'f')}(rt, {a}, {b}, {self.name(e.span, 'S')})"
        if op == "+" and self.res.types.get(e) != INT:
            zones = zone_chain(e, self.res.types)
            if zones is not None:
                # zone + zone + ...: one tuple of their cards, not a copy per `+`.
                cards = "".join(f"*st.zones[{self.expr(z)}], " for z in zones)
                return self._joined(f"({cards})", e.span)
            t = self.res.types.get(e)
            if t is not None and t.name in ("text", "list") and not nests(t):
                return self._joined(f"{a} + {b}", e.span)
            return f"{self.name(bounded_join, 'f')}(rt, {a}, {b}, {self.name(e.span, 'S')}, {nests(t)})"
        if op in ("+", "-", "*") and may_double(op, e.left, e.right, self.ctx.bounded):
            if self._in_item and _FAST.match(a) and _FAST.match(b):
                # Computed again rather than bound (see _in_item): two fast reads and an operation.
                return (f"({a} {op} {b} if {MIN_INT} <= {a} {op} {b} <= {MAX_INT} "
                        f"else {self.name(overflow, 'f')}({a} {op} {b}, {self.name(e.span, 'S')}))")
            return self.int_result(f"{a} {op} {b}", e.span)
        return f"({a} {op} {b})"

    def _joined(self, src: str, span) -> str:
        """A text or list built by `src`, as limits.joined: its length tested inline."""
        if self._in_iterable:
            return f"{self.name(joined, 'f')}(rt, {src}, {self.name(span, 'S')})"
        j = self.temp("j")
        return f"({j} if len({j} := {src}) < {FREE_WALK} else {self.name(joined, 'f')}(rt, {j}, {self.name(span, 'S')}))"

    def int_result(self, src: str, span) -> str:
        """An integer computed by `src`, refused past 64 bits (as limits.checked_int)."""
        if self._in_iterable:
            return f"{self.name(checked_int, 'f')}({src}, {self.name(span, 'S')})"
        t = self.temp("n")
        return (f"({t} if {MIN_INT} <= ({t} := {src}) <= {MAX_INT} "
                f"else {self.name(overflow, 'f')}({t}, {self.name(span, 'S')}))")

    def _face_field(self, detail: str, obj: str) -> str:
        """A face-dependent field read from a table of the 8 ways a card can lie (face up or
        down, turned 0/90/180/270), filled once from the compiler's reader."""
        if not SIMPLE.match(obj):
            if self._in_iterable:
                return f"{self.name(self._face_reader(detail), 'R')}(st, {obj})"
            c = self.temp("c")
            obj, bind = c, f"({c} := {obj})"
        else:
            bind = obj
        table = self.name(self._face_table(detail), "T")
        return f"({table}[{obj}][st.turn[{obj}] // 90 + (0 if st.faceup[{obj}] else 4)] if {bind} is not None else None)"

    def _face_table(self, detail: str) -> list:
        memo = self._face_tables
        if detail not in memo:
            read = self._face_reader(detail)
            n = len(self.ctx.tables.card_defs)
            lying = _Lying()
            ways = []
            for up in (True, False):
                for turn in (0, 90, 180, 270):
                    lying.faceup, lying.turn = [up] * n, [turn] * n
                    ways.append([read(lying, c) for c in range(n)])
            memo[detail] = [tuple(way[c] for way in ways) for c in range(n)]
        return memo[detail]

    def _face_reader(self, detail: str):
        memo = self._readers
        if detail not in memo:
            memo[detail] = self.cl.face_reader(detail)
        return memo[detail]

    def _iterable(self, node, hoisted: bool = False) -> str:
        """A comprehension's iterable (a zone: its list of cards), where `:=` is not allowed;
        `hoisted`: bound to a name before the comprehension runs, where `:=` is allowed."""
        self._in_iterable += not hoisted
        try:
            return f"st.zones[{self.expr(node)}]" if self.res.types.get(node) == ZONE else self.expr(node)
        finally:
            self._in_iterable -= not hoisted

    def consumed(self, e) -> str:
        """e as a sequence read once, at once, and dropped (by count, sum, max...): a
        comprehension need not be frozen into a tuple, a zone need not be copied."""
        if type(e) is A.Comprehension:
            return self._comprehension(e, frozen=False)
        if self.res.types.get(e) == ZONE:
            return f"st.zones[{self.expr(e)}]"
        return self.expr(e)

    def walk(self, e, items: str, short: bool = False) -> str:
        """Source of `items` (read once) charged one step per item for e's walk of them
        (limits.charge); in a paid place (closures.is_once), only from FREE_WALK items on, the
        length tested inline (limits.charge_long: a short walk costs no call), or not at all
        when they are `short` (fewer than FREE_WALK whatever the state: context.always_short)."""
        span = self.name(e.span, "S")
        if not self.cl.is_once(e):
            return f"{self.name(charge, 'f')}(rt, {items}, {span})"
        if short:
            return items
        inline = self._short_walk(items, span)
        if inline is None:
            return f"{self.name(charge_long, 'f')}(rt, {items}, {span})"
        seq, test = inline
        return f"({seq} if {test} else ())"

    def _short_walk(self, items: str, span: str, zone: bool = False):
        """(the items' source, a test) for a walk in a paid place: the test reads the length
        and charges a long walk (limits.charge_long; it is never false). None where the items
        can be neither bound with `:=` (a comprehension's iterable) nor read twice."""
        if not self._in_iterable and not (self._in_item and _FAST.match(items)):
            t = self.temp("t")
            n = f"len({t} := {items})" if zone else f"len(({t} := {items}) or ())"
        elif _REREAD.match(items):
            t = items
            n = f"len({items})" if zone else f"len({items} or ())"
        else:
            return None
        return t, f"{n} < {FREE_WALK} or {self.name(charge_long, 'f')}(rt, {t}, {span})"

    def _comprehension(self, e, frozen: bool = True) -> str:
        """A list comprehension, charged (as limits says) per item of its iterable and, when
        its items may be lists or texts, by the size of what it makes; `frozen`: as a tuple."""
        slot = self.res.slots[e]
        span = self.name(e.span, "S")
        # In a paid place and short: no dearer than the step that paid (limits.charge_long).
        once = self.cl.is_once(e)
        # An expression never moves cards, so a comprehension can walk a zone's list itself.
        # In a paid place (outside an iterable) the items are bound to a name first (see
        # _short_walk), so what they are made of may use `:=` as well.
        free = once and self.ctx.always_short(e.iterable)
        items = self._iterable(e.iterable, hoisted=once and not free and not self._in_iterable)
        short = None
        if free:
            seq = items                       # never FREE_WALK cards: nothing to charge
        elif once and (short := self._short_walk(items, span, self.res.types.get(e.iterable) == ZONE)) is not None:
            seq, test = short
        else:
            seq = f"{self.name(charge_long if once else charge, 'f')}(rt, {items}, {span})"
        inline = short is not None
        with self._player_var(e.iterable, slot, (e.elem, e.cond)):
            self._in_item += 1
            try:
                elem = self.expr(e.elem)
                cond = "" if e.cond is None else f" if {self.expr(e.cond)}"
            finally:
                self._in_item -= 1
            var = self._bound_var(slot)
            sizing = nests(self.res.types.get(e))
            src = f"[{elem} for {var} in {seq}{cond}]"
            if frozen:
                src = f"tuple({src})"
            if inline:
                src = f"({src} if {test} else ())"      # the test is never false
            return f"{self.name(sized, 'f')}(rt, {src}, {span})" if sizing else src

    def _index(self, e) -> str:
        obj_t = self.res.types.get(e.obj)
        idx = self.expr(e.index)
        span = self.name(e.span, "S")
        if obj_t is not None and obj_t.name == "tuple":
            # A tuple's index is checked when the rules are; the tuple itself may be none
            # (e.g. a `choose` of tuples passed), which is R009 as the closures say.
            obj = self.expr(e.obj)
            check = self.name(list_item, "f")
            if SIMPLE.match(obj):
                return f"({obj}[{idx}] if {obj} is not None else {check}({obj}, {idx}, {span}))"
            if self._in_iterable:
                return f"{check}({obj}, {idx}, {span})"
            x = self.temp("x")
            return f"({x}[{idx}] if ({x} := {obj}) is not None else {check}({x}, {idx}, {span}))"
        if obj_t == ZONE:
            seq, check, null = f"st.zones[{self.expr(e.obj)}]", self.name(zone_item, "f"), ""
        else:
            seq, check, null = self.expr(e.obj), self.name(list_item, "f"), " or ()"
        if self._in_iterable:
            return f"{check}({seq}, {idx}, {span})"
        # Inline, as Python indexes (the same bounds, read once in the common case of a
        # non-negative index); the helper handles negative indices and words the errors.
        x = self.temp("x")
        if re.fullmatch(r"\d+", idx) and not null:
            return f"({x}[{idx}] if len({x} := {seq}) > {idx} else {check}({x}, {idx}, {span}))"
        i = self.temp("i")
        if null:
            # A list may be none: test it before its length, but read the index anyway (as
            # the closure does) so the error is the same.
            return (f"({x}[{i}] if (({x} := {seq}) is not None) & (len({x}{null}) > ({i} := {idx}) >= 0) "
                    f"else {check}({x}, {i}, {span}))")
        return f"({x}[{i}] if len({x} := {seq}) > ({i} := {idx}) >= 0 else {check}({x}, {i}, {span}))"

    def _call(self, e) -> str:
        kind = self.res.calls[e]
        if kind[0] == "zone":
            info = self.ctx.zone_info(kind[1])
            if info.per_player and not info.dims:
                p = self.expr(kind[2][0])
                if p.isdigit():
                    return str(info.base + int(p))       # a fixed seat, e.g. player(1)
                if p in self._players:
                    return f"({info.base} + {p})"
                if SIMPLE.match(p) and p != "None":
                    err = self.name(E.zone_of_none(kind[1], e.span), "E")
                    return f"({info.base} + {p} if {p} is not None else _raise({err}))"
                return f"{self.name(_player_zone, 'f')}({info.base}, {p}, {kind[1]!r}, {self.name(e.span, 'S')})"
            if not info.per_player and len(info.dims) == 1:
                return self._family_zone(e, info, self.expr(kind[2][0]))
            if not info.per_player and len(info.dims) == 2:
                col, row = (self.expr(a) for a in kind[2])
                return (f"{self.name(grid_zone, 'f')}({info.base}, {col}, {row}, {info.dims!r}, {kind[1]!r}, "
                        f"{self.name(e.span, 'S')})")
            return self.closure_call(e)
        if kind[0] == "func":
            func = self.ctx.m.funcs[kind[1]]
            bodies = self.cl.func_body(func)
            nslots = self.res.frame_sizes[func.decl]
            args = self.call_args(kind[2], func.params)
            pad = nslots - len(args)
            arglist = "[" + ", ".join(args) + (", " if args and pad else "") + ", ".join(["None"] * pad) + "]"
            if self.ctx.consts.call_is_constant(e):
                return self.closure_call(e)      # the closure evaluates it once
            weight = self.ctx.call_weights.get(func.name, 1)
            if weight >= HEAVY_CALL:
                # Charged its weight before it runs (limits.HEAVY_CALL), never written inline.
                cost = f"{self.name(charge_count, 'f')}(rt, {weight}, {self.name(e.span, 'S')})"
                body = self.name(bodies[func.name], 'b') if bodies.get(func.name) is not None \
                    else f"{self.name(bodies, 'B')}[{func.name!r}]"
                return f"({cost} or {body}(rt, {arglist}))"
            if self.cl.once_call(e, func):
                # Its body is a paid place here: written inline, or its own compilation.
                with self.cl.once_within(func):
                    inline = self._inline(func, args)
                if inline is not None:
                    return inline
                return f"{self.name(self.cl.func_body(func, once=True)[func.name], 'b')}(rt, {arglist})"
            inline = self._inline(func, args)
            if inline is not None:
                return inline
            if bodies.get(func.name) is not None:
                return f"{self.name(bodies[func.name], 'b')}(rt, {arglist})"
            return f"{self.name(bodies, 'B')}[{func.name!r}](rt, {arglist})"      # recursive: still being compiled
        if kind[0] == "prim":
            return self._prim(e, kind[1], kind[2])
        return self.closure_call(e)

    def _family_zone(self, e, info, idx: str) -> str:
        """`column(i)`: the zone index, bounds checked inline (a none or an index out of range
        goes to the helper, which words the error)."""
        n = info.dims[0]
        check = f"{self.name(family_zone, 'f')}({info.base}, {{i}}, {n}, {self.res.calls[e][1]!r}, {self.name(e.span, 'S')})"
        if re.fullmatch(r"\d+", idx) and int(idx) < n:
            return str(info.base + int(idx))
        if SIMPLE.match(idx) and idx != "None":
            return f"({info.base} + {idx} if {idx}.__class__ is int and 0 <= {idx} < {n} else {check.format(i=idx)})"
        if self._in_iterable:
            return check.format(i=idx)
        i = self.temp("i")
        return f"({info.base} + {i} if ({i} := {idx}).__class__ is int and 0 <= {i} < {n} else {check.format(i=i)})"

    def _is_inlinable(self, func) -> bool:
        """A small function that cannot recurse and has no lambda: its body can be written
        where it is called (its comprehensions bind fresh names)."""
        name = func.name
        if name not in self._inlinable:
            nodes = list(syntax_nodes(func.decl.body))
            self._inlinable[name] = (name not in self.ctx.recursive_functions and len(nodes) <= _INLINE_NODES
                                     and not any(isinstance(x, A.Lambda) for x in nodes))
        return self._inlinable[name]

    def _inline(self, func, args: list[str]) -> str | None:
        """The function's body with its parameters replaced by the call's arguments, which are
        evaluated once each, left to right, as a call would (None: call it instead)."""
        if not self._is_inlinable(func):
            return None
        subst, binds = {}, []
        try:
            for slot, src in enumerate(args):
                if SIMPLE.match(src):
                    subst[slot] = src
                else:
                    t = self.temp("a")
                    binds.append(f"({t} := {src})")
                    subst[slot] = t
            for x in syntax_nodes(func.decl.body):
                if type(x) is A.Comprehension:
                    subst[self.res.slots[x]] = self.nsp.fresh("q")
            saved, self._subst = self._subst, subst
            try:
                body = self.expr(func.decl.body)
            finally:
                self._subst = saved
        except Unsupported:
            return None
        return f"({', '.join(binds)}, {body})[-1]" if binds else f"({body})"

    def _prim(self, e, name: str, args) -> str:
        """A primitive's inline template (see builtins/base.py), or a call of its closure."""
        template = INLINE.get(name)
        src = template(self, e, self.ctx.prim_args(name, args)) if template is not None else None
        return src if src is not None else self.closure_call(e)

    def src(self, node, as_seq: bool = False) -> str:
        """Source for expression `node` written inline (`as_seq`: a zone as its cards), or a
        call of the function compiled for it."""
        with self._writing():
            try:
                return self.seq(node) if as_seq else self.expr(node)
            except Unsupported:
                pass
        fn = self.cl.list_expr(node) if as_seq else self.cl.expr(node)
        return f"{self.name(fn, 'q')}(rt, L)"

    writing = _writing
    iterable = _iterable


def _player_text(p) -> str:
    return "none" if p is None else f"Player {p + 1}"


def _int_text(v) -> str:
    return "none" if v is None else ("true" if v is True else "false" if v is False else str(v))


def _text_text(v) -> str:
    return "none" if v is None else v


def _raise(exc):
    raise exc


def _player_zone(base, p, name, span):
    if p is None:
        raise E.zone_of_none(name, span)
    return base + p








def _in_zone(st, card, zone) -> bool:
    return card is not None and st.where[card] == zone










# What generated expressions and blocks refer to by name.
SOURCE_NAMES = {"BREAK": BREAK, "CONTINUE": CONTINUE, "Return": Return, "_div": _div, "_mod": _mod,
                "_raise": _raise}
