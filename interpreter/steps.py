"""A compound decision answered one pick at a time (pipeline: **running game -> agents**).

A `choose` with `steps:` is one decision whose options are combinations (an aim and three
manoeuvres); its `Decision.steps` holds each option's picks as labels. `StepPicker` walks
them: at each step it offers the picks that some option still allows after the picks made
so far (in the order the options list them), takes one, takes the last one back, and once
every step is picked names the one option they make. Nothing reaches the game before that:
the picks live in the picker (a terminal prompt, a web page, an agent), so no other seat can
see a half-made choice. Agents that do not ask for steps keep answering the whole decision.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .state import Decision


@dataclass
class StepPicker:
    """The picks made so far in a compound decision, and what may follow them."""
    decision: Decision
    picked: list = field(default_factory=list)      # part labels, one per step taken

    @property
    def prompts(self) -> tuple:
        return self.decision.steps.prompts

    @property
    def step(self) -> int:
        """The 0-based step to pick next (equal to the number of steps when complete)."""
        return len(self.picked)

    @property
    def complete(self) -> bool:
        return len(self.picked) == len(self.prompts)

    def matching(self) -> list[int]:
        """The indexes of the options whose first picks are the picks made so far."""
        k = len(self.picked)
        want = tuple(self.picked)
        return [i for i, parts in enumerate(self.decision.steps.parts) if parts[:k] == want]

    def choices(self) -> list[str]:
        """The picks the current step offers, each once, in the options' order."""
        if self.complete:
            return []
        k = len(self.picked)
        seen: dict = {}
        for i in self.matching():
            seen.setdefault(self.decision.steps.parts[i][k], None)
        return list(seen)

    def pick(self, label: str) -> None:
        if label not in self.choices():
            raise ValueError(f"`{label}` is not a pick of step {self.step + 1}")
        self.picked.append(label)

    def undo(self) -> bool:
        """Take back the last pick; False when there is none."""
        if not self.picked:
            return False
        self.picked.pop()
        return True

    @property
    def index(self) -> int:
        """The option the picks make (the first, if two options read the same)."""
        if not self.complete:
            raise ValueError("the choice is not complete")
        return self.matching()[0]
