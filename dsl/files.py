"""The files a game names: where they may be, how they are shown, how they are read.

Every loader of the front end (the game file, its rules, card sets, variants) resolves the
paths a game file names here, so one rule keeps a stranger's game inside its folder tree
and every message names a file the same way.
"""

from __future__ import annotations

import os

from .diagnostics import Diagnostic, DiagnosticError, Span
from .yaml_loader import decode_text, read_file


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


def read_text(path: str, display: str, span: Span) -> str:
    """A rules file's text (at most the loaders' MAX_BYTES); a file that cannot be read, or that is not
    a regular file, is E005 at `span`."""
    return decode_text(read_file(path, display, span), display)
