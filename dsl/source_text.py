"""Plain facts about rules source text, read without parsing it (pipeline: **source**):
where comments and strings are, where the text or an interpolation ends, which block was
left open, which declaration a line belongs to. The parser's error messages and error
recovery, and the formatter, read the text through these.
"""

from __future__ import annotations

import re

DECLARATION_KEYWORDS = ("kind", "zone", "var", "option", "event", "proc", "func", "ability", "phase", "on",
                        "setup", "game")


def interpolation_end(raw: str, start: int) -> int:
    """Where the `{` at `start` of a string's text is closed (-1: nowhere). Braces inside
    count, so an interpolation may hold a string with interpolations of its own:
    `"{join([\\"{p}: {p.score}\\" for p in players], \\", \\")}"`; escaped characters do not."""
    depth = 0
    i = start
    while i < len(raw):
        ch = raw[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def unclosed_opener(text: str):
    """For a file whose blocks do not all close: ((line, col) of the `{` that most likely lacks
    its `}`, line of the `}` that closed it instead or None)."""
    stack: list = []
    suspect = None
    for k, raw in enumerate(text.split("\n"), 1):
        code = strip_comment(raw)
        indent = len(raw) - len(raw.lstrip(" \t"))
        for i, ch in outside_strings(code):
            if ch == "{":
                stack.append((k, i + 1, indent))
            elif ch == "}" and stack:
                oline, ocol, oindent = stack.pop()
                if suspect is None and not code[:i].strip() and indent != oindent:
                    suspect = ((oline, ocol), k)
    if suspect is not None:
        return suspect
    if stack:
        oline, ocol, _ = stack[-1]
        return (oline, ocol), None
    return None


def end_position(text: str) -> tuple[int, int]:
    """Line and column just after the last character that is not white space or a comment."""
    lines = text.split("\n")
    for k in range(len(lines) - 1, -1, -1):
        code = strip_comment(lines[k]).rstrip()
        if code.strip():
            return k + 1, len(code) + 1
    return len(lines), len(lines[-1]) + 1


def strip_comments(text: str) -> str:
    return "\n".join(strip_comment(ln) for ln in text.split("\n"))


def outside_strings(line: str):
    """(index, character) of each character of a line that is not inside a string literal
    (strings never span lines; quotes themselves are left out)."""
    in_string = False
    i = 0
    while i < len(line):
        ch = line[i]
        if in_string:
            if ch == "\\":
                i += 1
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        else:
            yield i, ch
        i += 1


def comment_start(line: str) -> int | None:
    """Where the line's `#` comment starts (a `#` inside a string does not start one)."""
    return next((i for i, ch in outside_strings(line) if ch == "#"), None)


def strip_comment(line: str) -> str:
    """A line without its `#` comment."""
    k = comment_start(line)
    return line if k is None else line[:k]


def declaration_at(text: str, line: int) -> str | None:
    """The keyword of the declaration that line `line` (1-based) belongs to: the nearest line
    at or above it that starts, unindented, with a declaration keyword."""
    lines = text.split("\n")
    for k in range(min(line, len(lines)) - 1, -1, -1):
        words = lines[k].split(None, 1)
        if words and not lines[k][0].isspace() and words[0] in DECLARATION_KEYWORDS:
            return words[0]
    return None


def word_before(text: str, line: int, col: int) -> str:
    """The word that ends right before column `col` of line `line` (1-based), if any."""
    lines = text.split("\n")
    if not 1 <= line <= len(lines):
        return ""
    before = lines[line - 1][:col - 1].rstrip()
    m = re.search(r"[A-Za-z_][A-Za-z0-9_]*$", before)
    return m.group(0) if m else ""
