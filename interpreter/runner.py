"""The meaning of every VM instruction, written once (lowered procedures -> compiled program).

Each pausing procedure becomes one generated Python function, its *runner* (rt, frame),
which runs the frame's instructions from `frame.pc` until it must stop (a decision, a call
that pushed a frame, queued triggers, the end), as a loop over `if pc == k:` cases. The
table `_WRITERS` has one entry per instruction of `lower.py`, which writes that case; the
back end (a *host*: the closures or the source generator) supplies the source of
expressions, the functions of never-pausing blocks and the decision builders. So there is
one VM, whichever back end compiles the expressions, and the paused continuation stays data
(frames and program counters), which snapshots copy and saves write.

A host provides: `name(value, prefix)`, `src(node, as_seq=False)` (an expression's source),
`call_args(nodes, params)`, `paste(stmts, depth, signals, rule)` (a block's code to write
in place, or None), `block_fn(instr)`, `simple_fn(instr)` (prim/store),
`decide_fn(instr)` -> (builder, marks secrecy itself), `may_skip(instr)` (a `choose` with
`unavailable:`, which goes on when it has nothing to offer), `decide_many_fn(instr)`,
`has_simultaneous`, `procs`, `define(code, filename, fname)` and the exception `Unsupported`.
"""

from __future__ import annotations

from .runtime import BREAK, CONTINUE, count_entry, forced, in_simultaneous, return_from, rule_name, skipped
from .state import DONE, Frame

# A runner calls a procedure's runner itself while fewer frames than this are active; deeper
# calls go back through Runtime.run, so deep recursion in the rules never deepens Python's stack.
SYNC_DEPTH = 48

# What runners refer to by name.
RUNNER_NAMES = {"BREAK": BREAK, "CONTINUE": CONTINUE, "return_from": return_from, "forced": forced, "skipped": skipped,
                "in_simultaneous": in_simultaneous, "Frame": Frame, "DONE": DONE}


def build_runner(lp, host):
    """The runner of lowered procedure `lp`; its blocks pasted in place when Python can
    compile that, else called."""
    for paste in (True, False):
        source = runner_source(lp, host, paste)
        try:
            return host.define(f"def _run(rt, fr):\n{source}", f"<rules:{lp.name}>", "_run")
        except host.Unsupported:
            if not paste:
                raise
    raise AssertionError("unreachable")  # pragma: no cover


def runner_source(lp, host, paste: bool = True) -> str:
    lines = []
    for k, ins in enumerate(lp.instrs):
        lines.append(f"            if pc == {k}:")
        lines.extend(_WRITERS[ins.op](_Case(lp, host, k, ins, paste)))
    body = "\n".join(lines)
    return (f"    L = fr.locals\n    st = rt.st\n    pc = fr.pc\n    try:\n        while True:\n{body}\n"
            f"            raise RuntimeError('fell off the end of a procedure')  # pragma: no cover\n"
            f"    except BaseException:\n        fr.pc = pc\n        raise\n")


class _Case:
    """Writing the case of instruction `k` of procedure `lp`."""
    pad = " " * 16

    def __init__(self, lp, host, k: int, ins, paste: bool):
        self.lp, self.host, self.k, self.ins, self.paste = lp, host, k, ins, paste

    def goto(self, t, pad=None, halt: bool = False) -> list[str]:
        """Go on at instruction t; `halt`: stop first if something (a trigger) interrupts."""
        pad = self.pad if pad is None else pad
        stop = [f"{pad}if rt.halt:", f"{pad}    fr.pc = pc", f"{pad}    return"] if halt else []
        return [f"{pad}pc = {t}"] + stop + ([f"{pad}continue"] if t is not None and t <= self.k else [])

    def tick(self, pad=None) -> list[str]:
        """A step (a loop's round), against the step limit."""
        pad = self.pad if pad is None else pad
        span = self.host.name(self.ins.span, "S")
        return [f"{pad}rt.steps += 1", f"{pad}if rt.steps > rt.max_steps: rt.tick({span}, {self.lp.rule!r})"]


def _block(w: _Case) -> list[str]:
    ins, lp = w.ins, w.lp
    if w.paste:
        lines = _pasted(w)
        if lines is not None:
            return lines
    pad = w.pad
    out = [f"{pad}r = {w.host.name(w.host.block_fn(ins), 's')}(rt, L)", f"{pad}if r is None:"]
    out += w.goto(w.k + 1, pad + "    ", halt=True)
    if ins.target is not None:
        out.append(f"{pad}elif r is BREAK:")
        out += w.goto(ins.target, pad + "    ", halt=True)
    if ins.head is not None:
        out.append(f"{pad}elif r is CONTINUE:")
        out += w.tick(pad + "    ") + w.goto(ins.head, pad + "    ", halt=True)
    out.append(f"{pad}else:")
    if lp.exit_pc is not None:
        out += w.goto(lp.exit_pc, pad + "    ", halt=True)
    else:
        out += [f"{pad}    return_from(rt, fr, r.value)", f"{pad}    return"]
    return out


def _pasted(w: _Case) -> list[str] | None:
    """A block's code written into the runner itself (no call, no signal values):
    `break`/`continue`/`return` become jumps, as the runner does for the block's signals."""
    ins, lp, host = w.ins, w.lp, w.host

    def jump(t, p):
        # Always back to the dispatch: the rest of the pasted block must not run.
        return w.goto(t, p, halt=True) + ([f"{p}continue"] if t > w.k else [])

    def brk(p):
        if ins.target is None:
            raise host.Unsupported("break outside a loop")
        return jump(ins.target, p)

    def cont(p):
        if ins.head is None:
            raise host.Unsupported("continue outside a loop")
        return w.tick(p) + jump(ins.head, p)

    def ret(p, value, loops):
        if lp.exit_pc is None:
            return [f"{p}return_from(rt, fr, {value})", f"{p}return"]
        if loops:
            raise host.Unsupported("a jump out of a Python loop")
        return [f"{p}{value}"] + jump(lp.exit_pc, p)
    lines = host.paste(ins.stmts, len(w.pad) // 4, {"break": brk, "continue": cont, "return": ret}, lp.rule)
    if lines is None:
        return None
    return lines + w.goto(w.k + 1, halt=True)


def _simple(w: _Case) -> list[str]:
    """A primitive whose moves fire triggers, or the store after a pausing call."""
    return [f"{w.pad}{w.host.name(w.host.simple_fn(w.ins), 's')}(rt, L)"] + w.goto(w.k + 1, halt=True)


def _jump(w: _Case) -> list[str]:
    return w.goto(w.ins.target)


def _loop(w: _Case) -> list[str]:
    return w.tick() + w.goto(w.ins.target)


def _branch(w: _Case) -> list[str]:
    pad = w.pad
    return [f"{pad}if {w.host.src(w.ins.node)}:", f"{pad}    pc = {w.k + 1}", f"{pad}else:"] + \
        w.goto(w.ins.target, pad + "    ")


def _for_init(w: _Case) -> list[str]:
    pad, slot = w.pad, w.ins.slot
    return [f"{pad}L[{slot + 2}] = tuple({w.host.src(w.ins.node, as_seq=True)})", f"{pad}L[{slot + 1}] = 0",
            f"{pad}pc = {w.k + 1}"]


def _for_next(w: _Case) -> list[str]:
    pad, slot = w.pad, w.ins.slot
    return [f"{pad}_k = L[{slot + 1}]", f"{pad}_q = L[{slot + 2}]", f"{pad}if _k >= len(_q):"] + \
        w.goto(w.ins.target, pad + "    ") + \
        [f"{pad}else:", f"{pad}    L[{slot}] = _q[_k]", f"{pad}    L[{slot + 1}] = _k + 1", f"{pad}    pc = {w.k + 1}"]


def _repeat_init(w: _Case) -> list[str]:
    return [f"{w.pad}L[{w.ins.slot}] = {w.host.src(w.ins.node)}", f"{w.pad}pc = {w.k + 1}"]


def _repeat_next(w: _Case) -> list[str]:
    pad, slot = w.pad, w.ins.slot
    return [f"{pad}if L[{slot}] <= 0:"] + w.goto(w.ins.target, pad + "    ") + \
        [f"{pad}else:", f"{pad}    L[{slot}] -= 1", f"{pad}    pc = {w.k + 1}"]


def _secrecy(w: _Case) -> list[str]:
    """Enter (+1) or leave (-1) a `simultaneous` loop: decisions in it are secret."""
    return [f"{w.pad}fr.secret += {w.ins.value}", f"{w.pad}pc = {w.k + 1}"]


def _fire(w: _Case) -> list[str]:
    ins, pad = w.ins, w.pad
    args = repr(tuple(ins.value)) if ins.value is not None else \
        "(" + "".join(f"{w.host.src(a)}, " for a in ins.args) + ")"
    return [f"{pad}_a = {args}", f"{pad}fr.pc = {w.k + 1}", f"{pad}rt.fire({ins.event!r}, _a)",
            f"{pad}if rt.halt: return", f"{pad}pc = {w.k + 1}"]


def _ret(w: _Case) -> list[str]:
    return [f"{w.pad}return_from(rt, fr, None)", f"{w.pad}return"]


def _call(w: _Case) -> list[str]:
    """Arguments, a step, the callee's frame pushed and run from here."""
    ins, pad, host = w.ins, w.pad, w.host
    proc = host.procs[ins.proc]
    args = host.call_args(ins.args, ins.params)
    p = host.name(proc, "P")
    head = [f"{pad}_v = [{', '.join(args)}]",
            f"{pad}pc = fr.pc = {w.k + 1}",
            f"{pad}rt.steps += 1",
            f"{pad}if rt.steps > rt.max_steps: rt.tick({host.name(ins.span, 'S')}, "
            f"{rule_name(proc.kind, proc.name)!r})"]
    push = [f"{pad}_f = Frame({p}, 0, _v + [None] * ({p}.nslots - {len(args)}), {ins.slot}, 0)",
            f"{pad}st.frames.append(_f)",
            f"{pad}if rt.breakpoint is not None:",
            f"{pad}    rt.check_breakpoint({p})",
            f"{pad}    if rt.halt: return",
            f"{pad}{count_entry(repr(proc.name))}"] + _run_pushed(p, pad)
    if proc.body is None:
        return head + push
    # A phase that never pauses (phases return nothing): its body runs here unless a
    # breakpoint may stop at its entry. (The body exists, so the callee is compiled and its
    # frame size is final.)
    extra = proc.nslots - len(args)
    return head + [f"{pad}if rt.breakpoint is None:",
                   f"{pad}    {count_entry(repr(proc.name))}",
                   f"{pad}    {host.name(proc.body, 'pb')}(rt, _v{f' + [None] * {extra}' if extra else ''})",
                   f"{pad}else:"] + [f"    {line}" for line in push]


def _run_pushed(proc: str, pad: str) -> list[str]:
    """Run the frame `_f` just pushed for procedure `proc` from this runner rather than
    through Runtime.run (one Python call instead of a trip through the run loop and back
    into this runner), unless frames pile up; go on here only if it simply returned."""
    return [
        f"{pad}if len(st.frames) > {SYNC_DEPTH}:",
        f"{pad}    rt.halt = True",
        f"{pad}    return",
        f"{pad}{proc}.runner(rt, _f)",
        f"{pad}if st.frames[-1] is not fr or rt.queue or st.pending is not None or st.result is not None or rt.paused:",
        f"{pad}    return",
        f"{pad}rt.halt = False"]


def _use(w: _Case) -> list[str]:
    """A card's ability: at once when it never pauses, else in a frame of its own (run here,
    as calls are)."""
    pad, host = w.pad, w.host
    ability, card, player = (host.src(x) for x in w.ins.args)
    procs = host.name(host.procs, "PR")
    return [
        f"{pad}_n = {ability}",
        f"{pad}pc = fr.pc = {w.k + 1}",
        f"{pad}if _n is not None:",
        f"{pad}    _u = {procs}[_n]",
        f"{pad}    if _u.direct is not None:",
        f"{pad}        _u.direct(rt, [{card}, {player}])",
        f"{pad}    else:",
        f"{pad}        _f = Frame(_u, 0, [{card}, {player}] + [None] * (_u.nslots - 2))",
        f"{pad}        st.frames.append(_f)",
        f"{pad}        {count_entry('_n')}"] + _run_pushed("_u", pad + "        ") + [
        f"{pad}if rt.halt: return"]


def _decide(w: _Case) -> list[str]:
    """Ask: with one option, take it without asking; else pause with the decision pending."""
    pad, slot, k = w.pad, w.ins.slot, w.k
    build, secret_done = w.host.decide_fn(w.ins)      # secret_done: the builder marks secret decisions
    out = [f"{pad}d = {w.host.name(build, 'db')}(rt, L)", f"{pad}fr.pc = {k + 1}"]
    if w.host.has_simultaneous and not secret_done:
        out += [f"{pad}if not d.secret and in_simultaneous(rt):", f"{pad}    d = d._replace(secret=True)"]
    out.append(f"{pad}if len(d.options) == 1:")
    if slot >= 0:
        out.append(f"{pad}    L[{slot}] = d.options[0].value")
    out += [f"{pad}    if rt.sink is not None: forced(rt, d)", f"{pad}    pc = {k + 1}"]
    if w.host.may_skip(w.ins):
        # `choose(..., unavailable: reason)` with nothing to offer: none, and the player is told.
        out.append(f"{pad}elif not d.options:")
        if slot >= 0:
            out.append(f"{pad}    L[{slot}] = None")
        out += [f"{pad}    if rt.sink is not None: skipped(rt, d)", f"{pad}    pc = {k + 1}"]
    return out + [f"{pad}else:", f"{pad}    st.pending = d", f"{pad}    st.pending_slot = {slot}",
                  f"{pad}    rt.halt = True", f"{pad}    return"]


def _decide_many_init(w: _Case) -> list[str]:
    return [f"{w.pad}L[{w.ins.slot}] = ()", f"{w.pad}pc = {w.k + 1}"]


def _decide_many(w: _Case) -> list[str]:
    """Ask for picks one at a time (this instruction runs again after each answer) until the
    builder says they are done; a pick with one option (other than done) is taken."""
    pad, ins, k = w.pad, w.ins, w.k
    build = w.host.name(w.host.decide_many_fn(ins), "db")
    done = [f"{pad}        L[{ins.slot}] = L[{ins.work}]"] if ins.slot >= 0 else []
    return [f"{pad}while True:",
            f"{pad}    d = {build}(rt, L)",
            f"{pad}    if d is None:"] + done + [
            f"{pad}        pc = {k + 1}",
            f"{pad}        break",
            f"{pad}    if len(d.options) == 1 and d.options[0].value != DONE:",
            f"{pad}        L[{ins.work}] = L[{ins.work}] + (d.options[0].value,)",
            f"{pad}        continue",
            f"{pad}    if not d.secret and in_simultaneous(rt):",
            f"{pad}        d = d._replace(secret=True)",
            f"{pad}    st.pending = d",
            f"{pad}    st.pending_slot = ({ins.work}, {ins.slot})",
            f"{pad}    rt.halt = True",
            f"{pad}    fr.pc = {k}",
            f"{pad}    return"]


# The one table of instructions: op -> what its case does.
_WRITERS = {
    "block": _block, "prim": _simple, "store": _simple, "jump": _jump, "loop": _loop, "branch": _branch,
    "for_init": _for_init, "for_next": _for_next, "repeat_init": _repeat_init, "repeat_next": _repeat_next,
    "secrecy": _secrecy, "fire": _fire, "ret": _ret, "call": _call, "use": _use, "decide": _decide,
    "decide_many_init": _decide_many_init, "decide_many": _decide_many,
}
