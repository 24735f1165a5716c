"""The Python-source back end, statements (checked model -> compiled program): never-pausing
blocks written as Python source, as functions of their own or pasted into a procedure's
runner (`runner.py`), with `break`, `continue` and `return` as the runner's jumps.

`StatementWriter` is the statement half of `pysource.PyGen`, which writes the expressions.
"""

from __future__ import annotations

import re

from rulesvm.dsl import ast as A
from rulesvm.dsl.types import ZONE

from . import errors as E
from .builtins import STATEMENTS
from .limits import MAX_INT, MIN_INT, may_double, overflow
from .namespace import Unsupported
from .runtime import count_entry

# Argument sources cheap and harmless to repeat, so an inlined function may read them where
# it reads its parameter (anything else is bound once, in order, with `:=`).
SIMPLE = re.compile(r"^(L\[\d+\]|v\d+|_q\d+|st\.gvars\[\d+\]|-?\d+|\(-\d+\)|None|True|False|rt\.n|_a\d+|'[^'\\]*')$")


class StatementWriter:
    """Writes never-pausing statements as source (mixed into PyGen, which writes expressions)."""

    def block_function(self, block, rule: str, frame: tuple[int, int] | None = None):
        """A Python function (rt, L) -> signal for a block that never pauses, or None. With
        `frame` (number of parameters, of slots), the block is a procedure's body called with
        a list of its own, so its variables may be Python locals."""
        for mode in ((frame, None) if frame is not None else (None,)):
            with self._writing(mode):
                try:
                    lines = self._block(block.stmts, 1, 0, rule)
                    body = (self._prologue(*mode) if mode else "") + "\n".join(lines) + "\n"
                    return self.build(body + "    return None\n", self.nsp.fresh("b"))
                except Unsupported:
                    continue
        return None

    def paste(self, stmts, depth: int, signals: dict, rule: str) -> list[str] | None:
        """The code of a never-pausing block to paste into a runner at `depth`, its signals
        written by `signals` ("break"/"continue": pad -> lines; "return": (pad, value, loops)
        -> lines), or None when it cannot be pasted."""
        with self._writing():
            self._signals = signals
            try:
                return self._block(stmts, depth, 0, rule)
            except Unsupported:
                return None
            finally:
                self._signals = None

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
                return [f"{pad}{count_entry(repr(name))}", f"{pad}{body}(rt, {args})"]
            return self._statement_template(s.expr, pad) or [f"{pad}{self._value(s.expr)}"]
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
        raise Unsupported(t)

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
        proc = self.ctx.procs[kind[1]]
        if proc.body is None or proc.name in self.ctx.recursive_procedures:
            return None               # a recursive procedure goes through `direct`, which counts depth
        params = self.ctx.m.procs[kind[1]].params
        try:
            args = self.call_args(kind[2], params)
        except Unsupported:
            return None
        args += ["None"] * (proc.nslots - len(args))
        return proc.name, self.name(proc.body, "pb"), f"[{', '.join(args)}]"

    def _statement_template(self, e, pad: str) -> list[str] | None:
        """A primitive call as a statement, written by its statement template, if it has one."""
        if type(e) is not A.Call:
            return None
        kind = self.res.calls.get(e)
        if not kind or kind[0] != "prim" or kind[1] not in STATEMENTS:
            return None
        return STATEMENTS[kind[1]](self, e, self.ctx.prim_args(kind[1], kind[2]), pad)

    def _value(self, e) -> str:
        """An expression at statement level: a call of a non-pausing procedure is allowed."""
        if isinstance(e, A.Call):
            kind = self.res.calls.get(e)
            if kind and kind[0] == "proc":
                proc = self.ctx.procs[kind[1]]
                if proc.direct is not None:
                    args = self.call_args(kind[2], self.ctx.m.procs[kind[1]].params)
                    return f"{self.name(proc.direct, 'pd')}(rt, [{', '.join(args)}])"
                args = self.cl.args_for(kind[2], self.ctx.m.procs[kind[1]].params)
                return f"{self.name(self.cl.direct_call(proc, args), 'p')}(rt, {self.frame_list(e)})"
        return self.expr(e)

    def _assign(self, s, pad: str) -> list[str]:
        kind, detail = self.res.targets[s]
        op = s.op
        value = self._value(s.value)
        if kind == "local":
            target = self.slot(detail)
            lines = []
        elif kind == "global":
            target = f"st.gvars[{detail}]"
            lines = []
        else:
            store = "st.pvars" if kind == "pvar" else "st.cvars"
            obj = self.expr(s.target.obj)
            if obj in self._players:
                target, lines = f"{store}[{detail}][{obj}]", []
            else:
                target = f"{store}[{detail}][_o]"
                lines = [f"{pad}_o = {obj}",
                         f"{pad}if _o is None: raise {self.name(E.set_of_none, 'f')}({s.target.name!r}, "
                         f"{self.name(s.target.span, 'S')})"]
        if op == "=" or not may_double(op, s.target, s.value, self.ctx.bounded):
            return lines + [f"{pad}{target} {op} {value}"]
        # `+=` and `-=` count in 64 bits, as `+` and `-` do.
        return lines + [f"{pad}_n = {target} {op[0]} ({value})",
                        f"{pad}if not {MIN_INT} <= _n <= {MAX_INT}: {self.name(overflow, 'f')}(_n, {self.name(s.span, 'S')})",
                        f"{pad}{target} = _n"]


