"""Loading a game: YAML entry file + rules scripts + card data -> checked `GameModel`.

This is the front half of the pipeline in one call: read the game's YAML file (with line
marks), validate it against its JSON Schema, parse every `.rules` file it names, collect the
declarations, validate the card data (the game file's and every card set's) against the
card kinds the rules declare, check all rule bodies, and return the model or raise a
`DiagnosticError` carrying every problem found. Paths a game file names must stay inside
the game's folder tree.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field

from . import ast as A
from .checker import Checker, const_value, type_of_value
from .diagnostics import Diagnostic, DiagnosticError, Reporter, Span, did_you_mean
from .model import CardDef, GameModel
from .parser import parse_block_snippet, parse_rules
from .schema import CARD_SET_SCHEMA, GAME_SCHEMA, card_data_schema, validate
from .types import ABILITY, BOOL, INT, TEXT, assignable
from .yaml_loader import Marks, decode_text, load_yaml_file

DATA_FIELD_TYPES = {"int", "bool", "text", "ability", "list[int]", "list[text]", "list[bool]", "any"}
RESERVED_CARD_KEYS = {"id", "kind", "name", "text", "count", "image"}


@dataclass
class SourceSet:
    """Every file read while loading one game, for error rendering and fingerprints."""
    texts: dict = field(default_factory=dict)

    def add(self, path: str, text: str) -> None:
        self.texts[path] = text

    def fingerprint(self, extra: str = "") -> str:
        h = hashlib.sha256()
        for path in sorted(self.texts):
            h.update(os.path.basename(path).encode())
            h.update(self.texts[path].encode("utf-8", "surrogatepass"))
        h.update(extra.encode())
        return h.hexdigest()[:16]


def display_path(path: str) -> str:
    """A path as the designer would write it: relative to the working directory if inside it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def resolve_inside(base_dir: str, name: str, span: Span, what: str) -> str:
    """Resolve a path named in a game file; it may not leave the game's folder tree."""
    if os.path.isabs(name):
        raise DiagnosticError([Diagnostic("E007", f"{what} path must be relative to the game file: `{name}`", span)])
    root = os.path.realpath(base_dir)
    full = os.path.realpath(os.path.join(root, name))
    if os.path.commonpath([root, full]) != root:
        raise DiagnosticError([Diagnostic("E007", f"{what} `{name}` is outside the game's folder", span,
                                          "files a game uses must be in its folder or below it")])
    return full


def _localized(value) -> dict:
    if value is None:
        return {}
    if isinstance(value, str):
        return {"en": value}
    return dict(value)


def _read_text(path: str, display: str, span: Span) -> str:
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        raise DiagnosticError([Diagnostic("E005", f"file not found: {display}", span)]) from None
    except OSError as exc:
        raise DiagnosticError([Diagnostic("E005", f"cannot read {display}: {exc.strerror}", span)]) from None
    return decode_text(raw, display)


class GameLoader:
    """Builds one GameModel; `load()` collects diagnostics from every stage."""

    def __init__(self, game_path: str, card_sets: list[str] = (), extra_rules: list = ()):
        self.game_path = game_path
        self.display = display_path(game_path)
        self.base_dir = os.path.dirname(os.path.abspath(game_path))
        self.card_set_paths = list(card_sets)
        self.extra_rules = list(extra_rules)   # (RulesFile) added by variants
        self.reporter = Reporter()
        self.sources = SourceSet()
        self.checker = Checker(self.reporter)
        self.card_files: list[tuple[str, list, Marks]] = []

    # ---------------------------------------------------------------- stages
    def read_game_file(self) -> tuple[dict, Marks]:
        data, marks, text = load_yaml_file(self.game_path, self.display)
        self.sources.add(self.display, text)
        if not isinstance(data, dict):
            raise DiagnosticError([Diagnostic("E010", "a game file must be a YAML mapping with keys "
                                              "`id`, `name`, `players`, `rules` and `cards`", Span(self.display, 1, 1))])
        diags = validate(data, GAME_SCHEMA, marks)
        if diags:
            raise DiagnosticError(diags)
        return data, marks

    def parse_rules_files(self, data: dict, marks: Marks) -> list[A.RulesFile]:
        names = data["rules"] if isinstance(data["rules"], list) else [data["rules"]]
        files = []
        for i, name in enumerate(names):
            span = marks.span(("rules", i) if isinstance(data["rules"], list) else ("rules",))
            try:
                full = resolve_inside(self.base_dir, name, span, "rules file")
                display = display_path(full)
                text = _read_text(full, display, span)
                self.sources.add(display, text)
                files.append(parse_rules(text, display))
            except DiagnosticError as exc:
                self.reporter.extend(exc.diagnostics)
        return files

    def read_card_files(self, data: dict, marks: Marks) -> None:
        self.card_files.append((self.display, data.get("cards", []), marks))
        names = list(data.get("card_sets", []))
        spans = [marks.span(("card_sets", i)) for i in range(len(names))]
        for extra in self.card_set_paths:
            names.append(os.path.abspath(extra))
            spans.append(Span("<command line>", 0, 0))
        for name, span in zip(names, spans):
            try:
                if os.path.isabs(name):     # given on the command line: any path the user chose
                    full = name
                else:
                    full = resolve_inside(self.base_dir, name, span, "card set")
                display = display_path(full)
                cdata, cmarks, text = load_yaml_file(full, display)
                self.sources.add(display, text)
                if not isinstance(cdata, dict):
                    raise DiagnosticError([Diagnostic("E010", "a card set must be a YAML mapping with a `cards` list",
                                                      Span(display, 1, 1))])
                diags = validate(cdata, CARD_SET_SCHEMA, cmarks)
                if diags:
                    raise DiagnosticError(diags)
                self.card_files.append((display, cdata["cards"], cmarks))
            except DiagnosticError as exc:
                self.reporter.extend(exc.diagnostics)

    def check_kinds_for_data(self) -> dict:
        kinds = {}
        for kind in self.checker.kinds.values():
            fields = {}
            for f in kind.fields.values():
                if str(f.type) not in DATA_FIELD_TYPES:
                    self.reporter.error("E301", f"field `{f.name}` has type {f.type}, which card data cannot hold",
                                        f.span, "card fields are int, bool, text, ability or lists of int/text/bool")
                tname = f.type.name
                arg = f.type.elem.name if f.type.elem is not None else None
                fields[f.name] = (tname, arg, not f.has_default)
            kinds[kind.name] = fields
        return kinds

    def build_cards(self) -> list[CardDef]:
        checker = self.checker
        kinds_schema = self.check_kinds_for_data()
        schema = card_data_schema(kinds_schema) if kinds_schema else None
        cards: list[CardDef] = []
        seen: dict[str, Span] = {}
        for display, entries, marks in self.card_files:
            if schema is None:
                if entries:
                    self.reporter.error("E230", "the rules declare no card kinds, but the data lists cards",
                                        marks.span(("cards",)), "declare kinds with `kind name { field: type }`")
                continue
            diags = validate(entries, schema, marks, code="E231", path_prefix=("cards",))
            self.reporter.extend(diags)
            for i, entry in enumerate(entries):
                span = marks.span(("cards", i))
                if not isinstance(entry, dict) or entry.get("kind") not in checker.kinds:
                    if isinstance(entry, dict) and isinstance(entry.get("kind"), str) and \
                            entry["kind"] not in checker.kinds:
                        hint = did_you_mean(entry["kind"], checker.kinds) or \
                            "kinds declared in the rules: " + ", ".join(f"`{k}`" for k in sorted(checker.kinds))
                        self.reporter.error("E232", f"unknown card kind `{entry['kind']}`",
                                            marks.span(("cards", i, "kind")), hint)
                    continue
                cid = entry["id"]
                if cid in seen:
                    self.reporter.error("E233", f"duplicate card id `{cid}`", marks.span(("cards", i, "id")),
                                        "card ids must be unique across the game and its card sets",
                                        notes=((f"`{cid}` first defined here", seen[cid]),))
                    continue
                seen[cid] = marks.span(("cards", i, "id"))
                kind = checker.kinds[entry["kind"]]
                values = {}
                for fname, fdef in kind.fields.items():
                    if fname in entry:
                        value = entry[fname]
                        if fdef.type == ABILITY:
                            value = self._ability_ref(cid, fname, value, marks, ("cards", i, fname))
                        elif isinstance(value, list):
                            value = tuple(value)
                        values[fname] = value
                    else:
                        values[fname] = fdef.default
                cards.append(CardDef(cid, entry["kind"], _localized(entry.get("name")) or {"en": cid},
                                     values, int(entry.get("count", 1)), display, span))
        return cards

    def _ability_ref(self, cid: str, fname: str, value, marks: Marks, path) -> str | None:
        checker = self.checker
        if isinstance(value, str):
            proc = checker.procs.get(value)
            if proc is None or proc.kind not in ("ability", "snippet"):
                abilities = [p.name for p in checker.procs.values() if p.kind == "ability"]
                self.reporter.error("E234", f"unknown ability `{value}`", marks.span(path),
                                    did_you_mean(value, abilities) or
                                    "declare it with `ability name { ... }` or write `{rules: \"...\"}`")
                return None
            checker.calls_made.add(value)
            return value
        if isinstance(value, dict) and isinstance(value.get("rules"), str):
            name = f"{cid}.{fname}"
            span = marks.span(path + ("rules",))
            text, line, col = value["rules"], span.line, span.col
            if text.startswith(("\n",)) or "\n" in text.strip("\n"):
                # A block scalar: its content starts on the next line, indented.
                line, col = span.line + 1, span.col + 2
                text = "\n".join((" " * (col - 1) + ln if k else ln) for k, ln in enumerate(text.splitlines()))
            else:
                col = span.col + 1 if marks.file and self.sources.texts.get(marks.file, "") and \
                    self._quoted_at(marks.file, span) else span.col
            try:
                body = parse_block_snippet(text, marks.file, line, col)
            except DiagnosticError as exc:
                self.reporter.extend(exc.diagnostics)
                return None
            checker.add_snippet(name, body, span)
            return name
        return None

    def _quoted_at(self, file: str, span: Span) -> bool:
        lines = self.sources.texts[file].splitlines()
        if 1 <= span.line <= len(lines):
            line = lines[span.line - 1]
            return 0 < span.col <= len(line) and line[span.col - 1] in "\"'"
        return False

    # ---------------------------------------------------------------- the whole load
    def load(self) -> GameModel:
        data, marks = self.read_game_file()
        files = self.parse_rules_files(data, marks)
        if self.reporter.has_errors:
            raise DiagnosticError(self.reporter.diagnostics)
        files.extend(self.extra_rules)
        self.checker.collect(files)
        self.read_card_files(data, marks)
        cards = self.build_cards()
        self.checker.check()
        for kind in self.checker.kinds.values():
            if not any(c.kind == kind.name for c in cards):
                self.reporter.warning("W406", f"card kind `{kind.name}` has no cards in the data", kind.span)
        players = data["players"]
        if isinstance(players, int):
            players = (players, players, players)
        else:
            lo, hi = players["min"], players["max"]
            default = players.get("default", hi)
            if lo > hi or not lo <= default <= hi:
                self.reporter.error("E011", f"players: need min <= default <= max, found {lo}, {default}, {hi}",
                                    marks.span(("players",)))
            players = (lo, hi, default)
        if self.reporter.has_errors:
            raise DiagnosticError(self.reporter.diagnostics)
        checker = self.checker
        variants = {}
        for name, rel in data.get("variants", {}).items():
            variants[name] = rel
        model = GameModel(
            id=data["id"], name=_localized(data["name"]), description=_localized(data.get("description")),
            players=players, path=os.path.abspath(self.game_path), rules_files=[f.path for f in files],
            options=checker.options, kinds=checker.kinds, field_types=checker.field_types,
            zones=checker.zones, vars=checker.vars, events=checker.events, procs=checker.procs,
            funcs=checker.funcs, triggers=checker.triggers, cards=cards, resolution=checker.res,
            variants=variants, layout=data.get("layout", {}), max_steps=data.get("max_steps", 1_000_000),
            sources=self.sources.texts, fingerprint=self.sources.fingerprint())
        model.warnings = [d for d in self.reporter.diagnostics if not d.is_error]
        model.checker = checker
        return model


def load_game_model(path: str, card_sets: list[str] = (), extra_rules: list = ()) -> GameModel:
    """Load and check a game; raises DiagnosticError with every problem found."""
    return GameLoader(path, card_sets, extra_rules).load()


def option_value(model: GameModel, name: str, text: str):
    """Parse a `--set NAME=VALUE` value for an option; raises ValueError with a message."""
    opt = model.options.get(name)
    if opt is None:
        known = ", ".join(f"{o.name} ({o.type})" for o in model.options.values()) or "none"
        hint = did_you_mean(name, model.options)
        raise ValueError(f"unknown option `{name}`" + (f"; {hint}" if hint else "") + f". Options: {known}")
    if opt.type == INT:
        try:
            value = int(text)
        except ValueError:
            raise ValueError(f"option `{name}` is a whole number, not `{text}`") from None
    elif opt.type == BOOL:
        if text.lower() not in ("true", "false", "yes", "no", "1", "0"):
            raise ValueError(f"option `{name}` is true or false, not `{text}`")
        value = text.lower() in ("true", "yes", "1")
    elif opt.type == TEXT:
        value = text
    else:
        raise ValueError(f"option `{name}` has type {opt.type}, which cannot be set from the command line")
    if opt.range and not opt.range[0] <= value <= opt.range[1]:
        raise ValueError(f"option `{name}` must be between {opt.range[0]} and {opt.range[1]}, not {value}")
    if opt.choices and value not in opt.choices:
        raise ValueError(f"option `{name}` must be one of {', '.join(map(str, opt.choices))}, not `{value}`")
    return value


__all__ = ["GameLoader", "load_game_model", "option_value", "display_path", "resolve_inside",
           "SourceSet", "const_value", "type_of_value", "assignable", "TEXT"]
