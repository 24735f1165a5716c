"""The human agent: a seat played at the terminal (part of the CLI's rendering layer).

It shows the seat's observation (never more), numbers the legal options, and reads an
answer. Besides a number it understands `help`, `describe N` (`? N`: what a card option,
or a card named, says), `show ZONE`, `save [FILE]`, `undo` and `quit`; anything else is
asked again. A compound choice (`steps:`) is asked one pick at a time (`stepwise.py`). End
of input or Ctrl-C stop the game cleanly.
"""

from __future__ import annotations

import sys

from rich.text import Text

from rulesvm import api
from rulesvm.api import Undo
from rulesvm.interpreter.agents import Agent

from .render import board_changes, board_text, card_description, zone_text
from .stepwise import TAKEN, TerminalSteps


class QuitGame(Exception):
    """The human asked to stop (quit, end of input or Ctrl-C)."""

    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(reason)


class HumanAgent(Agent):
    name = "human"

    def __init__(self, screen, read_line=input, on_save=None, history=None, terminal: dict | None = None,
                 verbose: bool = False, echo_newline: bool | None = None, layout: dict | None = None):
        self.screen = screen
        self.read_line = read_line
        self.on_save = on_save
        self.history = history
        # Shared by every human at this terminal: who answered last (to hand over in secret).
        self.terminal = terminal
        self.verbose = verbose              # the whole board before every decision
        self.layout = layout or {}          # the game's `layout:` (which variables to show, their labels)
        self.last_board: list | None = None   # the board as last printed (only changes are printed)
        # Piped answers are not echoed by a terminal: end the prompt's line ourselves.
        self.echo_newline = (not sys.stdin.isatty()) if echo_newline is None else echo_newline

    def _ask(self, prompt: str) -> str:
        try:
            answer = self.read_line(prompt)
            if self.echo_newline:
                self.screen.out.print()
            return answer
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
                self.last_board = None
                self._ask(f"Pass the terminal to Player {seat} and press Enter ")
            self.terminal["seat"] = seat
        obs = view.observation()
        board = board_text(obs, seat, self.layout)
        out.print()
        if self.verbose or self.last_board is None:
            out.print(Text(board))
        else:
            out.print(Text(board_changes(self.last_board, board.split("\n"))))
        self.last_board = board.split("\n")
        d = view.decision
        out.print(Text(f"Player {seat}: {d.prompt}" + (" (secret)" if d.secret else ""), style="bold cyan"))
        if d.help:
            out.print(Text(f"  {d.help}", style="dim"))
        order = display_order(view.match, d)
        # A compound choice (`steps:`) is asked one pick at a time (stepwise.py).
        steps = TerminalSteps(out, d) if d.steps is not None else None
        if steps is not None:
            steps.show()
        elif len(d.options) <= LONG_LIST:
            self._list(d, order)
        else:
            out.print(f"  {len(d.options)} options: type one (e.g. `{d.options[0].label}`), or `list` to see them all")
        enter = f", Enter = {d.options[d.pass_index].label}" if d.pass_index >= 0 else ""
        while True:
            answer = self._ask(steps.question(seat) if steps is not None else
                               f"[{seat}] choose 1-{len(d.options)} or type an option{enter} (help for commands) > ").strip()
            if steps is not None and answer:
                got = steps.answer(answer)
                if got is TAKEN:
                    continue
                if got is not None:
                    if d.confirm and not self._confirm(d.options[got].label):
                        steps.declined()
                        continue
                    return got
            if not answer:
                if d.pass_index >= 0:
                    return d.pass_index         # passing is one keystroke
                continue
            index = _match_option(d, answer, order) if steps is None else None
            if index is not None:
                if d.confirm and not self._confirm(d.options[index].label):
                    continue
                return index
            word, _, arg = answer.partition(" ")
            word = word.lower()
            if word in ("describe", "?") and arg.strip():
                out.print(Text(_describe(view, d, arg.strip(), order)))
            elif word in ("help", "?", "h"):
                out.print("  a number   pick that option (or type the option itself)\n"
                          "  list       list the options\n"
                          "  board      the whole table (after a decision only what changed is shown)\n"
                          "  describe N what option N's card says (also `? N`, or a card's name)\n"
                          "  show ZONE  list a zone you may see (e.g. show hand)\n"
                          "  save FILE  save the game to FILE (`save` alone: to the --save file)\n"
                          "  undo       take back your last decision\n"
                          "  quit       stop the game")
            elif word == "list":
                self._list(d, order)
            elif word == "board":
                out.print(Text(board))
            elif word == "show":
                out.print(Text(_show_zone(obs, arg.strip(), seat)))
            elif word == "save":
                if self.on_save is None:
                    out.print("  saving is not available here")
                else:
                    out.print(f"  {self.on_save(view.match, arg.strip() or None)}")
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
            elif steps is not None:
                out.print(steps.refusal(answer))
            else:
                out.print(f"  `{answer}` is not an option: type a number from 1 to {len(d.options)}, "
                          "an option, or help")

    def _list(self, d, order: list | None = None) -> None:
        for k, i in enumerate(order or range(len(d.options)), 1):
            self.screen.out.print(f"  {k:>2}) {d.options[i].label}")

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


def display_order(match, d) -> list[int]:
    """The options' indices in the order they are listed. Cards taken from zones without an
    order are listed in card-file order, as the board lists those zones (observation.py);
    cards of ordered zones, and other options, keep the rules' order and places."""
    order = list(range(len(d.options)))
    if d.value_type != "card":
        return order
    prog, st = match.program, match.state
    cards = [i for i, o in enumerate(d.options) if isinstance(o.value, int) and not isinstance(o.value, bool)
             and 0 <= o.value < len(prog.card_ids)]
    if not cards or any(prog.zone_info[st.where[d.options[i].value]].ordered for i in cards):
        return order
    for place, i in zip(cards, sorted(cards, key=lambda i: d.options[i].value)):
        order[place] = i
    return order


def _match_option(d, answer: str, order: list | None = None) -> int | None:
    """An answer as an option: its number (as listed, `order`: default the options' own), its
    label (any case or spacing), or a unique prefix."""
    if answer.isdigit():
        k = int(answer)
        return (order[k - 1] if order else k - 1) if 1 <= k <= len(d.options) else None
    want = _normal(answer)
    labels = [_normal(o.label) for o in d.options]
    if want in labels:
        return labels.index(want)
    starts = [i for i, lab in enumerate(labels) if lab.startswith(want)]
    if len(starts) == 1 and len(want) >= 2:
        return starts[0]
    return None


def _describe(view, d, wanted: str, order: list) -> str:
    """`describe N` / `? N`: the card of option N (or of the option typed), as far as the seat
    sees it, else the card of the game with that name or id (the card list is public)."""
    index = _match_option(d, wanted, order)
    if index is not None:
        option = d.options[index]
        card = api.card_seen_by(view.match, view.seat, option.value) if d.value_type == "card" else None
        if card is not None:
            now = f"\n  now: {card['now']}" if card["sides"] else ""
            return "  " + card_description(card).replace("\n", "\n  ") + now.replace("\n", "\n  ")
        if not wanted.isdigit() or api.find_card(view.match.program.model, option.label) is None:
            return f"  option {order.index(index) + 1} ({option.label}) is not a card you can see"
        wanted = option.label
    card = api.find_card(view.match.program.model, wanted)
    if card is None:
        return f"  no option or card `{wanted}`: give an option's number, or a card's name (e.g. describe 1)"
    return "  " + card_description(card).replace("\n", "\n  ")


def _show_zone(obs: dict, name: str, seat: int) -> str:
    zones = obs["zones"]
    if name not in zones:
        return f"  no zone `{name}`; zones: {', '.join(z for z in zones if z != 'box')}"
    view = zones[name]
    if "count" in view:
        return f"  {name}: {zone_text(view)}"
    return "\n".join(f"  {name} of Player {p}{' (you)' if int(p) == seat else ''}: {zone_text(v)}"
                     for p, v in view.items())
