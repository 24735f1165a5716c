"""Where the names of a game stand in its YAML files (lsp: the language server; references,
rename, card hover and completion).

A card entry (a mapping with `id` and `kind`, in a game file, a card set or a variant's
`cards:`) declares its card id, names its kind and gives fields of that kind; a game
file's `hands:` names a zone and cards, its `layout:` zones, variables, kinds and fields, its
`kinds:` kinds, and a card text's `{field}` placeholders fields; a variant
names cards (`remove`, `change`), declarations (`rules: remove`) and options; a scenario
names zones and variables in its `setup`, cards in its zone lists and expectations, a
phase, options, and writes rules-language expressions (`expect`, `play_until`), parsed
here to find the names in them. The rules written in a YAML file otherwise (abilities,
a variant's `rules:`) come from the checker's parses (lsp/index.py).
"""

from __future__ import annotations

import dataclasses
import re
import textwrap
from dataclasses import dataclass

import yaml

from rulesvm.dsl.diagnostics import DiagnosticError
from rulesvm.dsl.parser import is_identifier, parse_expression
from rulesvm.dsl.widgets import bound_name

from .occurrences import ATTR, CARD, NAME, Occurrence, Symbol, occurrences_in

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
SCENARIO = ".scenario.yaml"
EXPRESSION_STEPS = ("expect", "play_until")
CARD_LISTS = ("cards", "contains")
ABILITY_TYPE = "ability"      # a field of this type names an ability declared in the rules
_PLACEHOLDER = re.compile(r"(?<!\{)\{([A-Za-z_][A-Za-z0-9_]*)\}")     # `{field}` in a card text


@dataclass(frozen=True)
class CardEntry:
    """A card's entry in a YAML file: where, and its text (for hover)."""
    id: str
    path: str
    line: int            # of its id value, 1-based
    col: int
    text: str            # the entry as written


def _scalar(node) -> str | None:
    return node.value if isinstance(node, yaml.ScalarNode) and isinstance(node.value, str) else None


def _where(node) -> tuple[int, int]:
    """(line, col), 1-based, of a scalar's first character (inside its quotes)."""
    quoted = node.style in ("'", '"')
    return node.start_mark.line + 1, node.start_mark.column + 1 + (1 if quoted else 0)


def _items(node) -> list:
    return list(node.value) if isinstance(node, yaml.MappingNode) else []


def _get(node, key: str):
    for k, v in _items(node):
        if _scalar(k) == key:
            return v
    return None


def _zone_name(key: str) -> str:
    """The zone of a zone key: `hand[1]` -> `hand`, `space(0,3)` -> `space`."""
    return re.split(r"[\[(]", key, 1)[0].strip()


def _source_columns(line: str, start: int, value: str, style) -> list[int]:
    """For each character of a quoted scalar's value, its 0-based column in the source line
    (an escape, `\\"` or `''`, is two characters of source for one of the value)."""
    out, at = [], start
    for ch in value:
        if style == '"' and line[at:at + 1] == "\\":
            out.append(at)
            at += 2
        elif style == "'" and line[at:at + 2] == "''":
            out.append(at)
            at += 2
        else:
            out.append(at)
            at += 1
    return out


class _Names:
    """The walk of one YAML file."""

    def __init__(self, path: str, text: str, fields_of: dict, attr_vars=frozenset()):
        # fields_of: kind -> field -> type name
        self.path = path
        self.lines = text.splitlines()
        self.fields_of = fields_of         # kind -> its field names
        self.attr_vars = attr_vars         # the per-player and per-card variables
        self.out: list[Occurrence] = []
        self.cards: list[CardEntry] = []

    def add(self, space: str, node, name: str | None = None, declaration: bool = False, kind: str = "") -> None:
        value = _scalar(node)
        if value is None:
            return
        name = value if name is None else name
        if name and value.startswith(name) and "\n" not in name:
            line, col = _where(node)
            self.out.append(Occurrence(Symbol(space, name), self.path, line, col, declaration, kind))

    def card(self, node) -> None:
        """A card named in a list (`id`, `id#2`, `{card: id, face: up}`) or by kind and fields
        (`{kind: knight, number: 3}`)."""
        value = _scalar(node)
        if value is not None:
            self.add(CARD, node, value.split("#", 1)[0].strip())
        elif _get(node, "card") is not None:          # `{card: ship_5, face: up}`
            self.card(_get(node, "card"))
        elif isinstance(node, yaml.MappingNode):
            self.entry(node, declares=False)

    def entry(self, node, declares: bool) -> None:
        """A card entry: its id, its kind, the fields of its kind it gives."""
        kind_node, id_node = _get(node, "kind"), _get(node, "id")
        kind = _scalar(kind_node)
        if id_node is not None:
            self.add(CARD, id_node, declaration=declares, kind="card" if declares else "")
            if declares and _scalar(id_node):
                line, col = _where(id_node)
                first, last = node.start_mark.line, node.end_mark.line
                rows = self.lines[first:last + (1 if node.end_mark.column else 0)]
                start = node.start_mark.column            # after the list's `- `
                rows[:1] = [" " * start + rows[0][start:]] if rows else []
                while rows and rows[-1].lstrip()[:1] in ("", "#"):     # what follows the last entry
                    rows.pop()
                text = textwrap.dedent("\n".join(rows)).rstrip()
                self.cards.append(CardEntry(_scalar(id_node), self.path, line, col, text))
        if kind_node is not None:
            self.add(NAME, kind_node)
        self.fields(node, self.fields_of.get(kind, {}))
        self.text(_get(node, "text"), self.fields_of.get(kind, {}))
        for _, face in _items(_get(node, "faces")):        # `faces: {front 180: {range: 2}}`
            self.fields(face, self.fields_of.get(kind, {}))
            self.text(_get(face, "text"), self.fields_of.get(kind, {}))

    def text(self, node, fields: dict) -> None:
        """A card text (docs/language.md#card-text): its `{field}` placeholders name fields.
        Only a one-line text written as is (plain, or quoted without escapes) is read."""
        for _, each in _items(node) if isinstance(node, yaml.MappingNode) else [(None, node)]:
            value = _scalar(each)
            if value is None or "\n" in value:
                continue
            quoted = each.style in ("'", '"')
            if each.end_mark.line != each.start_mark.line or \
                    each.end_mark.column - each.start_mark.column != len(value) + (2 if quoted else 0):
                continue
            line, col = _where(each)
            for m in _PLACEHOLDER.finditer(value):
                if m.group(1) in fields:
                    self.out.append(Occurrence(Symbol(ATTR, m.group(1)), self.path, line, col + m.start(1), False, ""))

    def fields(self, node, fields: dict) -> None:
        """The fields of a kind a mapping gives; an ability field's value names an ability."""
        for k, v in _items(node):
            if _scalar(k) in fields:
                self.add(ATTR, k)
                if fields[_scalar(k)] == ABILITY_TYPE and _scalar(v) and is_identifier(_scalar(v)):
                    self.add(NAME, v)

    def entries(self, node, declares: bool) -> None:
        for item in (node.value if isinstance(node, yaml.SequenceNode) else ()):
            if isinstance(item, yaml.MappingNode) and _get(item, "id") is not None:
                self.entry(item, declares)

    def keys(self, node, space: str, inner_cards: bool = False) -> None:
        for k, v in _items(node):
            name = _scalar(k)
            if name is not None:
                self.add(space, k, _zone_name(name))
            if inner_cards:
                for card, _ in _items(v):
                    self.card(card)

    def expression(self, node) -> None:
        text = _scalar(node)
        if text is None or node.style not in (None, "", "'", '"') or "\n" in text:
            return
        line, col = _where(node)
        try:
            tree = parse_expression(text, self.path, line, col)
        except DiagnosticError:
            return
        padded = ["" for _ in range(line - 1)] + [" " * (col - 1) + text]
        source = _source_columns(self.lines[line - 1] if line <= len(self.lines) else "", col - 1, text, node.style)
        for o in occurrences_in(tree, self.path, padded):
            if o.symbol.space in (NAME, ATTR, CARD) and 0 <= o.col - col < len(source):
                self.out.append(dataclasses.replace(o, col=source[o.col - col] + 1))

    def game_file(self, root) -> None:
        """A game file or a card set: its card entries, the zone and cards of its `hands:`, and the
        names its `layout:` hints give."""
        self.entries(_get(root, "cards"), True)
        for kind, spec in _items(_get(root, "kinds")):   # card texts by kind
            self.add(NAME, kind)
            self.text(_get(spec, "text"), self.fields_of.get(_scalar(kind), {}))
        hands = _get(root, "hands")                      # cards players bring
        if _get(hands, "zone") is not None:
            self.add(NAME, _get(hands, "zone"))
        for _, preset in _items(_get(hands, "presets")):
            for card in self.sequence(preset):
                self.card(card)
        layout = _get(root, "layout")
        for area in ("centre", "player", "hide"):
            self.scalars(_get(layout, area), NAME)
        self.keys(_get(layout, "zones"), NAME)
        shown = _get(layout, "vars")
        for name in self.sequence(_get(shown, "hide")):
            self.add(self.var_space(_scalar(name)), name)
        for name, _ in _items(_get(shown, "labels")):
            self.add(self.var_space(_scalar(name)), name)
        for _, widget in _items(_get(layout, "widgets")):
            self.widget(widget)
        cards = _get(layout, "cards")
        self.face(cards)
        for kind, face in _items(_get(cards, "kinds")):
            self.add(NAME, kind)
            self.face(face)

    def widget(self, widget) -> None:
        """A widget of the web table (`layout: widgets:`): the variables it draws, the options its bounds name."""
        for marker in [widget, *self.sequence(_get(widget, "markers"))]:
            if _get(marker, "var") is not None:
                self.add(self.var_space(_scalar(_get(marker, "var"))), _get(marker, "var"))
        for key in ("from", "to", "max"):
            bound = _get(widget, key)
            name = bound_name(_scalar(bound)) if isinstance(bound, yaml.ScalarNode) and bound.tag.endswith(":str") else None
            if name and is_identifier(name):
                line, col = _where(bound)
                col += len(_scalar(bound)) - len(name)            # past the `-` of a negated bound
                self.out.append(Occurrence(Symbol(NAME, name), self.path, line, col, False, ""))

    def face(self, face) -> None:
        """What a card face prints (`layout: cards:`): fields."""
        for key in ("number", "color"):
            if _get(face, key) is not None:
                self.add(ATTR, _get(face, key))
        for name in self.sequence(_get(face, "fields")):
            self.add(ATTR, name)

    def var_space(self, name) -> str:
        return ATTR if name in self.attr_vars else NAME

    @staticmethod
    def sequence(node) -> list:
        return list(node.value) if isinstance(node, yaml.SequenceNode) else []

    def scalars(self, node, space: str) -> None:
        """Every text in a list, or a list of lists (`layout: centre:` rows of zone names)."""
        for item in self.sequence(node):
            if isinstance(item, yaml.SequenceNode):
                self.scalars(item, space)
            elif _scalar(item) and _scalar(item) != "null":
                self.add(space, item)

    def variant(self, root) -> None:
        cards = _get(root, "cards")
        self.entries(_get(cards, "add"), True)
        self.entries(_get(cards, "replace"), False)
        for item in (_get(cards, "remove").value if isinstance(_get(cards, "remove"), yaml.SequenceNode) else ()):
            self.card(item)
        self.keys(_get(cards, "change"), CARD)
        self.keys(_get(root, "options"), NAME)
        remove = _get(_get(root, "rules"), "remove")
        for item in (remove.value if isinstance(remove, yaml.SequenceNode) else ()):
            self.add(NAME, item)

    def scenario(self, root) -> None:
        self.keys(_get(root, "options"), NAME)
        at = _get(root, "at")
        if _get(at, "phase") is not None:
            self.add(NAME, _get(at, "phase"))
        setup = _get(root, "setup")
        for zone, cards in _items(_get(setup, "zones")):
            self.keys_of_one(zone, NAME)
            for card in (cards.value if isinstance(cards, yaml.SequenceNode) else ()):
                self.card(card)
        self.keys(_get(setup, "vars"), NAME)
        self.keys(_get(setup, "player_vars"), ATTR)
        self.keys(_get(setup, "card_vars"), ATTR, inner_cards=True)
        steps = _get(root, "steps")
        for step in (steps.value if isinstance(steps, yaml.SequenceNode) else ()):
            for key, value in _items(step):
                name = _scalar(key)
                if name in EXPRESSION_STEPS:
                    for item in (value.value if isinstance(value, yaml.SequenceNode) else [value]):
                        self.expression(item)
                elif name == "expect_phase":
                    self.add(NAME, value)
                elif name in ("expect_zone", "expect_known"):
                    zone = _get(value, "zone")
                    if zone is not None:
                        self.keys_of_one(zone, NAME)
                    for listed in CARD_LISTS:
                        found = _get(value, listed)
                        for card in (found.value if isinstance(found, yaml.SequenceNode) else ()):
                            self.card(card)

    def keys_of_one(self, node, space: str) -> None:
        name = _scalar(node)
        if name is not None:
            self.add(space, node, _zone_name(name))


def yaml_names(path: str, text: str, fields_of: dict, attr_vars=frozenset()
               ) -> tuple[list[Occurrence], list[CardEntry]]:
    """The names in one YAML file of a game (`fields_of`: kind -> field -> type name;
    `attr_vars`: its per-player and per-card variables), and the card entries it declares."""
    try:
        root = yaml.compose(text, Loader=_LOADER)
    except yaml.YAMLError:
        return [], []
    names = _Names(path, text, fields_of, attr_vars)
    if not isinstance(root, yaml.MappingNode):
        return [], []
    if path.endswith(SCENARIO):
        names.scenario(root)
    elif _get(root, "variant") is not None:
        names.variant(root)
    else:
        names.game_file(root)
    return names.out, names.cards
