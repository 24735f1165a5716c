"""Birthdays Fight: 1,000 random games end, hands are validated, priority is one keystroke."""

from __future__ import annotations

import json
import os

import pytest

from rulesvm import api

from .conftest import ROOT, load
from .helpers import random_playout
from .test_cli import rulesvm

BF = os.path.join(ROOT, "games", "birthdays_fight.yaml")


@pytest.mark.slow
def test_thousand_random_games_end():
    game = load(BF)
    outcomes = {}
    for seed in range(1000):
        match = api.new_game(game, 2, seed)
        random_playout(match, seed + 5)
        r = match.result
        key = r["outcome"] or "life"
        outcomes[key] = outcomes.get(key, 0) + 1
        if key == "draw":
            assert r["winner"] is None and r["ranking"] == [[1, 2]]
        else:
            assert r["winner"] in (1, 2) and sorted(r["ranking"]) == [1, 2]
    assert outcomes.get("life", 0) > 700       # most random games end by life, not the turn limit


def test_preset_hands_are_dealt():
    match = api.new_game(load(BF), 2, 1)
    prog = match.program
    hand1 = {prog.card_ids[c] for c in match.state.zones[prog.zone_index("hand", 0)]}
    hand2 = {prog.card_ids[c] for c in match.state.zones[prog.zone_index("hand", 1)]}
    assert len(hand1) == len(hand2) == 15
    assert "sunny#1" in hand2 and "lightning#1" in hand1 and "melody#1" in hand1 and "melody#2" in hand2


def test_custom_hand_from_a_file():
    p = rulesvm("run", "games/birthdays_fight.yaml", "--seed", "3", "--hand", "1=tests/hands/good.yaml",
                "--hand", "2=A", "--json", "--quiet", "--log", os.devnull, "--force")
    assert p.returncode == 0, p.stderr


def test_hand_validation_errors_point_into_the_hand_file():
    p = rulesvm("run", "games/birthdays_fight.yaml", "--hand", "1=tests/hands/bad.yaml")
    assert p.returncode == 1
    err = p.stderr
    assert "bad.yaml:1:1: error[E072]: a hand has exactly 15 cards; this one has 4" in err
    assert "bad.yaml:2:3: error[E074]: `marion` is in the hand twice" in err
    assert "bad.yaml:4:3: error[E073]: no card has the id `unicorn`" in err
    assert rulesvm("run", "games/birthdays_fight.yaml", "--hand", "1=C").returncode == 2
    assert rulesvm("run", "games/birthdays_fight.yaml", "--hand", "3=A").returncode == 2
    assert rulesvm("run", "games/giant_king.yaml", "--hand", "1=A").returncode == 2


def test_custom_hand_is_replayed(tmp_path):
    log = tmp_path / "h.jsonl"
    assert rulesvm("run", "games/birthdays_fight.yaml", "--seed", "3", "--hand", "1=tests/hands/good.yaml",
                   "--log", str(log), "--quiet").returncode == 0
    start = json.loads(log.read_text().splitlines()[0])
    assert start["hands"]["1"][0] == "marion" and "wind" in start["hands"]["1"]
    assert rulesvm("replay", str(log), "--quiet").returncode == 0


def test_passing_priority_is_one_keystroke():
    # Player 2 plays at the terminal; every empty line passes (or declines) where passing is allowed.
    p = rulesvm("run", "games/birthdays_fight.yaml", "--seed", "2", "--human", "2", input_text="\n" * 40)
    assert "Enter = No Brains" in p.stdout or "Enter = End the turn" in p.stdout
    assert "Traceback" not in p.stderr
