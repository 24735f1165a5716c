"""The tutorial never rots: docs/tutorial.md against the files of games/tutorial/.

- A code block after `<!-- file: PATH -->` is exactly that file; after `<!-- excerpt: PATH -->`
  it is a run of consecutive lines of it.
- A `console` block starts with `$ COMMAND`; the rest is the command's output (stdout and
  stderr), run from the repository root with the installed `rulesvm`. A line `...` stands
  for any number of lines. After `<!-- mistake: PATH | OLD | NEW -->` the command runs on a
  copy of games/tutorial/ where OLD is replaced by NEW in PATH. After `<!-- slow -->` the
  command runs with `-n 2` and only has to succeed.
- Every step of the tutorial (games/tutorial/steps/stepN/ and the finished game) validates
  without a diagnostic and plays to the end with every player count, and the scenarios
  catch a broken rule.

After an intended change of the game or of the command line's output, rewrite the outputs
shown in the tutorial (blocks without `...`) and review the diff:

    .venv/bin/python -m tests.test_tutorial --update
    git diff docs/tutorial.md
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass

import pytest

from rulesvm import api
from rulesvm.testing.scenario import run_scenario

from .helpers import random_playout

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "tutorial.md")
TUTORIAL = os.path.join(ROOT, "games", "tutorial")
FINAL = os.path.join(TUTORIAL, "crazy_eights.yaml")
STEPS = sorted(os.path.join(TUTORIAL, "steps", d, "crazy_eights.yaml")
               for d in os.listdir(os.path.join(TUTORIAL, "steps")))
MARKER = re.compile(r"^<!-- (file|excerpt|mistake|slow)(?::\s*(.*?))?\s*-->$")


@dataclass
class Block:
    line: int            # 1-based line of the opening fence
    info: str            # the fence's info string: yaml, console, ...
    lines: list          # the block's content
    marker: str | None   # file / excerpt / mistake / slow
    arg: str | None


def blocks(text: str) -> list[Block]:
    out = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        if lines[i].startswith("```"):
            info = lines[i][3:].strip()
            j = i + 1
            while not lines[j].startswith("```"):
                j += 1
            prev = lines[i - 1].strip() if i > 0 else ""
            m = MARKER.match(prev)
            out.append(Block(i + 1, info, lines[i + 1:j], m.group(1) if m else None, m.group(2) if m else None))
            i = j + 1
        else:
            i += 1
    return out


def doc_blocks() -> list[Block]:
    with open(DOC, encoding="utf-8") as fh:
        return blocks(fh.read())


def read(path: str) -> str:
    with open(os.path.join(ROOT, path), encoding="utf-8") as fh:
        return fh.read()


def _id(b: Block) -> str:
    return f"line{b.line}"


# ============================================================================ files shown

FILE_BLOCKS = [b for b in doc_blocks() if b.marker in ("file", "excerpt")]


@pytest.mark.parametrize("block", FILE_BLOCKS, ids=_id)
def test_code_blocks_are_the_files(block):
    text = read(block.arg)
    shown = "\n".join(block.lines) + "\n"
    if block.marker == "file":
        assert shown == text, f"docs/tutorial.md:{block.line} differs from {block.arg}"
    else:
        assert shown in text and (text.startswith(shown) or ("\n" + shown) in text), \
            f"docs/tutorial.md:{block.line}: this excerpt is not a run of whole lines of {block.arg}"


def test_every_step_and_the_finished_game_are_shown():
    shown = {b.arg for b in FILE_BLOCKS}
    assert len(STEPS) >= 4
    for game in STEPS + [FINAL]:
        rules = os.path.relpath(os.path.join(os.path.dirname(game), "crazy_eights.rules"), ROOT)
        assert rules in shown, f"the tutorial shows nothing of {rules}"
    final = {b.arg for b in FILE_BLOCKS if b.marker == "file"}
    assert {"games/tutorial/crazy_eights.rules", "games/tutorial/crazy_eights.yaml",
            "games/tutorial/steps/step1/crazy_eights.rules",
            "games/tutorial/variants/draw_one.yaml"} <= final


def test_steps_share_the_deck_and_the_game_file():
    # The tutorial shows the game file and the deck once: every step uses the same ones.
    deck = read("games/tutorial/deck.yaml")
    game = read("games/tutorial/crazy_eights.yaml")
    for step in STEPS:
        folder = os.path.dirname(step)
        with open(os.path.join(folder, "deck.yaml"), encoding="utf-8") as fh:
            assert fh.read() == deck, folder
        with open(step, encoding="utf-8") as fh:
            text = fh.read()
        base = game.split("variants:")[0].replace("../../schema/", "../../../../schema/")
        assert text == base, f"{step} should be the finished game file without its variants"


# ============================================================================ commands shown

CONSOLE = [b for b in doc_blocks() if b.info == "console"]


def _command(block: Block) -> str:
    assert block.lines and block.lines[0].startswith("$ "), \
        f"docs/tutorial.md:{block.line}: a console block starts with `$ command`"
    return block.lines[0][2:]


def _env() -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "LINES", "COLUMNS")}
    env.update(COLUMNS="80", NO_COLOR="1", PYTHONIOENCODING="utf-8",
               PATH=os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", ""))
    return env


def run_block(block: Block, tmp: str | None = None) -> tuple[int, list[str]]:
    """Run a console block's command; returns (exit code, output lines)."""
    cmd = _command(block)
    cwd = ROOT
    if block.marker == "mistake":
        path, old, new = [part.strip() for part in block.arg.split("|")]
        cwd = tmp
        shutil.copytree(TUTORIAL, os.path.join(tmp, "games", "tutorial"))
        target = os.path.join(tmp, path)
        with open(target, encoding="utf-8") as fh:
            text = fh.read()
        assert text.count(old) == 1, f"docs/tutorial.md:{block.line}: `{old}` should occur once in {path}"
        with open(target, "w", encoding="utf-8") as fh:
            fh.write(text.replace(old, new))
    if block.marker == "slow":
        cmd = re.sub(r"-n \d+", "-n 2", cmd)
    assert which_rulesvm(), "the rulesvm command is not installed next to this Python"
    proc = subprocess.run(cmd, shell=True, cwd=cwd, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, encoding="utf-8", timeout=300)
    out = [line.rstrip() for line in proc.stdout.split("\n")]
    while out and not out[0]:
        out.pop(0)
    while out and not out[-1]:
        out.pop()
    assert not any("Traceback" in line for line in out), "\n".join(out)
    return proc.returncode, out


def which_rulesvm() -> bool:
    return shutil.which("rulesvm", path=_env()["PATH"]) is not None


def matches(expected: list[str], actual: list[str]) -> bool:
    """`...` lines in `expected` stand for any number of lines."""
    parts: list[list[str]] = [[]]
    for line in expected:
        if line == "...":
            parts.append([])
        else:
            parts[-1].append(line.rstrip())
    pos = 0
    for k, part in enumerate(parts):
        if not part:
            continue
        first, last = k == 0, k == len(parts) - 1
        if first:
            if actual[:len(part)] != part:
                return False
            pos = len(part)
            if last:
                return len(actual) == len(part)
            continue
        found = -1
        for start in range(pos, len(actual) - len(part) + 1):
            if actual[start:start + len(part)] == part and (not last or start + len(part) == len(actual)):
                found = start
                break
        if found < 0:
            return False
        pos = found + len(part)
    return True


@pytest.mark.parametrize("block", CONSOLE, ids=_id)
def test_console_blocks_show_the_real_output(block, tmp_path):
    code, out = run_block(block, str(tmp_path))
    if block.marker == "slow":
        assert code == 0, "\n".join(out)
        return
    expected = block.lines[1:]
    assert matches(expected, out), (f"docs/tutorial.md:{block.line}: `{_command(block)}` printed:\n"
                                    + "\n".join(out) + "\n(run `python -m tests.test_tutorial --update`)")


def test_the_output_matcher_can_fail():
    assert matches(["a", "...", "c"], ["a", "b", "c"])
    assert matches(["...", "b", "..."], ["a", "b", "c"])
    assert not matches(["a", "...", "c"], ["a", "b", "d"])
    assert not matches(["a"], ["a", "b"])
    assert not matches(["...", "b"], ["a", "b", "c"])


# ============================================================================ the steps play

@pytest.mark.parametrize("path", STEPS + [FINAL], ids=lambda p: os.path.relpath(os.path.dirname(p), TUTORIAL))
def test_every_step_validates_cleanly_and_plays_to_the_end(path):
    diags = api.validate_game(path)
    assert not diags, [str(d) for d in diags]          # not even a warning
    game = api.load_game(path)
    lo, hi, _ = game.model.players
    for players in range(lo, hi + 1):
        for seed in range(3):
            match = api.new_game(game, players, seed, debug=True)
            random_playout(match, seed)
            assert match.is_over and match.result["ranking"]


def test_the_variant_validates_and_plays():
    game = api.load_game(FINAL, variants=["draw_one"])
    for seed in range(5):
        match = api.new_game(game, 3, seed, debug=True)
        random_playout(match, seed)
        assert match.result["winner"] is not None


# ============================================================================ the scenarios can fail

MUTATIONS = [
    # (scenario, old text in crazy_eights.rules, new text): the scenario must catch it.
    ("match_suit_or_rank", "c.rank == 8 or c.suit == follow", "c.suit == follow"),
    ("eight_names_a_suit", 'label: s => "Name {s}"', 'label: s => "{s}"'),
    ("last_card_eight", "c.rank == 8 and count(hand(p)) > 0", "c.rank == 8"),
    ("draw_until_playable", "while count(playable(p)) == 0 and can_draw()",
     "if count(playable(p)) == 0 and can_draw()"),
    ("reshuffle", "count(discard) - 1), stock", "count(discard)), stock"),
    ("going_out", "if c.rank > 10 then 10", "if c.rank > 10 then 5"),
    ("blocked", "hand_points(p) - hand_points(winner) for", "hand_points(p) for"),
    ("starter_eight", "while top(stock).rank == 8", "while top(stock).rank == 0"),
    ("hand_size", "if hand_size > 0 then hand_size", "if hand_size > 9 then hand_size"),
    ("deal", "player_count == 2 then 7", "player_count == 2 then 6"),
]


def test_the_scenarios_pass_and_each_catches_a_broken_rule(tmp_path):
    copy = os.path.join(str(tmp_path), "tutorial")
    shutil.copytree(TUTORIAL, copy)
    rules = os.path.join(copy, "crazy_eights.rules")
    with open(rules, encoding="utf-8") as fh:
        original = fh.read()
    scenarios = os.path.join(copy, "scenarios")
    for name in sorted(os.listdir(scenarios)):
        result = run_scenario(os.path.join(scenarios, name))
        assert result.passed, (name, result.message)
    for scenario, old, new in MUTATIONS:
        assert original.count(old) == 1, old
        with open(rules, "w", encoding="utf-8") as fh:
            fh.write(original.replace(old, new))
        result = run_scenario(os.path.join(scenarios, f"{scenario}.scenario.yaml"))
        assert not result.passed, f"{scenario} still passes with `{new}` instead of `{old}`"
    with open(rules, "w", encoding="utf-8") as fh:
        fh.write(original)


def test_the_variant_scenario_needs_the_variant(tmp_path):
    path = os.path.join(TUTORIAL, "scenarios", "draw_one.scenario.yaml")
    assert run_scenario(path).passed
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    copy = os.path.join(str(tmp_path), "tutorial")
    shutil.copytree(TUTORIAL, copy)
    with open(os.path.join(copy, "scenarios", "draw_one.scenario.yaml"), "w", encoding="utf-8") as fh:
        fh.write(text.replace("variants: [draw_one]\n", ""))
    assert not run_scenario(os.path.join(copy, "scenarios", "draw_one.scenario.yaml")).passed


# ============================================================================ --update

def update() -> None:
    import tempfile
    with open(DOC, encoding="utf-8") as fh:
        lines = fh.read().split("\n")
    changed = 0
    for block in reversed(blocks("\n".join(lines))):
        if block.info != "console" or block.marker == "slow" or "..." in block.lines:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            _, out = run_block(block, tmp)
        start = block.line          # index of the first content line (0-based) = fence line (1-based)
        end = start + len(block.lines)
        new = [block.lines[0]] + out
        if lines[start:end] != new:
            lines[start:end] = new
            changed += 1
    with open(DOC, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines))
    print(f"updated {changed} output block(s) in docs/tutorial.md; blocks with `...` are checked, not rewritten")


if __name__ == "__main__":
    if "--update" in sys.argv:
        update()
    else:
        print(__doc__)
