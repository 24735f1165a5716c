"""Positions between rulesvm and the protocol (lsp: the language server).

A `Span` counts lines and columns from 1 in code points; the protocol counts from 0 in
the code units the client and server agreed on when they started (UTF-16 unless the client
offers UTF-8 or UTF-32: `use_encoding`; one server process serves one client). File names:
diagnostics name files as `rulesvm validate` shows them (relative to the working
directory), the protocol as `file://` URIs.
"""

from __future__ import annotations

import os
import re

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from rulesvm.dsl.diagnostics import Span

WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_UNITS = {"utf-8": lambda ch: len(ch.encode("utf-8")), "utf-16": lambda ch: 2 if ord(ch) > 0xFFFF else 1,
          "utf-32": lambda ch: 1}
_agreed = {"encoding": "utf-16"}


def use_encoding(name: str) -> None:
    """Count columns in `name` ("utf-8", "utf-16", "utf-32") from now on, as agreed with the client."""
    _agreed["encoding"] = name if name in _UNITS else "utf-16"


def uri_of(path: str) -> str:
    return from_fs_path(os.path.abspath(path))


def path_of(uri: str) -> str:
    return os.path.abspath(to_fs_path(uri) or uri)


def client_column(line: str, col: int) -> int:
    """A 0-based code-point column of `line` in the client's code units."""
    units = _UNITS[_agreed["encoding"]]
    return sum(units(ch) for ch in line[:max(col, 0)])


def code_point_column(line: str, character: int) -> int:
    """A 0-based column of `line` in the client's code units as code points."""
    units, count = _UNITS[_agreed["encoding"]], 0
    for i, ch in enumerate(line):
        if count >= character:
            return i
        count += units(ch)
    return len(line)


def to_range(span: Span, lines: list[str] | None) -> types.Range:
    """The range of a span; a span without an end covers the word at its start (or one character)."""
    lines = lines or []
    if span.line <= 0:
        return types.Range(types.Position(0, 0), types.Position(0, 0))

    def line_text(n: int) -> str:
        return lines[n - 1] if 1 <= n <= len(lines) else ""

    start_line, start_col = span.line, max(span.col, 1)
    if span.end_line >= span.line and (span.end_line > span.line or span.end_col > span.col):
        end_line, end_col = span.end_line, span.end_col
    else:
        text = line_text(start_line)
        found = WORD.match(text, start_col - 1)
        end_line, end_col = start_line, (found.end() + 1 if found else start_col + 1)
    return types.Range(types.Position(start_line - 1, client_column(line_text(start_line), start_col - 1)),
                       types.Position(end_line - 1, client_column(line_text(end_line), end_col - 1)))


def word_at(lines: list[str], position: types.Position) -> tuple[str, int, int] | None:
    """The name under the cursor: (word, start column, end column) in code points, or None."""
    if not 0 <= position.line < len(lines):
        return None
    line = lines[position.line]
    col = code_point_column(line, position.character)
    for found in WORD.finditer(line):
        if found.start() <= col <= found.end():
            return found.group(), found.start(), found.end()
    return None


def after_dot(lines: list[str], line: int, start: int) -> bool:
    """Whether the word starting at `start` of `line` follows a dot (an attribute: `c.number`)."""
    text = lines[line][:start] if 0 <= line < len(lines) else ""
    return text.rstrip().endswith(".")
