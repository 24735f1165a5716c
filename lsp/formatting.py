"""Formatting a rules file in the editor (lsp: the language server) with `rulesvm fmt`'s formatter.

The whole document is replaced by its canonical layout (tooling/formatter.py); a file with
syntax errors, or one the formatter cannot lay out safely, is left as it is.
"""

from __future__ import annotations

from lsprotocol import types

from rulesvm.dsl.diagnostics import DiagnosticError
from rulesvm.dsl.files import display_path
from rulesvm.tooling.formatter import FormatError, format_text

from .positions import client_column


def format_edits(path: str, text: str) -> list[types.TextEdit] | None:
    """The edits laying `text` out canonically: one edit of the whole text, [] if it is already
    laid out, None if it cannot be formatted."""
    source = text.replace("\r\n", "\n")
    try:
        out = format_text(source, display_path(path))
    except (DiagnosticError, FormatError, RecursionError):
        return None
    if out == source:
        return []
    lines = text.split("\n")
    end = types.Position(len(lines) - 1, client_column(lines[-1], len(lines[-1])))
    return [types.TextEdit(types.Range(types.Position(0, 0), end), out)]
