"""Compound choices (`choose` with `steps:`): one decision for agents, a sequence of picks for
people. The picks (sequence, back, commit), secrecy (another seat sees nothing until the whole
choice is committed), the checker's and the run time's errors, saves, the random bot's opt-in,
the terminal through a pseudo-terminal, and bots playing Mach Struggle exactly as before its
plan was written with steps."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import shutil
import subprocess
import sys
import time

import pytest

from rulesvm import api
from rulesvm.dsl.diagnostics import DiagnosticError
from rulesvm.interpreter import RulesRuntimeError, compile_program
from rulesvm.interpreter.agents import SeatView, make_agent
from rulesvm.interpreter.engine import Match
from rulesvm.interpreter.steps import StepPicker
from rulesvm.saves import MoveRecorder, load_saved, save_match
from rulesvm.testing.scenario import run_scenario
from rulesvm.web.views import decision_view

from .conftest import ROOT, load
from .helpers import write_game

DINNER = os.path.join(ROOT, "tests", "games", "compound", "dinner.yaml")
MS = os.path.join(ROOT, "games", "mach_struggle.yaml")


def test_agents_see_one_decision_of_every_combination():
    match = api.new_game(load(DINNER), 2, 1)
    d = match.decision
    assert d.player == 0 and d.secret
    assert len(d.options) == 16 and d.options[0].label == "soup fish white"
    assert "salad fish red" not in d.labels                 # the menu's own rule, not the steps'
    assert d.steps.prompts == ("Starter", "Main", "Drink")
    assert d.steps.parts[0] == ("soup", "fish", "white (drink)")   # step_label: shows each pick
    assert len(SeatView(match, 0).options) == 16


@pytest.mark.parametrize("path", [DINNER, MS], ids=["dinner", "mach_struggle"])
def test_both_back_ends_build_the_same_steps(path):
    game = api.load_game(path)
    firsts = []
    for codegen in (True, False):
        program = compile_program(game.model, game.options, codegen=codegen)
        firsts.append(api.Match(program, 2, 3).decision)
    assert firsts[0] == firsts[1] and firsts[0].steps is not None


def test_picks_follow_each_other_and_can_be_taken_back():
    d = api.new_game(load(DINNER), 2, 1).decision
    picker = StepPicker(d)
    assert picker.choices() == ["soup", "salad"] and picker.step == 0
    picker.pick("salad")
    assert picker.choices() == ["fish", "steak", "pasta"]
    picker.pick("fish")
    assert picker.choices() == ["white (drink)", "water (drink)"]       # no red wine with fish
    with pytest.raises(ValueError):
        picker.pick("red (drink)")
    assert picker.undo() and picker.picked == ["salad"]
    picker.pick("steak")
    assert "red (drink)" in picker.choices()
    with pytest.raises(ValueError):
        picker.index                                                    # not complete yet
    picker.pick("red (drink)")
    assert picker.complete and picker.choices() == []
    assert d.options[picker.index].label == "salad steak red"
    assert picker.undo() and picker.undo() and picker.undo() and not picker.undo()
    assert picker.choices() == ["soup", "salad"]


def test_nobody_sees_a_half_made_choice_until_it_is_committed():
    match = api.new_game(load(DINNER), 2, 1)
    before = [json.dumps(match.observation(s), sort_keys=True) for s in (0, 1)]
    other = json.dumps(decision_view(match, 1), sort_keys=True)
    picker = StepPicker(match.decision)
    picker.pick("salad")
    picker.pick("steak")
    # The picks live in the picker: the game, and every seat's view of it, did not change.
    assert [json.dumps(match.observation(s), sort_keys=True) for s in (0, 1)] == before
    assert json.dumps(decision_view(match, 1), sort_keys=True) == other
    assert "steps" not in other and "options" not in other and "Order" not in other
    assert "steps" in decision_view(match, 0)                         # the decider's page gets them
    assert match.decisions_made == 0
    picker.pick("red (drink)")
    match.apply(picker.index)
    # Committed: Player 2 decides next and still cannot read Player 1's order (visible(owner)).
    assert match.decision.player == 1
    assert match.observation(1)["player_vars"]["order"] == {"2": ""}
    assert match.observation(0)["player_vars"]["order"] == {"1": "salad steak red"}
    match.apply_label("soup pasta water")
    assert match.is_over


def test_picks_that_are_unseen_cards_are_not_named(tmp_path):
    path = write_game(tmp_path, """kind c { }
zone deck: ordered, hidden
zone hand: per_player, visible(owner)
game {
  move(card("ace"), hand(players[0]))
  move([x for x in box], deck)
  let x = choose(product([[a for a in hand(players[0])], [b for b in deck]]), by: players[0],
                 label: x => "{x[0]} against {x[1]}", steps: ["Yours", "Theirs"])
  end_game(scores: [0])
}
""", cards="- {id: ace, kind: c, name: Ace}\n- {id: king, kind: c, name: King}\n- {id: queen, kind: c, name: Queen}")
    match = api.new_game(api.load_game(path), 1, 0)
    d = match.decision_for(0)
    shown = json.dumps([d.labels, d.steps.parts])
    assert "King" not in shown and "Queen" not in shown and "Ace" in shown
    assert d.steps.parts[0][1] != d.steps.parts[1][1]                  # two cards, two numbers
    assert [p[1] for p in d.steps.parts] == [lab.split(" against ")[1] for lab in d.labels]
    picker = StepPicker(d)
    picker.pick("Ace")
    picker.pick(picker.choices()[1])
    assert d.options[picker.index].label == "Ace against face-down card 2"
    assert "King" in json.dumps(match.decision.steps.parts)         # the game itself knows them
    assert "King" not in json.dumps(decision_view(match, 0))


def test_a_save_in_the_middle_keeps_the_steps(tmp_path):
    # A fresh load: a label's lambda leaves its last argument in a frame's slot, and labels are
    # memoised per program, so a program that already labelled these options saves other slots.
    game = api.load_game(DINNER)
    match = api.new_game(game, 2, 1, sink=MoveRecorder())
    again = Match.from_json(game.program, match.to_json())
    assert again.decision.steps == match.decision.steps
    path = tmp_path / "g.json"
    save_match(match, game, str(path))
    assert load_saved(str(path))[1].decision.steps == match.decision.steps
    data = json.loads(path.read_text())
    data["match"]["state"]["pending"]["steps"]["parts"][0] = ["soup"]          # one pick short
    path.write_text(json.dumps(data))
    with pytest.raises(DiagnosticError) as info:
        load_saved(str(path), allow_edited=True)
    assert "the pending decision is damaged (its steps)" in info.value.diagnostics[0].message


def test_the_random_bot_may_pick_step_by_step():
    game = load(DINNER)
    fish = {"whole": 0, "steps": 0}
    for seed in range(600):
        for how, spec in (("whole", "random"), ("steps", "random:steps=on")):
            match = api.new_game(game, 2, 1)
            index = make_agent(spec, seed).choose(SeatView(match, 0))
            assert 0 <= index < 16
            fish[how] += match.decision.options[index].value[1] == "fish"
    # Uniform over the 16 dinners, fish is 4 in 16; uniform per step, a main is 1 in 3.
    assert fish["whole"] / 600 < 0.29 < fish["steps"] / 600
    assert make_agent("random:steps=on", 1).describe() == "random:steps=on"


def test_the_random_bot_by_steps_from_the_command_line():
    p = subprocess.run([sys.executable, "-m", "rulesvm.cli.main", "run", "tests/games/compound/dinner.yaml",
                        "--seed", "2", "--agent", "1=random:steps=on", "--quiet", "--json"],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["agents"]["1"] == "random:steps=on" and out["decisions"] == 2


def _load_rules(tmp_path, rules: str):
    with pytest.raises(DiagnosticError) as info:
        api.load_game(write_game(tmp_path, rules))
    return info.value.diagnostics


@pytest.mark.parametrize("call,code,words", [
    ('choose([1, 2], by: players[0], steps: ["A"])', "E303", "should be a list of picks"),
    ('choose([[1]], by: players[0], steps: [])', "E303", "at least one step"),
    ('choose([[1]], by: players[0], steps: ["A"], pass: "No")', "E305", "both `steps:` and `pass:`"),
    ('choose([[1]], by: players[0], steps: ["A"], step_label: x => x + 1)', "E303", "step_label"),
])
def test_the_checker_refuses_steps_it_cannot_offer(tmp_path, call, code, words):
    diags = _load_rules(tmp_path, f"game {{\n  let x = {call}\n  end_game(scores: [0])\n}}\n")
    assert [d.code for d in diags] == [code]
    assert words in diags[0].message
    assert diags[0].span.line == 2


def test_an_option_with_the_wrong_number_of_picks_is_a_runtime_error(tmp_path):
    path = write_game(tmp_path, 'game {\n  let x = choose([[1, 2], [3]], by: players[0], steps: ["A", "B"])\n'
                                '  end_game(scores: [0])\n}\n')
    with pytest.raises(RulesRuntimeError) as info:
        api.new_game(api.load_game(path), 1, 0)
    assert info.value.code == "R005" and "option 2" in info.value.message and "2 picks" in info.value.message


def test_a_scenario_pick_that_is_not_offered_says_what_is():
    r = run_scenario(os.path.join(ROOT, "tests", "scenarios", "step_not_offered.scenario.yaml"))
    assert not r.passed
    assert "step 3 (Drink) does not offer `red (drink)`; it offers: white (drink), water (drink)" in r.message


# ---------------------------------------------------------------------- bots unchanged

def _without_steps(tmp_path) -> str:
    """Mach Struggle as it was before its plan was written with `steps:` (same files otherwise)."""
    shutil.copytree(os.path.join(ROOT, "games", "mach_struggle"), tmp_path / "mach_struggle")
    shutil.copy(MS, tmp_path / "mach_struggle.yaml")
    rules = open(os.path.join(ROOT, "games", "mach_struggle.rules"), encoding="utf-8").read()
    plain = re.sub(r",\n\s*steps: \[[^\]]*\],\n\s*step_label: [^\n]*\)", ")", rules)
    assert plain != rules and "steps:" not in plain
    (tmp_path / "mach_struggle.rules").write_text(plain)
    return str(tmp_path / "mach_struggle.yaml")


def _bot_game(game, seed: int, specs: dict) -> list:
    events = []

    def sink(record):
        record.pop("fingerprint", None)              # the rules' text differs, by design
        events.append(json.dumps(record, sort_keys=True))
    match = api.new_game(game, 2, seed, sink=sink)
    api.play(match, api.make_agents(specs, seed, [0, 1]))
    return events


def test_bots_play_mach_struggle_exactly_as_before_the_steps(tmp_path):
    now, before = load(MS), api.load_game(_without_steps(tmp_path))
    assert before.program.model is not now.program.model
    for seed, specs in ((1, {0: "random", 1: "random"}), (2, {0: "greedy", 1: "random"}),
                        (3, {0: "mcts:iterations=30", 1: "greedy"})):
        assert _bot_game(now, seed, specs) == _bot_game(before, seed, specs), (seed, specs)


# ---------------------------------------------------------------------- the terminal

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class Terminal:
    """`rulesvm ARGS` on a pseudo-terminal, as a person runs it."""

    def __init__(self, *args):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:                                   # the child: the command itself
            os.chdir(ROOT)
            env = {**os.environ, "COLUMNS": "120", "LINES": "40", "TERM": "xterm"}
            os.execve(sys.executable, [sys.executable, "-m", "rulesvm.cli.main", *args], env)
        self.text = ""
        self.seen = 0

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return True
        try:
            chunk = os.read(self.fd, 65536)
        except OSError:                                     # the command ended
            return False
        if not chunk:
            return False
        self.text += ANSI.sub("", chunk.decode("utf-8", "replace")).replace("\r", "")
        return True

    def expect(self, what: str, timeout: float = 60) -> str:
        """Wait for `what` after what was already read; returns the text up to it."""
        deadline = time.monotonic() + timeout
        while what not in self.text[self.seen:]:
            if time.monotonic() > deadline or not self._read(0.2):
                raise AssertionError(f"`{what}` did not appear; the terminal shows:\n{self.text[self.seen:]}")
        end = self.text.index(what, self.seen) + len(what)
        shown, self.seen = self.text[self.seen:end], end
        return shown

    def type(self, line: str) -> None:
        os.write(self.fd, line.encode() + b"\n")

    def close(self) -> str:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and self._read(0.2):
            pass
        _, status = os.waitpid(self.pid, 0)
        os.close(self.fd)
        assert os.waitstatus_to_exitcode(status) == 0, self.text
        return self.text


def test_a_person_orders_step_by_step_at_the_terminal():
    t = Terminal("run", "tests/games/compound/dinner.yaml", "--seed", "1", "--human", "1")
    shown = t.expect("step 1 of 3")
    assert "Step 1 of 3: Starter" in shown and "1) soup" in shown and "2) salad" in shown
    assert "soup fish white" not in shown                        # not the 16 combinations
    t.type("2")
    shown = t.expect("step 2 of 3")
    assert "so far: salad" in shown and "Step 2 of 3: Main" in shown
    t.type("fish")
    shown = t.expect("step 3 of 3")
    assert "white (drink)" in shown and "red (drink)" not in shown
    t.type("back")
    shown = t.expect("step 2 of 3")
    assert "took back a pick" in shown and "so far: salad\n" in shown
    t.type("steak")
    shown = t.expect("step 3 of 3")
    assert "2) red (drink)" in shown
    t.type("wine")
    assert "`wine` is not a pick of this step" in t.expect("step 3 of 3")
    t.type("red")                                                # a unique start of a pick
    out = t.close()
    assert "Player 1 ordered salad steak red" in out


def test_mach_struggle_plan_picked_card_by_card_with_confirm_at_the_terminal():
    t = Terminal("run", "games/mach_struggle.yaml", "--seed", "4", "--human", "1")
    shown = t.expect("step 1 of 4")
    assert "Step 1 of 4: Aim" in shown and "R2 range 2" in shown
    for answer, step in (("r2", "step 2 of 4"), ("at", "step 3 of 4")):
        t.type(answer)
        shown = t.expect(step)
    assert "AT attack" not in shown.split("Round 2 maneuver")[1]        # one Attack/Hard brake card
    t.type("1")
    t.expect("step 4 of 4")
    t.type("d-")
    assert "you chose: R2 AT A+ D-. Commit it?" in t.expect("Commit it? [Y/n]")
    t.type("n")                                                  # not committed: the last pick is back
    t.expect("step 4 of 4")
    t.type("a+")
    t.expect("you chose: R2 AT A+ A+. Commit it? [Y/n]")
    t.type("y")
    t.expect("Leader: lay one maneuver sideways")
    t.type("quit")
    out = t.close()
    assert "Game stopped (quit)" in out
