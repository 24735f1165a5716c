"""rulesvm.interpreter: compiles a checked game model and runs games.

Pipeline: checked model -> compiled program (`compiler`, `builtins`) -> running game
(`runtime`, `state`, `engine`) -> agents (`agents`). `Match` is the engine API.
"""

from .compiler import compile_program
from .engine import Match
from .errors import IllegalMove, RulesRuntimeError, RunawayError

__all__ = ["compile_program", "Match", "IllegalMove", "RulesRuntimeError", "RunawayError"]
