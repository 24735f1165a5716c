"""Scenario files in the editor (lsp: the language server): `rulesvm test` on one scenario.

The scenario is run on the editor's texts (its own and its game's, saved or not) and what
`rulesvm test` would print becomes diagnostics: the scenario's load errors where they are
(the game's errors summed up at its `game:` line: they are shown in the game's files), else
the first step that fails, where the scenario says it.
"""

from __future__ import annotations

import os

import yaml

from rulesvm.dsl.diagnostics import Diagnostic, Span
from rulesvm.dsl.files import display_path
from rulesvm.dsl.reading import given_texts
from rulesvm.testing.scenario import run_scenario

from .diagnostics import path_of_display

SUFFIX = ".scenario.yaml"
FAILED = "failed"           # the code of a scenario whose game does not behave as it expects


def is_scenario(path: str) -> bool:
    return path.endswith(SUFFIX)


def scenario_game(path: str, text: str) -> str | None:
    """The game file a scenario names (absolute), or None."""
    try:
        data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        return None
    game = data.get("game") if isinstance(data, dict) else None
    return os.path.normpath(os.path.join(os.path.dirname(path), game)) if isinstance(game, str) else None


def check_scenario(path: str, texts: dict) -> list[Diagnostic]:
    """The diagnostics of the scenario file `path` run on the editor's `texts`."""
    with given_texts(texts):
        result = run_scenario(path)
    if result.passed:
        return []
    shown = display_path(path)
    if result.diagnostics:
        own = [d for d in result.diagnostics if os.path.realpath(path_of_display(d.span.file)) == os.path.realpath(path)]
        others = [d for d in result.diagnostics if d not in own]
        if others:
            first = others[0]
            own.append(Diagnostic(first.code, f"the game does not load: {first.span}: {first.message}",
                                  _game_line(path, texts, shown), first.hint))
        return own
    span = result.span if result.span is not None and result.span.line > 0 else Span(shown, 1, 1)
    return [Diagnostic(result.code or FAILED, result.reason or result.message, span)]


def _game_line(path: str, texts: dict, shown: str) -> Span:
    text = texts.get(path, "")
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("game:"):
            return Span(shown, number, 1, number, len(line) + 1)
    return Span(shown, 1, 1)
