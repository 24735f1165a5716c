"""Mach Struggle translated statement by statement from games/mach_struggle.rules into
plain Python: a second yardstick that splits the interpreter's ratio in two.

The reference (mach_struggle.py) is the shortest correct program: it keeps no cards, only
each plan's aim and moves. The rules script, like a table, moves ten cards between zones,
turns them to show a maneuver and lays one sideways for a roll. This module does exactly
what the script does, in the same order, with the state the interpreter keeps (zones as
lists of card ids, where each card is, faces, turns), written the way a programmer would
write it by hand. So:

- literal / reference is what the script's way of playing costs (the cards), and
- interpreted / literal is what interpreting the script costs.

Same decisions, labels, die rolls and results as the reference (tests/test_differential.py).
"""

from __future__ import annotations

from itertools import product

from rulesvm.interpreter import rng as R

from .driver import Decision, GeneratorGame, Option
from .mach_struggle import initial_leader

# The cards in game-file order (games/mach_struggle.yaml): two fighters, two aim cards,
# then per seat two Accelerate/Decelerate cards and one Attack/Hard brake card.
KIND = ("fighter", "fighter", "aim", "aim") + ("maneuver",) * 6
SEAT = (1, 2, 1, 2, 1, 1, 1, 2, 2, 2)
ATTACK_CARD = (None, None, None, None, False, False, True, False, False, True)
# Fields that depend on the card's turn (its `faces:`): 0, 180, or 90 (laid sideways).
RANGE = {0: 1, 180: 2, 90: 1}
MANEUVER = {False: {0: "accelerate", 180: "decelerate", 90: "accelerate"},
            True: {0: "attack", 180: "hard brake", 90: "attack"}}
MOVE = {False: {0: 1, 180: -1, 90: 1}, True: {0: 0, 180: -2, 90: 0}}

CODES = ("A+", "D-", "AT", "HB")
PLAN_OPTIONS = tuple(Option(" ".join(pl), pl) for pl in product(("R1", "R2"), CODES, CODES, CODES)
                     if sum(1 for m in pl[1:4] if m == "AT" or m == "HB") == 1)
PLAN_PROMPT = "Set your aim and the maneuvers of rounds 1-3"
ROLLS = ("No roll", "Roll round 1", "Roll round 2", "Roll round 3")
ROLL_OPTIONS = tuple(Option(x, x) for x in ROLLS)
ROLL_PROMPT = "Leader: lay one maneuver sideways to roll?"

# Zone indexes: the box, the fighters, then per seat: reserve, aim slot, plan.
BOX, FIGHTERS, RESERVE, AIM_SLOT, PLAN = 0, 1, 2, 4, 6


class Game(GeneratorGame):
    def __init__(self, players: int = 2, seed: int = 0, target_score: int = 6, max_gap: int = 2):
        if players != 2:
            raise ValueError(f"Mach Struggle is for 2 players, not {players}")
        self.players = 2
        self.rng = R.seed_state(seed)
        self.target = target_score
        self.max_gap = max_gap
        self._start()

    def _move(self, c: int, to: int, faceup: bool) -> None:
        self.zones[self.where[c]].remove(c)
        self.zones[to].append(c)
        self.where[c] = to
        self.faceup[c] = faceup

    def _check_win(self, score: list) -> bool:
        """The script's `check_win`: the first player to reach the target wins (True: over)."""
        for p in (0, 1):
            if score[p] >= self.target:
                self.result = {"ranking": [p + 1, 2 - p], "scores": {"1": score[0], "2": score[1]},
                               "winner": p + 1, "outcome": None}
                return True
        return False

    def _play(self):
        n = len(KIND)
        zones = self.zones = [list(range(n))] + [[] for _ in range(7)]
        self.where = [BOX] * n
        faceup = self.faceup = [False] * n
        turn = [0] * n
        score, hit = [0, 0], [False, False]
        max_gap = self.max_gap
        # setup
        for p in (0, 1):
            for c in [c for c in zones[BOX] if SEAT[c] == p + 1 and KIND[c] == "fighter"]:
                self._move(c, FIGHTERS, True)
            for c in [c for c in zones[BOX] if SEAT[c] == p + 1 and KIND[c] != "fighter"]:
                self._move(c, RESERVE + p, True)
            score[p] = 1
        leader, self.rng = initial_leader(self.rng)     # the same rolls as the reference
        gap = 0
        turn_number = 0
        while True:
            turn_number += 1
            # set_plans and place_plan
            for p in (0, 1):
                pl = yield Decision(p, PLAN_PROMPT, PLAN_OPTIONS)
                a = [c for c in zones[RESERVE + p] if KIND[c] == "aim"][0]
                turn[a] = 0 if pl[0] == "R1" else 180
                self._move(a, AIM_SLOT + p, False)
                for code in pl[1:4]:
                    attack = code == "AT" or code == "HB"
                    c = [m for m in zones[RESERVE + p] if KIND[m] == "maneuver" and ATTACK_CARD[m] == attack][0]
                    turn[c] = 0 if code == "A+" or code == "AT" else 180
                    self._move(c, PLAN + p, False)
            # leader_roll
            pick = yield Decision(leader, ROLL_PROMPT, ROLL_OPTIONS)
            if pick != "No roll":
                turn[zones[PLAN + leader][ROLLS.index(pick) - 1]] = 90
            # reveal_aims
            for p in (0, 1):
                faceup[zones[AIM_SLOT + p][0]] = True
            # resolve_round
            for k in range(3):
                for p in (0, 1):
                    c = zones[PLAN + p][k]
                    if turn[c] != 90:
                        faceup[c] = True
                moves = []
                for p in (0, 1):
                    c = zones[PLAN + p][k]
                    moves.append(0 if turn[c] == 90 else MOVE[ATTACK_CARD[c]][turn[c]])
                gap = max(-max_gap, min(max_gap, gap + moves[0] - moves[1]))
                for p in (0, 1):
                    c = zones[PLAN + p][k]
                    if turn[c] != 90 and MANEUVER[ATTACK_CARD[c]][turn[c]] == "attack":
                        t = 1 - p
                        if (gap if t == 0 else -gap) == RANGE[turn[zones[AIM_SLOT + p][0]]]:
                            if turn[zones[PLAN + t][k]] == 90:
                                score[t] += 1
                            else:
                                score[p] += 1
                                hit[t] = True
                            if self._check_win(score):
                                return
            # end_turn
            if gap != 0:
                ahead = 0 if gap > 0 else 1
                if not hit[ahead]:
                    score[ahead] += 1
                    if self._check_win(score):
                        return
                leader = ahead
            for p in (0, 1):
                hit[p] = False
                for c in zones[AIM_SLOT + p] + zones[PLAN + p]:
                    turn[c] = 0
                for c in zones[AIM_SLOT + p] + zones[PLAN + p]:
                    self._move(c, RESERVE + p, True)
