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
from lark.parsers.lalr_analysis import Shift

from . import ast as A
from .diagnostics import Diagnostic, DiagnosticError, Span
from .parts import joined, top_level_parts
from .remembered import remember, remembering
from .source_text import (DECLARATION_KEYWORDS, declaration_at, end_position, interpolation_end, strip_comment,
                          strip_comments, unclosed_opener, word_before)
from .source_text import comment_start  # noqa: F401 - read from here by the formatter

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


# How a token found where it does not belong is named in "unexpected ...": its category
# without an article, so the message reads "unexpected name `y`" (keywords as themselves).
_FOUND = {"NAME": "name", "INT": "number", "STRING": "text"}


def describe_token(token) -> str:
    if getattr(token, "type", None) == "$END":
        return "the end of the file"
    text = str(token)
    if token.type in _FOUND and text not in KEYWORDS:
        return f"{_FOUND[token.type]} `{text}`"
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


# Keywords that can never be names (declaration words such as `kind` or `zone` still can:
# `c.kind`, `func f(kind: text)`).
RESERVED_NAMES = {"let", "if", "elif", "else", "then", "for", "in", "while", "repeat", "loop", "break",
                  "continue", "return", "emit", "and", "or", "not", "true", "false", "none", "simultaneous",
                  "when", "as"}


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

    def _not_keyword(self, tok) -> None:
        """Where only a name or a value fits, the parser reads any word as a name (so that
        `c.kind` works); a statement or expression keyword there is a mistake."""
        if isinstance(tok, Token) and str(tok) in RESERVED_NAMES:
            self.errors.append(Diagnostic(
                "E102", f"unexpected keyword `{tok}` where a name or a value is expected", self._tok_span(tok),
                f"`{tok}` is a keyword and cannot be a name; if a line above is unfinished, complete it"))

    # --- top level
    @v_args(meta=True)
    def start(self, meta, children):
        return A.RulesFile(self._span(meta), self.path, tuple(children))

    @v_args(meta=True)
    def kind_decl(self, meta, c):
        self._not_keyword(c[0])
        return A.KindDecl(self._span(meta), str(c[0]), tuple(c[1:]))

    @v_args(meta=True)
    def field_decl(self, meta, c):
        return A.FieldDecl(self._span(meta), str(c[0]), c[1], c[2])

    @v_args(meta=True)
    def zone_decl(self, meta, c):
        self._not_keyword(c[0])
        mods = tuple(m for m in c[1:] if m is not None)
        return A.ZoneDecl(self._span(meta), str(c[0]), mods)

    @v_args(meta=True)
    def var_decl(self, meta, c):
        self._not_keyword(c[0])
        return A.VarDecl(self._span(meta), str(c[0]), c[1], c[2], tuple(c[3:]))

    @v_args(meta=True)
    def option_decl(self, meta, c):
        self._not_keyword(c[0])
        return A.OptionDecl(self._span(meta), str(c[0]), c[1], c[2], tuple(c[3:]))

    @v_args(meta=True)
    def modifier(self, meta, c):
        args = tuple(a for a in c[1:] if a is not None)
        return A.Modifier(self._span(meta), str(c[0]), args)

    @v_args(meta=True)
    def event_decl(self, meta, c):
        self._not_keyword(c[0])
        return A.EventDecl(self._span(meta), str(c[0]), tuple(c[1] or ()))

    @v_args(meta=True)
    def proc_decl(self, meta, c):
        self._not_keyword(c[0])
        return A.ProcDecl(self._span(meta), "proc", str(c[0]), tuple(c[1] or ()), c[2], c[3])

    @v_args(meta=True)
    def func_decl(self, meta, c):
        self._not_keyword(c[0])
        return A.FuncDecl(self._span(meta), str(c[0]), tuple(c[1] or ()), c[2], c[3])

    @v_args(meta=True)
    def ability_decl(self, meta, c):
        self._not_keyword(c[0])
        return A.ProcDecl(self._span(meta), "ability", str(c[0]), (), None, c[1])

    @v_args(meta=True)
    def phase_decl(self, meta, c):
        self._not_keyword(c[0])
        return A.ProcDecl(self._span(meta), "phase", str(c[0]), tuple(c[1] or ()), None, c[2])

    @v_args(meta=True)
    def trigger_decl(self, meta, c):
        self._not_keyword(c[2])
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
        self._not_keyword(c[0])
        return A.Param(self._span(meta), str(c[0]), c[1])

    def names(self, c):
        for t in c:
            self._not_keyword(t)
        return tuple((str(t), self._tok_span(t)) for t in c)

    @v_args(meta=True)
    def simple_type(self, meta, c):
        return A.TypeExpr(self._span(meta), str(c[0]))

    @v_args(meta=True)
    def generic_type(self, meta, c):
        return A.TypeExpr(self._span(meta), str(c[0]), tuple(c[1:]))

    # --- statements
    @v_args(meta=True)
    def block(self, meta, c):
        return A.Block(self._span(meta), tuple(c))

    @v_args(meta=True)
    def let_stmt(self, meta, c):
        self._not_keyword(c[0])
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
        self._not_keyword(c[0])
        return A.For(self._span(meta), str(c[0]), c[1], c[2])

    @v_args(meta=True)
    def simultaneous_stmt(self, meta, c):
        self._not_keyword(c[0])
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
        self._not_keyword(c[0])
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
        digits = str(c[0])
        if len(digits) > MAX_INT_DIGITS:
            # Python would refuse (over 4,300 digits) or compute slowly with it; no game needs it.
            self.errors.append(Diagnostic("E106", f"an integer of {len(digits):,} digits: numbers in rules have at "
                                          f"most {MAX_INT_DIGITS} digits", self._span(meta),
                                          "a number this large is a mistake (or an attempt to slow rulesvm down)"))
            return A.IntLit(self._span(meta), 0)
        return A.IntLit(self._span(meta), int(digits))

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
        self._not_keyword(c[0])
        return A.Name(self._span(meta), str(c[0]))

    @v_args(meta=True)
    def tuple_lit(self, meta, c):
        return A.TupleLit(self._span(meta), tuple(x for x in c if x is not None))

    @v_args(meta=True)
    def list_lit(self, meta, c):
        return A.ListLit(self._span(meta), tuple(x for x in c if x is not None))

    @v_args(meta=True)
    def comprehension(self, meta, c):
        self._not_keyword(c[1])
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
            end = interpolation_end(raw, i)
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
            padded = "\n" * (tok.line - 1) + " " * (tok.column + i + 1) + inner
            try:
                tree = _lark().parse(padded, start="expr")
                parts.append(_Builder(path, errors).transform(tree))
            except UnexpectedInput as exc:
                errors.append(_syntax_diagnostic(exc, path, padded))
            i = end + 1
            continue
        buf.append(ch)
        i += 1
    if buf or not parts:
        parts.append("".join(buf))
    return tuple(parts)


def _eof(expected, path: str, line: int, col: int, text: str | None = None) -> Diagnostic:
    if "RBRACE" in expected:
        notes = ()
        opener = unclosed_opener(text) if text is not None else None
        if opener is not None:
            (oline, ocol), closer = opener
            message = (f"this block's `}}` seems to be missing (the `}}` on line {closer} is indented like "
                       "an outer block)") if closer else "this block is not closed"
            notes = ((message, Span(path, oline, ocol, oline, ocol + 1)),)
        return Diagnostic("E103", "unexpected end of file: a block is not closed with `}`",
                          Span(path, max(line, 1), max(col, 1)), "add the missing `}`", notes=notes)
    return Diagnostic("E103", f"unexpected end of file; expected {describe_expected(expected)}",
                      Span(path, max(line, 1), max(col, 1)))


def _syntax_diagnostic(exc: UnexpectedInput, path: str, text: str | None = None) -> Diagnostic:
    line, col = getattr(exc, "line", 1), getattr(exc, "column", 1)
    if not isinstance(line, int) or line < 1 or not isinstance(col, int) or col < 1:
        # Lark knows no position (an empty text): the error is where the text ends.
        line, col = end_position(text) if text is not None else (1, 1)
    if isinstance(exc, UnexpectedCharacters):
        ch = exc.char if hasattr(exc, "char") else "?"
        if ch == '"':
            return Diagnostic("E101", "a string is not closed: `\"` has no matching `\"` on its line",
                              Span(path, line, col, line, col + 1),
                              "close the string on the same line; write `\\n` for a line break")
        shown = ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii")
        return Diagnostic("E101", f"unexpected character `{shown}`", Span(path, line, col, line, col + 1),
                          "strings use double quotes; comments start with `#`" if ch in "'/" else
                          "names use letters A-Z, digits and `_`" if ch.isalpha() else None)
    if isinstance(exc, UnexpectedEOF):
        return _eof(exc.expected, path, line, col, text)
    assert isinstance(exc, UnexpectedToken)
    tok = exc.token
    if tok.type == "$END":
        if text is not None and not strip_comments(text).strip():
            line, col = end_position(text)      # nothing but blanks: where the text ends
        return _eof(exc.expected, path, line, col, text)     # else at the last token of the text
    hint = None
    if str(tok) in KEYWORDS and "NAME" in exc.expected:
        hint = f"`{tok}` is a keyword of the rules language and cannot be used as a name"
    elif str(tok) == "=" and any(e in exc.expected for e in ("__ANON_0",)):
        hint = "compare with `==`"
    elif tok.type == "EQUAL" and "LBRACE" in exc.expected:
        hint = "did you mean `==`?"
    elif str(tok) == "elif" and any(_terminal_text().get(e) == "`else`" for e in exc.expected):
        hint = "in an expression write `else if`: `if a then x else if b then y else z` (`elif` belongs to " \
               "`if` statements)"
    elif text is not None and declaration_at(text, line) == "func" and \
            (str(tok) == "{" or word_before(text, line, col) == "let"):
        hint = "a `func` is one expression (`func f(x: int) -> int = x * 2`), without `let` or other statements; " \
               "for those write a procedure: `proc f(x: int) -> int { let y = x + 1; return y * 2 }`"
    end_col = (tok.end_column or col + 1)
    return Diagnostic("E102", f"unexpected {describe_token(tok)}; expected {describe_expected(exc.expected)}",
                      Span(path, line, col, tok.end_line or line, end_col), hint)


# ---------------------------------------------------------------- error recovery
#
# After a syntax error the parser resynchronises (panic mode, as yacc does): it skips to
# the next line that starts a declaration (at the file's outermost indentation) or a
# statement, drops the parser states back to one that accepts that keyword, and goes on.
# So each broken declaration of a file, and each broken statement of a block, is
# reported once, without the echoes that skipping token by token produces.

STATEMENT_KEYWORDS = ("let", "for", "while", "repeat", "loop", "return", "emit", "break", "continue",
                      "simultaneous")
MAX_SYNTAX_ERRORS = 50

# How deeply expressions and blocks may nest (levels of the parse tree). The passes after
# parsing recurse once per level or more, and Python's stack is finite: past this, E105.
# Rules written by hand stay far below it (the launch games: under 30).
MAX_NESTING = 200
# The most digits an integer literal may have (int64 holds 18): larger numbers are mistakes,
# and Python refuses to read more than 4,300 digits at all.
MAX_INT_DIGITS = 18


def _check_nesting(tree, path: str) -> None:
    """E105 at the first place (in reading order) where the parse tree is too deep; the
    walk is iterative, so a tree of any depth is measured safely."""
    stack = [(tree, 1)]
    too_deep, first = False, None
    while stack:
        node, depth = stack.pop()
        if depth > MAX_NESTING:
            too_deep = True
            meta = getattr(node, "meta", None)
            if meta is not None and not meta.empty and (first is None or (meta.line, meta.column) < first):
                first = (meta.line, meta.column)
            continue
        stack.extend((c, depth + 1) for c in getattr(node, "children", ()) if hasattr(c, "children"))
    if too_deep:
        line, col = first or (1, 1)
        raise DiagnosticError([Diagnostic(
            "E105", f"the rules nest too deeply here: more than {MAX_NESTING} levels of expressions and "
            "blocks (each operator of a long chain like `a + b + c ...` is a level too)", Span(path, line, col),
            hint="give parts of the expression names with `let`, or move them into a `func`")])


@functools.lru_cache(maxsize=1)
def _keyword_terminals() -> dict[str, str]:
    """Keyword text -> the name of its terminal (`let` -> LET)."""
    return {term.pattern.value: term.name for term in _lark().terminals
            if term.pattern.type == "str" and term.pattern.value.isidentifier()}


def _shifts(actions: dict, term) -> bool:
    """Does a parser state take this token as the start of something (not by reducing first)?
    A state that shifts `let` is one where a statement begins."""
    action = actions.get(term)
    return action is not None and action[0] is Shift


class _Recovery:
    def __init__(self, text: str, path: str):
        self.text = text
        self.path = path
        self.errors: list[Diagnostic] = []
        self.last_sync = -1
        codes = [ln for ln in text.split("\n") if strip_comment(ln).strip()]
        indent = min((len(ln) - len(ln.lstrip(" \t")) for ln in codes), default=0)
        decl = "|".join(DECLARATION_KEYWORDS)
        stmt = "|".join(STATEMENT_KEYWORDS)
        self.decl_re = re.compile(rf"^[ \t]{{{indent}}}({decl})(?![A-Za-z0-9_])", re.M)
        self.stmt_re = re.compile(rf"^[ \t]*(?:({stmt})(?![A-Za-z0-9_])|(if)(?![A-Za-z0-9_])[^\n#]*\{{[ \t]*(?:#[^\n]*)?$)",
                                  re.M)

    def _error_start(self, exc) -> int:
        tok = getattr(exc, "token", None)
        if tok is not None and getattr(tok, "start_pos", None) is not None and tok.type != "$END":
            return tok.start_pos
        pos = getattr(exc, "pos_in_stream", None)
        return pos if isinstance(pos, int) else len(self.text)

    def __call__(self, exc: UnexpectedInput) -> bool:
        if isinstance(exc, UnexpectedToken) and exc.token.type == "$END":
            return False                      # reported by parse_rules
        start = self._error_start(exc)
        diag = _syntax_diagnostic(exc, self.path, self.text)
        cut = self._cut_short(exc, start)
        if cut is not None:
            diag, start = cut
        if not self.errors or (self.errors[-1].span.line, self.errors[-1].span.col) != (diag.span.line, diag.span.col):
            self.errors.append(diag)
        if len(self.errors) >= MAX_SYNTAX_ERRORS:
            return False
        return self._resync(exc, start)

    def _cut_short(self, exc, start: int):
        """An error on a line that starts a new declaration: the one before it is not finished.

        (`func` read as a name inside the previous declaration, or `{` after `game` inside a
        block.) Reported where the previous declaration stops, saying what it still needs.
        """
        if not isinstance(exc, UnexpectedToken) or exc.token.type == "$END":
            return None
        line_start = self.text.rfind("\n", 0, start) + 1
        m = self.decl_re.match(self.text, line_start)
        if m is None or m.start(1) > start:
            return None
        word = m.group(1)
        keyword_at = m.start(1)
        if exc.token.start_pos != keyword_at and any(
                isinstance(v, Token) and v.start_pos == keyword_at and v.type == _keyword_terminals().get(word)
                for v in exc.interactive_parser.parser_state.value_stack):
            return None                 # the error is inside the declaration this line starts
        line, col = end_position(self.text[:line_start]) if line_start else (1, 1)
        here = self.text.count("\n", 0, line_start) + 1
        span = Span(self.path, line, col, line, col + 1)
        if "RBRACE" in exc.expected:
            return Diagnostic("E103", f"a block is not closed with `}}` before `{word}` on line {here} "
                              "starts a new declaration", span, f"add the missing `}}` before `{word}`"), m.start(1)
        return Diagnostic("E102", f"the declaration is not finished: expected {describe_expected(exc.expected)} "
                          f"before `{word}` on line {here} starts a new one", span), m.start(1)

    def _resync(self, exc, start: int) -> bool:
        ip = getattr(exc, "interactive_parser", None)
        if ip is None:
            return False
        ps = ip.parser_state
        states = ps.parse_conf.states
        terminals = _keyword_terminals()
        pos = max(start, self.last_sync + 1)          # always move forward
        line_start = self.text.rfind("\n", 0, pos) + 1
        found = [(m.start(1), 0, m.group(1)) for m in self.decl_re.finditer(self.text, line_start)]
        found += [(m.start(1) if m.group(1) else m.start(2), 1, m.group(1) or m.group(2))
                  for m in self.stmt_re.finditer(self.text, line_start)]
        for at, is_statement, word in sorted(found):
            if at < pos:
                continue
            if is_statement:
                # Back to the innermost block that can take this statement, if any.
                term = terminals.get(word)
                depth = next((k for k in range(len(ps.state_stack) - 1, 0, -1)
                              if _shifts(states[ps.state_stack[k]], term)
                              and _shifts(states[ps.state_stack[k]], "LET")), None)
                if depth is None:
                    continue
                del ps.state_stack[depth + 1:]
                del ps.value_stack[depth:]
            else:
                del ps.state_stack[1:]
                del ps.value_stack[:]
            self.last_sync = at
            self._move_lexer(ip, at)
            return True
        # Nothing to resume at: skip to the end of the file, at the top level.
        del ps.state_stack[1:]
        del ps.value_stack[:]
        self.last_sync = len(self.text)
        self._move_lexer(ip, len(self.text))
        return True

    def _move_lexer(self, ip, pos: int) -> None:
        lc = ip.lexer_thread.state.line_ctr
        lc.char_pos = pos
        lc.line = self.text.count("\n", 0, pos) + 1
        lc.line_start_pos = self.text.rfind("\n", 0, pos) + 1
        lc.column = pos - lc.line_start_pos + 1


def parse_rules_part(part: str, path: str, line: int) -> A.RulesFile:
    """The declarations of a part of a rules file starting on `line` (spans as in the whole file)."""
    return parse_whole_rules("\n" * (line - 1) + part, path)


def parse_rules(text: str, path: str) -> A.RulesFile:
    """Parse one rules file; raises DiagnosticError with every syntax error found.

    While parses are remembered (a language server checking as the designer types), the
    file is parsed declaration by declaration, so that only the declarations edited since
    the check before are parsed again; any syntax error, and the whole file is parsed, for
    the same diagnostics as `rulesvm validate`."""
    parts = top_level_parts(text, DECLARATION_KEYWORDS) if remembering() else None
    if parts is not None and len(parts) > 1:
        try:
            return joined(path, [parse_rules_part(part, path, line) for line, part in parts])
        except DiagnosticError:
            pass
    return parse_whole_rules(text, path)


@remember
def parse_whole_rules(text: str, path: str) -> A.RulesFile:
    """Parse one rules file at once; raises DiagnosticError with every syntax error found."""
    recovery = _Recovery(text, path)
    errors = recovery.errors
    try:
        tree = _lark().parse(text, start="start", on_error=recovery)
    except UnexpectedInput as exc:
        diag = _syntax_diagnostic(exc, path, text)
        if len(errors) < MAX_SYNTAX_ERRORS and \
                (not errors or (errors[-1].span.line, errors[-1].span.col) != (diag.span.line, diag.span.col)):
            errors.append(diag)
        raise DiagnosticError(errors) from None
    if errors:
        raise DiagnosticError(errors)
    _check_nesting(tree, path)
    result = _Builder(path, errors).transform(tree)
    if errors:
        raise DiagnosticError(errors)
    return result


@remember
def parse_expression(text: str, path: str, line: int = 1, col: int = 1) -> A.Expr:
    """Parse a single expression (used for scenario expectations and YAML snippets)."""
    errors: list[Diagnostic] = []
    padded = "\n" * (line - 1) + " " * (col - 1) + text
    try:
        tree = _lark().parse(padded, start="expr")
    except UnexpectedInput as exc:
        raise DiagnosticError([_syntax_diagnostic(exc, path, padded)]) from None
    _check_nesting(tree, path)
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
    body = " " * (col - 1) + text
    source = "\n" * max(line - 2, 0) + wrapper + ("\n" if line >= 2 else "") + body + "\n}"
    try:
        rules = parse_rules(source, path)
    except DiagnosticError as exc:
        # The closing `}` is ours, on the line after the snippet: an error there means the
        # snippet ends too early, and belongs at its end.
        end_line, end_col = end_position(source[:len(source) - 2])
        fixed = []
        for d in exc.diagnostics:
            if (d.span.line, d.span.col) > (end_line, end_col):
                expected = d.message.partition("; expected ")[2]
                d = Diagnostic("E103", "the rules text ends too early" + (f"; expected {expected}" if expected else ""),
                               Span(path, end_line, end_col, end_line, end_col + 1), d.hint)
            fixed.append(d)
        raise DiagnosticError(fixed) from None
    return rules.decls[0].body


_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def is_identifier(text: str) -> bool:
    return bool(_IDENT.match(text)) and text not in KEYWORDS
