"""Scenario files (`*.scenario.yaml`): pin a rule down with a concrete situation.

A scenario names a game (and players, options, variants, seed), optionally scripts the
outcomes of random events (`chance:`, scripted_chance.py), lets the game run to the entry
of a phase, sets up zones and variables there, then plays scripted steps (decisions by
label or index, bots playing until a condition) and checks expectations
written in the rules language. It is loaded with line marks, so a mistake in the scenario
itself is reported at its line and column like any other diagnostic; a failed expectation
reports the expression, the values of its parts and the step. `rulesvm test` and the
pytest plugin both run scenarios through `run_scenario`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from rulesvm import api
from rulesvm.dsl import ast as A
from rulesvm.dsl.diagnostics import Diagnostic, DiagnosticError, Reporter, Span, did_you_mean
from rulesvm.dsl.loader import VariantNotFound
from rulesvm.dsl.parser import parse_expression
from rulesvm.dsl.reading import read_bytes
from rulesvm.dsl.schema import SCENARIO_SCHEMA, validate
from rulesvm.dsl.types import BOOL, CARD, PLAYER, ZONE
from rulesvm.dsl.yaml_loader import Marks, decode_text, load_yaml_file, scalar_origin
from rulesvm.interpreter import IllegalMove, RulesRuntimeError
from rulesvm.interpreter.agents import SeatView, make_agent
from rulesvm.interpreter.compiler import compile_expression
from rulesvm.interpreter.format import formatter
from rulesvm.interpreter.rng import derive

from .scripted_chance import ChanceScript, Entry, ScriptError

ACTIONS = ("note", "choose", "reject", "expect", "expect_options", "expect_options_include", "expect_options_exclude",
           "expect_zone", "expect_known", "expect_log", "expect_no_log", "expect_event", "expect_result", "expect_over",
           "expect_phase", "expect_decision", "play_until", "play_to_end")

# Steps that only read the state: they may run while an `at: start` scenario is paused.
STATE_CHECKS = frozenset({"expect", "expect_zone", "expect_known", "expect_log", "expect_no_log", "expect_event", "expect_phase",
                          "expect_over"})


class ScenarioFailure(Exception):
    """A scenario that fails. With a `code`, the scenario file itself is wrong (E044: the set-up
    or a step names something the game does not have; E045: an expression that does not parse
    or check); without one, the game does not behave as the scenario expects."""

    def __init__(self, message: str, step: int | None = None, span: Span | None = None,
                 code: str | None = None):
        self.message = message
        self.step = step
        self.span = span
        self.code = code
        super().__init__(message)

    def describe(self) -> str:
        where = f"{self.span.file}:{self.span.line}:{self.span.col}: " if self.span else ""
        kind = f"error[{self.code}]: " if self.code else ""
        step = f"step {self.step}: " if self.step is not None else ""
        return f"{where}{kind}{step}{self.message}"


class SetupError(ScenarioFailure):
    """The scenario names a card, zone, variable, seat or phase the game does not have (E044)."""

    def __init__(self, message: str, step: int | None = None, span: Span | None = None):
        super().__init__(message, step, span, "E044")


@dataclass
class ScenarioResult:
    path: str
    name: str
    passed: bool
    message: str = ""
    steps: int = 0
    # Where and why it failed, for an editor: the diagnostics of a scenario or game that does
    # not load; else the span, code (None: the game does not behave as expected) and reason.
    diagnostics: list = field(default_factory=list)
    span: Span | None = None
    code: str | None = None
    reason: str = ""


@dataclass
class _Run:
    path: str
    data: dict
    marks: Marks
    game: api.Game
    match: object = None
    events: list = field(default_factory=list)
    text: str = ""
    chance: ChanceScript | None = None      # `chance:`: scripted outcomes of random events


def load_scenario(path: str) -> tuple[dict, Marks, api.Game]:
    """Read and validate a scenario file and load its game; raises DiagnosticError."""
    data, marks, _ = load_yaml_file(path, _shown(path))
    if not isinstance(data, dict):
        raise DiagnosticError([Diagnostic("E040", "a scenario is a YAML mapping with `game` and `steps`",
                                          Span(marks.file, 1, 1))])
    diags = validate(data, SCENARIO_SCHEMA, marks, code="E040")
    steps = data.get("steps")
    for i, step in enumerate(steps if isinstance(steps, list) else []):
        if isinstance(step, dict):
            actions = [k for k in step if k in ACTIONS and k != "note"]
            if len(actions) != 1 and list(step) != ["note"]:
                diags.append(Diagnostic("E041", "a step needs exactly one action, found "
                                        + (", ".join(f"`{a}`" for a in actions) or "none"), marks.span(("steps", i)),
                                        "actions: " + ", ".join(ACTIONS)))
    if diags:
        raise DiagnosticError(diags)
    here = os.path.dirname(os.path.abspath(path))
    game_path = os.path.join(here, data["game"])
    missing = []
    if not _is_file(game_path):
        missing.append(Diagnostic("E042", f"game file not found: {_printable(data['game'])}", marks.span(("game",)),
                                  "the path is relative to the scenario file"))
    card_sets = [os.path.join(here, c) for c in data.get("card_sets", [])]
    for k, c in enumerate(card_sets):
        if not _is_file(c):
            missing.append(Diagnostic("E042", f"card set not found: {_printable(data['card_sets'][k])}",
                                      marks.span(("card_sets", k)), "the path is relative to the scenario file"))
    if missing:
        raise DiagnosticError(missing)
    try:
        game = api.load_game(game_path, card_sets, data.get("variants", []),
                             options=_option_values(data, marks, game_path))
    except VariantNotFound as exc:
        k = data["variants"].index(exc.name) if exc.name in data.get("variants", []) else None
        raise DiagnosticError([Diagnostic("E043", str(exc), marks.span(("variants", k) if k is not None
                                                                       else ("variants",)))]) from None
    except ValueError as exc:
        named = re.search(r"option `([A-Za-z_][A-Za-z0-9_]*)`", str(exc))
        where = ("options", named.group(1)) if named and named.group(1) in (data.get("options") or {}) \
            else ("options",)
        raise DiagnosticError([Diagnostic("E043", str(exc), marks.span(
            where, prefer_key=str(exc).startswith("unknown option")))]) from None
    players = data.get("players")
    lo, hi, _ = game.model.players
    if players is not None and not lo <= players <= hi:
        raise DiagnosticError([Diagnostic("E043", f"{game.name} is for {lo}" + (f" to {hi}" if hi != lo else "")
                                          + f" players, not {players}", marks.span(("players",)))])
    return data, marks, game


def _shown(path: str) -> str:
    """How a scenario's own path is shown: relative to the working directory when inside it."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def _is_file(path: str) -> bool:
    try:
        return os.path.isfile(path)
    except (ValueError, OSError):
        return False


def _printable(text) -> str:
    text = str(text)
    return text if text.isprintable() else text.encode("unicode_escape").decode("ascii")


def _option_values(data, marks, game_path) -> dict:
    return dict(data.get("options") or {})


# ---------------------------------------------------------------------- expressions

def compile_check(run: _Run, text: str, span: Span, want_bool: bool = True):
    """Parse, check and compile a rules-language expression written in the scenario.

    The expression is parsed on its own (spans index into `text`); problems are reported at
    the step's position in the scenario file.
    """
    try:
        expr = parse_expression(text, EXPR_FILE)
    except DiagnosticError as exc:
        d = exc.diagnostics[0]
        raise ScenarioFailure(f"in `{text}` (column {d.span.col}): {d.message}", None,
                              _expr_span(run, span, d.span), "E045") from None
    model = run.game.model
    reporter = Reporter()
    t, nslots = model.checker.check_standalone(expr, reporter)
    errors = [d for d in reporter.diagnostics if d.is_error]
    if errors:
        d = errors[0]
        raise ScenarioFailure(f"in `{text}`: {d.message}" + (f" ({d.hint})" if d.hint else ""), None,
                              _expr_span(run, span, d.span), "E045")
    if want_bool and t not in (BOOL,) and t.name != "any":
        raise ScenarioFailure(f"`{text}` should be true or false, but it is {t}", None,
                              _expr_span(run, span, Span(EXPR_FILE, 1, 1)), "E045")
    return expr, compile_expression(run.game.program, expr), nslots, model.resolution


EXPR_FILE = "<expectation>"


def _expr_span(run: _Run, span: Span, inner: Span) -> Span:
    """Where a position inside an expression written in the scenario lies in the file."""
    if not run.text or span.line <= 0:
        return span
    line, col, indent = scalar_origin(run.text, span)
    if inner.line <= 1:
        return Span(span.file, line, col + max(inner.col, 1) - 1)
    return Span(span.file, line + inner.line - 1, indent + max(inner.col, 1))


def _explain(run: _Run, expr, res, nslots, text: str) -> str:
    """The values of an expression's parts, for a failure message."""
    parts = []
    nodes = [expr]
    if isinstance(expr, A.Binary):
        nodes = [expr.left, expr.right]
    elif isinstance(expr, A.Unary):
        nodes = [expr.operand]
    for node in nodes:
        if isinstance(node, (A.IntLit, A.BoolLit, A.NoneLit)):
            continue
        try:
            value = compile_expression(run.game.program, node)(run.match.rt, [None] * max(nslots, 1))
            fmt = formatter(res.types.get(node, BOOL), lambda: run.game.program)
            parts.append(f"{_source_of(node, text)} = {fmt(value, run.match.rt)}")
        except Exception as exc:  # noqa: BLE001 - a part may fail on its own; say so
            parts.append(f"{_source_of(node, text)} fails: {exc}")
    return "; ".join(parts)


def _source_of(node, text: str) -> str:
    span = node.span
    lines = text.splitlines()
    if span.line == span.end_line and 1 <= span.line <= len(lines):
        return lines[span.line - 1][span.col - 1:span.end_col - 1]
    return "(expression)"


# ---------------------------------------------------------------------- set-up

def _card_ref(run: _Run, ref, used: set, path) -> tuple[int, dict]:
    prog = run.game.program
    span = run.marks.span(path)
    opts = {}
    if isinstance(ref, dict):
        opts = {k: v for k, v in ref.items() if k in ("face", "turn")}
        if "card" in ref:
            ref = ref["card"]
        else:
            wanted = {k: v for k, v in ref.items() if k not in ("face", "turn")}
            kind = wanted.pop("kind", None)
            for c in range(len(prog.card_ids)):
                if c in used:
                    continue
                if kind is not None and prog.card_kinds[c] != kind:
                    continue
                fields = prog.card_defs[c].fields
                if all(fields.get(k) == v for k, v in wanted.items()):
                    return c, opts
            raise SetupError(f"no unused card matches {ref}", None, span)
    if not isinstance(ref, str):
        raise SetupError(f"a card is given by its id, or by kind and fields; found `{ref}`", None, span)
    if ref in prog.card_by_id:
        c = prog.card_by_id[ref]
        if c in used:
            raise SetupError(f"card `{ref}` is placed twice in the set-up", None, span)
        return c, opts
    copies = [i for i, cd in enumerate(prog.card_defs) if cd.id == ref]
    free = [c for c in copies if c not in used]
    if free:
        return free[0], opts
    if copies:
        raise SetupError(f"all {len(copies)} copies of `{ref}` are already placed", None, span)
    raise SetupError(f"no card has the id `{ref}`" + _hint(ref, list(prog.card_by_id)), None, span)


def zone_ref(run: _Run, text: str, span: Span) -> int:
    """`hand[2]` (player 2's hand), `recruit`, `column(3)`, `grid(1,2)`, `slot[1](0)`."""
    prog = run.game.program
    m = re.fullmatch(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\[\s*(\d+)\s*\])?\s*(?:\(([\d\s,]*)\))?\s*", text)
    if m is None:
        raise SetupError(f"`{text}` is not a zone: write `name`, `name[SEAT]`, `name(INDEX)` or "
                              "`name[SEAT](INDEX)`", None, span)
    name, seat, index = m.group(1), m.group(2), m.group(3)
    names = [z.name for z in prog.zones]
    info = next((z for z in prog.zones if z.name == name), None)
    if info is None:
        raise SetupError(f"no zone `{name}`" + _hint(name, names), None, span)
    if info.per_player and seat is None:
        raise SetupError(f"zone `{name}` is per player: write `{name}[SEAT]`, e.g. `{name}[1]`", None, span)
    if not info.per_player and seat is not None:
        raise SetupError(f"zone `{name}` is shared: write `{name}` without a seat", None, span)
    p = 0
    if seat is not None:
        p = int(seat) - 1
        if not 0 <= p < run.match.players:
            raise SetupError(f"seat {seat} does not exist in a {run.match.players}-player game", None, span)
    idx = [int(x) for x in index.split(",")] if index else []
    if len(idx) != len(info.dims):
        want = {0: "no index", 1: "one index, e.g. `(0)`", 2: "a column and a row, e.g. `(0,1)`"}[len(info.dims)]
        raise SetupError(f"zone `{name}` takes {want}", None, span)
    for k, d in zip(idx, info.dims):
        if not 0 <= k < d:
            raise SetupError(f"`{text}`: index {k} is outside 0..{d - 1}", None, span)
    return prog.zone_index(name, p, *idx)


def _typed_value(run: _Run, var, value, span):
    prog = run.game.program
    t = var.type
    if value is None:
        return None
    if t == PLAYER:
        if not isinstance(value, int) or not 1 <= value <= run.match.players:
            raise SetupError(f"`{var.name}` is a player: give a seat number 1-{run.match.players}", None, span)
        return value - 1
    if t == CARD:
        if value not in prog.card_by_id:
            raise SetupError(f"`{var.name}` is a card: no card has the id `{value}`", None, span)
        return prog.card_by_id[value]
    if t == ZONE:
        return zone_ref(run, value, span)
    simple = {"int": int, "bool": bool, "text": str}.get(str(t))
    if simple is not None and (not isinstance(value, simple) or (simple is int and isinstance(value, bool))):
        raise SetupError(f"`{var.name}` is {t}, not `{value}`", None, span)
    if isinstance(value, list):
        return tuple(value)
    return value


def apply_setup(run: _Run) -> None:
    setup = run.data.get("setup") or {}
    match, prog, model = run.match, run.game.program, run.game.model
    used: set = set()
    for zname, refs in (setup.get("zones") or {}).items():
        path = ("setup", "zones", zname)
        zone = zone_ref(run, zname, run.marks.span(path, prefer_key=True))
        if not isinstance(refs, list):
            raise SetupError("a zone's set-up is a list of cards (bottom or left first)", None,
                                  run.marks.span(path))
        cards, faces, turns = [], {}, {}
        info = prog.zone_info[zone]
        for i, ref in enumerate(refs):
            c, opts = _card_ref(run, ref, used, path + (i,))
            used.add(c)
            cards.append(c)
            if opts.get("face", "up") not in ("up", "down"):
                raise SetupError(f"`face:` is `up` or `down`, not `{opts['face']}`", None,
                                 run.marks.span(path + (i, "face")))
            turn = opts.get("turn", 0)
            if not isinstance(turn, int) or isinstance(turn, bool) or turn % 90:
                raise SetupError(f"`turn:` is 0, 90, 180 or 270, not `{turn}`", None,
                                 run.marks.span(path + (i, "turn")))
            # Unless told otherwise, cards lie face up where they can be seen, face down in hidden zones.
            faces[c] = opts["face"] == "up" if "face" in opts else \
                (info.arrive_face == "up" if info.arrive_face else not info.hidden)
            turns[c] = turn % 360                    # placed cards lie straight unless told otherwise
        match.place(zone, cards, faces, turns)
    for name, value in (setup.get("vars") or {}).items():
        span = run.marks.span(("setup", "vars", name), prefer_key=True)
        var = model.vars.get(name)
        if var is None or var.scope != "global":
            raise SetupError(f"no global variable `{name}`" + _hint(name, [v.name for v in model.vars_of("global")]),
                                  None, span)
        match.state.gvars[var.index] = _typed_value(run, var, value, run.marks.span(("setup", "vars", name)))
    for name, per_seat in (setup.get("player_vars") or {}).items():
        span = run.marks.span(("setup", "player_vars", name), prefer_key=True)
        var = model.vars.get(name)
        if var is None or var.scope != "player":
            raise SetupError(f"no per-player variable `{name}`" +
                                  _hint(name, [v.name for v in model.vars_of("player")]), None, span)
        if not isinstance(per_seat, dict):
            raise SetupError(f"`{name}` is per player: give a mapping of seat numbers to values, "
                             "e.g. `{1: 5, 2: 0}`", None, run.marks.span(("setup", "player_vars", name)))
        for seat, value in per_seat.items():
            sspan = run.marks.span(("setup", "player_vars", name, seat), prefer_key=True)
            if not isinstance(seat, int) or isinstance(seat, bool) or not 1 <= seat <= match.players:
                raise SetupError(f"seat {seat} does not exist in a {match.players}-player game", None, sspan)
            match.state.pvars[var.index][seat - 1] = _typed_value(
                run, var, value, run.marks.span(("setup", "player_vars", name, seat)))
    for name, per_card in (setup.get("card_vars") or {}).items():
        span = run.marks.span(("setup", "card_vars", name), prefer_key=True)
        var = model.vars.get(name)
        if var is None or var.scope != "card":
            raise SetupError(f"no per-card variable `{name}`", None, span)
        if not isinstance(per_card, dict):
            raise SetupError(f"`{name}` is per card: give a mapping of card ids to values", None,
                             run.marks.span(("setup", "card_vars", name)))
        for ref, value in per_card.items():
            c, _ = _card_ref(run, ref, set(), ("setup", "card_vars", name, ref))
            match.state.cvars[var.index][c] = _typed_value(run, var, value, span)
    if setup and match.state.pending is not None:
        match.reoffer()


def _hint(name, names) -> str:
    h = did_you_mean(name, names)
    return f" ({h})" if h else ""


# ---------------------------------------------------------------------- scripted randomness

def _new_match(run: _Run, **kw):
    """Start the scenario's game; with `chance:`, every random event is a chance decision
    that the script answers (testing/scripted_chance.py)."""
    data = run.data
    run.match = api.new_game(run.game, data.get("players"), data.get("seed", 0), sink=run.events.append,
                             debug=True, explicit_chance="chance" in data, **kw)
    if "chance" in data and run.chance is None:
        run.chance = _chance_script(run)
    _settle(run)


def _chance_script(run: _Run) -> ChanceScript:
    spec = run.data["chance"] or {}
    prog = run.game.program
    queues = {kind: [Entry(v, run.marks.span(("chance", kind, i))) for i, v in enumerate(spec.get(kind) or [])]
              for kind in ("rolls", "picks", "shuffle_into")}
    shuffles, keys = {}, {}
    for zname, cards in (spec.get("shuffles") or {}).items():
        kspan = run.marks.span(("chance", "shuffles", zname), prefer_key=True)
        name = prog.zone_names[zone_ref(run, str(zname), kspan)]
        entries = []
        for i, ref in enumerate(cards):
            span = run.marks.span(("chance", "shuffles", zname, i))
            if not any(ref in (cid, cid.split("#")[0], prog.card_names[c]) for c, cid in enumerate(prog.card_ids)):
                raise SetupError(f"no card has the id `{ref}`" + _hint(str(ref), list(prog.card_by_id)), None, span)
            entries.append(Entry(ref, span))
        shuffles[name], keys[name] = entries, kspan
    return ChanceScript(queues, shuffles, bool(spec.get("strict", False)), run.marks.span(("chance", "strict")),
                        shuffle_keys=keys)


def _settle(run: _Run) -> None:
    """Answer the random events due now from the script (or the seed)."""
    if run.chance is None:
        return
    try:
        run.chance.settle(run.match)
    except ScriptError as exc:
        raise ScenarioFailure(exc.message, None, exc.span) from None


# ---------------------------------------------------------------------- steps

def _option_index(run: _Run, which, span) -> int:
    options = run.match.legal_options
    if isinstance(which, int):
        if not 1 <= which <= len(options):
            raise IllegalMove(f"option {which} does not exist; there are {len(options)}")
        return which - 1
    for i, o in enumerate(options):
        if o.label == which:
            return i
    raise IllegalMove(f"'{which}' is not a legal option; legal are: " + ", ".join(o.label for o in options))


def _bots(run: _Run) -> dict:
    seed = run.data.get("seed", 0)
    return {s: make_agent("random", derive(seed, 5000 + s)) for s in range(run.match.players)}


def _play_until(run: _Run, cond, limit: int, span) -> None:
    agents = _bots(run)
    match = run.match
    made = 0
    while not match.is_over:
        if cond is not None and cond():
            return
        if made >= limit:
            raise ScenarioFailure(f"the condition did not become true within {limit} decisions", None, span)
        seat = match.current_player
        match.apply(agents[seat].choose(SeatView(match, seat)))
        _settle(run)
        made += 1
    if cond is not None and not cond():
        raise ScenarioFailure("the game ended before the condition became true", None, span)


def _answer(run: _Run, step: dict, path: tuple, action: str, aspan) -> None:
    """`choose` an option (it must be legal), or `reject` one (it must not be)."""
    match = run.match
    if match.decision is None:
        raise ScenarioFailure("no decision is pending" + (" (the game is over)" if match.is_over else ""),
                              None, aspan)
    if "by" in step and match.current_player != step["by"] - 1:
        raise ScenarioFailure(f"the decision is Player {match.current_player + 1}'s, not Player {step['by']}'s "
                              f"(prompt: {match.decision.prompt})", None, run.marks.span(path + ("by",)))
    if action == "choose":
        try:
            match.apply(_option_index(run, step["choose"], aspan))
        except IllegalMove as exc:
            raise ScenarioFailure(str(exc), None, aspan) from None
        return
    try:
        i = _option_index(run, step["reject"], aspan)
    except IllegalMove as exc:
        if "error" in step and step["error"] not in str(exc):
            raise ScenarioFailure(f"rejected, but with `{exc}`, not `{step['error']}`", None, aspan) from None
        return
    raise ScenarioFailure(f"`{match.legal_options[i].label}` was accepted as a legal option, "
                          "but the scenario expects it to be rejected", None, aspan)


def _expect(run: _Run, step: dict, path: tuple) -> None:
    """`expect`: each expression (one or a list) is true now."""
    match = run.match
    texts = step["expect"] if isinstance(step["expect"], list) else [step["expect"]]
    for k, text in enumerate(texts):
        espan = run.marks.span(path + ("expect",) + ((k,) if isinstance(step["expect"], list) else ()))
        expr, fn, nslots, res = compile_check(run, text, espan)
        try:
            value = fn(match.rt, [None] * max(nslots, 1))
        except RulesRuntimeError as exc:
            raise ScenarioFailure(f"`{text}` fails: {exc.message}", None, espan) from None
        if not value:
            raise ScenarioFailure(f"expected `{text}`, but it is false: "
                                  f"{_explain(run, expr, res, nslots, text)}", None, espan)


def _step(run: _Run, index: int, step: dict) -> None:
    _do_step(run, index, step)
    _settle(run)


def _do_step(run: _Run, index: int, step: dict) -> None:
    match = run.match
    path = ("steps", index)
    actions = [k for k in step if k in ACTIONS and k != "note"]
    if not actions:
        return                              # a note: nothing to do
    action = actions[0]
    aspan = run.marks.span(path + (action,))
    if match.paused and action not in STATE_CHECKS:
        match.resume()                      # `at: start`: the game block begins with the first move
        _settle(run)
    if action in ("choose", "reject"):
        return _answer(run, step, path, action, aspan)
    if action == "expect":
        return _expect(run, step, path)
    if action.startswith("expect_options"):
        labels = [o.label for o in match.legal_options]
        want = step[action]
        if action == "expect_options" and labels != want:
            raise ScenarioFailure(f"options are {labels}, expected {want}", None, aspan)
        if action == "expect_options_include" and not all(w in labels for w in want):
            raise ScenarioFailure(f"options are {labels}; missing {[w for w in want if w not in labels]}", None, aspan)
        if action == "expect_options_exclude" and any(w in labels for w in want):
            raise ScenarioFailure(f"options are {labels}; should not include {[w for w in want if w in labels]}",
                                  None, aspan)
        return
    if action == "expect_zone":
        spec = step["expect_zone"]
        zone = zone_ref(run, spec["zone"], run.marks.span(path + ("expect_zone", "zone")))
        prog = run.game.program
        actual = [prog.card_ids[c] for c in match.state.zones[zone]]
        if "cards" in spec:
            taken: set = set()
            want = [_match_id(prog, w, actual, taken) for w in spec["cards"]]
            if actual != want:
                raise ScenarioFailure(f"{spec['zone']} holds {actual}, expected {spec['cards']}", None, aspan)
        if "count" in spec and len(actual) != spec["count"]:
            raise ScenarioFailure(f"{spec['zone']} holds {len(actual)} card(s), expected {spec['count']}", None, aspan)
        for w in spec.get("contains", []):
            if not any(a == w or a.split("#")[0] == w for a in actual):
                raise ScenarioFailure(f"{spec['zone']} holds {actual}, which does not contain {w}", None, aspan)
        return
    if action == "expect_known":
        spec = step["expect_known"]
        seat = spec["seat"]
        if seat > match.players:
            raise ScenarioFailure(f"seat {seat} does not exist: the game has {match.players} players", None, aspan)
        known = [k["id"] for k in match.observation(seat - 1).get("known", [])]
        if "cards" in spec and sorted(known) != sorted(spec["cards"]) and \
                sorted(k.split("#")[0] for k in known) != sorted(spec["cards"]):
            raise ScenarioFailure(f"player {seat} knows {known} without seeing them, expected {spec['cards']}",
                                  None, aspan)
        for w in spec.get("contains", []):
            if not any(k == w or k.split("#")[0] == w for k in known):
                raise ScenarioFailure(f"player {seat} knows {known} without seeing them, not {w}", None, aspan)
        return
    if action in ("expect_log", "expect_no_log"):
        texts = [e["text"] for e in run.events if e["type"] in ("log", "reveal")]
        found = any(step[action] in t for t in texts)
        if action == "expect_log" and not found:
            raise ScenarioFailure(f"no log line contains `{step[action]}`; the log so far ends with: "
                                  + " | ".join(texts[-5:]), None, aspan)
        if action == "expect_no_log" and found:
            raise ScenarioFailure(f"a log line contains `{step[action]}`", None, aspan)
        return
    if action == "expect_event":
        want = step["expect_event"]
        if not any(all(e.get(k) == v for k, v in want.items()) for e in run.events):
            raise ScenarioFailure(f"no event matches {want}", None, aspan)
        return
    if action == "expect_result":
        if not match.is_over:
            raise ScenarioFailure("the game is not over", None, aspan)
        for key, value in step["expect_result"].items():
            if match.result.get(key) != value:
                raise ScenarioFailure(f"result {key} is {match.result.get(key)}, expected {value}", None,
                                      run.marks.span(path + ("expect_result", key)))
        return
    if action == "expect_over":
        if match.is_over != step["expect_over"]:
            raise ScenarioFailure("the game is " + ("over" if match.is_over else "not over"), None, aspan)
        return
    if action == "expect_phase":
        phases = match.current_phases()
        if step["expect_phase"] not in phases:
            raise ScenarioFailure(f"the game is in {phases or 'no phase'}, not in `{step['expect_phase']}`", None, aspan)
        return
    if action == "expect_decision":
        spec = step["expect_decision"]
        d = match.decision
        if d is None:
            raise ScenarioFailure("no decision is pending", None, aspan)
        if "by" in spec and d.player + 1 != spec["by"]:
            raise ScenarioFailure(f"the decision is Player {d.player + 1}'s, expected Player {spec['by']}'s", None, aspan)
        if "prompt" in spec and spec["prompt"] not in d.prompt:
            raise ScenarioFailure(f"the prompt is `{d.prompt}`, expected it to contain `{spec['prompt']}`", None, aspan)
        return
    if action == "play_until":
        _, fn, nslots, _ = compile_check(run, step["play_until"], aspan)
        cond = lambda: fn(match.rt, [None] * max(nslots, 1))
        _play_until(run, cond, step.get("max_decisions", 100_000), aspan)
        return
    if action == "play_to_end":
        _play_until(run, None, step.get("max_decisions", 100_000), aspan)
        return
    raise AssertionError(action)  # pragma: no cover


def _match_id(prog, want: str, actual: list, taken: set) -> str:
    """Let a scenario name a copy by its card id: `black_knight_3` matches `black_knight_3#2`
    (each copy once, in the zone's order)."""
    if want in prog.card_by_id:
        taken.add(want)
        return want
    for a in actual:
        if a.split("#")[0] == want and a not in taken:
            taken.add(a)
            return a
    return want


def run_scenario(path: str) -> ScenarioResult:
    """Run one scenario file; never raises for a failing scenario (see the result)."""
    name = os.path.basename(path)
    try:
        data, marks, game = load_scenario(path)
    except DiagnosticError as exc:
        d = exc.diagnostics[0]
        return ScenarioResult(path, name, False, f"{d.span.file}:{d.span.line}:{d.span.col}: error[{d.code}]: "
                              f"{d.message}" + (f" (hint: {d.hint})" if d.hint else ""),
                              diagnostics=list(exc.diagnostics))
    name = data.get("name", name)
    run = _Run(path, data, marks, game)
    try:
        run.text = decode_text(read_bytes(path), marks.file)     # the editor's text in `rulesvm lsp`
    except (OSError, DiagnosticError):
        run.text = ""
    step_no = None
    try:
        at = data.get("at")
        try:
            if at is not None or data.get("setup"):
                _reach(run, None if at == "start" else at)
                apply_setup(run)
                if at != "start":
                    run.match.resume()      # `at: start` stays paused until a step needs the game to go on
                    _settle(run)
            else:
                _new_match(run)
        except ValueError as exc:
            raise ScenarioFailure(str(exc), None, marks.span(("players",))) from None
        for i, step in enumerate(data["steps"]):
            step_no = i + 1
            _step(run, i, step)
        unused = run.chance.leftover() if run.chance is not None else None
        if unused is not None:
            step_no = None
            raise ScenarioFailure(unused.message, None, unused.span)
    except ScenarioFailure as exc:
        if exc.step is None:
            exc.step = step_no
        where = exc.span or (marks.span(("steps", step_no - 1)) if step_no else marks.span(()))
        return ScenarioResult(path, name, False, exc.describe(), step_no or 0, span=where, code=exc.code,
                              reason=(f"step {exc.step}: " if exc.step is not None else "") + exc.message)
    except RulesRuntimeError as exc:
        where = marks.span(("steps", step_no - 1)) if step_no else marks.span(())
        reason = (f"step {step_no}: " if step_no else "") + exc.describe()
        return ScenarioResult(path, name, False, f"{where.file}:{where.line}:{where.col}: " + reason, step_no or 0,
                              span=where, reason=reason)
    return ScenarioResult(path, name, True, "", len(data["steps"]))


def _reach(run: _Run, at: dict | None) -> None:
    """Restart the game so that it stops where the set-up applies."""
    game = run.game
    run.events.clear()
    if at is None:
        _new_match(run, breakpoint=("game", 1))
        return
    phase = at["phase"]
    model = game.model
    if phase not in model.procs or model.procs[phase].kind != "phase":
        phases = [p.name for p in model.procs.values() if p.kind == "phase"]
        raise SetupError(f"no phase `{phase}`" + _hint(phase, phases), None, run.marks.span(("at", "phase")))
    _new_match(run, breakpoint=(phase, at.get("occurrence", 1)))
    agents = _bots(run)
    match = run.match
    while not match.paused:
        if match.is_over:
            raise ScenarioFailure(f"the game ended before phase `{phase}` began", None, run.marks.span(("at",)))
        seat = match.current_player
        match.apply(agents[seat].choose(SeatView(match, seat)))
        _settle(run)
    run.events.clear()


def find_scenarios(paths: list[str]) -> list[str]:
    out = []
    for p in paths:
        if os.path.isdir(p):
            for root, _, files in sorted(os.walk(p)):
                out.extend(os.path.join(root, f) for f in sorted(files) if f.endswith(".scenario.yaml"))
        else:
            out.append(p)
    return out
