"""The compiler driver: checked model -> frozen `Program`, once per load.

The passes, each in its own module:
    tables.py      cards and zones as tables of ids
    lower.py       which procedures pause; pausing procedures as instructions (the one
                   intermediate form)
    closures.py    expressions and never-pausing statements as closures (the reference)
    pysource.py    the same as generated Python source (the default back end)
    decisions.py   what `choose` and `choose_many` build
    runner.py      every instruction's meaning: a generated runner per procedure
This module runs them in order and packs the result. `RULESVM_CODEGEN=0` compiles with the
closures alone (slower; the tests compare both). `compile_expression` and `compile_block`
compile code written after loading (scenario checks) against a finished program.
"""

from __future__ import annotations

import os

from rulesvm.dsl import ast as A

from .builtins import compile_primitive
from .closures import ClosureBackend
from .context import CompileContext
from .decisions import choose_closure, choose_many_closure, choose_source
from .lower import analyse_suspension, lower_procedure
from .namespace import Namespace, Unsupported
from .program import CompiledProc, Program
from .purity import callees_first
from .pysource import SOURCE_NAMES, PyGen
from .runner import RUNNER_NAMES, build_runner
from .runtime import direct_entry
from .tables import build_tables


def compile_program(model, options: dict | None = None, codegen: bool | None = None) -> Program:
    """Compile a checked model with option values (defaults for those not given).

    `codegen` chooses the back end of expressions and blocks: generated Python source (the
    default) or plain closures (`RULESVM_CODEGEN=0`); both mean the same.
    """
    values = {name: opt.default for name, opt in model.options.items()}
    values.update(options or {})
    if codegen is None:
        codegen = os.environ.get("RULESVM_CODEGEN", "1") != "0"
    return _Compilation(model, values, codegen).program()


def compile_expression(program: Program, node):
    """A checked expression written after loading (a scenario's check) as fn(rt, L)."""
    return _late_backend(program).closure(node)


def compile_block(program: Program, block: A.Block, rule: str = "a test block"):
    """A checked block of never-pausing statements written after loading, as fn(rt, L)."""
    return _late_backend(program).block(block, rule)


def _late_backend(program: Program) -> ClosureBackend:
    model = program.model
    return ClosureBackend(CompileContext(model, program.options, program, analyse_suspension(model),
                                         program.procs))


class _Compilation:
    def __init__(self, model, options: dict, codegen: bool):
        self.m = model
        tables = build_tables(model, options)
        self.susp = analyse_suspension(model)
        procs = {p.name: CompiledProc(p.name, p.kind, len(p.params), p.span) for p in model.procs.values()}
        for trig in model.triggers:
            procs[trig.proc.name] = CompiledProc(trig.proc.name, "trigger", len(trig.proc.params), trig.span)
        self.procs = procs
        self.ctx = CompileContext(model, options, tables, self.susp, procs)
        self.closures = ClosureBackend(self.ctx)
        self.nsp = Namespace({**RUNNER_NAMES, **SOURCE_NAMES})
        self.gen = PyGen(self.ctx, self.closures, self.nsp) if codegen else None
        self.closures.gen = self.gen

    def program(self) -> Program:
        m, cl = self.m, self.closures
        # Functions callees first (a callee compiled inside its caller's compilation would
        # nest as deep as the longest chain of calls).
        for name in callees_first(self.ctx.res, m.funcs):
            cl.func_body(m.funcs[name])
        # Procedures that never pause first, so that generated code calling them can call
        # their bodies directly.
        for proc in sorted(m.procs.values(),
                           key=lambda p: p.name in self.susp.suspending and p.name not in self.susp.direct_phases):
            self.procedure(proc)
        triggers: dict = {}
        for trig in m.triggers:
            self.procedure(trig.proc)
            cond = cl.expr(trig.cond) if trig.cond is not None else None
            triggers.setdefault(trig.event, []).append((cond, self.procs[trig.proc.name]))
        var_defaults, var_names = {}, {}
        for scope in ("global", "player", "card"):
            vs = m.vars_of(scope)
            var_defaults[scope] = tuple(cl.default(v) for v in vs)
            var_names[scope] = tuple(v.name for v in vs)
        formulas = {name: cl.formulas(name) for name in m.field_types}
        evaluate = self.evaluator()
        for proc in self.procs.values():
            proc.seal()
        t = self.ctx.tables
        return Program(**{f: getattr(t, f) for f in t.__dataclass_fields__}, procs=self.procs,
                       triggers={e: tuple(ts) for e, ts in triggers.items()}, var_defaults=var_defaults,
                       var_names=var_names, formulas=formulas, evaluate=evaluate, sources=tuple(self.nsp.sources))

    def procedure(self, proc) -> None:
        lp = lower_procedure(self.m, self.susp, proc)
        cp = self.procs[proc.name]
        cp.nslots = lp.nslots
        cp.suspends = lp.suspends
        cp.spans = lp.spans
        if not lp.suspends or lp.direct_phase:
            body = self.closures.block(proc.decl.body, lp.rule, (lp.nparams, lp.nslots))
            cp.direct = direct_entry(proc.name, proc.span, lp.rule, body, lp.nslots)
            cp.body = body
        cp.runner = build_runner(lp, _Host(self, cp, lp.rule))

    def evaluator(self):
        """The game's `func evaluate(p: player) -> int` as fn(rt, seat), or None."""
        func = self.m.funcs.get("evaluate")
        if func is None or len(func.params) != 1 or str(func.params[0][1]) != "player":
            return None
        body = self.closures.func_body(func)[func.name]
        size = max(self.m.resolution.frame_sizes[func.decl], 1)

        def evaluate(rt, seat: int):
            return body(rt, [seat] + [None] * (size - 1))
        return evaluate


class _Host:
    """What the runner writer (runner.py) asks of the back ends, for one procedure."""
    Unsupported = Unsupported

    def __init__(self, comp: _Compilation, proc: CompiledProc, rule: str):
        self.nsp, self.gen, self.cl = comp.nsp, comp.gen, comp.closures
        self.procs = comp.procs
        self.has_simultaneous = comp.ctx.has_simultaneous
        self.proc = proc
        self.rule = rule

    def name(self, value, prefix: str = "k") -> str:
        return self.nsp.name(value, prefix)

    def define(self, code: str, filename: str, fname: str):
        return self.nsp.define(code, filename, fname)

    def src(self, node, as_seq: bool = False) -> str:
        if self.gen is not None:
            return self.gen.src(node, as_seq)
        return f"{self.name(self.cl.list_expr(node) if as_seq else self.cl.expr(node), 'q')}(rt, L)"

    def call_args(self, nodes, params) -> list[str]:
        if self.gen is not None:
            with self.gen.writing():
                try:
                    return self.gen.call_args(nodes, params)
                except Unsupported:
                    pass
        return [f"{self.name(fn, 'q')}(rt, L)" for fn in self.cl.args_for(nodes, params)]

    def paste(self, stmts, depth: int, signals: dict, rule: str):
        return self.gen.paste(stmts, depth, signals, rule) if self.gen is not None else None

    def block_fn(self, ins):
        if ins.own_frame:
            return self.proc.body
        return self.cl.block(A.Block(ins.span, ins.stmts), self.rule)

    def simple_fn(self, ins):
        slot = ins.slot
        if ins.op == "store":
            return self.cl.assign(ins.stmt, lambda rt, L: L[slot])
        fn = compile_primitive(self.cl, ins.node, ins.args)
        if slot < 0:
            def run(rt, L):
                fn(rt, L)
            return run

        def store(rt, L):
            L[slot] = fn(rt, L)
        return store

    def decide_fn(self, ins):
        if self.gen is not None:
            build = choose_source(self.gen, self.cl, ins.node, ins.args)
            if build is not None:
                return build, True
        return choose_closure(self.cl, ins.node, ins.args), False

    def may_skip(self, ins) -> bool:
        """Can this `choose` have no options and go on (its `unavailable:` is given)?"""
        return self.cl.ctx.prim_args(ins.node.func.id, ins.args).get("unavailable") is not None

    def decide_many_fn(self, ins):
        return choose_many_closure(self.cl, ins.node, ins.args, ins.work)


__all__ = ["compile_program", "compile_expression", "compile_block"]
