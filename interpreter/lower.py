"""Lowering (checked model -> lowered procedures, the compiler's one intermediate form).

A procedure that may pause for a decision cannot run as one Python call: the game must be
able to stop in the middle, be copied, saved and resumed. Such a procedure is lowered here,
once, into a flat list of instructions held as data (`Instr`), whose program counter lives
in the game state. Everything that never pauses stays a tree: runs of such statements are
one `block` instruction carrying the checked statements, which a back end turns into one
function. What each instruction means is written once, in `runner.py`.

Which procedures may pause is a fixpoint over the call graph (`analyse_suspension`): a
decision primitive pauses, and so does a call of a pausing procedure, an ability when any
ability pauses, a card move when a `moved` trigger waits, and an event with triggers.

Instructions (fields used):
    block        stmts, head (loop head or None), target (break target or None), own_frame
    jump         target
    loop         target: back to a loop's head (a step)
    branch       node (condition), target (where to go when it is false)
    for_init     node (iterable), slot     for_next    slot, target (the loop's end)
    repeat_init  node (count), slot        repeat_next slot, target
    secrecy      value (+1 entering a `simultaneous` loop, -1 leaving it)
    call         proc, args, params, slot  (a pausing procedure; slot -1: result dropped)
    use          args (ability, card, player)
    prim         node, slot: a primitive whose moves fire triggers (they run before the next instruction)
    store        stmt, slot: an assignment of the value a pausing call left in a scratch slot
    decide       node, args, slot          decide_many_init  slot (the picks' work slot)
    decide_many  node, args, work, slot
    fire         event, args (nodes) or value (constant arguments)
    ret          (return from the procedure)
"""

from __future__ import annotations

from dataclasses import dataclass

from rulesvm.dsl import ast as A
from rulesvm.dsl.primitives import ABILITY_PRIMITIVES, DECISION_PRIMITIVES, MOVING_PRIMITIVES

from .runtime import rule_name


@dataclass(frozen=True)
class Instr:
    op: str
    span: object
    target: int | None = None
    head: int | None = None
    slot: int = -1
    node: object = None
    stmts: tuple = ()
    stmt: object = None
    args: tuple = ()
    params: tuple = ()
    proc: str | None = None
    work: int = -1
    event: str | None = None
    value: object = None
    own_frame: bool = False


@dataclass(frozen=True)
class LoweredProc:
    name: str
    kind: str
    rule: str                 # how errors name it ("phase `fight`")
    nparams: int
    nslots: int               # the checker's slots plus the lowering's scratch slots
    suspends: bool            # may pause: callers push a frame for it
    direct_phase: bool        # a phase whose body never pauses (run as a plain call without a breakpoint)
    instrs: tuple             # of Instr
    exit_pc: int | None       # where `return` goes when the procedure has an epilogue (phase_end)

    @property
    def spans(self) -> tuple:
        return tuple(i.span for i in self.instrs)


@dataclass(frozen=True)
class Suspension:
    """Which procedures may pause, and why."""
    suspending: frozenset     # names of procedures that may pause (phases and the game always do)
    direct_phases: frozenset  # phases whose bodies never pause
    evented: frozenset        # events some trigger waits for
    abilities_suspend: bool   # does any ability pause? (then `use` does)

    def stmt_suspends(self, res, s) -> bool:
        return _stmt_suspends(res, s, self.evented, self.abilities_suspend, self.suspending)


def analyse_suspension(model) -> Suspension:
    """Which procedures may pause (or must run as VM code): a fixpoint over the call graph."""
    res = model.resolution
    evented = frozenset(t.event for t in model.triggers)
    suspending: set[str] = set()
    abilities_suspend = False
    changed = True
    procs = list(model.procs.values()) + [t.proc for t in model.triggers]
    while changed:
        changed = False
        for proc in procs:
            if proc.name in suspending:
                continue
            # Phases always run as VM code: scenarios and debuggers stop at their entry.
            if proc.kind in ("phase", "game") or \
                    _block_suspends(res, proc.decl.body, evented, abilities_suspend, suspending):
                suspending.add(proc.name)
                changed = True
        new = any(p.kind in ("ability", "snippet") and p.name in suspending for p in model.procs.values())
        if new != abilities_suspend:
            abilities_suspend = new
            changed = True
    # Phases whose bodies never pause: their callers still treat them as pausing (a
    # breakpoint may stop at their entry), but when no breakpoint is set the call runs the
    # body at once, without a frame.
    phase_events = {"phase_start", "phase_end"} & evented
    direct = {p.name for p in model.procs.values() if p.kind == "phase" and not phase_events
              and not _block_suspends(res, p.decl.body, evented, abilities_suspend, suspending)}
    return Suspension(frozenset(suspending), frozenset(direct), evented, abilities_suspend)


def _block_suspends(res, block, evented, abilities_suspend, suspending) -> bool:
    return any(_stmt_suspends(res, s, evented, abilities_suspend, suspending) for s in block.stmts)


def _stmt_suspends(res, s, evented, abilities_suspend, suspending) -> bool:
    if isinstance(s, (A.Let, A.Assign, A.ExprStmt)):
        value = s.expr if isinstance(s, A.ExprStmt) else s.value
        if isinstance(value, A.Call):
            kind = res.calls.get(value, ("",))
            if kind[0] == "proc" and kind[1] in suspending:
                return True
            if kind[0] == "prim":
                name = kind[1]
                return name in DECISION_PRIMITIVES or (name in ABILITY_PRIMITIVES and abilities_suspend) or \
                    (name in MOVING_PRIMITIVES and "moved" in evented)
        return False
    if isinstance(s, A.Emit):
        return s.event in evented
    if isinstance(s, A.If):
        return any(_block_suspends(res, b, evented, abilities_suspend, suspending) for _, b in s.branches) or \
            (s.else_ is not None and _block_suspends(res, s.else_, evented, abilities_suspend, suspending))
    if isinstance(s, (A.For, A.While, A.Repeat, A.Loop)):
        return _block_suspends(res, s.body, evented, abilities_suspend, suspending)
    return False


def lower_procedure(model, susp: Suspension, proc) -> LoweredProc:
    """One procedure as instructions: a never-pausing one is its body as one block."""
    res = model.resolution
    nparams = len(proc.params)
    base = res.frame_sizes.get(proc.decl, nparams)
    rule = rule_name(proc.kind, proc.name)
    suspends = proc.name in susp.suspending
    direct_phase = proc.name in susp.direct_phases
    body = proc.decl.body
    b = _Builder(model, susp, base)
    if not suspends or direct_phase:
        b.add("block", body.span, stmts=tuple(body.stmts), own_frame=True)
    else:
        if proc.kind == "phase" and "phase_start" in susp.evented:
            b.add("fire", proc.span, event="phase_start", value=(proc.name,))
        b.block(body, None)
        if proc.kind == "phase" and "phase_end" in susp.evented:
            # Every way out of the phase, `return` included, passes here.
            b.exit_pc = b.here()
            b.add("fire", proc.span, event="phase_end", value=(proc.name,))
    b.add("ret", body.span)
    return LoweredProc(proc.name, proc.kind, rule, nparams, base + b.extra, suspends, direct_phase,
                       b.finish(), b.exit_pc)


class _Loop:
    """A loop being lowered: its head, and its block instructions, whose `break` goes to its end."""

    def __init__(self, head: int):
        self.head = head
        self.breaks: list[int] = []


class _Builder:
    def __init__(self, model, susp: Suspension, base: int):
        self.m = model
        self.res = model.resolution
        self.susp = susp
        self.base = base
        self.extra = 0
        self.ops: list[dict] = []
        self.exit_pc: int | None = None

    def here(self) -> int:
        return len(self.ops)

    def scratch(self) -> int:
        # Scratch slots live after the checker's slots.
        self.extra += 1
        return self.base + self.extra - 1

    def add(self, op: str, span, **fields) -> int:
        self.ops.append(dict(op=op, span=span, **fields))
        return len(self.ops) - 1

    def patch(self, index: int, target: int) -> None:
        self.ops[index]["target"] = target

    def close(self, loop: _Loop, end: int) -> None:
        for index in loop.breaks:
            self.patch(index, end)

    def finish(self) -> tuple:
        return tuple(Instr(**op) for op in self.ops)

    def block(self, block: A.Block, loop: _Loop | None) -> None:
        run: list = []
        for s in block.stmts:
            if self.susp.stmt_suspends(self.res, s):
                if run:
                    self.run_of(run, loop)
                    run = []
                self.stmt(s, loop)
            else:
                run.append(s)
        if run:
            self.run_of(run, loop)

    def run_of(self, stmts: list, loop: _Loop | None) -> None:
        index = self.add("block", stmts[0].span, stmts=tuple(stmts), head=loop.head if loop else None)
        if loop is not None:
            loop.breaks.append(index)     # patched to the loop's end, taken on `break`

    def loop_body(self, body: A.Block, head: int, span) -> _Loop:
        loop = _Loop(head)
        self.block(body, loop)
        self.add("loop", span, target=head)
        return loop

    def stmt(self, s, loop: _Loop | None) -> None:
        if isinstance(s, A.If):
            ends = []
            for cond, body in s.branches:
                test = self.add("branch", cond.span, node=cond)
                self.block(body, loop)
                ends.append(self.add("jump", s.span))
                self.patch(test, self.here())
            if s.else_ is not None:
                self.block(s.else_, loop)
            for j in ends:
                self.patch(j, self.here())
        elif isinstance(s, A.While):
            head = self.here()
            test = self.add("branch", s.cond.span, node=s.cond)
            inner = self.loop_body(s.body, head, s.span)
            self.patch(test, self.here())
            self.close(inner, self.here())
        elif isinstance(s, A.Loop):
            inner = self.loop_body(s.body, self.here(), s.span)
            self.close(inner, self.here())
        elif isinstance(s, A.For):
            slot = self.res.slots[s]
            if s.simultaneous:
                self.add("secrecy", s.span, value=+1)
            self.add("for_init", s.iterable.span, node=s.iterable, slot=slot)
            head = self.here()
            nxt = self.add("for_next", s.span, slot=slot)
            inner = self.loop_body(s.body, head, s.span)
            self.patch(nxt, self.here())
            self.close(inner, self.here())
            if s.simultaneous:
                self.add("secrecy", s.span, value=-1)
        elif isinstance(s, A.Repeat):
            slot = self.res.slots[s]
            self.add("repeat_init", s.count.span, node=s.count, slot=slot)
            head = self.here()
            nxt = self.add("repeat_next", s.span, slot=slot)
            inner = self.loop_body(s.body, head, s.span)
            self.patch(nxt, self.here())
            self.close(inner, self.here())
        elif isinstance(s, A.Emit):
            self.add("fire", s.span, event=s.event, args=tuple(s.args))
        elif isinstance(s, (A.Let, A.Assign, A.ExprStmt)):
            self.call_stmt(s, loop)
        else:  # pragma: no cover
            raise AssertionError(type(s))

    def call_stmt(self, s, loop: _Loop | None) -> None:
        """A statement whose call may pause: its value goes to a slot, and from there, when the
        statement assigns something other than a plain variable, to its target."""
        call = s.expr if isinstance(s, A.ExprStmt) else s.value
        slot, store = -1, False
        if isinstance(s, A.Let):
            slot = self.res.slots[s]
        elif isinstance(s, A.Assign):
            target = self.res.targets[s]
            if target[0] == "local" and s.op == "=":
                slot = target[1]
            else:
                slot, store = self.scratch(), True
        kind = self.res.calls[call]
        if kind[0] == "proc":
            self.add("call", call.span, proc=kind[1], args=tuple(kind[2]),
                     params=tuple(self.m.procs[kind[1]].params), slot=slot)
        elif kind[1] == "choose":                 # the language's two decisions: one pick...
            self.add("decide", call.span, node=call, args=tuple(kind[2]), slot=slot)
        elif kind[1] in DECISION_PRIMITIVES:      # ...or several (`choose_many`), one decision each
            work = self.scratch()
            self.add("decide_many_init", call.span, slot=work)
            self.add("decide_many", call.span, node=call, args=tuple(kind[2]), work=work, slot=slot)
        elif kind[1] in ABILITY_PRIMITIVES:
            self.add("use", call.span, args=tuple(kind[2]))
        else:   # a move that fires triggers: they run before the next instruction
            index = self.add("prim", call.span, node=call, args=tuple(kind[2]), slot=slot,
                             head=loop.head if loop else None)
            if loop is not None:
                loop.breaks.append(index)
        if store:
            index = self.add("store", s.span, stmt=s, slot=slot, head=loop.head if loop else None)
            if loop is not None:
                loop.breaks.append(index)
