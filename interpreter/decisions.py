"""Decisions (checked model -> compiled program): what `choose` and `choose_many` build.

A decision instruction (see `lower.py`) calls a *build* function (rt, L) -> `Decision`: who
is asked, the prompt, the options with their labels, secrecy, help and confirmation. This
module is the one place those are built: `choose_closure` and `choose_many_closure` are the
reference (closures), and `choose_source` writes `choose`'s builder as Python source (the
options and their labels as one list comprehension) for the generator; a test runs both.
"""

from __future__ import annotations

from rulesvm.dsl import ast as A
from rulesvm.dsl.types import ANY, CARD, ZONE, elem_of

from . import errors as E
from .closures import once
from .format import formatter
from .purity import is_plain_value_type
from .state import DONE, Decision, Option, Steps


def value_type(list_type) -> str:
    """What a decision's options are ("card", "player", "int", ...): statistics count card choices."""
    if list_type == ZONE:
        return "card"
    if list_type.name == "list" and list_type.elem is not None:
        return list_type.elem.name
    return "any"


def dedupe(options: list) -> list:
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


def choose_errors(span):
    """Raises `choose`'s errors at `span`: no player ("by") or nothing to offer ("options")."""
    def fail(what: str):
        raise E.no_player("choose", span) if what == "by" else E.no_options(span)
    return fail


def _elem_type(cb, node):
    t = cb.res.types.get(node, ANY)
    return t.elem if t.name == "list" else (CARD if t == ZONE else ANY)


def fixed_labels(cb, get: dict, elem_t) -> bool:
    """Are the options plain values whose labels cannot change during a game?"""
    return is_plain_value_type(elem_t) and (get["label"] is None or cb.consts.is_constant(get["label"], frozenset()))


class _Common:
    """What both decision primitives evaluate: options, player, prompt, labels, extras."""

    def __init__(self, cb, call, args):
        self.get = get = cb.ctx.prim_args(call.func.id, args)
        self.options = cb.list_expr(get["options"])
        self.by = cb.expr(get["by"])
        self.prompt = cb.expr(get["prompt"]) if get["prompt"] is not None else (lambda rt, L: "Choose")
        elem_t = _elem_type(cb, get["options"])
        if get["label"] is not None:
            label_fn = cb.expr(get["label"])
            label = lambda rt, L: label_fn(rt, L)                                     # noqa: E731
        else:
            fmt = formatter(elem_t or ANY, cb.ctx.prog_ref)
            label = lambda rt, L: (lambda v: fmt(v, rt))                              # noqa: E731
        # The label of a plain value never changes: compute each one once.
        self.label = memo_labels(label) if fixed_labels(cb, get, elem_t) else label
        self.secret = cb.expr(get["secret"]) if get.get("secret") is not None else None
        self.help = cb.expr(get["help"]) if get.get("help") is not None else None
        self.confirm = cb.expr(get["confirm"]) if get.get("confirm") is not None else None
        self.value_type = value_type(cb.res.types.get(get["options"], ANY))
        self.steps_of = steps_maker(cb, get, elem_t, call.span) if get.get("steps") is not None else None

    def is_secret(self, rt, L) -> bool:
        return bool(self.secret(rt, L)) if self.secret is not None else False

    def finish(self, d: Decision, rt, L) -> Decision:
        extra = {}
        if self.help is not None:
            extra["help"] = str(self.help(rt, L) or "")
        if self.confirm is not None:
            extra["confirm"] = bool(self.confirm(rt, L))
        d = d._replace(**extra) if extra else d
        return d._replace(steps=self.steps_of(d.options, rt, L)) if self.steps_of is not None else d


def steps_maker(cb, get: dict, option_t, span):
    """`steps:`: the maker of a decision's `Steps` (the label of each option's picks, one per
    step) from its options; made once while the options, prompts and pick labels cannot change
    (a bot's decision then costs one identity test)."""
    prompts = cb.expr(get["steps"])
    constant = cb.consts.is_constant(get["steps"], frozenset())
    pick_t = elem_of(option_t or ANY)
    if get["step_label"] is not None:
        label_fn = cb.expr(get["step_label"])
        label = lambda rt, L: label_fn(rt, L)                                         # noqa: E731
        fixed = is_plain_value_type(pick_t) and cb.consts.is_constant(get["step_label"], frozenset())
    else:
        fmt = formatter(pick_t, cb.ctx.prog_ref)
        label = lambda rt, L: (lambda v: fmt(v, rt))                                  # noqa: E731
        fixed = is_plain_value_type(pick_t)
    if fixed:
        label = memo_labels(label)
    last: list = [None, None]       # the options the steps were last made for, and those steps

    def steps_of(options: tuple, rt, L) -> Steps:
        if fixed and constant and last[0] is options:
            return last[1]
        names = tuple(str(t) for t in prompts(rt, L))
        if fixed and last[0] is options and last[1].prompts == names:
            return last[1]
        if not names:
            raise E.bad_step_option(0, 0, None, span)
        lab = label(rt, L)
        parts = []
        for i, o in enumerate(options):
            v = o.value
            if not isinstance(v, (tuple, list)) or len(v) != len(names):
                raise E.bad_step_option(i, len(names), v, span)
            parts.append(tuple(str(lab(x)) for x in v))
        steps = Steps(names, tuple(parts), pick_t == CARD)
        if fixed:
            last[:] = [options, steps]
        return steps
    return steps_of


def reason_told_only(cb, expr) -> bool:
    """May `unavailable:`'s reason be left unmade where nobody listens (no sink: a bot's game,
    a simulation)? Only people read it (runtime.skipped), so yes, unless making it draws from
    the generator: then a game would play differently with and without a listener."""
    return not cb.consts.draws_random(expr)


def make_options(cb, c: _Common):
    """The closure building `choose`'s options (deduplicated), built once when they never change."""
    option_type = cb.res.types.get(c.get["options"], ANY)
    options, label = c.options, c.label
    if (option_type.name == "list" and fixed_labels(cb, c.get, option_type.elem)
            and cb.consts.is_constant(c.get["options"], frozenset())):
        # The same options every time (e.g. every possible plan): build them once. A tuple,
        # so that every decision shares it (tuple() of a tuple does not copy).
        return once(lambda rt, L: tuple(dedupe([Option(str(lab(v)), v) for lab in (label(rt, L),)
                                               for v in options(rt, L)])))

    def build(rt, L):
        lab = label(rt, L)
        return dedupe([Option(str(lab(v)), v) for v in options(rt, L)])
    return build


def choose_closure(cb, call, args):
    """`choose`'s builder as a closure (rt, L) -> Decision."""
    c = _Common(cb, call, args)
    options = make_options(cb, c)
    pass_label = cb.expr(c.get["pass"]) if c.get["pass"] is not None else None
    unavailable = cb.expr(c.get["unavailable"]) if c.get.get("unavailable") is not None else None
    told_only = unavailable is not None and reason_told_only(cb, c.get["unavailable"])
    fail = choose_errors(call.span)
    by, prompt = c.by, c.prompt

    def build(rt, L):
        player = by(rt, L)
        if player is None:
            fail("by")
        opts = options(rt, L)
        if not opts and unavailable is not None:
            return Decision(player, str(prompt(rt, L)), (), "choose", c.is_secret(rt, L), value_type=c.value_type,
                            reason="" if told_only and rt.sink is None else str(unavailable(rt, L)))
        pass_at = -1
        if pass_label is not None:
            text = pass_label(rt, L)
            if text is not None:
                opts = [o for o in opts if o.label != str(text)]
                opts.append(Option(str(text), None))
                pass_at = len(opts) - 1
        if not opts:
            fail("options")
        d = Decision(player, str(prompt(rt, L)), tuple(opts), "choose", c.is_secret(rt, L), pass_index=pass_at,
                     value_type=c.value_type)
        return c.finish(d, rt, L)
    return build


def choose_many_closure(cb, call, args, work: int):
    """`choose_many`'s builder: the next pick's Decision, or None when the picks are done
    (the picks so far are in slot `work`)."""
    c = _Common(cb, call, args)
    get = c.get
    lo = cb.expr(get["min"]) if get["min"] is not None else (lambda rt, L: 0)
    hi = cb.expr(get["max"]) if get["max"] is not None else (lambda rt, L: None)
    done = cb.expr(get["done"]) if get["done"] is not None else (lambda rt, L: "Done")
    span = call.span

    def build(rt, L):
        picked = L[work]
        player = c.by(rt, L)
        if player is None:
            raise E.no_player("choose_many", span)
        pool = [v for v in c.options(rt, L) if v not in picked]
        low, high = lo(rt, L), hi(rt, L)
        high = len(pool) + len(picked) if high is None else high
        if len(picked) >= high or not pool:
            if len(picked) < low:
                raise E.too_few_options(low, len(picked), span)
            return None
        lab = c.label(rt, L)
        opts = dedupe([Option(str(lab(v)), v) for v in pool])
        if len(picked) >= low:
            opts.append(Option(str(done(rt, L)), DONE))
        text = str(c.prompt(rt, L))
        if high > 1:
            text += f" ({len(picked) + 1} of {'up to ' if low < high else ''}{high})"
        return c.finish(Decision(player, text, tuple(opts), "choose_many", c.is_secret(rt, L), tuple(picked),
                                 value_type=c.value_type), rt, L)
    return build


def choose_source(gen, cb, call, args):
    """`choose`'s builder written as Python source by generator `gen`, with the closure's
    checks, order of evaluation and result; None if it cannot be written."""
    c = _Common(cb, call, args)
    option_type = cb.res.types.get(c.get["options"], ANY)
    inline_labels = not fixed_labels(cb, c.get, option_type.elem) if option_type.name == "list" else True
    with gen.writing():
        try:
            return gen.build(_choose_lines(gen, cb, call, c, inline_labels), "_d")
        except gen.Unsupported:
            return None


def _choose_lines(gen, cb, call, c: _Common, inline_labels: bool) -> str:
    tn = gen.name(tuple.__new__, "tn")     # builds a named tuple without its Python __new__
    get = c.get
    opts = f"{gen.name(make_options(cb, c), 'm')}(rt, L)"
    node, label = get["options"], get["label"]
    items = []
    if inline_labels and (label is None or isinstance(label, A.Lambda)):
        option = f"{tn}({gen.name(Option, 'O')}, "
        # Bound before the comprehension, where the options' own source may use `:=`.
        items = [f"    _s = {gen.iterable(node, hoisted=True)}"]
        seq = "_s"
        if label is None:
            fmt = gen.name(formatter(_elem_type(cb, node) or ANY, cb.ctx.prog_ref), "fmt")
            each = f"{option}(str({fmt}(_v, rt)), _v)) for _v in {seq}"
        else:
            slot = cb.res.slots[label]
            text = gen.expr(label.body)
            if not _always_text(label.body):
                text = f"str({text})"
            each = f"{option}({text}, L[{slot}])) for L[{slot}] in {seq}"
        opts = f"[{each}]"
    fail = gen.name(choose_errors(call.span), "err")
    lines = [f"    _p = {gen.expr(get['by'])}",
             f"    if _p is None: {fail}('by')",
             *items,
             f"    _o = {opts}",
             "    _i = -1"]
    if opts.startswith("["):
        # Options with the same label are one choice (two copies of a card).
        lines.append(f"    if len(_o) > 1: _o = {gen.name(dedupe, 'f')}(_o)")
    prompt = f"str({gen.expr(get['prompt'])})" if get.get("prompt") is not None else "'Choose'"
    secret = f"bool({gen.expr(get['secret'])})" if get.get("secret") is not None else "False"
    if cb.ctx.has_simultaneous:
        secret = f"{secret} or in_simultaneous(rt)"
    vt = c.value_type
    if get.get("unavailable") is not None:
        reason = f"str({gen.expr(get['unavailable'])})"
        if reason_told_only(cb, get["unavailable"]):
            reason = f"('' if rt.sink is None else {reason})"
        # Nothing to offer: nothing is asked (not even `pass`); the reason is told.
        lines.append(f"    if not _o: return {tn}({gen.name(Decision, 'D')}, (_p, {prompt}, (), 'choose', "
                     f"{secret}, (), '', False, -1, {vt!r}, None, {reason}))")
    if get.get("pass") is not None:
        lines += [f"    _t = {gen.expr(get['pass'])}",
                  "    if _t is not None:",
                  "        _t = str(_t)",
                  "        _o = [o for o in _o if o[0] != _t]",
                  f"        _o.append({tn}({gen.name(Option, 'O')}, (_t, None)))",
                  "        _i = len(_o) - 1"]
    lines.append(f"    if not _o: {fail}('options')")
    help_ = f"str({gen.expr(get['help'])} or '')" if get.get("help") is not None else "''"
    confirm = f"bool({gen.expr(get['confirm'])})" if get.get("confirm") is not None else "False"
    steps = "None"
    if c.steps_of is not None:
        lines.append("    _o = tuple(_o)")
        steps = f"{gen.name(c.steps_of, 'steps')}(_o, rt, L)"
    lines.append(f"    return {tn}({gen.name(Decision, 'D')}, (_p, {prompt}, tuple(_o), 'choose', "
                 f"{secret}, (), {help_}, {confirm}, _i, {vt!r}, {steps}, ''))")
    return "\n".join(lines) + "\n"


def _always_text(e) -> bool:
    """Is e a text in every case (never none), e.g. "{c} (face down)"?"""
    if type(e) is A.StrLit:
        return True
    if type(e) is A.IfExpr:
        return _always_text(e.then) and _always_text(e.else_)
    return False
