"""Where generated code finds its constants (compiled program): one namespace per program.

Generated Python source refers to values it cannot write as literals (a table of card
fields, a span for an error message, a closure) by a fresh name bound here; `compile`
defines the source in the namespace and keeps it for debugging.
"""

from __future__ import annotations

import itertools
import warnings


class Unsupported(Exception):
    """Source that cannot be written (or compiled) here: the caller takes another way."""


class Namespace:
    def __init__(self, names: dict):
        self.ns = dict(names)
        self.sources: list[str] = []
        self._ids = itertools.count()
        self._consts: dict = {}

    def fresh(self, prefix: str) -> str:
        return f"_{prefix}{next(self._ids)}"

    def name(self, value, prefix: str = "k") -> str:
        """A name bound to `value` (the same name for the same object)."""
        key = id(value)
        if key in self._consts and self.ns.get(self._consts[key]) is value:
            return self._consts[key]
        n = self.fresh(prefix)
        self.ns[n] = value
        self._consts[key] = n
        return n

    def define(self, code: str, filename: str, fname: str):
        """Compile and define generated source, returning the function `fname` it defines.
        Source Python cannot compile (an expression nested deeper than its parser allows)
        raises Unsupported."""
        try:
            with warnings.catch_warnings():
                # `5 == none` is written `5 is None`: Python's warning about comparing a
                # literal with `is` would speak of code the designer never wrote.
                warnings.simplefilter("ignore", SyntaxWarning)
                compiled = compile(code, filename, "exec")
        except (SyntaxError, RecursionError, MemoryError) as exc:
            raise Unsupported(f"Python cannot compile the generated code: {exc}") from None
        self.sources.append(code)
        exec(compiled, self.ns)
        return self.ns[fname]
