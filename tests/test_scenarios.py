"""The scenario runner itself: failures are readable, set-up mistakes are located."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import yaml

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
    assert "FAIL" in bad.stdout and "0 passed, 13 failed" in bad.stdout
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


# A round: `deal` moves a card to the table, `play` asks for a choice that scores; the round
# then resets the score, so without a stop a check after the choice sees the next round.
ROUNDS = """kind token { }
var score: int = 0
var rounds: int = 0
zone pile: ordered, visible(all)
zone table: visible(all)
zone board: indexed(3, 2), visible(all)
setup {
  move(box, pile)
  move(top(pile), board(2, 1))
}
game {
  repeat 2 {
    rounds += 1
    deal()
    play()
    score = 0
  }
  end_game(scores: [rounds])
}
phase deal() { move(top(pile), table) }
phase play() {
  let n = choose([1, 2, 3], by: players[0], prompt: "Score")
  score += n
}
"""


def _scenario(tmp_path, body: str):
    write_game(tmp_path, ROUNDS, cards="- {id: pebble, kind: token, count: 4}")
    scenario = tmp_path / "s.scenario.yaml"
    scenario.write_text("game: g.yaml\n" + body)
    return run_scenario(str(scenario))


def test_choose_until_a_phase_ends_sees_the_state_as_the_choice_resolved(tmp_path):
    r = _scenario(tmp_path, "steps:\n  - {choose: \"2\", until: {phase_ends: play}}\n"
                  "  - expect: [\"score == 2\", \"rounds == 1\"]\n"
                  "  - expect_decision: {prompt: Score}\n  - expect: [\"score == 0\", \"rounds == 2\"]\n")
    assert r.passed, r.message
    # Without `until:` the game runs on to the next decision, past the reset.
    r = _scenario(tmp_path, "steps:\n  - {choose: \"2\"}\n  - expect: \"score == 2\"\n")
    assert not r.passed and "score = 0" in r.message


def test_at_and_run_until_stop_between_the_deal_and_the_play(tmp_path):
    r = _scenario(tmp_path, "at: {phase_ends: deal}\nsteps:\n  - expect: \"count(table) == 1 and rounds == 1\"\n"
                  "  - run_until: {phase_starts: play}\n  - expect: \"count(table) == 1\"\n"
                  "  - choose: 3\n  - expect: \"count(table) == 2 and score == 0\"\n")
    assert r.passed, r.message
    r = _scenario(tmp_path, "at: {phase_starts: deal, occurrence: 2}\nsteps:\n"
                  "  - expect: \"count(table) == 1 and rounds == 2\"\n")
    assert r.passed, r.message


def test_a_stop_not_reached_before_the_next_decision_says_so(tmp_path):
    r = _scenario(tmp_path, "steps:\n  - {choose: 1, until: {phase_starts: deal}}\n")
    assert r.passed, r.message
    r = _scenario(tmp_path, "steps:\n  - {choose: 1, until: {phase_ends: deal, occurrence: 2}}\n")
    assert not r.passed and "s.scenario.yaml:3:" in r.message
    assert "phase `deal` did not end 2 times before the next decision (Player 1: Score)" in r.message
    r = _scenario(tmp_path, "steps:\n  - choose: 1\n  - choose: 1\n    until: {phase_ends: play}\n"
                  "  - run_until: {phase_ends: play}\n")
    assert not r.passed and "the game ended: phase `play` did not end" in r.message
    r = _scenario(tmp_path, "steps:\n  - run_until: {phase_ends: play}\n")
    assert not r.passed and "waiting for a decision (Player 1: Score): answer it with `choose` and `until:`" in r.message
    r = _scenario(tmp_path, "steps:\n  - {choose: 1, until: {phase_ends: pley}}\n")
    assert not r.passed and "E044" in r.message and "no phase `pley` (did you mean `play`?)" in r.message
    r = _scenario(tmp_path, "steps:\n  - {expect: \"true\", until: {phase_ends: play}}\n")
    assert not r.passed and "E041" in r.message and "`until:` goes with `choose`" in r.message


def test_setup_empties_a_family_of_zones_in_one_line(tmp_path):
    # The family is emptied first (its cards go to the box), then the zones listed with it fill.
    r = _scenario(tmp_path, "at: start\nsetup:\n  zones:\n    board(1,1): [pebble]\n    board(*,*): []\n"
                  "steps:\n  - expect: [\"count(board(2, 1)) == 0\", \"count(board(1, 1)) == 1\", \"count(box) == 1\"]\n")
    assert r.passed, r.message
    r = _scenario(tmp_path, "at: start\nsetup:\n  zones:\n    board(*,0): [pebble]\nsteps:\n  - expect: \"true\"\n")
    assert not r.passed and "E044" in r.message and "`board(*,0)` names 3 zones" in r.message
    r = _scenario(tmp_path, "at: start\nsetup:\n  zones:\n    board(*,x): []\nsteps:\n  - expect: \"true\"\n")
    assert not r.passed and "`board(*,x)` is not a zone" in r.message and "`*` for every seat or index" in r.message
    r = _scenario(tmp_path, "at: start\nsetup:\n  zones:\n    board(*,1*): []\nsteps:\n  - expect: \"true\"\n")
    assert not r.passed and "`1*` is not an index (a number, or `*` for every one)" in r.message


def test_the_docs_first_example_is_a_scenario_of_the_suite():
    with open(os.path.join(ROOT, "docs", "scenarios.md"), encoding="utf-8") as fh:
        text = fh.read()
    example = yaml.safe_load(text[text.index("```yaml\n") + 8:text.index("```", text.index("```yaml\n") + 8)])
    path = os.path.join(ROOT, "games", "giant_king", "scenarios", "double_power.scenario.yaml")
    with open(path, encoding="utf-8") as fh:
        suite = yaml.safe_load(fh)
    for key in ("name", "game", "at", "setup", "steps"):
        assert example[key] == suite[key], key
    assert any("until" in step for step in suite["steps"])
    assert run_scenario(path).passed


TIE = """game {
  end_game(ranking: [[players[0]], [players[2], players[1]]], scores: [3, 1, 1])
}
"""


def test_rankings_compare_by_meaning_and_have_one_shape(tmp_path):
    game = write_game(tmp_path, TIE, players=3)
    scenario = tmp_path / "s.scenario.yaml"
    for written in ("[1, [2, 3]]", "[[1], [2, 3]]", "[1, [3, 2]]"):
        scenario.write_text(f"game: g.yaml\nsteps:\n  - expect_result: {{ranking: {written}}}\n")
        result = run_scenario(str(scenario))
        assert result.passed, (written, result.message)
    scenario.write_text("game: g.yaml\nsteps:\n  - expect_result: {ranking: [1, 2, 3]}\n")
    result = run_scenario(str(scenario))
    assert not result.passed and "result ranking is [1, [2, 3]], expected [1, 2, 3]" in result.message
    # `run --json` prints the same one shape: a seat alone as a number, a tie as a list in seat order.
    out = subprocess.run([sys.executable, "-m", "rulesvm.cli.main", "run", game, "--seed", "1", "--json", "-q"],
                         cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["result"]["ranking"] == [1, [2, 3]]


def _rulesvm_test(cwd, *args):
    out = subprocess.run([sys.executable, "-m", "rulesvm.cli.main", "test", *args], cwd=cwd, capture_output=True,
                         text=True, env={**os.environ, "PYTHONPATH": ROOT})
    assert "Traceback" not in out.stdout + out.stderr
    return out


def test_rulesvm_test_selects_by_k_reruns_the_last_failed_and_runs_in_parallel(tmp_path):
    write_game(tmp_path, ROUNDS, cards="- {id: pebble, kind: token, count: 4}")
    good = "game: g.yaml\nsteps:\n  - expect: \"rounds == 1\"\n"
    (tmp_path / "a.scenario.yaml").write_text(good)
    (tmp_path / "b.scenario.yaml").write_text("name: Broken thing\n" + good.replace("== 1", "== 7"))
    (tmp_path / "c.scenario.yaml").write_text(good)
    out = _rulesvm_test(tmp_path, ".", "-k", "BROKEN")          # by the scenario's name
    assert out.returncode == 1 and out.stdout.splitlines()[-1] == "0 passed, 1 failed"
    out = _rulesvm_test(tmp_path, ".", "-k", "a.scen", "-k", "c.scen")
    assert out.returncode == 0 and out.stdout.splitlines()[-1] == "2 passed, 0 failed"
    assert _rulesvm_test(tmp_path, ".", "-k", "nothing").returncode == 2
    serial = _rulesvm_test(tmp_path, ".")
    assert serial.stdout.splitlines()[-1] == "2 passed, 1 failed"
    parallel = _rulesvm_test(tmp_path, ".", "-j", "2")
    assert parallel.stdout == serial.stdout                       # the same lines in the same order
    # The cache lives apart from the user's files and keeps itself out of git.
    assert (tmp_path / ".rulesvm_cache" / ".gitignore").read_text().splitlines()[-1] == "*"
    out = _rulesvm_test(tmp_path, ".", "--lf")
    assert [line.split()[:2] for line in out.stdout.splitlines()[:-1] if line.startswith(("PASS", "FAIL"))] == \
        [["FAIL", "b.scenario.yaml"]]
    assert "failed last time" in out.stderr
    (tmp_path / "b.scenario.yaml").write_text(good)
    out = _rulesvm_test(tmp_path, ".", "--lf")
    assert out.returncode == 0 and out.stdout.splitlines()[-1] == "1 passed, 0 failed"
    out = _rulesvm_test(tmp_path, ".", "--lf")
    assert "no scenario failed last time: running all of them" in out.stderr
    assert out.stdout.splitlines()[-1] == "3 passed, 0 failed"


def test_setup_empties_every_seats_zone_with_a_star(tmp_path):
    scenario = tmp_path / "s.scenario.yaml"
    scenario.write_text(f"game: {os.path.join(ROOT, 'games', 'giant_king.yaml')}\nat: {{phase_ends: prepare_round}}\n"
                        "setup:\n  zones:\n    hand[2]: [start_blue_1]\n    hand[*]: []\nsteps:\n"
                        "  - expect: [\"count(hand(player(1))) == 0\", \"count(hand(player(2))) == 1\", "
                        "\"count(hand(player(4))) == 0\"]\n")
    result = run_scenario(str(scenario))
    assert result.passed, result.message
