"""What every command shares: the common options, usage errors, loading a game, seats and
the `--log` file. A usage error exits 2, a game error exits 1 (see cli/main.py).
"""

from __future__ import annotations

import json
import os
from typing import List, Optional

import typer

from rulesvm import api, saves
from rulesvm.dsl.diagnostics import DiagnosticError
from rulesvm.interpreter.agents import AgentSpecError, make_agent, split_agent_list
from rulesvm.interpreter.runtime import PERSON_ONLY

from .paths import require_file
from .render import Screen

GAME_ARG = typer.Argument(..., help="The game's YAML file (its entry point), e.g. games/my_game.yaml.",
                          show_default=False)
CARD_SET_OPT = typer.Option(None, "--card-set", help="Add a card-set YAML file to the game (repeatable).",
                            metavar="FILE")
SET_OPT = typer.Option(None, "--set", help="Override a game option: NAME=VALUE (repeatable). "
                       "`rulesvm info GAME` lists the options.", metavar="NAME=VALUE")
VARIANT_OPT = typer.Option(None, "--variant", help="Apply a variant by name or file (repeatable, in order).",
                           metavar="NAME|FILE")
ALLOW_EDITED_OPT = typer.Option(False, "--allow-edited", help="Open a save or log whose checksum does not match its "
                                "content, or that has none (written before rulesvm checked them), with a warning "
                                "instead of an error (E022, E057).")


def usage(screen: Screen, message: str, hint: str | None = None) -> None:
    screen.error(message, hint)
    raise typer.Exit(2)


def load(screen: Screen, path: str, card_sets, variants, set_pairs) -> api.Game:
    require_file(screen, path)
    try:
        game = api.load_game(path, card_sets or [], variants or [], set_pairs=set_pairs or [])
    except DiagnosticError as exc:
        screen.diagnostics(exc.diagnostics)
        errors = sum(1 for d in exc.diagnostics if d.is_error)
        screen.note(f"{errors} error(s): the game cannot be loaded (run `rulesvm validate {path}`)")
        raise typer.Exit(1)
    except ValueError as exc:
        usage(screen, str(exc))
    return game


def changed_options(g: api.Game, values: dict) -> dict:
    """The options in `values` (a start record's) that differ from the game's defaults."""
    defaults = {name: o.default for name, o in g.model.options.items()}
    return {k: v for k, v in values.items()
            if k not in defaults or _plain(v) != _plain(defaults[k])}


def _plain(value):
    return list(value) if isinstance(value, tuple) else value


def parse_seat(screen: Screen, text: str, players: int, what: str) -> int:
    try:
        seat = int(text)
    except ValueError:
        usage(screen, f"{what}: `{text}` is not a seat number")
    if not 1 <= seat <= players:
        usage(screen, f"{what}: seat {seat} does not exist in a {players}-player game (seats 1-{players})")
    return seat - 1


class JsonlLog:
    """The --log file: one JSON object per line, keys sorted, so equal games give equal bytes.
    `close` ends it with the checksum of every line before (`saves.LogChecksum`)."""

    def __init__(self, path: str, header: dict):
        self.fh = open(path, "w", encoding="utf-8", newline="\n")
        self.header = header
        self.checksum = saves.LogChecksum()

    def __call__(self, record: dict) -> None:
        if record["type"] in PERSON_ONLY:          # told to the people at the table, not part of the game's log
            return
        if record["type"] == "start":
            record = {**record, **self.header}
        line = json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n"
        self.checksum.add(line)
        self.fh.write(line)

    def close(self) -> None:
        if not self.fh.closed:
            self.fh.write(json.dumps(self.checksum.record(), ensure_ascii=False, sort_keys=True) + "\n")
            self.fh.close()


def check_writable(screen: Screen, path: Optional[str], force: bool, what: str) -> None:
    """Refuse an output file before any work is done: one that exists (unless --force), one
    that is a folder, or one whose folder does not exist or cannot be written."""
    if not path:
        return
    if os.path.isdir(path):
        usage(screen, f"{what} file {path} is a folder", "give a file name, e.g. out/game.jsonl")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        usage(screen, f"cannot write the {what} file {path}: the folder {folder} does not exist",
              "create the folder first, or choose another place")
    if not os.access(folder, os.W_OK):
        usage(screen, f"cannot write the {what} file {path}: the folder {folder} is not writable")
    if os.path.exists(path) and not force:
        usage(screen, f"{what} file {path} already exists", "choose another name, or add --force to overwrite it")


def log_header(g: api.Game, log: str, seat_specs: dict) -> dict:
    """What a log's start record adds so `rulesvm replay` finds the game: the files, relative
    to the log's folder, and each seat's agent."""
    log_dir = os.path.dirname(os.path.abspath(log))
    return {"game_path": os.path.relpath(g.path, log_dir),
            "card_sets": [os.path.relpath(os.path.abspath(c), log_dir) for c in g.card_sets],
            "variants": [v if v in g.model.variants else os.path.relpath(os.path.abspath(v), log_dir)
                         for v in g.variants],
            "agents": {str(s + 1): spec for s, spec in seat_specs.items()}}


def player_count(screen: Screen, g: api.Game, players: Optional[int]) -> int:
    """--players, or the game's default; a count outside the game's range is a usage error."""
    lo, hi, default = g.model.players
    n = players if players is not None else default
    if not lo <= n <= hi:
        usage(screen, f"{g.name} is for {lo}" + (f" to {hi}" if hi != lo else "") + f" players, not {n}",
              f"use --players {lo}" + (f" to {hi}" if hi != lo else ""))
    return n


def seat_pairs(screen: Screen, items: Optional[List[str]], n: int, option: str, form: str) -> list:
    """SEAT=VALUE options (`--agent 2=random`, `--hand 1=A`) as (0-based seat, value)."""
    out = []
    for item in items or []:
        seat_text, eq, value = item.partition("=")
        if not eq or not value.strip():
            usage(screen, f"{option} {item}: write {form}")
        out.append((parse_seat(screen, seat_text.strip(), n, option), value.strip()))
    return out


def read_hands(screen: Screen, g: api.Game, hand: Optional[List[str]], n: int) -> dict:
    """--hand SEAT=FILE|PRESET options: seat -> card ids; an illegal hand is a game error."""
    hands = {}
    for s, source in seat_pairs(screen, hand, n, "--hand", "SEAT=FILE or SEAT=PRESET"):
        try:
            hands[s] = api.read_hand(g, source)
        except DiagnosticError as exc:
            screen.diagnostics(exc.diagnostics)
            screen.note(f"the hand for seat {s + 1} is not legal")
            raise typer.Exit(1)
        except ValueError as exc:
            usage(screen, str(exc))
    return hands


UNDO_OPT = typer.Option("safe", "--undo", metavar="safe|any",
                        help="safe (default): a player may not take back a decision once they have seen a card "
                             "(or another player's secret choice) since; any: always (a friendly game).")


def undo_any(screen, mode: str) -> bool:
    """The --undo mode: True for `any`; a usage error for anything but safe/any."""
    if mode not in ("safe", "any"):
        usage(screen, f"--undo must be `safe` or `any`, not `{mode}`")
    return mode == "any"


def checked_agents(screen, agents_text: str | None) -> tuple:
    """The agents of `--agents` (default: random), each spec tried, so a mistake is a usage error (exit 2)."""
    specs = tuple(split_agent_list(agents_text)) if agents_text else ("random",)
    for spec in specs:
        try:
            make_agent(spec, 0)
        except AgentSpecError as exc:
            usage(screen, str(exc))
    return specs
