"""rulesvm.interpreter: compiles a checked game model and runs games.

Pipeline: checked model -> compiled program (`compiler` runs `tables`, `lower`, the back
ends `closures` / `pysource` with `builtins` and `decisions`, and `runner`) -> running game
(`engine`, `runtime`, `state`, `observation`, `chance`) -> agents (`agents`). `Match` is the engine
API; the run-time modules never import the compile side (an import-linter contract).
"""

from .compiler import compile_block, compile_expression, compile_program
from .engine import Match
from .errors import IllegalMove, RulesRuntimeError, RunawayError
from .state import CHANCE

__all__ = ["compile_program", "compile_expression", "compile_block", "Match", "IllegalMove", "RulesRuntimeError",
           "RunawayError", "CHANCE"]
