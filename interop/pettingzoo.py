"""Any rulesvm game as a PettingZoo environment (pipeline: running game -> agents).

    env = rulesvm.interop.pettingzoo.env("games/mach_struggle.yaml")
    env.reset(seed=7)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        action = None if terminated or truncated else policy(obs["observation"], obs["action_mask"])
        env.step(action)

`env(path)` is an AEC environment: agents `player_1` ... take turns as the rules ask them; the
engine draws every random event from the seed given to `reset` (same seed, same actions: the
same game). Each observation is a dict: `observation` (the seat's tensor, `encoding.py`) and
`action_mask` (1 for the game's action ids legal now). Rewards are the returns at the end
(scores or ranking, `environment.returns_of`). A `simultaneous` block of the rules is a run of
secret turns: no agent's observation holds another's secret choice until the rules reveal it
(docs/research.md says why there is no parallel API).
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from .encoding import observation_string
from .environment import make_environment


def env(game_path: str, players: int | None = None, returns: str | None = None, render_mode: str | None = None,
        variants=(), **options) -> "RulesvmEnv":
    """A rulesvm game as a PettingZoo AEC environment (options by name, e.g. `target_score=4`)."""
    return RulesvmEnv(make_environment(game_path, players, returns, False, variants, **options), render_mode)


class RulesvmEnv(AECEnv):
    """The AEC environment of one loaded game (`environment.Environment`)."""

    def __init__(self, environment, render_mode: str | None = None):
        super().__init__()
        self.environment = environment
        self.metadata = {"name": f"rulesvm_{environment.id}_v0", "render_modes": ["ansi", "human"],
                         "is_parallelizable": False}
        self.render_mode = render_mode
        self.possible_agents = [f"player_{p + 1}" for p in range(environment.players)]
        size = environment.actions.size
        obs_space = spaces.Dict({
            "observation": spaces.Box(-np.inf, np.inf, (environment.encoder.size,), np.float32),
            "action_mask": spaces.Box(0, 1, (size,), np.int8)})
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(size) for a in self.possible_agents}
        self.match = None
        self._seeds = np.random.default_rng()

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            self._seeds = np.random.default_rng(seed)
        game_seed = int(self._seeds.integers(0, 2 ** 31 - 1))
        self.match = self.environment.new_match(game_seed)
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self._ids = None
        self._settle()

    def _settle(self) -> None:
        """After a move: the next agent to act, or the rewards and terminations at the end."""
        self._ids = None
        if self.match.is_over:
            returns = self.environment.returns_of(self.match.result)
            for p, agent in enumerate(self.possible_agents):
                self.rewards[agent] = returns[p]
                self.terminations[agent] = True
            self._accumulate_rewards()
            self.agent_selection = self.agents[0]
            return
        self.agent_selection = self.possible_agents[self.match.decision.player]

    def _legal(self) -> dict:
        """Action id -> option index of the pending decision, for its agent."""
        if self._ids is None:
            seat = self.match.decision.player
            self._ids = {a: i for i, a in enumerate(self.environment.actions.actions(self.match, seat))}
        return self._ids

    def observe(self, agent):
        seat = self.possible_agents.index(agent)
        tensor = np.zeros(self.environment.encoder.size, np.float32)
        self.environment.encoder.encode(self.match.observation(seat), tensor)
        mask = np.zeros(self.environment.actions.size, np.int8)
        if not self.match.is_over and self.possible_agents[self.match.decision.player] == agent:
            mask[list(self._legal())] = 1
        return {"observation": tensor, "action_mask": mask}

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        legal = self._legal()
        if action not in legal:
            raise ValueError(f"action {action} ({self.environment.actions.describe(int(action))}) is not legal for "
                             f"{agent} now; legal: {sorted(legal)} (the observation's action_mask)")
        self._cumulative_rewards[agent] = 0.0
        self.match.apply(legal[action])
        self._settle()
        if self.render_mode == "human":
            self.render()

    def render(self):
        if self.render_mode is None or self.match is None:
            return None
        text = observation_string(self.match.observation(-1))
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self):
        self.match = None
