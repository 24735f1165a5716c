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
from rulesvm.dsl.loader import display_path


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
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        raise DiagnosticError([Diagnostic("E005", f"file not found: {shown}", Span(shown, 0, 0))]) from None
    except IsADirectoryError:
        raise DiagnosticError([Diagnostic("E005", f"is a directory: {shown}", Span(shown, 0, 0))]) from None
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
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DiagnosticError([Diagnostic("E050", f"not a JSON record: {exc.msg}", Span(shown, lineno, exc.colno),
                                              "a game log has one JSON object per line (`rulesvm run --log`)")]) from None
        if not isinstance(rec, dict) or "type" not in rec:
            raise DiagnosticError([Diagnostic("E051", "a log record is a JSON object with a `type`",
                                              Span(shown, lineno, 1))])
        records.append((lineno, rec))
    if not records or records[0][1]["type"] != "start":
        raise DiagnosticError([Diagnostic("E052", "the log does not begin with a `start` record", Span(shown, 1, 1),
                                          "game logs are written by `rulesvm run --log FILE`")])
    start = records[0][1]
    for key in ("game", "seed", "players"):
        if key not in start:
            raise DiagnosticError([Diagnostic("E052", f"the start record has no `{key}`", Span(shown, 1, 1))])
    decisions = []
    end = None
    for lineno, rec in records[1:]:
        if rec["type"] == "decision":
            if not isinstance(rec.get("label"), str) or not isinstance(rec.get("player"), int):
                raise DiagnosticError([Diagnostic("E051", "a decision record needs `player` and `label`",
                                                  Span(shown, lineno, 1))])
            decisions.append((lineno, rec))
        elif rec["type"] == "undo":
            keep = rec.get("to")
            if not isinstance(keep, int) or keep < 0:
                raise DiagnosticError([Diagnostic("E051", "an undo record needs `to` (a decision count)",
                                                  Span(shown, lineno, 1))])
            decisions = decisions[:keep]
        elif rec["type"] == "end":
            end = rec.get("result")
    return LoggedGame(path, start, decisions, end, [r for _, r in records])


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
    plain = api.load_game(game_path, card_sets, variants)
    if plain.model.id != start["game"]:
        raise DiagnosticError([Diagnostic("E054", f"this log is from the game `{start['game']}`, "
                                          f"not `{plain.model.id}`", Span(shown, 1, 1))])
    game = api.load_game(game_path, card_sets, variants, options=options)
    if start.get("cards") and start["cards"] != game.program.card_fingerprint:
        raise DiagnosticError([Diagnostic("E055", "the cards changed since this log was written (a card was added, "
                                          "removed or edited, or a card set differs)", Span(shown, 1, 1),
                                          "a log can only be replayed with the same cards")])
    return game


def replay(log: LoggedGame, game: api.Game, to: int | None = None, sink=None):
    """Replay the logged decisions; returns the match. Raises ReplayMismatch."""
    hands = {int(s) - 1: ids for s, ids in (log.start.get("hands") or {}).items()}
    match = api.new_game(game, log.start["players"], log.start["seed"], sink=sink, hands=hands)
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
