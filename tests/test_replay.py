"""Replays of logged games, regression detection after rule changes, undo in human play."""

from __future__ import annotations

import hashlib
import json
import os
import pty
import select
import shutil
import subprocess
import sys
import time

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
    missing = rulesvm("replay", str(tmp_path / "none.jsonl"))        # a usage error, as in every command
    assert missing.returncode == 2 and "no such file" in missing.stderr


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
    # Options from a hand (no order) are listed in card-file order: 1 = Red 1, 2 = Red 2.
    assert decisions[0]["label"] == "Red 1" and decisions[-1]["label"] == "Red 2"
    again = tmp_path / "again.jsonl"
    replayed = rulesvm("replay", str(log), "--quiet", "--log", str(again))
    assert replayed.returncode == 0, replayed.stderr
    assert "Next: Player 1" in replayed.stdout
    # The replay takes the same decisions back, and checks every record on the way.
    assert again.read_bytes() == log.read_bytes()


def test_safe_undo_refuses_after_the_bots_showed_their_cards():
    p = rulesvm("run", GK, "--seed", "5", "--human", "1", input_text="5\nundo\n")
    assert "you cannot undo now: you have seen a card since that decision" in p.stdout
    assert "taking back" not in p.stdout


def test_undo_with_nothing_to_undo():
    p = rulesvm("run", GK, "--seed", "5", "--human", "1", input_text="undo\n")
    assert "nothing to undo" in p.stdout


# ---------------------------------------------------------------------- checksums and edited logs (issue 21)

def _rewrite(log, tmp_path, change, name="edited.jsonl", recompute=False):
    """A copy of the log with `change(lines)` applied to its lines (the checksum line left out),
    and either the old checksum line kept or (`recompute`, as a forger would) a new one."""
    lines = log.read_text().splitlines()
    body, checksum = lines[:-1], lines[-1]
    assert json.loads(checksum)["type"] == "checksum"
    change(body)
    text = "\n".join(body) + "\n"
    if recompute:
        digest = "sha256:" + hashlib.sha256(text.encode()).hexdigest()
        checksum = json.dumps({"checksum": digest, "type": "checksum"}, sort_keys=True)
    out = tmp_path / name
    out.write_text(text + checksum + "\n")
    return out


def _line_of(log, kind, k=0):
    """The 0-based index of the k-th record of type `kind` in the log."""
    lines = log.read_text().splitlines()
    return [i for i, line in enumerate(lines) if json.loads(line)["type"] == kind][k]


def test_a_log_ends_with_the_checksum_of_every_byte_before(tmp_path):
    log = _log_game(tmp_path)
    raw = log.read_bytes()
    body, last = raw[:raw.rstrip(b"\n").rfind(b"\n") + 1], raw.rstrip(b"\n").rsplit(b"\n", 1)[1]
    assert json.loads(last) == {"type": "checksum", "checksum": "sha256:" + hashlib.sha256(body).hexdigest()}
    assert json.loads(body.splitlines()[-1])["type"] == "end"


def test_an_edited_log_is_refused_and_allow_edited_still_checks_each_record(tmp_path):
    log = _log_game(tmp_path)
    k = _line_of(log, "log", 5)

    def louder(body):
        rec = json.loads(body[k])
        rec["text"] += "!"
        body[k] = json.dumps(rec, sort_keys=True)
    edited = _rewrite(log, tmp_path, louder)
    last = len(edited.read_text().splitlines())
    p = rulesvm("replay", str(edited), "--quiet")
    assert p.returncode == 1
    assert f"edited.jsonl:{last}:1: error[E057]: the log was changed after it was written" in p.stderr
    assert "hint: to replay it anyway, add --allow-edited" in p.stderr
    allowed = rulesvm("replay", str(edited), "--quiet", "--allow-edited")
    assert allowed.returncode == 1
    assert f"edited.jsonl:{last}:1: warning[E057]" in allowed.stderr
    assert f"edited.jsonl:{k + 1}:1: error[E057]: the `log` record's `text` is" in allowed.stderr
    assert "Winner" not in allowed.stdout


def test_a_checksum_only_edit_replays_with_allow_edited(tmp_path):
    """An edit the replay cannot see (who played a seat) is refused by the checksum alone."""
    log = _log_game(tmp_path)

    def rename_agent(body):
        start = json.loads(body[0])
        start["agents"]["1"] = "greedy"
        body[0] = json.dumps(start, sort_keys=True)
    edited = _rewrite(log, tmp_path, rename_agent)
    assert rulesvm("replay", str(edited), "--quiet").returncode == 1
    allowed = rulesvm("replay", str(edited), "--quiet", "--allow-edited")
    assert allowed.returncode == 0, allowed.stderr
    assert "warning[E057]" in allowed.stderr and "Winner: Player" in allowed.stdout


def test_an_edited_move_record_is_named_by_its_line(tmp_path):
    log = _log_game(tmp_path)
    k = _line_of(log, "move", 20)

    def misplace(body):
        rec = json.loads(body[k])
        rec["to"] = "discard[1]" if rec["to"] != "discard[1]" else "discard[2]"
        body[k] = json.dumps(rec, sort_keys=True)
    edited = _rewrite(log, tmp_path, misplace, recompute=True)     # a valid checksum: the records are checked
    p = rulesvm("replay", str(edited), "--quiet")
    assert p.returncode == 1
    assert f"edited.jsonl:{k + 1}:1: error[E057]: the `move` record's `to` is \"discard[" in p.stderr
    assert "in the replayed game" in p.stderr


def test_a_deleted_move_record_is_found(tmp_path):
    log = _log_game(tmp_path)
    k = _line_of(log, "move", 20)
    edited = _rewrite(log, tmp_path, lambda body: body.pop(k), recompute=True)
    p = rulesvm("replay", str(edited), "--quiet")
    assert p.returncode == 1 and f"edited.jsonl:{k + 1}:1: error[E057]" in p.stderr, p.stderr


def test_a_deleted_or_edited_decision_record_is_found(tmp_path):
    log = _log_game(tmp_path)
    k = _line_of(log, "decision", 10)
    deleted = _rewrite(log, tmp_path, lambda body: body.pop(k), "deleted.jsonl", recompute=True)
    p = rulesvm("replay", str(deleted), "--quiet")
    assert p.returncode == 1 and f"deleted.jsonl:{k + 1}:1: error[E057]" in p.stderr
    assert "here, but the replayed game waits for Player" in p.stderr
    rec = json.loads(log.read_text().splitlines()[k])
    other = next(i for i, label in enumerate(rec["options"]) if label != rec["label"])

    def choose_otherwise(body):
        body[k] = json.dumps({**rec, "choice": other, "label": rec["options"][other]}, sort_keys=True)
    edited = _rewrite(log, tmp_path, choose_otherwise, recompute=True)
    p = rulesvm("replay", str(edited), "--quiet")
    assert p.returncode == 1 and "edited.jsonl:" in p.stderr and "error[E057]" in p.stderr
    line = int(p.stderr.split("edited.jsonl:")[1].split(":")[0])
    assert line > k + 1                  # a legal other answer: the records after it differ


def test_a_log_written_before_checksums_needs_allow_edited(tmp_path):
    log = _log_game(tmp_path)
    old = tmp_path / "old.jsonl"
    old.write_text("\n".join(log.read_text().splitlines()[:-1]) + "\n")
    p = rulesvm("replay", str(old), "--quiet")
    assert p.returncode == 1 and "error[E057]: the log has no checksum" in p.stderr
    assert "add --allow-edited" in p.stderr
    allowed = rulesvm("replay", str(old), "--quiet", "--allow-edited")
    assert allowed.returncode == 0 and "Winner: Player" in allowed.stdout
    assert "warning[E057]: the log has no checksum" in allowed.stderr


def test_the_replay_viewer_refuses_an_edited_log_before_serving(tmp_path):
    log = _log_game(tmp_path)
    k = _line_of(log, "move", 20)
    edited = _rewrite(log, tmp_path, lambda body: body.pop(k), recompute=True)
    p = rulesvm("serve", "--replay", str(edited), "--no-browser", "--port", "0")
    assert p.returncode == 1 and f"edited.jsonl:{k + 1}:1: error[E057]" in p.stderr
    unsigned = _rewrite(log, tmp_path, lambda body: None, "unsigned.jsonl")
    unsigned.write_text("\n".join(unsigned.read_text().splitlines()[:-1]) + "\n")
    p = rulesvm("serve", "--replay", str(unsigned), "--no-browser", "--port", "0")
    assert p.returncode == 1 and "error[E057]: the log has no checksum" in p.stderr
    assert rulesvm("serve", GK, "--allow-edited", "--no-browser").returncode == 2


def test_a_table_stopped_by_sigterm_closes_its_log_with_the_checksum(tmp_path):
    log = tmp_path / "table.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "rulesvm.cli.main", "serve", "games/mach_struggle.yaml",
                             "--bots", "1,2", "--bot-delay", "0", "--port", "0", "--no-browser", "--seed", "3",
                             "--log", str(log)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        for line in proc.stdout:
            if "Ctrl-C" in line:
                break
        deadline = time.monotonic() + 60
        while b'"type": "end"' not in log.read_bytes() and time.monotonic() < deadline:
            time.sleep(0.1)
        proc.terminate()
        assert proc.wait(timeout=20) == 0
        assert "Table closed." in proc.stdout.read()
    finally:
        proc.kill()
        proc.stdout.close()
    assert json.loads(log.read_text().splitlines()[-1])["type"] == "checksum"
    p = rulesvm("replay", str(log), "--quiet")
    assert p.returncode == 0 and "E057" not in p.stderr, p.stderr


def test_a_game_stopped_by_sigterm_still_writes_a_log_that_replays(tmp_path):
    """SIGTERM (kill, a service manager) stops `run` as Ctrl-C does: exit 143, and the log up
    to then is closed with its checksum, so `replay` accepts it."""
    import signal
    log = tmp_path / "game.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "rulesvm.cli.main", "run", GK, "--human", "1", "--log", str(log)],
                            cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    seen = b""
    while b"choose" not in seen:          # the first question's prompt: the game waits for the human
        chunk = os.read(proc.stdout.fileno(), 4096)
        assert chunk, "the game ended before its first question"
        seen += chunk
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    assert proc.returncode == 143
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert records[-1]["type"] == "checksum"
    replayed = rulesvm("replay", str(log))
    assert replayed.returncode == 0, replayed.stderr


def test_the_card_fingerprint_does_not_depend_on_how_the_game_path_was_written(monkeypatch):
    """Birthdays Fight has computed fields (formulas): a log made from one folder must replay
    from another, so its card fingerprint reads a formula's text, not where its file was."""
    from rulesvm import api
    absolute = api.load_game(os.path.join(ROOT, "games", "birthdays_fight.yaml")).program.card_fingerprint
    monkeypatch.chdir(ROOT)
    relative = api.load_game(os.path.join("games", "birthdays_fight.yaml")).program.card_fingerprint
    assert absolute == relative


class Terminal:
    """`rulesvm` run at a pseudo-terminal (stdin and stdout are a tty), as a person runs it."""

    def __init__(self, *args):
        self.master, slave = pty.openpty()
        env = dict(os.environ, COLUMNS="100", TERM="dumb", NO_COLOR="1")
        self.proc = subprocess.Popen([sys.executable, "-m", "rulesvm.cli.main", *args], cwd=ROOT, stdin=slave,
                                     stdout=slave, stderr=slave, env=env, close_fds=True)
        os.close(slave)
        self.seen = ""          # everything printed so far
        self.mark = 0           # where the next read_until looks from

    def read_until(self, text: str, timeout: float = 60.0) -> str:
        """What was printed from the last match up to and including `text`, once it appears."""
        deadline = time.monotonic() + timeout
        while text not in self.seen[self.mark:]:
            left = deadline - time.monotonic()
            assert left > 0, f"no {text!r} in:\n{self.seen}"
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.master, 4096)
                except OSError:         # the process ended and closed the terminal
                    chunk = b""
                assert chunk, f"the process ended before {text!r}:\n{self.seen}"
                self.seen += chunk.decode("utf-8", "replace").replace("\r\n", "\n")
        start, end = self.mark, self.seen.index(text, self.mark) + len(text)
        self.mark = end
        return self.seen[start:end]

    def type(self, line: str) -> None:
        os.write(self.master, (line + "\n").encode())

    def finish(self) -> int:
        code = self.proc.wait(timeout=60)
        os.close(self.master)
        return code


def test_replay_step_waits_for_each_step_at_a_terminal_and_goes_back(tmp_path):
    log = _log_game(tmp_path, seed=5)
    decisions = [json.loads(line) for line in log.read_text().splitlines() if '"type": "decision"' in line]
    term = Terminal("replay", str(log), "--step")
    term.read_until("[step 0/")
    assert "-- step 0/" in term.seen and "(the set-up)" in term.seen
    assert f"#1 Player {decisions[0]['player']}" not in term.seen           # nothing shown ahead of time
    term.type("")                                                           # Enter: the next step
    term.read_until("[step 1/")
    assert f"#1 Player {decisions[0]['player']} > {decisions[0]['label']}" in term.seen
    assert "#2 " not in term.seen
    term.type("")
    term.read_until("[step 2/")
    assert f"#2 Player {decisions[1]['player']} > {decisions[1]['label']}" in term.seen
    term.type("b")                                                          # back: step 1 again
    again = term.read_until("[step 1/")
    assert "-- step 1/" in again and f"#1 Player {decisions[0]['player']}" in again and "#2 " not in again
    term.type("q")
    term.read_until("stopped stepping")
    assert term.finish() == 0
    assert "Winner: Player" not in term.seen                                # quit before the end


def test_replay_step_goes_to_the_end_and_shows_the_result(tmp_path):
    log = _log_game(tmp_path, seed=5)
    term = Terminal("replay", str(log), "--step", "--to", "3")
    for k in range(3):
        term.read_until(f"[step {k}/3]")
        term.type("")
    term.read_until("after 3 decisions")
    assert term.finish() == 0
    assert "[step 3/3]" not in term.seen and "== Table ==" in term.seen


def test_replay_step_prints_everything_at_once_when_piped(tmp_path):
    log = _log_game(tmp_path, seed=5)
    p = rulesvm("replay", str(log), "--step")
    assert p.returncode == 0, p.stderr
    assert "Winner: Player" in p.stdout and "[step" not in p.stdout
    assert p.stdout == rulesvm("replay", str(log)).stdout
    assert "not at a terminal" in p.stderr
    q = rulesvm("replay", str(log), "--step", "--quiet")
    assert q.returncode == 2 and "--step" in q.stderr
