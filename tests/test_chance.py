"""Explicit chance (interpreter/chance.py): every random event as a decision of the chance
player, the same games as the seeded generator when sampled from it, and scenarios that
script the outcomes (testing/scripted_chance.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from rulesvm import api
from rulesvm.interpreter import CHANCE, IllegalMove, Match
from rulesvm.interpreter.rng import below, seed_state
from rulesvm.testing.scenario import run_scenario

from .conftest import ROOT
from .helpers import write_game

LAUNCH = ["alien_attack", "birthdays_fight", "giant_king", "mach_struggle", "ufo_abduction"]
TEST_GAME = os.path.join(ROOT, "tests", "games", "chance", "chance.yaml")


@pytest.fixture(scope="module")
def chance_game():
    return api.load_game(TEST_GAME)


def _chance_kinds(match) -> list[str]:
    """Answer chance decisions from the generator up to the next player decision; the random
    calls met, in order."""
    seen = []
    while match.is_chance():
        d = match.decision
        assert d.player == CHANCE and match.current_player == CHANCE and d.kind == "chance"
        outcomes = match.chance_outcomes()
        assert [i for i, _ in outcomes] == list(range(len(d.options)))
        assert sum(p for _, p in outcomes) == pytest.approx(1.0)
        seen.append(d.help)
        match.sample_chance()
    return seen


def test_each_random_primitive_is_a_chance_decision(chance_game):
    m = api.new_game(chance_game, seed=1, explicit_chance=True)
    # The setup shuffles 3 cards (2 draws: the top card, then the next), the game block rolls
    # two dice inside a function and picks a player.
    first = m.decision
    assert first.help == "shuffle(deck)" and first.value_type == "card"
    assert sorted(first.labels) == ["ace", "deuce", "trey"] and "card 1 from the top" in first.prompt
    assert _chance_kinds(m) == ["shuffle(deck)", "shuffle(deck)", "roll(6)", "roll(6)", "random_pick"]
    assert m.decision.player == 0 and not m.is_chance()
    m.apply_label("swap")
    d = m.decision
    # The hand's card goes back into the deck at a random height (deck: 1 card, 2 places).
    assert d.help == "shuffle_into(deck)" and d.labels == ["1", "0"]
    assert _chance_kinds(m) == ["shuffle_into(deck)", "random_pick"]
    assert m.is_over


def test_roll_outcomes_are_the_faces(chance_game):
    m = api.new_game(chance_game, seed=1, explicit_chance=True)
    while m.decision.help != "roll(6)":
        m.sample_chance()
    assert m.decision.labels == ["1", "2", "3", "4", "5", "6"]
    assert [o.value for o in m.decision.options] == [1, 2, 3, 4, 5, 6]
    m.apply_label("6")
    m.apply_label("5")
    assert m.decision.help == "random_pick" and m.decision.labels == ["Player 1", "Player 2"]
    m.apply_label("Player 2")
    assert m.state.gvars[m.program.model.vars["bonus"].index] == 1


def test_a_shuffle_deals_top_first_as_scripted(chance_game):
    m = api.new_game(chance_game, seed=1, explicit_chance=True)
    m.apply_label("deuce")          # the top card: Player 1 draws it
    assert sorted(m.decision.labels) == ["ace", "trey"] and "card 2 from the top" in m.decision.prompt
    m.apply_label("trey")           # the next one: Player 2's
    while m.is_chance():
        m.sample_chance()
    hands = [[m.program.card_ids[c] for c in m.state.zones[m.program.zone_index("hand", p)]] for p in (0, 1)]
    assert hands == [["deuce"], ["trey"]]


def test_off_by_default_and_outside_the_api(chance_game):
    m = api.new_game(chance_game, seed=1)
    assert not m.is_chance() and m.decision.player == 0
    with pytest.raises(IllegalMove):
        m.chance_outcomes()
    with pytest.raises(IllegalMove):
        m.sample_chance()
    data = m.to_json()
    assert "explicit_chance" not in data and "chance" not in data["state"]


def _play_both(game, seed: int):
    """The same game with the generator and with explicit chance sampled from it, the same
    seeded player choices; returns both matches and their logs."""
    logs_off, logs_on = [], []
    off = api.new_game(game, seed=seed, sink=logs_off.append)
    on = api.new_game(game, seed=seed, sink=logs_on.append, explicit_chance=True)
    choices = seed_state(seed + 100)
    while True:
        while on.is_chance():
            on.sample_chance()
        if off.is_over:
            break
        assert on.decision == off.decision
        i, choices = below(choices, len(off.decision.options))
        off.apply(i)
        on.apply(i)
    return off, on, logs_off, logs_on


@pytest.mark.parametrize("path", [os.path.join(ROOT, "games", f"{name}.yaml") for name in LAUNCH] + [TEST_GAME])
def test_sampled_chance_plays_the_same_games_as_the_generator(path):
    game = api.load_game(path)
    for seed in (0, 1, 2, 3):
        off, on, logs_off, logs_on = _play_both(game, seed)
        assert on.is_over and on.result == off.result
        assert json.dumps(logs_off) == json.dumps([r for r in logs_on if r["type"] != "chance"])
        data = on.to_json()
        assert data.pop("explicit_chance") is True
        assert data == off.to_json()


def test_launch_games_with_randomness_meet_chance_decisions():
    for name in ("giant_king", "ufo_abduction", "alien_attack"):
        m = api.new_game(api.load_game(os.path.join(ROOT, "games", f"{name}.yaml")), seed=0, explicit_chance=True)
        assert m.is_chance(), name


def test_snapshot_restore_clone_and_save_at_a_chance_node(chance_game):
    m = api.new_game(chance_game, seed=4, explicit_chance=True)
    m.sample_chance()
    assert m.is_chance()
    snap = m.snapshot()
    twin = m.clone()
    saved = Match.from_json(chance_game.program, json.loads(json.dumps(m.to_json())))
    assert saved.is_chance() and saved.decision == m.decision and saved.explicit_chance

    def finish(match):
        script = seed_state(9)
        while not match.is_over:
            i, script = below(script, len(match.decision.options))
            match.apply(i)
        return match.result, match.to_json()["state"]

    first = finish(m)
    assert finish(twin) == first
    assert finish(saved) == first
    m.restore(snap)
    assert m.is_chance()
    assert finish(m) == first


def test_observation_at_a_chance_node_hides_the_cards(chance_game):
    m = api.new_game(chance_game, seed=2, explicit_chance=True)
    m.sample_chance()                     # the top card is drawn; the next is asked
    for seat in (0, 1):
        obs = m.observation(seat)
        assert obs["waiting_for"] == {"player": None, "chance": True, "prompt": m.decision.prompt}
        text = json.dumps(obs)
        assert "ace" not in text and "deuce" not in text and "trey" not in text
        view = m.decision_for(seat)
        assert all(label.startswith("face-down card") for label in view.labels)
    # Seat -1 (a replay) sees the outcomes.
    assert sorted(m.decision_for(-1).labels) == sorted(m.decision.labels)
    # Once the stretch is over, each dealt card is seen by its owner only.
    while m.is_chance():
        m.sample_chance()
    own, other = (m.program.card_ids[m.state.zones[m.program.zone_index("hand", p)][0]] for p in (0, 1))
    text = json.dumps(m.observation(0))
    assert f'"{own}"' in text and f'"{other}"' not in text


def test_the_log_holds_chance_records_and_events_once(chance_game):
    log = []
    m = api.new_game(chance_game, seed=3, sink=log.append, explicit_chance=True)
    while m.is_chance():
        m.sample_chance()
    kinds = [r["type"] for r in log]
    assert kinds[0] == "start" and kinds.count("shuffle") == 1 and kinds.count("roll") == 2
    assert kinds.count("chance") == 5
    assert all(set(r) == {"type", "prompt", "choice", "label", "outcomes"} for r in log if r["type"] == "chance")


def test_a_random_variable_default_is_a_chance_decision(tmp_path):
    path = write_game(tmp_path, "var start: int = roll(4)\n"
                                "game {\n  end_game(winner: players[0], scores: [start])\n}\n")
    game = api.load_game(path)
    m = api.new_game(game, seed=5, explicit_chance=True)
    assert m.is_chance() and m.decision.help == "roll(4)"
    m.apply_label("3")
    assert m.is_over and m.result["scores"] == {"1": 3}
    assert api.new_game(game, seed=5).result == \
        (lambda x: (x.sample_chance(), x.result)[1])(api.new_game(game, seed=5, explicit_chance=True))


def test_a_random_call_in_a_decision_label_and_condition(tmp_path):
    path = write_game(tmp_path, "game {\n"
                                "  let n = choose([1, 2, 3], by: players[0], label: k => \"{k + roll(2)}\")\n"
                                "  if roll(3) == n { end_game(winner: players[0], scores: [1]) }\n"
                                "  end_game(winner: players[0], scores: [0])\n}\n")
    game = api.load_game(path)
    m = api.new_game(game, seed=1, explicit_chance=True)
    assert m.decision.help == "roll(2)"
    m.apply_label("1")        # the first option's label: 1 + 1
    m.apply_label("2")        # 2 + 2
    m.apply_label("1")        # 3 + 1: the same label as the second option, so one choice
    assert m.decision.player == 0 and m.decision.labels == ["2", "4"]
    m.apply(0)
    assert m.decision.help == "roll(3)"
    m.apply_label("1")
    assert m.result["scores"] == {"1": 1}


# ---------------------------------------------------------------------- scripted randomness

def _scenario(name):
    return run_scenario(os.path.join(ROOT, "tests", "scenarios", name))


def test_scripted_scenarios_pass():
    for name in ("scripted_roll", "scripted_into"):
        r = run_scenario(os.path.join(ROOT, "tests", "games", "chance", "scenarios", f"{name}.scenario.yaml"))
        assert r.passed, r.message


@pytest.mark.parametrize("name, where, words", [
    ("chance_impossible_roll", ":4:11:", "scripted die roll `7` is not a possible outcome of roll(6); possible: 1, 2"),
    ("chance_left_over", ":4:17:", "scripted die roll `3` was never used (1 left over)"),
    ("chance_no_such_card", ":5:18:", "error[E044]: no card has the id `aec` (did you mean `ace`?)"),
    ("chance_not_in_zone", ":5:12:", "`joker` cannot be the next card of the shuffle of deck"),
    ("chance_too_many_cards", ":5:30:", "deck was shuffled with 3 cards, but the scenario lists 4"),
    ("chance_strict", ":5:11:", "a shuffle of deck happened, but no scripted outcome is left for it (`strict: true`)"),
])
def test_scripted_outcomes_that_cannot_be_used_are_located(name, where, words):
    r = _scenario(f"{name}.scenario.yaml")
    assert not r.passed
    assert f"{name}.scenario.yaml{where}" in r.message and words in r.message, r.message


def test_unscripted_events_use_the_seed(tmp_path):
    """`chance:` with nothing scripted plays the seeded game: the same result as without it."""
    game = api.load_game(TEST_GAME)
    m = api.new_game(game, seed=6)
    while not m.is_over:
        m.apply(0)
    want = json.dumps({"winner": m.result["winner"], "scores": m.result["scores"]})
    for chance in ("", "chance: {}\n", "chance: {rolls: []}\n"):
        path = tmp_path / "s.scenario.yaml"
        path.write_text(f"game: {TEST_GAME}\nseed: 6\n{chance}steps:\n"
                        f"  - {{choose: 1}}\n  - expect_result: {want}\n")
        r = run_scenario(str(path))
        assert r.passed, (chance, r.message)


def test_play_draws_chance_from_the_seed_unless_an_agent_answers(chance_game):
    plain = api.new_game(chance_game, seed=8)
    api.play(plain, api.make_agents({}, 8, range(2)))
    explicit = api.new_game(chance_game, seed=8, explicit_chance=True)
    api.play(explicit, api.make_agents({}, 8, range(2)))
    assert explicit.result == plain.result

    class Dealer:
        def __init__(self):
            self.asked = []

        def choose(self, view):
            self.asked.append(view.decision.help)
            return 0

    dealer = Dealer()
    m = api.new_game(chance_game, seed=8, explicit_chance=True)
    api.play(m, {CHANCE: dealer, **api.make_agents({}, 8, range(2))})
    assert m.is_over and dealer.asked[:3] == ["shuffle(deck)", "shuffle(deck)", "roll(6)"]


def _cli(*args, input_text=None):
    return subprocess.run([sys.executable, "-m", "rulesvm.cli.main", *args], cwd=ROOT, input=input_text,
                          capture_output=True, text=True, timeout=120)


def test_run_explicit_chance_asks_the_terminal_for_each_random_event():
    # Enter draws from the seed; `6` and `Player 2` are typed in; then bots play on.
    out = _cli("run", TEST_GAME, "--seed", "3", "--explicit-chance", "--quiet",
               input_text="\n\n6\n6\nPlayer 2\n\n\n\n")
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("Chance: shuffle deck: card") == 2
    assert "Chance: roll a 6-sided die" in out.stdout and "Chance: pick at random" in out.stdout
    assert "Winner" in out.stdout
    refused = _cli("run", TEST_GAME, "--explicit-chance", "--log", "x.jsonl")
    assert refused.returncode == 2 and "--explicit-chance cannot be combined with --log" in refused.stdout + refused.stderr
