"""Replays: re-run a game from its `--log` file against the current game files.

A log's `start` record names the game (its id, file, options, card sets, variants, seed,
players, and fingerprints of the files and of the cards); its `decision` records give
every answer by label. Replaying starts a new game with the same seed and answers each
decision with the logged label. If the current rules no longer offer a logged answer, or
ask a different player, the replay stops there and says why: a regression check after a
rule change. A log from another game or another card list is refused before anything is
replayed. `undo` records (from `--human` play) drop the decisions they took back.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from rulesvm import api
from rulesvm.dsl.diagnostics import Diagnostic, DiagnosticError, Span
from rulesvm.dsl.loader import VariantNotFound, display_path
from rulesvm.dsl.yaml_loader import read_file

# The largest game log replayed (a long game logs a few MiB; a bigger file is not a log).
MAX_LOG_BYTES = 256 * 1024 * 1024


@dataclass
class LoggedGame:
    path: str
    start: dict
    decisions: list            # of (line number, record), undone decisions removed
    end: dict | None
    records: list = field(default_factory=list)


class ReplayMismatch(Exception):
    def __init__(self, decision: int, message: str):
        self.decision = decision
        self.message = message
        super().__init__(f"decision {decision}: {message}")


def read_log(path: str) -> LoggedGame:
    """Parse a JSON Lines game log; raises DiagnosticError with line and column."""
    shown = display_path(path)
    raw = read_file(path, shown, limit=MAX_LOG_BYTES)
    if len(raw) > MAX_LOG_BYTES:
        raise DiagnosticError([Diagnostic("E050", f"not a game log: larger than {MAX_LOG_BYTES // (1024 * 1024)} MiB",
                                          Span(shown, 1, 1))])
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise DiagnosticError([Diagnostic("E050", "a game log is UTF-8 text (JSON Lines); this file is not",
                                          Span(shown, 1, 1))]) from None
    records = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line, parse_constant=_no_constant)
        except json.JSONDecodeError as exc:
            raise DiagnosticError([Diagnostic("E050", f"not a JSON record: {exc.msg}", Span(shown, lineno, exc.colno),
                                              "a game log has one JSON object per line (`rulesvm run --log`)")]) from None
        except (RecursionError, ValueError) as exc:
            message = "nests too deeply" if isinstance(exc, RecursionError) else str(exc)
            raise DiagnosticError([Diagnostic("E050", f"not a JSON record: {message}", Span(shown, lineno, 1),
                                              "a game log has one JSON object per line (`rulesvm run --log`)")]) from None
        if not isinstance(rec, dict) or not isinstance(rec.get("type"), str):
            raise DiagnosticError([Diagnostic("E051", "a log record is a JSON object with a `type`",
                                              Span(shown, lineno, 1))])
        records.append((lineno, rec))
    if not records or records[0][1]["type"] != "start":
        raise DiagnosticError([Diagnostic("E052", "the log does not begin with a `start` record", Span(shown, 1, 1),
                                          "game logs are written by `rulesvm run --log FILE`")])
    start_line, start = records[0]
    for key in ("game", "seed", "players"):
        if key not in start:
            raise DiagnosticError([Diagnostic("E052", f"the start record has no `{key}`", Span(shown, start_line, 1))])
    problem = _start_problem(start)
    if problem:
        raise DiagnosticError([Diagnostic("E052", f"the start record is damaged: {problem}",
                                          Span(shown, start_line, 1),
                                          "game logs are written by `rulesvm run --log FILE`")])
    decisions = []
    end = None
    for lineno, rec in records[1:]:
        if rec["type"] == "decision":
            if not isinstance(rec.get("label"), str) or not _is_int(rec.get("player")) or rec["player"] < 1:
                raise DiagnosticError([Diagnostic("E051", "a decision record needs `player` (a seat number) "
                                                  "and `label` (text)", Span(shown, lineno, 1))])
            decisions.append((lineno, rec))
        elif rec["type"] == "undo":
            keep = rec.get("to")
            if not _is_int(keep) or keep < 0:
                raise DiagnosticError([Diagnostic("E051", "an undo record needs `to` (a decision count)",
                                                  Span(shown, lineno, 1))])
            decisions = decisions[:keep]
        elif rec["type"] == "end":
            end = rec.get("result")
    return LoggedGame(path, start, decisions, end, [r for _, r in records])


def _no_constant(name: str):
    raise ValueError(f"`{name}` is not a JSON value")


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_text_list(value) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) and "\x00" not in v for v in value)


def _start_problem(start: dict) -> str | None:
    """What is wrong with the types of a start record's fields, or None."""
    if not isinstance(start["game"], str):
        return "`game` should be the game's id (text)"
    if not _is_int(start["seed"]):
        return "`seed` should be a whole number"
    if not _is_int(start["players"]) or not 1 <= start["players"] <= 16:
        return "`players` should be a number of players (1 to 16)"
    if "game_path" in start and (not isinstance(start["game_path"], str) or "\x00" in start["game_path"]
                                 or not start["game_path"].strip()):
        return "`game_path` should be the path of the game file"
    for key in ("card_sets", "variants"):
        if key in start and not _is_text_list(start[key]):
            return f"`{key}` should be a list of file names"
    if "options" in start and not isinstance(start["options"], dict):
        return "`options` should be a mapping of option names to values"
    hands = start.get("hands")
    if hands is not None and (not isinstance(hands, dict) or not all(
            isinstance(k, str) and k.isdigit() and _is_text_list(v) for k, v in hands.items())):
        return "`hands` should map seat numbers to lists of card ids"
    if "cards" in start and not isinstance(start["cards"], str):
        return "`cards` should be the fingerprint of the cards (text)"
    return None


def game_for_log(log: LoggedGame, game_path: str | None = None) -> api.Game:
    """Load the game a log was written from (or `game_path`); refuse another game or cards."""
    shown = display_path(log.path)
    start = log.start
    if game_path is None:
        rel = start.get("game_path")
        if not rel:
            raise DiagnosticError([Diagnostic("E053", "the log does not name its game file", Span(shown, 1, 1),
                                              "give it with --game GAME")])
        game_path = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(log.path)), rel))
        if not os.path.exists(game_path) and os.path.exists(rel):
            game_path = rel
    base = os.path.dirname(os.path.abspath(log.path))
    card_sets = [c if os.path.isabs(c) else os.path.normpath(os.path.join(base, c)) for c in start.get("card_sets", [])]
    options = {k: tuple(v) if isinstance(v, list) else v for k, v in (start.get("options") or {}).items()}
    variants = [v if os.path.isabs(v) or not os.path.exists(os.path.join(base, v)) else os.path.join(base, v)
                for v in start.get("variants", [])]
    try:
        plain = api.load_game(game_path, card_sets, variants)
    except VariantNotFound as exc:
        raise DiagnosticError([Diagnostic("E056", f"the log's variant `{exc.name}` cannot be found", Span(shown, 1, 1),
                                          "restore the variant file, or give the game with --game")]) from None
    if plain.model.id != start["game"]:
        raise DiagnosticError([Diagnostic("E054", f"this log is from the game `{start['game']}`, "
                                          f"not `{plain.model.id}`", Span(shown, 1, 1))])
    try:
        game = api.load_game(game_path, card_sets, variants, options=options)
    except ValueError as exc:
        raise DiagnosticError([Diagnostic("E056", f"the log's options do not fit the game: {exc}",
                                          Span(shown, 1, 1))]) from None
    if start.get("cards") and start["cards"] != game.program.card_fingerprint:
        raise DiagnosticError([Diagnostic("E055", "the cards changed since this log was written (a card was added, "
                                          "removed or edited, or a card set differs)", Span(shown, 1, 1),
                                          "a log can only be replayed with the same cards")])
    lo, hi, _ = game.model.players
    if not lo <= start["players"] <= hi:
        raise DiagnosticError([Diagnostic("E056", f"the log has {start['players']} players; {game.name} is for {lo}"
                                          + (f" to {hi}" if hi != lo else ""), Span(shown, 1, 1))])
    hands = start.get("hands") or {}
    if hands and not game.model.hands:
        raise DiagnosticError([Diagnostic("E056", f"the log gives hands, but {game.name} has none to choose",
                                          Span(shown, 1, 1))])
    ids = {c.id for c in game.model.cards}
    for seat, cards in hands.items():
        if not 1 <= int(seat) <= start["players"]:
            raise DiagnosticError([Diagnostic("E056", f"the log gives a hand to seat {seat}, which does not exist",
                                              Span(shown, 1, 1))])
        unknown = [c for c in cards if c not in ids]
        if unknown:
            raise DiagnosticError([Diagnostic("E056", f"the hand of seat {seat} names a card the game does not "
                                              f"have: `{unknown[0]}`", Span(shown, 1, 1))])
    return game


def replay(log: LoggedGame, game: api.Game, to: int | None = None, sink=None):
    """Replay the logged decisions; returns the match. Raises ReplayMismatch."""
    hands = {int(s) - 1: ids for s, ids in (log.start.get("hands") or {}).items()}
    try:
        match = api.new_game(game, log.start["players"], log.start["seed"], sink=sink, hands=hands)
    except ValueError as exc:                    # e.g. hands needing more copies than there are
        # (decision "": the CLI prints no "decision N:" prefix for a game that cannot start)
        raise ReplayMismatch("", f"the game cannot start as logged: {exc}") from None
    for n, (_, rec) in enumerate(log.decisions, 1):
        if to is not None and n > to:
            break
        if match.is_over:
            raise ReplayMismatch(n, "the game is already over, but the log has more decisions")
        d = match.decision
        if d.player + 1 != rec["player"]:
            raise ReplayMismatch(n, f"the log has Player {rec['player']} deciding '{rec['label']}', but now "
                                 f"Player {d.player + 1} decides ({d.prompt})")
        labels = d.labels
        if rec["label"] not in labels:
            raise ReplayMismatch(n, f"'{rec['label']}' is no longer legal; legal were: " + ", ".join(labels))
        match.apply(labels.index(rec["label"]))
    if to is None and log.end is not None and match.result != log.end:
        raise ReplayMismatch(len(log.decisions), f"the game ends differently now: {match.result} "
                             f"instead of {log.end}")
    return match
