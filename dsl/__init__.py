"""rulesvm.dsl: the rules language front end.

Pipeline: source text (YAML game file + `.rules` scripts) -> AST (`parser`, `ast`) ->
checked model (`checker`, `loader`, `model`). Diagnostics (`diagnostics`) report every
mistake with file, line, column and a hint; `primitives` is the one registry of built-ins.
"""

from .diagnostics import Diagnostic, DiagnosticError, Span, render, render_all
from .loader import load_game_model
from .model import GameModel

__all__ = ["Diagnostic", "DiagnosticError", "Span", "render", "render_all", "load_game_model", "GameModel"]
