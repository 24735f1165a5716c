"""`shuffle_into(cards, zone)`: each card goes to a random position of the zone (a card
shuffled into a deck); the cards already there keep their order; the position comes from
the game's seeded generator and is not written in the log."""

from __future__ import annotations

from collections import Counter

from rulesvm import api
from rulesvm.interpreter import RulesRuntimeError

from .helpers import write_game

CARDS = "\n".join(f"- {{id: c{k}, kind: unit}}" for k in range(1, 6)) + "\n- {id: x, kind: unit}"

RULES = """
kind unit { }
zone deck: ordered
zone hand: ordered
var moved_count: int = 0
on moved(c, src, dst) { moved_count += 1 }
setup {
  for c in box { if c.id != "x" { move(c, deck) } }
  move(card("x"), hand, face: "up")
}
game {
  shuffle_into(%s, deck, face: "down")
  end_game(scores: [moved_count])
}
"""


def _deck_after(tmp_path, target: str, seed: int, sink=None):
    game = api.load_game(write_game(tmp_path, RULES % target, cards=CARDS))
    match = api.new_game(game, 1, seed=seed, sink=sink)
    prog = match.program
    deck = [prog.card_ids[c] for c in match.state.zones[prog.zone_index("deck")]]
    return deck, match


def test_the_card_lands_anywhere_and_the_others_keep_their_order(tmp_path):
    positions = Counter()
    for seed in range(200):
        deck, match = _deck_after(tmp_path, 'card("x")', seed)
        assert [c for c in deck if c != "x"] == ["c1", "c2", "c3", "c4", "c5"]
        positions[deck.index("x")] += 1
        assert match.result["scores"] == {"1": 7}          # 6 moves in the setup, then this one
        assert not match.state.faceup[match.program.card_by_id["x"]]          # face: "down"
    assert set(positions) == set(range(6))                                    # every position happens
    assert min(positions.values()) > 10                                       # roughly uniform


def test_same_seed_same_position_and_the_log_keeps_it_secret(tmp_path):
    records = []
    first, _ = _deck_after(tmp_path, 'card("x")', 7, sink=records.append)
    again, _ = _deck_after(tmp_path, 'card("x")', 7)
    assert first == again
    move = [r for r in records if r["type"] == "move" and r["cards"] == ["x"] and r["to"] == "deck"]
    assert len(move) == 1 and move[0]["at"] == "random" and move[0]["from"] == ["hand"]


def test_several_cards_each_fire_moved_and_a_zone_moves_all_its_cards(tmp_path):
    deck, match = _deck_after(tmp_path, "hand", 3)
    assert sorted(deck) == ["c1", "c2", "c3", "c4", "c5", "x"]
    # The setup moved 6 cards; shuffle_into moved one more, each firing `moved`.
    assert match.result["scores"] == {"1": 7}


def test_into_none_is_a_runtime_error(tmp_path):
    rules = RULES.replace("shuffle_into(%s, deck", "let z = [deck, none][1]\n  shuffle_into(%s, z")
    try:
        api.new_game(api.load_game(write_game(tmp_path, rules % 'card("x")', cards=CARDS)), 1, seed=1)
    except RulesRuntimeError as exc:
        assert exc.code == "R008" and "`shuffle_into` to none" in exc.message
    else:
        raise AssertionError("shuffle_into to none should fail")
