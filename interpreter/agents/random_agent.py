"""The random agent: a uniformly random legal option from its own seeded generator.

With `steps=on` it answers a compound decision (`choose` with `steps:`) one pick at a
time, each pick uniformly among those still possible, as a person at the table does: a
different spread over the combinations than a uniform pick among them (the default).
"""

from __future__ import annotations

from .. import rng as R
from ..steps import StepPicker
from .base import Agent, register, switch


class RandomAgent(Agent):
    name = "random"
    reads_knowledge = False

    def __init__(self, seed: int = 0, steps: bool = False):
        self.state = R.seed_state(seed)
        self.steps = steps

    def describe(self) -> str:
        return "random:steps=on" if self.steps else "random"

    def get_state(self):
        return str(self.state)

    def set_state(self, state) -> None:
        self.state = int(state)

    def choose(self, view) -> int:
        if self.steps:
            d = view.decision
            if d.steps is not None:
                return self._by_steps(d)
        index, self.state = R.below(self.state, len(view.options))
        return index

    def _by_steps(self, d) -> int:
        picker = StepPicker(d)
        while not picker.complete:
            choices = picker.choices()
            k, self.state = R.below(self.state, len(choices))
            picker.pick(choices[k])
        return picker.index


register("random", RandomAgent, "picks a legal option uniformly at random (seeded)",
         {"steps": (switch, "on: answer a compound choice (`steps:`) one uniform pick at a time")})
