"""The human agent: a seat played at the terminal (part of the CLI's rendering layer).

It shows the seat's observation (never more), numbers the legal options, and reads an
answer. Besides a number it understands `help`, `show ZONE`, `save`, `undo` and `quit`;
anything else is asked again. End of input or Ctrl-C stop the game cleanly.
"""

from __future__ import annotations

from rich.text import Text

from rulesvm.api import Undo
from rulesvm.interpreter.agents import Agent

from .render import board_text, zone_text


class QuitGame(Exception):
    """The human asked to stop (quit, end of input or Ctrl-C)."""

    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(reason)


class HumanAgent(Agent):
    name = "human"

    def __init__(self, screen, read_line=input, on_save=None, history=None, terminal: dict | None = None):
        self.screen = screen
        self.read_line = read_line
        self.on_save = on_save
        self.history = history
        # Shared by every human at this terminal: who answered last (to hand over in secret).
        self.terminal = terminal

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
        if self.terminal is not None:
            last = self.terminal.get("seat")
            if last is not None and last != seat:
                out.clear()
                self._ask(f"Pass the terminal to Player {seat} and press Enter ")
            self.terminal["seat"] = seat
        obs = view.observation()
        out.print()
        out.print(Text(board_text(obs, seat)))
        d = view.decision
        out.print(Text(f"Player {seat}: {d.prompt}" + (" (secret)" if d.secret else ""), style="bold cyan"))
        if d.help:
            out.print(Text(f"  {d.help}", style="dim"))
        if len(d.options) <= LONG_LIST:
            self._list(d)
        else:
            out.print(f"  {len(d.options)} options: type one (e.g. `{d.options[0].label}`), or `list` to see them all")
        enter = f", Enter = {d.options[d.pass_index].label}" if d.pass_index >= 0 else ""
        while True:
            answer = self._ask(f"[{seat}] choose 1-{len(d.options)} or type an option{enter} (help for commands) > ").strip()
            if not answer:
                if d.pass_index >= 0:
                    return d.pass_index         # passing is one keystroke
                continue
            index = _match_option(d, answer)
            if index is not None:
                if d.confirm and not self._confirm(d.options[index].label):
                    continue
                return index
            word, _, arg = answer.partition(" ")
            word = word.lower()
            if word in ("help", "?", "h"):
                out.print("  a number   pick that option (or type the option itself)\n"
                          "  list       list the options\n"
                          "  show ZONE  list a zone you may see (e.g. show hand)\n"
                          "  save       save the game (to the --save file)\n"
                          "  undo       take back your last decision\n"
                          "  quit       stop the game")
            elif word == "list":
                self._list(d)
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
                elif (reason := self.history.refusal(view.match, view.seat)) is not None:
                    out.print(f"  you cannot undo now: {reason} (start the game with --undo any to allow it)")
                else:
                    out.print("  taking back your last decision")
                    return Undo(self.history, view.seat)
            elif word in ("quit", "exit", "q"):
                raise QuitGame("quit")
            else:
                out.print(f"  `{answer}` is not an option: type a number from 1 to {len(d.options)}, "
                          "an option, or help")

    def _list(self, d) -> None:
        for i, option in enumerate(d.options, 1):
            self.screen.out.print(f"  {i:>2}) {option.label}")

    def _confirm(self, label: str) -> bool:
        answer = self._ask(f"  you chose: {label}. Commit it? [Y/n] ").strip().lower()
        return answer in ("", "y", "yes")


LONG_LIST = 20


class DrawFromSeed:
    """The dealer's Enter: draw the outcome from the game's generator (the seed's game)."""

    def apply(self, match) -> None:
        match.sample_chance()


class TerminalDealer(Agent):
    """`rulesvm run --explicit-chance`: the person at the terminal gives the outcome of each
    random event (a die with real dice, the next card of a shuffle), or presses Enter to
    draw it from the seed. They see every outcome offered: it is a dealer's seat."""
    name = "dealer"

    def __init__(self, screen, read_line=input):
        self.screen = screen
        self.asker = HumanAgent(screen, read_line)

    def choose(self, view):
        out = self.screen.out
        d = view.decision
        out.print(Text(f"Chance: {d.prompt}", style="bold magenta"))
        if len(d.options) <= LONG_LIST:
            self.asker._list(d)
        else:
            out.print(f"  {len(d.options)} outcomes: type one (e.g. `{d.options[0].label}`), or `list` to see them all")
        while True:
            answer = self.asker._ask(f"[chance] choose 1-{len(d.options)}, type an outcome, or Enter to draw it > ").strip()
            if not answer:
                return DrawFromSeed()
            index = _match_option(d, answer)
            if index is not None:
                return index
            if answer.lower() == "list":
                self.asker._list(d)
            elif answer.lower() in ("quit", "exit", "q"):
                raise QuitGame("quit")
            else:
                out.print(f"  `{answer}` is not an outcome: type a number from 1 to {len(d.options)}, an outcome, "
                          "Enter to draw one, or quit")


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


def _match_option(d, answer: str) -> int | None:
    """An answer as an option: its number, its label (any case or spacing), or a unique prefix."""
    if answer.isdigit():
        k = int(answer)
        return k - 1 if 1 <= k <= len(d.options) else None
    want = _normal(answer)
    labels = [_normal(o.label) for o in d.options]
    if want in labels:
        return labels.index(want)
    starts = [i for i, lab in enumerate(labels) if lab.startswith(want)]
    if len(starts) == 1 and len(want) >= 2:
        return starts[0]
    return None


def _show_zone(obs: dict, name: str, seat: int) -> str:
    zones = obs["zones"]
    if name not in zones:
        return f"  no zone `{name}`; zones: {', '.join(z for z in zones if z != 'box')}"
    view = zones[name]
    if "count" in view:
        return f"  {name}: {zone_text(view)}"
    return "\n".join(f"  {name} of Player {p}{' (you)' if int(p) == seat else ''}: {zone_text(v)}"
                     for p, v in view.items())
