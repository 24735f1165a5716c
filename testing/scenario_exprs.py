"""Scenario files, their expressions: what a scenario writes in the rules language (`expect`,
`play_until`) parsed, checked and compiled against the game, and a failed one explained by
the values of its parts; with the failure types every part of a scenario run raises.
"""

from __future__ import annotations

from rulesvm.dsl import ast as A
from rulesvm.dsl.diagnostics import DiagnosticError, Reporter, Span
from rulesvm.dsl.parser import parse_expression
from rulesvm.dsl.types import BOOL
from rulesvm.dsl.yaml_loader import scalar_origin
from rulesvm.interpreter.compiler import compile_expression
from rulesvm.interpreter.format import formatter


class ScenarioFailure(Exception):
    """A scenario that fails. With a `code`, the scenario file itself is wrong (E044: the set-up
    or a step names something the game does not have; E045: an expression that does not parse
    or check); without one, the game does not behave as the scenario expects."""

    def __init__(self, message: str, step: int | None = None, span: Span | None = None,
                 code: str | None = None):
        self.message = message
        self.step = step
        self.span = span
        self.code = code
        super().__init__(message)

    def describe(self) -> str:
        where = f"{self.span.file}:{self.span.line}:{self.span.col}: " if self.span else ""
        kind = f"error[{self.code}]: " if self.code else ""
        step = f"step {self.step}: " if self.step is not None else ""
        return f"{where}{kind}{step}{self.message}"


class SetupError(ScenarioFailure):
    """The scenario names a card, zone, variable, seat or phase the game does not have (E044)."""

    def __init__(self, message: str, step: int | None = None, span: Span | None = None):
        super().__init__(message, step, span, "E044")



def compile_check(run, text: str, span: Span, want_bool: bool = True):
    """Parse, check and compile a rules-language expression written in the scenario.

    The expression is parsed on its own (spans index into `text`); problems are reported at
    the step's position in the scenario file.
    """
    try:
        expr = parse_expression(text, EXPR_FILE)
    except DiagnosticError as exc:
        d = exc.diagnostics[0]
        raise ScenarioFailure(f"in `{text}` (column {d.span.col}): {d.message}", None,
                              _expr_span(run, span, d.span), "E045") from None
    model = run.game.model
    reporter = Reporter()
    t, nslots = model.checker.check_standalone(expr, reporter)
    errors = [d for d in reporter.diagnostics if d.is_error]
    if errors:
        d = errors[0]
        raise ScenarioFailure(f"in `{text}`: {d.message}" + (f" ({d.hint})" if d.hint else ""), None,
                              _expr_span(run, span, d.span), "E045")
    if want_bool and t not in (BOOL,) and t.name != "any":
        raise ScenarioFailure(f"`{text}` should be true or false, but it is {t}", None,
                              _expr_span(run, span, Span(EXPR_FILE, 1, 1)), "E045")
    return expr, compile_expression(run.game.program, expr), nslots, model.resolution


EXPR_FILE = "<expectation>"


def _expr_span(run, span: Span, inner: Span) -> Span:
    """Where a position inside an expression written in the scenario lies in the file."""
    if not run.text or span.line <= 0:
        return span
    line, col, indent = scalar_origin(run.text, span)
    if inner.line <= 1:
        return Span(span.file, line, col + max(inner.col, 1) - 1)
    return Span(span.file, line + inner.line - 1, indent + max(inner.col, 1))


def explain(run, expr, res, nslots, text: str) -> str:
    """The values of an expression's parts, for a failure message."""
    parts = []
    nodes = [expr]
    if isinstance(expr, A.Binary):
        nodes = [expr.left, expr.right]
    elif isinstance(expr, A.Unary):
        nodes = [expr.operand]
    for node in nodes:
        if isinstance(node, (A.IntLit, A.BoolLit, A.NoneLit)):
            continue
        try:
            value = compile_expression(run.game.program, node)(run.match.rt, [None] * max(nslots, 1))
            fmt = formatter(res.types.get(node, BOOL), lambda: run.game.program)
            parts.append(f"{_source_of(node, text)} = {fmt(value, run.match.rt)}")
        except Exception as exc:  # noqa: BLE001 - a part may fail on its own; say so
            parts.append(f"{_source_of(node, text)} fails: {exc}")
    return "; ".join(parts)


def _source_of(node, text: str) -> str:
    span = node.span
    lines = text.splitlines()
    if span.line == span.end_line and 1 <= span.line <= len(lines):
        return lines[span.line - 1][span.col - 1:span.end_col - 1]
    return "(expression)"
