"""Quick fixes (lsp: the language server's code actions): a diagnostic's "did you mean"
applied.

A diagnostic whose hint suggests a name (`did you mean `discard`?`) and whose range covers
the misspelt name gets an action replacing that name by the suggestion.
"""

from __future__ import annotations

import re

from lsprotocol import types

from .diagnostics import SOURCE
from .positions import code_point_column

SUGGESTION = re.compile(r"did you mean `([^`]+)`\?")
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_.#\-]*")


def _text_of(lines: list[str], where: types.Range) -> str | None:
    if where.start.line != where.end.line or not 0 <= where.start.line < len(lines):
        return None
    line = lines[where.start.line]
    return line[code_point_column(line, where.start.character):code_point_column(line, where.end.character)]


def quick_fixes(uri: str, lines: list[str], diagnostics: list[types.Diagnostic]) -> list[types.CodeAction]:
    """One action per diagnostic of rulesvm suggesting a name for the one its range covers."""
    out = []
    for diag in diagnostics:
        found = SUGGESTION.search(diag.message or "")
        wrong = _text_of(lines, diag.range)
        if diag.source != SOURCE or found is None or not wrong or not WORD.fullmatch(wrong):
            continue
        right = found.group(1)
        if right == wrong:
            continue
        out.append(types.CodeAction(
            title=f"Replace `{wrong}` with `{right}`", kind=types.CodeActionKind.QuickFix, diagnostics=[diag],
            is_preferred=True,
            edit=types.WorkspaceEdit(changes={uri: [types.TextEdit(range=diag.range, new_text=right)]})))
    return out
