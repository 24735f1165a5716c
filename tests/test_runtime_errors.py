"""Runtime errors in a rules script (tests/games/runtime/): the message names the rule, its
source position, the game's seed and the decision number; `rulesvm run` exits 1; and the
--log file replays up to the error (`rulesvm replay` reaches the same error, and stops
cleanly one decision before it)."""

from __future__ import annotations

import json
import os
import re

import pytest

from rulesvm import api
from rulesvm.interpreter import RulesRuntimeError

from .conftest import ROOT
from .test_cli import rulesvm

HERE = os.path.join("tests", "games", "runtime")

# game -> (code, rules file line, column, the rule's name as the error shows it)
CASES = {
    "empty_draw": ("R009", 15, 14, "phase `take_turn`"),
    "no_option": ("R007", 14, 11, "phase `discard_one`"),
    "type_error": ("R005", 18, 7, "the game block"),
    "runaway": ("R002", 11, 3, "the game block"),
    "deep_recursion": ("R004", 3, 1, "function `countdown`"),
}


def _fail(game: str, seed: int):
    """Play the game with random choices until its rules fail; return the error and the match."""
    g = api.load_game(os.path.join(ROOT, HERE, f"{game}.yaml"))
    try:
        match = api.new_game(g, seed=seed)
        agents = api.default_agents(match, seed=seed)
        api.play(match, agents)
    except RulesRuntimeError as exc:
        return exc
    raise AssertionError(f"{game} finished without a runtime error")


@pytest.mark.parametrize("game", sorted(CASES))
def test_the_error_names_rule_position_seed_and_decision(game):
    code, line, col, rule = CASES[game]
    for seed in (1, 2, 3):
        exc = _fail(game, seed)
        assert exc.code == code
        assert exc.span.file.endswith(f"{game}.rules") and (exc.span.line, exc.span.col) == (line, col)
        assert exc.rule == rule
        assert exc.seed == seed and isinstance(exc.decision, int) and exc.decision >= 1
        text = exc.describe()
        assert f"{game}.rules:{line}:{col}: runtime error[{code}]" in text
        assert f"(in {rule})" in text and f"game seed {seed}, after decision {exc.decision}" in text


@pytest.mark.parametrize("game", sorted(CASES))
def test_run_exits_1_and_the_log_replays_up_to_the_error(game, tmp_path):
    code, line, col, rule = CASES[game]
    log = tmp_path / "game.jsonl"
    run = rulesvm("run", os.path.join(HERE, f"{game}.yaml"), "--seed", "4", "--quiet", "--log", str(log))
    assert run.returncode == 1
    first = re.search(r"runtime error\[(R\d+)\].*\n   = game seed 4, after decision (\d+)", run.stderr)
    assert first and first.group(1) == code, run.stderr
    decisions = int(first.group(2))
    assert f"the log up to the error is in {log}" in run.stderr
    records = [json.loads(x) for x in log.read_text().splitlines()]
    assert records[0]["type"] == "start" and records[0]["seed"] == 4
    assert sum(r["type"] == "decision" for r in records) == decisions
    assert not any(r["type"] == "end" for r in records)
    # Replaying the log meets the same error at the same place, after the same decisions...
    again = rulesvm("replay", str(log), "--quiet")
    assert again.returncode == 1
    assert f"{game}.rules:{line}:{col}: runtime error[{code}]" in again.stderr
    assert f"after decision {decisions}" in again.stderr
    # ...and stops cleanly just before it.
    if decisions:
        before = rulesvm("replay", str(log), "--to", str(decisions - 1))
        assert before.returncode == 0, before.stderr
        assert f"after {decisions - 1} decisions (the game goes on)" in before.stderr


def test_the_step_limit_of_the_game_file_applies():
    exc = _fail("runaway", 1)
    assert "20000 steps" in exc.message and "max_steps" in exc.hint


def test_game_block_that_ends_without_end_game_has_a_position(tmp_path):
    (tmp_path / "g.rules").write_text('game {\n  let c = choose(["a", "b"], by: players[0])\n}\n')
    (tmp_path / "g.yaml").write_text("id: g\nname: G\nplayers: 1\nrules: g.rules\ncards: []\n")
    g = api.load_game(str(tmp_path / "g.yaml"))
    with pytest.raises(RulesRuntimeError) as info:
        m = api.new_game(g, seed=1)
        m.apply(0)
    assert info.value.code == "R003"
    assert info.value.span is not None and info.value.span.line > 0
