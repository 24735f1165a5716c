"""YAML loading with line marks (pipeline step: game files -> plain data + positions).

Game, card-set, variant and scenario files are YAML. PyYAML's safe composer gives us the
node tree with positions; we turn it into plain Python data and keep a `Marks` table from
each value's path (("cards", 3, "number")) to where it stands in the file, so that schema
and checker errors point at the right line and column. Duplicate keys, tabs, oversized
files and alias bombs are reported as diagnostics instead of being silently accepted.
"""

from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass, field

import yaml

from .diagnostics import Diagnostic, DiagnosticError, Span, lines_of
from .reading import MAX_BYTES, MAX_YAML_BYTES, NotRegularFile, read_bytes
from .remembered import remember

# The most digits of an integer in a game file (as in the rules: dsl/parser.py).
MAX_INT_DIGITS = 18
# The most values (mappings, lists, keys and scalars) of one YAML document: written in the
# file (E004, counted while it is read) or expanded from aliases (E003, an alias bomb).
MAX_NODES = 200_000
MAX_DEPTH = 64
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass
class Marks:
    """Positions of the values (and mapping keys) of one YAML document."""
    file: str
    values: dict = field(default_factory=dict)   # path tuple -> Span of the value
    keys: dict = field(default_factory=dict)     # path tuple -> Span of the key naming it
    count: int = 0                               # values read, aliases expanded (a game's budget)

    def span(self, path, prefer_key: bool = False) -> Span:
        """The best position for a path: the value (or its key), else the nearest parent."""
        path = tuple(path)
        while True:
            if prefer_key and path in self.keys:
                return self.keys[path]
            if path in self.values:
                return self.values[path]
            if path in self.keys:
                return self.keys[path]
            if not path:
                return Span(self.file, 1, 1)
            path = path[:-1]


def _span(file: str, node) -> Span:
    start, end = node.start_mark, node.end_mark
    return Span(file, start.line + 1, start.column + 1, end.line + 1, end.column + 1)


def _yaml_error(exc: yaml.YAMLError, file: str, text: str = "") -> Diagnostic:
    problem_mark = getattr(exc, "problem_mark", None)
    context_mark = getattr(exc, "context_mark", None)
    mark = problem_mark or context_mark
    line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
    problem = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    notes = ()
    if isinstance(exc, yaml.reader.ReaderError):
        # A character YAML does not allow: PyYAML gives its index in the text.
        pos = exc.position if isinstance(exc.position, int) else 0
        line = text.count("\n", 0, pos) + 1
        col = pos - (text.rfind("\n", 0, pos) + 1) + 1
        ch = exc.character
        if isinstance(ch, str):
            ch = ord(ch)
        problem = f"the control character U+{ch:04X} is not allowed in YAML" if isinstance(ch, int) and not \
            isinstance(exc.name, bytes) else "a byte that is not text"
        context = None
    message = f"invalid YAML: {problem}" + (f" ({context})" if context else "")
    hint = None
    if "'\\t'" in problem or "\t" in problem:
        hint = "YAML indents with spaces, not tabs"
    elif "mapping values are not allowed" in problem:
        hint = "a value containing `: ` must be quoted"
    elif "could not find expected ':'" in problem and context_mark is not None:
        # The key that lacks its colon is where the scan began, not where it gave up.
        line, col = context_mark.line + 1, context_mark.column + 1
        hint = "a key needs `: ` (a colon and a space) after it"
    elif "could not find expected ':'" in problem or "expected <block end>" in problem:
        hint = "check the indentation of this line and the one above"
    if context and context.startswith("while parsing a flow") and context_mark is not None \
            and context_mark.line + 1 != line:
        opener = "{" if "mapping" in context else "["
        notes = ((f"the `{opener}` opened here is not closed", Span(file, context_mark.line + 1,
                                                                   context_mark.column + 1)),)
        hint = f"close the `{opener}` with `{'}' if opener == '{' else ']'}`"
    return Diagnostic("E001", message, Span(file, line, col, line, col + 1), hint, notes=notes)


def size_text(n: int) -> str:
    """A byte count as a designer reads it: 262144 -> "256 KiB", 1048576 -> "1 MiB"."""
    if n >= 1024 * 1024 and n % (512 * 1024) == 0:
        return f"{n / (1024 * 1024):g} MiB"
    return f"{n // 1024} KiB" if n % 1024 == 0 else f"{n:,} bytes"


def too_large(display: str, found: int, limit: int, what: str, span: Span | None = None,
              hint: str | None = None) -> Diagnostic:
    """The E004 error for a file (or the files of a game together) over a size cap: what was
    found, what is allowed; at the file's start unless `span` says where it is named."""
    return Diagnostic("E004", f"{what} is too large: {found:,} bytes, where at most {limit:,} "
                      f"({size_text(limit)}) are allowed", span or Span(display, 1, 1),
                      hint or "no game needs a file this large (the launch games' largest is 25 KB); the "
                      "limit keeps a stranger's game from exhausting time or memory (docs/security.md)")


def file_size(path: str, known: int) -> int:
    """The size of a file read only up to its cap, for the message (`known` if it is gone)."""
    try:
        return max(os.stat(path).st_size, known)
    except OSError:
        return known


@dataclass(frozen=True)
class ValueLimit:
    """How many more values a document may hold (aliases expanded), and the limit it is part of:
    the file's own (MAX_NODES), or what a game's files together may hold (dsl/files.py)."""
    left: int = MAX_NODES
    limit: int = MAX_NODES
    holder: str = "the YAML file holds"      # what the limit counts, for the message
    scope: str = "file"                      # or "game", "session" (dsl/files.py)


class TooManyValues(DiagnosticError):
    """A document past its ValueLimit (E004 for values written, E003 for aliases expanded)."""


class _CountingLoader(yaml.SafeLoader):
    """PyYAML's safe loader, counting the values it builds (an alias adds none): reading stops
    at the value past the limit, so a huge document is never built whole."""

    def __init__(self, stream, limit: int):
        super().__init__(stream)
        self.nodes = 0
        self.limit = limit

    def compose_node(self, parent, index):
        if not self.check_event(yaml.AliasEvent):
            self.nodes += 1
            if self.nodes > self.limit:
                raise _TooManyValues(self.peek_event().start_mark)
        return super().compose_node(parent, index)


class _TooManyValues(Exception):
    def __init__(self, mark):
        self.mark = mark


def _compose(text: str, limit: int):
    loader = _CountingLoader(text, limit)
    try:
        return loader.get_single_node()
    finally:
        loader.dispose()


@remember
def load_yaml_text(text: str, file: str, values: ValueLimit = ValueLimit()) -> tuple[object, Marks]:
    """Parse YAML text into plain data and marks; raises DiagnosticError (TooManyValues past
    `values`). While parses are remembered (dsl/remembered.py: a language server), a text read
    by the check before is not parsed again: the data and marks are never changed once made."""
    size = len(text) if len(text) * 4 <= MAX_YAML_BYTES else len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_YAML_BYTES:
        raise DiagnosticError([too_large(file, size, MAX_YAML_BYTES, "the YAML file")])
    try:
        root = _compose(text, values.left)
    except yaml.YAMLError as exc:
        raise DiagnosticError([_yaml_error(exc, file, text)]) from None
    except RecursionError:
        # PyYAML's composer recurses once per level: find where the nesting gets too deep.
        raise DiagnosticError([_too_deep(text, file)]) from None
    except _TooManyValues as stop:
        line, col = stop.mark.line + 1, stop.mark.column + 1
        raise TooManyValues([Diagnostic(
            "E004", f"{values.holder} more than {values.limit:,} values (each mapping, list, key and scalar "
            "counts one): the limit is crossed here", Span(file, line, col, line, col + 1),
            "no game needs this many (a card takes about ten); the limit keeps a stranger's game from "
            "exhausting time or memory (docs/security.md)")]) from None
    marks = Marks(file)
    errors: list[Diagnostic] = []
    budget = [values.left]
    if root is None:
        return None, marks
    try:
        data = _convert(root, (), marks, errors, budget, 0, values)
    except _Abort as stop:
        # Too big or too deep: one clear error; what follows would only be echoes of it. An
        # alias bomb is reported at the top-level entry whose expansion blew up (the node
        # being expanded then is usually a copy of one defined elsewhere).
        diag = stop.diagnostic
        if stop.path and stop.path[:1] in marks.values:
            diag = dataclasses.replace(diag, span=marks.values[stop.path[:1]])
        raise (TooManyValues if stop.too_many else DiagnosticError)([diag]) from None
    if errors:
        raise DiagnosticError(errors)
    marks.count = values.left - budget[0]
    return data, marks


class _Abort(Exception):
    def __init__(self, diagnostic: Diagnostic, path: tuple = (), too_many: bool = False):
        self.diagnostic = diagnostic
        self.path = path
        self.too_many = too_many


def _too_deep(text: str, file: str) -> Diagnostic:
    """The E003 error for a document nesting too deeply, at the first level past the limit."""
    depth = -1                  # the document's outermost collection is level 0, as in `_convert`
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > MAX_DEPTH:
                    return Diagnostic("E003", f"YAML nests deeper than {MAX_DEPTH} levels",
                                      _span(file, event))
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
    except (yaml.YAMLError, RecursionError):
        pass
    return Diagnostic("E003", f"YAML nests deeper than {MAX_DEPTH} levels", Span(file, 1, 1))


def read_file(path: str, display: str, span: Span | None = None, limit: int | None = None) -> bytes:
    """A file's bytes (at most `limit` + 1, MAX_BYTES by default); any reason it cannot be read
    is E005 at `span` (the file itself when None), for every kind of file rulesvm opens."""
    where = span or Span(display, 0, 0)
    try:
        return read_bytes(path, limit)
    except NotRegularFile as exc:
        problem = f"not a regular file ({exc}): {display}"
    except FileNotFoundError:
        problem = f"file not found: {display}"
    except IsADirectoryError:
        problem = f"is a directory, not a file: {display}"
    except OSError as exc:
        problem = f"cannot read {display}: {exc.strerror or exc}"
    except ValueError:              # a NUL character in the name: no file can have it
        shown = display.encode("unicode_escape").decode("ascii")
        problem, where = f"not a file name: {shown}", span or Span(shown, 0, 0)
    raise DiagnosticError([Diagnostic("E005", problem, where)])


def load_yaml_file(path: str, display: str | None = None, budget=None, span: Span | None = None
                   ) -> tuple[object, Marks, str]:
    """Read and parse a YAML file (at most MAX_YAML_BYTES); returns (data, marks, text).

    With a `budget` (a game's: dsl/files.py GameBudget), the file's size is charged before it
    is parsed and its values after, within what the budget has left (`span`: where the file
    is named)."""
    display = display or path
    raw = read_file(path, display, limit=MAX_YAML_BYTES)
    if len(raw) > MAX_YAML_BYTES:
        raise DiagnosticError([too_large(display, file_size(path, len(raw)), MAX_YAML_BYTES, "the YAML file")])
    if budget is not None:
        budget.charge_file(len(raw), display, span)
    text = decode_text(raw, display)
    values = ValueLimit() if budget is None else budget.value_limit()
    try:
        data, marks = load_yaml_text(text, display, values)
    except TooManyValues:
        if budget is not None:
            budget.values_exceeded(values)
        raise
    if budget is not None:
        budget.charge_values(marks.count)
    return data, marks, text


def decode_text(raw: bytes, display: str) -> str:
    """Bytes of a designer's file -> text, with clear errors for binary or non-UTF-8 files."""
    if len(raw) > MAX_BYTES:
        raise DiagnosticError([too_large(display, len(raw), MAX_BYTES, "the file")])
    if b"\x00" in raw:
        raise DiagnosticError([Diagnostic("E002", "this is a binary file, not a text file",
                                          Span(display, 1, 1))])
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise DiagnosticError([Diagnostic("E002", f"the file is not valid UTF-8 (byte 0x{raw[exc.start]:02x})",
                                          Span(display, line, col), "save the file as UTF-8")]) from None


# The only tags a mapping or a list may carry: YAML's own. Anything else (`!!python/...`,
# `!!set`, `!!omap`, a custom `!tag`) is refused rather than silently read as plain data.
_COLLECTION_TAGS = {yaml.MappingNode: "tag:yaml.org,2002:map", yaml.SequenceNode: "tag:yaml.org,2002:seq"}


def _tag_error(file: str, node) -> Diagnostic:
    tag = node.tag
    shown = "!!" + tag[len("tag:yaml.org,2002:"):] if tag.startswith("tag:yaml.org,2002:") else tag
    hint = "game files are plain data: rulesvm never builds objects or runs code from YAML" \
        if "python" in tag else "remove the tag; game files use plain mappings, lists, text, numbers and true/false"
    return Diagnostic("E003", f"unsupported YAML tag `{shown}`", _span(file, node), hint)


# What turns a scalar node into its value (int, float, bool, null): the safe constructors
# read only the node, so one serves every file (a loader made per scalar cost a third of
# the time of reading a file of 200,000 values).
_SCALARS = yaml.constructor.SafeConstructor()


def _convert(node, path, marks: Marks, errors, budget, depth, values: ValueLimit = ValueLimit()):
    budget[0] -= 1
    if budget[0] < 0:
        # The values written were counted while the file was read: only aliases, each
        # expanded where it is used, can take the document past the limit.
        message = f"the YAML document expands to more than {MAX_NODES:,} values through its aliases" \
            if values.scope == "file" else f"{values.holder} more than {values.limit:,} values once this file's aliases are expanded"
        raise _Abort(Diagnostic("E003", message + " (an alias bomb)", _span(marks.file, node),
                                "anchors (`&a`) and aliases (`*a`) may not multiply the document this much"), path, True)
    if depth > MAX_DEPTH:
        raise _Abort(Diagnostic("E003", f"YAML nests deeper than {MAX_DEPTH} levels", _span(marks.file, node)))
    marks.values[path] = _span(marks.file, node)
    expected_tag = _COLLECTION_TAGS.get(type(node))
    if expected_tag is not None and node.tag != expected_tag:
        errors.append(_tag_error(marks.file, node))
        return None
    if isinstance(node, yaml.MappingNode):
        out = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                errors.append(Diagnostic("E003", "YAML merge keys (`<<`) are not supported",
                                         _span(marks.file, key_node)))
                continue
            key = _convert(key_node, path + ("<key>",), marks, errors, budget, depth + 1, values)
            if not isinstance(key, (str, int, bool)) or key is None:
                errors.append(Diagnostic("E003", "mapping keys must be plain names", _span(marks.file, key_node)))
                continue
            if key in out:
                first = marks.keys.get(path + (key,))
                errors.append(Diagnostic("E006", f"duplicate key `{key}`", _span(marks.file, key_node),
                                         "each key may appear once in a mapping",
                                         notes=((f"`{key}` first appears here", first),) if first else ()))
                continue
            marks.keys[path + (key,)] = _span(marks.file, key_node)
            out[key] = _convert(value_node, path + (key,), marks, errors, budget, depth + 1, values)
        marks.values.pop(path + ("<key>",), None)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_convert(item, path + (i,), marks, errors, budget, depth + 1, values)
                for i, item in enumerate(node.value)]
    if _SURROGATE.search(node.value):
        # `"\ud800"` decodes to half a character, which no file or terminal can hold.
        errors.append(Diagnostic("E003", "invalid YAML text: a `\\u` escape names half of a character "
                                 "(a lone surrogate)", _span(marks.file, node),
                                 "write the character itself, or its full `\\U` escape"))
        return None
    constructor = yaml.SafeLoader.yaml_constructors.get(node.tag)
    if constructor is None or node.tag in ("tag:yaml.org,2002:binary", "tag:yaml.org,2002:timestamp"):
        if node.tag in ("tag:yaml.org,2002:str", "tag:yaml.org,2002:timestamp"):
            return node.value
        errors.append(_tag_error(marks.file, node))
        return None
    if node.tag == "tag:yaml.org,2002:int" and sum(ch.isdigit() for ch in node.value) > MAX_INT_DIGITS:
        errors.append(Diagnostic("E003", f"an integer of {sum(ch.isdigit() for ch in node.value):,} digits: "
                                 f"numbers in game files have at most {MAX_INT_DIGITS} digits",
                                 _span(marks.file, node), "a number this large is a mistake"))
        return None
    try:
        return constructor(_SCALARS, node)
    except (yaml.YAMLError, ValueError, TypeError, OverflowError) as exc:
        errors.append(Diagnostic("E003", f"invalid YAML value: {exc}", _span(marks.file, node)))
        return None


def scalar_origin(text: str, span: Span) -> tuple[int, int, int]:
    """Where a scalar's content starts in its file: (line, column, block indent or 0).

    For a plain or quoted scalar that is its own position (after the quote); for a block
    scalar (`|` or `>`) it is the first content line, at that line's indentation, which
    is also the indentation YAML removed from every line.
    """
    lines = lines_of(text)
    if not 1 <= span.line <= len(lines):
        return span.line, span.col, 0
    line = lines[span.line - 1]
    ch = line[span.col - 1:span.col] if span.col >= 1 else ""
    if ch in ("|", ">"):
        for k in range(span.line, len(lines)):
            content = lines[k]
            if content.strip():
                indent = len(content) - len(content.lstrip(" "))
                return k + 1, indent + 1, indent
        return span.line + 1, 1, 0
    if ch in ("'", '"'):
        return span.line, span.col + 1, 0
    return span.line, span.col, 0


def reindent(text: str, indent: int) -> str:
    """Put back the indentation a block scalar lost, so columns match the file."""
    if not indent:
        return text
    out = []
    for k, ln in enumerate(text.split("\n")):
        out.append(ln if k == 0 or not ln else " " * indent + ln)
    return "\n".join(out)
