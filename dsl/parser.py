"""Parser: rules source text -> AST (pipeline step one).

Wraps the LALR grammar in `grammar.lark` (built once per process and cached on disk by
Lark) and turns Lark's parse tree into the frozen nodes of `dsl.ast`, each with its `Span`.
Syntax errors become `Diagnostic`s (code E1xx) naming what was found and what was
expected; the parser recovers after an error where it can, so one run reports several.
"""

from __future__ import annotations

import functools
import os
import re

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from . import ast as A
from .diagnostics import Diagnostic, DiagnosticError, Span

GRAMMAR_PATH = os.path.join(os.path.dirname(__file__), "grammar.lark")


@functools.lru_cache(maxsize=1)
def _lark() -> Lark:
    with open(GRAMMAR_PATH, encoding="utf-8") as fh:
        grammar = fh.read()
    return Lark(grammar, parser="lalr", propagate_positions=True, maybe_placeholders=True,
                start=["start", "expr"], cache=True)


@functools.lru_cache(maxsize=1)
def _terminal_text() -> dict[str, str]:
    """Terminal name -> how to show it to a designer (`}` rather than RBRACE)."""
    names = {}
    for term in _lark().terminals:
        pattern = term.pattern
        if pattern.type == "str":
            names[term.name] = f"`{pattern.value}`"
    names.update({"NAME": "a name", "INT": "a number", "STRING": "a string",
                  "$END": "the end of the file"})
    return names


def describe_token(token) -> str:
    if getattr(token, "type", None) == "$END":
        return "the end of the file"
    text = str(token)
    if token.type in ("NAME", "INT", "STRING"):
        return f"{_terminal_text()[token.type]} `{text}`"
    return f"`{text}`"


def describe_expected(expected) -> str:
    shown = sorted({_terminal_text().get(e, e) for e in expected})
    if len(shown) > 8:
        # Long lists drown the message; keep the punctuation and the categories.
        shown = [s for s in shown if not s.startswith("`") or len(s) <= 4][:8] + ["..."]
    return ", ".join(shown)


KEYWORDS = {"kind", "zone", "var", "option", "event", "proc", "func", "ability", "phase",
            "on", "as", "when", "setup", "game", "simultaneous", "let", "if", "elif", "else", "then", "for", "in",
            "while", "repeat", "loop", "break", "continue", "return", "emit", "and", "or",
            "not", "true", "false", "none"}


class _Builder(Transformer):
    """Lark tree -> dsl.ast nodes."""

    def __init__(self, path: str, reporter_errors: list):
        super().__init__()
        self.path = path
        self.errors = reporter_errors

    # --- helpers
    def _span(self, meta) -> Span:
        if getattr(meta, "empty", True):
            return Span(self.path, 0, 0)
        return Span(self.path, meta.line, meta.column, meta.end_line, meta.end_column)

    def _tok_span(self, tok: Token) -> Span:
        return Span(self.path, tok.line, tok.column, tok.end_line, tok.end_column)

    # --- top level
    @v_args(meta=True)
    def start(self, meta, children):
        return A.RulesFile(self._span(meta), self.path, tuple(children))

    @v_args(meta=True)
    def kind_decl(self, meta, c):
        return A.KindDecl(self._span(meta), str(c[0]), tuple(c[1:]))

    @v_args(meta=True)
    def field_decl(self, meta, c):
        return A.FieldDecl(self._span(meta), str(c[0]), c[1], c[2])

    @v_args(meta=True)
    def zone_decl(self, meta, c):
        mods = tuple(m for m in c[1:] if m is not None)
        return A.ZoneDecl(self._span(meta), str(c[0]), mods)

    @v_args(meta=True)
    def var_decl(self, meta, c):
        return A.VarDecl(self._span(meta), str(c[0]), c[1], c[2], tuple(c[3:]))

    @v_args(meta=True)
    def option_decl(self, meta, c):
        return A.OptionDecl(self._span(meta), str(c[0]), c[1], c[2], tuple(c[3:]))

    @v_args(meta=True)
    def modifier(self, meta, c):
        args = tuple(a for a in c[1:] if a is not None)
        return A.Modifier(self._span(meta), str(c[0]), args)

    @v_args(meta=True)
    def event_decl(self, meta, c):
        return A.EventDecl(self._span(meta), str(c[0]), tuple(c[1] or ()))

    @v_args(meta=True)
    def proc_decl(self, meta, c):
        return A.ProcDecl(self._span(meta), "proc", str(c[0]), tuple(c[1] or ()), c[2], c[3])

    @v_args(meta=True)
    def func_decl(self, meta, c):
        return A.FuncDecl(self._span(meta), str(c[0]), tuple(c[1] or ()), c[2], c[3])

    @v_args(meta=True)
    def ability_decl(self, meta, c):
        return A.ProcDecl(self._span(meta), "ability", str(c[0]), (), None, c[1])

    @v_args(meta=True)
    def phase_decl(self, meta, c):
        return A.ProcDecl(self._span(meta), "phase", str(c[0]), tuple(c[1] or ()), None, c[2])

    @v_args(meta=True)
    def trigger_decl(self, meta, c):
        names = tuple(c[1] or ())
        label = str(c[2]) if c[2] is not None else None
        return A.TriggerDecl(self._span(meta), str(c[0]), names, c[3], c[4], label)

    @v_args(meta=True)
    def setup_decl(self, meta, c):
        return A.ProcDecl(self._span(meta), "setup", "setup", (), None, c[0])

    @v_args(meta=True)
    def game_decl(self, meta, c):
        return A.ProcDecl(self._span(meta), "game", "game", (), None, c[0])

    def params(self, c):
        return tuple(c)

    @v_args(meta=True)
    def param(self, meta, c):
        return A.Param(self._span(meta), str(c[0]), c[1])

    def names(self, c):
        return tuple((str(t), self._tok_span(t)) for t in c)

    @v_args(meta=True)
    def simple_type(self, meta, c):
        return A.TypeExpr(self._span(meta), str(c[0]))

    @v_args(meta=True)
    def generic_type(self, meta, c):
        return A.TypeExpr(self._span(meta), str(c[0]), c[1])

    # --- statements
    @v_args(meta=True)
    def block(self, meta, c):
        return A.Block(self._span(meta), tuple(c))

    @v_args(meta=True)
    def let_stmt(self, meta, c):
        return A.Let(self._span(meta), str(c[0]), c[1])

    @v_args(meta=True)
    def assign_stmt(self, meta, c):
        return A.Assign(self._span(meta), c[0], str(c[1].children[0]), c[2])

    @v_args(meta=True)
    def if_stmt(self, meta, c):
        branches = [(c[0], c[1])]
        else_ = None
        for item in c[2:]:
            if isinstance(item, tuple):
                branches.append(item)
            elif item is not None:
                else_ = item
        return A.If(self._span(meta), tuple(branches), else_)

    def elif_clause(self, c):
        return (c[0], c[1])

    @v_args(meta=True)
    def for_stmt(self, meta, c):
        return A.For(self._span(meta), str(c[0]), c[1], c[2])

    @v_args(meta=True)
    def simultaneous_stmt(self, meta, c):
        return A.For(self._span(meta), str(c[0]), c[1], c[2], True)

    @v_args(meta=True)
    def while_stmt(self, meta, c):
        return A.While(self._span(meta), c[0], c[1])

    @v_args(meta=True)
    def repeat_stmt(self, meta, c):
        return A.Repeat(self._span(meta), c[0], c[1])

    @v_args(meta=True)
    def loop_stmt(self, meta, c):
        return A.Loop(self._span(meta), c[0])

    @v_args(meta=True)
    def break_stmt(self, meta, c):
        return A.Break(self._span(meta))

    @v_args(meta=True)
    def continue_stmt(self, meta, c):
        return A.Continue(self._span(meta))

    @v_args(meta=True)
    def return_stmt(self, meta, c):
        return A.Return(self._span(meta), c[0])

    @v_args(meta=True)
    def emit_stmt(self, meta, c):
        args = c[1] if c[1] is not None else ((), ())
        return A.Emit(self._span(meta), str(c[0]), args[0])

    @v_args(meta=True)
    def expr_stmt(self, meta, c):
        return A.ExprStmt(self._span(meta), c[0])

    # --- expressions
    @v_args(meta=True)
    def lambda_expr(self, meta, c):
        return A.Lambda(self._span(meta), str(c[0]), c[1])

    @v_args(meta=True)
    def if_expr(self, meta, c):
        return A.IfExpr(self._span(meta), c[0], c[1], c[2])

    @v_args(meta=True)
    def or_op(self, meta, c):
        return A.Binary(self._span(meta), "or", c[0], c[1])

    @v_args(meta=True)
    def and_op(self, meta, c):
        return A.Binary(self._span(meta), "and", c[0], c[1])

    @v_args(meta=True)
    def not_op(self, meta, c):
        return A.Unary(self._span(meta), "not", c[0])

    @v_args(meta=True)
    def compare(self, meta, c):
        return A.Binary(self._span(meta), c[1], c[0], c[2])

    def comp_op(self, c):
        return " ".join(str(t) for t in c)

    def add_op(self, c):
        return str(c[0])

    def mul_op(self, c):
        return str(c[0])

    @v_args(meta=True)
    def range_op(self, meta, c):
        return A.Binary(self._span(meta), "..", c[0], c[1])

    @v_args(meta=True)
    def binary(self, meta, c):
        return A.Binary(self._span(meta), c[1], c[0], c[2])

    @v_args(meta=True)
    def neg(self, meta, c):
        return A.Unary(self._span(meta), "-", c[0])

    @v_args(meta=True)
    def attr(self, meta, c):
        return A.Attr(self._span(meta), c[0], str(c[1]))

    @v_args(meta=True)
    def call(self, meta, c):
        args, kwargs = c[1] if c[1] is not None else ((), ())
        return A.Call(self._span(meta), c[0], args, kwargs)

    def args(self, c):
        positional = tuple(a for a in c if not isinstance(a, A.Keyword))
        keywords = tuple(a for a in c if isinstance(a, A.Keyword))
        return positional, keywords

    @v_args(meta=True)
    def kwarg(self, meta, c):
        return A.Keyword(self._span(meta), str(c[0]), c[1])

    @v_args(meta=True)
    def index(self, meta, c):
        return A.Index(self._span(meta), c[0], c[1])

    @v_args(meta=True)
    def int_lit(self, meta, c):
        return A.IntLit(self._span(meta), int(c[0]))

    @v_args(meta=True)
    def str_lit(self, meta, c):
        return A.StrLit(self._span(meta), parse_string(c[0], self.path, self.errors))

    @v_args(meta=True)
    def true_lit(self, meta, c):
        return A.BoolLit(self._span(meta), True)

    @v_args(meta=True)
    def false_lit(self, meta, c):
        return A.BoolLit(self._span(meta), False)

    @v_args(meta=True)
    def none_lit(self, meta, c):
        return A.NoneLit(self._span(meta))

    @v_args(meta=True)
    def name(self, meta, c):
        return A.Name(self._span(meta), str(c[0]))

    @v_args(meta=True)
    def tuple_lit(self, meta, c):
        return A.TupleLit(self._span(meta), tuple(x for x in c if x is not None))

    @v_args(meta=True)
    def list_lit(self, meta, c):
        return A.ListLit(self._span(meta), tuple(x for x in c if x is not None))

    @v_args(meta=True)
    def comprehension(self, meta, c):
        return A.Comprehension(self._span(meta), c[0], str(c[1]), c[2], c[3])


_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "{": "{", "}": "}"}


def parse_string(tok: Token, path: str, errors: list) -> tuple:
    """Unescape a string token and split out its `{expr}` interpolations, parsed in place."""
    raw = str(tok)[1:-1]
    parts: list = []
    buf: list[str] = []
    i = 0
    while i < len(raw):
        ch = raw[i]
        if ch == "\\" and i + 1 < len(raw):
            buf.append(_ESCAPES.get(raw[i + 1], raw[i + 1]))
            i += 2
            continue
        if ch == "{":
            end = raw.find("}", i)
            if end < 0:
                errors.append(Diagnostic("E104", "unclosed `{` in a string", Span(
                    path, tok.line, tok.column + 1 + i, tok.line, tok.column + 2 + i),
                    "write `\\{` for a literal brace"))
                break
            if buf:
                parts.append("".join(buf))
                buf = []
            inner = raw[i + 1:end].replace('\\"', '"')   # `"{join(xs, \", \")}"`
            # Pad so that Lark reports the embedded expression's real line and column.
            padded = "\n" * (tok.line - 1) + " " * (tok.column + i) + inner
            try:
                tree = _lark().parse(padded, start="expr")
                parts.append(_Builder(path, errors).transform(tree))
            except UnexpectedInput as exc:
                errors.append(_syntax_diagnostic(exc, path))
            i = end + 1
            continue
        buf.append(ch)
        i += 1
    if buf or not parts:
        parts.append("".join(buf))
    return tuple(parts)


def _eof(expected, path: str, line: int, col: int) -> Diagnostic:
    if "RBRACE" in expected:
        return Diagnostic("E103", "unexpected end of file: a block is not closed with `}`",
                          Span(path, max(line, 1), max(col, 1)), "add the missing `}`")
    return Diagnostic("E103", f"unexpected end of file; expected {describe_expected(expected)}",
                      Span(path, max(line, 1), max(col, 1)))


def _syntax_diagnostic(exc: UnexpectedInput, path: str) -> Diagnostic:
    line, col = getattr(exc, "line", 1) or 1, getattr(exc, "column", 1) or 1
    if isinstance(exc, UnexpectedCharacters):
        ch = exc.char if hasattr(exc, "char") else "?"
        return Diagnostic("E101", f"unexpected character `{ch}`", Span(path, line, col, line, col + 1),
                          "strings use double quotes; comments start with `#`" if ch in "'/" else None)
    if isinstance(exc, UnexpectedEOF):
        return _eof(exc.expected, path, line, col)
    assert isinstance(exc, UnexpectedToken)
    tok = exc.token
    if tok.type == "$END":
        return _eof(exc.expected, path, line, col)
    hint = None
    if str(tok) in KEYWORDS and "NAME" in exc.expected:
        hint = f"`{tok}` is a keyword of the rules language and cannot be used as a name"
    elif str(tok) == "=" and any(e in exc.expected for e in ("__ANON_0",)):
        hint = "compare with `==`"
    elif tok.type == "EQUAL" and "LBRACE" in exc.expected:
        hint = "did you mean `==`?"
    end_col = (tok.end_column or col + 1)
    return Diagnostic("E102", f"unexpected {describe_token(tok)}; expected {describe_expected(exc.expected)}",
                      Span(path, line, col, tok.end_line or line, end_col), hint)


def _dedupe_cascade(errors: list[Diagnostic]) -> list[Diagnostic]:
    """After a syntax error the parser skips tokens; errors right after it are usually echoes."""
    kept: list[Diagnostic] = []
    for d in errors:
        if kept and d.span.line <= kept[-1].span.line + 2:
            continue
        kept.append(d)
    return kept


def parse_rules(text: str, path: str) -> A.RulesFile:
    """Parse one rules file; raises DiagnosticError with every syntax error found."""
    errors: list[Diagnostic] = []

    def on_error(exc: UnexpectedInput) -> bool:
        errors.append(_syntax_diagnostic(exc, path))
        # Resume after the bad token; stop after a few to avoid a cascade of echoes.
        return len(errors) < 5

    try:
        tree = _lark().parse(text, start="start", on_error=on_error)
    except UnexpectedInput as exc:
        if not errors or (errors[-1].span.line, errors[-1].span.col) != (exc.line, exc.column):
            errors.append(_syntax_diagnostic(exc, path))
        raise DiagnosticError(_dedupe_cascade(errors)) from None
    if errors:
        raise DiagnosticError(_dedupe_cascade(errors))
    result = _Builder(path, errors).transform(tree)
    if errors:
        raise DiagnosticError(errors)
    return result


def parse_expression(text: str, path: str, line: int = 1, col: int = 1) -> A.Expr:
    """Parse a single expression (used for scenario expectations and YAML snippets)."""
    errors: list[Diagnostic] = []
    padded = "\n" * (line - 1) + " " * (col - 1) + text
    try:
        tree = _lark().parse(padded, start="expr")
    except UnexpectedInput as exc:
        raise DiagnosticError([_syntax_diagnostic(exc, path)]) from None
    result = _Builder(path, errors).transform(tree)
    if errors:
        raise DiagnosticError(errors)
    return result


def parse_block_snippet(text: str, path: str, line: int = 2, col: int = 1) -> A.Block:
    """Parse statements given in a YAML value (an inline card ability) as a block.

    `line`/`col` are where the snippet starts in its YAML file; the text is wrapped in an
    ability declaration placed on the line above so that spans point into the YAML file.
    """
    wrapper = "ability __snippet__ {"
    source = "\n" * max(line - 2, 0) + wrapper + ("\n" if line >= 2 else "") \
        + " " * (col - 1) + text + "\n}"
    rules = parse_rules(source, path)
    return rules.decls[0].body


_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def is_identifier(text: str) -> bool:
    return bool(_IDENT.match(text)) and text not in KEYWORDS
