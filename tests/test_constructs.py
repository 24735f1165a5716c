"""General constructs tested on their own: orientation-dependent card faces, double-sided
cards, `simultaneous for`, and the list primitives product/permutations/join."""

from __future__ import annotations

import os

import pytest

from rulesvm import api
from rulesvm.dsl.diagnostics import DiagnosticError
from rulesvm.interpreter.observation import observe

from .conftest import ROOT, load
from rulesvm.interpreter.compiler import compile_block, compile_expression

from .helpers import write_game

GAME = os.path.join(ROOT, "tests", "games", "constructs.yaml")


def _expr(game, match, text):
    from rulesvm.dsl.diagnostics import Reporter
    from rulesvm.dsl.parser import parse_expression
    expr = parse_expression(text, "<test>")
    r = Reporter()
    _, n = game.model.checker.check_standalone(expr, r)
    assert not r.has_errors, r.diagnostics
    return compile_expression(game.program, expr)(match.rt, [None] * max(n, 1))


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


def _run_stmts(game, match, text):
    """Compile and run statements against a match (as a card ability would run)."""
    from rulesvm.dsl.parser import parse_block_snippet
    from rulesvm.dsl import ast as A
    from rulesvm.dsl.diagnostics import Reporter
    body = parse_block_snippet(text, "<test>")
    checker = game.model.checker
    r = Reporter()
    saved = checker.r
    checker.r = r
    from rulesvm.dsl.check_support import Frame, Scope
    frame = Frame("proc", None)
    checker.block(body, Scope(), frame)
    checker.r = saved
    assert not r.has_errors, [d.message for d in r.diagnostics]
    fn = compile_block(game.program, body, "test")
    fn(match.rt, [None] * max(frame.size, 1))


def test_indexed_zones_and_left_compaction():
    game = load(GAME)
    match = api.new_game(game, 2, 1)
    _run_stmts(game, match, '''
      let ps = [c for c in table if c.kind == "token"]
      move(ps[0], column(0))
      move(ps[1], column(1))
      move(ps[2], column(2))
      move(ps[3], grid(2, 1))
      move(ps[4], shelf(player(2), 1))
    ''')
    prog, st = match.program, match.state
    col = [prog.zone_index("column", 0, k) for k in range(4)]
    before = [list(st.zones[z]) for z in col]
    assert [len(x) for x in before] == [1, 1, 1, 0]
    assert st.zones[prog.zone_index("grid", 0, 2, 1)] and prog.zone_names[prog.zone_index("grid", 0, 2, 1)] == "grid(2,1)"
    assert prog.zone_names[prog.zone_index("shelf", 1, 1)] == "shelf[2](1)"
    # Emptying column 1 closes the row up to the left at once.
    _run_stmts(game, match, "move(column(1), table)")
    after = [list(st.zones[z]) for z in col]
    assert after == [before[0], before[2], [], []]
    assert st.where[before[2][0]] == col[1]
    obs = match.observation(0)
    assert [v["count"] for v in obs["zones"]["column"]] == [1, 1, 0, 0]
    assert len(obs["zones"]["grid"]) == 2 and len(obs["zones"]["grid"][1]) == 3
    assert obs["zones"]["shelf"]["2"][1] == {"count": 1}         # another player's shelf: count only
    match.rt.check_cards()


def test_indexed_zone_mistakes(tmp_path):
    rules = open(os.path.join(ROOT, "tests", "games", "constructs.rules")).read() + \
        "\nzone bad1: indexed(0)\nzone bad2: compact\nproc misuse() { move(column, grid(1)) }\n"
    (tmp_path / "g.rules").write_text(rules)
    (tmp_path / "g.yaml").write_text("id: g\nname: G\nplayers: 2\nrules: g.rules\ncards: []\n")
    msgs = [(d.code, d.message) for d in api.validate_game(str(tmp_path / "g.yaml")) if d.is_error]
    codes = [c for c, _ in msgs]
    assert codes.count("E305") == 2 and "E205" in codes and "E215" in codes
    assert any("zone `column` needs an index" in m for _, m in msgs)
    assert any("zone `grid` takes a column and a row" in m for _, m in msgs)


def test_indexed_zone_out_of_range_is_a_runtime_error():
    import pytest
    from rulesvm.interpreter import RulesRuntimeError
    game = load(GAME)
    match = api.new_game(game, 2, 1)
    with pytest.raises(RulesRuntimeError, match="does not exist: indexes are 0 to 3"):
        _run_stmts(game, match, "move(first(table), column(4))")


def test_field_at_and_name_at_read_any_side_without_turning_the_card(tmp_path):
    path = write_game(tmp_path,
        "kind ship { hull: int; power: int = 0 }\nzone space: visible(all)\n"
        "var seen: list[any] = []\n"
        "setup { move(box, space, face: \"up\") }\n"
        "game {\n  let c = card(\"scout\")\n"
        "  seen = [field_at(c, \"hull\", side: \"back\"), field_at(c, \"hull\", turn: 180),\n"
        "          field_at(c, \"hull\"), name_at(c, side: \"back\"), name_at(c), c.hull, c.faceup]\n"
        "  end_game(scores: [0])\n}\n",
        cards="- id: scout\n  kind: ship\n  name: Scout\n  hull: 1\n"
              "  faces:\n    back: {hull: 3, name: Advanced ship}\n    front 180: {hull: 0, name: Damaged scout}")
    match = api.new_game(api.load_game(path), seed=1)
    seen = match.state.gvars[[v.name for v in match.program.model.vars_of("global")].index("seen")]
    assert list(seen) == [3, 0, 1, "Advanced ship", "Scout", 1, True]
    # A field no kind declares is an error where it is written.
    path = write_game(tmp_path, "kind ship { hull: int }\n"
                      "game { end_game(scores: [field_at(card(\"scout\"), \"hul\")]) }\n",
                      cards="- {id: scout, kind: ship, hull: 1}")
    with pytest.raises(DiagnosticError) as info:
        api.load_game(path)
    assert [(d.code, d.span.line, d.span.col) for d in info.value.diagnostics] == [("E228", 2, 50)]
    assert "did you mean `hull`" in info.value.diagnostics[0].hint


def test_a_text_inside_an_interpolation_has_interpolations_of_its_own(tmp_path):
    path = write_game(tmp_path, "var score: int = 0, per_player\ngame {\n  for p in players { p.score = p.seat * 2 }\n"
                      "  log(\"\\{{join([\\\"{p}: {p.score}\\\" for p in players], \\\", \\\")}\\}\")\n"
                      "  end_game(ranking: [players])\n}\n", players=2)
    events = []
    api.new_game(api.load_game(path), 2, 1, sink=events.append)
    assert [e["text"] for e in events if e["type"] == "log"] == ["{Player 1: 2, Player 2: 4}"]
