"""One loaded game as a research environment, shared by the OpenSpiel and PettingZoo adapters
(pipeline: running game -> agents): the game, its survey, action numbering, observation encoder
and how a result becomes returns.

`Environment.new_match(seed)` starts a game; returns come from the game's result: its scores
(`returns="scores"`, the default when its results carry a score for every seat) or its ranking
(`"ranking"`: from +1 for the first to -1 for the last, tied places sharing their mean; a
one-player game without a ranking: +1 for a win, -1 otherwise).
"""

from __future__ import annotations

from dataclasses import dataclass

from rulesvm import api
from rulesvm.interpreter.rng import below, seed_state

from .encoding import SURVEY_GAMES, ActionSpace, ObservationEncoder, Survey, survey


RETURNS = ("scores", "ranking")
CHANCE_SURVEY_GAMES = 4     # games played with explicit chance to see the widest chance node


@dataclass
class Environment:
    game: api.Game
    players: int
    returns: str
    explicit_chance: bool
    seen: Survey
    actions: ActionSpace
    encoder: ObservationEncoder

    @property
    def id(self) -> str:
        return self.game.model.id

    def new_match(self, seed: int = 0):
        return _start(self.game, self.players, seed, self.explicit_chance)

    def returns_of(self, result: dict | None) -> list[float]:
        return returns_of(result, self.players, self.returns)

    @property
    def utility_range(self) -> tuple[float, float]:
        """Bounds of the returns (ranking: -1 to 1). Scores have no declared bounds: a zero-sum
        game's are the survey's widest return either way; others' the survey's lowest and highest,
        widened to hold 0 and then by half their span on each side (a survey is not every game)."""
        if self.returns == "ranking":
            return -1.0, 1.0
        flat = [r for rs in self.seen.returns for r in rs] or [0.0]
        if self.utility_sum == 0:
            bound = max(abs(r) for r in flat) or 1.0
            return -bound, bound
        lo, hi = min(min(flat), 0.0), max(max(flat), 0.0)
        margin = max((hi - lo) / 2, 1.0)
        return lo - margin, hi + margin

    @property
    def utility_sum(self) -> float | None:
        """The sum of the returns when every survey game had the same sum (zero- or constant-sum)."""
        sums = {round(sum(rs), 9) for rs in self.seen.returns}
        return sums.pop() if len(sums) == 1 and self.players > 1 else None


def make_environment(game_path: str, players: int | None = None, returns: str | None = None,
                     explicit_chance: bool = False, variants=(), survey_games: int = SURVEY_GAMES,
                     **options) -> Environment:
    """Load a game (options by name, as `rulesvm run --set`) and survey it once."""
    return environment_of(api.load_game(game_path, variants=variants, options=options), players, returns,
                          explicit_chance, survey_games)


def environment_of(game: api.Game, players: int | None = None, returns: str | None = None,
                   explicit_chance: bool = False, survey_games: int = SURVEY_GAMES) -> Environment:
    """A loaded game as a research environment, surveyed once."""
    lo, hi, default = game.model.players
    players = default if players is None else players
    if not lo <= players <= hi:
        raise ValueError(f"{game.name} is for {lo}" + (f" to {hi}" if hi != lo else "") + f" players, not {players}")
    mode = returns or ("scores" if _has_scores(_start(game, players, 0, False)) else "ranking")
    if mode not in RETURNS:
        raise ValueError(f"returns={returns!r}: use one of {', '.join(RETURNS)}")
    # Values are surveyed with the engine drawing chance itself, so the numbering is the same
    # with explicit chance or without; a few games with it measure the widest chance node.
    seen = survey(lambda seed: _start(game, players, seed, False),
                  lambda result: returns_of(result, players, mode), survey_games)
    if explicit_chance:
        seen.chance_width = survey(lambda seed: _start(game, players, seed, True), lambda result: None,
                                   CHANCE_SURVEY_GAMES).chance_width
    return Environment(game, players, mode, explicit_chance, seen, ActionSpace(game.program, seen),
                       ObservationEncoder(game.program, players, seen))


def _start(game, players: int, seed: int, explicit_chance: bool):
    if explicit_chance:
        return api.new_game(game, players, seed, explicit_chance=True)
    return api.new_game(game, players, seed)


def _has_scores(match) -> bool:
    """Do this game's results carry a score for every seat? One seeded random game says."""
    state = seed_state(0)
    while not match.is_over:
        index, state = below(state, len(match.decision.options))
        match.apply(index)
    scores = match.result.get("scores") or {}
    return len(scores) == match.players


def returns_of(result: dict | None, players: int, mode: str) -> list[float]:
    """Each seat's return from a game's result (zeros while the game goes on)."""
    if result is None:
        return [0.0] * players
    scores = result.get("scores") or {}
    if mode == "scores" and scores:
        return [float(scores.get(str(p + 1), 0)) for p in range(players)]
    ranking = result.get("ranking")
    if not ranking:
        if players == 1:
            won = result.get("winner") == 1 or result.get("outcome") in ("win", "won")
            return [1.0 if won else -1.0]
        return [0.0] * players
    out = [0.0] * players
    place = 0
    for entry in ranking:
        tied = entry if isinstance(entry, list) else [entry]
        values = [_place_value(place + k, players) for k in range(len(tied))]
        for seat in tied:
            out[seat - 1] = sum(values) / len(values)
        place += len(tied)
    return out


def _place_value(place: int, players: int) -> float:
    return 1.0 if players == 1 else 1.0 - 2.0 * place / (players - 1)


def layout(env: Environment) -> dict:
    """The game's action numbering and observation tensor, as plain data (`rulesvm info --actions`)."""
    space = env.actions
    cards = [{"id": 1 + c, "action": space.describe(1 + c)} for c in range(space.cards)]
    values = [{"id": space.value_base + i, "action": space.describe(space.value_base + i)}
              for i in range(len(space.values))]
    blocks = [{"ids": [0, 0], "action": "choose_many's done"},
              {"ids": [1, space.cards], "action": "a card the seat sees or knows"},
              {"ids": [space.hidden_base, space.value_base - 1], "action": "the k-th card option the seat does not know"},
              {"ids": [space.value_base, space.other_base - 1], "action": "a value the survey met"},
              {"ids": [space.other_base, space.size - 1], "action": "the k-th option whose value the survey never met"}]
    pieces = [{"piece": p.name, "start": p.start, "shape": list(p.shape)} for p in env.encoder.pieces]
    return {"game": env.id, "players": env.players, "returns": env.returns, "actions": space.size,
            "blocks": blocks, "cards": cards, "values": values,
            "observation": {"size": env.encoder.size, "pieces": pieces}}
