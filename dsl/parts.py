"""A rules file cut into its top-level declarations (pipeline step: source text -> AST).

A language server checks a game on every keystroke, and a keystroke changes one
declaration: the parser (dsl/parser.py) parses the parts this module cuts one by one, each
remembered (dsl/remembered.py), and joins their declarations, so that only the edited part
is parsed again. Spans stay those of the whole file: each part is parsed on its own lines.
"""

from __future__ import annotations

import re

from . import ast as A
from .diagnostics import Span

# What may stand between declarations outside any bracket: a string (a `{` in it opens no
# block), a comment, a bracket, a line end.
_BRACKETS = re.compile(r'"[^"\\\n]*(?:\\.[^"\\\n]*)*"|#[^\n]*|[{}()\[\]]|\n')


def top_level_parts(text: str, keywords) -> list[tuple[int, str]] | None:
    """The text cut before each line that starts with a declaration keyword (`keywords`)
    outside any bracket: (its first line, the part); None when the brackets do not balance."""
    starts = re.compile(rf"({'|'.join(keywords)})(?![A-Za-z0-9_])")
    cuts, depth = [0], 0
    for found in _BRACKETS.finditer(text):
        token = found.group()
        if token == "\n":
            if depth == 0 and starts.match(text, found.end()):
                cuts.append(found.end())
        elif token in "{([":
            depth += 1
        elif token in "})]":
            depth -= 1
            if depth < 0:
                return None
    if depth != 0:
        return None
    cuts.append(len(text))
    parts, first = [], 1
    for start, end in zip(cuts, cuts[1:]):
        if end > start:
            parts.append((first, text[start:end]))
            first += text.count("\n", start, end)
    return parts


def joined(path: str, parts: list[A.RulesFile]) -> A.RulesFile:
    """The parts' declarations as one rules file, spanning them as a parse of the whole would."""
    decls = tuple(d for part in parts for d in part.decls)
    if not decls:
        return A.RulesFile(Span(path, 0, 0), path, ())
    first, last = decls[0].span, decls[-1].span
    return A.RulesFile(Span(path, first.line, first.col, last.end_line, last.end_col), path, decls)
