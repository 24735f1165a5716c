"""The command line, as a user runs it: exit codes, output, files, and no tracebacks."""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import subprocess
import sys

import pytest

from .conftest import ROOT

GK = os.path.join("games", "giant_king.yaml")


def rulesvm(*args, input_text: str | None = None, cwd: str = ROOT) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "rulesvm.cli.main", *args], cwd=cwd, input=input_text,
                          capture_output=True, text=True, timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stdout, proc.stdout
    return proc


def test_run_plays_a_full_game_and_prints_the_ranking():
    p = rulesvm("run", GK, "--seed", "3")
    assert p.returncode == 0
    assert "--- Round 1 ---" in p.stdout
    assert "FINAL BATTLE" in p.stdout
    assert "Winner: Player" in p.stdout


def test_same_seed_gives_byte_identical_output_and_log(tmp_path):
    outs = []
    for name in ("a.jsonl", "b.jsonl"):
        p = rulesvm("run", GK, "--seed", "11", "--log", str(tmp_path / name))
        assert p.returncode == 0
        outs.append(p.stdout)
    assert outs[0] == outs[1]
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    other = rulesvm("run", GK, "--seed", "12").stdout
    assert other != outs[0]


def test_json_output_and_log_records(tmp_path):
    log = tmp_path / "g.jsonl"
    p = rulesvm("run", GK, "--seed", "5", "--players", "3", "--json", "--quiet", "--log", str(log))
    assert p.returncode == 0
    data = json.loads(p.stdout)
    assert data["game"] == "giant_king" and data["seed"] == 5 and data["players"] == 3
    assert sorted(data["result"]["ranking"]) == [1, 2, 3]
    assert data["result"]["winner"] == data["result"]["ranking"][0]
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert records[0]["type"] == "start" and records[0]["game_path"].endswith("giant_king.yaml")
    decisions = [r for r in records if r["type"] == "decision"]
    assert len(decisions) == data["decisions"]
    assert all({"player", "options", "choice", "label"} <= set(r) for r in decisions)
    assert records[-2]["type"] == "end" and records[-2]["result"] == data["result"]
    # The last line is the checksum of every byte before it.
    body = log.read_bytes()[:-len(log.read_text().splitlines()[-1]) - 1]
    assert records[-1] == {"type": "checksum", "checksum": "sha256:" + hashlib.sha256(body).hexdigest()}


def test_json_puts_the_readable_log_on_stderr():
    p = rulesvm("run", GK, "--seed", "5", "--json")
    json.loads(p.stdout)
    assert "--- Round 1 ---" in p.stderr


@pytest.mark.parametrize("args,fragment", [
    (["run", GK, "--players", "5"], "3 to 4 players"),
    (["run", GK, "--players", "2"], "3 to 4 players"),
    (["run", GK, "--human", "9"], "seat 9 does not exist"),
    (["run", GK, "--agent", "2=genius"], "unknown agent `genius`"),
    (["run", GK, "--agent", "two"], "SEAT=NAME"),
    (["run", GK, "--set", "laps=many"], "whole number"),
    (["run", GK, "--set", "lapz=3"], "unknown option `lapz`"),
    (["run", GK, "--set", "laps=9"], "between 1 and 5"),
    (["run", "games/nothing.yaml"], "no such file"),
    (["run", GK, "--save-at", "3"], "--save-at needs --save"),
    (["validate", "no/such/dir"], "no such file or folder"),
    # One style for a missing file or a folder given for a file, in every command.
    (["run", "giant_king"], "no such file: giant_king\n   = hint: did you mean games/giant_king.yaml?"),
    (["info", "games/giant_kong.yaml"], "did you mean games/giant_king.yaml?"),
    (["simulate", "giant_king", "-n", "1"], "did you mean games/giant_king.yaml?"),
    (["info", "games/"], "games/ is a folder: give a game's YAML file\n   = hint: in it: games/alien_attack.yaml, "),
    (["replay", "no_such_log.jsonl"], "no such file: no_such_log.jsonl"),
    (["resume", "games"], "games is a folder: give a save's JSON file"),
    (["test", "games/giant_king/scenarios/double_powr.scenario.yaml"],
     "did you mean games/giant_king/scenarios/double_power.scenario.yaml?"),
    (["fmt", "games/giant_king.rule"], "did you mean games/giant_king.rules?"),
])
def test_usage_errors_exit_2(args, fragment):
    p = rulesvm(*args)
    assert p.returncode == 2, p.stderr
    assert fragment in p.stderr


def test_typer_usage_errors_exit_2():
    assert rulesvm("run").returncode == 2
    assert rulesvm("run", GK, "--seed", "abc").returncode == 2
    assert rulesvm("frobnicate").returncode == 2


def test_existing_log_is_not_overwritten(tmp_path):
    log = tmp_path / "keep.jsonl"
    log.write_text("precious\n")
    p = rulesvm("run", GK, "--seed", "1", "--log", str(log))
    assert p.returncode == 2 and "already exists" in p.stderr
    assert log.read_text() == "precious\n"
    assert rulesvm("run", GK, "--seed", "1", "--log", str(log), "--force").returncode == 0


def test_help_for_every_command():
    for cmd in ([], ["run"], ["validate"], ["info"], ["resume"], ["agents"]):
        p = rulesvm(*cmd, "--help")
        assert p.returncode == 0 and "Usage" in p.stdout
    run_help = rulesvm("run", "--help").stdout
    for opt in ("--players", "--seed", "--human", "--agent", "--log", "--json", "--save", "--card-set", "--set"):
        assert opt in run_help


@pytest.mark.slow
def test_validate_ok_and_errors(tmp_path):
    ok = rulesvm("validate", "games/")
    assert ok.returncode == 0, ok.stderr
    bad = rulesvm("validate", "tests/diagnostics/card_data/game.yaml")
    assert bad.returncode == 1
    assert "game.yaml:7:21: error[E232]: unknown card kind `numbred`" in bad.stderr
    assert "^^^^^^^" in bad.stderr and "did you mean `numbered`?" in bad.stderr


def test_validate_card_set_reports_positions_in_the_set_file():
    p = rulesvm("validate", GK, "--card-set", "tests/games/extra_cards.yaml")
    assert p.returncode == 1
    err = p.stderr
    assert "extra_cards.yaml:6:10: error[E233]: duplicate card id `start_red_1`" in err
    assert "extra_cards.yaml:7:44: error[E231]" in err          # number "9" is not a whole number
    assert "extra_cards.yaml:7:72: error[E234]: unknown ability `teleport`" in err
    assert "extra_cards.yaml:8:23: error[E232]: unknown card kind `spirit`" in err


def test_card_set_adds_cards_to_a_game():
    p = rulesvm("info", GK, "--card-set", "tests/games/good_cards.yaml", "--json")
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert data["cards"]["total"] == 61 and data["cards"]["by_kind"]["knight"] == 16
    run = rulesvm("run", GK, "--card-set", "tests/games/good_cards.yaml", "--seed", "2", "--quiet", "--json")
    assert run.returncode == 0, run.stderr


def test_info_json_has_the_documented_keys():
    data = json.loads(rulesvm("info", GK, "--json").stdout)
    assert {"players", "options", "variants", "zones", "cards"} <= set(data)
    assert data["players"] == {"min": 3, "max": 4, "default": 4}
    assert {o["name"] for o in data["options"]} >= {"laps"}
    assert data["cards"]["total"] == 60
    assert data["bots"] == {"evaluate": True, "playout": 10}     # the game file's `bots:`, and its judge


def test_info_says_how_the_bots_play_the_game():
    assert "MCTS playouts stop after 10 decisions" in rulesvm("info", GK).stdout
    ufo = rulesvm("info", os.path.join(ROOT, "games", "ufo_abduction.yaml")).stdout
    assert "Bots: no `evaluate`; MCTS playouts run to the end" in ufo


def test_broken_game_file_exits_1_with_diagnostics():
    p = rulesvm("run", "tests/diagnostics/names.rules")
    assert p.returncode == 1
    assert "error[E" in p.stderr


def test_human_plays_with_bad_input_asked_again_and_clean_eof():
    p = rulesvm("run", GK, "--seed", "5", "--human", "1", input_text="abc\n99\n1\n")
    assert p.returncode == 0
    assert "`abc` is not an option" in p.stdout
    assert "`99` is not an option" in p.stdout
    assert "Player 1 plays" in p.stdout
    assert "Game stopped (end of input)" in p.stderr


def test_human_sees_own_hand_not_others():
    p = rulesvm("run", GK, "--seed", "5", "--human", "2", input_text="")
    board = p.stdout.split("== Player 2 (you) ==")[1]
    assert "hand: " in board and "card(s)" in board
    mine = board.split("\n")[1]
    assert "Blue" in mine                      # seat 2 starts with the blue cards
    assert "Red 1" not in board.split("== Table ==")[0].split("== Player 1 ==")[1] if "== Player 1 ==" in board else True


def test_save_at_and_resume_finish_like_an_uninterrupted_game(tmp_path):
    full = json.loads(rulesvm("run", GK, "--seed", "21", "--json", "--quiet").stdout)
    save = tmp_path / "g.json"
    p = rulesvm("run", GK, "--seed", "21", "--save", str(save), "--save-at", "30", "--quiet")
    assert p.returncode == 0 and save.exists()
    resumed = json.loads(rulesvm("resume", str(save), "--json", "--quiet").stdout)
    assert resumed["decisions"] == full["decisions"]
    assert resumed["result"]["scores"] == full["result"]["scores"]


def test_resume_bad_files(tmp_path):
    junk = tmp_path / "junk.json"
    junk.write_text("{not json")
    p = rulesvm("resume", str(junk))
    assert p.returncode == 1 and "not a rulesvm save file" in p.stderr
    missing = rulesvm("resume", str(tmp_path / "missing.json"))      # a usage error, as in every command
    assert missing.returncode == 2 and "no such file" in missing.stderr


def test_human_save_command(tmp_path):
    save = tmp_path / "h.json"
    p = rulesvm("run", GK, "--seed", "5", "--human", "1", "--save", str(save), input_text="save\nquit\n")
    assert p.returncode == 0
    assert "saved to" in p.stdout and save.exists()
    again = rulesvm("resume", str(save), "--human", "1", input_text="")
    assert "Resuming Giant King" in again.stderr


def test_version():
    from importlib.metadata import version
    out = rulesvm("--version")
    assert out.returncode == 0 and out.stdout.strip() == f"rulesvm {version('rulesvm')}"


def _readme_tour() -> list[list[str]]:
    """The README tour's commands (each `rulesvm ...` of its code block, `&&` split), as args."""
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as fh:
        text = fh.read()
    block = text.split("## A short tour", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    commands = []
    for line in block.splitlines():
        line = line.split("  #", 1)[0].strip()
        for part in line.split("&&"):
            words = shlex.split(part)
            if words and words[0] == "rulesvm":
                commands.append(words[1:])
    return commands


@pytest.mark.slow
def test_the_readme_tour_can_be_run_twice(tmp_path):
    """Every tour command that writes a file runs a second time without "already exists"."""
    os.symlink(os.path.join(ROOT, "games"), tmp_path / "games")
    writes = ("--log", "--save", "--report", "--plot", "--csv")
    tour = _readme_tour()
    assert len(tour) > 10
    chosen = [args for args in tour if any(w in args for w in writes)]
    assert len(chosen) >= 3
    # A smaller simulation than the README's, the same options.
    chosen = [[("8" if i and args[i - 1] == "-n" else a) for i, a in enumerate(args)] for args in chosen]
    for args in chosen:
        for attempt in (1, 2):
            p = rulesvm(*args, cwd=str(tmp_path))
            assert p.returncode == 0, (attempt, args, p.stderr)
            assert "already exists" not in p.stderr
    # The files the tour goes on to read were written.
    assert rulesvm("resume", "g.json", "--quiet", cwd=str(tmp_path)).returncode == 0
    assert rulesvm("replay", "game.jsonl", "--quiet", cwd=str(tmp_path)).returncode == 0


def test_help_shows_flags_without_a_type():
    for args in (["--help"], ["run", "--help"], ["simulate", "--help"], ["replay", "--help"]):
        p = rulesvm(*args)
        assert p.returncode == 0, p.stderr
        assert "<bool>" not in p.stdout, args
    run_help = rulesvm("run", "--help").stdout
    assert "--json" in run_help and "--players" in run_help and "<int>" in run_help   # options that take values keep theirs
    assert "Usage: rulesvm run" in run_help


def _complete(words: str) -> list[str]:
    """What bash completion offers after `words` (the last one being completed)."""
    env = dict(os.environ, _RULESVM_COMPLETE="complete_bash", COMP_WORDS=words, COMP_CWORD=str(len(words.split()) - 1))
    p = subprocess.run([sys.executable, "-m", "rulesvm.cli.main"], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout.split()


def test_shell_completion_completes_commands_and_options():
    assert _complete("rulesvm sim") == ["simulate"]
    assert "--step" in _complete("rulesvm replay --st")
    assert set(_complete("rulesvm re")) == {"resume", "replay"}
    help_text = rulesvm("--help").stdout
    assert "--install-completion" in help_text and "--show-completion" in help_text
    script = subprocess.run([sys.executable, "-m", "rulesvm.cli.main", "--show-completion", "bash"], cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    assert script.returncode == 0 and "_RULESVM_COMPLETE=complete_bash" in script.stdout


def test_run_names_the_variants_and_options_in_its_first_line():
    first = rulesvm("run", GK, "--seed", "2").stdout.splitlines()[0]
    assert first == "giant_king: 4 players, seed 2; no variant; default options"
    first = rulesvm("run", GK, "--seed", "2", "--variant", "three_laps", "--set", "four_card_two_pair=true",
                    "--players", "3").stdout.splitlines()[0]
    assert first == "giant_king: 3 players, seed 2; variant three_laps; options laps=3, four_card_two_pair=true"


def test_info_shows_whole_option_names_when_piped():
    p = rulesvm("info", GK)
    assert p.returncode == 0
    assert "…" not in p.stdout
    for name in ("max_cards_per_turn", "four_card_two_pair", "formations", "rewards_for_all"):
        assert name in p.stdout, name
