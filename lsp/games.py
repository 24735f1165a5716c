"""Which game a file belongs to (lsp: the language server; one workspace per game).

A game is its YAML game file (a top-level `rules:` key) and the files it names: rules
files, card sets and variants (and the rules files its variants name). A rules file or card set knows its game through the game
file that names it, looked for in the file's folder and the folders above it; a variant
file also through its `base:`. The editor's unsaved texts are read instead of the files.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import yaml

# How many folders above a file its game file may be (`games/x/variants/v.yaml` -> `games/`).
MAX_LEVELS_UP = 3
MAX_HEAD = 1 << 20
# libyaml's parser where PyYAML has it: a game file is read only for the files it names.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass
class GameFiles:
    """A game file and the files it names (absolute paths)."""
    game: str
    rules: list = field(default_factory=list)
    card_sets: list = field(default_factory=list)
    variants: list = field(default_factory=list)
    variant_names: list = field(default_factory=list)   # as `rulesvm validate` checks them: sorted
    variant_rules: dict = field(default_factory=dict)   # a rules file a variant names -> that variant

    @property
    def all(self) -> list:
        return [self.game, *self.rules, *self.card_sets, *self.variants, *self.variant_rules]

    def variant_of(self, path: str) -> str | None:
        """The variant file to check `path` with: itself (a variant file), the variant naming it
        (a rules file of a variant), or None (a file of the game itself)."""
        if path in self.variant_rules:
            return self.variant_rules[path]
        return path if path in self.variants else None


def _text(path: str, texts: dict) -> str | None:
    if path in texts:
        return texts[path]
    try:
        if os.path.getsize(path) > MAX_HEAD:
            return None
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except (OSError, UnicodeDecodeError, ValueError):
        return None


def _data(path: str, texts: dict):
    text = _text(path, texts)
    if text is None:
        return None
    try:
        return yaml.load(text, Loader=_LOADER)
    except yaml.YAMLError:
        return None


def is_yaml(path: str) -> bool:
    return path.endswith((".yaml", ".yml"))


def read_game(path: str, texts: dict) -> GameFiles | None:
    """The files of the game whose game file is `path` (a top-level `rules:`, no `variant:`), or
    None if it is no game file."""
    text = _text(path, texts)
    if text is None or "\nrules:" not in "\n" + text:
        return None
    data = _data(path, texts)
    if isinstance(data, dict) and "variant" in data:
        return None                 # a variant file, which may change the rules too
    if not isinstance(data, dict) or "rules" not in data:
        return GameFiles(path)      # a game file too broken to read: checking it says why
    base = os.path.dirname(path)

    def paths(value) -> list:
        items = value if isinstance(value, list) else [value] if value else []
        return [os.path.normpath(os.path.join(base, v)) for v in items if isinstance(v, str)]
    variants = data.get("variants") if isinstance(data.get("variants"), dict) else {}
    game = GameFiles(path, paths(data.get("rules")), paths(data.get("card_sets")), paths(list(variants.values())),
                     sorted(variants))
    for variant in game.variants:
        vdata = _data(variant, texts)
        rules = vdata.get("rules") if isinstance(vdata, dict) else None
        for key, value in (rules.items() if isinstance(rules, dict) else ()):
            if str(key).endswith("_file") and isinstance(value, str):
                game.variant_rules.setdefault(os.path.normpath(os.path.join(os.path.dirname(variant), value)), variant)
    return game


def find_game(path: str, texts: dict) -> GameFiles | None:
    """The game `path` belongs to: itself if it is a game file; else the game file naming it
    (or naming a variant that names it) in its folder or the folders above; else (a variant)
    its `base:`."""
    path = os.path.abspath(path)
    if is_yaml(path):
        own = read_game(path, texts)
        if own is not None:
            return own
    real = os.path.realpath(path)
    folder = os.path.dirname(path)
    for _ in range(MAX_LEVELS_UP + 1):
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            names = []
        for name in names:
            candidate = os.path.join(folder, name)
            if not is_yaml(name) or name.endswith(".scenario.yaml") or candidate == path:
                continue
            game = read_game(candidate, texts)
            if game is not None and real in {os.path.realpath(p) for p in game.all}:
                return game
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    data = _data(path, texts) if is_yaml(path) else None
    if isinstance(data, dict) and isinstance(data.get("base"), str):
        return read_game(os.path.normpath(os.path.join(os.path.dirname(path), data["base"])), texts)
    return None


def game_files_in(folders, levels: int = 2) -> list[str]:
    """The game files in `folders` and the folders below them (`levels` deep)."""
    out = []
    for top in folders:
        for folder, dirs, names in os.walk(top):
            if os.path.relpath(folder, top).count(os.sep) + (folder != top) >= levels:
                dirs[:] = []
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(names):
                path = os.path.join(folder, name)
                if is_yaml(name) and not name.endswith(".scenario.yaml") and read_game(path, {}) is not None:
                    out.append(path)
    return out
