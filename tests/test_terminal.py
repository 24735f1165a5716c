"""A person at a real terminal (a pseudo-terminal, python's `pty`): `describe N` / `? NAME`
show what a card does, a move the engine makes for the person is told at once with its
reason, `save FILE` saves without `--save`, and after a decision only what changed is shown.
Piped input gets a newline after each prompt."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time

from .conftest import ROOT
from .test_cli import rulesvm

PROMPT = re.compile(r"\(help for commands\) > ")


class Terminal:
    """`rulesvm ARGS` on a pseudo-terminal: `expect` reads until a pattern, `send` types a line."""

    def __init__(self, *args):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:                              # the child: the command, as a user runs it
            os.chdir(ROOT)
            os.execv(sys.executable, [sys.executable, "-m", "rulesvm.cli.main", *args])
        self.seen = ""

    def expect(self, pattern, timeout: float = 60) -> str:
        """The output up to and including `pattern` (everything read before is dropped)."""
        regex = re.compile(pattern) if isinstance(pattern, str) else pattern
        end = time.monotonic() + timeout
        while True:
            m = regex.search(self.seen)
            if m:
                before, self.seen = self.seen[:m.end()], self.seen[m.end():]
                return before
            left = end - time.monotonic()
            assert left > 0, f"timed out waiting for {regex.pattern!r}; output:\n{self.seen[-2000:]}"
            ready, _, _ = select.select([self.fd], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.fd, 65536)
                except OSError:
                    chunk = b""
                assert chunk, f"the program ended before {regex.pattern!r}; output:\n{self.seen[-2000:]}"
                self.seen += chunk.decode("utf-8", "replace").replace("\r\n", "\n")

    def send(self, line: str) -> None:
        os.write(self.fd, (line + "\n").encode())

    def close(self) -> int:
        try:
            _, status = os.waitpid(self.pid, 0)
        finally:
            os.close(self.fd)
        return os.waitstatus_to_exitcode(status)


def test_describe_an_option_and_a_card_by_name():
    t = Terminal("run", "games/giant_king.yaml", "--seed", "3", "--human", "1")
    t.expect(PROMPT)
    t.send("describe 5")                   # the hand in card-file order: option 5 is Red 5
    out = t.expect(PROMPT)
    assert "Red 5 (start_red_5: start)" in out and "Start card: adds 5 to your power" in out
    t.send("? Double Power (2)")
    out = t.expect(PROMPT)
    assert "the card placed right after this one counts double" in out
    t.send("? nothing")
    assert "no option or card `nothing`" in t.expect(PROMPT)
    t.send("quit")
    t.expect("Game stopped")
    assert t.close() == 0


def test_a_forced_end_of_turn_is_told_with_its_reason_and_only_changes_are_shown():
    t = Terminal("run", "games/giant_king.yaml", "--seed", "3", "--human", "1")
    first = t.expect(PROMPT)
    assert "== Player 4 ==" in first and "recruit:" in first           # the whole table at first
    t.send("Red 1")                                 # my turn goes on: only my hand and row changed
    out = t.expect(PROMPT)
    assert "row: Red 1" in out and "recruit:" not in out and "== Player 4 ==" not in out
    t.send("Red 5")
    out = t.expect(PROMPT)
    assert ("Automatic for Player 1: Play a card: nothing to choose (your turn ends: no card in your hand "
            "is at least 5, your highest card in play)") in out
    t.send("board")
    assert "recruit:" in t.expect(PROMPT)
    t.send("quit")
    t.expect("Game stopped")
    assert t.close() == 0


def test_save_file_at_the_prompt_without_save_option(tmp_path):
    target = tmp_path / "mid.json"
    other = tmp_path / "taken.json"
    other.write_text("{}")
    t = Terminal("run", "games/giant_king.yaml", "--seed", "3", "--human", "1")
    t.expect(PROMPT)
    t.send("Red 1")
    t.expect(PROMPT)
    t.send(f"save {target}")
    assert f"saved to {target}" in t.expect(PROMPT)
    t.send(f"save {target}")                         # its own file: written again
    assert f"saved to {target}" in t.expect(PROMPT)
    t.send(f"save {other}")                          # someone else's file: refused
    assert "exists: give another name" in t.expect(PROMPT)
    t.send("save")
    assert "type `save FILE`" in t.expect(PROMPT)
    t.send("quit")
    t.expect("Game stopped")
    assert t.close() == 0
    assert other.read_text() == "{}"
    p = subprocess.run([sys.executable, "-m", "rulesvm.cli.main", "resume", str(target), "--human", "1"],
                       cwd=ROOT, input="quit\n", capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and "Resuming Giant King after" in p.stderr
    assert "row: Red 1" in p.stdout and "hand: Red 2, Red 3, Red 4, Red 5" in p.stdout


def test_piped_answers_end_the_prompt_line():
    p = rulesvm("run", "games/giant_king.yaml", "--seed", "3", "--human", "1", input_text="quit\n")
    assert "(help for commands) > \n" in p.stdout
