"""Replays: re-run a game from its `--log` file against the current game files.

A log's `start` record names the game (its id, file, options, card sets, variants, seed,
players, and fingerprints of the files and of the cards); its `decision` records give
every answer by label; its last record is the checksum of every byte before it
(`rulesvm.saves.LogChecksum`): a log without one, or whose content does not match it, is
E057 unless `allow_edited`. Replaying starts a new game with the same seed and answers each
decision with the logged label. If the current rules no longer offer a logged answer, or
ask a different player, the replay stops there and says why: a regression check after a
rule change. With the game files the log was written with (the same fingerprint), every
record must be the one the replayed game writes, in order, or the replay stops at that line
(E057). A log from another game or another card list is refused before anything is
replayed. `undo` records (from `--human` play) take the game back as they did then.
"""

from __future__ import annotations

import json
import os
from collections import deque
from dataclasses import dataclass, field

from rulesvm import api
from rulesvm.dsl.diagnostics import Diagnostic, DiagnosticError, Span
from rulesvm.dsl.loader import VariantNotFound, display_path
from rulesvm.dsl.yaml_loader import read_file
from rulesvm.interpreter import RulesRuntimeError
from rulesvm.interpreter.runtime import PERSON_ONLY
from rulesvm.saves import canonical_json, digest

# The largest game log replayed (a long game logs a few MiB; a bigger file is not a log).
MAX_LOG_BYTES = 256 * 1024 * 1024
EDITED_HINT = "to replay it anyway, add --allow-edited (each record is still checked against the replayed game)"
DIFFERS_HINT = "the log was edited, or written by another version of rulesvm: a log replays only as it was written"
# What `rulesvm run --log` adds to the engine's start record (the files and the agents).
HEADER_KEYS = ("game_path", "card_sets", "variants", "agents")


@dataclass
class LoggedGame:
    path: str
    start: dict
    decisions: list            # of (line number, record), undone decisions removed
    end: dict | None
    records: list = field(default_factory=list)
    events: list = field(default_factory=list)     # (line number, record) after `start`, the checksum left out
    start_line: int = 1
    warnings: list = field(default_factory=list)   # E057 as warnings, when read with allow_edited


class ReplayMismatch(Exception):
    def __init__(self, decision: int, message: str, line: int = 0):
        self.decision = decision
        self.message = message
        self.line = line
        super().__init__(f"decision {decision}: {message}")


def read_log(path: str, allow_edited: bool = False) -> LoggedGame:
    """Parse a JSON Lines game log; raises DiagnosticError with line and column.

    A log whose checksum is missing or does not match is E057, or (`allow_edited`) a warning
    in the result's `warnings`."""
    shown = display_path(path)
    raw = read_file(path, shown, limit=MAX_LOG_BYTES)
    if len(raw) > MAX_LOG_BYTES:
        raise DiagnosticError([Diagnostic("E050", f"not a game log: larger than {MAX_LOG_BYTES // (1024 * 1024)} MiB",
                                          Span(shown, 1, 1))])
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        raise DiagnosticError([Diagnostic("E050", "a game log is UTF-8 text (JSON Lines); this file is not",
                                          Span(shown, 1, 1))]) from None
    records = _records(raw, shown)
    if not records or records[0][1]["type"] != "start":
        raise DiagnosticError([Diagnostic("E052", "the log does not begin with a `start` record", Span(shown, 1, 1),
                                          "game logs are written by `rulesvm run --log FILE`")])
    start_line, start, _ = records[0]
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
    for lineno, rec, _ in records[1:]:
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
    edited = _checksum_problem(raw, records, shown)
    if edited is not None and not allow_edited:
        raise DiagnosticError([edited])
    warnings = [] if edited is None else [Diagnostic(edited.code, edited.message, edited.span, None, "warning")]
    events = [(lineno, rec) for lineno, rec, _ in records[1:] if rec["type"] != "checksum"]
    return LoggedGame(path, start, decisions, end, [r for _, r, _ in records], events, start_line, warnings)


def _records(raw: bytes, shown: str) -> list:
    """(line number, record, byte offset of its line) for each non-blank line.

    Lines end at "\\n" only (a JSON text may hold other line separators, e.g. U+2028)."""
    records = []
    offset = 0
    for lineno, chunk in enumerate(raw.split(b"\n"), 1):
        at, offset = offset, offset + len(chunk) + 1
        line = chunk.decode("utf-8")
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
        records.append((lineno, rec, at))
    return records


def _checksum_problem(raw: bytes, records: list, shown: str) -> Diagnostic | None:
    """E057 when the log's last record is not a checksum of every byte before it."""
    sums = [(lineno, rec, at) for lineno, rec, at in records if rec["type"] == "checksum"]
    last_line, last, last_at = records[-1]
    if not sums:
        return Diagnostic("E057", "the log has no checksum: it was edited, cut short (the game that wrote it was "
                          "killed), or written by a rulesvm older than checksums", Span(shown, last_line, 1),
                          EDITED_HINT)
    if last["type"] != "checksum" or len(sums) > 1:
        lineno = sums[0][0]
        return Diagnostic("E057", "the log goes on after its checksum record: records were added to it",
                          Span(shown, lineno, 1), EDITED_HINT)
    if last.get("checksum") != digest(raw[:last_at]):
        return Diagnostic("E057", "the log was changed after it was written: its content does not match its "
                          "checksum", Span(shown, last_line, 1), EDITED_HINT)
    return None


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
    """Replay the log's records in order; returns the match.

    Raises ReplayMismatch where the rules no longer accept a logged decision, and (with the
    game files the log was written with) DiagnosticError E057 at the first record that is not
    the one the replayed game writes. `to`: stop after the N-th decision that was not undone.
    """
    run = _Replay(log, game, sink)
    stop = log.decisions[to - 1][0] if to is not None and 0 < to <= len(log.decisions) else None
    if to is not None and to <= 0:
        return run.match
    for lineno, rec in log.events:
        if rec["type"] == "decision":
            run.decision(lineno, rec)
            if lineno == stop:
                return run.match
        elif rec["type"] == "undo":
            run.undo(lineno, rec)
        else:
            run.event(lineno, rec)
    if to is None:
        run.finish()
    return run.match


def check_records(log: LoggedGame, game: api.Game) -> None:
    """Replay a whole log only to check it: DiagnosticError E057 at the first record the
    replayed game does not write (with the files the log was written with). Where the rules
    no longer accept a decision, or fail, the replay stops without an error (the caller shows
    the game up to there)."""
    try:
        replay(log, game)
    except (ReplayMismatch, RulesRuntimeError):
        pass


class _Replay:
    """One replay: the match, and the records it wrote that no log record has matched yet."""

    def __init__(self, log: LoggedGame, game: api.Game, sink):
        self.log = log
        self.sink = sink
        self.shown = display_path(log.path)
        # The same files (rules, cards, options) give the same records: all of them are checked.
        self.strict = log.start.get("fingerprint") == game.program.fingerprint
        self.made: deque = deque()
        hands = {int(s) - 1: ids for s, ids in (log.start.get("hands") or {}).items()}
        try:
            self.match = api.new_game(game, log.start["players"], log.start["seed"], sink=self._write, hands=hands)
        except ValueError as exc:                    # e.g. hands needing more copies than there are
            # (decision "": the CLI prints no "decision N:" prefix for a game that cannot start)
            raise ReplayMismatch("", f"the game cannot start as logged: {exc}") from None
        first = self.made.popleft()
        mine = {k: v for k, v in log.start.items() if k not in HEADER_KEYS}
        difference = _difference(mine, {k: v for k, v in _as_json(first).items() if k not in HEADER_KEYS})
        if self.strict and difference:
            self.fail(log.start_line, f"the start record differs from the replayed game's: {difference}")
        self.snapshots = [self.match.snapshot()]     # the state after k decisions, for undo

    def _write(self, record: dict) -> None:
        if record["type"] not in PERSON_ONLY:      # never in a log (cli JsonlLog), so not compared
            self.made.append(record)
        if self.sink is not None:
            self.sink(record)

    def fail(self, line: int, message: str):
        if self.strict:
            raise DiagnosticError([Diagnostic("E057", message, Span(self.shown, line, 1),
                                              DIFFERS_HINT)])
        raise ReplayMismatch(self.match.decisions_made + 1, message, line)

    def _waiting(self) -> str:
        m = self.match
        if m.is_over:
            return "is over"
        d = m.decision
        return f"waits for Player {d.player + 1} to decide ({d.prompt})" if d is not None else "writes nothing more"

    def _nothing_unmatched(self, line: int, what: str) -> None:
        if self.strict and self.made:
            rec = _as_json(self.made[0])
            self.fail(line, f"the log has {what} here, but the replayed game first writes a `{rec['type']}` record "
                      f"({_brief(rec)}) that the log does not have")
        self.made.clear()

    def event(self, line: int, rec: dict) -> None:
        if not self.strict:
            return
        if not self.made:
            self.fail(line, f"the log has a `{rec['type']}` record ({_brief(rec)}) here, but the replayed game "
                      f"{self._waiting()}")
        difference = _difference(rec, _as_json(self.made.popleft()))
        if difference:
            self.fail(line, difference)

    def decision(self, line: int, rec: dict) -> None:
        self._nothing_unmatched(line, f"Player {rec['player']}'s decision '{rec['label']}'")
        m = self.match
        n = m.decisions_made + 1
        if m.is_over:
            self.fail(line, "the game is already over, but the log has more decisions")
        if _is_int(rec.get("n")) and rec["n"] != n:
            self.fail(line, f"the log numbers this decision {rec['n']}, but it is decision {n} of the replayed "
                      "game: a decision record is missing or added before it")
        d = m.decision
        if d.player + 1 != rec["player"]:
            self.fail(line, f"the log has Player {rec['player']} deciding '{rec['label']}', but now "
                      f"Player {d.player + 1} decides ({d.prompt})")
        labels = d.labels
        if rec["label"] not in labels:
            legal = "no longer legal" if not self.strict else "not an option here"
            self.fail(line, f"'{rec['label']}' is {legal}; legal were: " + ", ".join(labels))
        choice = rec.get("choice")
        if not (_is_int(choice) and 0 <= choice < len(labels) and labels[choice] == rec["label"]):
            if self.strict and "choice" in rec:
                what = f"is '{labels[choice]}'" if _is_int(choice) and 0 <= choice < len(labels) else "does not exist"
                self.fail(line, f"the log has Player {rec['player']} choosing '{rec['label']}', but its `choice` "
                          f"{_short(choice)} (options counted from 0) {what}")
            choice = labels.index(rec["label"])
        m.apply(choice)
        if self.strict:
            self.event(line, rec)            # the decision record the game wrote is the logged one
        else:
            self.made.clear()
        self.snapshots.append(m.snapshot())

    def undo(self, line: int, rec: dict) -> None:
        self._nothing_unmatched(line, "an `undo` record")
        if rec["to"] >= self.match.decisions_made:
            self.fail(line, f"the log takes the game back to decision {rec['to']}, but only "
                      f"{self.match.decisions_made} were made")
        back = self.snapshots[rec["to"]]
        # An undo takes back the undoing seat's last decision (and every one after it).
        if self.strict and back.pending is not None and rec.get("player") != back.pending.player + 1:
            self.fail(line, f"the `undo` record is Player {_short(rec.get('player'))}'s, but it takes back "
                      f"decision {rec['to'] + 1}, Player {back.pending.player + 1}'s")
        self.match.restore(back)
        del self.snapshots[rec["to"] + 1:]
        if self.sink is not None:
            self.sink(rec)

    def finish(self) -> None:
        """After the last record: the replayed game wrote nothing the log lacks; it ends as logged."""
        last = self.log.events[-1][0] if self.log.events else self.log.start_line
        if self.strict and self.made:
            rec = _as_json(self.made[0])
            self.fail(last, f"the log ends here, but the replayed game goes on with a `{rec['type']}` record "
                      f"({_brief(rec)})")
        m = self.match
        if self.log.end is not None and canonical_json(_as_json(m.result)) != canonical_json(self.log.end):
            raise ReplayMismatch(m.decisions_made, f"the game ends differently now: {m.result} "
                                 f"instead of {self.log.end}", last)


def _as_json(record: dict):
    """A record as the log holds it (tuples as lists, numbers used as keys as text)."""
    return json.loads(json.dumps(record, ensure_ascii=False))


def _short(value, width: int = 80) -> str:
    text = canonical_json(value)
    return text if len(text) <= width else text[:width - 3] + "..."


def _brief(rec: dict) -> str:
    """A record in a few words, for messages."""
    return _short({k: v for k, v in rec.items() if k != "type"})


def _difference(logged: dict, made: dict) -> str | None:
    """How a log record differs from the one the replayed game wrote (the first field), or None."""
    if canonical_json(logged) == canonical_json(made):
        return None
    if logged.get("type") != made.get("type"):
        return (f"the log has a `{logged.get('type')}` record ({_brief(logged)}) where the replayed game writes a "
                f"`{made.get('type')}` record ({_brief(made)})")
    missing = object()
    for key in sorted(set(logged) | set(made)):
        a, b = logged.get(key, missing), made.get(key, missing)
        if a is missing:
            return f"the `{logged['type']}` record has no `{key}`; the replayed game's has {_short(b)}"
        if b is missing:
            return f"the `{logged['type']}` record has a `{key}` the replayed game's does not have"
        if canonical_json(a) != canonical_json(b):
            return f"the `{logged['type']}` record's `{key}` is {_short(a)} in the log but {_short(b)} in the " \
                   "replayed game"
    return "the record differs from the replayed game's"
