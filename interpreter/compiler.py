"""The compiler: checked model -> `Program` of closures and VM code (compiled once per load).

Expressions become Python closures `f(rt, L)` (runtime, local slots). A statement that can
never pause becomes a closure too ("direct" code), and a whole procedure that can never
pause becomes one closure. Only what may pause for a decision (a `choose`, a call to a
pausing procedure, an ability, an event with triggers) is lowered to VM instructions whose
position lives in the game state, so the game can stop there, be copied, saved and resumed.
`end_game` unwinds to the run loop (runtime.GameOver) wherever it is called. The game loop
never sees the AST or Lark.
"""

from __future__ import annotations

from rulesvm.dsl import ast as A
from rulesvm.dsl.model import Formula
from rulesvm.dsl.primitives import PRIMITIVES
from rulesvm.dsl.types import ANY, CARD, INT, PLAYER, ZONE, Type

from . import builtins as B
from .errors import MAX_CALL_DEPTH, RulesRuntimeError
from .format import formatter
from .limits import bounded_join, bounded_range, too_deep
from .program import CompiledProc, Program, ZoneInfo
from .purity import ConstantAnalysis, is_plain_value_type, recursive_functions
from .runtime import BREAK, CONTINUE, Return, as_rules_error, list_item, rule_name, zone_item
from .state import Decision, Frame, Option

DONE = "\x00done"          # the value of choose_many's "done" option
DECISION_PRIMS = ("choose", "choose_many")


class Compiler:
    def __init__(self, model, options: dict, codegen: bool = True):
        self.m = model
        self.res = model.resolution
        self.options = options
        self.prog: Program | None = None
        self.suspending: set[str] = set()
        self.codegen = codegen
        self.gen = None
        self.consts = ConstantAnalysis(self.res, model.funcs)

    def prim_spec(self, name: str):
        return PRIMITIVES[name]

    # ================================================================ tables
    def compile(self) -> Program:
        m = self.m
        card_ids, card_names, card_kinds, card_defs = [], [], [], []
        for cd in m.cards:
            for iid in cd.instance_ids:
                card_ids.append(iid)
                card_names.append(cd.name.get("en", cd.id))
                card_kinds.append(cd.kind)
                card_defs.append(cd)
        card_fields = {name: [cd.fields.get(name) for cd in card_defs] for name in m.field_types}
        # Names and fields that depend on the card's orientation: per card, (side, turn) -> value.
        face_names = [{k: face["name"].get("en", cd.id) for k, face in cd.faces.items() if "name" in face} or None
                      for cd in card_defs]
        face_fields = {}
        for name in m.field_types:
            table = [{k: face[name] for k, face in cd.faces.items() if name in face} or None for cd in card_defs]
            if any(t is not None for t in table):
                face_fields[name] = table
        max_players = m.players[1]
        zones, zone_names, zone_owner, zone_info = [], [], [], []
        shared = [z for z in sorted(m.zones.values(), key=lambda z: z.index) if not z.per_player]
        per_player = [z for z in sorted(m.zones.values(), key=lambda z: z.index) if z.per_player]
        families = []      # (first zone index, number of zones) of each compacting row
        for z in shared + per_player:
            size = 1
            for d in z.dims:
                size *= d
            info = ZoneInfo(z.name, z.per_player, z.ordered, z.hidden, z.visible, z.facedown_visible,
                            z.arrive_face, len(zone_names), z.dims, size, z.compact)
            zones.append(info)
            for p in range(max_players if z.per_player else 1):
                if z.compact:
                    families.append((len(zone_names), size))
                for k in range(size):
                    seat = f"[{p + 1}]" if z.per_player else ""
                    if len(z.dims) == 1:
                        where = f"({k})"
                    elif len(z.dims) == 2:
                        where = f"({k % z.dims[0]},{k // z.dims[0]})"
                    else:
                        where = ""
                    zone_names.append(f"{z.name}{seat}{where}")
                    zone_owner.append(p if z.per_player else None)
                    zone_info.append(info)
        self.prog = Program(
            model=m, options=dict(self.options), max_players=max_players, card_ids=card_ids,
            card_names=card_names, card_kinds=card_kinds, card_fields=card_fields, card_defs=card_defs,
            card_by_id={iid: i for i, iid in enumerate(card_ids)}, face_fields=face_fields,
            face_names=face_names if any(face_names) else None, zones=zones, zone_names=zone_names,
            zone_owner=zone_owner, zone_info=zone_info, nzones=len(zone_names), procs={}, triggers={},
            var_defaults={}, var_names={}, fingerprint=m.fingerprint, max_steps=m.max_steps)
        self.prog.card_fingerprint = _card_fingerprint(card_ids, card_kinds, card_defs)
        self.prog.card_backs = [cd.back for cd in card_defs]
        self.prog.many_backs = len(set(self.prog.card_backs)) > 1
        self.prog.compact_family = [None] * len(zone_names)
        for first, size in families:
            for k in range(size):
                self.prog.compact_family[first + k] = (first, size)
        self.prog.has_compact = bool(families)
        self.zone_base = {z.name: z.base for z in zones}
        if self.codegen:
            from .codegen import PyGen
            self.gen = PyGen(self)
        self._analyse_suspension()
        for proc in m.procs.values():
            self.prog.procs[proc.name] = CompiledProc(proc.name, proc.kind, 0, len(proc.params), span=proc.span)
        for trig in m.triggers:
            self.prog.procs[trig.proc.name] = CompiledProc(trig.proc.name, "trigger", 0, len(trig.proc.params),
                                                           span=trig.span)
        # Procedures that never pause first, so that generated code calling them can call
        # their bodies directly.
        for proc in sorted(m.procs.values(),
                           key=lambda p: p.name in self.suspending and p.name not in self.direct_phases):
            self._compile_proc(proc)
        for trig in m.triggers:
            self._compile_proc(trig.proc)
            cond = self.expr(trig.cond) if trig.cond is not None else None
            self.prog.triggers.setdefault(trig.event, []).append((cond, self.prog.procs[trig.proc.name]))
        for scope in ("global", "player", "card"):
            vs = m.vars_of(scope)
            self.prog.var_defaults[scope] = [self._default(v) for v in vs]
            self.prog.var_names[scope] = [v.name for v in vs]
        self.prog.compiler = self
        return self.prog

    # ================================================================ suspension analysis
    def _analyse_suspension(self) -> None:
        """Which procedures may pause (or must run as VM code): a fixpoint over the call graph."""
        m = self.m
        evented = {t.event for t in m.triggers}
        changed = True
        abilities_suspend = False
        while changed:
            changed = False
            for proc in list(m.procs.values()) + [t.proc for t in m.triggers]:
                if proc.name in self.suspending:
                    continue
                # Phases always run as VM code: scenarios and debuggers stop at their entry.
                if proc.kind in ("phase", "game") or \
                        self._block_suspends(proc.decl.body, evented, abilities_suspend):
                    self.suspending.add(proc.name)
                    changed = True
            new = any(p.kind in ("ability", "snippet") and p.name in self.suspending for p in m.procs.values())
            if new != abilities_suspend:
                abilities_suspend = new
                changed = True
        self.abilities_suspend = abilities_suspend
        self.evented = evented
        # Phases whose bodies never pause: their callers still treat them as pausing (a
        # breakpoint may stop at their entry), but when no breakpoint is set the call runs
        # the body at once, without a frame.
        phase_events = {"phase_start", "phase_end"} & evented
        self.direct_phases = {p.name for p in m.procs.values() if p.kind == "phase" and not phase_events
                              and not self._block_suspends(p.decl.body, evented, abilities_suspend)}

    def _block_suspends(self, block, evented, abilities_suspend) -> bool:
        return any(self._stmt_suspends(s, evented, abilities_suspend) for s in block.stmts)

    def _stmt_suspends(self, s, evented=None, abilities_suspend=None) -> bool:
        evented = self.evented if evented is None else evented
        abilities_suspend = self.abilities_suspend if abilities_suspend is None else abilities_suspend
        if isinstance(s, (A.Let, A.Assign, A.ExprStmt)):
            value = s.expr if isinstance(s, A.ExprStmt) else s.value
            if isinstance(value, A.Call):
                kind = self.res.calls.get(value, ("",))
                if kind[0] == "proc" and kind[1] in self.suspending:
                    return True
                if kind[0] == "prim":
                    name = kind[1]
                    if name in DECISION_PRIMS:
                        return True
                    if name == "use" and abilities_suspend:
                        return True
                    if name in ("move", "draw") and "moved" in evented:
                        return True
            return False
        if isinstance(s, A.Emit):
            return s.event in evented
        if isinstance(s, A.If):
            return any(self._block_suspends(b, evented, abilities_suspend) for _, b in s.branches) or \
                (s.else_ is not None and self._block_suspends(s.else_, evented, abilities_suspend))
        if isinstance(s, (A.For, A.While, A.Repeat, A.Loop)):
            return self._block_suspends(s.body, evented, abilities_suspend)
        return False

    # ================================================================ procedures
    def _compile_proc(self, proc) -> None:
        cp = self.prog.procs[proc.name]
        cp.nslots = self.res.frame_sizes.get(proc.decl, len(proc.params))
        cp.suspends = proc.name in self.suspending
        rule = rule_name(proc.kind, proc.name)
        if not cp.suspends or proc.name in self.direct_phases:
            body = self.dblock(proc.decl.body, rule, (len(proc.params), cp.nslots))
            nslots = cp.nslots

            name = proc.name

            span = proc.span

            def direct(rt, args, body=body, nslots=nslots):
                if rt.coverage is not None:
                    rt.covered(name)
                rt.depth += 1
                if rt.depth > MAX_CALL_DEPTH:
                    raise too_deep(span, rule)
                L = list(args) + [None] * (nslots - len(args))
                r = body(rt, L)
                rt.depth -= 1
                if r is not None and r.__class__ is Return:
                    return r.value
                return None
            cp.direct = direct
            cp.body = body
            # A non-pausing procedure still gets VM code, so it can be entered as a frame
            # (triggers, abilities called through `use`).
            cb = _CodeBuilder(self, proc.name, rule)
            cb.simple(body, proc.decl.body.span, None)
            cb.ret(None, proc.decl.body.span)
            cp.code, cp.spans = cb.finish()
            return
        cb = _CodeBuilder(self, proc.name, rule)
        if proc.kind == "phase" and "phase_start" in self.evented:
            name = proc.name
            cb.fire(lambda rt, L, name=name: ("phase_start", (name,)), proc.span)
        self.vblock(proc.decl.body, cb, None)
        if proc.kind == "phase" and "phase_end" in self.evented:
            # Every way out of the phase, `return` included, passes here.
            cb.exit_pc = cb.here()
            name = proc.name
            cb.fire(lambda rt, L, name=name: ("phase_end", (name,)), proc.span)
        cb.ret(None, proc.decl.body.span)
        cp.code, cp.spans = cb.finish()

    # ================================================================ VM statements
    def vblock(self, block: A.Block, cb: "_CodeBuilder", loop) -> None:
        run: list = []
        for s in block.stmts:
            if self._stmt_suspends(s):
                if run:
                    cb.simple(self._dseq(run, cb.rule), run[0].span, loop)
                    run = []
                self.vstmt(s, cb, loop)
            else:
                run.append(s)
        if run:
            cb.simple(self._dseq(run, cb.rule), run[0].span, loop)

    def _dseq(self, stmts, rule):
        if self.gen is not None:
            fn = self.gen.block_function(A.Block(stmts[0].span, tuple(stmts)), rule)
            if fn is not None:
                return fn
        fns = [self.dstmt(s, rule) for s in stmts]
        return _seq(fns)

    def vstmt(self, s, cb: "_CodeBuilder", loop) -> None:
        if isinstance(s, A.If):
            end_jumps = []
            for cond, body in s.branches:
                jf = cb.jump_if_false(self.expr(cond), cond.span, cond)
                self.vblock(body, cb, loop)
                end_jumps.append(cb.jump(s.span))
                cb.patch(jf, cb.here())
            if s.else_ is not None:
                self.vblock(s.else_, cb, loop)
            for j in end_jumps:
                cb.patch(j, cb.here())
        elif isinstance(s, A.While):
            head = cb.here()
            jf = cb.jump_if_false(self.expr(s.cond), s.cond.span, s.cond)
            ctx = _Loop(head)
            self.vblock(s.body, cb, ctx)
            cb.loop_jump(head, s.span)
            end = cb.here()
            cb.patch(jf, end)
            ctx.close(cb, end)
        elif isinstance(s, A.Loop):
            head = cb.here()
            ctx = _Loop(head)
            self.vblock(s.body, cb, ctx)
            cb.loop_jump(head, s.span)
            ctx.close(cb, cb.here())
        elif isinstance(s, A.For):
            slot = self.res.slots[s]
            seq = self.list_expr(s.iterable)
            if s.simultaneous:
                cb.secrecy(+1, s.span)
            cb.for_init(seq, slot, s.iterable.span, s.iterable)
            head = cb.here()
            nxt = cb.for_next(slot, s.span)
            ctx = _Loop(head)
            self.vblock(s.body, cb, ctx)
            cb.loop_jump(head, s.span)
            end = cb.here()
            cb.patch(nxt, end)
            ctx.close(cb, end)
            if s.simultaneous:
                cb.secrecy(-1, s.span)
        elif isinstance(s, A.Repeat):
            slot = self.res.slots[s]
            cb.repeat_init(self.expr(s.count), slot, s.count.span, s.count)
            head = cb.here()
            nxt = cb.repeat_next(slot, s.span)
            ctx = _Loop(head)
            self.vblock(s.body, cb, ctx)
            cb.loop_jump(head, s.span)
            end = cb.here()
            cb.patch(nxt, end)
            ctx.close(cb, end)
        elif isinstance(s, A.Emit):
            args = [self.expr(a) for a in s.args]
            event = s.event
            cb.fire(lambda rt, L: (event, tuple(a(rt, L) for a in args)), s.span)
        elif isinstance(s, (A.Let, A.Assign, A.ExprStmt)):
            self._vcall_stmt(s, cb, loop)
        else:  # pragma: no cover
            raise AssertionError(type(s))

    def _vcall_stmt(self, s, cb, loop) -> None:
        call = s.expr if isinstance(s, A.ExprStmt) else s.value
        slot = None
        store = None
        if isinstance(s, A.Let):
            slot = self.res.slots[s]
        elif isinstance(s, A.Assign):
            target = self.res.targets[s]
            if target[0] == "local" and s.op == "=":
                slot = target[1]
            else:
                # Assigning a decision to a variable: decide into a scratch slot, then store.
                slot = cb.scratch()
                store = self._assign_from_slot(s, slot)
        kind = self.res.calls[call]
        if kind[0] == "proc":
            proc = self.prog.procs[kind[1]]
            args = self._args_for(kind[2], self.m.procs[kind[1]].params)
            if proc.suspends:
                cb.call(proc, args, slot, call.span, (kind[2], self.m.procs[kind[1]].params))
            else:
                fn = self._direct_call(proc, args)
                cb.simple(self._store(fn, slot), call.span, loop)
        else:
            name = kind[1]
            if name == "choose":
                self._vchoose(call, kind[2], slot, cb)
            elif name == "choose_many":
                self._vchoose_many(call, kind[2], slot, cb)
            elif name == "use":
                a, c, p = (self.expr(x) for x in kind[2])
                cb.use(a, c, p, call.span, kind[2])
            else:   # move/draw with triggers: a plain statement followed by a trigger flush
                fn = B.compile_primitive(self, call, kind[2])
                cb.simple(self._store(fn, slot), call.span, loop)
        if store is not None:
            cb.simple(store, s.span, loop)

    def _store(self, fn, slot):
        if slot is None:
            def run(rt, L):
                fn(rt, L)
            return run

        def store(rt, L):
            L[slot] = fn(rt, L)
        return store

    def _assign_from_slot(self, s: A.Assign, slot: int):
        value = lambda rt, L: L[slot]
        return self._assign(s, value)

    def _args_for(self, nodes, params):
        """Compiled arguments; a zone given for a list parameter becomes the list of its cards."""
        out = []
        for node, (_, ptype) in zip(nodes, params):
            if ptype.name == "list" and self.res.types.get(node) == ZONE:
                out.append(self.list_expr(node))
            else:
                out.append(self.expr(node))
        return out

    def _direct_call(self, proc: CompiledProc, args):
        def call(rt, L):
            return proc.direct(rt, [a(rt, L) for a in args])
        return call

    def _decision_common(self, call, args):
        spec = PRIMITIVES[call.func.id]
        names = [p.name for p in spec.params]
        get = dict(zip(names, args))
        options = self.list_expr(get["options"])
        by = self.expr(get["by"])
        prompt = self.expr(get["prompt"]) if get["prompt"] is not None else (lambda rt, L: "Choose")
        elem_t = self.res.types.get(get["options"], ANY)
        elem_t = elem_t.elem if elem_t.name == "list" else (CARD if elem_t == ZONE else ANY)
        if get["label"] is not None:
            label_fn = self.expr(get["label"])
            label = lambda rt, L: label_fn(rt, L)
        else:
            fmt = formatter(elem_t or ANY, lambda: self.prog)
            label = lambda rt, L: (lambda v: fmt(v, rt))
        if self._fixed_labels(get, elem_t):
            # The label of a plain value never changes: compute each one once.
            label = memo_labels(label)
        secret = self.expr(get["secret"]) if get.get("secret") is not None else None
        help_ = self.expr(get["help"]) if get.get("help") is not None else None
        confirm = self.expr(get["confirm"]) if get.get("confirm") is not None else None

        def finish(d: Decision, rt, L) -> Decision:
            extra = {}
            if help_ is not None:
                extra["help"] = str(help_(rt, L) or "")
            if confirm is not None:
                extra["confirm"] = bool(confirm(rt, L))
            return d._replace(**extra) if extra else d
        return get, options, by, prompt, label, secret, finish

    def _fixed_labels(self, get, elem_t) -> bool:
        """Are the options plain values whose labels cannot change during a game?"""
        return is_plain_value_type(elem_t) and (get["label"] is None
                                                or self.consts.is_constant(get["label"], frozenset()))

    def _vchoose(self, call, args, slot, cb) -> None:
        get, options, by, prompt, label, secret, finish = self._decision_common(call, args)
        option_type = self.res.types.get(get["options"], ANY)
        value_type = _value_type(option_type)
        pass_label = self.expr(get["pass"]) if get["pass"] is not None else None
        span = call.span
        if (option_type.name == "list" and self._fixed_labels(get, option_type.elem)
                and self.consts.is_constant(get["options"], frozenset())):
            # The same options every time (e.g. every possible plan): build them once.
            # A tuple, so that every decision shares it (tuple() of a tuple does not copy).
            make_options = once(lambda rt, L: tuple(_dedupe([Option(str(lab(v)), v) for lab in (label(rt, L),)
                                                             for v in options(rt, L)])))
        else:
            def make_options(rt, L):
                lab = label(rt, L)
                return _dedupe([Option(str(lab(v)), v) for v in options(rt, L)])
        if self.gen is not None:
            inline_labels = not self._fixed_labels(get, option_type.elem) if option_type.name == "list" else True
            generated = self.gen.choose_build(get, make_options, inline_labels, span, value_type)
            if generated is not None:
                return cb.decide(generated, slot, span, secret_done=True)
        fail = choose_errors(span)

        def build(rt, L):
            player = by(rt, L)
            if player is None:
                fail("by")
            opts = make_options(rt, L)
            pass_at = -1
            if pass_label is not None:
                text = pass_label(rt, L)
                if text is not None:
                    opts = [o for o in opts if o.label != str(text)]
                    opts.append(Option(str(text), None))
                    pass_at = len(opts) - 1
            if not opts:
                fail("options")
            d = Decision(player, str(prompt(rt, L)), tuple(opts), "choose",
                         bool(secret(rt, L)) if secret is not None else False, pass_index=pass_at,
                         value_type=value_type)
            return finish(d, rt, L)
        cb.decide(build, slot, span)

    def _vchoose_many(self, call, args, slot, cb) -> None:
        get, options, by, prompt, label, secret, finish = self._decision_common(call, args)
        value_type = _value_type(self.res.types.get(get["options"], ANY))
        lo = self.expr(get["min"]) if get["min"] is not None else (lambda rt, L: 0)
        hi = self.expr(get["max"]) if get["max"] is not None else (lambda rt, L: None)
        done = self.expr(get["done"]) if get["done"] is not None else (lambda rt, L: "Done")
        span = call.span
        work = cb.scratch()

        def build(rt, L):
            picked = L[work]
            player = by(rt, L)
            if player is None:
                raise RulesRuntimeError("`choose_many` needs a player (`by:` is none)", span, None, "R006")
            pool = [v for v in options(rt, L) if v not in picked]
            low, high = lo(rt, L), hi(rt, L)
            high = len(pool) + len(picked) if high is None else high
            if len(picked) >= high or not pool:
                if len(picked) < low:
                    raise RulesRuntimeError(f"`choose_many` needs {low} picks but only {len(picked)} options exist",
                                            span, None, "R007")
                return None
            lab = label(rt, L)
            opts = _dedupe([Option(str(lab(v)), v) for v in pool])
            if len(picked) >= low:
                opts.append(Option(str(done(rt, L)), DONE))
            text = str(prompt(rt, L))
            if high > 1:
                text += f" ({len(picked) + 1} of {'up to ' if low < high else ''}{high})"
            return finish(Decision(player, text, tuple(opts), "choose_many",
                                   bool(secret(rt, L)) if secret is not None else False, tuple(picked),
                                   value_type=value_type), rt, L)
        cb.decide_many(build, work, slot, span)

    # ================================================================ direct statements
    def dblock(self, block: A.Block, rule: str, frame: tuple[int, int] | None = None):
        """A block that never pauses as one function (rt, L) -> signal; `frame`: (number of
        parameters, of slots) when the block is a body called with a list of its own."""
        if self.gen is not None:
            fn = self.gen.block_function(block, rule, frame)
            if fn is not None:
                return fn
        return _seq([self.dstmt(s, rule) for s in block.stmts])

    def dstmt(self, s, rule: str):
        if isinstance(s, A.Let):
            slot = self.res.slots[s]
            value = self._value_stmt_expr(s.value)

            def let(rt, L):
                L[slot] = value(rt, L)
            return let
        if isinstance(s, A.Assign):
            return self._assign(s, self._value_stmt_expr(s.value))
        if isinstance(s, A.ExprStmt):
            fn = self._value_stmt_expr(s.expr)

            def run(rt, L):
                fn(rt, L)
            return run
        if isinstance(s, A.If):
            branches = [(self.expr(c), self.dblock(b, rule)) for c, b in s.branches]
            else_ = self.dblock(s.else_, rule) if s.else_ is not None else None
            if len(branches) == 1:
                (c1, b1), = branches
                if else_ is None:
                    def if1(rt, L):
                        if c1(rt, L):
                            return b1(rt, L)
                    return if1

                def if2(rt, L):
                    if c1(rt, L):
                        return b1(rt, L)
                    return else_(rt, L)
                return if2

            def ifn(rt, L):
                for c, b in branches:
                    if c(rt, L):
                        return b(rt, L)
                if else_ is not None:
                    return else_(rt, L)
            return ifn
        if isinstance(s, A.For):
            slot = self.res.slots[s]
            seq = self.list_expr(s.iterable)
            body = self.dblock(s.body, rule)
            span = s.span

            def for_(rt, L):
                for v in seq(rt, L):
                    rt.steps += 1
                    if rt.steps > rt.max_steps:
                        rt.tick(span, rule)
                    L[slot] = v
                    r = body(rt, L)
                    if r is not None:
                        if r is BREAK:
                            break
                        if r is CONTINUE:
                            continue
                        return r
            return for_
        if isinstance(s, (A.While, A.Loop)):
            cond = self.expr(s.cond) if isinstance(s, A.While) else (lambda rt, L: True)
            body = self.dblock(s.body, rule)
            span = s.span

            def while_(rt, L):
                while cond(rt, L):
                    rt.tick(span, rule)
                    r = body(rt, L)
                    if r is not None:
                        if r is BREAK:
                            break
                        if r is CONTINUE:
                            continue
                        return r
            return while_
        if isinstance(s, A.Repeat):
            count = self.expr(s.count)
            body = self.dblock(s.body, rule)
            span = s.span

            def repeat(rt, L):
                for _ in range(count(rt, L)):
                    rt.tick(span, rule)
                    r = body(rt, L)
                    if r is not None:
                        if r is BREAK:
                            break
                        if r is CONTINUE:
                            continue
                        return r
            return repeat
        if isinstance(s, A.Break):
            return lambda rt, L: BREAK
        if isinstance(s, A.Continue):
            return lambda rt, L: CONTINUE
        if isinstance(s, A.Return):
            if s.value is None:
                return lambda rt, L: Return(None)
            value = self.expr(s.value)
            return lambda rt, L: Return(value(rt, L))
        if isinstance(s, A.Emit):
            args = [self.expr(a) for a in s.args]
            event = s.event
            return lambda rt, L: rt.fire(event, tuple(a(rt, L) for a in args))
        raise AssertionError(type(s))  # pragma: no cover

    def _value_stmt_expr(self, e):
        """An expression at statement level: may be a call of a non-pausing procedure."""
        if isinstance(e, A.Call):
            kind = self.res.calls.get(e)
            if kind and kind[0] == "proc":
                proc = self.prog.procs[kind[1]]
                return self._direct_call(proc, self._args_for(kind[2], self.m.procs[kind[1]].params))
        return self.expr(e)

    def _assign(self, s: A.Assign, value):
        kind, detail = self.res.targets[s]
        op = s.op
        if kind == "local":
            slot = detail
            if op == "=":
                def a(rt, L):
                    L[slot] = value(rt, L)
            elif op == "+=":
                def a(rt, L):
                    L[slot] += value(rt, L)
            else:
                def a(rt, L):
                    L[slot] -= value(rt, L)
            return a
        if kind == "global":
            i = detail

            def a(rt, L):
                g = rt.st.gvars
                v = value(rt, L)
                g[i] = v if op == "=" else g[i] + v if op == "+=" else g[i] - v
            return a
        obj = self.expr(s.target.obj)
        i = detail
        attr = "pvars" if kind == "pvar" else "cvars"

        def a(rt, L):
            who = obj(rt, L)
            if who is None:
                raise RulesRuntimeError(f"cannot set `.{s.target.name}` of none", s.target.span, None, "R008")
            row = getattr(rt.st, attr)[i]
            v = value(rt, L)
            row[who] = v if op == "=" else row[who] + v if op == "+=" else row[who] - v
        return a

    # ================================================================ expressions
    def list_expr(self, e):
        """Compile e as a sequence: a zone becomes a snapshot tuple of its cards."""
        fn = self.expr(e)
        if self.res.types.get(e) == ZONE:
            return lambda rt, L: tuple(rt.st.zones[fn(rt, L)])
        return fn

    def expr(self, e):
        if self.gen is not None:
            return self.gen.function(e)
        return self._expr(e)

    def _expr(self, e):
        if isinstance(e, (A.IntLit, A.BoolLit)):
            v = e.value
            return lambda rt, L: v
        if isinstance(e, A.NoneLit):
            return lambda rt, L: None
        if isinstance(e, A.StrLit):
            return self._string(e)
        if isinstance(e, A.Name):
            return self._name(e)
        if isinstance(e, A.Attr):
            return self._attr(e)
        if isinstance(e, A.Call):
            return self._call(e)
        if isinstance(e, A.Index):
            return self._index(e)
        if isinstance(e, A.Unary):
            x = self.expr(e.operand)
            if e.op == "-":
                return lambda rt, L: -x(rt, L)
            return lambda rt, L: not x(rt, L)
        if isinstance(e, A.Binary):
            return self._binary(e)
        if isinstance(e, A.ListLit):
            items = [self.expr(i) for i in e.items]
            return lambda rt, L: tuple(i(rt, L) for i in items)
        if isinstance(e, A.TupleLit):
            items = [self.expr(i) for i in e.items]
            return lambda rt, L: tuple(i(rt, L) for i in items)
        if isinstance(e, A.Comprehension):
            seq = self.list_expr(e.iterable)
            slot = self.res.slots[e]
            elem = self.expr(e.elem)
            if e.cond is None:
                def comp(rt, L):
                    out = []
                    for v in seq(rt, L):
                        L[slot] = v
                        out.append(elem(rt, L))
                    return tuple(out)
                return comp
            cond = self.expr(e.cond)

            def compf(rt, L):
                out = []
                for v in seq(rt, L):
                    L[slot] = v
                    if cond(rt, L):
                        out.append(elem(rt, L))
                return tuple(out)
            return compf
        if isinstance(e, A.Lambda):
            slot = self.res.slots[e]
            body = self.expr(e.body)

            def make(rt, L):
                def fn(v):
                    L[slot] = v
                    return body(rt, L)
                return fn
            return make
        if isinstance(e, A.IfExpr):
            c, a, b = self.expr(e.cond), self.expr(e.then), self.expr(e.else_)
            return lambda rt, L: a(rt, L) if c(rt, L) else b(rt, L)
        raise AssertionError(type(e))  # pragma: no cover

    def _string(self, e: A.StrLit):
        parts = []
        for p in e.parts:
            if isinstance(p, str):
                parts.append((None, p))
            else:
                fmt = formatter(self.res.types.get(p, ANY), lambda: self.prog)
                parts.append((self.expr(p), fmt))
        if len(parts) == 1 and parts[0][0] is None:
            text = parts[0][1]
            return lambda rt, L: text

        def string(rt, L):
            out = []
            for fn, x in parts:
                out.append(x if fn is None else x(fn(rt, L), rt))
            return "".join(out)
        return string

    def _name(self, e: A.Name):
        kind, detail = self.res.names[e]
        if kind == "local":
            slot = detail
            return lambda rt, L: L[slot]
        if kind == "global":
            i = detail
            return lambda rt, L: rt.st.gvars[i]
        if kind == "option":
            v = self.options[detail]
            return lambda rt, L: v
        if kind == "zone":
            z = self.zone_base[detail]
            return lambda rt, L: z
        if kind == "const":
            if detail == "players":
                return lambda rt, L: rt.players
            if detail == "player_count":
                return lambda rt, L: rt.n
        if kind == "ability":
            name = detail
            return lambda rt, L: name
        raise AssertionError((kind, detail))  # pragma: no cover

    def _attr(self, e: A.Attr):
        kind, detail = self.res.attrs[e]
        obj = self.expr(e.obj)
        if kind == "pvar":
            i = detail
            return lambda rt, L: rt.st.pvars[i][obj(rt, L)]
        if kind == "cvar":
            i = detail
            return lambda rt, L: rt.st.cvars[i][obj(rt, L)]
        if kind == "field":
            values = self.prog.card_fields[detail]
            formulas = self._formulas(detail)
            if formulas is not None:
                def formula_field(rt, L):
                    # A continuous ability: the value is computed from the board now.
                    c = obj(rt, L)
                    if c is None:
                        return None
                    f = formulas[c]
                    if f is not None:
                        return f(rt, c)
                    return values[c]
                return formula_field
            if self.prog.face_fields.get(detail) is None:
                def field(rt, L):
                    c = obj(rt, L)
                    return None if c is None else values[c]
                return field
            read = self.face_reader(detail)
            return lambda rt, L: read(rt.st, obj(rt, L))
        if kind == "pprop":
            return lambda rt, L: obj(rt, L) + 1
        return B.card_property(self, detail, obj)

    def face_reader(self, detail: str):
        """(state, card) -> the field's value printed on the side and end of the card that is
        up now (none for no card); for fields whose value depends on the card's face."""
        values = self.prog.card_fields[detail]
        faced = self.prog.face_fields[detail]
        backs = [any(side == 1 for side, _ in cd.faces) for cd in self.prog.card_defs]

        def read(st, c):
            if c is None:
                return None
            faces = faced[c]
            if faces is not None:
                # A single-sided card face down is still read by its front.
                side = 0 if st.faceup[c] or not backs[c] else 1
                key = (side, st.turn[c])
                if key in faces:
                    return faces[key]
                key = (side, None)
                if key in faces:
                    return faces[key]
            return values[c]
        return read

    def _index(self, e: A.Index):
        obj_t = self.res.types.get(e.obj)
        obj = self.expr(e.obj)
        idx = self.expr(e.index)
        span = e.span
        if obj_t == ZONE:
            return lambda rt, L: zone_item(rt.st.zones[obj(rt, L)], idx(rt, L), span)
        return lambda rt, L: list_item(obj(rt, L), idx(rt, L), span)

    def _binary(self, e: A.Binary):
        op = e.op
        if op in ("in", "not in"):
            item = self.expr(e.left)
            rt_t = self.res.types.get(e.right)
            if rt_t == ZONE:
                zone = self.expr(e.right)
                if op == "in":
                    return lambda rt, L: rt.st.where[item(rt, L)] == zone(rt, L) if item(rt, L) is not None else False
                return lambda rt, L: not (item(rt, L) is not None and rt.st.where[item(rt, L)] == zone(rt, L))
            seq = self.expr(e.right)
            if op == "in":
                return lambda rt, L: item(rt, L) in seq(rt, L)
            return lambda rt, L: item(rt, L) not in seq(rt, L)
        a = self.expr(e.left) if self.res.types.get(e.left) != ZONE or op in ("==", "!=") else self.list_expr(e.left)
        b = self.expr(e.right) if self.res.types.get(e.right) != ZONE or op in ("==", "!=") else self.list_expr(e.right)
        span = e.span
        if op == "and":
            return lambda rt, L: a(rt, L) and b(rt, L)
        if op == "or":
            return lambda rt, L: a(rt, L) or b(rt, L)
        if op == "==":
            return lambda rt, L: a(rt, L) == b(rt, L)
        if op == "!=":
            return lambda rt, L: a(rt, L) != b(rt, L)
        if op == "<":
            return lambda rt, L: a(rt, L) < b(rt, L)
        if op == "<=":
            return lambda rt, L: a(rt, L) <= b(rt, L)
        if op == ">":
            return lambda rt, L: a(rt, L) > b(rt, L)
        if op == ">=":
            return lambda rt, L: a(rt, L) >= b(rt, L)
        if op == "+":
            if self.res.types.get(e) == INT:
                return lambda rt, L: a(rt, L) + b(rt, L)
            return lambda rt, L: bounded_join(a(rt, L), b(rt, L), span)
        if op == "-":
            return lambda rt, L: a(rt, L) - b(rt, L)
        if op == "*":
            return lambda rt, L: a(rt, L) * b(rt, L)
        if op in ("/", "%"):
            def div(rt, L):
                x, y = a(rt, L), b(rt, L)
                if y == 0:
                    raise RulesRuntimeError(f"division by zero in `{op}`", span, None, "R010")
                return x // y if op == "/" else x % y
            return div
        if op == "..":
            return lambda rt, L: bounded_range(a(rt, L), b(rt, L), span)
        raise AssertionError(op)  # pragma: no cover

    def _call(self, e: A.Call):
        kind = self.res.calls[e]
        if kind[0] == "func":
            func = self.m.funcs[kind[1]]
            args = self._args_for(kind[2], func.params)
            nslots = self.res.frame_sizes[func.decl]
            bodies = self.func_body(func)
            name = func.name
            pad = [None] * (nslots - len(args))

            def call(rt, L):
                return bodies[name](rt, [a(rt, L) for a in args] + pad)
            return once(call) if self.consts.call_is_constant(e) else call
        if kind[0] == "zone":
            return self._zone_call(e, kind[1], [self.expr(a) for a in kind[2]])
        if kind[0] == "prim":
            return B.compile_primitive(self, e, kind[2])
        raise AssertionError(kind)  # pragma: no cover

    def _formulas(self, field: str):
        """Per card, a compiled formula for this field, or None when no card has one."""
        cache = self.__dict__.setdefault("_formula_cache", {})
        if field in cache:
            return cache[field]
        table = [None] * len(self.prog.card_defs)
        found = False
        for i, cd in enumerate(self.prog.card_defs):
            value = cd.fields.get(field)
            if isinstance(value, Formula):
                found = True
                fn = self.expr(value.expr)
                size = max(value.nslots, 2)
                owners = self.prog.zone_owner

                def run(rt, c, fn=fn, size=size):
                    L = [None] * size
                    L[0] = c
                    L[1] = owners[rt.st.where[c]]
                    return fn(rt, L)
                table[i] = run
        cache[field] = table if found else None
        return cache[field]

    def _zone_call(self, e, name: str, args: list):
        """`hand(p)`, `column(i)`, `cell(col, row)`, `slot(p, i)` -> a zone index, bounds checked."""
        info = next(z for z in self.prog.zones if z.name == name)
        base, size, dims = info.base, info.size, info.dims
        span = e.span
        per_player = info.per_player

        def zone(rt, L):
            values = [a(rt, L) for a in args]
            if any(v is None for v in values):
                raise RulesRuntimeError(f"zone `{name}` of none", span, None, "R008")
            k = 0
            if per_player:
                k = values[0] * size
                values = values[1:]
            if len(dims) == 1:
                if not 0 <= values[0] < dims[0]:
                    raise RulesRuntimeError(f"`{name}({values[0]})` does not exist: indexes are 0 to {dims[0] - 1}",
                                            span, None, "R009")
                k += values[0]
            elif len(dims) == 2:
                col, row = values
                if not (0 <= col < dims[0] and 0 <= row < dims[1]):
                    raise RulesRuntimeError(f"`{name}({col}, {row})` does not exist: the grid is {dims[0]} x "
                                            f"{dims[1]} (from 0)", span, None, "R009")
                k += row * dims[0] + col
            return base + k
        if per_player and not dims:
            p = args[0]

            def player_zone(rt, L):
                who = p(rt, L)
                if who is None:
                    raise RulesRuntimeError(f"zone `{name}` of none", span, None, "R008")
                return base + who
            return player_zone
        return zone

    def _default(self, v):
        """A variable's default, evaluated when a game starts: outside the VM loop, so it
        turns its own failures (endless recursion, say) into the rules' errors."""
        fn = self.expr(v.default)
        rule = f"the default of `{v.name}`"

        def default(rt, L):
            try:
                return fn(rt, L)
            except Exception as exc:
                err = as_rules_error(exc, v.default.span, rule)
                if err is exc:
                    raise
                raise err from exc
        return default

    def func_body(self, func):
        """The compiled body of a `func`, shared by every call. Each call of a function that
        can recurse counts as a step, so one that recurses exponentially meets the step limit
        like a loop does (other calls do bounded work and are not counted)."""
        bodies = self._func_bodies()
        name = func.name
        if name not in bodies:
            bodies[name] = None          # placeholder: a recursive call finds it at run time
            frame = (len(func.params), self.res.frame_sizes[func.decl])
            body = self.gen.function(func.decl.body, frame) if self.gen is not None else self._expr(func.decl.body)
            if "_recursive" not in self.__dict__:
                self._recursive = recursive_functions(self.res, self.m.funcs)
            if name not in self._recursive:
                bodies[name] = body
                return bodies
            span, rule = func.decl.span, f"function `{name}`"

            def counted(rt, L):
                rt.steps += 1
                if rt.steps > rt.max_steps:
                    rt.tick(span, rule)
                rt.depth += 1
                if rt.depth > MAX_CALL_DEPTH:
                    raise too_deep(span, rule)
                value = body(rt, L)
                rt.depth -= 1
                return value
            bodies[name] = counted
        return bodies

    def _func_bodies(self) -> dict:
        if not hasattr(self, "_bodies"):
            self._bodies = {}
        return self._bodies


def _card_fingerprint(card_ids, card_kinds, card_defs) -> str:
    """A hash of the physical cards (ids, kinds, fields): a log from other cards is refused."""
    import hashlib
    import json
    h = hashlib.sha256()
    for iid, kind, cd in zip(card_ids, card_kinds, card_defs):
        h.update(json.dumps([iid, kind, sorted((k, str(v)) for k, v in cd.fields.items())]).encode())
    return h.hexdigest()[:16]


def once(fn):
    """`fn` (a constant expression) evaluated on first use, then its value reused."""
    box = []

    def cached(rt, L):
        if box:
            return box[0]
        value = fn(rt, L)
        box.append(value)
        return value
    return cached


def memo_labels(label):
    """Wrap a decision's label maker so that each (hashable) option value is labelled once."""
    memo: dict = {}

    def labels(rt, L):
        make = None

        def lab(v):
            try:
                return memo[v]
            except KeyError:
                pass
            except TypeError:           # an unhashable value: label it every time
                return label(rt, L)(v)
            nonlocal make
            if make is None:
                make = label(rt, L)
            text = memo[v] = make(v)
            return text
        return lab
    return labels


def _dedupe(options: list) -> list:
    # Options with the same label are one choice for the player (two copies of a card).
    if len(options) < 2 or len({o.label for o in options}) == len(options):
        return options
    seen = set()
    out = []
    for o in options:
        if o.label not in seen:
            seen.add(o.label)
            out.append(o)
    return out


def _seq(fns):
    if not fns:
        return lambda rt, L: None
    if len(fns) == 1:
        return fns[0]
    if len(fns) == 2:
        f1, f2 = fns

        def seq2(rt, L):
            r = f1(rt, L)
            if r is not None:
                return r
            return f2(rt, L)
        return seq2
    fns = tuple(fns)

    def seq(rt, L):
        for f in fns:
            r = f(rt, L)
            if r is not None:
                return r
    return seq


class _Loop:
    """Pending break/continue jumps of a VM-level loop."""

    def __init__(self, head: int):
        self.head = head
        self.breaks: list[int] = []

    def close(self, cb, end: int) -> None:
        for b in self.breaks:
            cb.patch(b, end)


class _CodeBuilder:
    """Emits VM instructions for one procedure; instructions are closures `ins(rt, frame)`."""

    def __init__(self, compiler: Compiler, proc_name: str, rule: str):
        self.c = compiler
        self.proc_name = proc_name
        self.rule = rule
        proc = compiler.prog.procs.get(proc_name)
        self.base_slots = proc.nslots if proc is not None else 0
        self.ops: list = []       # [factory(targets) -> instruction, span]
        self.meta: list = []      # (kind, data) of each instruction, for the code generator
        self.targets: dict = {}
        self.extra_slots = 0
        self.exit_pc: int | None = None   # where `return` goes when the procedure has an epilogue

    def here(self) -> int:
        return len(self.ops)

    def scratch(self) -> int:
        # Scratch slots live after the checker's slots; finish() widens the frame.
        self.extra_slots += 1
        return self.base_slots + self.extra_slots - 1

    def _add(self, make, span, kind: str = "other", data: tuple = ()) -> int:
        # `kind`/`data` describe the instruction for the code generator (codegen.proc_runner).
        self.ops.append([make, span])
        self.meta.append((kind, data))
        return len(self.ops) - 1

    def patch(self, index: int, target: int) -> None:
        self.targets[index] = target

    # --- instruction kinds
    def simple(self, fn, span, loop: _Loop | None) -> None:
        index = self.here()
        if loop is not None:
            loop.breaks.append(index)     # patched to the loop's end, used on BREAK
        head = loop.head if loop is not None else None
        rule = self.rule

        def make(i, t, fix):
            nxt = i + 1
            end = t.get(i)

            exit_pc = self.exit_pc

            def ins(rt, fr):
                r = fn(rt, fr.locals)
                if r is None:
                    fr.pc = nxt
                elif r is BREAK:
                    fr.pc = end
                elif r is CONTINUE:
                    rt.tick(span, rule)     # back to the loop's head: a step, as at its end
                    fr.pc = head
                elif exit_pc is not None:
                    fr.pc = exit_pc
                else:
                    _return(rt, fr, r.value)
            return ins
        self._add(make, span, "simple", (fn, loop.head if loop is not None else None))

    def jump(self, span) -> int:
        def make(i, t, fix):
            target = t[i]

            def ins(rt, fr):
                fr.pc = target
            return ins
        return self._add(make, span, "jump", ())

    def loop_jump(self, target: int, span) -> None:
        rule = self.rule

        def make(i, t, fix):
            def ins(rt, fr):
                rt.tick(span, rule)
                fr.pc = target
            return ins
        self._add(make, span, "loop_jump", (target, rule))

    def jump_if_false(self, cond, span, node=None) -> int:
        def make(i, t, fix):
            target = t[i]
            nxt = i + 1

            def ins(rt, fr):
                fr.pc = nxt if cond(rt, fr.locals) else target
            return ins
        return self._add(make, span, "jump_if_false", (cond, node))

    def for_init(self, seq, slot: int, span, node=None) -> None:
        def make(i, t, fix):
            nxt = i + 1

            def ins(rt, fr):
                L = fr.locals
                L[slot + 2] = tuple(seq(rt, L))
                L[slot + 1] = 0
                fr.pc = nxt
            return ins
        self._add(make, span, "for_init", (seq, slot, node))

    def for_next(self, slot: int, span) -> int:
        def make(i, t, fix):
            end = t[i]
            nxt = i + 1

            def ins(rt, fr):
                L = fr.locals
                k = L[slot + 1]
                seq = L[slot + 2]
                if k >= len(seq):
                    fr.pc = end
                else:
                    L[slot] = seq[k]
                    L[slot + 1] = k + 1
                    fr.pc = nxt
            return ins
        return self._add(make, span, "for_next", (slot,))

    def secrecy(self, step: int, span) -> None:
        """Enter (+1) or leave (-1) a `simultaneous` block: decisions in it are secret."""
        def make(i, t, fix):
            nxt = i + 1

            def ins(rt, fr):
                fr.secret += step
                fr.pc = nxt
            return ins
        self._add(make, span)

    def repeat_init(self, count, slot: int, span, node=None) -> None:
        def make(i, t, fix):
            nxt = i + 1

            def ins(rt, fr):
                fr.locals[slot] = count(rt, fr.locals)
                fr.pc = nxt
            return ins
        self._add(make, span, "repeat_init", (count, slot, node))

    def repeat_next(self, slot: int, span) -> int:
        def make(i, t, fix):
            end = t[i]
            nxt = i + 1

            def ins(rt, fr):
                L = fr.locals
                if L[slot] <= 0:
                    fr.pc = end
                else:
                    L[slot] -= 1
                    fr.pc = nxt
            return ins
        return self._add(make, span, "repeat_next", (slot,))

    def call(self, proc: CompiledProc, args, slot: int, span, nodes=None) -> None:
        """Push a frame for a procedure that may pause; `nodes`: (argument nodes, parameters),
        from which the code generator writes the arguments inline."""
        def make(i, t, fix):
            nxt = i + 1
            ret = fix(slot)

            def ins(rt, fr):
                L = fr.locals
                values = [a(rt, L) for a in args]
                fr.pc = nxt
                rt.steps += 1
                if rt.steps > rt.max_steps:
                    rt.tick(span, rule_name(proc.kind, proc.name))
                if proc.body is not None and rt.breakpoint is None:
                    # A phase that never pauses (it returns nothing), with no breakpoint to
                    # stop at its entry: run it as a never-pausing procedure is run.
                    proc.direct(rt, values)
                    return
                rt.st.frames.append(Frame(proc, 0, values + [None] * (proc.nslots - len(values)), ret))
                rt.halt = True
                if rt.breakpoint is not None:
                    rt.check_breakpoint(proc)
                if rt.coverage is not None:
                    rt.covered(proc.name)
            return ins
        self._add(make, span, "call", (proc, args, slot, nodes))

    def use(self, ability, card, player, span, nodes=None) -> None:
        """Run a card's ability: at once when it never pauses, else in a frame of its own;
        `nodes` (ability, card, player) let the code generator write this inline."""
        procs = self.c.prog.procs

        def make(i, t, fix):
            nxt = i + 1

            def ins(rt, fr):
                L = fr.locals
                name = ability(rt, L)
                fr.pc = nxt
                if name is None:
                    return      # a card without this ability: nothing happens
                proc = procs[name]
                if proc.direct is not None:
                    # An ability that never pauses runs at once, without a frame.
                    proc.direct(rt, [card(rt, L), player(rt, L)])
                    return
                locals_ = [card(rt, L), player(rt, L)] + [None] * (proc.nslots - 2)
                rt.st.frames.append(Frame(proc, 0, locals_))
                rt.halt = True
                if rt.coverage is not None:
                    rt.covered(name)
            return ins
        self._add(make, span, "use", (nodes,))

    def fire(self, make_event, span) -> None:
        def make(i, t, fix):
            nxt = i + 1

            def ins(rt, fr):
                event, args = make_event(rt, fr.locals)
                fr.pc = nxt
                rt.fire(event, args)
            return ins
        self._add(make, span)

    def decide(self, build, slot: int, span, secret_done: bool = False) -> None:
        """Ask a decision; `secret_done`: `build` already made it secret inside `simultaneous`."""
        def make(i, t, fix):
            nxt = i + 1
            target = fix(slot)

            def ins(rt, fr):
                d = build(rt, fr.locals)
                fr.pc = nxt
                if not secret_done and not d.secret and _in_simultaneous(rt):
                    d = d._replace(secret=True)
                if len(d.options) == 1:
                    # The rules leave no choice: take it without asking.
                    if target >= 0:
                        fr.locals[target] = d.options[0].value
                    if rt.sink is not None:
                        forced(rt, d)
                    return
                rt.st.pending = d
                rt.st.pending_slot = target
                rt.halt = True
            return ins
        self._add(make, span, "decide", (build, slot, secret_done))

    def decide_many(self, build, work: int, slot: int, span) -> None:
        # Two instructions: reset the picks, then ask until done (the second re-runs itself).
        def make_init(i, t, fix):
            nxt = i + 1
            w = fix(work)

            def ins(rt, fr):
                fr.locals[w] = ()
                fr.pc = nxt
            return ins
        self._add(make_init, span)

        def make(i, t, fix):
            nxt = i + 1
            w = fix(work)
            target = fix(slot)

            def ins(rt, fr):
                L = fr.locals
                while True:
                    d = build(rt, L)
                    if d is None:
                        if target >= 0:
                            L[target] = L[w]
                        fr.pc = nxt
                        return
                    if len(d.options) == 1 and d.options[0].value != DONE:
                        L[w] = L[w] + (d.options[0].value,)
                        continue
                    if not d.secret and _in_simultaneous(rt):
                        d = d._replace(secret=True)
                    rt.st.pending = d
                    rt.st.pending_slot = (w, target)
                    rt.halt = True
                    return
            return ins
        self._add(make, span)

    def ret(self, value, span) -> None:
        def make(i, t, fix):
            def ins(rt, fr):
                _return(rt, fr, value(rt, fr.locals) if value is not None else None)
            return ins
        self._add(make, span, "ret" if value is None else "other")

    def finish(self):
        def fix(slot) -> int:
            return -1 if slot is None else slot
        proc = self.c.prog.procs.get(self.proc_name)
        if proc is not None:
            proc.nslots = self.base_slots + self.extra_slots
        code = [make(i, self.targets, fix) for i, (make, _) in enumerate(self.ops)]
        spans = [span for _, span in self.ops]
        if proc is not None and self.c.gen is not None:
            proc.runner = self.c.gen.proc_runner(self, code)
        return code, spans


def _value_type(list_type) -> str:
    """What a decision's options are ("card", "player", "int", ...): statistics count card choices."""
    if list_type == ZONE:
        return "card"
    if list_type.name == "list" and list_type.elem is not None:
        return list_type.elem.name
    return "any"


def choose_errors(span):
    """Raises `choose`'s errors at `span`: no player ("by") or nothing to offer ("options")."""
    def fail(what: str):
        if what == "by":
            raise RulesRuntimeError("`choose` needs a player (`by:` is none)", span, None, "R006")
        raise RulesRuntimeError("`choose` has no options to offer", span, None, "R007",
                                "check that the list is not empty first, or give a `pass:` option")
    return fail


def forced(rt, d: Decision) -> None:
    """Tell the listener that a decision with one option was taken without asking."""
    rt.sink({"type": "forced", "player": d.player + 1, "prompt": d.prompt,
             "label": d.options[0].label, "secret": d.secret})


def _in_simultaneous(rt) -> bool:
    for f in rt.st.frames:
        if f.secret:
            return True
    return False


def _return(rt, fr, value) -> None:
    frames = rt.st.frames
    frames.pop()
    rt.halt = True
    if fr.ret_slot >= 0 and frames:
        frames[-1].locals[fr.ret_slot] = value
    if rt.breakpoint is not None and fr.proc.kind == "setup":
        rt.check_breakpoint(frames[-1].proc if frames else fr.proc)


def compile_program(model, options: dict | None = None, codegen: bool | None = None) -> Program:
    """Compile a checked model with option values (defaults for those not given).

    `codegen` chooses the back end: generated Python source (the default) or plain
    closures (`RULESVM_CODEGEN=0`); both mean the same, and the test suite runs both.
    """
    import os
    values = {name: opt.default for name, opt in model.options.items()}
    values.update(options or {})
    if codegen is None:
        codegen = os.environ.get("RULESVM_CODEGEN", "1") != "0"
    return Compiler(model, values, codegen).compile()


__all__ = ["compile_program", "Compiler", "DONE", "Type", "PLAYER"]
