"""The public API the CLI (and any Python user) calls; it drives dsl/ and interpreter/.

    game = load_game("games/giant_king.yaml", options={"laps": 3})
    match = new_game(game, players=4, seed=7)
    result = play(match, make_agents({0: "greedy"}, seed=7, seats=range(4)))

`load_game` runs the front end (YAML, rules, card data -> checked model) and compiles the
program once; `new_game` starts a `Match`; `make_agents` seats the bots; `play` asks agents
until the game ends. Validation and the `info` summary live here too, so every front end
shares one behaviour; save files are `rulesvm.saves`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from rulesvm.dsl.diagnostics import Diagnostic, DiagnosticError, Span
from rulesvm.dsl.files import CheckSession, GameBudget
from rulesvm.dsl.loader import check_option, display_path, hand_problems, load_game_model, option_value
from rulesvm.dsl.schema import HAND_SCHEMA, validate
from rulesvm.dsl.variants import load_variant
from rulesvm.dsl.yaml_loader import load_yaml_file
from rulesvm.interpreter import Match, compile_program
from rulesvm.interpreter.agents import SeatView, make_agent
from rulesvm.interpreter.knowledge import knows
from rulesvm.interpreter.rng import derive
from rulesvm.interpreter.state import CHANCE


@dataclass
class Game:
    """A loaded, checked and compiled game, with the choices it was loaded with."""
    path: str
    model: object
    program: object
    options: dict = field(default_factory=dict)        # overrides given by the user
    card_sets: list = field(default_factory=list)
    variants: list = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.model.name.get("en", self.model.id)

    @property
    def warnings(self) -> list:
        return getattr(self.model, "warnings", [])


def parse_option_overrides(model, pairs: list[str]) -> dict:
    """`["laps=3"]` -> {"laps": 3}, typed by the option declarations; ValueError on mistakes."""
    values = {}
    for pair in pairs:
        name, eq, text = pair.partition("=")
        if not eq:
            raise ValueError(f"`--set {pair}`: write NAME=VALUE")
        values[name.strip()] = option_value(model, name.strip(), text.strip())
    return values


def load_game(path: str, card_sets=(), variants=(), options: dict | None = None,
              set_pairs: list[str] = ()) -> Game:
    """Load, check and compile a game. Raises DiagnosticError (file problems) or ValueError (options)."""
    model = load_game_model(path, list(card_sets), list(variants))
    values = dict(model.option_overrides)
    if options is not None and not isinstance(options, dict):
        raise ValueError(f"options are given as a mapping of names to values, not {options!r}")
    values.update({name: check_option(model, name, value) for name, value in (options or {}).items()})
    values.update(parse_option_overrides(model, list(set_pairs)))
    program = compile_program(model, values)
    return Game(os.path.abspath(path), model, program, values, list(card_sets), list(variants))


def new_game(game: Game, players: int | None = None, seed: int = 0, sink=None, debug: bool = False,
             max_steps: int | None = None, breakpoint: tuple | None = None, hands: dict | None = None,
             coverage: dict | None = None, on_move=None, knowledge: bool = True,
             explicit_chance: bool = False) -> Match:
    """Start a game; raises ValueError for a player count the game does not allow.

    `breakpoint=("name", n)` stops the rules at the n-th entry of phase `name`
    (`("game", 1)`: right after setup), before any decision there; see `Match.resume`.
    `hands` maps 0-based seats to the card ids they bring (games with `hands:`; see `read_hand`).
    `on_move(card, from_zone, to_zone)` (ints: `game.program.card_ids[card]`, `zone_names[zone]`)
    watches every card move, without the cost of a `sink` of every event.
    `knowledge=False`: keep no record of what each seat knows (docs/language.md#what-a-seat-knows),
    for games whose agents never read it (`Agent.reads_knowledge`): observations then show
    only what each seat sees.
    `explicit_chance=True`: every random event (a die roll, a random pick, each card of a
    shuffle) is a chance decision (`match.is_chance()`, `chance_outcomes()`, `sample_chance()`)
    answered with `apply` like a player's (docs/architecture.md#explicit-chance).
    """
    return Match(game.program, players, seed, sink, debug, max_steps, breakpoint=breakpoint, hands=hands,
                 coverage=coverage, on_move=on_move, knowledge=knowledge, explicit_chance=explicit_chance)


def read_hand(game: Game, text: str) -> list[str]:
    """A seat's hand from `--hand SEAT=...`: a preset name of the game, or a YAML file.

    Raises DiagnosticError (positions in the hand file) or ValueError (no such preset/file).
    """
    spec = game.model.hands
    if not spec:
        raise ValueError(f"{game.name} has no hands to choose (its game file declares no `hands:`)")
    if text in spec["presets"]:
        return list(spec["presets"][text])
    if not os.path.isfile(text):
        raise ValueError(f"`{text}` is neither a hand of this game ({', '.join(spec['presets']) or 'none'}) "
                         "nor a file")
    data, marks, _ = load_yaml_file(text, display_path(text))
    diags = validate(data, HAND_SCHEMA, marks, code="E076")
    if diags:
        raise DiagnosticError(diags)
    ids, path = (data, ()) if isinstance(data, list) else (data["cards"], ("cards",))
    counts = {c.id: c.count for c in game.model.cards}
    diags = hand_problems(ids, spec, counts, marks, path)
    if diags:
        raise DiagnosticError(diags)
    return list(ids)


def agent_seed(seed: int, seat: int) -> int:
    """The seed of the bot at a seat of the game seeded `seed`: every front end (terminal,
    web table, simulation, resumed save) seeds bots this way, so a seed replays a game."""
    return derive(seed, 1000 + seat)


def make_agents(specs: dict, seed: int, seats=None) -> dict:
    """A bot for each of `seats` (default: the seats `specs` names), seeded by `agent_seed`:
    `specs` maps 0-based seat -> agent spec; a seat it does not name plays `random`.
    Raises AgentSpecError for a bad spec (the first, in seat order)."""
    return {seat: make_agent(specs.get(seat, "random"), agent_seed(seed, seat))
            for seat in (specs if seats is None else seats)}


def default_agents(match: Match, specs: dict | None = None, seed: int = 0) -> dict:
    """An agent per seat: `specs` maps 0-based seat -> agent spec; other seats play `random`."""
    return make_agents(specs or {}, seed, range(match.players))


class UndoRefused(Exception):
    """An undo that would let a player choose again knowing what they were not meant to know."""


class UndoHistory:
    """Snapshots taken before each answered decision, so a player can take moves back.

    Undo restores a snapshot (and the bots' generators); it never replays the game. It never
    reveals either: a seat may not step back over information that reached it since its
    decision (a card it could not see then and has seen since: a draw, a reveal; another
    seat's secret choice), unless the table allows any undo (`any_undo`, `--undo any`).
    """

    def __init__(self, agents: dict, any_undo: bool = False):
        self.agents = agents
        self.any_undo = any_undo
        self.entries: list = []          # (snapshot, seat, the agents' states)
        self.knowledge: list = []        # per entry: (the cards each seat could see then, a secret decision?)

    def record(self, match: Match, seat: int) -> None:
        self.entries.append((match.snapshot(), seat, {s: a.get_state() for s, a in self.agents.items()}))
        d = match.decision
        self.knowledge.append(([visible_cards(match, s) for s in range(match.players)], bool(d and d.secret)))

    def refusal(self, match: Match, seat: int) -> str | None:
        """Why `seat` may not take back its last decision now, or None."""
        i = self._last_of(seat)
        if i is None or self.any_undo:
            return None
        then = self.knowledge[i][0][seat]
        later = [k[0][seat] for k in self.knowledge[i + 1:]] + [visible_cards(match, seat)]
        if any(seen - then for seen in later):
            return "you have seen a card since that decision: taking it back would let you choose knowing it"
        if any(self.entries[j][1] != seat and self.knowledge[j][1] for j in range(i + 1, len(self.entries))):
            return "another player has made a secret choice since that decision"
        return None

    def _last_of(self, seat: int) -> int | None:
        for i in range(len(self.entries) - 1, -1, -1):
            if self.entries[i][1] == seat:
                return i
        return None

    def undo(self, match: Match, seat: int) -> int | None:
        """Take back `seat`'s last decision and all decisions after it; returns how many (None:
        nothing to take back). Raises UndoRefused when it would reveal (see `refusal`)."""
        reason = self.refusal(match, seat)
        if reason is not None:
            raise UndoRefused(reason)
        for i in range(len(self.entries) - 1, -1, -1):
            snap, who, states = self.entries[i]
            if who == seat:
                undone = match.decisions_made - snap.decisions
                match.restore(snap)
                for s, state in states.items():
                    if state is not None:
                        self.agents[s].set_state(state)
                del self.entries[i:]
                del self.knowledge[i:]
                if match.sink is not None:
                    match.sink({"type": "undo", "to": snap.decisions, "player": seat + 1})
                return undone
        return None


class Undo:
    """The command an agent returns to take back its seat's last decision."""

    def __init__(self, history: UndoHistory, seat: int):
        self.history = history
        self.seat = seat
        self.undone = None

    def apply(self, match: Match) -> None:
        self.undone = self.history.undo(match, self.seat)


def play(match: Match, agents: dict, on_decision=None, history: UndoHistory | None = None) -> dict | None:
    """Ask the agents until the game is over; returns the result.

    An agent may return an int (the option index) or an object with `apply(match)` (a
    command such as `Undo`), which the loop runs instead of a move. With explicit chance,
    the agent at `CHANCE` (-1) answers random events, if there is one; else they are drawn
    from the game's generator (`Match.sample_chance`: the seed's game).
    """
    while not match.is_over:
        seat = match.current_player
        if seat == CHANCE and CHANCE not in agents:
            match.sample_chance()
            continue
        choice = agents[seat].choose(SeatView(match, seat))
        if hasattr(choice, "apply"):
            choice.apply(match)
            continue
        if on_decision is not None:
            on_decision(match, seat, choice)
        if history is not None and seat != CHANCE:
            history.record(match, seat)
        match.apply(choice)
    return match.result


# ---------------------------------------------------------------------- validation and info

def validate_game(path: str, card_sets=(), variants=(), session: CheckSession | None = None) -> list[Diagnostic]:
    """Every diagnostic (errors and warnings) for one game file (with card sets and variants);
    checks sharing a `session` read at most MAX_CHECK_BYTES and MAX_CHECK_VALUES together
    (docs/security.md)."""
    try:
        model = load_game_model(path, list(card_sets), list(variants), session)
    except DiagnosticError as exc:
        return exc.diagnostics
    return list(getattr(model, "warnings", []))


def validate_path(path: str, card_sets=()) -> list[Diagnostic]:
    """Validate a game file (and each variant it lists, applied alone), or a variant file
    (applied to the game its `base:` names)."""
    if path.endswith(".rules"):
        return [Diagnostic("E010", "this is a rules file; rulesvm checks a game through its YAML game file",
                           Span(display_path(path), 1, 1), "validate the game file whose `rules:` names this file")]
    session = CheckSession()            # the game's files are read again for each variant
    try:
        data, _, _ = load_yaml_file(path, display_path(path), GameBudget(session))
    except DiagnosticError as exc:
        return exc.diagnostics
    if isinstance(data, dict) and "variant" in data:
        try:
            spec = load_variant(path, display_path(path))
        except DiagnosticError as exc:
            return exc.diagnostics
        base = spec.data.get("base")
        if not base:
            return [Diagnostic("E066", "a variant file checked on its own needs `base:` (its game file)",
                               spec.marks.span(("variant",)), "or validate the game file that lists it")]
        game_path = os.path.join(os.path.dirname(os.path.abspath(path)), base)
        if not os.path.exists(game_path):
            return [Diagnostic("E066", f"base game not found: {base}", spec.marks.span(("base",)))]
        return validate_game(game_path, card_sets, [os.path.abspath(path)])
    diags = validate_game(path, card_sets, session=session)
    if any(d.is_error for d in diags) or not isinstance(data, dict):
        return diags
    for name in sorted((data.get("variants") or {})):
        diags.extend(d for d in validate_game(path, card_sets, [name], session) if d.is_error)
        if session.exceeded:
            break
    return diags


def variant_descriptions(game: Game) -> dict:
    """name -> description of each variant the game file lists (or the problem reading it)."""
    out = {}
    base = os.path.dirname(game.path)
    for name, rel in sorted(game.model.variants.items()):
        try:
            spec = load_variant(os.path.join(base, rel), rel)
            out[name] = spec.description.get("en", "")
        except DiagnosticError as exc:
            out[name] = f"(cannot be read: {exc.diagnostics[0].message})"
    return out


def game_info(game: Game) -> dict:
    m = game.model
    lo, hi, default = m.players
    zones = []
    for z in sorted(m.zones.values(), key=lambda z: z.index):
        if z.name == "box":
            continue
        zones.append({"name": z.name, "per_player": z.per_player, "ordered": z.ordered,
                      "visible": z.visible, "facedown_visible": z.facedown_visible})
    kinds = {}
    for c in m.cards:
        kinds.setdefault(c.kind, 0)
        kinds[c.kind] += c.count
    return {
        "id": m.id, "name": m.name, "description": m.description,
        "players": {"min": lo, "max": hi, "default": default},
        "options": [{"name": o.name, "type": str(o.type), "default": list(o.default) if isinstance(o.default, tuple)
                     else o.default, "value": _jsonable(game.program.options[o.name]), "doc": o.doc,
                     "range": list(o.range) if o.range else None,
                     "choices": list(o.choices) if o.choices else None} for o in m.options.values()],
        "variants": [{"name": name, "path": rel, "description": variant_descriptions(game).get(name, "")}
                     for name, rel in sorted(m.variants.items())],
        "applied_variants": list(m.applied_variants),
        "zones": zones,
        "cards": {"total": m.card_count, "entries": len(m.cards), "by_kind": kinds},
        "kinds": {k.name: {f.name: str(f.type) for f in k.fields.values()} for k in m.kinds.values()},
        "bots": {"evaluate": game.program.evaluator() is not None, **m.bots},
    }


def _jsonable(v):
    return list(v) if isinstance(v, tuple) else v


def visible_cards(match: Match, seat: int) -> frozenset:
    """The cards `seat` can name now, where they lie: those it sees and those it knows
    (shown by `reveal`, passed, seen go into a hand; interpreter/knowledge.py)."""
    prog, st = match.program, match.state
    return frozenset(c for c in range(len(prog.card_ids)) if knows(prog, st, c, seat))
