"""Diagnostics: the one type every stage uses to report a mistake, and its renderer.

Each stage of the pipeline (YAML loading, schema validation, parsing, checking, variant
application, scenario loading) reports problems as `Diagnostic`s that carry a stable code,
a message, a `Span` in the designer's file, and an optional hint. `render` prints them as

    games/x.rules:12:7: error[E203]: unknown zone `discrad`
       12 |   move(c, discrad(p))
          |           ^^^^^^^
       = hint: did you mean `discard`?
"""

from __future__ import annotations

import contextlib
import contextvars
import difflib
import functools
import os
import re
from dataclasses import dataclass, field

from .reading import read_bytes


@dataclass(frozen=True, slots=True)
class Span:
    """A region of a source file; lines and columns are 1-based, `end_col` exclusive."""
    file: str
    line: int
    col: int
    end_line: int = 0
    end_col: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


NO_SPAN = Span("<none>", 0, 0)


@dataclass(frozen=True, slots=True)
class Diagnostic:
    code: str
    message: str
    span: Span
    hint: str | None = None
    severity: str = "error"  # or "warning"
    notes: tuple = ()  # extra (message, Span) pairs, e.g. the base game's position

    @property
    def is_error(self) -> bool:
        return self.severity == "error"

    def to_json(self) -> dict:
        return {"code": self.code, "severity": self.severity, "message": self.message,
                "file": self.span.file, "line": self.span.line, "column": self.span.col,
                "hint": self.hint}


class DiagnosticError(Exception):
    """Raised by a stage that cannot go on; carries every diagnostic collected so far."""

    def __init__(self, diagnostics: list[Diagnostic]):
        self.diagnostics = list(diagnostics)
        super().__init__("; ".join(f"{d.span}: {d.message}" for d in self.diagnostics[:3]))


@dataclass
class Reporter:
    """Collects diagnostics of one run, in order, without stopping at the first."""
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def error(self, code: str, message: str, span: Span, hint: str | None = None, notes=()):
        self.diagnostics.append(Diagnostic(code, message, span, hint, "error", tuple(notes)))

    def warning(self, code: str, message: str, span: Span, hint: str | None = None):
        self.diagnostics.append(Diagnostic(code, message, span, hint, "warning"))

    def extend(self, diags) -> None:
        self.diagnostics.extend(diags)

    @property
    def has_errors(self) -> bool:
        return any(d.is_error for d in self.diagnostics)

    def raise_if_errors(self) -> None:
        if self.has_errors:
            raise DiagnosticError(without_knock_on(self.diagnostics))


# Warnings that an error often causes: a card whose kind or ability is misspelled leaves the
# kind without cards (W406), the ability unused (W402) and what only it calls unreached (W401,
# W403); `scored(1)` for `emit scored(1)` leaves the event never emitted (W404); a mistake in
# a function's body, or in the one place that calls it, leaves it unused. Such a warning is
# held back while an error may explain it, so the list shows the causes; once the errors are
# fixed, any that remain are reported.
KNOCK_ON = frozenset({"W401", "W402", "W403", "W404", "W406"})
CARD_DATA_ERRORS = frozenset({"E230", "E231", "E232", "E233", "E234"})
_QUOTED = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)`")


def without_knock_on(diags: list) -> list:
    """The diagnostics without the warnings that may follow from an error: any usage warning
    when a card entry has an error (a dropped card uses its kind and ability); else one about a
    name an error or its hint names, or about a declaration an error lies inside."""
    errors = [d for d in diags if d.is_error]
    if not errors:
        return list(diags)
    cards_broken = any(d.code in CARD_DATA_ERRORS for d in errors)
    named = {n for d in errors for n in _QUOTED.findall(d.message + " " + (d.hint or ""))}

    def follows(w: Diagnostic) -> bool:
        if w.is_error or w.code not in KNOCK_ON:
            return False
        if cards_broken:
            return True
        subject = _QUOTED.search(w.message)
        if subject is not None and subject.group(1) in named:
            return True
        s = w.span
        return any(e.span.file == s.file and (s.line, s.col) <= (e.span.line, e.span.col) <= (s.end_line, s.end_col)
                   for e in errors)

    return [d for d in diags if not follows(d)]


# Comparing a name with every known one costs: a hostile file with thousands of names and
# thousands of mistakes would take minutes (docs/security.md). A "did you mean" compares with
# at most MAX_SUGGESTION_CANDIDATES names, and the suggestions of one load of a game with at
# most MAX_SUGGESTION_WORK names in all (a few seconds); past that, mistakes get no suggestion.
MAX_SUGGESTION_CANDIDATES = 500
MAX_SUGGESTION_WORK = 300_000
# The most names a message lists.
MAX_LISTED = 20
_suggestion_work: contextvars.ContextVar = contextvars.ContextVar("suggestion_work", default=None)


@contextlib.contextmanager
def suggestion_budget(names: int = MAX_SUGGESTION_WORK):
    """Within the block, the suggestions together compare with at most `names` names."""
    token = _suggestion_work.set([names])
    try:
        yield
    finally:
        _suggestion_work.reset(token)


def did_you_mean(name: str, candidates) -> str | None:
    """A "did you mean" hint for a misspelled name, or None (also when there are more than
    MAX_SUGGESTION_CANDIDATES names to compare with, or the suggestion budget is spent)."""
    pool = candidates if hasattr(candidates, "__len__") else list(candidates)
    if len(pool) > MAX_SUGGESTION_CANDIDATES:
        return None
    left = _suggestion_work.get()
    if left is not None:
        if left[0] < len(pool):
            return None
        left[0] -= len(pool)
    # Names from a designer's file may be numbers or true/false (YAML keys): compare as text.
    close = difflib.get_close_matches(str(name), sorted({str(c) for c in pool}), n=1, cutoff=0.6)
    return f"did you mean `{close[0]}`?" if close else None


def listing(names, quote: bool = True, limit: int = MAX_LISTED) -> str:
    """Names for a message, in the order given, at most `limit` of them ("and 1,234 more")."""
    names = list(names)
    shown = ", ".join(f"`{n}`" if quote else str(n) for n in names[:limit])
    return shown + (f" and {len(names) - limit:,} more" if len(names) > limit else "")


# The most characters of a source line shown under a diagnostic: a longer line is shown as
# a window around the column (a minified or hostile file must not flood the terminal).
SHOWN_LINE = 120


def printable(text: str) -> str:
    """Text safe to print on a terminal: control characters (escape sequences that could
    retitle the window, clear the screen or write the clipboard, a carriage return that
    overwrites the line) are shown as `\\xNN`; tabs and line ends stay."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() or ch in "\t\n" else f"\\x{ord(ch):02x}" if ord(ch) < 256
                   else f"\\u{ord(ch):04x}" for ch in text)


def _source_line(sources: dict, span: Span) -> str | None:
    text = sources.get(span.file)
    if text is None:
        try:
            # A file of /proc says it is empty and holds secrets (the environment): an empty
            # file has no line to show anyway. FIFOs and devices are never read (read_bytes).
            if os.path.getsize(span.file) == 0:
                return None
            text = read_bytes(span.file).decode("utf-8")
        except (OSError, UnicodeDecodeError, ValueError):
            return None
        sources[span.file] = text
    lines = lines_of(text)
    if 1 <= span.line <= len(lines):
        return lines[span.line - 1]
    return None


@functools.lru_cache(maxsize=8)
def lines_of(text: str) -> list[str]:
    """A file's lines, split once for all who look one up (thousands of diagnostics or card
    formulas in one big file would otherwise split it thousands of times); the list is shared,
    never changed."""
    return text.splitlines()


def _window(line: str, col: int, width: int) -> tuple[str, int, int]:
    """The part of a long line around column `col` (1-based), and the caret's new column and
    width in it."""
    line = line.rstrip()
    if len(line) <= SHOWN_LINE:
        return line, col, width
    start = max(0, min(col - 1 - SHOWN_LINE // 3, len(line) - SHOWN_LINE))
    shown = line[start:start + SHOWN_LINE]
    head = "..." if start > 0 else ""
    tail = "..." if start + SHOWN_LINE < len(line) else ""
    col = col - start + len(head)
    return head + shown + tail, col, max(1, min(width, len(head) + len(shown) - col + 1))


def render(diag: Diagnostic, sources: dict | None = None) -> str:
    """One diagnostic as text: the location line, the source line with a caret, the hint."""
    sources = {} if sources is None else sources
    out = [printable(f"{diag.span.file}:{diag.span.line}:{diag.span.col}: {diag.severity}[{diag.code}]: "
                     f"{diag.message}")]
    line = _source_line(sources, diag.span) if diag.span.line > 0 else None
    if line is not None:
        num = str(diag.span.line)
        pad = " " * len(num)
        width = 1
        if diag.span.end_line == diag.span.line and diag.span.end_col > diag.span.col:
            width = diag.span.end_col - diag.span.col
        col = max(diag.span.col, 1)
        width = max(1, min(width, len(line) - col + 1))
        line, col, width = _window(line, col, width)
        # Control characters are widened when shown: widen the caret's offset alike.
        before = printable(line[:col - 1])
        out.append(f" {num} | {printable(line)}")
        out.append(f" {pad} | {' ' * len(before)}{'^' * len(printable(line[col - 1:col - 1 + width]) or '^')}")
    if diag.hint:
        out.append(printable(f"   = hint: {diag.hint}"))
    for message, span in diag.notes:
        out.append(printable(f"   = note: {span.file}:{span.line}:{span.col}: {message}"))
    return "\n".join(out)


def render_all(diags, sources: dict | None = None) -> str:
    sources = {} if sources is None else sources
    return "\n".join(render(d, sources) for d in diags)
