"""rulesvm's diagnostics as the protocol's (lsp: the language server).

The same code, message, hint and range as `rulesvm validate`; each code links to its
section of docs/errors.md (the protocol's `codeDescription`), notes become related
information.
"""

from __future__ import annotations

import functools
import os
import re

from lsprotocol import types

from rulesvm.dsl.diagnostics import Diagnostic

from .positions import path_of, to_range, uri_of

SOURCE = "rulesvm"
# docs/errors.md of the checkout this package runs from (absent from an installed wheel).
ERRORS_PAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "docs", "errors.md")
_SECTION = re.compile(r"^## (.+\(([A-Z])(\d+)-[A-Z](\d+)(?:, ([A-Z]\d+))?\))\s*$")


def _slug(title: str) -> str:
    """A heading's anchor as mkdocs and GitHub write it."""
    return re.sub(r"\s+", "-", re.sub(r"[^\w\s-]", "", title.strip().lower()))


@functools.lru_cache(maxsize=1)
def _sections() -> list[tuple[str, int, int, str | None, str]]:
    """(letter, first, last, one more code, anchor) of each section of the error list."""
    try:
        with open(ERRORS_PAGE, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        found = _SECTION.match(line)
        if found:
            title, letter, first, last, extra = found.groups()
            out.append((letter, int(first), int(last), extra, _slug(title)))
    return out


def code_link(code: str) -> str | None:
    """The address of the section of docs/errors.md that lists `code`, or None."""
    if not re.fullmatch(r"[A-Z]\d+", code):
        return None
    letter, number = code[0], int(code[1:])
    for sec_letter, first, last, extra, anchor in _sections():
        if (sec_letter == letter and first <= number <= last) or code == extra:
            return f"{uri_of(ERRORS_PAGE)}#{anchor}"
    return None


def to_protocol(diag: Diagnostic, lines_for) -> types.Diagnostic:
    """One diagnostic for the protocol; `lines_for(path)` gives a file's lines (for columns)."""
    path = path_of_display(diag.span.file)
    message = diag.message + (f"\nhint: {diag.hint}" if diag.hint else "")
    related = [types.DiagnosticRelatedInformation(
        types.Location(uri_of(path_of_display(span.file)), to_range(span, lines_for(path_of_display(span.file)))),
        message=note) for note, span in diag.notes if span.line > 0]
    link = code_link(diag.code)
    return types.Diagnostic(
        range=to_range(diag.span, lines_for(path)), message=message, code=diag.code, source=SOURCE,
        severity=types.DiagnosticSeverity.Error if diag.is_error else types.DiagnosticSeverity.Warning,
        code_description=types.CodeDescription(href=link) if link else None,
        related_information=related or None)


def path_of_display(shown: str) -> str:
    """The file a diagnostic names (as shown, relative to the working directory) as an absolute path."""
    if shown.startswith("file://"):
        return path_of(shown)
    return os.path.abspath(shown)
