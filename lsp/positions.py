"""Positions between rulesvm and the protocol (lsp: the language server).

A `Span` counts lines and columns from 1 in code points; the protocol counts from 0 in
UTF-16 code units. File names: diagnostics name files as `rulesvm validate` shows them
(relative to the working directory), the protocol as `file://` URIs.
"""

from __future__ import annotations

import os
import re

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from rulesvm.dsl.diagnostics import Span

WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def uri_of(path: str) -> str:
    return from_fs_path(os.path.abspath(path))


def path_of(uri: str) -> str:
    return os.path.abspath(to_fs_path(uri) or uri)


def utf16_column(line: str, col: int) -> int:
    """A 0-based code-point column of `line` as UTF-16 code units."""
    head = line[:max(col, 0)]
    return len(head.encode("utf-16-le")) // 2


def code_point_column(line: str, character: int) -> int:
    """A 0-based UTF-16 column of `line` as code points."""
    units = 0
    for i, ch in enumerate(line):
        if units >= character:
            return i
        units += 2 if ord(ch) > 0xFFFF else 1
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
    return types.Range(types.Position(start_line - 1, utf16_column(line_text(start_line), start_col - 1)),
                       types.Position(end_line - 1, utf16_column(line_text(end_line), end_col - 1)))


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
