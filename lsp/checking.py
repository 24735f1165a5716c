"""Checking a game as it stands in the editor (lsp: the language server).

The checks are `rulesvm validate`'s (rulesvm.api), run on the editor's unsaved texts
(`dsl.reading.given_texts`), texts unchanged since the check before not parsed again
(`dsl.remembered`), and their diagnostics sorted by file: every file of the game
gets its list, an empty one clearing what was shown before.
"""

from __future__ import annotations

import os

from rulesvm import api
from rulesvm.dsl.diagnostics import Diagnostic
from rulesvm.dsl.files import CheckSession
from rulesvm.dsl.reading import given_texts
from rulesvm.dsl.remembered import remembered_parses

from .diagnostics import path_of_display
from .games import GameFiles


def run_checks(game: GameFiles, texts: dict, variant: str | None = None, with_variants: bool = False,
               parses: dict | None = None, partial=None, stale=None) -> tuple[list, dict]:
    """The diagnostics of `game` with the editor's `texts` (path -> text): the game alone (as
    you type), with one variant file (while it or a rules file it names is edited), or as
    `rulesvm validate` checks a game file (`with_variants`, when a file is opened or saved):
    alone, then with each of its variants, their errors only. Then `partial(diagnostics)` is
    given the game alone's at once, and `stale()` is asked before each variant: true, the
    checks stop there (a newer edit will be checked).

    `parses` are the parses of the check before (the texts not edited since are not parsed
    again); returned with the diagnostics are this check's, for the next."""
    with given_texts(texts), remembered_parses(parses or {}) as memo:
        if variant is not None:
            return api.validate_game(game.game, variants=[variant]), memo
        if not with_variants:
            return api.validate_game(game.game), memo
        session = CheckSession()            # the game's files are read again for each variant
        diags = api.validate_game(game.game, session=session)
        if any(d.is_error for d in diags) or not game.variant_names:
            return diags, memo
        if partial is not None:
            partial(list(diags))
        for name in game.variant_names:
            if session.exceeded or (stale is not None and stale()):
                break
            diags.extend(d for d in api.validate_game(game.game, variants=[name], session=session) if d.is_error)
    return diags, memo


def by_file(game: GameFiles, diags: list[Diagnostic], extra: tuple = ()) -> dict:
    """Absolute path -> its diagnostics, for every file of the game (and `extra` files); a
    diagnostic naming no file of the game (a file it could not read) goes to the game file."""
    files = {os.path.realpath(p): p for p in (*game.all, *extra)}
    out: dict = {p: [] for p in files.values()}
    seen = set()
    for diag in diags:
        key = (diag.code, diag.message, diag.span)
        if key in seen:              # the game alone and with a variant: the same mistake once
            continue
        seen.add(key)
        path = files.get(os.path.realpath(path_of_display(diag.span.file))) if diag.span.line > 0 else None
        if path is None:
            path = path_of_display(diag.span.file) if diag.span.line > 0 and \
                os.path.isfile(path_of_display(diag.span.file)) else game.game
        out.setdefault(path, []).append(diag)
    return out
