"""What both hand-written reference games share: decisions as named tuples, and the driver
that runs a game written as a generator (it yields each decision and receives the chosen
option's value), with the engine's `decision` / `legal_options` / `apply` / `is_over`.
"""

from __future__ import annotations

from typing import NamedTuple


class Option(NamedTuple):
    label: str
    value: object


class Decision(NamedTuple):
    player: int          # 0-based seat
    prompt: str
    options: tuple       # of Option (a list or a tuple)

    @property
    def labels(self) -> list[str]:
        return [o.label for o in self.options]


class GeneratorGame:
    """A game whose `_play()` generator yields Decisions; subclasses set their state, then
    call `_start()`."""
    result = None

    def _start(self) -> None:
        self.result = None
        self.decisions_made = 0
        self._game = self._play()
        self.decision = self._game.send(None)

    def _play(self):  # pragma: no cover - each game writes its own
        raise NotImplementedError

    @property
    def is_over(self) -> bool:
        return self.result is not None

    @property
    def legal_options(self) -> list:
        return list(self.decision.options) if self.decision is not None else []

    def apply(self, index: int) -> None:
        d = self.decision
        if d is None:
            raise ValueError("no decision is pending")
        self.decisions_made += 1
        try:
            self.decision = self._game.send(d.options[index].value)
        except StopIteration:
            self.decision = None
