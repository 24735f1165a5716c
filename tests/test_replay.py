"""Replays of logged games, regression detection after rule changes, undo in human play."""

from __future__ import annotations

import json
import os
import shutil

from .conftest import ROOT
from .test_cli import GK, rulesvm


def _log_game(tmp_path, seed=4, name="g.jsonl", extra=()):
    log = tmp_path / name
    p = rulesvm("run", GK, "--seed", str(seed), "--log", str(log), "--quiet", *extra)
    assert p.returncode == 0, p.stderr
    return log


def test_replay_reproduces_the_log_byte_for_byte(tmp_path):
    log = _log_game(tmp_path)
    again = tmp_path / "again.jsonl"
    p = rulesvm("replay", str(log), "--log", str(again))
    assert p.returncode == 0, p.stderr
    assert again.read_bytes() == log.read_bytes()
    assert "Winner: Player" in p.stdout


def test_replay_shows_decisions_and_state_at_n(tmp_path):
    log = _log_game(tmp_path)
    p = rulesvm("replay", str(log), "--to", "10")
    assert p.returncode == 0
    assert "#10 Player" in p.stdout and "#11 Player" not in p.stdout
    assert "== Player 1 ==" in p.stdout and "== Player 4 ==" in p.stdout
    assert "after 10 decisions" in p.stderr


def test_replay_as_a_seat_hides_other_hands(tmp_path):
    log = _log_game(tmp_path)
    p = rulesvm("replay", str(log), "--to", "5", "--as", "2")
    assert p.returncode == 0
    assert "== Player 2 (you) ==" in p.stdout
    assert "hand: 5 card(s)" in p.stdout or "card(s)" in p.stdout


def test_replay_stops_where_the_rules_changed(tmp_path):
    log = _log_game(tmp_path)
    changed = tmp_path / "changed"
    changed.mkdir()
    shutil.copy(os.path.join(ROOT, "games", "giant_king.yaml"), changed)
    rules = open(os.path.join(ROOT, "games", "giant_king.rules"), encoding="utf-8").read()
    (changed / "giant_king.rules").write_text(rules.replace('"End turn"', '"Stop here"'), encoding="utf-8")
    p = rulesvm("replay", str(log), "--game", str(changed / "giant_king.yaml"), "--quiet")
    assert p.returncode == 1
    assert "'End turn' is no longer legal; legal were:" in p.stderr and "Stop here" in p.stderr
    assert "decision " in p.stderr


def test_replay_refuses_changed_cards_and_other_games(tmp_path):
    log = _log_game(tmp_path)
    changed = tmp_path / "cards"
    changed.mkdir()
    shutil.copy(os.path.join(ROOT, "games", "giant_king.rules"), changed)
    data = open(os.path.join(ROOT, "games", "giant_king.yaml"), encoding="utf-8").read()
    (changed / "giant_king.yaml").write_text(data.replace("points: 15", "points: 16"), encoding="utf-8")
    p = rulesvm("replay", str(log), "--game", str(changed / "giant_king.yaml"))
    assert p.returncode == 1 and "error[E055]: the cards changed" in p.stderr
    other = rulesvm("replay", str(log), "--game", "tests/games/runaway.yaml")
    assert other.returncode == 1 and "error[E054]" in other.stderr


def test_malformed_logs_are_located(tmp_path):
    log = _log_game(tmp_path)
    lines = log.read_text().splitlines()
    lines[3] = lines[3][:20]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    p = rulesvm("replay", str(bad))
    assert p.returncode == 1 and "bad.jsonl:4:" in p.stderr and "error[E050]" in p.stderr
    nostart = tmp_path / "nostart.jsonl"
    nostart.write_text('{"type": "log", "text": "hi"}\n')
    p = rulesvm("replay", str(nostart))
    assert p.returncode == 1 and "error[E052]" in p.stderr
    binary = tmp_path / "bin.jsonl"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    p = rulesvm("replay", str(binary))
    assert p.returncode == 1 and "error[E050]" in p.stderr
    assert rulesvm("replay", str(tmp_path / "none.jsonl")).returncode == 1


def test_undo_takes_back_the_humans_last_decision_and_replays(tmp_path):
    log = tmp_path / "u.jsonl"
    # --undo any: the bots' cards played since are new to Player 1, which safe undo refuses.
    p = rulesvm("run", GK, "--seed", "5", "--human", "1", "--log", str(log), "--undo", "any",
                input_text="1\nundo\n2\n")
    assert p.returncode == 0
    assert "taking back your last decision" in p.stdout
    records = [json.loads(line) for line in log.read_text().splitlines()]
    undo = [r for r in records if r["type"] == "undo"]
    assert undo and undo[0]["player"] == 1
    decisions = [r for r in records if r["type"] == "decision" and r["player"] == 1]
    assert decisions[0]["label"] == "Red 5" and decisions[-1]["label"] == "Red 4"
    replayed = rulesvm("replay", str(log), "--quiet")
    assert replayed.returncode == 0, replayed.stderr
    assert "Next: Player 1" in replayed.stdout


def test_safe_undo_refuses_after_the_bots_showed_their_cards():
    p = rulesvm("run", GK, "--seed", "5", "--human", "1", input_text="1\nundo\n")
    assert "you cannot undo now: you have seen a card since that decision" in p.stdout
    assert "taking back" not in p.stdout


def test_undo_with_nothing_to_undo():
    p = rulesvm("run", GK, "--seed", "5", "--human", "1", input_text="undo\n")
    assert "nothing to undo" in p.stdout
