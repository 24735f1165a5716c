"""YAML loading with line marks (pipeline step: game files -> plain data + positions).

Game, card-set, variant and scenario files are YAML. PyYAML's safe composer gives us the
node tree with positions; we turn it into plain Python data and keep a `Marks` table from
each value's path (("cards", 3, "number")) to where it stands in the file, so that schema
and checker errors point at the right line and column. Duplicate keys, tabs, oversized
files and alias bombs are reported as diagnostics instead of being silently accepted.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import yaml

from .diagnostics import Diagnostic, DiagnosticError, Span

MAX_BYTES = 8 * 1024 * 1024
MAX_NODES = 200_000
MAX_DEPTH = 64


@dataclass
class Marks:
    """Positions of the values (and mapping keys) of one YAML document."""
    file: str
    values: dict = field(default_factory=dict)   # path tuple -> Span of the value
    keys: dict = field(default_factory=dict)     # path tuple -> Span of the key naming it

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


def _yaml_error(exc: yaml.YAMLError, file: str) -> Diagnostic:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
    problem = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    message = f"invalid YAML: {problem}" + (f" ({context})" if context else "")
    hint = None
    if "tab" in problem:
        hint = "YAML indents with spaces, not tabs"
    elif "mapping values are not allowed" in problem:
        hint = "a value containing `: ` must be quoted"
    elif "could not find expected ':'" in problem or "expected <block end>" in problem:
        hint = "check the indentation of this line and the one above"
    return Diagnostic("E001", message, Span(file, line, col, line, col + 1), hint)


def load_yaml_text(text: str, file: str) -> tuple[object, Marks]:
    """Parse YAML text into plain data and marks; raises DiagnosticError."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        raise DiagnosticError([Diagnostic("E004", f"file is larger than {MAX_BYTES // (1024 * 1024)} MiB",
                                          Span(file, 1, 1))])
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        raise DiagnosticError([_yaml_error(exc, file)]) from None
    except RecursionError:
        raise DiagnosticError([Diagnostic("E003", "YAML nests too deeply", Span(file, 1, 1))]) from None
    marks = Marks(file)
    errors: list[Diagnostic] = []
    budget = [MAX_NODES]
    if root is None:
        return None, marks
    data = _convert(root, (), marks, errors, budget, 0)
    if errors:
        raise DiagnosticError(errors)
    return data, marks


def load_yaml_file(path: str, display: str | None = None) -> tuple[object, Marks, str]:
    """Read and parse a YAML file; returns (data, marks, text)."""
    display = display or path
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_BYTES + 1)
    except FileNotFoundError:
        raise DiagnosticError([Diagnostic("E005", f"file not found: {display}", Span(display, 0, 0))]) from None
    except IsADirectoryError:
        raise DiagnosticError([Diagnostic("E005", f"is a directory, not a file: {display}", Span(display, 0, 0))]) from None
    except OSError as exc:
        raise DiagnosticError([Diagnostic("E005", f"cannot read {display}: {exc.strerror}", Span(display, 0, 0))]) from None
    text = decode_text(raw, display)
    data, marks = load_yaml_text(text, display)
    return data, marks, text


def decode_text(raw: bytes, display: str) -> str:
    """Bytes of a designer's file -> text, with clear errors for binary or non-UTF-8 files."""
    if len(raw) > MAX_BYTES:
        raise DiagnosticError([Diagnostic("E004", f"file is larger than {MAX_BYTES // (1024 * 1024)} MiB",
                                          Span(display, 1, 1))])
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


def _convert(node, path, marks: Marks, errors, budget, depth):
    budget[0] -= 1
    if budget[0] < 0:
        if budget[0] == -1:
            errors.append(Diagnostic("E003", f"YAML document expands to more than {MAX_NODES} values "
                                     "(an alias bomb?)", _span(marks.file, node)))
        return None
    if depth > MAX_DEPTH:
        errors.append(Diagnostic("E003", f"YAML nests deeper than {MAX_DEPTH} levels", _span(marks.file, node)))
        return None
    marks.values[path] = _span(marks.file, node)
    if isinstance(node, yaml.MappingNode):
        out = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                errors.append(Diagnostic("E003", "YAML merge keys (`<<`) are not supported",
                                         _span(marks.file, key_node)))
                continue
            key = _convert(key_node, path + ("<key>",), marks, errors, budget, depth + 1)
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
            out[key] = _convert(value_node, path + (key,), marks, errors, budget, depth + 1)
        marks.values.pop(path + ("<key>",), None)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_convert(item, path + (i,), marks, errors, budget, depth + 1)
                for i, item in enumerate(node.value)]
    constructor = yaml.SafeLoader.yaml_constructors.get(node.tag)
    if constructor is None or node.tag in ("tag:yaml.org,2002:binary", "tag:yaml.org,2002:timestamp"):
        if node.tag.startswith("tag:yaml.org,2002:") and node.tag.endswith(("str", "timestamp")):
            return node.value
        errors.append(Diagnostic("E003", f"unsupported YAML tag `{node.tag}`", _span(marks.file, node)))
        return None
    try:
        return constructor(yaml.SafeLoader(""), node)
    except (yaml.YAMLError, ValueError) as exc:
        errors.append(Diagnostic("E003", f"invalid YAML value: {exc}", _span(marks.file, node)))
        return None


def scalar_origin(text: str, span: Span) -> tuple[int, int, int]:
    """Where a scalar's content starts in its file: (line, column, block indent or 0).

    For a plain or quoted scalar that is its own position (after the quote); for a block
    scalar (`|` or `>`) it is the first content line, at that line's indentation, which
    is also the indentation YAML removed from every line.
    """
    lines = text.splitlines()
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
