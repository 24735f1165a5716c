"""The engine API: snapshots, JSON save/resume, determinism, observations, the step limit."""

from __future__ import annotations

import glob
import json
import os

import pytest

from rulesvm import api
from rulesvm.dsl.diagnostics import DiagnosticError
from rulesvm.interpreter import IllegalMove, Match, RunawayError
from rulesvm.interpreter.rng import below, seed_state

from .conftest import ROOT, load
from .helpers import random_playout, write_game


def _advance(match, state, k):
    for _ in range(k):
        if match.is_over:
            break
        i, state = below(state, len(match.legal_options))
        match.apply(i)
    return state


def _fingerprint(match) -> str:
    return json.dumps(match.to_json()["state"], sort_keys=True)


def test_snapshot_restore_gives_identical_continuations(giant_king):
    match = api.new_game(giant_king, 4, 5)
    _advance(match, seed_state(1), 30)
    snap = match.snapshot()
    before = _fingerprint(match)
    random_playout(match, 99)
    end_a = (match.result, match.decisions_made, _fingerprint(match))
    match.restore(snap)
    assert _fingerprint(match) == before
    random_playout(match, 99)
    assert (match.result, match.decisions_made, _fingerprint(match)) == end_a


def test_snapshot_is_independent_of_the_running_game(giant_king):
    match = api.new_game(giant_king, 4, 5)
    snap = match.snapshot()
    frozen = json.dumps(snap and match.to_json()["state"], sort_keys=True)
    _advance(match, seed_state(3), 20)
    match.restore(snap)
    assert json.dumps(match.to_json()["state"], sort_keys=True) == frozen


def test_json_save_and_resume_gives_identical_continuation(giant_king):
    match = api.new_game(giant_king, 3, 8)
    _advance(match, seed_state(2), 25)
    saved = json.loads(json.dumps(match.to_json()))        # through real JSON text
    resumed = Match.from_json(giant_king.program, saved)
    assert resumed.decision == match.decision
    random_playout(match, 5)
    random_playout(resumed, 5)
    assert resumed.result == match.result
    assert resumed.decisions_made == match.decisions_made


def test_resume_rejects_changed_game_files(giant_king):
    match = api.new_game(giant_king, 3, 8)
    saved = match.to_json()
    saved["fingerprint"] = "0" * 16
    with pytest.raises(ValueError, match="different game files"):
        Match.from_json(giant_king.program, saved)


def test_same_seed_same_choices_same_log(giant_king):
    logs = []
    for _ in range(2):
        lines = []
        m = api.new_game(giant_king, 4, 42, sink=lambda r: lines.append(json.dumps(r, sort_keys=True)))
        random_playout(m, 7)
        logs.append(lines)
    assert logs[0] == logs[1]
    assert any('"type": "decision"' in line for line in logs[0])


def test_different_seeds_shuffle_differently(giant_king):
    a = api.new_game(giant_king, 4, 1).observation(-1)["vars"]
    decks = {json.dumps(api.new_game(giant_king, 4, s).to_json()["state"]["zones"]) for s in range(5)}
    assert len(decks) == 5
    assert a["round_number"] == 1


def test_observation_hides_other_hands_and_decks(giant_king):
    match = api.new_game(giant_king, 4, 3)
    seat = match.current_player
    obs = match.observation(seat)
    me, other = str(seat + 1), str((seat + 1) % 4 + 1)
    assert "cards" in obs["zones"]["hand"][me]
    assert "cards" not in obs["zones"]["hand"][other]
    assert obs["zones"]["hand"][other]["count"] == 5
    assert "cards" not in obs["zones"]["deck"][me]
    assert "cards" not in obs["zones"]["recruit"]
    text = json.dumps(obs)
    other_cards = [match.program.card_ids[c] for c in match.state.zones[match.program.zone_index("hand", int(other) - 1)]]
    assert other_cards and not any(f'"{cid}"' in text for cid in other_cards)
    assert "decision" in obs
    assert "decision" not in match.observation((seat + 1) % 4)


def test_observation_hides_face_down_cards_from_others_but_not_owner(giant_king):
    match = api.new_game(giant_king, 4, 3)
    prog = match.program
    seat = match.current_player
    row = prog.zone_index("row", seat)
    card = match.state.zones[prog.zone_index("hand", seat)][0]
    match.rt.move([card], row, False, "down")
    mine = match.observation(seat)["zones"]["row"][str(seat + 1)]["cards"][0]
    theirs = match.observation((seat + 1) % 4)["zones"]["row"][str(seat + 1)]["cards"][0]
    assert mine["id"] == prog.card_ids[card] and mine["facedown"]
    assert theirs == {"facedown": True, "back": "start"}       # Giant King has start and recruit backs


def test_illegal_answers_are_rejected(giant_king):
    match = api.new_game(giant_king, 4, 3)
    with pytest.raises(IllegalMove):
        match.apply(len(match.legal_options))
    with pytest.raises(IllegalMove, match="not a legal option"):
        match.apply_label("No Such Card")
    assert match.decisions_made == 0


def test_runaway_rule_is_stopped_with_its_position():
    game = load(os.path.join(ROOT, "tests", "games", "runaway.yaml"))
    match = api.new_game(game, 1, 0, max_steps=5000)
    assert [o.label for o in match.legal_options] == ["go", "stop"]
    with pytest.raises(RunawayError) as info:
        match.apply_label("go")
    err = info.value
    assert err.span.file.endswith("runaway.rules") and err.span.line == 8
    assert "5000 steps" in err.message
    assert err.seed == 0 and err.decision == 1
    assert "runaway.rules:8" in err.describe() and "the game block" in err.describe()


def test_game_that_stops_cleanly_with_stop():
    game = load(os.path.join(ROOT, "tests", "games", "runaway.yaml"))
    match = api.new_game(game, 1, 0)
    match.apply_label("stop")
    assert match.result["scores"] == {"1": 0}


def test_player_count_outside_range_is_refused(giant_king):
    with pytest.raises(ValueError, match="3 to 4 players"):
        api.new_game(giant_king, 5, 0)


def test_clone_is_independent(giant_king):
    match = api.new_game(giant_king, 4, 9)
    twin = match.clone()
    random_playout(twin, 1)
    assert twin.is_over and not match.is_over
    random_playout(match, 1)
    assert match.result == twin.result


FRUITS = "- {id: apple, kind: fruit, name: Apple}\n- {id: pear, kind: fruit, name: Pear}\n" \
         "- {id: plum, kind: fruit, name: Plum}"


def test_observation_names_the_cards_a_choose_many_picked(tmp_path):
    """A seat choosing several cards sees the ones it picked so far by name, not by number."""
    path = write_game(tmp_path,
        "kind fruit { }\nzone hand: per_player, visible(owner)\n"
        "setup { move(box, hand(players[0])) }\n"
        "game {\n  let picked = choose_many(hand(players[0]), by: players[0], min: 2, max: 2)\n"
        "  end_game(scores: [count(picked)])\n}\n", cards=FRUITS)
    match = api.new_game(api.load_game(path), seed=1)
    first = match.decision.labels.index("Pear")
    match.apply(first)
    assert match.observation(0)["decision"]["picked"] == ["Pear"]


def test_labels_never_name_a_card_the_decider_cannot_see(tmp_path):
    """Picking blind from a face-down row: the seat's labels say "face-down card K"; the
    full decision (logs, replays) keeps the names, and a visible card keeps its name."""
    path = write_game(tmp_path,
        "kind fruit { }\nzone row: ordered, visible(all)\nzone open: visible(all), faceup\n"
        "setup {\n  move(box, row, face: \"down\")\n  move(top(row), open)\n}\n"
        "game {\n  let c = choose(row + open, by: players[0], label: x => \"take {x}\")\n"
        "  end_game(scores: [1])\n}\n", cards=FRUITS)
    match = api.new_game(api.load_game(path), seed=1)
    full = match.decision.labels
    seen = match.decision_for(0).labels
    assert sorted(full) == ["take Apple", "take Pear", "take Plum"]
    assert seen[:2] == ["take face-down card 1", "take face-down card 2"]
    assert seen[2] == full[2] and seen[2] != "take face-down card 3"
    assert match.observation(0)["decision"]["options"] == seen
    from rulesvm.interpreter.agents.base import SeatView
    assert SeatView(match, 0).decision.labels == seen


def test_a_ranking_mixes_seats_and_tie_groups(tmp_path):
    """`end_game(ranking: [w, [a, b]])`: a winner, then two players tied; a mixed list
    literal anywhere else is still a type error."""
    path = write_game(tmp_path, "game {\n  end_game(ranking: [players[2], [players[0], players[1]]])\n}\n",
                      players=3)
    match = api.new_game(api.load_game(path), seed=1)
    assert match.result["ranking"] == [3, [1, 2]]
    path = write_game(tmp_path, "game {\n  let xs = [players[2], [players[0]]]\n  end_game(ranking: xs)\n}\n",
                      players=3)
    with pytest.raises(DiagnosticError) as info:
        api.load_game(path)
    assert [d.code for d in info.value.diagnostics] == ["E303"]


def test_tuple_types_in_annotations(tmp_path):
    path = write_game(tmp_path,
        "var best: tuple[int, text] = (0, \"none\")\n"
        "func label(plan: tuple[int, text]) -> text = \"{plan[1]} ({plan[0]})\"\n"
        "game {\n  best = (3, \"attack\")\n  log(label(best))\n  end_game(scores: [best[0]])\n}\n")
    lines = []
    match = api.new_game(api.load_game(path), seed=1,
                         sink=lambda r: lines.append(r.get("text")) if r["type"] == "log" else None)
    assert match.result["scores"] == {"1": 3} and "attack (3)" in lines
    path = write_game(tmp_path, "var best: list[int, text] = []\ngame { best = (1, \"x\") }\n")
    with pytest.raises(DiagnosticError) as info:
        api.load_game(path)
    assert "E301" in [d.code for d in info.value.diagnostics]


def test_shuffle_draws_exactly_what_below_draws():
    """`rng.shuffle` writes the generator out in one loop; it must draw exactly what the
    plain Fisher-Yates over `rng.below` draws (saved games and golden logs depend on it)."""
    from rulesvm.interpreter import rng as R

    def plain(items, state):
        for i in range(len(items) - 1, 0, -1):
            j, state = R.below(state, i + 1)
            items[i], items[j] = items[j], items[i]
        return state
    for seed in range(500):
        a, b = list(range(seed % 70)), list(range(seed % 70))
        state = R.seed_state(seed)
        assert R.shuffle(a, state) == plain(b, state)
        assert a == b


def test_a_move_watcher_sees_every_move_a_sink_sees():
    """`on_move` (card, from, to) sees exactly the cards the `move` events of a sink name, in
    order, for every launch game (including setup), without a sink's cost."""
    for path in sorted(glob.glob(os.path.join(ROOT, "games", "*.yaml"))):
        game = api.load_game(path)
        prog = game.program
        for seed in range(3):
            events, watched = [], []
            logged = api.new_game(game, None, seed, sink=events.append)
            api.play(logged, api.default_agents(logged, seed=seed))
            seen = api.new_game(game, None, seed,
                                 on_move=lambda c, a, b: watched.append((prog.card_ids[c], prog.zone_names[a],
                                                                         prog.zone_names[b])))
            api.play(seen, api.default_agents(seen, seed=seed))
            expected = [(c, a, e["to"]) for e in events if e["type"] == "move" for c, a in zip(e["cards"], e["from"])]
            assert watched == expected and expected, (path, seed)
            assert seen.result == logged.result
