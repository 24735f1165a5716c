"""General constructs tested on their own: orientation-dependent card faces, double-sided
cards, `simultaneous for`, and the list primitives product/permutations/join."""

from __future__ import annotations

import os

from rulesvm import api
from rulesvm.interpreter.observation import observe

from .conftest import ROOT, load

GAME = os.path.join(ROOT, "tests", "games", "constructs.yaml")


def _expr(game, match, text):
    from rulesvm.dsl.diagnostics import Reporter
    from rulesvm.dsl.parser import parse_expression
    expr = parse_expression(text, "<test>")
    r = Reporter()
    _, n = game.model.checker.check_standalone(expr, r)
    assert not r.has_errors, r.diagnostics
    return game.program.compiler.expr(expr)(match.rt, [None] * max(n, 1))


def test_fields_follow_the_cards_orientation():
    game = load(GAME)
    match = api.new_game(game, 2, 1)
    prog = match.program
    arrow = prog.card_by_id["arrow"]
    for deg, label, points in ((0, "north", 1), (90, "east", 1), (180, "south", 3), (270, "west", 1)):
        match.state.turn[arrow] = deg
        assert _expr(game, match, 'card("arrow").label') == label
        assert _expr(game, match, 'card("arrow").points') == points
    # A single-sided card face down is still read by its front (the rules know the card).
    match.state.faceup[arrow] = False
    match.state.turn[arrow] = 180
    assert _expr(game, match, 'card("arrow").label') == "south"


def test_double_sided_card_shows_its_back():
    game = load(GAME)
    match = api.new_game(game, 2, 1)
    coin = match.program.card_by_id["coin"]
    match.state.faceup[coin] = False
    assert _expr(game, match, 'card("coin").label') == "tails"
    assert _expr(game, match, 'card("coin").points') == 0
    view = [c for c in observe(match, 1)["zones"]["table"]["cards"] if c.get("id") == "coin"][0]
    assert view["label"] == "tails" and view["side"] == "back"


def test_face_down_orientation_is_hidden_but_sideways_shows():
    game = load(GAME)
    match = api.new_game(game, 2, 1)
    arrow = match.program.card_by_id["arrow"]
    match.state.faceup[arrow] = False
    views = []
    for deg in (0, 180, 90, 270):
        match.state.turn[arrow] = deg
        views.append([c for c in observe(match, 0)["zones"]["table"]["cards"] if "id" not in c][0])
    assert views[0] == views[1] == {"facedown": True}
    assert views[2] == views[3] == {"facedown": True, "turn": 90}


def test_simultaneous_decisions_are_secret_and_others_are_not():
    game = load(GAME)
    records = []
    match = api.new_game(game, 2, 1, sink=records.append)
    d = match.decision
    assert d.secret and d.player == 0 and d.help == "type a-1, b-2, ..." and d.confirm
    assert d.labels == ["a-1", "a-2", "b-1", "b-2"]
    match.apply_label("b-2")
    assert match.decision.secret and match.decision.player == 1
    other = match.observation(0)
    assert other["waiting_for"] == {"player": 2, "prompt": None}
    match.apply_label("a-1")
    assert not match.decision.secret                 # outside the simultaneous block
    assert [r["secret"] for r in records if r["type"] == "decision"] == [True, True]
    match.apply_label("x")
    assert match.result["scores"] == {"1": 6, "2": 6}  # permutations of 3 taken 2


def test_a_players_secret_card_is_invisible_to_the_other():
    game = load(GAME)
    match = api.new_game(game, 2, 1)
    match.apply_label("a-1")
    mine = match.observation(0)["zones"]["secret_row"]["1"]["cards"][0]
    theirs = match.observation(1)["zones"]["secret_row"]["1"]["cards"][0]
    assert mine["id"].startswith("pebble") and theirs == {"facedown": True}


def test_face_keys_and_fields_are_validated(tmp_path):
    (tmp_path / "g.rules").write_text(open(os.path.join(ROOT, "tests", "games", "constructs.rules")).read())
    head = "id: g\nname: G\nplayers: 2\nrules: g.rules\ncards:\n"
    (tmp_path / "a.yaml").write_text(head + "  - {id: a, kind: token, label: x, points: 1, faces: {sideways: {label: y}}}\n")
    (tmp_path / "b.yaml").write_text(head + "  - {id: b, kind: token, label: x, points: 1, faces: {front 180: {colour: r}}}\n")
    a = [(d.code, d.span.line) for d in api.validate_game(str(tmp_path / "a.yaml")) if d.is_error]
    b = [(d.code, d.span.line, d.message) for d in api.validate_game(str(tmp_path / "b.yaml")) if d.is_error]
    assert a == [("E010", 6)]
    assert b and b[0][:2] == ("E231", 6) and "colour" in b[0][2]
