"""Every name of a game and where it stands, across its files (lsp: the language server;
references, rename, workspace symbols, card hover and completion).

A game's names stand in its rules files (parsed here, the editor's texts first), in the
rules its YAML files hold (abilities, a variant's `rules:`: the parses the last check
made, dsl/remembered.py), in its YAML files' structure (lsp/yaml_names.py) and in the
scenarios that play it: the `*.scenario.yaml` files in the game file's folder and the
folders below (a few levels), and the open ones. Each file's names are worked out once
per text.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field

from rulesvm.dsl import ast as A
from rulesvm.dsl.diagnostics import DiagnosticError
from rulesvm.dsl.files import display_path
from rulesvm.dsl.parser import parse_rules

from .diagnostics import path_of_display
from .games import GameFiles, is_yaml
from .occurrences import ATTR, CARD, NAME, Occurrence, Symbol, occurrences_in
from .yaml_names import SCENARIO, CardEntry, yaml_names

SCENARIO_LEVELS = 3         # how deep below the game file's folder scenarios are looked for
_GAME_LINE = re.compile(r"^game:\s*['\"]?([^'\"#\n]+?)['\"]?\s*(?:#.*)?$", re.M)
GLOBAL = (NAME, ATTR, CARD)


@dataclass
class GameIndex:
    """Where each name of one game stands."""
    occurrences: list = field(default_factory=list)
    cards: dict = field(default_factory=dict)          # card id -> its first CardEntry
    files: list = field(default_factory=list)          # every file looked at (absolute)
    unparsed: list = field(default_factory=list)       # rules files whose text does not parse (their last parse used)

    def of(self, symbol: Symbol) -> list[Occurrence]:
        return [o for o in self.occurrences if o.symbol == symbol]

    def at(self, path: str, line: int, col: int) -> Occurrence | None:
        """The name standing at 1-based (line, col) of `path`, if any."""
        for o in self.occurrences:
            if o.path == path and o.line == line and o.col <= col <= o.end_col:
                return o
        return None

    def declarations(self, symbol: Symbol) -> list[Occurrence]:
        return [o for o in self.of(symbol) if o.declaration]

    def declared(self, space: str) -> dict:
        """name -> the kinds of its declarations, in one space."""
        out: dict = {}
        for o in self.occurrences:
            if o.declaration and o.symbol.space == space:
                out.setdefault(o.symbol.name, set()).add(o.kind)
        return out


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()


def _fields_of(trees: list) -> dict:
    """kind -> field -> the name of its type (`int`, `ability`, ...)."""
    out: dict = {}
    for tree in trees:
        for d in tree.decls:
            if isinstance(d, A.KindDecl):
                out.setdefault(d.name, {}).update((f.name, f.type.name) for f in d.fields)
    return out


def yaml_snippets(known: dict, parses: dict) -> dict:
    """`known` (YAML file -> [(text as parsed, tree)]) updated with the rules a check parsed
    in YAML files (`parses`: its remembered parses): a file the check read replaces its list."""
    found: dict = {}
    for key, tree in (parses or {}).items():
        shown = key[2] if len(key) > 2 and isinstance(key[2], str) else ""
        if not is_yaml(shown) or not isinstance(tree, (A.RulesFile, *A.Expr.__args__)):
            continue
        if key[0] == "parse_expression":        # (text, path, line, col), line and col given or not
            line, col = (*key[3:5], 1, 1)[:2]
            padded = "\n" * (line - 1) + " " * (col - 1) + key[1]
        else:
            padded = key[1]
        found.setdefault(path_of_display(shown), []).append((padded, tree))
    return {**known, **found}


def scenario_files(game: GameFiles, read, open_paths) -> list[str]:
    """The scenarios playing `game`: below the game file's folder, and the open ones."""
    found = set(p for p in open_paths if p.endswith(SCENARIO))
    top = os.path.dirname(game.game)
    for folder, dirs, names in os.walk(top):
        depth = os.path.relpath(folder, top).count(os.sep) + (folder != top)
        if depth >= SCENARIO_LEVELS:
            dirs[:] = []
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        found.update(os.path.join(folder, n) for n in names if n.endswith(SCENARIO))
    out = []
    for path in sorted(found):
        text = read(path) or ""
        named = _GAME_LINE.search(text)
        if named and os.path.normpath(os.path.join(os.path.dirname(path), named.group(1).strip())) == game.game:
            out.append(path)
    return out


class Indexer:
    """Builds a game's index, each file's names worked out once per text."""

    def __init__(self):
        self._trees: dict = {}      # rules file -> (digest, tree): its last text that parsed
        self._yaml: dict = {}       # (YAML file, digest, kinds and fields) -> (occurrences, cards)
        self._rules: dict = {}      # (rules file, digest) -> occurrences
        self._unparsed: set = set()  # rules files whose current text does not parse
        self._failed: dict = {}     # rules file -> digest of its last text that did not parse

    def tree(self, path: str, text: str):
        """The parse of a rules file (its last text that parsed), or None."""
        digest = _digest(text)
        known = self._trees.get(path)
        if known is not None and known[0] == digest:
            self._unparsed.discard(path)
            return known[1]
        if self._failed.get(path) != digest:
            try:
                tree = parse_rules(text, display_path(path))
            except DiagnosticError:
                self._failed[path] = digest
        if self._failed.get(path) == digest:
            self._unparsed.add(path)
            return known[1] if known is not None else None
        self._unparsed.discard(path)
        self._trees[path] = (digest, tree)
        return tree

    def rules_names(self, path: str, text: str) -> list[Occurrence]:
        """The names of one rules file."""
        key = (path, _digest(text))
        if key not in self._rules:
            tree = self.tree(path, text)
            self._rules = {k: v for k, v in self._rules.items() if k[0] != path}
            lines = text.splitlines()
            # A text that does not parse keeps its last parse: only the names still where they were.
            self._rules[key] = [o for o in (occurrences_in(tree, path, lines) if tree is not None else ())
                                if o.line <= len(lines) and lines[o.line - 1][o.col - 1:o.end_col - 1] == o.symbol.name]
        return self._rules[key]

    def index(self, game: GameFiles, read, snippets: dict, scenarios: list) -> GameIndex:
        """The index of `game`; `read(path)` gives a file's text, `snippets` the rules its YAML
        files hold (`yaml_snippets`), `scenarios` the scenario files playing it (`scenario_files`)."""
        rules = [p for p in dict.fromkeys([*game.rules, *game.variant_rules]) if p.endswith(".rules")]
        out = GameIndex()
        trees = []
        for path in rules:
            text = read(path)
            if text is None:
                continue
            out.files.append(path)
            out.occurrences.extend(self.rules_names(path, text))
            tree = self.tree(path, text)
            if tree is not None:
                trees.append(tree)
            if path in self._unparsed:
                out.unparsed.append(path)
        yaml_files = [game.game, *game.card_sets, *game.variants]
        for path in yaml_files:
            for padded, tree in snippets.get(path, ()):
                if isinstance(tree, A.RulesFile):
                    trees.append(tree)
                out.occurrences.extend(o for o in occurrences_in(tree, path, padded.splitlines())
                                       if not (o.declaration and o.symbol.name.startswith("__")))
        fields_of = _fields_of(trees)
        attr_vars = frozenset(o.symbol.name for o in out.occurrences
                              if o.declaration and o.kind == "var" and o.symbol.space == ATTR)
        signature = repr((sorted((k, sorted(v.items())) for k, v in fields_of.items()), sorted(attr_vars)))
        for path in [*yaml_files, *scenarios]:
            text = read(path)
            if text is None:
                continue
            out.files.append(path)
            key = (path, _digest(text), signature)
            if key not in self._yaml:
                self._yaml = {k: v for k, v in self._yaml.items() if k[0] != path}
                self._yaml[key] = yaml_names(path, text, fields_of, attr_vars)
            names, cards = self._yaml[key]
            out.occurrences.extend(names)
            for card in cards:
                out.cards.setdefault(card.id, card)
        return out


__all__ = ["CardEntry", "GameIndex", "Indexer", "GLOBAL"]
