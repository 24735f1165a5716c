"""`phase_start`/`phase_end` fire on every way into and out of a phase, `return` included,
with either back end."""

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
