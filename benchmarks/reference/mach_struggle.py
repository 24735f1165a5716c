"""Mach Struggle written directly in Python: the yardstick (speed and correctness) for the interpreter.

It plays exactly games/mach_struggle.rules with games/mach_struggle.yaml and the default
options (first to 6 points, fighters at most 2 cards apart): the same interpretations
(docs/games/mach_struggle.md), the same die rolls from the project's generator, and the
same decisions with the same prompts and option labels in the same order, so that
tests/test_differential.py can play it side by side with the interpreted game.

    game = Game(players=2, seed=7)
    while not game.is_over:
        d = game.decision            # .player (0-based), .prompt, .options (each has .label)
        game.apply(0)
    game.result                      # as the rules' end_game reports it

The game is a generator that yields each decision and receives the chosen option's value.
The cards carry no identity that matters here (nothing is shuffled), so a plan is kept as
its aim range and its three maneuvers.
"""

from __future__ import annotations

from itertools import product
from typing import NamedTuple

from rulesvm.interpreter import rng as R

from .driver import Decision, GeneratorGame, Option


# A maneuver's code -> how far the fighter moves, and whether it attacks.
MOVES = {"A+": 1, "D-": -1, "AT": 0, "HB": -2}
CODES = ("A+", "D-", "AT", "HB")


class Plan(NamedTuple):
    aim: int              # range 1 or 2
    moves: tuple          # per round
    attacks: tuple        # per round: True for Attack


# Every plan: an aim, then three maneuvers using exactly one Attack/Hard brake card.
PLAN_OPTIONS = tuple(
    Option(" ".join(pl), Plan(1 if pl[0] == "R1" else 2, tuple(MOVES[m] for m in pl[1:]),
                              tuple(m == "AT" for m in pl[1:])))
    for pl in product(("R1", "R2"), CODES, CODES, CODES)
    if sum(1 for m in pl[1:] if m in ("AT", "HB")) == 1
)
PLAN_PROMPT = "Set your aim and the maneuvers of rounds 1-3"
ROLL_OPTIONS = (Option("No roll", -1), Option("Roll round 1", 0), Option("Roll round 2", 1),
                Option("Roll round 3", 2))
ROLL_PROMPT = "Leader: lay one maneuver sideways to roll?"


def initial_leader(rng: int) -> tuple[int, int]:
    """Both players roll a die, the higher roll leads (roll again on a tie): (the leader's
    seat, 0-based; the generator state after the rolls)."""
    while True:
        a, rng = R.below(rng, 6)
        b, rng = R.below(rng, 6)
        if a != b:
            return (0 if a > b else 1), rng


class Game(GeneratorGame):
    def __init__(self, players: int = 2, seed: int = 0, target_score: int = 6, max_gap: int = 2):
        if players != 2:
            raise ValueError(f"Mach Struggle is for 2 players, not {players}")
        self.players = 2
        self.seed = seed
        self.target = target_score
        self.max_gap = max_gap
        self.rng = R.seed_state(seed)
        self._start()

    def _win(self, p: int) -> None:
        score = self.score
        self.result = {"ranking": [p + 1, 2 - p], "scores": {"1": score[0], "2": score[1]},
                       "winner": p + 1, "outcome": None}

    def _play(self):
        score = self.score = [1, 1]          # the crowd cheers at the start: 1 point each
        target, max_gap = self.target, self.max_gap
        leader, self.rng = initial_leader(self.rng)
        gap = 0                              # how far Player 1 is ahead of Player 2
        while True:
            plans = ((yield Decision(0, PLAN_PROMPT, PLAN_OPTIONS)),
                     (yield Decision(1, PLAN_PROMPT, PLAN_OPTIONS)))
            rolled = [-1, -1]
            rolled[leader] = yield Decision(leader, ROLL_PROMPT, ROLL_OPTIONS)
            hit = [False, False]
            for k in range(3):
                moves = [0 if rolled[p] == k else plans[p].moves[k] for p in (0, 1)]
                gap = max(-max_gap, min(max_gap, gap + moves[0] - moves[1]))
                # Attacks look at the positions after both fighters moved.
                for p in (0, 1):
                    if rolled[p] != k and plans[p].attacks[k]:
                        target_lead = -gap if p == 0 else gap
                        if target_lead == plans[p].aim:
                            t = 1 - p
                            if rolled[t] == k:
                                score[t] += 1            # rolls out of the line of fire
                            else:
                                score[p] += 1
                                hit[t] = True
                            for q in (0, 1):
                                if score[q] >= target:
                                    self._win(q)
                                    return
            if gap != 0:
                ahead = 0 if gap > 0 else 1
                if not hit[ahead]:
                    score[ahead] += 1
                    for q in (0, 1):
                        if score[q] >= target:
                            self._win(q)
                            return
                leader = ahead
