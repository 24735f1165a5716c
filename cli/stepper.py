"""`rulesvm replay --step`: a replayed game shown one decision at a time at a terminal (cli:
the terminal front end).

The replay runs first and its records are cut into steps: step 0 is the set-up, step k the
k-th decision (or undo) and what followed it. The pager then shows one step at a time: Enter
goes on, `b` goes back a step, `q` (or end of input, or Ctrl-C) stops. Going back only shows
a step again: the game was replayed once, so stepping never changes what is shown.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

# The records that begin a step: a player's answer, or an undo that takes answers back.
STEP_RECORDS = ("decision", "undo")

KEYS = "Enter: next, b: back, q: quit"


@dataclass
class Steps:
    """A replay's records, step by step (see the module's docstring)."""
    steps: list = field(default_factory=lambda: [[]])

    def add(self, record: dict) -> None:
        if record["type"] in STEP_RECORDS:
            self.steps.append([])
        self.steps[-1].append(record)

    @property
    def last(self) -> int:
        return len(self.steps) - 1


def page(steps: Steps, show: Callable[[dict], None], header: Callable[[int, int], None],
         read_line: Callable[[str], str] = input) -> bool:
    """Show `steps` one at a time, as the person at the terminal asks; False if they quit
    before the end."""
    k = 0
    while True:
        header(k, steps.last)
        for record in steps.steps[k]:
            show(record)
        if k == steps.last:
            return True
        while True:
            try:
                answer = read_line(f"[step {k}/{steps.last}] {KEYS} > ").strip().lower()
            except (EOFError, KeyboardInterrupt):
                return False
            if answer in ("", "n", "next"):
                k += 1
                break
            if answer in ("b", "back"):
                k = max(k - 1, 0)
                break
            if answer in ("q", "quit"):
                return False
