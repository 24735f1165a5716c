"""Giant King written directly in Python: the yardstick (speed and correctness) for the interpreter.

It plays exactly games/giant_king.rules with games/giant_king.yaml and the default options
(two laps, at most three cards a turn): the same interpretations (docs/games/giant_king.md),
the same draws from the project's generator in the same order, and the same decisions with
the same prompts and option labels in the same order, so that tests/test_differential.py
can play it side by side with the interpreted game.

    game = Game(players=4, seed=7)
    while not game.is_over:
        d = game.decision            # .player (0-based), .prompt, .options (each has .label)
        game.apply(0)
    game.result                      # as the rules' end_game reports it

The game is a generator that yields each decision and receives the chosen option's value.
Cards are ints numbered as the interpreter numbers them (YAML order, `count` copies each),
because shuffles permute lists of these numbers; zones are lists whose last element is the
top, as in the interpreter.
"""

from __future__ import annotations

from rulesvm.interpreter import rng as R

from .driver import Decision, GeneratorGame, Option


# ---------------------------------------------------------------------- the cards

START, KNIGHT, WIZARD, FORMATION, FINALE = range(5)
# abilities (none for start cards and formations)
NO_ABILITY, PHALANX, INVISIBLE, DOUBLE_POWER, CARD_DRAW, EXTRA, JOKER, DROP = range(8)
# formation conditions
STRAIGHT5, STRAIGHT4, FOUR_CARD, THREE_CARD, TWO_PAIR, ONE_PAIR, SEVEN_X = range(7)

COLORS = ("red", "blue", "yellow", "green")

# (name, copies, kind, number, PLAY-timing ability, FIGHT-timing ability, points, formation)
_CARDS = [(f"{color.capitalize()} {k}", 1, START, k, NO_ABILITY, NO_ABILITY, 0, None)
          for color in COLORS for k in range(1, 6)]
_CARDS += [(f"Black Knight {k}", 3, KNIGHT, k, NO_ABILITY, PHALANX, 0, None) for k in range(1, 6)]
_CARDS += [
    ("Invisible (1)", 2, WIZARD, 1, INVISIBLE, NO_ABILITY, 0, None),
    ("Double Power (2)", 2, WIZARD, 2, NO_ABILITY, DOUBLE_POWER, 0, None),
    ("Card Draw (3)", 2, WIZARD, 3, CARD_DRAW, NO_ABILITY, 0, None),
    ("Extra (4)", 2, WIZARD, 4, EXTRA, NO_ABILITY, 0, None),
    ("Joker (5)", 2, WIZARD, 5, NO_ABILITY, JOKER, 0, None),
    ("Drop (9)", 2, WIZARD, 9, DROP, NO_ABILITY, 0, None),
    ("Straight 5 [15]", 1, FORMATION, None, NO_ABILITY, NO_ABILITY, 15, STRAIGHT5),
    ("Straight 4 [6]", 2, FORMATION, None, NO_ABILITY, NO_ABILITY, 6, STRAIGHT4),
    ("Four Card [10]", 1, FORMATION, None, NO_ABILITY, NO_ABILITY, 10, FOUR_CARD),
    ("Three Card [6]", 2, FORMATION, None, NO_ABILITY, NO_ABILITY, 6, THREE_CARD),
    ("Two Pair [6]", 2, FORMATION, None, NO_ABILITY, NO_ABILITY, 6, TWO_PAIR),
    ("One Pair [3]", 2, FORMATION, None, NO_ABILITY, NO_ABILITY, 3, ONE_PAIR),
    ("Seven X [3]", 2, FORMATION, None, NO_ABILITY, NO_ABILITY, 3, SEVEN_X),
    ("FINAL BATTLE", 1, FINALE, None, NO_ABILITY, NO_ABILITY, 0, None),
]

NAME, KIND, NUMBER, PLAY_ABILITY, FIGHT_ABILITY, POINTS, CONDITION = [], [], [], [], [], [], []
for _name, _copies, _kind, _number, _play, _fight, _points, _cond in _CARDS:
    for _ in range(_copies):
        NAME.append(_name)
        KIND.append(_kind)
        NUMBER.append(_number)
        PLAY_ABILITY.append(_play)
        FIGHT_ABILITY.append(_fight)
        POINTS.append(_points)
        CONDITION.append(_cond)
NCARDS = len(NAME)                                              # 60
START_CARDS = [list(range(5 * k, 5 * k + 5)) for k in range(4)]  # by colour, in card order
RECRUIT_CARDS = [c for c in range(NCARDS) if KIND[c] in (KNIGHT, WIZARD, FORMATION)]
FINAL_BATTLE = KIND.index(FINALE)

# Options are immutable: one per card (and per card played face down), made once.
CARD_OPTION = [Option(NAME[c], c) for c in range(NCARDS)]
FACE_DOWN_OPTION = [Option(NAME[c] + " (face down)", c) for c in range(NCARDS)]
END_TURN = Option("End turn", None)
PASS = Option("Pass", None)
JOKER_OPTIONS = tuple(Option(str(k), k) for k in range(1, 6))
TAKE_OPTIONS = (Option("Take it", True), Option("Put it at the bottom of the recruit deck", False))


def card_options(cards, table=CARD_OPTION) -> list:
    """One option per card name (the first card of each name), in the cards' order."""
    seen = set()
    out = []
    for c in cards:
        option = table[c]
        if option.label not in seen:
            seen.add(option.label)
            out.append(option)
    return out


def formation_met(cond: int, nums: list, counts: dict) -> bool:
    if cond == STRAIGHT5 or cond == STRAIGHT4:
        n = 5 if cond == STRAIGHT5 else 4
        return any(all(k + j in counts for j in range(n)) for k in counts)
    if cond == FOUR_CARD:
        return max(counts.values(), default=0) >= 4
    if cond == THREE_CARD:
        return max(counts.values(), default=0) >= 3
    if cond == TWO_PAIR:
        return sum(1 for m in counts.values() if m >= 2) >= 2
    if cond == ONE_PAIR:
        return any(m >= 2 for m in counts.values())
    if cond == SEVEN_X:
        total = sum(nums)
        return total > 0 and total % 7 == 0
    return False


# ---------------------------------------------------------------------- the game

class GiantKingTable(GeneratorGame):
    """What every Python Giant King shares: the player count, the options, the generator."""

    def __init__(self, players: int = 4, seed: int = 0, laps: int = 2, max_cards_per_turn: int = 3):
        if not 3 <= players <= 4:
            raise ValueError(f"Giant King is for 3 to 4 players, not {players}")
        self.players = players
        self.seed = seed
        self.laps = laps
        self.max_cards = max_cards_per_turn
        self.rng = R.seed_state(seed)
        self._start()


class Game(GiantKingTable):

    # ------------------------------------------------------------------ the rules
    def _play(self):
        n = self.players
        seats = range(n)
        self.deck = [list(START_CARDS[p]) for p in seats]
        self.hand = [[] for _ in seats]
        self.row = [[] for _ in seats]
        self.discard = [[] for _ in seats]
        self.formations = [[] for _ in seats]
        self.power = [0] * n
        self.played = [0] * n
        self.passed = [False] * n
        self.unseen = [False] * n
        self.facedown = [False] * n        # a card in the row lies face down (played after Invisible)
        self.extra_plays = [0] * n
        self.highest = [0] * n             # the highest number in the row
        self.rewards = []
        recruit = self.recruit = list(RECRUIT_CARDS)
        self.rng = R.shuffle(recruit, self.rng)
        # FINAL BATTLE is shuffled into the bottom six cards of the recruit deck.
        bottom = recruit[:5] + [FINAL_BATTLE]
        del recruit[:5]
        self.rng = R.shuffle(bottom, self.rng)
        recruit[0:0] = bottom
        self.start, self.rng = R.below(self.rng, n)
        self.final_battle = False

        while True:
            self._prepare_round()
            if self.final_battle:
                break
            yield from self._play_round()
            yield from self._fight()
            yield from self._take_rewards()
            yield from self._rebuild_decks()
            if self.final_battle:
                break

        # The final battle.
        for p in seats:
            deck = self.deck[p]
            deck += self.discard[p]
            deck += self.hand[p]
            self.discard[p] = []
            self.hand[p] = []
            self.rng = R.shuffle(deck, self.rng)
            self._draw(p, 5)
        yield from self._play_round()
        yield from self._fight()
        order = self._ranking()
        power = self.power
        self.result = {"ranking": [p + 1 for p in order], "scores": {str(p + 1): power[p] for p in seats},
                       "winner": order[0] + 1, "outcome": None}

    def _draw(self, p: int, k: int) -> None:
        deck, hand = self.deck[p], self.hand[p]
        for _ in range(min(k, len(deck))):
            hand.append(deck.pop())

    def _order_from_start(self) -> list:
        n, s = self.players, self.start
        return [(s + k) % n for k in range(n)]

    def _prepare_round(self) -> None:
        hand = self.hand
        for p in self._order_from_start():
            self._draw(p, 5 - len(hand[p]))
        recruit = self.recruit
        for _ in range(sum(1 for h in hand if h) - 1):
            if not recruit:
                break
            c = recruit.pop()
            if c == FINAL_BATTLE:
                self.final_battle = True
                return
            self.rewards.append(c)

    def _play_round(self):
        n = self.players
        self.played = [0] * n
        self.passed = [False] * n
        self.unseen = [False] * n
        self.extra_plays = [0] * n
        hand, passed = self.hand, self.passed
        active = [p for p in self._order_from_start() if hand[p]]
        for _ in range(self.laps):
            for p in active:
                if not passed[p]:
                    yield from self._take_turn(p, False)
            if all(passed[p] for p in active):
                break
        # Extra: one more play per Extra card, after everyone's turns.
        extra_plays = self.extra_plays
        for p in active:
            while extra_plays[p] > 0:
                extra_plays[p] -= 1
                yield from self._take_turn(p, True)

    def _take_turn(self, p: int, extra: bool):
        hand = self.hand[p]
        k = 0
        while k < self.max_cards:
            if self.unseen[p]:
                if not hand:
                    break
                options = card_options(hand, FACE_DOWN_OPTION)
            else:
                high = self.highest[p]
                options = card_options([c for c in hand if NUMBER[c] >= high])
                if not options:
                    break
            if k > 0:
                options.append(END_TURN)
            elif extra or self.played[p] > 0:
                options.append(PASS)
            if len(options) == 1:
                c = options[0].value
            else:
                c = yield Decision(p, "Play a card", options)
            if c is None:
                break
            self._play_card(p, c)
            k += 1
        if k == 0 and not extra:
            self.passed[p] = True

    def _play_card(self, p: int, c: int) -> None:
        hand = self.hand[p]
        hand.remove(c)
        self.row[p].append(c)
        self.played[p] += 1
        if NUMBER[c] > self.highest[p]:
            self.highest[p] = NUMBER[c]
        if self.unseen[p]:
            self.facedown[p] = True             # face down: its PLAY ability does nothing
            return
        ability = PLAY_ABILITY[c]
        if ability == NO_ABILITY:
            return
        if ability == INVISIBLE:
            self.unseen[p] = True
        elif ability == CARD_DRAW:
            self._draw(p, 1)
        elif ability == EXTRA:
            self.extra_plays[p] += 1
        elif ability == DROP:
            self.discard[p] += hand
            hand.clear()

    def _fight(self):
        power = self.power
        for p in self._order_from_start():
            row = self.row[p]
            if not row:
                power[p] = 0
                continue
            if self.facedown[p]:
                # The cards are turned face up and the owner arranges the row, left to right.
                self.facedown[p] = False
                pool = list(row)
                order = []
                size = len(row)
                while pool:
                    options = card_options(pool)
                    if len(options) == 1:
                        c = options[0].value
                    else:
                        c = yield Decision(p, f"Arrange your row (left to right) ({len(order) + 1} of {size})",
                                           options)
                    order.append(c)
                    pool.remove(c)
                row[:] = order
            values = [NUMBER[c] for c in row]
            knights = 0
            for i, c in enumerate(row):
                ability = FIGHT_ABILITY[c]
                if ability == PHALANX:
                    knights += 1
                elif ability == JOKER:
                    values[i] = yield Decision(p, "Joker: which number does it count as?", JOKER_OPTIONS)
            # Double Power: the next card in the row counts double (for power, not formations).
            total = values[0]
            for i in range(1, len(row)):
                total += 2 * values[i] if FIGHT_ABILITY[row[i - 1]] == DOUBLE_POWER else values[i]
            if knights >= 2:                    # Phalanx
                total += knights
            forms = self.formations[p]
            if forms:
                counts = {}
                for v in values:
                    counts[v] = counts.get(v, 0) + 1
                for f in forms:
                    if formation_met(CONDITION[f], values, counts):
                        total += POINTS[f]
            power[p] = total

    def _ranking(self) -> list:
        n, s, power = self.players, self.start, self.power
        return sorted(range(n), key=lambda p: (-power[p], (p - s) % n))

    def _take_rewards(self):
        order = self._ranking()
        rewards, played = self.rewards, self.played
        for p in order:
            if not rewards:
                break
            if played[p] == 0:
                continue                        # no reward for a player who played nothing
            options = card_options(rewards)
            if len(options) == 1:
                c = options[0].value
            else:
                c = yield Decision(p, "Take a reward card", options)
            rewards.remove(c)
            (self.formations if KIND[c] == FORMATION else self.discard)[p].append(c)
        if rewards:
            self.recruit[0:0] = rewards
            rewards.clear()
        if played[order[0]] > 0:
            self.start = order[0]
        for p in range(self.players):
            self.discard[p] += self.row[p]
            self.row[p].clear()
            self.highest[p] = 0

    def _rebuild_decks(self):
        n = self.players
        hand, deck, discard = self.hand, self.deck, self.discard
        holders = [p for p in range(n) if hand[p] or deck[p]]
        if len(holders) == 1:
            p = holders[0]
            if self.recruit:
                c = self.recruit.pop()
                if c == FINAL_BATTLE:
                    self.final_battle = True
                    return
                if (yield Decision(p, NAME[c], TAKE_OPTIONS)):
                    (self.formations if KIND[c] == FORMATION else discard)[p].append(c)
                else:
                    self.recruit.insert(0, c)
            discard[p] += hand[p]
            discard[p] += deck[p]
            hand[p] = []
            deck[p] = []
        if not any(hand) and not any(deck):
            for p in range(n):
                deck[p] = discard[p]
                discard[p] = []
                self.rng = R.shuffle(deck[p], self.rng)
