"""The human agent: a seat played at the terminal (part of the CLI's rendering layer).

It shows the seat's observation (never more), numbers the legal options, and reads an
answer. Besides a number it understands `help`, `show ZONE`, `save`, `undo` and `quit`;
anything else is asked again. End of input or Ctrl-C stop the game cleanly.
"""

from __future__ import annotations

from rich.text import Text

from rulesvm.api import Undo
from rulesvm.interpreter.agents import Agent

from .render import board_text


class QuitGame(Exception):
    """The human asked to stop (quit, end of input or Ctrl-C)."""

    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(reason)


class HumanAgent(Agent):
    name = "human"

    def __init__(self, screen, read_line=input, on_save=None, history=None, clear_between: bool = False):
        self.screen = screen
        self.read_line = read_line
        self.on_save = on_save
        self.history = history
        self.clear_between = clear_between
        self._last_seat = None

    def _ask(self, prompt: str) -> str:
        try:
            return self.read_line(prompt)
        except EOFError:
            raise QuitGame("end of input") from None
        except KeyboardInterrupt:
            raise QuitGame("interrupted") from None

    def choose(self, view):
        out = self.screen.out
        seat = view.seat + 1
        if self.clear_between and self._last_seat is not None and self._last_seat != seat:
            out.clear()
            self._ask(f"Pass the terminal to Player {seat} and press Enter ")
        self._last_seat = seat
        obs = view.observation()
        out.print()
        out.print(Text(board_text(obs, seat)))
        d = view.decision
        out.print(Text(f"Player {seat}: {d.prompt}", style="bold cyan"))
        for i, option in enumerate(d.options, 1):
            out.print(f"  {i:>2}) {option.label}")
        while True:
            answer = self._ask(f"[{seat}] choose 1-{len(d.options)} (help for commands) > ").strip()
            if not answer:
                continue
            if answer.isdigit() and 1 <= int(answer) <= len(d.options):
                return int(answer) - 1
            word, _, arg = answer.partition(" ")
            word = word.lower()
            if word in ("help", "?", "h"):
                out.print("  a number   pick that option\n"
                          "  show ZONE  list a zone you may see (e.g. show hand)\n"
                          "  save       save the game (to the --save file)\n"
                          "  undo       take back your last decision\n"
                          "  quit       stop the game")
            elif word == "show":
                out.print(Text(_show_zone(obs, arg.strip(), seat)))
            elif word == "save":
                if self.on_save is None:
                    out.print("  no save file: start the game with --save FILE")
                else:
                    out.print(f"  {self.on_save(view.match)}")
            elif word == "undo":
                if self.history is None:
                    out.print("  undo is not available here")
                elif not any(who == view.seat for _, who, _ in self.history.entries):
                    out.print("  nothing to undo: you have not decided anything yet")
                else:
                    out.print("  taking back your last decision")
                    return Undo(self.history, view.seat)
            elif word in ("quit", "exit", "q"):
                raise QuitGame("quit")
            else:
                out.print(f"  `{answer}` is not an option: type a number from 1 to {len(d.options)}, or help")


def _show_zone(obs: dict, name: str, seat: int) -> str:
    from .render import _zone_text
    zones = obs["zones"]
    if name not in zones:
        return f"  no zone `{name}`; zones: {', '.join(z for z in zones if z != 'box')}"
    view = zones[name]
    if "count" in view:
        return f"  {name}: {_zone_text(view)}"
    return "\n".join(f"  {name} of Player {p}{' (you)' if int(p) == seat else ''}: {_zone_text(v)}"
                     for p, v in view.items())
