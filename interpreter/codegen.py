"""Python code generation for expressions and non-pausing statement blocks (part of the
compiler: checked model -> compiled program).

Where the first compiler builds a tree of small closures (one Python call per node), this
module writes the same meaning as Python source, the way Jinja compiles templates, and
lets CPython compile it once: a rule like `sum([c.number for c in row(p) if c.faceup])`
becomes one function with a list comprehension, reading the state's lists directly.
Anything it does not know how to write (most primitives) is called as the closure the
first compiler builds for it, so both stay interchangeable and the semantics live in one
place. The generated source of every function is kept (`program.compiler.gen.sources`) for
debugging (`rulesvm` never writes it to disk).
"""

from __future__ import annotations

import itertools
import re
from contextlib import contextmanager

from rulesvm.dsl import ast as A
from rulesvm.dsl.types import ANY, BOOL, CARD, INT, PLAYER, ZONE

from .builtins import CARD_ACTIONS, log_text_draws_random
from .errors import MAX_ITEMS, RulesRuntimeError
from .format import formatter
from .limits import bounded_join, bounded_range, concat_lists
from .purity import recursive_functions, recursive_procedures, syntax_nodes
from .runtime import BREAK, CONTINUE, Return, list_item, zone_item
from .state import Decision, Option

_ids = itertools.count()


class _Unsupported(Exception):
    pass


# Argument sources cheap and harmless to repeat, so an inlined function may read them where
# it reads its parameter (anything else is bound once, in order, with `:=`).
_SIMPLE = re.compile(r"^(L\[\d+\]|v\d+|_q\d+|st\.gvars\[\d+\]|-?\d+|\(-\d+\)|None|True|False|rt\.n|_a\d+|'[^'\\]*')$")

# A function body larger than this (in syntax nodes) is called, not inlined.
_INLINE_NODES = 40

_NOT_LITERAL = object()

# A runner calls a procedure's runner itself while fewer frames than this are active; deeper
# calls go back through Runtime.run, so deep recursion in the rules never deepens Python's stack.
_SYNC_DEPTH = 48


def _known_ints(e) -> set | None:
    """Every value e can have, when it is an integer literal or a choice between them."""
    if type(e) is A.IntLit:
        return {e.value}
    if type(e) is A.IfExpr:
        a, b = _known_ints(e.then), _known_ints(e.else_)
        return a | b if a is not None and b is not None else None
    return None


class _Lying:
    """Just the faces and turns of a state: how `_face_table` asks the reader about each way
    a card can lie."""
    __slots__ = ("faceup", "turn")


def _div(a, b):
    if b == 0:
        raise RulesRuntimeError("division by zero in `/`", None, None, "R010")
    return a // b


def _mod(a, b):
    if b == 0:
        raise RulesRuntimeError("division by zero in `%`", None, None, "R010")
    return a % b


class PyGen:
    """Writes Python source for a compiler's expressions and direct blocks."""

    def __init__(self, compiler):
        self.c = compiler
        self.res = compiler.res
        from .compiler import _in_simultaneous, _return, forced      # (compiler imports this module)
        self.ns: dict = {"BREAK": BREAK, "CONTINUE": CONTINUE, "Return": Return, "_div": _div, "_mod": _mod,
                         "RulesRuntimeError": RulesRuntimeError, "_raise": _raise, "_return": _return,
                         "_in_simultaneous": _in_simultaneous, "forced": forced}
        self.sources: list = []
        self._consts: dict = {}
        # While a function body is written inline: its parameter slots -> the caller's sources.
        self._subst: dict | None = None
        # Inside a comprehension's iterable, where Python forbids `:=`.
        self._in_iterable = 0
        self._inlinable: dict = {}
        # Writing a body that has a frame of its own (a function, a never-pausing procedure's
        # body): its variables are Python locals `v<slot>`, not slots of the list L, which
        # nobody reads once the body returns.
        self._locals = False
        self._nslots = 0
        # Sources of variables that hold a player for sure while the code using them is
        # written (a loop over `players` that never assigns its variable): no test for none.
        self._players: set = set()
        # Block functions -> (statements, rule), so a procedure's runner can paste their code.
        self.blocks: dict = {}
        # While a block is pasted into a runner: how its `break`/`continue`/`return` leave it.
        self._signals: dict | None = None

    # ------------------------------------------------------------------ namespace
    def name(self, value, prefix: str = "k") -> str:
        key = id(value)
        if key in self._consts and self.ns.get(self._consts[key]) is value:
            return self._consts[key]
        n = f"_{prefix}{next(_ids)}"
        self.ns[n] = value
        self._consts[key] = n
        return n

    def closure_call(self, e) -> str:
        return f"{self.name(self.c._expr(e), 'c')}(rt, {self.frame_list(e)})"

    def frame_list(self, e) -> str:
        """The list a closure for e reads the variables from: L, or, where they are Python
        locals, a list of their values now (an expression assigns no variable a later
        statement reads, so what a closure writes in it may be dropped)."""
        if self.c.consts.is_constant(e, frozenset()):
            return "L"                       # reads no variable
        if self._subst is not None:
            raise _Unsupported("a closure would read the inlined function's parameters from L")
        if self._locals:
            return "[" + ", ".join(f"v{k}" for k in range(self._nslots)) + "]"
        return "L"

    def _temp(self, prefix: str) -> str:
        """A fresh Python name bound with `:=` (or _Unsupported where Python forbids that)."""
        if self._in_iterable:
            raise _Unsupported("`:=` in a comprehension's iterable")
        return f"_{prefix}{next(_ids)}"

    def build(self, src_body: str, fname: str):
        code = f"def {fname}(rt, L):\n    st = rt.st\n{src_body}"
        self._compile(code, f"<rules:{fname}>")
        return self.ns[fname]

    def _compile(self, code: str, filename: str) -> None:
        """Compile and define generated source; source Python cannot compile (an expression
        nested deeper than its parser allows) raises _Unsupported: the closures run it."""
        try:
            compiled = compile(code, filename, "exec")
        except (SyntaxError, RecursionError, MemoryError) as exc:
            raise _Unsupported(f"Python cannot compile the generated code: {exc}") from None
        self.sources.append(code)
        exec(compiled, self.ns)

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
        saved = self._locals, self._nslots, self._subst, self._in_iterable, self._players
        self._locals, self._nslots = frame is not None, frame[1] if frame is not None else 0
        self._subst, self._in_iterable, self._players = None, 0, set()
        try:
            yield
        finally:
            self._locals, self._nslots, self._subst, self._in_iterable, self._players = saved

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

    def _all_players(self, e) -> bool:
        """Is e `players` or `players_from(p)` (every item a player)?"""
        if type(e) is A.Name:
            return self.res.names.get(e) == ("const", "players")
        kind = self.res.calls.get(e) if type(e) is A.Call else None
        return kind is not None and kind[0] == "prim" and kind[1] == "players_from"

    def _assigns(self, scope, slot: int) -> bool:
        """Does code in `scope` assign local variable `slot`?"""
        return any(type(x) is A.Assign and self.res.targets.get(x) == ("local", slot) for x in syntax_nodes(scope))

    @contextmanager
    def _player_var(self, iterable, slot: int, body):
        """While the body of a loop (or comprehension) over `players` is written, its variable
        is known to hold a player, unless the body assigns it."""
        src = self._bound_var(slot)
        known = self._all_players(iterable) and src not in self._players and not self._assigns(body, slot)
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
                    return self.build(self._prologue(*frame) + f"    return {self.expr(e)}\n", f"_e{next(_ids)}")
                except _Unsupported:
                    pass
        with self._writing():
            try:
                src = self.expr(e)
            except _Unsupported:
                return self.c._expr(e)
            if src.endswith("(rt, L)") and src[:-7] in self.ns and src[:-7].startswith("_c"):
                return self.ns[src[:-7]]         # the whole expression is a closure: no wrapper
            try:
                return self.build(f"    return {src}\n", f"_e{next(_ids)}")
            except _Unsupported:
                return self.c._expr(e)

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
            return f"({items},)" if items else "()"
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
            prog = self.c.prog
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
                fmt = formatter(t, lambda: self.c.prog)
                parts.append(f"{self.name(fmt, 'fmt')}({src}, rt)")
        if not parts:
            return "''"
        if len(parts) == 1:
            return parts[0] if parts[0].startswith(("'", '"')) else f"str({parts[0]})"
        return "(" + " + ".join(parts) + ")"

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
            v = self.c.options[detail]
            return repr(v) if isinstance(v, (int, str, bool, tuple)) or v is None else self.name(v)
        if kind == "zone":
            return str(self.c.zone_base[detail])
        if kind == "const":
            if detail == "players":
                return "rt.players"
            if detail == "player_count":
                return "rt.n"
        if kind == "ability":
            return repr(detail)
        raise _Unsupported(kind)

    def _attr(self, e) -> str:
        kind, detail = self.res.attrs[e]
        obj = self.expr(e.obj)
        if kind == "pvar":
            return f"st.pvars[{detail}][{obj}]"
        if kind == "cvar":
            return f"st.cvars[{detail}][{obj}]"
        if kind == "field":
            prog = self.c.prog
            if self.c._formulas(detail) is None:
                if prog.face_fields.get(detail) is None:
                    table = {c: v for c, v in enumerate(prog.card_fields[detail])}
                    table[None] = None
                    return f"{self.name(table, 'F')}[{obj}]"
                return self._face_field(detail, obj)
            return self.closure_call(e)
        if kind == "pprop":
            return f"({obj} + 1)"
        if kind == "cprop":
            prog = self.c.prog
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
        raise _Unsupported(kind)

    def _binary(self, e) -> str:
        op = e.op
        if op in ("in", "not in"):
            item = self.expr(e.left)
            if self.res.types.get(e.right) == ZONE:
                test = f"({self.name(_in_zone, 'f')}(st, {item}, {self.expr(e.right)}))"
                return test if op == "in" else f"(not {test})"
            return f"({item} {op} {self.expr(e.right)})"
        lt, rt_ = self.res.types.get(e.left), self.res.types.get(e.right)
        if op in ("==", "!=") and (type(e.left) is A.NoneLit or type(e.right) is A.NoneLit):
            other = e.right if type(e.left) is A.NoneLit else e.left
            return f"({self.expr(other)} {'is' if op == '==' else 'is not'} None)"
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
            if type(e.left) is A.IntLit and type(e.right) is A.IntLit and e.right.value - e.left.value < 64:
                return repr(tuple(range(e.left.value, e.right.value + 1)))     # e.g. 0..2: a constant
            return f"{self.name(bounded_range, 'f')}({a}, {b}, {self.name(e.span, 'S')})"
        if op == "+" and self.res.types.get(e) != INT:
            zones = self._zone_terms(e)
            if zones is not None:
                # zone + zone + ...: one tuple of their cards, not a copy per `+`.
                if len(zones) * len(self.c.prog.card_ids) <= MAX_ITEMS:
                    # A card lies in one zone: these zones cannot hold too many together.
                    return "(" + "".join(f"*st.zones[{z}], " for z in zones) + ")"
                lists = ", ".join(f"st.zones[{z}]" for z in zones)
                return f"{self.name(concat_lists, 'f')}({self.name(e.span, 'S')}, {lists})"
            return f"{self.name(bounded_join, 'f')}({a}, {b}, {self.name(e.span, 'S')})"
        return f"({a} {op} {b})"

    def _face_field(self, detail: str, obj: str) -> str:
        """A face-dependent field read from a table of the 8 ways a card can lie (face up or
        down, turned 0/90/180/270), filled once from the compiler's reader."""
        if not _SIMPLE.match(obj):
            if self._in_iterable:
                return f"{self.name(self._face_reader(detail), 'R')}(st, {obj})"
            c = self._temp("c")
            obj, bind = c, f"({c} := {obj})"
        else:
            bind = obj
        table = self.name(self._face_table(detail), "T")
        return f"({table}[{obj}][st.turn[{obj}] // 90 + (0 if st.faceup[{obj}] else 4)] if {bind} is not None else None)"

    def _face_table(self, detail: str) -> list:
        memo = self.__dict__.setdefault("_face_tables", {})
        if detail not in memo:
            read = self._face_reader(detail)
            n = len(self.c.prog.card_defs)
            lying = _Lying()
            ways = []
            for up in (True, False):
                for turn in (0, 90, 180, 270):
                    lying.faceup, lying.turn = [up] * n, [turn] * n
                    ways.append([read(lying, c) for c in range(n)])
            memo[detail] = [tuple(way[c] for way in ways) for c in range(n)]
        return memo[detail]

    def _face_reader(self, detail: str):
        memo = self.__dict__.setdefault("_readers", {})
        if detail not in memo:
            memo[detail] = self.c.face_reader(detail)
        return memo[detail]

    def _iterable(self, node) -> str:
        """A comprehension's iterable (a zone: its list of cards), where `:=` is not allowed."""
        self._in_iterable += 1
        try:
            return f"st.zones[{self.expr(node)}]" if self.res.types.get(node) == ZONE else self.expr(node)
        finally:
            self._in_iterable -= 1

    def consumed(self, e) -> str:
        """e as a sequence read once, at once, and dropped (by count, sum, max...): a
        comprehension need not be frozen into a tuple, a zone need not be copied."""
        if type(e) is A.Comprehension:
            src = self._comprehension(e)
            return src[len("tuple("):-1]       # the list comprehension inside tuple(...)
        if self.res.types.get(e) == ZONE:
            return f"st.zones[{self.expr(e)}]"
        return self.expr(e)

    def _zone_terms(self, e) -> list[str] | None:
        """The zones of `z1 + z2 + ...` (sources of zone indices), or None if any term is not a zone."""
        if type(e) is A.Binary and e.op == "+":
            left, right = self._zone_terms(e.left), self._zone_terms(e.right)
            return left + right if left is not None and right is not None else None
        if self.res.types.get(e) == ZONE:
            return [self.expr(e)]
        return None

    def _comprehension(self, e) -> str:
        slot = self.res.slots[e]
        # An expression never moves cards, so a comprehension can walk a zone's list itself.
        seq = self._iterable(e.iterable)
        with self._player_var(e.iterable, slot, (e.elem, e.cond)):
            elem = self.expr(e.elem)
            var = self._bound_var(slot)
            if e.cond is None:
                return f"tuple([{elem} for {var} in {seq}])"
            return f"tuple([{elem} for {var} in {seq} if {self.expr(e.cond)}])"

    def _index(self, e) -> str:
        obj_t = self.res.types.get(e.obj)
        idx = self.expr(e.index)
        span = self.name(e.span, "S")
        if obj_t is not None and obj_t.name == "tuple":
            # A tuple's index is checked when the rules are; the tuple itself may be none
            # (e.g. a `choose` of tuples passed), which is R009 as the closures say.
            obj = self.expr(e.obj)
            check = self.name(list_item, "f")
            if _SIMPLE.match(obj):
                return f"({obj}[{idx}] if {obj} is not None else {check}({obj}, {idx}, {span}))"
            if self._in_iterable:
                return f"{check}({obj}, {idx}, {span})"
            x = self._temp("x")
            return f"({x}[{idx}] if ({x} := {obj}) is not None else {check}({x}, {idx}, {span}))"
        if obj_t == ZONE:
            seq, check, null = f"st.zones[{self.expr(e.obj)}]", self.name(zone_item, "f"), ""
        else:
            seq, check, null = self.expr(e.obj), self.name(list_item, "f"), " or ()"
        if self._in_iterable:
            return f"{check}({seq}, {idx}, {span})"
        # Inline, as Python indexes (the same bounds, read once in the common case of a
        # non-negative index); the helper handles negative indices and words the errors.
        x = self._temp("x")
        if re.fullmatch(r"\d+", idx) and not null:
            return f"({x}[{idx}] if len({x} := {seq}) > {idx} else {check}({x}, {idx}, {span}))"
        i = self._temp("i")
        if null:
            # A list may be none: test it before its length, but read the index anyway (as
            # the closure does) so the error is the same.
            return (f"({x}[{i}] if (({x} := {seq}) is not None) & (len({x}{null}) > ({i} := {idx}) >= 0) "
                    f"else {check}({x}, {i}, {span}))")
        return f"({x}[{i}] if len({x} := {seq}) > ({i} := {idx}) >= 0 else {check}({x}, {i}, {span}))"

    def _call(self, e) -> str:
        kind = self.res.calls[e]
        if kind[0] == "zone":
            info = self._zone_info(kind[1])
            if info.per_player and not info.dims:
                p = self.expr(kind[2][0])
                if p.isdigit():
                    return str(info.base + int(p))       # a fixed seat, e.g. player(1)
                if p in self._players:
                    return f"({info.base} + {p})"
                if _SIMPLE.match(p) and p != "None":
                    err = self.name(RulesRuntimeError(f"zone `{kind[1]}` of none", e.span, None, "R008"), "E")
                    return f"({info.base} + {p} if {p} is not None else _raise({err}))"
                return f"{self.name(_player_zone, 'f')}({info.base}, {p}, {kind[1]!r}, {self.name(e.span, 'S')})"
            return self.closure_call(e)
        if kind[0] == "func":
            func = self.c.m.funcs[kind[1]]
            bodies = self.c.func_body(func)
            nslots = self.res.frame_sizes[func.decl]
            args = self.call_args(kind[2], func.params)
            pad = nslots - len(args)
            arglist = "[" + ", ".join(args) + (", " if args and pad else "") + ", ".join(["None"] * pad) + "]"
            if self.c.consts.call_is_constant(e):
                return self.closure_call(e)      # the closure evaluates it once
            inline = self._inline(func, args)
            if inline is not None:
                return inline
            if bodies.get(func.name) is not None:
                return f"{self.name(bodies[func.name], 'b')}(rt, {arglist})"
            return f"{self.name(bodies, 'B')}[{func.name!r}](rt, {arglist})"      # recursive: still being compiled
        if kind[0] == "prim":
            return self._prim(e, kind[1], kind[2])
        return self.closure_call(e)

    def _is_inlinable(self, func) -> bool:
        """A small function that cannot recurse and has no lambda: its body can be written
        where it is called (its comprehensions bind fresh names)."""
        name = func.name
        if name not in self._inlinable:
            if "_recursive" not in self.c.__dict__:
                self.c._recursive = recursive_functions(self.res, self.c.m.funcs)
            nodes = list(syntax_nodes(func.decl.body))
            self._inlinable[name] = (name not in self.c._recursive and len(nodes) <= _INLINE_NODES
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
                if _SIMPLE.match(src):
                    subst[slot] = src
                else:
                    t = self._temp("a")
                    binds.append(f"({t} := {src})")
                    subst[slot] = t
            for x in syntax_nodes(func.decl.body):
                if type(x) is A.Comprehension:
                    subst[self.res.slots[x]] = f"_q{next(_ids)}"
            saved, self._subst = self._subst, subst
            try:
                body = self.expr(func.decl.body)
            finally:
                self._subst = saved
        except _Unsupported:
            return None
        return f"({', '.join(binds)}, {body})[-1]" if binds else f"({body})"

    def _literal(self, node, default):
        """A literal argument's value (the default when not given), or _NOT_LITERAL."""
        if node is None:
            return default
        if isinstance(node, (A.IntLit, A.BoolLit)):
            return node.value
        if isinstance(node, A.StrLit) and all(isinstance(p, str) for p in node.parts):
            return "".join(node.parts)
        return _NOT_LITERAL

    def _prim_args(self, name: str, args) -> dict:
        """A primitive call's arguments by parameter name (None where not given)."""
        return dict(zip((p.name for p in self.c.prim_spec(name).params), args))

    def _move_how(self, a: dict) -> tuple | None:
        """(at, face) of a `move` whose `at` and `face` are literal and plain, else None."""
        defaults = {p.name: p.default for p in self.c.prim_spec("move").params}
        at, face = self._literal(a["at"], defaults["at"]), self._literal(a["face"], defaults["face"])
        return (at, face) if at in ("top", "bottom") and face in ("up", "down", "keep") else None

    def _zone_info(self, name: str):
        return next(z for z in self.c.prog.zones if z.name == name)

    def _prim(self, e, name: str, args) -> str:
        spec = self.c.prim_spec(name)
        a = self._prim_args(name, args)
        if name == "move" and self.res.types.get(a["cards"]) in (CARD, ZONE):
            how = self._move_how(a)
            if how is not None:
                at, face = how
                method = "move_card" if self.res.types.get(a["cards"]) == CARD else "move_zone"
                return (f"rt.{method}({self.expr(a['to'])}, {self.expr(a['cards'])}, {at == 'bottom'}, "
                        f"{face!r}, {self.name(e.span, 'S')})")
            return self.closure_call(e)
        if name in CARD_ACTIONS:
            deg = a.get("degrees")
            value = "None" if "degrees" not in a else \
                (self.expr(deg) if deg is not None else repr(spec.params[1].default))
            return f"{self.name(CARD_ACTIONS[name], 'f')}(rt, {self.expr(a['card'])}, {value}, {self.name(e.span, 'S')})"
        if name == "log":
            to = self.expr(a["to"]) if a["to"] is not None else "None"
            if log_text_draws_random(self.c, e):
                return f"{self.name(_log_always, 'f')}(rt, {self.expr(a['message'])}, {to})"
            return f"(rt.log({self.expr(a['message'])}, {to}) if rt.sink is not None else None)"
        if name in ("first", "last"):
            return f"{self.name(_bottom if name == 'first' else _top, 'f')}({self.consumed(a['items'])})"
        if name == "slice":
            x = a["items"]
            src = f"st.zones[{self.expr(x)}]" if self.res.types.get(x) == ZONE else self.expr(x)
            return f"tuple({src}[{self.expr(a['start'])}:{self.expr(a['end'])}])"
        if name == "clamp":
            return f"max({self.expr(a['low'])}, min({self.expr(a['high'])}, {self.expr(a['value'])}))"
        if name == "player" and isinstance(a["seat"], A.IntLit) and a["seat"].value >= 1:
            k = a["seat"].value
            if k <= self.c.m.players[0]:
                return str(k - 1)        # every allowed player count has this seat
            return f"({k - 1} if rt.n >= {k} else {self.name(_no_seat, 'f')}({k}, rt.n, {self.name(e.span, 'S')}))"
        if name == "opponent":
            return f"(1 - {self.expr(a['player'])} if rt.n == 2 else {self.name(_not_two, 'f')}({self.name(e.span, 'S')}))"
        if name == "count":
            x = a["items"]
            if self.res.types.get(x) == ZONE:
                return f"len(st.zones[{self.expr(x)}])"
            return f"len({self.consumed(x)})"
        if name in ("sum", "any", "all"):
            return f"{name}({self.consumed(a['items'])})"
        if name in ("max", "min") and a.get("default") is not None:
            return f"{name}({self.consumed(a['items'])}, default={self.expr(a['default'])})"
        if name in ("top", "bottom") and a["zone"] is not None:
            return f"{self.name(_top if name == 'top' else _bottom, 'f')}(st.zones[{self.expr(a['zone'])}])"
        if name == "player":
            return self.closure_call(e)
        if name == "distance":
            return f"(({self.expr(a['to'])} - {self.expr(a['from'])}) % rt.n)"
        if name == "players_from":
            return f"{self.name(_players_from, 'f')}({self.expr(a['player'])}, rt.n)"
        if name == "abs":
            return f"abs({self.expr(a['value'])})"
        if name == "owner":
            return f"{self.name(self.c.prog.zone_owner, 'O')}[st.where[{self.expr(a['card'])}]]"
        if name == "zone_of":
            return f"st.where[{self.expr(a['card'])}]"
        if name == "distinct":
            return f"tuple(dict.fromkeys({self.seq(a['items'])}))"
        return self.closure_call(e)

    def choose_build(self, get: dict, make_options, inline_labels: bool, span, value_type: str):
        """A generated function (rt, L) -> the `choose` Decision, with the closures' checks,
        order of evaluation and result, or None if it cannot be written. `make_options` is
        the closure for the options, used unless `inline_labels` lets the options and their
        labels be one list comprehension."""
        with self._writing():
            return self._choose_build(get, make_options, inline_labels, span, value_type)

    def _choose_build(self, get: dict, make_options, inline_labels: bool, span, value_type: str):
        from .compiler import _dedupe, choose_errors
        tn = self.name(tuple.__new__, "tn")     # builds a named tuple without its Python __new__
        try:
            opts = f"{self.name(make_options, 'm')}(rt, L)"
            node, label = get["options"], get["label"]
            if inline_labels and (label is None or isinstance(label, A.Lambda)):
                option = f"{tn}({self.name(Option, 'O')}, "
                seq = self._iterable(node)
                if label is None:
                    t = self.res.types.get(node, ANY)
                    t = t.elem if t.name == "list" else (CARD if t == ZONE else ANY)
                    fmt = self.name(formatter(t or ANY, lambda: self.c.prog), "fmt")
                    each = f"{option}(str({fmt}(_v, rt)), _v)) for _v in {seq}"
                else:
                    slot = self.res.slots[label]
                    text = self.expr(label.body)
                    if not _always_text(label.body):
                        text = f"str({text})"
                    each = f"{option}({text}, L[{slot}])) for L[{slot}] in {seq}"
                opts = f"[{each}]"
            fail = self.name(choose_errors(span), "err")
            lines = [f"    _p = {self.expr(get['by'])}",
                     f"    if _p is None: {fail}('by')",
                     f"    _o = {opts}",
                     "    _i = -1"]
            if opts.startswith("["):
                # Options with the same label are one choice (two copies of a card).
                lines.append(f"    if len(_o) > 1: _o = {self.name(_dedupe, 'f')}(_o)")
            if get.get("pass") is not None:
                lines += [f"    _t = {self.expr(get['pass'])}",
                          "    if _t is not None:",
                          "        _t = str(_t)",
                          "        _o = [o for o in _o if o[0] != _t]",
                          f"        _o.append({tn}({self.name(Option, 'O')}, (_t, None)))",
                          "        _i = len(_o) - 1"]
            lines.append(f"    if not _o: {fail}('options')")
            prompt = f"str({self.expr(get['prompt'])})" if get.get("prompt") is not None else "'Choose'"
            secret = f"bool({self.expr(get['secret'])})" if get.get("secret") is not None else "False"
            help_ = f"str({self.expr(get['help'])} or '')" if get.get("help") is not None else "''"
            confirm = f"bool({self.expr(get['confirm'])})" if get.get("confirm") is not None else "False"
            if self._has_simultaneous():
                secret = f"{secret} or _in_simultaneous(rt)"
            lines.append(f"    return {tn}({self.name(Decision, 'D')}, (_p, {prompt}, tuple(_o), 'choose', "
                         f"{secret}, (), {help_}, {confirm}, _i, {value_type!r}))")
            return self.build("\n".join(lines) + "\n", f"_d{next(_ids)}")
        except _Unsupported:
            return None

    def inline_or_call(self, node, fn, as_seq: bool = False) -> str:
        """Source for expression `node` written inline (`as_seq`: a zone as its cards), or a
        call of its closure `fn`."""
        if node is not None:
            try:
                return self.seq(node) if as_seq else self.expr(node)
            except _Unsupported:
                pass
        return f"{self.name(fn, 'q')}(rt, L)"

    def proc_runner(self, cb, code):
        """A generated function running a procedure's VM code (see `proc_runner_source`)."""
        with self._writing():
            src = proc_runner_source(self, cb, code)
        name = f"_r{next(_ids)}"
        try:
            self._compile(f"def {name}(rt, fr):\n{src}", f"<rules:{cb.proc_name}>")
        except _Unsupported:
            return None                      # Runtime.run steps through the instructions instead
        return self.ns[name]

    # ------------------------------------------------------------------ statements
    def block_function(self, block, rule: str, frame: tuple[int, int] | None = None):
        """A Python function (rt, L) -> signal for a block that never pauses, or None. With
        `frame` (number of parameters, of slots), the block is a procedure's body called with
        a list of its own, so its variables may be Python locals."""
        for mode in ((frame, None) if frame is not None else (None,)):
            with self._writing(mode):
                try:
                    lines = self._block(block.stmts, 1, 0, rule)
                    body = (self._prologue(*mode) if mode else "") + "\n".join(lines) + "\n"
                    fn = self.build(body + "    return None\n", f"_b{next(_ids)}")
                except _Unsupported:
                    continue
            self.blocks[fn] = (block.stmts, rule)
            return fn
        return None

    def pasted_block(self, fn, depth: int, signals: dict) -> list[str] | None:
        """The code of block function `fn` to paste into a runner at `depth`, its signals
        written by `signals` ("break"/"continue": pad -> lines; "return": (pad, value, loops)
        -> lines), or None when it cannot be pasted."""
        if fn not in self.blocks:
            return None
        stmts, rule = self.blocks[fn]
        saved, self._signals = self._signals, signals
        saved_locals, self._locals = self._locals, False     # pasted: the runner's frame L
        try:
            return self._block(stmts, depth, 0, rule)
        except _Unsupported:
            return None
        finally:
            self._signals, self._locals = saved, saved_locals

    def _block(self, stmts, depth: int, loops: int, rule: str) -> list[str]:
        out = []
        known = []
        for k, s in enumerate(stmts):
            out.extend(self._stmt(s, depth, loops, rule))
            if type(s) is A.Let and self._is_player(s.value):
                # `let q = opponent(p)`: q holds a player for the rest of the block, unless
                # something there assigns it.
                slot = self.res.slots[s]
                src = self.slot(slot)
                if src not in self._players and not self._assigns(stmts[k + 1:], slot):
                    self._players.add(src)
                    known.append(src)
        self._players.difference_update(known)
        if not out:
            out.append("    " * depth + "pass")
        return out

    def _stmt(self, s, depth: int, loops: int, rule: str) -> list[str]:
        pad = "    " * depth
        t = type(s)
        if t is A.Let:
            return [f"{pad}{self.slot(self.res.slots[s])} = {self._value(s.value)}"]
        if t is A.ExprStmt:
            call = self._direct_proc_call(s.expr)
            if call is not None:
                # The result is dropped: run the body itself (what `direct` does, minus the
                # copy of the arguments and the unwrapping of the result).
                name, body, args = call
                return [f"{pad}if rt.coverage is not None: rt.covered({name!r})", f"{pad}{body}(rt, {args})"]
            return self._card_action(s.expr, pad) or self._move_card(s.expr, pad) or [f"{pad}{self._value(s.expr)}"]
        if t is A.Assign:
            return self._assign(s, pad)
        if t is A.If:
            out = []
            for k, (cond, body) in enumerate(s.branches):
                out.append(f"{pad}{'if' if k == 0 else 'elif'} {self.expr(cond)}:")
                out.extend(self._block(body.stmts, depth + 1, loops, rule))
            if s.else_ is not None:
                out.append(f"{pad}else:")
                out.extend(self._block(s.else_.stmts, depth + 1, loops, rule))
            return out
        if t is A.For:
            tick = self._tick(s, rule, pad + "    ")
            slot = self.res.slots[s]
            out = [f"{pad}for {self.slot(slot)} in {self.seq(s.iterable)}:"] + tick
            with self._player_var(s.iterable, slot, s.body):
                out.extend(self._block(s.body.stmts, depth + 1, loops + 1, rule))
            return out
        if t is A.While or t is A.Loop:
            cond = self.expr(s.cond) if t is A.While else "True"
            out = [f"{pad}while {cond}:"] + self._tick(s, rule, pad + "    ")
            out.extend(self._block(s.body.stmts, depth + 1, loops + 1, rule))
            return out
        if t is A.Repeat:
            out = [f"{pad}for _r{depth} in range({self.expr(s.count)}):"] + self._tick(s, rule, pad + "    ")
            out.extend(self._block(s.body.stmts, depth + 1, loops + 1, rule))
            return out
        if t is A.Break:
            if loops:
                return [f"{pad}break"]
            return self._signals["break"](pad) if self._signals else [f"{pad}return BREAK"]
        if t is A.Continue:
            if loops:
                return [f"{pad}continue"]
            return self._signals["continue"](pad) if self._signals else [f"{pad}return CONTINUE"]
        if t is A.Return:
            value = self.expr(s.value) if s.value is not None else "None"
            return self._signals["return"](pad, value, loops) if self._signals else [f"{pad}return Return({value})"]
        if t is A.Emit:
            args = ", ".join(self.expr(a) for a in s.args)
            return [f"{pad}rt.fire({s.event!r}, ({args}{',' if s.args else ''}))"]
        raise _Unsupported(t)

    def _tick(self, s, rule: str, pad: str) -> list[str]:
        span = self.name(s.span, "S")
        return [f"{pad}rt.steps += 1",
                f"{pad}if rt.steps > rt.max_steps: rt.tick({span}, {rule!r})"]

    def call_args(self, nodes, params) -> list[str]:
        """Sources of a call's arguments; a zone given for a list parameter is its cards."""
        return [self.seq(node) if ptype.name == "list" and self.res.types.get(node) == ZONE else self.expr(node)
                for node, (_, ptype) in zip(nodes, params)]

    def _direct_proc_call(self, e):
        """(name, body, arguments) to call a never-pausing procedure's body with a frame of
        its size, or None (not such a call, or the body is not compiled yet)."""
        if not isinstance(e, A.Call):
            return None
        kind = self.res.calls.get(e)
        if not kind or kind[0] != "proc":
            return None
        proc = self.c.prog.procs[kind[1]]
        if proc.body is None or proc.name in self._recursive_procs():
            return None               # a recursive procedure goes through `direct`, which counts depth
        params = self.c.m.procs[kind[1]].params
        try:
            args = self.call_args(kind[2], params)
        except _Unsupported:
            return None
        args += ["None"] * (proc.nslots - len(args))
        return proc.name, self.name(proc.body, "pb"), f"[{', '.join(args)}]"

    def _card_action(self, e, pad: str) -> list[str] | None:
        """`face_up(c)`, `face_down(c)`, `set_turn(c, d)` as a statement: when nobody listens
        (no event to build) and the card is there, one store; otherwise the primitive, which
        raises its errors and tells the listener."""
        if type(e) is not A.Call:
            return None
        kind = self.res.calls.get(e)
        if not kind or kind[0] != "prim" or kind[1] not in ("face_up", "face_down", "set_turn"):
            return None
        name = kind[1]
        a = self._prim_args(name, kind[2])
        c = self._temp("c")
        lines = [f"{pad}{c} = {self.expr(a['card'])}"]
        if name == "set_turn":
            # Only turns known to be valid (0, 90, 180 or 270) skip the primitive's checks.
            known = _known_ints(a["degrees"])
            if known is None or not all(0 <= k < 360 and k % 90 == 0 for k in known):
                return None
            value = self._temp("d")
            lines.append(f"{pad}{value} = {self.expr(a['degrees'])}")
            fast = f"st.turn[{c}] = {value}"
        else:
            fast = f"st.faceup[{c}] = {name == 'face_up'}"
            value = "None"
        act = self.name(CARD_ACTIONS[name], "f")
        return lines + [f"{pad}if {c} is None or rt.sink is not None:",
                        f"{pad}    {act}(rt, {c}, {value}, {self.name(e.span, 'S')})",
                        f"{pad}else:",
                        f"{pad}    {fast}"]

    def _move_card(self, e, pad: str) -> list[str] | None:
        """`move(card, zone)` as a statement in a game where no zone compacts and no trigger
        waits for `moved`: when nobody listens and neither is none, the card changes lists
        right here; otherwise `Runtime.move_card`, which raises the errors and tells the
        listener (the arguments are evaluated once, in the same order)."""
        if type(e) is not A.Call or self.c.prog.has_compact or "moved" in self.c.evented:
            return None
        kind = self.res.calls.get(e)
        if not kind or kind[0] != "prim" or kind[1] != "move":
            return None
        a = self._prim_args("move", kind[2])
        how = self._move_how(a)
        if self.res.types.get(a["cards"]) != CARD or how is None:
            return None
        at, face = how
        arrive = face
        if face == "keep":
            # The face a card takes on arriving: the zone's, known when the zone is named.
            to = a["to"]
            name = (self.res.calls[to][1] if type(to) is A.Call and self.res.calls.get(to, ("",))[0] == "zone"
                    else self.res.names[to][1] if type(to) is A.Name and self.res.names.get(to, ("",))[0] == "zone"
                    else None)
            if name is None:
                return None
            arrive = self._zone_info(name).arrive_face or "keep"
        t, c = self._temp("t"), self._temp("c")
        lines = [f"{pad}{t} = {self.expr(a['to'])}",
                 f"{pad}{c} = {self.expr(a['cards'])}",
                 f"{pad}if {c} is None or {t} is None or rt.sink is not None:",
                 f"{pad}    rt.move_card({t}, {c}, {at == 'bottom'}, {face!r}, {self.name(e.span, 'S')})",
                 f"{pad}else:",
                 f"{pad}    st.zones[st.where[{c}]].remove({c})",
                 f"{pad}    st.zones[{t}].{'insert(0, ' if at == 'bottom' else 'append('}{c})",
                 f"{pad}    st.where[{c}] = {t}"]
        if arrive != "keep":
            lines.append(f"{pad}    st.faceup[{c}] = {arrive == 'up'}")
        return lines

    def _has_simultaneous(self) -> bool:
        """Does any procedure have a `simultaneous` block? (If not, no decision is ever
        inside one, and generated decisions need not look.)"""
        if "_simultaneous" not in self.__dict__:
            m = self.c.m
            bodies = [p.decl.body for p in m.procs.values()] + [t.proc.decl.body for t in m.triggers]
            self._simultaneous = any(type(x) is A.For and x.simultaneous for x in syntax_nodes(bodies))
        return self._simultaneous

    def _recursive_procs(self) -> frozenset:
        if "_rprocs" not in self.__dict__:
            self._rprocs = recursive_procedures(self.res, self.c.m.procs)
        return self._rprocs

    def _value(self, e) -> str:
        """An expression at statement level: a call of a non-pausing procedure is allowed."""
        if isinstance(e, A.Call):
            kind = self.res.calls.get(e)
            if kind and kind[0] == "proc":
                proc = self.c.prog.procs[kind[1]]
                if proc.direct is not None:
                    args = self.call_args(kind[2], self.c.m.procs[kind[1]].params)
                    return f"{self.name(proc.direct, 'pd')}(rt, [{', '.join(args)}])"
                args = self.c._args_for(kind[2], self.c.m.procs[kind[1]].params)
                return f"{self.name(self.c._direct_call(proc, args), 'p')}(rt, {self.frame_list(e)})"
        return self.expr(e)

    def _assign(self, s, pad: str) -> list[str]:
        kind, detail = self.res.targets[s]
        op = s.op
        value = self._value(s.value)
        if kind == "local":
            return [f"{pad}{self.slot(detail)} {op} {value}"]
        if kind == "global":
            return [f"{pad}st.gvars[{detail}] {op} {value}"]
        store = "st.pvars" if kind == "pvar" else "st.cvars"
        obj = self.expr(s.target.obj)
        if obj in self._players:
            return [f"{pad}{store}[{detail}][{obj}] {op} {value}"]
        return [f"{pad}_o = {obj}",
                f"{pad}if _o is None: raise RulesRuntimeError({'cannot set `.' + s.target.name + '` of none'!r}, "
                f"{self.name(s.target.span, 'S')}, None, 'R008')",
                f"{pad}{store}[{detail}][_o] {op} {value}"]


def proc_runner_source(gen: "PyGen", cb, code) -> str:
    """Python source that runs a procedure's VM code from `fr.pc` until it must stop."""
    lines = []
    w = lines.append
    n = len(code)
    for k, (kind, data) in enumerate(cb.meta):
        w(f"            if pc == {k}:")
        pad = "                "
        target = cb.targets.get(k)

        def goto(t, pad=pad, k=k, halt=False):
            # `halt`: the block may have queued triggers, which run before the next instruction.
            stop = [f"{pad}if rt.halt:", f"{pad}    fr.pc = pc", f"{pad}    return"] if halt else []
            return [f"{pad}pc = {t}"] + stop + ([f"{pad}continue"] if t is not None and t <= k else [])
        pasted = _pasted_simple(gen, cb, k, kind, data, target, goto, pad) if kind == "simple" else None
        if pasted is not None:
            lines.extend(pasted)
        elif kind == "simple":
            fn, head = data
            f = gen.name(fn, "s")
            w(f"{pad}r = {f}(rt, L)")
            w(f"{pad}if r is None:")
            for line in goto(k + 1, pad + "    ", halt=True):
                w(line)
            if target is not None:
                w(f"{pad}elif r is BREAK:")
                for line in goto(target, pad + "    ", halt=True):
                    w(line)
            if head is not None:
                w(f"{pad}elif r is CONTINUE:")
                w(f"{pad}    rt.steps += 1")
                w(f"{pad}    if rt.steps > rt.max_steps: rt.tick({gen.name(cb.ops[k][1], 'S')}, {cb.rule!r})")
                for line in goto(head, pad + "    ", halt=True):
                    w(line)
            w(f"{pad}else:")
            if cb.exit_pc is not None:
                for line in goto(cb.exit_pc, pad + "    ", halt=True):
                    w(line)
            else:
                w(f"{pad}    _return(rt, fr, r.value)")
                w(f"{pad}    return")
        elif kind == "jump":
            for line in goto(target):
                w(line)
        elif kind == "loop_jump":
            t, rule = data
            w(f"{pad}rt.steps += 1")
            w(f"{pad}if rt.steps > rt.max_steps: rt.tick({gen.name(cb.ops[k][1], 'S')}, {rule!r})")
            for line in goto(t):
                w(line)
        elif kind == "jump_if_false":
            cond, node = data
            w(f"{pad}if {gen.inline_or_call(node, cond)}:")
            w(f"{pad}    pc = {k + 1}")
            w(f"{pad}else:")
            for line in goto(target, pad + "    "):
                w(line)
        elif kind == "for_init":
            seq, slot, node = data
            w(f"{pad}L[{slot + 2}] = tuple({gen.inline_or_call(node, seq, as_seq=True)})")
            w(f"{pad}L[{slot + 1}] = 0")
            w(f"{pad}pc = {k + 1}")
        elif kind == "for_next":
            (slot,) = data
            w(f"{pad}_k = L[{slot + 1}]")
            w(f"{pad}_q = L[{slot + 2}]")
            w(f"{pad}if _k >= len(_q):")
            for line in goto(target, pad + "    "):
                w(line)
            w(f"{pad}else:")
            w(f"{pad}    L[{slot}] = _q[_k]")
            w(f"{pad}    L[{slot + 1}] = _k + 1")
            w(f"{pad}    pc = {k + 1}")
        elif kind == "repeat_init":
            count, slot, node = data
            w(f"{pad}L[{slot}] = {gen.inline_or_call(node, count)}")
            w(f"{pad}pc = {k + 1}")
        elif kind == "repeat_next":
            (slot,) = data
            w(f"{pad}if L[{slot}] <= 0:")
            for line in goto(target, pad + "    "):
                w(line)
            w(f"{pad}else:")
            w(f"{pad}    L[{slot}] -= 1")
            w(f"{pad}    pc = {k + 1}")
        elif kind == "decide":
            build, slot, secret_done = data
            target = -1 if slot is None else slot
            w(f"{pad}d = {gen.name(build, 'db')}(rt, L)")
            w(f"{pad}fr.pc = {k + 1}")
            if not secret_done and gen._has_simultaneous():
                w(f"{pad}if not d.secret and _in_simultaneous(rt):")
                w(f"{pad}    d = d._replace(secret=True)")
            w(f"{pad}if len(d.options) == 1:")
            if target >= 0:
                w(f"{pad}    L[{target}] = d.options[0].value")
            w(f"{pad}    if rt.sink is not None: forced(rt, d)")
            w(f"{pad}    pc = {k + 1}")
            w(f"{pad}else:")
            w(f"{pad}    st.pending = d")
            w(f"{pad}    st.pending_slot = {target}")
            w(f"{pad}    rt.halt = True")
            w(f"{pad}    return")
        elif kind == "use" and (use := _inline_use(gen, data, k, pad)) is not None:
            lines.extend(use)
        elif kind == "ret":
            w(f"{pad}_return(rt, fr, None)")
            w(f"{pad}return")
        elif kind == "call" and (call := _inline_call(gen, cb, data, k, pad)) is not None:
            lines.extend(call)
        elif kind == "call":
            w(f"{pad}fr.pc = {k}")
            w(f"{pad}{gen.name(code[k], 'i')}(rt, fr)")
            w(f"{pad}return")
        else:   # decisions, abilities, events, the end, returns: the instruction itself
            w(f"{pad}fr.pc = {k}")
            w(f"{pad}{gen.name(code[k], 'i')}(rt, fr)")
            w(f"{pad}if rt.halt: return")
            w(f"{pad}pc = fr.pc")
            w(f"{pad}continue")
    body = "\n".join(lines)
    return (f"    L = fr.locals\n    st = rt.st\n    pc = fr.pc\n    try:\n        while True:\n{body}\n"
            f"            raise RuntimeError('fell off the end of a procedure')  # pragma: no cover\n"
            f"    except BaseException:\n        fr.pc = pc\n        raise\n")


def _always_text(e) -> bool:
    """Is e a text in every case (never none), e.g. "{c} (face down)"?"""
    if type(e) is A.StrLit:
        return True
    if type(e) is A.IfExpr:
        return _always_text(e.then) and _always_text(e.else_)
    return False


def _inline_call(gen: "PyGen", cb, data, k: int, pad: str) -> list[str] | None:
    """The call instruction written out: arguments, a step, the callee's frame pushed (as the
    instruction's closure does)."""
    from .runtime import rule_name
    from .state import Frame
    proc, _, slot, nodes = data
    if nodes is None:
        return None
    try:
        args = gen.call_args(*nodes)
    except _Unsupported:
        return None
    p = gen.name(proc, "P")
    head = [
        f"{pad}_v = [{', '.join(args)}]",
        f"{pad}pc = fr.pc = {k + 1}",
        f"{pad}rt.steps += 1",
        f"{pad}if rt.steps > rt.max_steps: rt.tick({gen.name(cb.ops[k][1], 'S')}, {rule_name(proc.kind, proc.name)!r})"]
    push = [
        f"{pad}_f = {gen.name(Frame, 'Fr')}({p}, 0, _v + [None] * ({p}.nslots - {len(args)}), "
        f"{-1 if slot is None else slot}, 0)",
        f"{pad}st.frames.append(_f)",
        f"{pad}if rt.breakpoint is not None:",
        f"{pad}    rt.check_breakpoint({p})",
        f"{pad}    if rt.halt: return",
        f"{pad}if rt.coverage is not None: rt.covered({proc.name!r})"] + _run_pushed(p, pad)
    if proc.body is None:
        return head + push
    # A phase that never pauses (phases return nothing): its body runs here unless a
    # breakpoint may stop at its entry. (The body exists, so the callee is compiled and its
    # frame size is final.)
    extra = proc.nslots - len(args)
    return head + [f"{pad}if rt.breakpoint is None:",
                   f"{pad}    if rt.coverage is not None: rt.covered({proc.name!r})",
                   f"{pad}    {gen.name(proc.body, 'pb')}(rt, _v{f' + [None] * {extra}' if extra else ''})",
                   f"{pad}else:"] + [f"    {line}" for line in push]


def _run_pushed(proc: str, pad: str) -> list[str]:
    """Run the frame `_f` just pushed for procedure `proc` from this runner rather than
    through Runtime.run (one Python call instead of a trip through the run loop and back
    into this runner), unless frames pile up; go on here only if it simply returned."""
    return [
        f"{pad}if len(st.frames) > {_SYNC_DEPTH} or {proc}.runner is None:",
        f"{pad}    rt.halt = True",
        f"{pad}    return",
        f"{pad}{proc}.runner(rt, _f)",
        f"{pad}if st.frames[-1] is not fr or rt.queue or st.pending is not None or st.result is not None or rt.paused:",
        f"{pad}    return",
        f"{pad}rt.halt = False"]


def _inline_use(gen: "PyGen", data, k: int, pad: str) -> list[str] | None:
    """`use(ability, card, player)` written out, as the instruction's closure does it: an
    ability that never pauses runs at once, another gets a frame (run here, as calls are)."""
    from .state import Frame
    (nodes,) = data
    if nodes is None:
        return None
    try:
        ability, card, player = (gen.expr(x) for x in nodes)
    except _Unsupported:
        return None
    procs = gen.name(gen.c.prog.procs, "PR")
    return [
        f"{pad}_n = {ability}",
        f"{pad}pc = fr.pc = {k + 1}",
        f"{pad}if _n is not None:",
        f"{pad}    _u = {procs}[_n]",
        f"{pad}    if _u.direct is not None:",
        f"{pad}        _u.direct(rt, [{card}, {player}])",
        f"{pad}    else:",
        f"{pad}        _f = {gen.name(Frame, 'Fr')}(_u, 0, [{card}, {player}] + [None] * (_u.nslots - 2))",
        f"{pad}        st.frames.append(_f)",
        f"{pad}        if rt.coverage is not None: rt.covered(_n)"] + _run_pushed("_u", pad + "        ") + [
        f"{pad}if rt.halt: return"]


def _pasted_simple(gen: "PyGen", cb, k: int, kind, data, target, goto, pad: str) -> list[str] | None:
    """A simple block's code written into the runner itself (no call, no signal values):
    `break`/`continue`/`return` become jumps, as the runner does for the block's signals."""
    fn, head = data
    span = gen.name(cb.ops[k][1], "S")

    def jump(t, p):
        # Always back to the dispatch: the rest of the pasted block must not run.
        return goto(t, p, halt=True) + ([f"{p}continue"] if t > k else [])

    def brk(p):
        if target is None:
            raise _Unsupported("break outside a loop")
        return jump(target, p)

    def cont(p):
        if head is None:
            raise _Unsupported("continue outside a loop")
        return [f"{p}rt.steps += 1", f"{p}if rt.steps > rt.max_steps: rt.tick({span}, {cb.rule!r})"] + jump(head, p)

    def ret(p, value, loops):
        if cb.exit_pc is None:
            return [f"{p}_return(rt, fr, {value})", f"{p}return"]
        if loops:
            raise _Unsupported("a jump out of a Python loop")
        return [f"{p}{value}"] + jump(cb.exit_pc, p)
    lines = gen.pasted_block(fn, len(pad) // 4, {"break": brk, "continue": cont, "return": ret})
    if lines is None:
        return None
    return lines + goto(k + 1, pad, halt=True)


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
        raise RulesRuntimeError(f"zone `{name}` of none", span, None, "R008")
    return base + p


def _log_always(rt, text, seat) -> None:
    """A log line whose text was built anyway (it draws random numbers)."""
    if rt.sink is not None:
        rt.log(text, seat)


def _no_seat(seat, n, span):
    raise RulesRuntimeError(f"there is no seat {seat} in a {n}-player game", span, None, "R012")


def _not_two(span):
    raise RulesRuntimeError("`opponent` needs a two-player game", span, None, "R012")


def _in_zone(st, card, zone) -> bool:
    return card is not None and st.where[card] == zone


def _top(cards):
    return cards[-1] if cards else None


def _bottom(cards):
    return cards[0] if cards else None


def _players_from(start, n):
    return tuple([(start + k) % n for k in range(n)])


__all__ = ["PyGen", "BOOL", "CARD", "PLAYER", "ANY", "formatter"]
