"""When triggers run, with either back end: right after the statement that fired their
event, before the next one; `phase_end` on every way out of a phase, `return` included."""

from __future__ import annotations

import pytest

from rulesvm import api

RULES = """
zone table: ordered, visible(all)
var ends: int = 0
var trail: text = ""

phase early(stop: bool) {
  trail = trail + "a"
  if stop { return }
  trail = trail + "b"
  let pick = choose(["x", "y"], by: players[0], prompt: "Pick")
  for i in 1..3 {
    if i == 2 and pick == "x" { return }
    trail = trail + "{i}"
  }
}

on phase_end(name) when name == "early" {
  ends += 1
  trail = trail + "|"
}

game {
  early(true)
  early(false)
  early(false)
  end_game(scores: [ends for p in players])
}
"""

YAML = """
id: phase_events
name: Phase events
players: 1
rules: phase_events.rules
cards: []
"""


@pytest.mark.parametrize("codegen", ["1", "0"])
def test_phase_end_fires_on_return(tmp_path, monkeypatch, codegen):
    monkeypatch.setenv("RULESVM_CODEGEN", codegen)
    (tmp_path / "phase_events.rules").write_text(RULES)
    (tmp_path / "phase_events.yaml").write_text(YAML)
    game = api.load_game(str(tmp_path / "phase_events.yaml"))
    match = api.new_game(game, 1, 1)
    match.apply_label("x")          # second phase: returns from inside the loop
    match.apply_label("y")          # third phase: runs to its end
    assert match.is_over
    assert match.result["scores"] == {"1": 3}     # three phases, three ends
    assert match.observation(0)["vars"]["trail"] == "a|ab1|ab123|"


MOVED_RULES = """
kind token { n: int }
zone a: ordered, visible(all)
zone b: ordered, visible(all)
var seen: text = ""

on moved(c, s, t) when t == b { seen = seen + "T{c.n}" }

proc step() {
  move(first(a), b)
  seen = seen + "S"
  for c in a {
    move(c, b)
    seen = seen + "L"
  }
  let rest = 0
  while rest < 1 {
    rest += 1
    move(b, a)
    seen = seen + "W"
  }
}

setup { move(box, a) }

game {
  step()
  let x = choose(["q", "r"], by: players[0])
  end_game(scores: [0])
}
"""

MOVED_YAML = """
id: moved_timing
name: Moved timing
players: 1
rules: moved_timing.rules
cards:
  - {id: t1, kind: token, n: 1}
  - {id: t2, kind: token, n: 2}
  - {id: t3, kind: token, n: 3}
"""


@pytest.mark.parametrize("codegen", ["1", "0"])
def test_moved_triggers_run_before_the_next_statement(tmp_path, monkeypatch, codegen):
    monkeypatch.setenv("RULESVM_CODEGEN", codegen)
    (tmp_path / "moved_timing.rules").write_text(MOVED_RULES)
    (tmp_path / "moved_timing.yaml").write_text(MOVED_YAML)
    match = api.new_game(api.load_game(str(tmp_path / "moved_timing.yaml")), 1, 1)
    assert match.observation(0)["vars"]["seen"] == "T1ST2LT3LW"
