"""Hostile inputs (issue: a stranger's game file cannot hang, exhaust or trick rulesvm): each
case ends at once with a positioned error and exit 1, never a hang or a traceback."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from rulesvm import api
from rulesvm.dsl import diagnostics as D
from rulesvm.dsl.diagnostics import Diagnostic, DiagnosticError, Span
from rulesvm.dsl.schema import MAX_STEPS

from .conftest import ROOT

BIG = "9" * 5000         # past the 4,300 digits Python reads at all


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "rulesvm.cli.main", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)


def _game(tmp_path, rules: str, extra: str = "", cards: str = "") -> str:
    (tmp_path / "g.rules").write_text(rules)
    (tmp_path / "g.yaml").write_text(f"id: g\nname: G\nplayers: 1\nrules: g.rules\n{extra}{cards}")
    return str(tmp_path / "g.yaml")


def _codes(path) -> list[str]:
    return [d.code for d in api.validate_path(path)]


def test_a_huge_integer_literal_is_a_positioned_error(tmp_path):
    path = _game(tmp_path, f"var x: int = 0\ngame {{\n  x = {BIG}\n  end_game(scores: [x])\n}}\n")
    diags = api.validate_path(path)
    assert [d.code for d in diags] == ["E106"] and (diags[0].span.line, diags[0].span.col) == (3, 7)
    for command in (["validate", path], ["run", path], ["fmt", "--check", str(tmp_path / "g.rules")]):
        out = _cli(*command)
        assert out.returncode == 1 and "Traceback" not in out.stderr + out.stdout, command
        assert "E106" in out.stdout + out.stderr or "syntax errors" in out.stdout + out.stderr, command


def test_the_largest_integer_allowed_still_reads(tmp_path):
    path = _game(tmp_path, "var x: int = 0\ngame {\n  x = 999999999999999999\n  end_game(scores: [x])\n}\n")
    assert _codes(path) == []


def test_a_huge_integer_in_a_card_formula_or_in_yaml_is_a_positioned_error(tmp_path):
    rules = "kind unit { power: int }\ngame { end_game(scores: [card(\"a\").power]) }\n"
    formula = _game(tmp_path, rules, cards=f"cards:\n  - {{id: a, kind: unit, power: {{rules: \"{BIG}\"}}}}\n")
    assert _codes(formula) == ["E106"]
    plain = _game(tmp_path, rules, cards=f"cards:\n  - {{id: a, kind: unit, power: {BIG}}}\n")
    diags = api.validate_path(plain)
    assert [d.code for d in diags] == ["E003"] and "5,000 digits" in diags[0].message


def test_a_game_file_cannot_raise_the_step_limit_past_the_ceiling(tmp_path):
    endless = "var n: int = 0\ngame {\n  loop { n += 1 }\n  end_game(scores: [n])\n}\n"
    over = _game(tmp_path, endless, extra=f"max_steps: {MAX_STEPS + 1}\n")
    diags = api.validate_path(over)
    assert [d.code for d in diags] == ["E010"] and "maximum allowed is 10000000" in diags[0].message
    assert _cli("run", over).returncode == 1
    at_ceiling = _game(tmp_path, endless, extra=f"max_steps: {MAX_STEPS}\n")
    assert _codes(at_ceiling) == []
    assert api.load_game(at_ceiling).program.max_steps == MAX_STEPS


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_a_fifo_is_never_opened_for_reading(tmp_path):
    os.mkfifo(tmp_path / "g.rules")
    (tmp_path / "g.yaml").write_text("id: g\nname: G\nplayers: 1\nrules: g.rules\n")
    diags = api.validate_path(str(tmp_path / "g.yaml"))
    assert [d.code for d in diags] == ["E005"] and "not a regular file (a FIFO)" in diags[0].message
    os.mkfifo(tmp_path / "save.json")
    out = _cli("resume", str(tmp_path / "save.json"))
    assert out.returncode == 1 and "E005" in out.stdout + out.stderr and "Traceback" not in out.stderr
    os.mkfifo(tmp_path / "log.jsonl")
    out = _cli("replay", str(tmp_path / "log.jsonl"))
    assert out.returncode == 1 and "E005" in out.stdout + out.stderr and "Traceback" not in out.stderr


def test_a_game_file_that_is_a_device_is_refused(tmp_path):
    diags = api.validate_path("/dev/zero")
    assert [d.code for d in diags] == ["E005"] and "not a regular file (a device)" in diags[0].message


def test_the_renderer_never_reads_devices_fifos_or_proc_files():
    for path in ("/dev/zero", "/proc/self/environ"):
        text = D.render(Diagnostic("E999", "a test", Span(path, 1, 1)))
        assert text.splitlines() == [f"{path}:1:1: error[E999]: a test"]      # no source line shown


def test_the_renderer_shows_a_window_of_a_long_line(tmp_path):
    line = "x" * 5000 + " here " + "y" * 5000
    (tmp_path / "f.rules").write_text(line + "\n")
    col = line.index("here") + 1
    text = D.render(Diagnostic("E999", "a test", Span(str(tmp_path / "f.rules"), 1, col, 1, col + 4)))
    source, caret = text.splitlines()[1:3]
    assert len(source) < 140 and source.startswith(" 1 | ...") and source.endswith("...")
    assert source[caret.index("^"):caret.index("^") + 4] == "here" and caret.count("^") == 4


def test_control_characters_in_game_data_never_reach_the_terminal(tmp_path):
    # YAML's own escapes put the escape character into the names: a window title, a clear
    # screen, a colour.
    (tmp_path / "g.yaml").write_text('id: g\nname: "Evil \\e]0;owned\\a\\e[2J"\nplayers: 1\nrules: g.rules\n'
                                     'cards:\n  - {id: a, kind: unit, name: "Card \\e[31mred"}\n')
    (tmp_path / "g.rules").write_text('kind unit { }\ngame {\n  log("{card(\\"a\\")} is played")\n'
                                      '  end_game(scores: [1])\n}\n')
    path = str(tmp_path / "g.yaml")
    assert _codes(path) == []
    assert "\x1b" in api.load_game(path).name                     # the data really holds it
    for command in (["info", path], ["run", path, "--seed", "1"], ["validate", path]):
        out = _cli(*command)
        assert out.returncode == 0, (command, out.stderr)
        assert "\x1b" not in out.stdout + out.stderr and "\x07" not in out.stdout + out.stderr, command


def test_a_save_is_written_through_a_fresh_temporary_file(tmp_path):
    game = api.load_game(os.path.join(ROOT, "games", "mach_struggle.yaml"))
    match = api.new_game(game, 2, 1)
    target = tmp_path / "precious.txt"
    target.write_text("the user's own words")
    save = tmp_path / "g.json"
    os.symlink(target, str(save) + ".tmp")        # a planted link at the old fixed name
    from rulesvm import saves
    saves.save_match(match, game, str(save))
    assert target.read_text() == "the user's own words"
    assert saves.load_saved(str(save))[1].state.decisions == match.state.decisions
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp") and p != "g.json.tmp"]


def test_card_copies_are_counted_against_the_card_limit(tmp_path):
    from rulesvm.dsl.loader import MAX_CARDS
    rules = "kind unit { }\ngame { end_game(scores: [count(cards_of_kind(\"unit\"))]) }\n"
    entries = "".join(f"  - {{id: c{k}, kind: unit, count: 1000}}\n" for k in range(2000))   # 2,000,000 cards
    diags = api.validate_path(_game(tmp_path, rules, cards="cards:\n" + entries))
    # Entries start on line 6; the one past ten thousand copies is the eleventh.
    assert [d.code for d in diags] == ["E012"] and diags[0].span.line == 6 + MAX_CARDS // 1000
    at_limit = "".join(f"  - {{id: c{k}, kind: unit, count: 1000}}\n" for k in range(MAX_CARDS // 1000))
    path = _game(tmp_path, rules, cards="cards:\n" + at_limit)
    assert _codes(path) == []
    match = api.new_game(api.load_game(path), 1, 0)
    assert match.result["scores"] == {"1": MAX_CARDS}


HIDDEN_IN_VARS = """
kind unit { }
zone deck: hidden, ordered
zone hand: per_player, visible(owner)
zone table: ordered
var secret: card = none
var pair: list[card] = []
var held: card = none, per_player
var aim: card = none, per_card
setup {
  move(box, deck)
  move(card("a"), hand(player(1)), face: "up")
  move(card("t"), table, face: "up")
}
game {
  secret = top(deck)
  pair = [top(deck), card("t")]
  player(1).held = card("a")
  card("t").aim = top(deck)
  let x = choose([1, 2], by: player(2))
  end_game(scores: [0, 0])
}
"""


def test_observations_never_name_a_card_the_seat_cannot_see(tmp_path):
    from rulesvm.interpreter.observation import HIDDEN_CARD
    cards = "cards:\n" + "".join(f"  - {{id: {c}, kind: unit}}\n" for c in ("a", "b", "c", "t"))
    (tmp_path / "g.rules").write_text(HIDDEN_IN_VARS)
    (tmp_path / "g.yaml").write_text("id: g\nname: G\nplayers: 2\nrules: g.rules\n" + cards)
    match = api.new_game(api.load_game(str(tmp_path / "g.yaml")), 2, 0)
    assert match.decision is not None
    top = match.program.card_ids[match.state.zones[match.program.zone_index("deck")][-1]]
    for seat in (0, 1):
        obs = match.observation(seat)
        text = repr(obs)
        assert f"'{top}'" not in text, (seat, obs)              # the deck's top card, in no variable
        assert obs["vars"]["secret"] == HIDDEN_CARD and obs["vars"]["pair"] == [HIDDEN_CARD, "t"]
        table_card = obs["zones"]["table"]["cards"][0]
        assert table_card["id"] == "t" and table_card["aim"] == HIDDEN_CARD
    # Player 1 sees the card in their own hand; player 2 does not (visible(owner) hand).
    assert match.observation(0)["player_vars"]["held"]["1"] == "a"
    assert match.observation(1)["player_vars"]["held"]["1"] == HIDDEN_CARD
    assert match.observation(-1)["vars"]["secret"] == top           # everything: replays, debugging


def test_no_launch_game_observation_names_a_card_its_seat_cannot_see():
    """...nor one it does not know: what a seat was shown or saw go into a hand it may name
    (knowledge.py), what another seat knows it may not."""
    import random as _random
    from rulesvm.interpreter.knowledge import knows
    for path in [os.path.join(ROOT, "games", f"{gid}.yaml") for gid in
                 ("giant_king", "mach_struggle", "alien_attack", "birthdays_fight", "ufo_abduction")] + \
            [os.path.join(ROOT, "tests", "games", "knowledge", "peek.yaml")]:
        gid = os.path.basename(path)
        game = api.load_game(path)
        for seed in range(3):
            match = api.new_game(game, None, seed)
            rng = _random.Random(seed)
            prog = match.program
            while not match.is_over:
                for seat in range(match.players):
                    shown = set(_strings(match.observation(seat)))
                    seen = {prog.card_ids[c] for c in range(len(prog.card_ids)) if knows(prog, match.state, c, seat)}
                    # A card id the seat cannot see anywhere (the same id may name a visible copy).
                    leaked = {prog.card_ids[c] for c in range(len(prog.card_ids))} - seen
                    assert not (shown & leaked), (gid, seed, seat, shown & leaked)
                match.apply(rng.randrange(len(match.legal_options)))


def _strings(value):
    """Every text value in an observation (not its keys)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


PEEK = """
kind unit { }
zone deck: hidden, ordered
zone hand: per_player, visible(owner)
setup { move(box, deck) }
game {
  let a = choose([1, 2], by: player(1))
  draw(deck, hand(player(1)))
  let b = choose([1, 2], by: player(1))
  end_game(scores: [a + b])
}
"""


def test_undo_never_steps_back_over_a_card_the_player_has_seen_since(tmp_path):
    cards = "cards:\n" + "".join(f"  - {{id: c{k}, kind: unit}}\n" for k in range(5))
    path = _game(tmp_path, PEEK, cards=cards)
    for any_undo in (False, True):
        match = api.new_game(api.load_game(path), 1, 0)
        history = api.UndoHistory({}, any_undo=any_undo)
        history.record(match, 0)
        match.apply(0)                      # a = 1, then a card from the hidden deck to the hand
        assert match.decision is not None and len(match.state.zones[match.program.zone_index("hand", 0)]) == 1
        if any_undo:
            assert history.refusal(match, 0) is None and history.undo(match, 0) == 1
            assert match.decisions_made == 0
        else:
            assert "seen a card" in history.refusal(match, 0)
            with pytest.raises(api.UndoRefused):
                history.undo(match, 0)
            assert match.decisions_made == 1        # nothing taken back


def test_undo_before_anything_new_is_seen_still_works(tmp_path):
    rules = PEEK.replace("  draw(deck, hand(player(1)))\n", "")
    cards = "cards:\n" + "".join(f"  - {{id: c{k}, kind: unit}}\n" for k in range(5))
    match = api.new_game(api.load_game(_game(tmp_path, rules, cards=cards)), 1, 0)
    history = api.UndoHistory({})
    history.record(match, 0)
    match.apply(1)
    assert history.refusal(match, 0) is None and history.undo(match, 0) == 1 and match.decisions_made == 0


@pytest.mark.parametrize("codegen", ["1", "0"])
def test_a_text_doubled_by_interpolation_stops_at_the_size_limit(tmp_path, monkeypatch, codegen):
    from rulesvm.interpreter import RulesRuntimeError
    monkeypatch.setenv("RULESVM_CODEGEN", codegen)
    rules = 'var n: int = 0\ngame {\n  let s = "ab"\n  repeat 60 { s = "{s}{s}" }\n  end_game(scores: [n])\n}\n'
    with pytest.raises(RulesRuntimeError) as info:       # the highest step limit: the size limit comes first
        api.new_game(api.load_game(_game(tmp_path, rules, extra=f"max_steps: {MAX_STEPS}\n")), 1, 0)
    assert info.value.code == "R015" and (info.value.span.line, info.value.span.col) == (4, 19)
    assert "more than the 1,000,000 allowed" in info.value.message       # caught at the limit, not by memory
