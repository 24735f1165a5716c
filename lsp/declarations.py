"""The declarations of a game's rules files, found in their text (lsp: the language server).

What hover, go to definition, completion and the outline need: every kind and its fields,
zone, variable, option, event, procedure (phases, abilities, setup, game) and function,
each with where it is declared, its declaration line and its doc comment (the `#` lines just
above it, or a comment at the end of its line). Read from the parse alone, so they are
there while the checker still reports mistakes; a file that does not parse keeps the
declarations of its last text that did.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass

from rulesvm.dsl import ast as A
from rulesvm.dsl.diagnostics import DiagnosticError, Span
from rulesvm.dsl.files import display_path
from rulesvm.dsl.parser import parse_rules

from .positions import WORD


@dataclass(frozen=True)
class Decl:
    name: str
    kind: str            # "kind", "field", "zone", "var", "option", "event", "func", or a ProcDecl's kind
    path: str            # the rules file (absolute)
    span: Span           # the whole declaration
    line: str            # its declaration line, as written
    doc: str             # its doc comment ("" if none)
    owner: str = ""      # a field's kind; a variable's scope ("global", "per_player", "per_card")

    @property
    def name_span(self) -> Span:
        """Where the name itself stands on the declaration line."""
        for found in WORD.finditer(self.line):
            if found.group() == self.name and found.start() >= self.span.col - 1:
                return Span(self.span.file, self.span.line, found.start() + 1, self.span.line, found.end() + 1)
        return Span(self.span.file, self.span.line, self.span.col, self.span.line, self.span.col + len(self.name))


def strip_comment(line: str) -> tuple[str, str]:
    """A line split into its code and its comment (a `#` outside a text)."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == "\\":
                continue
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "#":
            return line[:i].rstrip(), line[i + 1:].strip()
    return line.rstrip(), ""


def doc_comment(lines: list[str], line: int) -> str:
    """The comment lines just above 1-based `line`, or the comment ending it."""
    above = []
    n = line - 2
    while n >= 0 and lines[n].lstrip().startswith("#"):
        text = lines[n].lstrip()[1:].strip()
        if text.strip("-=# ") == "" or text.startswith("-") and len(text) > 20:
            break                    # a separator line, not a description
        above.append(text)
        n -= 1
    if above:
        return " ".join(reversed(above))
    return strip_comment(lines[line - 1])[1] if 1 <= line <= len(lines) else ""


def _header(lines: list[str], span: Span) -> str:
    text = strip_comment(lines[span.line - 1])[0] if 1 <= span.line <= len(lines) else ""
    return text.split("{")[0].rstrip() if "{" in text and not text.lstrip().startswith("kind") else text


def _var_scope(decl: A.VarDecl) -> str:
    names = {m.name for m in decl.modifiers}
    return "per_player" if "per_player" in names else "per_card" if "per_card" in names else "global"


def declarations_of(tree: A.RulesFile, path: str, text: str) -> list[Decl]:
    """Every declaration of one parsed rules file."""
    lines = text.splitlines()
    out = []

    def add(name, kind, span, owner=""):
        out.append(Decl(name, kind, path, span, _header(lines, span), doc_comment(lines, span.line), owner))
    for d in tree.decls:
        if isinstance(d, A.KindDecl):
            add(d.name, "kind", d.span)
            for f in d.fields:
                out.append(Decl(f.name, "field", path, f.span, _header(lines, d.span), "", d.name))
        elif isinstance(d, A.ZoneDecl):
            add(d.name, "zone", d.span)
        elif isinstance(d, A.VarDecl):
            add(d.name, "var", d.span, _var_scope(d))
        elif isinstance(d, A.OptionDecl):
            add(d.name, "option", d.span)
        elif isinstance(d, A.EventDecl):
            add(d.name, "event", d.span)
        elif isinstance(d, A.FuncDecl):
            add(d.name, "func", d.span)
        elif isinstance(d, A.ProcDecl):
            add(d.name, d.kind, d.span)
    return out


class Declarations:
    """The declarations of rules files, parsed once per text."""

    def __init__(self):
        self._files: dict = {}          # path -> (hash of the text, [Decl])

    def of_file(self, path: str, text: str) -> list[Decl]:
        digest = hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()
        known = self._files.get(path)
        if known is not None and known[0] == digest:
            return known[1]
        try:
            tree = parse_rules(text, display_path(path))
        except DiagnosticError:
            return known[1] if known is not None else []
        decls = declarations_of(tree, path, text)
        self._files[path] = (digest, decls)
        return decls

    def of_files(self, paths, read) -> list[Decl]:
        """The declarations of several rules files; `read(path)` gives a file's text (or None)."""
        out = []
        for path in paths:
            text = read(path)
            if text is not None and os.path.basename(path).endswith(".rules"):
                out.extend(self.of_file(path, text))
        return out
