"""Constant analysis (interpreter/purity.py): what the compiler may evaluate once, and that
doing so never changes a game."""

from __future__ import annotations

from rulesvm import api
from rulesvm.dsl import ast as A
from rulesvm.interpreter.purity import ConstantAnalysis, is_plain_value_type
from rulesvm.dsl.types import CARD, INT, TEXT, list_of, tuple_of

from .helpers import write_game

RULES = """
kind token { name_tag: text }
zone table: ordered, visible(all)
zone hand: per_player, ordered, visible(owner)
option width: int = 2
var score: int = 0

func plans() -> list[list[text]] = [pl for pl in product([["a", "b"], ["x", "y"]]) if pl[0] != "b" or pl[1] == "y"]
func widths() -> list[int] = [w * width for w in 1..3]
func scaled(n: int) -> int = n * width
func now() -> int = score
func seats() -> list[player] = players
func cards_here() -> int = count(table)
func rolled() -> int = roll(6)
func uses_now() -> int = now() + 1

setup {
  move(box, hand(players[0]), face: "down")
}

game {
  repeat 3 {
    let pl = choose(plans(), by: players[0], prompt: "Plan", label: pl => join(pl, "+"))
    score += count(pl)
    let c = choose(hand(players[0]), by: players[0], prompt: "Card",
                   label: c => if c.faceup then "{c}" else "hidden {c}")
    face_up(c)
  }
  let w = choose(widths(), by: players[1], prompt: "Width", pass: "none")
  end_game(scores: [score + scaled(2) for p in players])
}
"""

YAML = """
id: purity
name: Purity
players: 2
rules: purity.rules
cards:
  - {id: t1, kind: token, name_tag: one}
  - {id: t2, kind: token, name_tag: two}
  - {id: t3, kind: token, name_tag: three}
"""


def _game(tmp_path):
    (tmp_path / "purity.rules").write_text(RULES)
    (tmp_path / "purity.yaml").write_text(YAML)
    return api.load_game(str(tmp_path / "purity.yaml"))


def test_functions_reading_only_values_and_options_are_constant(tmp_path):
    game = _game(tmp_path)
    consts = ConstantAnalysis(game.model.resolution, game.model.funcs)
    assert consts.func_is_constant_body("plans")
    assert consts.func_is_constant_body("widths")          # options are fixed per program
    assert consts.func_is_constant_body("scaled")          # constant once its argument is
    for name in ("now", "seats", "cards_here", "rolled", "uses_now"):
        assert not consts.func_is_constant_body(name), name


def test_only_plain_values_have_fixed_labels():
    assert is_plain_value_type(list_of(list_of(TEXT)))
    assert is_plain_value_type(tuple_of(INT, TEXT))
    assert not is_plain_value_type(CARD)                   # a card's label follows its face
    assert not is_plain_value_type(list_of(CARD))
    assert not is_plain_value_type(None)


def _scaled_call(game):
    calls = [e for e in game.model.resolution.calls
             if isinstance(e, A.Call) and isinstance(e.func, A.Name) and e.func.id == "scaled"]
    assert calls
    return calls[0]


def test_a_call_is_constant_only_with_constant_arguments(tmp_path):
    game = _game(tmp_path)
    consts = ConstantAnalysis(game.model.resolution, game.model.funcs)
    assert consts.call_is_constant(_scaled_call(game))     # scaled(2)


def test_cached_options_and_labels_behave_like_fresh_ones(tmp_path):
    game = _game(tmp_path)
    match = api.new_game(game, 2, 3)
    seen = []
    while not match.is_over:
        d = match.decision
        seen.append((d.prompt, [o.label for o in d.options]))
        match.apply(len(d.options) - 1)
    plans = [labels for prompt, labels in seen if prompt == "Plan"]
    assert plans == [["a+x", "a+y", "b+y"]] * 3              # the same cached options each time
    cards = [labels for prompt, labels in seen if prompt == "Card"]
    # Card labels are never cached: a card turned face up is labelled anew.
    assert cards == [["hidden t1", "hidden t2", "hidden t3"], ["hidden t1", "hidden t2", "t3"],
                     ["hidden t1", "hidden t2", "t3"]]
    assert [labels for prompt, labels in seen if prompt == "Width"] == [["2", "4", "6", "none"]]
    assert match.result["scores"] == {"1": 3 * 2 + 4, "2": 3 * 2 + 4}


def test_same_game_with_and_without_constant_caching(tmp_path, monkeypatch):
    game = _game(tmp_path)
    from tests.helpers import transcript
    cached = transcript(game, 2, 5)
    monkeypatch.setattr(ConstantAnalysis, "call_is_constant", lambda self, e: False)
    monkeypatch.setattr(ConstantAnalysis, "is_constant", lambda self, e, bound: False)
    fresh = transcript(_game(tmp_path), 2, 5)
    assert cached == fresh


def test_recursive_functions_are_found_through_other_functions(tmp_path):
    from rulesvm.interpreter.purity import recursive_functions
    path = write_game(tmp_path,
        "func even(k: int) -> bool = if k == 0 then true else odd(k - 1)\n"
        "func odd(k: int) -> bool = if k == 0 then false else even(k - 1)\n"
        "func fact(k: int) -> int = if k < 2 then 1 else k * fact(k - 1)\n"
        "func twice(k: int) -> int = fact(k) + fact(k)\n"
        "func plain(k: int) -> int = k + 1\n"
        "game { end_game(scores: [plain(twice(3)) + (if even(4) then 1 else 0)]) }\n")
    model = api.load_game(path).model
    assert recursive_functions(model.resolution, model.funcs) == {"even", "odd", "fact"}


def test_call_weights_count_every_call_a_call_may_make(tmp_path):
    """A func's weight is 1 plus the weights of the calls written in its body; a recursive
    callee counts 1 (its calls are counted as they happen); weights stop at the cap."""
    from rulesvm.interpreter.purity import call_weights, recursive_functions
    rules = ("func a(x: int) -> int = x + 1\nfunc b(x: int) -> int = a(x) + a(x) * a(x)\n"
             "func c(x: int) -> int = b(x) + b(a(x))\n"
             "func r(n: int) -> int = if n == 0 then 0 else r(n - 1) + a(n)\nfunc s(x: int) -> int = r(x) + c(x)\n"
             "game {\n  end_game(scores: [s(2)])\n}\n")
    model = api.load_game(write_game(tmp_path, rules)).model
    recursive = recursive_functions(model.resolution, model.funcs)
    weights = call_weights(model.resolution, model.funcs, recursive, 1000)
    assert recursive == {"r"}
    assert weights["a"] == 1 and weights["b"] == 4 and weights["c"] == 1 + 4 + 4 + 1 and weights["s"] == 1 + 1 + 10
    assert call_weights(model.resolution, model.funcs, recursive, 5)["c"] == 5
