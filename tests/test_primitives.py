"""The primitive registry (dsl/primitives.py) and its implementations
(interpreter/builtins.py) agree: every entry has one implementation and no implementation
lacks an entry, and the flags the compiler relies on (`moves_cards`, `random`,
`decision`, `runs_ability`, `turns_card`) say what a call really does. Each primitive is
called once in a tiny game and compared with the same game without the call."""

from __future__ import annotations

import pytest

from rulesvm import api
from rulesvm.dsl import primitives as R
from rulesvm.dsl.primitives import PRIMITIVES
from rulesvm.interpreter.builtins import IMPLS

from .helpers import write_game

# One statement calling each primitive. The cards are a, b, c (kind `unit`), all in `pile`.
CALLS = {
    "count": "let x = count(pile)",
    "sum": "let x = sum([1, 2])",
    "max": "let x = max([1, 2])",
    "min": "let x = min([1, 2])",
    "any": "let x = any([true, false])",
    "all": "let x = all([true, false])",
    "sorted": "let x = sorted([2, 1, 3], key: v => -v)",
    "reversed": "let x = reversed([1, 2])",
    "distinct": "let x = distinct([1, 1, 2])",
    "multiplicities": "let x = multiplicities([1, 1, 2])",
    "product": "let x = product([[1, 2], [3]])",
    "permutations": "let x = permutations([1, 2, 3], 2)",
    "join": 'let x = join(["a", "b"], ", ")',
    "flatten": "let x = flatten([[1], [2, 3]])",
    "first": "let x = first(pile)",
    "last": "let x = last(pile)",
    "slice": "let x = slice([1, 2, 3], 0, 2)",
    "index_of": "let x = index_of([1, 2], 2)",
    "abs": "let x = abs(-3)",
    "sign": "let x = sign(-3)",
    "clamp": "let x = clamp(5, 0, 3)",
    "text": "let x = text(12)",
    "digits": "let x = digits(120)",
    "next_player": "let x = next_player(player(1))",
    "players_from": "let x = players_from(player(2))",
    "distance": "let x = distance(player(1), player(2))",
    "player": "let x = player(2)",
    "opponent": "let x = opponent(player(1))",
    "top": "let x = top(pile)",
    "bottom": "let x = bottom(pile)",
    "owner": 'let x = owner(card("a"))',
    "zone_of": 'let x = zone_of(card("a"))',
    "position": 'let x = position(card("b"))',
    "zone_index": "let x = zone_index(pile)",
    "zone_owner": "let x = zone_owner(hand(player(1)))",
    "field_at": 'let x = field_at(card("a"), "power")',
    "name_at": 'let x = name_at(card("a"))',
    "cards_of_kind": 'let x = cards_of_kind("unit")',
    "card": 'let x = card("c")',
    "roll": "let x = roll(6)",
    "random_pick": "let x = random_pick([1, 2, 3])",
    "move": 'move(card("a"), other)',
    "draw": "let x = draw(pile, other, 2)",
    "shuffle": "shuffle(pile)",
    "shuffle_into": 'shuffle_into(card("a"), other)',
    "flip": 'flip(card("a"))',
    "face_up": 'face_up(card("a"))',
    "face_down": 'face_down(card("a"))',
    "rotate": 'rotate(card("a"))',
    "set_turn": 'set_turn(card("a"), 90)',
    "log": 'log("hello")',
    "reveal": 'reveal(card("a"), to: player(1))',
    "end_game": "end_game(scores: [1, 2])",
    "use": 'use(card("a").ability, card("a"), player(1))',
    "choose": "let x = choose([1, 2], by: player(1))",
    "choose_many": "let x = choose_many([1, 2], by: player(1))",
}

RULES = """\
kind unit { power: int; ability: ability }
zone pile: ordered
zone other: ordered
zone hand: per_player
var moves: int = 0
ability ask { let y = choose([1, 2], by: you) }
on moved(c, src, dst) { moves += 1 }
setup { move(box, pile) }
game {
  %s
  end_game(scores: [0, 0])
}
"""
CARDS = "\n".join(f"- {{id: {c}, kind: unit, power: 1, ability: ask}}" for c in "abc")


def _play(tmp_path, statement: str) -> dict:
    """Run the game with one statement; what it did, as far as the flags can tell."""
    records = []
    game = api.load_game(write_game(tmp_path, RULES % statement, players=2, cards=CARDS))
    match = api.new_game(game, 2, seed=3, sink=records.append)
    moves = match.state.gvars[[v.name for v in match.program.model.vars_of("global")].index("moves")]
    return {"rng": match.state.rng, "moves": moves, "paused": not match.is_over,
            "records": [r["type"] for r in records], "lie": (list(match.state.faceup), list(match.state.turn))}


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    return _play(tmp_path_factory.mktemp("baseline"), "")


def test_every_primitive_has_one_implementation_and_every_implementation_an_entry():
    assert set(PRIMITIVES) - set(IMPLS) == set(), "primitives without an implementation in interpreter/builtins.py"
    assert set(IMPLS) - set(PRIMITIVES) == set(), "implementations of primitives the registry does not declare"
    assert all(callable(f) for f in IMPLS.values())


def test_every_primitive_is_called_here():
    assert set(CALLS) == set(PRIMITIVES), "give each primitive a call in CALLS"


def test_the_sets_of_names_are_the_flags():
    for name, spec in PRIMITIVES.items():
        assert (name in R.MOVING_PRIMITIVES) == spec.moves_cards
        assert (name in R.RANDOM_PRIMITIVES) == spec.random
        assert (name in R.PURE_PRIMITIVES) == spec.pure
        assert (name in R.DECISION_PRIMITIVES) == spec.decision == (spec.category == "decision")
        assert (name in R.ABILITY_PRIMITIVES) == spec.runs_ability
        assert (name in R.CARD_TURNING_PRIMITIVES) == spec.turns_card
        assert (name in R.STATEMENT_ONLY_PRIMITIVES) == spec.statement_only


def test_flags_are_consistent_with_the_categories():
    for spec in PRIMITIVES.values():
        if spec.category == "random":
            assert spec.random, spec.name
        if spec.pure:
            assert spec.category == "function", f"{spec.name}: a pure primitive is a function"
        if spec.moves_cards or spec.turns_card or spec.runs_ability:
            assert spec.statement_only, f"{spec.name} changes the game: an action"


@pytest.mark.parametrize("name", sorted(PRIMITIVES))
def test_flags_say_what_a_call_does(name, tmp_path, baseline):
    spec = PRIMITIVES[name]
    did = _play(tmp_path, CALLS[name])
    assert (did["rng"] != baseline["rng"]) == spec.random, \
        f"`{name}` {'does not draw' if spec.random else 'draws'} from the generator: fix `random`"
    assert (did["moves"] > baseline["moves"]) == spec.moves_cards, \
        f"`{name}` {'does not fire' if spec.moves_cards else 'fires'} `moved` triggers: fix `moves_cards`"
    # The game pauses where a player is asked: a decision, or an ability that asks.
    assert did["paused"] == (spec.decision or spec.runs_ability), name
    if spec.turns_card:
        assert [r for r in did["records"] if r not in baseline["records"]] == [name], name
    else:
        assert did["lie"] == baseline["lie"], f"`{name}` turns a card: fix `turns_card`"
