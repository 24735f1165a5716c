"""Errors raised while a game runs (pipeline: running game).

A `RulesRuntimeError` names the rule (procedure or phase) and the source position where the
rules did something impossible (an index past the end of a zone, a choice with no legal
option, a runaway loop); the engine adds the game's seed and decision number so the saved
log can be replayed up to that point. `IllegalMove` is an agent answering with an option
that is not offered.
"""

from __future__ import annotations

from rulesvm.dsl.diagnostics import Span

# The most items a list or text built by the rules may hold (see limits.py).
MAX_ITEMS = 1_000_000

# The most calls of procedures, abilities and recursive functions running inside each other
# without a pause (see limits.py): endless recursion stops here, at the same call whichever
# back end runs it and however deep Python's own stack already is.
MAX_CALL_DEPTH = 120


class RulesRuntimeError(Exception):
    def __init__(self, message: str, span: Span | None = None, rule: str | None = None,
                 code: str = "R001", hint: str | None = None):
        self.message = message
        self.span = span
        self.rule = rule
        self.code = code
        self.hint = hint
        self.seed = None
        self.decision = None
        super().__init__(message)

    def describe(self) -> str:
        where = f"{self.span}: " if self.span is not None and self.span.line else ""
        rule = f" (in {self.rule})" if self.rule else ""
        extra = ""
        if self.seed is not None:
            extra = f"\n   = game seed {self.seed}, after decision {self.decision}"
        hint = f"\n   = hint: {self.hint}" if self.hint else ""
        return f"{where}runtime error[{self.code}]: {self.message}{rule}{extra}{hint}"


class RunawayError(RulesRuntimeError):
    pass


class IllegalMove(Exception):
    """An answer that is not one of the legal options of the current decision."""
