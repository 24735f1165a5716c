"""The random agent: a uniformly random legal option from its own seeded generator."""

from __future__ import annotations

from .. import rng as R
from .base import Agent, register


class RandomAgent(Agent):
    name = "random"
    reads_knowledge = False

    def __init__(self, seed: int = 0):
        self.state = R.seed_state(seed)

    def get_state(self):
        return str(self.state)

    def set_state(self, state) -> None:
        self.state = int(state)

    def choose(self, view) -> int:
        index, self.state = R.below(self.state, len(view.options))
        return index


register("random", RandomAgent, "picks a legal option uniformly at random (seeded)")
