"""Explicit chance (pipeline: running game): random events as decisions of the chance player.

With `Match(..., explicit_chance=True)` the game never draws from its generator while the
rules run. Each draw a random primitive makes (`roll`, `random_pick`, one position of a
`shuffle`, the place a `shuffle_into` card goes) is instead the next *outcome* of the stretch
of rules being run: the outcomes answered so far are kept in the state (`GameState.chance`),
and a draw past them stops the run with `NeedChance`, carrying the chance decision (player
`CHANCE`, one option per outcome, all equally likely).

A random call may sit anywhere, inside an expression or a function that cannot pause, so
the engine does not resume in the middle of it: it runs the stretch again from where it
started (the last decision), handing the answered outcomes out in order. Running the rules
is deterministic, so the rerun takes the same path up to the new draw. A shuffle is
Fisher-Yates with one draw per position from the top, in the order `rng.shuffle` draws:
sampling every outcome with `rng.below` from the game's generator gives the same game as
the mode off.
"""

from __future__ import annotations

from .state import CHANCE, Decision, Option


class NeedChance(BaseException):
    """A draw with no answered outcome yet: unwinds the run (a BaseException, so that no
    handler of the rules' own errors catches it) carrying the chance decision to ask."""

    def __init__(self, decision: Decision):
        super().__init__(decision.prompt)
        self.decision = decision


class ChanceDraws:
    """The outcomes answered for the stretch of rules being run, handed out in order."""
    __slots__ = ("outcomes", "pos")

    def __init__(self, outcomes: tuple):
        self.outcomes = outcomes
        self.pos = 0

    def draw(self, n: int, what: str, prompt: str, options, value_type: str) -> int:
        """The index (0 <= k < n) of the next outcome; `options()` lists the n outcomes as
        `Option`s (label, value), built only when the chance decision must be asked. `what`
        names the random call (`roll(6)`, `random_pick`, `shuffle(deck)`,
        `shuffle_into(deck)`): the decision's `help`, which scripted outcomes key on."""
        if n <= 0:
            raise ValueError("empty range")
        if self.pos < len(self.outcomes):
            k = self.outcomes[self.pos]
            self.pos += 1
            return k
        raise NeedChance(Decision(CHANCE, prompt, tuple(options()), "chance", help=what, value_type=value_type))


def numbered(values, text=str) -> list:
    """Options for plain values (die faces, positions): each labelled by `text(value)`."""
    return [Option(text(v), v) for v in values]
