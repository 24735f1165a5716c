"""Any rulesvm game as an OpenSpiel game (pipeline: running game -> agents): `load(path)` returns
a `pyspiel.Game`, registered as a Python game, whose states wrap a `Match`.

    game = load("games/kuhn_poker.yaml")               # explicit chance: every deal is a chance node
    state = game.new_initial_state()
    state.chance_outcomes(); state.legal_actions(); state.apply_action(a); state.returns()

- Dynamics: sequential. A `simultaneous` block of the rules is played as the engine plays it,
  one secret decision after another: a seat's information state never holds another seat's
  secret choice, so the game is the same game of imperfect information (docs/research.md).
- Chance: `explicit_chance=True` (the default) makes every random event of the rules (a roll,
  a random pick, each draw of a shuffle) a chance node with its outcomes and probabilities;
  the actions of a chance node are its outcome indices. `explicit_chance=False`: the engine
  draws from its seeded generator (OpenSpiel's sampled-stochastic mode; game seed `seed`).
- Actions: the game's fixed numbering (`encoding.ActionSpace`, `describe_action`).
- Information: a seat's observation is `Match.observation(seat)` (what it sees and knows); its
  information state is the sequence of its observations from the start (perfect recall).
- Returns: scores or ranking (`environment.returns_of`); zero-sum when every survey game's
  returns summed to 0, constant-sum for another constant sum, general-sum otherwise.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pyspiel

from rulesvm.interpreter.state import CHANCE

from .encoding import observation_string
from .environment import Environment, make_environment


def load(game_path: str, players: int | None = None, explicit_chance: bool = True, returns: str | None = None,
         seed: int = 0, variants=(), **options) -> pyspiel.Game:
    """A rulesvm game as a registered OpenSpiel game (options by name, e.g. `target_score=4`)."""
    env = make_environment(game_path, players, returns, explicit_chance, variants, **options)
    game_type = _game_type(env, _short_name(env))
    if game_type.short_name not in pyspiel.registered_names():
        # A class, not a closure: OpenSpiel keeps its factories past the interpreter's end,
        # and a closure released then crashes Python's exit.
        factory = type(f"RulesvmGame_{env.id}", (RulesvmGame,), {"ENV": env, "TYPE": game_type})
        pyspiel.register_game(game_type, factory)
    return pyspiel.load_game(game_type.short_name, {"seed": seed})


def _short_name(env: Environment) -> str:
    """One registered name per game files, options, player count and modes."""
    key = repr((env.game.program.fingerprint, env.game.program.card_fingerprint, sorted(env.game.options.items()),
                env.players, env.returns, env.explicit_chance, env.actions.values, env.actions.width,
                env.encoder.size, env.seen.chance_width))
    return f"rulesvm_{env.id}_{hashlib.sha256(key.encode()).hexdigest()[:10]}"


def _game_type(env: Environment, short_name: str) -> pyspiel.GameType:
    total = env.utility_sum
    utility = (pyspiel.GameType.Utility.GENERAL_SUM if total is None else
               pyspiel.GameType.Utility.ZERO_SUM if total == 0 else pyspiel.GameType.Utility.CONSTANT_SUM)
    chance = (pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC if env.explicit_chance
              else pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC)
    info = (pyspiel.GameType.Information.PERFECT_INFORMATION if perfect_information(env)
            else pyspiel.GameType.Information.IMPERFECT_INFORMATION)
    return pyspiel.GameType(
        short_name=short_name, long_name=f"rulesvm: {env.game.name}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL, chance_mode=chance, information=info, utility=utility,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=env.players, min_num_players=env.players,
        provides_information_state_string=True, provides_information_state_tensor=True,
        provides_observation_string=True, provides_observation_tensor=True,
        parameter_specification={"seed": 0})


def perfect_information(env: Environment) -> bool:
    """Every card is face up in a zone all see, every variable is public and no decision was
    secret in the survey: then nothing is hidden from anyone."""
    model = env.game.model
    zones_open = all(z.name == "box" or (not z.hidden and z.visible == "all" and
                                         (z.arrive_face == "up" or z.facedown_visible == "all"))
                     for z in model.zones.values())
    vars_open = all(v.visible == "all" for v in model.vars_of("player"))
    return zones_open and vars_open and not env.seen.secret


class RulesvmGame(pyspiel.Game):
    """A rulesvm game for OpenSpiel's algorithms; `load` registers a subclass per game whose
    `ENV` holds the loaded game and its encodings. Parameter `seed`: the first game's seed
    when the engine draws chance itself (each new game takes the next)."""
    ENV: Environment
    TYPE: pyspiel.GameType

    def __init__(self, params=None):
        env = self.ENV
        seed = int((params or {}).get("seed", 0))
        lo, hi = env.utility_range
        info = pyspiel.GameInfo(
            num_distinct_actions=env.actions.size,
            max_chance_outcomes=max(env.seen.chance_width, len(env.game.program.card_ids), 1),
            num_players=env.players, min_utility=lo, max_utility=hi,
            utility_sum=env.utility_sum if env.utility_sum is not None else None,
            max_game_length=max(1, 2 * env.seen.longest))
        super().__init__(self.TYPE, info, params or {"seed": 0})
        self.env = env
        self.seed = seed
        self.games_started = 0      # sampled chance: each new game its own seed

    def new_initial_state(self):
        return RulesvmState(self)

    def next_seed(self) -> int:
        seed = self.seed + self.games_started
        self.games_started += 1
        return seed

    def make_py_observer(self, iig_obs_type=None, params=None):
        perfect_recall = iig_obs_type is not None and iig_obs_type.perfect_recall
        return RulesvmObserver(self.env, perfect_recall)

    def describe_action(self, action: int) -> str:
        """What an action id stands for in every state of this game."""
        return self.env.actions.describe(action)


class Play:
    """What one state holds: the game, its match, the option indices chosen from the start and,
    once asked for, each seat's observations so far. OpenSpiel clones a Python state by making a
    new initial state and deep-copying the attributes into it: so a new state starts its match
    only when first read (a clone's never is), and a `Play` copies as a clone of its match (the
    loaded game is shared)."""

    def __init__(self, game: RulesvmGame, match=None, seed: int = 0, moves: list | None = None,
                 taken: list | None = None, trail: list | None = None):
        self.game = game
        self.env = game.env
        self._match = match
        self._seed = seed
        self.moves = moves or []    # option indices from the start
        self.taken = taken or []    # (seat, action id) of each player's decision from the start
        self.trail = trail          # per step, each seat's observation string (None: not kept yet)
        self.ids = None             # action id -> option index, for the pending decision

    @property
    def match(self):
        if self._match is None:
            self._start()
        return self._match

    @property
    def seed(self) -> int:
        """The seed the match started with (which starts it, if it has not started)."""
        if self._match is None:
            self._start()
        return self._seed

    def _start(self) -> None:
        self._seed = self.game.next_seed()
        self._match = self.env.new_match(self._seed)

    def __deepcopy__(self, memo):
        trail = None if self.trail is None else list(self.trail)
        match = self.match.clone()
        return Play(self.game, match, self._seed, list(self.moves), list(self.taken), trail)


class RulesvmState(pyspiel.State):
    """One OpenSpiel state: a `Play` (a match and what each seat has seen)."""

    def __init__(self, game: RulesvmGame):
        super().__init__(game)
        self.play = Play(game)

    @property
    def env(self) -> Environment:
        return self.play.env

    @property
    def match(self):
        return self.play.match

    def current_player(self):
        m = self.match
        if m.is_over:
            return pyspiel.PlayerId.TERMINAL
        if m.decision.player == CHANCE:
            return pyspiel.PlayerId.CHANCE
        return m.decision.player

    def _action_ids(self) -> dict:
        play = self.play
        if play.ids is None:
            m = play.match
            if m.decision.player == CHANCE:
                play.ids = {i: i for i in range(len(m.decision.options))}
            else:
                play.ids = {a: i for i, a in enumerate(play.env.actions.actions(m, m.decision.player))}
        return play.ids

    def _legal_actions(self, player):
        return sorted(self._action_ids())

    def chance_outcomes(self):
        return [(index, float(p)) for index, p in self.match.chance_outcomes()]

    def _apply_action(self, action):
        play = self.play
        index = self._action_ids()[action]
        if play.match.decision.player != CHANCE:
            play.taken.append((play.match.decision.player, action))
        play.match.apply(index)
        play.moves.append(index)
        play.ids = None
        if play.trail is not None:
            play.trail.append(self._observations())

    def _action_to_string(self, player, action):
        d = self.match.decision
        if player == pyspiel.PlayerId.CHANCE or player == CHANCE:
            label = d.options[action].label if d is not None and action < len(d.options) else ""
            return f"chance outcome {action}" + (f": {label}" if label else "")
        return self.env.actions.describe(action)

    def is_terminal(self):
        return self.match.is_over

    def returns(self):
        return self.env.returns_of(self.match.result)

    def __str__(self):
        return observation_string(self.match.observation(-1))

    # ------------------------------------------------------------------ what each seat has seen
    def _observations(self) -> tuple:
        return _observations(self.match, self.env.players)

    def observations_so_far(self) -> list:
        """Each step's observation strings (per seat), from the start; replayed once, then kept."""
        play = self.play
        if play.trail is None:
            replay = play.env.new_match(play.seed)
            trail = [_observations(replay, play.env.players)]
            for index in play.moves:
                replay.apply(index)
                trail.append(_observations(replay, play.env.players))
            play.trail = trail
        return play.trail


def _observations(match, players: int) -> tuple:
    return tuple(observation_string(match.observation(p)) for p in range(players))


class RulesvmObserver:
    """OpenSpiel's observer: a seat's observation (or, with perfect recall, its information
    state) as a tensor, pieces by name (`dict`), and a string."""

    def __init__(self, env: Environment, perfect_recall: bool):
        self.env = env
        self.perfect_recall = perfect_recall
        enc = env.encoder
        own = env.actions.size if perfect_recall else 0
        self.tensor = np.zeros(enc.size + own, np.float32)
        self.dict = {p.name: self.tensor[p.start:p.start + p.size].reshape(p.shape) for p in enc.pieces}
        if perfect_recall:
            self.dict["own_actions"] = self.tensor[enc.size:]

    def set_from(self, state: RulesvmState, player: int) -> None:
        enc = self.env.encoder
        enc.encode(state.match.observation(player), self.tensor[:enc.size])
        if self.perfect_recall:
            self.dict["own_actions"][:] = own_action_counts(state, player, self.env.actions.size)

    def string_from(self, state: RulesvmState, player: int) -> str:
        if self.perfect_recall:
            return "\n".join(step[player] for step in state.observations_so_far())
        return observation_string(state.match.observation(player))


def own_action_counts(state: RulesvmState, player: int, size: int) -> np.ndarray:
    """How many times `player` took each action so far (the information state tensor's tail)."""
    counts = np.zeros(size, np.float32)
    for seat, action in state.play.taken:
        if seat == player:
            counts[action] += 1.0
    return counts
