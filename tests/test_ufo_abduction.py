"""UFO cow abduction (solo): 1,000 random games finish with a well-formed result, and the
terminal and --json show what a solo player needs."""

from __future__ import annotations

import json
import os

from rulesvm import api

from .conftest import ROOT, load
from .helpers import random_playout
from .test_cli import rulesvm

UFO = os.path.join(ROOT, "games", "ufo_abduction.yaml")
OUTCOMES = {"completed", "game over"}


def test_thousand_random_games():
    game = load(UFO)
    outcomes = {o: 0 for o in OUTCOMES}
    best = 0
    for seed in range(1000):
        match = api.new_game(game, 1, seed)
        random_playout(match, seed + 101)
        r = match.result
        assert set(r["scores"]) == {"1"}
        score = r["scores"]["1"]
        assert isinstance(score, int) and score >= 0
        assert r["outcome"] in OUTCOMES
        if r["outcome"] == "game over":
            assert score == 0
        outcomes[r["outcome"]] += 1
        best = max(best, score)
    # Random play rarely survives the decoys, but both endings happen and cows get abducted.
    assert outcomes["completed"] > 20 and outcomes["game over"] > 20
    assert best > 100


def test_cards_in_the_box():
    game = load(UFO)
    match = api.new_game(game, 1, 0)
    obs = match.observation(-1)
    # The game waits at the first decision, after turn 1 drew three cards: 57 = 19 turns of three.
    assert obs["zones"]["deck"]["count"] + obs["zones"]["hand"]["1"]["count"] == 57
    assert obs["zones"]["bentler_slot"]["count"] == 1
    assert obs["zones"]["bentler_slot"]["cards"][0]["facedown"] is True
    # The player sees the Bentler card only as a back: not which card it is.
    (view,) = match.observation(0)["zones"]["bentler_slot"]["cards"]
    assert view["facedown"] is True and "id" not in view and "name" not in view


def test_json_reports_the_score_and_outcome():
    p = rulesvm("run", "games/ufo_abduction.yaml", "--seed", "3", "--json")
    assert p.returncode == 0
    data = json.loads(p.stdout)
    result = data["result"]
    assert result["outcome"] in OUTCOMES and result["scores"]["1"] >= 0


def test_human_sees_the_play_area_and_the_score_area():
    p = rulesvm("run", "games/ufo_abduction.yaml", "--seed", "5", "--human", "1",
                input_text="1\n1\n1\n1\n1\n1\n")
    out = p.stdout
    assert "Play area" in out and "UFOs    R" in out
    assert "Score area: empty" in out and "Hangar: 0 decoy(s) (game over at 5)" in out
    assert "Turn the Bentler card" in out
