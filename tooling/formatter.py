"""Formatter: rules source text -> the same rules, laid out canonically (`rulesvm fmt`).

A tool over the front end: it parses with `rulesvm.dsl` and never runs a game. The layout
is printed from the AST (dsl.ast), so there is one style whatever the input
looked like: one declaration or statement per line, blocks opened on the header's line
and indented by 2 spaces, one space around binary operators (none around `..`), and long
lines wrapped at `WIDTH` columns by a small Wadler/prettier-style document printer (calls,
lists and modifiers fill each line and continue aligned under their first item; `and`,
`or`, `+` ... chains break before the operator).

Comments are not in the AST. They are recovered from the source text by position: a
comment alone on its line goes before the first declaration or statement that starts
below it (at that line's indentation); a comment after code stays at the end of the line
that holds the end of that code. A comment inside a construct that is laid out anew (in
the middle of a wrapped call, say) moves onto its own line just above the statement.
Runs of consecutive one-line statements with end-of-line comments get their comments
aligned. Blank lines between items are kept (several become one); none are kept right
after `{` or right before `}`.

Strings are copied byte for byte from the source (interpolations included), and
`format_text` checks its own output before returning it: the output must parse to an
equal AST (`ast.ast_equal`), hold the same comments in the same order and the same names,
numbers and strings. Otherwise it raises `FormatError` and the caller keeps the file as
it was.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass, field

from rulesvm.dsl import ast as A
from rulesvm.dsl.diagnostics import DiagnosticError
from rulesvm.dsl.parser import comment_start, parse_rules
from rulesvm.dsl.reading import MAX_RULES_BYTES, read_bytes
from rulesvm.dsl.yaml_loader import file_size, too_large

WIDTH = 100
INDENT = "  "


class FormatError(Exception):
    """The formatter could not produce a safe result (a bug in the formatter, not in the file)."""


# ============================================================================ the document printer

@dataclass(frozen=True)
class Line:
    """A place where the printer may break the line: a space (or nothing, if soft) when flat."""
    soft: bool = False


LINE = Line()


@dataclass(frozen=True)
class Group:
    doc: object


@dataclass(frozen=True)
class Nest:
    n: int
    doc: object


@dataclass(frozen=True)
class Align:
    """Continuation lines inside start at the column where this document starts."""
    doc: object


@dataclass(frozen=True)
class Fill:
    """Content, separator, content, ...: as many contents on each line as fit."""
    parts: tuple


_FLAT, _BREAK = 0, 1


def _fits(next_cmd, rest: list, width: int, must_be_flat: bool) -> bool:
    if width < 0:
        return False
    cmds = [next_cmd]
    rest_idx = len(rest)
    while width >= 0:
        if not cmds:
            if must_be_flat or rest_idx == 0:
                return True
            rest_idx -= 1
            cmds.append(rest[rest_idx])
            continue
        ind, mode, doc = cmds.pop()
        if isinstance(doc, str):
            width -= len(doc)
        elif isinstance(doc, list):
            cmds.extend((ind, mode, d) for d in reversed(doc))
        elif isinstance(doc, (Nest, Align)):
            cmds.append((ind, mode, doc.doc))
        elif isinstance(doc, Group):
            cmds.append((ind, mode, doc.doc))
        elif isinstance(doc, Fill):
            cmds.extend((ind, mode, d) for d in reversed(doc.parts))
        elif isinstance(doc, Line):
            if mode == _BREAK:
                return True
            if not doc.soft:
                width -= 1
    return False


def render_doc(doc, width: int = WIDTH, indent: int = 0) -> str:
    """Lay `doc` out starting at column `indent` (continuation lines too are indented so)."""
    out: list[str] = []
    pos = indent
    stack = [(indent, _BREAK, doc)]
    while stack:
        ind, mode, d = stack.pop()
        if isinstance(d, str):
            out.append(d)
            pos += len(d)
        elif isinstance(d, list):
            stack.extend((ind, mode, x) for x in reversed(d))
        elif isinstance(d, Nest):
            stack.append((ind + d.n, mode, d.doc))
        elif isinstance(d, Align):
            stack.append((pos, mode, d.doc))
        elif isinstance(d, Group):
            flat = (ind, _FLAT, d.doc)
            if mode == _FLAT or _fits(flat, stack, width - pos, False):
                stack.append(flat)
            else:
                stack.append((ind, _BREAK, d.doc))
        elif isinstance(d, Line):
            if mode == _FLAT:
                if not d.soft:
                    out.append(" ")
                    pos += 1
            else:
                out.append("\n" + " " * ind)
                pos = ind
        elif isinstance(d, Fill):
            parts = d.parts
            if not parts:
                continue
            rem = width - pos
            content = parts[0]
            c_flat, c_break = (ind, _FLAT, content), (ind, _BREAK, content)
            # The last content must also leave room for what follows the fill (`)`, `,` ...).
            c_fits = _fits(c_flat, stack, rem, False) if len(parts) == 1 else _fits(c_flat, [], rem, True)
            if len(parts) == 1:
                stack.append(c_flat if c_fits else c_break)
                continue
            sep = parts[1]
            s_flat, s_break = (ind, _FLAT, sep), (ind, _BREAK, sep)
            if len(parts) == 2:
                stack.extend([s_flat, c_flat] if c_fits else [s_break, c_break])
                continue
            remaining = (ind, mode, Fill(parts[2:]))
            pair = (ind, _FLAT, [content, sep, parts[2]])
            if _fits(pair, stack, rem, False) if len(parts) == 3 else _fits(pair, [], rem, True):
                stack.extend([remaining, s_flat, c_flat])
            elif c_fits:
                stack.extend([remaining, s_break, c_flat])
            else:
                stack.extend([remaining, s_break, c_break])
        else:  # pragma: no cover - a bug in this module
            raise TypeError(f"not a document: {d!r}")
    return "\n".join(line.rstrip() for line in "".join(out).split("\n"))


def flat(doc) -> str:
    """The document on one line."""
    return render_doc(Group(doc), width=10**9)


# ============================================================================ expressions

_COMPARE = {"==", "!=", "<", "<=", ">", ">=", "in", "not in"}


def precedence(e) -> int:
    """Binding strength, as in grammar.lark: lambda/if 0, or 1, and 2, not 3, comparisons 4,
    `..` 5, + - 6, * / % 7, unary - 8, postfix 9, atoms 10."""
    if isinstance(e, (A.Lambda, A.IfExpr)):
        return 0
    if isinstance(e, A.Binary):
        if e.op == "or":
            return 1
        if e.op == "and":
            return 2
        if e.op in _COMPARE:
            return 4
        if e.op == "..":
            return 5
        if e.op in ("+", "-"):
            return 6
        return 7
    if isinstance(e, A.Unary):
        return 3 if e.op == "not" else 8
    if isinstance(e, (A.Attr, A.Call, A.Index)):
        return 9
    return 10


def _bracket(open_: str, items: list, close: str):
    if not items:
        return open_ + close
    parts: list = []
    for i, item in enumerate(items):
        if i < len(items) - 1:
            parts += [[item, ","], LINE]
        else:
            parts.append([item, close])
    return Group([open_, Align(Fill(tuple(parts)))])


class _Exprs:
    """Expression -> document. Strings are copied from the source text."""

    def __init__(self, source_lines: list[str]):
        self.lines = source_lines

    def sub(self, e, min_prec: int):
        d = self.expr(e)
        if precedence(e) < min_prec:
            return Group(["(", Align(d), ")"])
        return d

    def expr(self, e):
        m = getattr(self, "_" + type(e).__name__)
        return m(e)

    def _IntLit(self, e):
        return str(e.value)

    def _StrLit(self, e):
        s = e.span
        if s.line and s.line == s.end_line and s.line <= len(self.lines):
            text = self.lines[s.line - 1][s.col - 1:s.end_col - 1]
            if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
                return text
        raise FormatError(f"{s}: cannot find the text of a string in the source")

    def _BoolLit(self, e):
        return "true" if e.value else "false"

    def _NoneLit(self, e):
        return "none"

    def _Name(self, e):
        return e.id

    def _Attr(self, e):
        return [self.sub(e.obj, 9), ".", e.name]

    def _Index(self, e):
        return [self.sub(e.obj, 9), "[", Align(self.expr(e.index)), "]"]

    def _Keyword(self, e):
        return [e.name, ": ", self.expr(e.value)]

    def _Call(self, e):
        items = [self.expr(a) for a in e.args] + [self._Keyword(k) for k in e.kwargs]
        return [self.sub(e.func, 9), _bracket("(", items, ")")]

    def _Unary(self, e):
        if e.op == "not":
            return ["not ", self.sub(e.operand, 3)]
        return ["-", self.sub(e.operand, 8)]

    def _Binary(self, e):
        level = precedence(e)
        if level in (4, 5):     # non-associative: comparisons and ranges
            left, right = self.sub(e.left, level + 1), self.sub(e.right, level + 1)
            if e.op == "..":
                return [left, "..", right]
            return Group(Align([left, LINE, e.op, " ", right]))
        # Left-associative chains (a + b - c, x and y and z) break before each operator.
        chain = []
        node = e
        while isinstance(node, A.Binary) and precedence(node) == level:
            chain.append((node.op, node.right))
            node = node.left
        parts: list = [self.sub(node, level)]
        for op, right in reversed(chain):
            parts += [LINE, [op, " ", self.sub(right, level + 1)]]
        return Group(Align(Fill(tuple(parts))))

    def _ListLit(self, e):
        return _bracket("[", [self.expr(x) for x in e.items], "]")

    def _TupleLit(self, e):
        if len(e.items) == 1:
            return ["(", self.expr(e.items[0]), ",)"]
        return _bracket("(", [self.expr(x) for x in e.items], ")")

    def _Comprehension(self, e):
        parts: list = [self.expr(e.elem), LINE, ["for ", e.var, " in ", self.sub(e.iterable, 1)]]
        if e.cond is not None:
            parts += [LINE, ["if ", self.sub(e.cond, 1)]]
        parts[-1] = [parts[-1], "]"]
        return Group(["[", Align(Fill(tuple(parts)))])

    def _Lambda(self, e):
        return [e.param, " => ", self.expr(e.body)]

    def _IfExpr(self, e):
        parts: list = [Group(["if ", self.sub(e.cond, 1), LINE, "then ", self.sub(e.then, 1)])]
        node = e.else_
        while isinstance(node, A.IfExpr):       # else if ... then ... else ...
            parts += [LINE, Group(["else if ", self.sub(node.cond, 1), LINE, "then ", self.sub(node.then, 1)])]
            node = node.else_
        parts += [LINE, "else ", self.expr(node)]
        return Group(Align(parts))


# ============================================================================ comments

@dataclass(frozen=True)
class Comment:
    line: int
    text: str
    own_line: bool      # nothing but spaces before it on its line


def find_comments(text: str) -> list[Comment]:
    """Every `#` comment of a rules source, outside strings (strings never span lines)."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        k = comment_start(line)
        if k is not None:
            out.append(Comment(n, line[k:].rstrip(), not line[:k].strip()))
    return out


# ============================================================================ layout

@dataclass
class _LogicalLine:
    indent: int
    doc: object
    start: int               # the source lines its code came from
    end: int
    opens: bool = False      # ends with `{`
    closes: bool = False     # starts with `}`
    simple: bool = True      # a one-line declaration or statement (its comment may be aligned)
    blank: bool = False      # a blank line precedes it in the source
    before: list = field(default_factory=list)   # (comment text, blank line before it)
    trailing: str | None = None


_STARTS_EXPR = re.compile(r"^(\(|\[|-|not\b)")
_SIMPLE = (A.Let, A.Assign, A.ExprStmt, A.Return, A.Emit, A.Break, A.Continue)


class _Layout:
    def __init__(self, text: str, tree: A.RulesFile, width: int):
        self.src = text.splitlines()
        self.tree = tree
        self.width = width
        self.x = _Exprs(self.src)
        self.lines: list[_LogicalLine] = []
        self.comments = find_comments(text)

    # ------------------------------------------------------------------ helpers
    def emit(self, indent: int, doc, start: int, end: int, **kw) -> _LogicalLine:
        ll = _LogicalLine(indent, doc, start, end, **kw)
        self.lines.append(ll)
        return ll

    def e(self, expr):
        return self.x.expr(expr)

    def params(self, params) -> object:
        return _bracket("(", [f"{p.name}: {p.type}" for p in params], ")")

    def _comment_lines(self, start: int, end: int) -> set[int]:
        return {c.line for c in self.comments if start <= c.line <= end}

    # ------------------------------------------------------------------ declarations
    def run(self) -> str:
        for d in self.tree.decls:
            getattr(self, "_" + type(d).__name__)(d)
        return self.assemble()

    def _KindDecl(self, d):
        fields = [self._field(f) for f in d.fields]
        one = ["kind ", d.name, " {}"] if not fields else \
            ["kind ", d.name, " { ", _join(fields, "; "), " }"]
        inside = {c.line for c in self.comments if d.span.line <= c.line < d.span.end_line}
        if not inside and len(flat(one)) <= self.width:
            self.emit(0, one, d.span.line, d.span.end_line)
            return
        self.emit(0, ["kind ", d.name, " {"], d.span.line, d.span.line, opens=True, simple=False)
        for i, (f, doc) in enumerate(zip(d.fields, fields)):
            # `;` between fields, as on one line: a field named like a keyword needs it.
            self.emit(1, [doc, ";"] if i + 1 < len(fields) else doc, f.span.line, f.span.end_line)
        self.emit(0, "}", d.span.end_line, d.span.end_line, closes=True, simple=False)

    def _field(self, f):
        doc = [f.name, ": ", str(f.type)]
        if f.default is not None:
            doc += [" = ", self.e(f.default)]
        return doc

    def _modifier(self, m):
        if not m.args:
            return m.name
        return [m.name, _bracket("(", [self.e(a) for a in m.args], ")")]

    def _ZoneDecl(self, d):
        if not d.modifiers:
            self.emit(0, ["zone ", d.name], d.span.line, d.span.end_line)
            return
        mods = [self._modifier(m) for m in d.modifiers]
        items = [["zone ", d.name, ": ", mods[0]]] + mods[1:]
        self.emit(0, Nest(4, Fill(tuple(_fill_parts(items)))), d.span.line, d.span.end_line)

    def _var_like(self, keyword: str, d):
        first = [keyword, " ", d.name, ": ", str(d.type), " = ", self.e(d.default)]
        items = [first] + [self._modifier(m) for m in d.modifiers]
        self.emit(0, Nest(4, Fill(tuple(_fill_parts(items)))), d.span.line, d.span.end_line)

    def _VarDecl(self, d):
        self._var_like("var", d)

    def _OptionDecl(self, d):
        self._var_like("option", d)

    def _EventDecl(self, d):
        self.emit(0, ["event ", d.name, self.params(d.params)], d.span.line, d.span.end_line)

    def _ProcDecl(self, d):
        if d.kind in ("setup", "game"):
            head = [d.kind]
        elif d.kind == "ability":
            head = ["ability ", d.name]
        else:
            head = [d.kind, " ", d.name, self.params(d.params)]
            if d.returns is not None:
                head += [" -> ", str(d.returns)]
        self.block(0, head, d.span.line, d.body)

    def _FuncDecl(self, d):
        doc = Group(["func ", d.name, self.params(d.params), " -> ", str(d.returns), " =",
                     Nest(2, [LINE, self.e(d.body)])])
        self.emit(0, doc, d.span.line, d.span.end_line)

    def _TriggerDecl(self, d):
        head: list = ["on ", d.event, _bracket("(", [n for n, _ in d.names], ")")]
        if d.label is not None:
            head += [" as ", d.label]
        if d.cond is not None:
            head += [" when ", Align(self.e(d.cond))]
        self.block(0, head, d.span.line, d.body)

    # ------------------------------------------------------------------ statements
    def block(self, indent: int, head, start: int, body: A.Block) -> None:
        """A header line ending in `{`, the statements, and the closing `}` (or, for a block
        that was written on one line and still fits, all on that line)."""
        if self.one_line_block(indent, head, start, body):
            return
        self.emit(indent, Group([head, " {"]), start, body.span.line, opens=True, simple=False)
        self.stmts(indent + 1, body.stmts)
        self.emit(indent, "}", body.span.end_line, body.span.end_line, closes=True, simple=False)

    def one_line_block(self, indent: int, head, start: int, body: A.Block) -> bool:
        """`if n == 0 { break }` stays on one line if it was written so: one simple statement
        (or none), no comment inside, and it fits."""
        if body.span.line != body.span.end_line or len(body.stmts) > 1:
            return False
        if self._comment_lines(start, body.span.end_line - 1):     # (one after `}` is no matter)
            return False
        if body.stmts:
            s = body.stmts[0]
            if not isinstance(s, _SIMPLE):
                return False
            doc = [head, " { ", getattr(self, "_" + type(s).__name__)(s), " }"]
        else:
            doc = [head, " {}"]
        if len(INDENT) * indent + len(flat(doc)) > self.width:
            return False
        self.emit(indent, Group(doc), start, body.span.end_line, simple=False)
        return True

    def stmts(self, indent: int, stmts) -> None:
        for i, s in enumerate(stmts):
            first = len(self.lines)
            self.stmt(indent, s)
            if i + 1 < len(stmts) and self._needs_semicolon(s, stmts[i + 1], indent):
                ll = self.lines[first]
                ll.doc = [ll.doc, ";"]

    def _needs_semicolon(self, prev, nxt, indent: int) -> bool:
        """Newlines do not end statements: keep `;` where the next statement would otherwise
        continue this one (`x = a` then `(b, c)` would read as the call `a(b, c)`)."""
        if isinstance(prev, A.Return) and prev.value is None:
            return True
        if not isinstance(prev, (A.Let, A.Assign, A.ExprStmt, A.Return)):
            return False
        saved, self.lines = self.lines, []
        try:
            self.stmt(indent, nxt)
            first = self.lines[0].doc
        finally:
            self.lines = saved
        return bool(_STARTS_EXPR.match(flat(first)))

    def stmt(self, ind: int, s) -> None:
        name = type(s).__name__
        if isinstance(s, A.If):
            cond, body = s.branches[0]
            head = ["if ", Align(self.e(cond))]
            if len(s.branches) == 1 and s.else_ is None and self.one_line_block(ind, head, s.span.line, body):
                return
            self.emit(ind, Group([head, " {"]), s.span.line, body.span.line, opens=True, simple=False)
            self.stmts(ind + 1, body.stmts)
            prev = body
            for cond, body in s.branches[1:]:
                self.emit(ind, Group(["} elif ", Align(self.e(cond)), " {"]), prev.span.end_line,
                          body.span.line, opens=True, closes=True, simple=False)
                self.stmts(ind + 1, body.stmts)
                prev = body
            if s.else_ is not None:
                self.emit(ind, "} else {", prev.span.end_line, s.else_.span.line, opens=True, closes=True,
                          simple=False)
                self.stmts(ind + 1, s.else_.stmts)
                prev = s.else_
            self.emit(ind, "}", prev.span.end_line, prev.span.end_line, closes=True, simple=False)
        elif isinstance(s, A.For):
            kw = "simultaneous for " if s.simultaneous else "for "
            self.block(ind, [kw, s.var, " in ", Align(self.e(s.iterable))], s.span.line, s.body)
        elif isinstance(s, A.While):
            self.block(ind, ["while ", Align(self.e(s.cond))], s.span.line, s.body)
        elif isinstance(s, A.Repeat):
            self.block(ind, ["repeat ", Align(self.e(s.count))], s.span.line, s.body)
        elif isinstance(s, A.Loop):
            self.block(ind, "loop", s.span.line, s.body)
        else:
            self.emit(ind, getattr(self, "_" + name)(s), s.span.line, s.span.end_line)

    def _Let(self, s):
        return ["let ", s.name, " = ", self.e(s.value)]

    def _Assign(self, s):
        return [self.x.sub(s.target, 9), " ", s.op, " ", self.e(s.value)]

    def _ExprStmt(self, s):
        doc = self.e(s.expr)
        if isinstance(s.expr, (A.IfExpr, A.Lambda)):   # `if` here would start an if statement
            doc = ["(", Align(doc), ")"]
        return doc

    def _Return(self, s):
        return "return" if s.value is None else ["return ", self.e(s.value)]

    def _Emit(self, s):
        return ["emit ", s.event, _bracket("(", [self.e(a) for a in s.args], ")")]

    def _Break(self, s):
        return "break"

    def _Continue(self, s):
        return "continue"

    # ------------------------------------------------------------------ comments and text
    def place_comments(self) -> list:
        """Attach each comment to a logical line; returns the comments left for the end."""
        tail = []
        lines = self.lines
        prev_end = 0
        for ll in lines:
            # A blank source line right above it, below the code before it.
            ll.blank = ll.start - 1 > prev_end and not self.src[ll.start - 2].strip()
            prev_end = max(prev_end, ll.end)
        hoisted: dict[int, list] = {}
        for c in self.comments:
            blank = c.line >= 2 and not self.src[c.line - 2].strip()
            if not c.own_line:
                ends = [ll for ll in lines if ll.end == c.line]
                if ends:
                    # A block written on one line and now laid out on several keeps its
                    # note on the header line: `ability x { ... }  # note`.
                    opening = [ll for ll in ends if ll.opens]
                    whole = opening and any(ll.closes for ll in ends)
                    (opening[0] if whole else ends[-1]).trailing = c.text
                    continue
                inside = [ll for ll in lines if ll.start <= c.line < ll.end]
            else:
                inside = [ll for ll in lines if ll.start < c.line < ll.end]
            if inside:                      # in the middle of a construct laid out anew
                hoisted.setdefault(id(inside[0]), []).append(c.text)
                continue
            after = [ll for ll in lines if ll.start > c.line]
            if after:
                after[0].before.append((c.text, blank))
            else:
                tail.append((c.text, blank))
        for ll in lines:
            moved = hoisted.get(id(ll))
            if moved:
                # Comments moved up out of the construct go right above it, taking its
                # blank line with them.
                ll.before += [(text, ll.blank and i == 0) for i, text in enumerate(moved)]
                ll.blank = False
        return tail

    def assemble(self) -> str:
        tail = self.place_comments()
        out: list[tuple[str, str | None, bool]] = []    # (code, trailing comment, alignable)
        after_open = True

        def blank_line(wanted: bool):
            if wanted and not after_open and out and out[-1][0] != "":
                out.append(("", None, False))

        for ll in self.lines:
            cindent = INDENT * (ll.indent + (1 if ll.closes else 0))
            for text, blank in ll.before:
                blank_line(blank)
                out.append((cindent + text, None, False))
                after_open = False
            if not ll.closes:
                blank_line(ll.blank)
            code = render_doc(ll.doc, self.width, len(INDENT) * ll.indent)
            phys = (INDENT * ll.indent + code).split("\n")
            for p in phys[:-1]:
                out.append((p, None, False))
            out.append((phys[-1], ll.trailing, ll.simple and len(phys) == 1))
            after_open = ll.opens
        for text, blank in tail:
            blank_line(blank)
            out.append((text, None, False))
            after_open = False
        return _align_comments(out)


def _join(docs: list, sep: str) -> list:
    out: list = []
    for i, d in enumerate(docs):
        if i:
            out.append(sep)
        out.append(d)
    return out


def _fill_parts(items: list) -> list:
    parts: list = []
    for i, item in enumerate(items):
        if i < len(items) - 1:
            parts += [[item, ","], LINE]
        else:
            parts.append(item)
    return parts


def _align_comments(out: list) -> str:
    """End-of-line comments of consecutive one-line items at one indentation share a column."""
    text: list[str] = []
    i = 0
    while i < len(out):
        code, comment, alignable = out[i]
        if comment is None:
            text.append(code)
            i += 1
            continue
        j = i + 1
        if alignable:
            indent = len(code) - len(code.lstrip())
            while j < len(out) and out[j][1] is not None and out[j][2] \
                    and len(out[j][0]) - len(out[j][0].lstrip()) == indent:
                j += 1
        col = max(len(out[k][0]) for k in range(i, j)) + 2
        for k in range(i, j):
            text.append(out[k][0].ljust(col) + out[k][1])
        i = j
    result = "\n".join(t.rstrip() for t in text).strip("\n")
    return result + "\n" if result else ""


# ============================================================================ the entry points

_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|[A-Za-z_][A-Za-z0-9_]*|[0-9]+|=>|==|!=|<=|>=|\+=|-=|\.\.|->|\S')


def significant_tokens(text: str) -> Counter:
    """Names, keywords, numbers, strings and operators of a source (not brackets, commas, `;`)."""
    lines = text.splitlines()
    for c in find_comments(text):
        line = lines[c.line - 1]
        lines[c.line - 1] = line[:len(line.rstrip()) - len(c.text)]
    out: Counter = Counter()
    for tok in _TOKEN.findall("\n".join(lines)):
        if tok in ("(", ")", ",", ";"):
            continue
        out[str(int(tok)) if tok.isdigit() else tok] += 1
    return out


def format_tree(text: str, tree: A.RulesFile, width: int = WIDTH) -> str:
    """Lay out a parsed file; `text` is the source it was parsed from (for comments, strings)."""
    return _Layout(text, tree, width).run()


def format_text(text: str, path: str = "<rules>", width: int = WIDTH) -> str:
    """The canonical layout of a rules source.

    Raises `DiagnosticError` if the source has syntax errors, `FormatError` if the result
    would not mean exactly the same (then nothing should be written).
    """
    tree = parse_rules(text, path)
    out = format_tree(text, tree, width)
    verify(text, tree, out, path)
    return out


def verify(text: str, tree: A.RulesFile, out: str, path: str) -> None:
    """Check that `out` keeps everything of `text`: the AST, the comments, every token."""
    try:
        new_tree = parse_rules(out, path)
    except DiagnosticError as exc:
        raise FormatError(f"the formatted text does not parse: {exc}") from None
    if not A.ast_equal(tree, new_tree):
        raise FormatError("the formatted text parses to different rules")
    if [c.text for c in find_comments(text)] != [c.text for c in find_comments(out)]:
        raise FormatError("the formatted text lost or reordered a comment")
    before, after = significant_tokens(text), significant_tokens(out)
    if before != after:
        lost = ", ".join(f"`{t}`" for t in sorted((before - after).elements()))
        raise FormatError("the formatted text would lose " + (lost or "nothing but would add tokens")
                          + " (the rules keep no trace of it)")


# ============================================================================ files

@dataclass
class FormattedFile:
    path: str
    original: str            # the text as read (line ends turned into "\n")
    formatted: str
    newline: str             # the file's line end, "\n" or "\r\n", kept when written back

    @property
    def changed(self) -> bool:
        return self.original != self.formatted


def read_source(path: str) -> tuple[str, str]:
    """A rules file's text and its line end. Raises DiagnosticError (E004) for a file larger than
    a rules file may be (docs/security.md), OSError (a FIFO or a device too, before any read),
    or ValueError if not UTF-8."""
    raw = read_bytes(path, MAX_RULES_BYTES)
    if len(raw) > MAX_RULES_BYTES:
        raise DiagnosticError([too_large(path, file_size(path, len(raw)), MAX_RULES_BYTES, "the rules file")])
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8 text (byte {exc.start})") from None
    newline = "\r\n" if "\r\n" in text else "\n"
    return text.replace("\r\n", "\n"), newline


def format_file(path: str, display: str | None = None, width: int = WIDTH) -> FormattedFile:
    """Read and format one rules file (nothing is written). Raises OSError, ValueError (not
    UTF-8), DiagnosticError (syntax errors) or FormatError."""
    text, newline = read_source(path)
    return FormattedFile(path, text, format_text(text, display or path, width), newline)


def write_atomically(path: str, text: str, newline: str = "\n") -> None:
    """Replace a file's content all at once: write a temporary file beside it, then rename it
    over the original (keeping its permissions), so an interruption never leaves half a file."""
    target = os.path.realpath(path)     # through a symbolic link, to the file it names
    folder = os.path.dirname(target)
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(target) + ".", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline=newline) as fh:
            fh.write(text)
        shutil.copymode(target, tmp)
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
