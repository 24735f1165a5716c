"""The files a game names: where they may be, how they are shown, how they are read.

Every loader of the front end (the game file, its rules, card sets, variants) resolves the
paths a game file names here, so one rule keeps a stranger's game inside its folder tree
and every message names a file the same way.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .diagnostics import Diagnostic, DiagnosticError, Span
from .reading import MAX_CHECK_BYTES, MAX_CHECK_VALUES, MAX_GAME_BYTES, MAX_GAME_VALUES, MAX_RULES_BYTES
from .yaml_loader import ValueLimit, decode_text, file_size, read_file, size_text, too_large


def display_path(path: str) -> str:
    """A path as the designer would write it: relative to the working directory if inside it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def resolve_inside(base_dir: str, name: str, span: Span, what: str, folder: str = "the game's folder") -> str:
    """Resolve a path named in a game file; it may not leave the game's folder tree.

    Absolute paths, `..` that climbs out, and symbolic links pointing outside are all E007:
    a game file from a stranger can only make rulesvm read files beside it.
    """
    if not isinstance(name, str) or not name.strip() or "\x00" in name:
        shown = str(name).encode("unicode_escape").decode("ascii")
        raise DiagnosticError([Diagnostic("E007", f"{what} path `{shown}` is not a file name", span,
                                          "give a file name relative to the game file, e.g. `my_game.rules`")])
    if os.path.isabs(name) or os.path.splitdrive(name)[0]:
        raise DiagnosticError([Diagnostic("E007", f"{what} path must be relative to the game file: `{name}`", span,
                                          "files a game uses must be in its folder or below it")])
    root = os.path.realpath(base_dir)
    try:
        full = os.path.realpath(os.path.join(root, name))
        inside = os.path.commonpath([root, full]) == root
    except (ValueError, OSError):
        inside = False
    if not inside:
        raise DiagnosticError([Diagnostic("E007", f"{what} `{name}` is outside {folder}", span,
                                          "files a game uses must be in its folder or below it "
                                          "(symbolic links may not point outside it either)")])
    return full


def read_text(path: str, display: str, span: Span, budget: GameBudget | None = None) -> str:
    """A rules file's text, at most MAX_RULES_BYTES (E004 before it is decoded or parsed); a file
    that cannot be read, or that is not a regular file, is E005 at `span`. With a `budget`, the
    file counts towards its game's files and rules text."""
    raw = read_file(path, display, span, limit=MAX_RULES_BYTES)
    if len(raw) > MAX_RULES_BYTES:
        raise DiagnosticError([too_large(display, file_size(path, len(raw)), MAX_RULES_BYTES, "the rules file")])
    if budget is not None:
        budget.charge_file(len(raw), display, span)
        budget.charge_rules(len(raw), f"`{display}`", display, span)
    return decode_text(raw, display)


@dataclass
class CheckSession:
    """What several loads of one game read together: `rulesvm validate` checks a game alone and
    then with each of its variants, reading its files again each time; at most MAX_CHECK_BYTES
    and MAX_CHECK_VALUES in all (docs/security.md, "Budgets")."""
    read: int = 0
    values: int = 0
    exceeded: bool = False


@dataclass
class GameBudget:
    """What one game reads (docs/security.md, "Budgets"): all its files together (game file,
    rules files, card sets, variants) at most MAX_GAME_BYTES, their YAML values at most
    MAX_GAME_VALUES, and its rules text (rules files, and rules written in its YAML files) at
    most MAX_RULES_BYTES, each counted before it is parsed; with a `session`, also what the
    loads of that session read together.

    The first charge past a cap raises DiagnosticError (E004) where the file is named (or at
    the rules text in a YAML file); every later charge raises one with no diagnostic, so the
    load stops at once and the error is reported once.
    """
    session: CheckSession | None = None
    variants: tuple = ()            # the variants this load applies (named by the session's error)
    files: int = 0
    rules: int = 0
    values: int = 0
    exceeded: bool = False

    def charge_file(self, nbytes: int, display: str, span: Span | None = None) -> None:
        if self.exceeded or (self.session is not None and self.session.exceeded):
            raise DiagnosticError([])
        self.files += nbytes
        if self.files > MAX_GAME_BYTES:
            self._stop(f"the game's files together are too large: with `{display}` they hold {self.files:,} bytes, "
                       f"where at most {MAX_GAME_BYTES:,} ({size_text(MAX_GAME_BYTES)}) are allowed",
                       display, span, "a game's files are its game file, rules files, card sets and variants "
                       "(the launch games' hold under 120 KB); the limit keeps a stranger's game from exhausting "
                       "time or memory (docs/security.md)")
        if self.session is not None:
            self.session.read += nbytes
            if self.session.read > MAX_CHECK_BYTES:
                self.session.exceeded = True
                self._stop(f"{self._checking()}: with `{display}` the files read come to {self.session.read:,} bytes, "
                           f"where at most {MAX_CHECK_BYTES:,} ({size_text(MAX_CHECK_BYTES)}) are allowed", display,
                           span, _CHECK_HINT)

    def value_limit(self) -> ValueLimit:
        """What the next YAML file may hold: the least of its own limit, the game's and the session's."""
        limits = [ValueLimit(), ValueLimit(MAX_GAME_VALUES - self.values, MAX_GAME_VALUES,
                                           "the game's YAML files together hold", "game")]
        if self.session is not None:
            limits.append(ValueLimit(MAX_CHECK_VALUES - self.session.values, MAX_CHECK_VALUES,
                                     f"{self._checking()}: the YAML files read hold", "session"))
        return min(limits, key=lambda limit: limit.left)

    def values_exceeded(self, limit: ValueLimit) -> None:
        """A file went past `limit` (reported by the YAML loader): past the game's or the
        session's, the load goes no further."""
        if limit.scope != "file":
            self.exceeded = True
        if limit.scope == "session":
            self.session.exceeded = True

    def charge_values(self, count: int) -> None:
        self.values += count
        if self.session is not None:
            self.session.values += count

    def charge_rules(self, nbytes: int, what: str, display: str, span: Span | None = None) -> None:
        """Rules text about to be parsed: a rules file, or `what` (`this formula`) in a YAML file."""
        self.rules += nbytes
        if self.rules > MAX_RULES_BYTES:
            self._stop(f"the game's rules are too large: with {what} its rules text comes to {self.rules:,} "
                       f"bytes, where at most {MAX_RULES_BYTES:,} ({size_text(MAX_RULES_BYTES)}) are allowed",
                       display, span, "the rules text is the rules files and the rules written in YAML files "
                       "(card formulas and abilities, variants), together (the launch games' largest is 25 KB); "
                       "the limit keeps a stranger's game from exhausting time or memory (docs/security.md)")

    def _checking(self) -> str:
        shown = ", ".join(f"`{v}`" for v in self.variants)
        return "checking the game alone and with each of its variants reads too much" + \
            (f" (now with variant {shown})" if shown else "")

    def _stop(self, message: str, display: str, span: Span | None, hint: str) -> None:
        if self.exceeded:
            raise DiagnosticError([])
        self.exceeded = True
        where = span if span is not None and span.line > 0 else Span(display, 1, 1)
        raise DiagnosticError([Diagnostic("E004", message, where, hint)])


_CHECK_HINT = ("`rulesvm validate` checks a game alone and with each of its variants, reading the game's files "
               "again for each, so a large game can have only a few variants; the limit keeps it within its "
               "time budget (docs/security.md)")
