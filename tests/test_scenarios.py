"""The scenario runner itself: failures are readable, set-up mistakes are located."""

from __future__ import annotations

import os
import subprocess
import sys

from rulesvm.testing.scenario import run_scenario

from .conftest import ROOT
from .helpers import write_game

HERE = os.path.join(ROOT, "tests", "scenarios")


def _run(name):
    return run_scenario(os.path.join(HERE, name))


def test_wrong_expectation_shows_expression_values_and_step():
    r = _run("wrong_expectation.scenario.yaml")
    assert not r.passed
    assert "wrong_expectation.scenario.yaml:13" in r.message
    assert "step 2" in r.message
    assert "expected `count(row(player(1))) + 1 == 5`" in r.message
    assert "count(row(player(1))) + 1 = 2" in r.message


def test_same_card_twice_in_setup_is_located():
    r = _run("card_twice.scenario.yaml")
    assert not r.passed
    assert "card_twice.scenario.yaml:6:" in r.message or "card_twice.scenario.yaml:6" in r.message
    assert "placed twice" in r.message


def test_unknown_card_in_setup_suggests_the_right_one():
    r = _run("no_such_card.scenario.yaml")
    assert not r.passed and "no card has the id `start_red_22`" in r.message
    assert "did you mean" in r.message and "no_such_card.scenario.yaml:4" in r.message


def test_schema_errors_in_a_scenario_have_positions():
    r = _run("bad_schema.scenario.yaml")
    assert not r.passed
    assert "bad_schema.scenario.yaml:2:10: error[E040]" in r.message


def test_a_step_with_two_actions_is_an_error():
    from rulesvm.dsl.diagnostics import DiagnosticError
    from rulesvm.testing.scenario import load_scenario
    path = os.path.join(HERE, "bad_schema.scenario.yaml")
    try:
        load_scenario(path)
    except DiagnosticError as exc:
        codes = {d.code for d in exc.diagnostics}
        assert "E041" in codes
    else:
        raise AssertionError("expected diagnostics")


def test_illegal_choice_lists_legal_options():
    r = _run("illegal_step.scenario.yaml")
    assert not r.passed
    assert "'Red 5' is not a legal option; legal are: Red 2, Red 3" in r.message


def test_bad_expression_is_checked_like_rules():
    r = _run("bad_expression.scenario.yaml")
    assert not r.passed and "unknown procedure, function or primitive `hnd`" in r.message


def test_rulesvm_test_command_summary_and_exit_code():
    ok = subprocess.run([sys.executable, "-m", "rulesvm.cli.main", "test", "games/giant_king/scenarios"],
                        cwd=ROOT, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout
    assert ok.stdout.strip().splitlines()[-1].endswith("passed, 0 failed")
    bad = subprocess.run([sys.executable, "-m", "rulesvm.cli.main", "test", "tests/scenarios"],
                         cwd=ROOT, capture_output=True, text=True)
    assert bad.returncode == 1
    assert "FAIL" in bad.stdout and "0 passed, 12 failed" in bad.stdout
    assert "Traceback" not in bad.stdout + bad.stderr


def test_at_start_checks_the_state_before_the_game_block_runs(tmp_path):
    write_game(tmp_path, "var x: int = 0\nsetup { x = 1 }\n"
               "game {\n  x = 2\n  let c = choose([\"a\", \"b\"], by: players[0])\n  end_game(scores: [x])\n}\n")
    scenario = tmp_path / "s.scenario.yaml"
    scenario.write_text("game: g.yaml\nat: start\nsteps:\n  - expect: \"x == 1\"\n"
                        "  - expect_decision: {by: 1}\n  - expect: \"x == 2\"\n")
    result = run_scenario(str(scenario))
    assert result.passed, result.message
    # Without `at: start` the game has already gone on to its first decision.
    scenario.write_text("game: g.yaml\nsteps:\n  - expect: \"x == 1\"\n")
    result = run_scenario(str(scenario))
    assert not result.passed and "x == 1" in result.message
