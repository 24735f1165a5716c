"""Explained automatic moves (docs/language.md, `choose`'s `unavailable:`): a choice with
one option is taken and told (`forced`); a choice with nothing to offer and an
`unavailable:` reason gives none without asking and tells the reason (`skipped`). Both
back ends agree; a `skipped` record is for people only: no log holds it, replays ignore it."""

from __future__ import annotations

import json
import os

import pytest

from rulesvm import api
from rulesvm.interpreter import compile_program
from rulesvm.interpreter.engine import Match

from .conftest import ROOT
from .test_cli import rulesvm

EXPLAINED = os.path.join(ROOT, "tests", "games", "explained", "explained.yaml")


@pytest.mark.parametrize("codegen", [True, False])
def test_unavailable_skips_the_choice_and_tells_why(codegen):
    game = api.load_game(EXPLAINED)
    program = compile_program(game.model, game.options, codegen=codegen)
    records = []
    match = Match(program, 1, 0, records.append)
    asked = []
    while not match.is_over:
        asked.append(match.decision.labels)
        match.apply(0)                      # "one" first: then only "three" is left (forced)
    assert asked == [["one", "three"]]
    told = [r for r in records if r["type"] in ("forced", "skipped", "log")]
    assert told[0] == {"type": "forced", "player": 1, "prompt": "Play a token", "label": "three", "secret": False}
    assert told[1] == {"type": "skipped", "player": 1, "prompt": "Play a token",
                       "reason": "no token is higher than 3", "secret": False}
    assert told[2]["text"] == "Player 1 cannot play"          # choose gave none
    assert api.automatic_text(told[0]) == "Automatic for Player 1: Play a token: three (the only legal option)"
    assert api.automatic_text(told[1]) == ("Automatic for Player 1: Play a token: nothing to choose "
                                           "(no token is higher than 3)")


def test_without_unavailable_an_empty_choice_is_still_an_error(tmp_path):
    (tmp_path / "g.rules").write_text("kind k { }\ngame { let c = choose([], by: players[0]) end_game(scores: [0]) }\n")
    (tmp_path / "g.yaml").write_text("id: g\nname: G\nplayers: 1\nrules: g.rules\ncards:\n  - {id: a, kind: k}\n")
    p = rulesvm("run", str(tmp_path / "g.yaml"), "--seed", "1")
    assert p.returncode == 1 and "R007" in p.stderr


def test_the_reason_must_be_text(tmp_path):
    (tmp_path / "g.rules").write_text("kind k { }\ngame { let c = choose([1], by: players[0], unavailable: 3)\n"
                                      "  end_game(scores: [0]) }\n")
    (tmp_path / "g.yaml").write_text("id: g\nname: G\nplayers: 1\nrules: g.rules\ncards:\n  - {id: a, kind: k}\n")
    p = rulesvm("validate", str(tmp_path / "g.yaml"))
    assert p.returncode == 1 and "E303" in p.stderr and "unavailable" in p.stderr


def test_skipped_records_stay_out_of_logs_and_replays(tmp_path):
    log = tmp_path / "gk.jsonl"
    p = rulesvm("run", "games/giant_king.yaml", "--seed", "3", "--log", str(log), "--quiet")
    assert p.returncode == 0
    types = {json.loads(line)["type"] for line in log.read_text().splitlines()}
    assert "skipped" not in types and "forced" in types
    again = tmp_path / "again.jsonl"
    p = rulesvm("replay", str(log), "--quiet", "--log", str(again))
    assert p.returncode == 0, p.stderr
    assert again.read_text() == log.read_text()


def test_giant_king_tells_why_a_player_passes():
    game = api.load_game(os.path.join(ROOT, "games", "giant_king.yaml"))
    records = []
    match = api.new_game(game, 4, 3, sink=records.append)
    api.play(match, api.make_agents({}, 3, [0, 1, 2, 3]))
    reasons = [r["reason"] for r in records if r["type"] == "skipped"]
    assert any(r.startswith("you pass: no card in your hand is at least ") for r in reasons)
    assert any(r.startswith("your turn ends: no card in your hand is at least ") for r in reasons)
    assert "your turn ends: 3 cards is the most one turn may play" in reasons
