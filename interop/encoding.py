"""A game's fixed action numbering and observation tensor, for learning tools (pipeline: running
game -> agents): what `interop/openspiel.py` and `interop/pettingzoo.py` share.

Research tools want a fixed set of action ids per game, so a policy is comparable from one state
to the next, and a fixed-size tensor per observation. A game's `ActionSpace` and
`ObservationEncoder` are made once per load from its `survey`: seeded random games (always the
same ones) collect the values its decisions offer and the texts its variables hold. Action ids,
in blocks (docs/research.md#action-numbering):

    0                        `choose_many`'s "done"
    1 .. C                   a card the seat sees or knows: 1 + its index in the card table
    C+1 .. C+W               the k-th option that is a card the seat does not know (no id leaks it)
    C+W+1 .. C+W+V           every other value a decision offered in the survey (sorted keys)
    C+W+V+1 .. C+2W+V        the k-th option whose value the survey never met

(C cards, W the widest decision met, doubled; V values.) An observation tensor is built from
`Match.observation(seat)` only, so it holds what the seat sees and knows, never more.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from rulesvm.interpreter.knowledge import knows
from rulesvm.interpreter.observation import HIDDEN_CARD
from rulesvm.interpreter.rng import below, seed_state
from rulesvm.interpreter.state import DONE


SURVEY_GAMES = 48           # seeded random games played to learn a game's values
MIN_WIDTH = 16              # the hidden-card and unmet-value blocks hold at least this many options


class EncodingError(Exception):
    """A decision the game's encoding cannot number (wider than any the survey met)."""


def value_key(value_type: str, value) -> str:
    """The stable key of an option value that is not a card: its type and its JSON form."""
    return f"{value_type}:{json.dumps(_plain(value), sort_keys=True)}"


def _plain(value):
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


@dataclass
class Survey:
    """What seeded random games of a game showed: its option values, widths, lengths, returns."""
    values: set = field(default_factory=set)
    texts: set = field(default_factory=set)
    width: int = 0
    chance_width: int = 0
    longest: int = 0
    secret: bool = False
    returns: list = field(default_factory=list)


def survey(new_match, returns_of, games: int = SURVEY_GAMES) -> Survey:
    """Play `games` seeded random games (`new_match(seed)` starts one) and note what they show."""
    seen = Survey()
    for seed in range(games):
        match = new_match(seed)
        state = seed_state(seed)
        steps = 0
        while not match.is_over:
            d = match.decision
            if d.kind == "chance":
                seen.chance_width = max(seen.chance_width, len(d.options))
            else:
                seen.width = max(seen.width, len(d.options))
                seen.secret = seen.secret or d.secret
                if d.value_type != "card":
                    seen.values.update(value_key(d.value_type, o.value) for o in d.options if o.value != DONE)
                _note_texts(match.state, seen.texts)
            index, state = below(state, len(d.options))
            match.apply(index)
            steps += 1
        seen.longest = max(seen.longest, steps)
        seen.returns.append(returns_of(match.result))
    return seen


def _note_texts(st, texts: set) -> None:
    for v in st.gvars:
        if isinstance(v, str):
            texts.add(v)
    for row in st.pvars:
        texts.update(v for v in row if isinstance(v, str))


class ActionSpace:
    """The fixed numbering of one game's actions (see the module's docstring)."""

    def __init__(self, program, seen: Survey):
        self.program = program
        self.cards = len(program.card_ids)
        self.width = max(MIN_WIDTH, 2 * seen.width)
        self.values = sorted(seen.values)
        self.value_ids = {key: i for i, key in enumerate(self.values)}
        self.hidden_base = 1 + self.cards
        self.value_base = self.hidden_base + self.width
        self.other_base = self.value_base + len(self.values)
        self.size = self.other_base + self.width

    def actions(self, match, seat: int) -> list[int]:
        """The action id of each option of the pending decision, in option order, as `seat` names them."""
        d = match.decision
        st = match.state
        out = []
        hidden = other = 0
        for o in d.options:
            if o.value == DONE:
                action = 0
            elif d.value_type == "card" and _is_card(o.value, self.cards):
                if knows(self.program, st, o.value, seat):
                    action = 1 + o.value
                else:
                    action = self.hidden_base + hidden
                    hidden += 1
            else:
                i = self.value_ids.get(value_key(d.value_type, o.value))
                action = self.value_base + i if i is not None else -1
            if action < 0 or action in out:
                # A value the survey never met, or offered twice in one decision: by position.
                action = self.other_base + other
                other += 1
            out.append(action)
        if max(hidden, other) > self.width:
            raise EncodingError(f"a decision of {len(d.options)} options at decision {st.decisions + 1} is wider "
                                f"than this game's encoding allows ({self.width}); load the game again with a "
                                "larger `survey_games`")
        return out

    def describe(self, action: int) -> str:
        """What an action id stands for, the same in every state."""
        if action == 0:
            return "done"
        if action < self.hidden_base:
            return f"card {self.program.card_ids[action - 1]}"
        if action < self.value_base:
            return f"face-down card {action - self.hidden_base + 1}"
        if action < self.other_base:
            return self.values[action - self.value_base]
        return f"other option {action - self.other_base + 1}"


def _is_card(value, cards: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < cards


@dataclass(frozen=True)
class Piece:
    """One named part of the observation tensor: where it starts, its shape."""
    name: str
    start: int
    shape: tuple
    size: int


class ObservationEncoder:
    """A seat's observation (`Match.observation(seat)`) as one flat float32 tensor.

    Pieces: the seat (one-hot), whose decision it is (one-hot), how many cards each zone
    holds, where each card lies as far as the seat sees or knows it (cards x zones, one-hot),
    each such card's face (face down, quarter turns), and the variables the seat may read
    (numbers as they are; booleans 0/1; players by number; a card by 1 + its index, -1 when
    hidden; a zone by 1 + its index; a text by 1 + its index among the texts the survey met;
    a list by its length).
    """

    def __init__(self, program, players: int, seen: Survey):
        self.program = program
        self.players = players
        self.card_index = {cid: i for i, cid in enumerate(program.card_ids)}
        self.zone_index = {name: i for i, name in enumerate(program.zone_names)}
        self.text_index = {t: i for i, t in enumerate(sorted(seen.texts))}
        model = program.model
        self.gvars = [v.name for v in model.vars_of("global")]
        self.pvars = [v.name for v in model.vars_of("player")]
        ncards, nzones = len(program.card_ids), program.nzones
        shapes = [("seat", (players,)), ("to_move", (players,)), ("zone_counts", (nzones,)),
                  ("card_zones", (ncards, nzones)), ("card_faces", (ncards, 2)),
                  ("global_vars", (len(self.gvars),)), ("player_vars", (len(self.pvars), players))]
        self.pieces, start = [], 0
        for name, shape in shapes:
            piece = Piece(name, start, shape, int(np.prod(shape)))
            self.pieces.append(piece)
            start += piece.size
        self.size = start

    def encode(self, obs: dict, out: np.ndarray) -> None:
        """Write the observation `obs` into `out` (a float32 array of `size`)."""
        out.fill(0.0)
        views = {p.name: out[p.start:p.start + p.size].reshape(p.shape) for p in self.pieces}
        if obs.get("seat"):
            views["seat"][obs["seat"] - 1] = 1.0
        deciding = obs.get("decision") or obs.get("waiting_for")
        if deciding and isinstance(deciding.get("player"), int) and 1 <= deciding["player"] <= self.players:
            views["to_move"][deciding["player"] - 1] = 1.0
        for zone, view in self._zone_views(obs["zones"]):
            views["zone_counts"][zone] = view.get("count", 0)
            for card in view.get("cards", ()):
                self._place(views, card, zone)
        for card in obs.get("known", ()):
            self._place(views, card, self.zone_index[card["zone"]])
        for i, name in enumerate(self.gvars):
            views["global_vars"][i] = self._scalar(obs["vars"].get(name))
        for i, name in enumerate(self.pvars):
            for seat, value in obs["player_vars"].get(name, {}).items():
                views["player_vars"][i, int(seat) - 1] = self._scalar(value)

    def _place(self, views: dict, card: dict, zone: int) -> None:
        c = self.card_index.get(card.get("id"))
        if c is None:
            return
        views["card_zones"][c, zone] = 1.0
        views["card_faces"][c] = (1.0 if card.get("facedown") or card.get("side") == "back" else 0.0,
                                  card.get("turn", 0) / 90.0)

    def _zone_views(self, zones: dict):
        """(zone index, view) for every zone of the observation, in the program's order."""
        for info in self.program.zones:
            value = zones[info.name]
            if info.per_player:
                for p in range(self.players):
                    yield from _family(info, info.base + p * info.size, value[str(p + 1)])
            else:
                yield from _family(info, info.base, value)

    def _scalar(self, value) -> float:
        if value is None:
            return 0.0
        if isinstance(value, bool):
            return float(value)
        if isinstance(value, (int, float)):
            return float(value)
        if isinstance(value, list):
            return float(len(value))
        if value == HIDDEN_CARD:
            return -1.0
        for table in (self.card_index, self.zone_index, self.text_index):
            if value in table:
                return 1.0 + table[value]
        return -1.0


def _family(info, first: int, value):
    if not info.dims:
        yield first, value
        return
    flat = value if len(info.dims) == 1 else [v for row in value for v in row]
    for k, view in enumerate(flat):
        yield first + k, view


def observation_string(obs: dict) -> str:
    """An observation as one line of canonical JSON (the key of an information state)."""
    return json.dumps(obs, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
