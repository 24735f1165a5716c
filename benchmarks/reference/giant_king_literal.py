"""Giant King translated statement by statement from games/giant_king.rules into plain
Python: a second yardstick that splits the interpreter's ratio in two (as
mach_struggle_literal.py does for Mach Struggle).

The reference (giant_king.py) is the shortest correct program: it keeps each row's highest
number as cards are played, reuses one immutable option per card, adds up a row's power in
one pass and counts its numbers once for every formation. The rules script instead
recomputes `highest_played(p)` before every card, labels and de-duplicates every option of
every decision afresh, sets each card's `value` and `multiplier` and runs its ability by
name, counts the knights once per knight, and rebuilds the row's numbers for every
formation it checks. This module does exactly what the script does, in the same order,
with the state the interpreter keeps (zones as lists of card ids in the script's zone
layout, where each card is, faces, per-player and per-card variables), written the way a
programmer would write it by hand. So:

- literal / reference is what the script's way of playing costs, and
- interpreted / literal is what interpreting the script costs.

Log lines are not built (the interpreter skips them when nobody listens); that includes the
`revealed_rewards_log` trigger, which only logs. Same decisions, labels, shuffles and
results as the interpreted game (tests/test_differential.py).
"""

from __future__ import annotations

from rulesvm.interpreter import rng as R
# Options with the same label are one choice (two copies of a card): the first is kept, by
# the interpreter's own function (plain Python, so the translation does exactly that work).
from rulesvm.interpreter.decisions import dedupe

from .driver import Decision, Option
from .giant_king import GiantKingTable

# ---------------------------------------------------------------------- the cards

# The cards in game-file order (games/giant_king.yaml), `count` copies each, with the fields
# the script reads: (name, copies, kind, number, color, timing, ability, points, formation).
_CARDS = [(f"{color.capitalize()} {k}", 1, "start", k, color, None, None, None, None)
          for color in ("red", "blue", "yellow", "green") for k in range(1, 6)]
_CARDS += [(f"Black Knight {k}", 3, "knight", k, None, "FIGHT", "phalanx", None, None) for k in range(1, 6)]
_CARDS += [
    ("Invisible (1)", 2, "wizard", 1, None, "PLAY", "invisible", None, None),
    ("Double Power (2)", 2, "wizard", 2, None, "FIGHT", "double_power", None, None),
    ("Card Draw (3)", 2, "wizard", 3, None, "PLAY", "card_draw", None, None),
    ("Extra (4)", 2, "wizard", 4, None, "PLAY", "extra", None, None),
    ("Joker (5)", 2, "wizard", 5, None, "FIGHT", "joker", None, None),
    ("Drop (9)", 2, "wizard", 9, None, "PLAY", "drop", None, None),
    ("Straight 5 [15]", 1, "formation", None, None, None, None, 15, "straight5"),
    ("Straight 4 [6]", 2, "formation", None, None, None, None, 6, "straight4"),
    ("Four Card [10]", 1, "formation", None, None, None, None, 10, "four_card"),
    ("Three Card [6]", 2, "formation", None, None, None, None, 6, "three_card"),
    ("Two Pair [6]", 2, "formation", None, None, None, None, 6, "two_pair"),
    ("One Pair [3]", 2, "formation", None, None, None, None, 3, "one_pair"),
    ("Seven X [3]", 2, "formation", None, None, None, None, 3, "seven_x"),
    ("FINAL BATTLE", 1, "finale", None, None, None, None, None, None),
]
NAME, KIND, NUMBER, COLOR, TIMING, ABILITY, POINTS, FORMATION = ([] for _ in range(8))
for _name, _copies, *_fields in _CARDS:
    for _ in range(_copies):
        NAME.append(_name)
        for _table, _value in zip((KIND, NUMBER, COLOR, TIMING, ABILITY, POINTS, FORMATION), _fields):
            _table.append(_value)
NCARDS = len(NAME)                                              # 60

COLORS = ("red", "blue", "yellow", "green")                    # option `colors`
MAX_PLAYERS = 4

# Zone indexes as the interpreter lays them out: the shared zones, then each per-player
# zone once per seat of the largest game (zone + p).
BOX, RECRUIT, REWARDS, REVEALED = 0, 1, 2, 3
DECK, HAND, ROW, DISCARD, FORMATIONS = (4 + MAX_PLAYERS * k for k in range(5))
NZONES = 4 + 5 * MAX_PLAYERS
# The face a card takes on arriving in a zone without `face:` (`faceup` zones), else keep.
ARRIVE = [None] * NZONES
for _z in (REWARDS, REVEALED):
    ARRIVE[_z] = "up"
for _p in range(MAX_PLAYERS):
    ARRIVE[DISCARD + _p] = ARRIVE[FORMATIONS + _p] = "up"

PLAY_PROMPT = "Play a card"
ARRANGE_PROMPT = "Arrange your row (left to right)"
JOKER_PROMPT = "Joker: which number does it count as?"
REWARD_PROMPT = "Take a reward card"
# `choose` of constant options with fixed labels: the interpreter builds these once too.
JOKER_OPTIONS = tuple(Option(str(k), k) for k in range(1, 6))
TAKE_IT = "Take it"
TAKE_OPTIONS = (Option(TAKE_IT, TAKE_IT),
                Option("Put it at the bottom of the recruit deck", "Put it at the bottom of the recruit deck"))


# ---------------------------------------------------------------------- fight: power (funcs)

def multiplicities(nums: list) -> list:
    counts = {}
    for x in nums:
        counts[x] = counts.get(x, 0) + 1
    return sorted(counts.values(), reverse=True)


def has_straight(nums: list, n: int) -> bool:
    return any(all(k + j in nums for j in range(n)) for k in dict.fromkeys(nums))


def pairs(nums: list) -> int:
    return sum(1 for m in multiplicities(nums) if m >= 2)


def formation_met(f: str, nums: list) -> bool:
    if f == "straight5":
        return has_straight(nums, 5)
    if f == "straight4":
        return has_straight(nums, 4)
    if f == "four_card":
        return max(multiplicities(nums), default=0) >= 4
    if f == "three_card":
        return max(multiplicities(nums), default=0) >= 3
    if f == "two_pair":
        return pairs(nums) >= 2
    if f == "one_pair":
        return pairs(nums) >= 1
    if f == "seven_x":
        return sum(nums) > 0 and sum(nums) % 7 == 0
    return False


# ---------------------------------------------------------------------- the game

class Game(GiantKingTable):
    # ------------------------------------------------------------------ moving cards
    def _move(self, cards: list, to: int, face: str | None = None, bottom: bool = False) -> None:
        """`move` of a list of cards: each leaves its zone, then they arrive in order."""
        zones, where, faceup = self.zones, self.where, self.faceup
        if face is None:
            face = ARRIVE[to]
        for c in cards:
            zones[where[c]].remove(c)
        if bottom:
            zones[to][0:0] = cards
        else:
            zones[to].extend(cards)
        for c in cards:
            where[c] = to
            if face is not None:
                faceup[c] = face == "up"

    def _move_card(self, c: int, to: int, face: str | None = None, bottom: bool = False) -> None:
        """`move` of one card."""
        zones, where = self.zones, self.where
        zones[where[c]].remove(c)
        if bottom:
            zones[to].insert(0, c)
        else:
            zones[to].append(c)
        where[c] = to
        if face is None:
            face = ARRIVE[to]
        if face is not None:
            self.faceup[c] = face == "up"

    def _move_zone(self, src: int, to: int, face: str | None = None, bottom: bool = False) -> None:
        """`move` of every card of a zone, keeping their order."""
        zones = self.zones
        cards = zones[src]
        if not cards:
            return
        zones[src] = []
        if bottom:
            zones[to][0:0] = cards
        else:
            zones[to].extend(cards)
        where = self.where
        for c in cards:
            where[c] = to
        if face is None:
            face = ARRIVE[to]
        if face is not None:
            faceup, up = self.faceup, face == "up"
            for c in cards:
                faceup[c] = up

    def _draw(self, src: int, to: int, n: int) -> list:
        """`draw`: up to n cards one by one from the top (the end) of a zone."""
        zone = self.zones[src]
        k = max(0, min(n, len(zone)))
        if k == 0:
            return []
        drawn = zone[-k:][::-1]
        for c in drawn:
            self._move_card(c, to)
        return drawn

    # ------------------------------------------------------------------ funcs
    def _players_from(self, p: int) -> list:
        n = self.players
        return [(p + k) % n for k in range(n)]

    def _reward_count(self) -> int:
        zones = self.zones
        return sum(1 for p in range(self.players) if len(zones[HAND + p]) > 0) - 1

    def _participants(self) -> list:
        zones = self.zones
        return [p for p in self._players_from(self.start_player) if len(zones[HAND + p]) > 0]

    def _highest_played(self, p: int) -> int:
        return max([NUMBER[c] for c in self.zones[ROW + p]], default=0)

    def _formation_points(self, p: int) -> int:
        zones, value = self.zones, self.value
        return sum(POINTS[f] for f in zones[FORMATIONS + p]
                   if formation_met(FORMATION[f], [value[c] for c in zones[ROW + p]]))

    def _row_power(self, p: int) -> int:
        value, multiplier = self.value, self.multiplier
        return sum(value[c] * multiplier[c] for c in self.zones[ROW + p])

    def _ranking(self) -> list:
        n, s, power = self.players, self.start_player, self.power
        return sorted(range(n), key=lambda p: (-power[p], (p - s) % n))

    # ------------------------------------------------------------------ setup and game
    def _play(self):
        n = self.players
        zones = self.zones = [list(range(NCARDS))] + [[] for _ in range(NZONES - 1)]
        self.where = [BOX] * NCARDS
        self.faceup = [False] * NCARDS
        self.final_battle = False
        self.round_number = 0
        self.power = [0] * n
        self.bonus = [0] * n
        self.played = [0] * n
        self.passed = [False] * n
        self.unseen = [False] * n
        self.extra_plays = [0] * n
        self.phalanx_counted = [False] * n
        self.value = [0] * NCARDS
        self.multiplier = [1] * NCARDS
        # setup
        for p in range(n):
            self._move([c for c in zones[BOX] if KIND[c] == "start" and COLOR[c] == COLORS[p]], DECK + p)
        self._move([c for c in zones[BOX] if KIND[c] != "start" and KIND[c] != "finale"], RECRUIT)
        self.rng = R.shuffle(zones[RECRUIT], self.rng)
        # The FINAL BATTLE card is shuffled into the bottom six cards of the recruit deck.
        self._move(zones[RECRUIT][0:5], REVEALED, "down")
        self._move([c for c in range(NCARDS) if KIND[c] == "finale"], REVEALED, "down")
        self.rng = R.shuffle(zones[REVEALED], self.rng)
        self._move_zone(REVEALED, RECRUIT, bottom=True)
        k, self.rng = R.below(self.rng, n)
        self.start_player = k                   # random_pick(players)
        # game
        while True:
            self.round_number += 1
            self._prepare_round()
            if self.final_battle:
                break
            yield from self._play_round()
            yield from self._fight()
            yield from self._take_rewards()
            yield from self._rebuild_decks()
            if self.final_battle:
                break
        yield from self._final_battle_round()

    # ------------------------------------------------------------------ the round
    def _prepare_round(self) -> None:
        zones = self.zones
        for p in self._players_from(self.start_player):
            self._draw(DECK + p, HAND + p, 5 - len(zones[HAND + p]))
        for _ in range(self._reward_count()):
            recruit = zones[RECRUIT]
            c = recruit[-1] if recruit else None
            if c is None:
                break
            if KIND[c] == "finale":
                self._move_card(c, REVEALED, "up")
                self.final_battle = True
                return
            self._move_card(c, REWARDS)

    def _play_round(self):
        for p in range(self.players):
            self.played[p] = 0
            self.passed[p] = False
            self.unseen[p] = False
            self.extra_plays[p] = 0
        active = self._participants()
        for _ in range(self.laps):
            for p in active:
                if not self.passed[p]:
                    yield from self._take_turn(p, False)
            if all([self.passed[p] for p in active]):
                break
        # Extra: after everyone's turns, one more play per Extra card (even after passing).
        for p in active:
            while self.extra_plays[p] > 0:
                self.extra_plays[p] -= 1
                yield from self._take_turn(p, True)

    def _take_turn(self, p: int, extra: bool):
        zones, unseen = self.zones, self.unseen
        n = 0
        while n < self.max_cards:
            top = self._highest_played(p)
            playable = [c for c in zones[HAND + p] if NUMBER[c] is not None and (unseen[p] or NUMBER[c] >= top)]
            if len(playable) == 0:
                break
            stop = "End turn" if n > 0 else "Pass" if self.played[p] > 0 or extra else None
            options = dedupe([Option(f"{NAME[c]} (face down)" if unseen[p] else NAME[c], c) for c in playable])
            if stop is not None:
                options = [o for o in options if o.label != stop]
                options.append(Option(stop, None))
            if len(options) == 1:
                c = options[0].value
            else:
                c = yield Decision(p, PLAY_PROMPT, options)
            if c is None:
                break
            yield from self._play_card(p, c)
            n += 1
        if n == 0:
            if not extra:
                self.passed[p] = True

    def _play_card(self, p: int, c: int):
        if self.unseen[p]:
            self._move_card(c, ROW + p, "down")
        else:
            self._move_card(c, ROW + p, "up")
        self.played[p] += 1
        if TIMING[c] == "PLAY" and self.faceup[c]:
            yield from self._use(ABILITY[c], c, p)

    # ------------------------------------------------------------------ card abilities
    def _use(self, ability: str | None, c: int, you: int):
        """`use(ability, self, you)`: the ability's block, chosen by name."""
        if ability is None:
            return
        zones = self.zones
        if ability == "invisible":
            self.unseen[you] = True
        elif ability == "double_power":
            pass
        elif ability == "card_draw":
            self._draw(DECK + you, HAND + you, 1)
        elif ability == "extra":
            self.extra_plays[you] += 1
        elif ability == "joker":
            self.value[c] = yield Decision(you, JOKER_PROMPT, JOKER_OPTIONS)
        elif ability == "drop":
            self._move_zone(HAND + you, DISCARD + you)
        elif ability == "phalanx":
            knights = sum(1 for x in zones[ROW + you] if KIND[x] == "knight")
            if knights >= 2 and not self.phalanx_counted[you]:
                self.bonus[you] += knights
                self.phalanx_counted[you] = True

    # ------------------------------------------------------------------ fight
    def _fight(self):
        zones, faceup, value, multiplier = self.zones, self.faceup, self.value, self.multiplier
        for p in range(self.players):
            self.bonus[p] = 0
            self.phalanx_counted[p] = False
        for p in self._players_from(self.start_player):
            row = zones[ROW + p]
            if len(row) == 0:
                continue
            # Cards played after an Invisible are turned face up; their owner may reorder the row.
            if any(not faceup[c] for c in row):
                for c in row:
                    faceup[c] = True
                # choose_many(row(p), by: p, min: count(row(p))): every card, one pick at a time
                # (so no "Done" option); a pick with one option left is taken without asking.
                size = len(row)
                picked = []
                while len(picked) < size:
                    options = dedupe([Option(NAME[c], c) for c in row if c not in picked])
                    if len(options) == 1:
                        c = options[0].value
                    else:
                        prompt = f"{ARRANGE_PROMPT} ({len(picked) + 1} of {size})" if size > 1 else ARRANGE_PROMPT
                        c = yield Decision(p, prompt, options)
                    picked.append(c)
                self._move(picked, ROW + p)
            for c in row:
                value[c] = NUMBER[c]
                multiplier[c] = 1
            for c in row:
                if TIMING[c] == "FIGHT":
                    yield from self._use(ABILITY[c], c, p)
            # Double Power: the card placed right after it counts double (formations use the number).
            cards = zones[ROW + p]
            for i in range(0, len(cards) - 1):
                if ABILITY[cards[i]] == "double_power":
                    multiplier[cards[i + 1]] = multiplier[cards[i + 1]] * 2
        for p in range(self.players):
            self.power[p] = self._row_power(p) + self.bonus[p] + self._formation_points(p)

    def _take_rewards(self):
        zones = self.zones
        order = self._ranking()
        for p in order:
            if len(zones[REWARDS]) == 0:
                break
            if self.played[p] == 0:
                continue                        # no reward for a player who played nothing
            options = dedupe([Option(NAME[c], c) for c in zones[REWARDS]])
            if len(options) == 1:
                c = options[0].value
            else:
                c = yield Decision(p, REWARD_PROMPT, options)
            if KIND[c] == "formation":
                self._move_card(c, FORMATIONS + p)
            else:
                self._move_card(c, DISCARD + p)
        if len(zones[REWARDS]) > 0:
            self._move_zone(REWARDS, RECRUIT, "down", bottom=True)
        if self.played[order[0]] > 0:
            self.start_player = order[0]
        for p in range(self.players):
            self._move_zone(ROW + p, DISCARD + p)

    def _rebuild_decks(self):
        zones = self.zones
        holders = [p for p in range(self.players) if len(zones[HAND + p]) + len(zones[DECK + p]) > 0]
        if len(holders) == 1:
            p = holders[0]
            recruit = zones[RECRUIT]
            c = recruit[-1] if recruit else None
            if c is not None:
                self._move_card(c, REVEALED, "up")
                if KIND[c] == "finale":
                    self.final_battle = True
                    return
                keep = yield Decision(p, NAME[c], TAKE_OPTIONS)
                if keep == TAKE_IT:
                    self._move_card(c, FORMATIONS + p if KIND[c] == "formation" else DISCARD + p)
                else:
                    self._move_card(c, RECRUIT, "down", bottom=True)
            self._move_zone(HAND + p, DISCARD + p)
            self._move_zone(DECK + p, DISCARD + p)
        if all([len(zones[HAND + p]) + len(zones[DECK + p]) == 0 for p in range(self.players)]):
            for p in range(self.players):
                self._move_zone(DISCARD + p, DECK + p, "down")
                self.rng = R.shuffle(zones[DECK + p], self.rng)

    # ------------------------------------------------------------------ the final battle
    def _final_battle_round(self):
        zones = self.zones
        for p in range(self.players):
            self._move_zone(DISCARD + p, DECK + p, "down")
            self._move_zone(HAND + p, DECK + p, "down")
            self.rng = R.shuffle(zones[DECK + p], self.rng)
            self._draw(DECK + p, HAND + p, 5)
        yield from self._play_round()
        yield from self._fight()
        order = self._ranking()
        self.result = {"ranking": [p + 1 for p in order],
                       "scores": {str(p + 1): self.power[p] for p in range(self.players)},
                       "winner": order[0] + 1, "outcome": None}
