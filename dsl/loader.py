"""Loading a game: YAML entry file + rules scripts + card data -> checked `GameModel`.

This is the front half of the pipeline in one call: read the game's YAML file (with line
marks), validate it against its JSON Schema, parse every `.rules` file it names, collect the
declarations, validate the card data (the game file's and every card set's) against the
card kinds the rules declare, check all rule bodies, and return the model or raise a
`DiagnosticError` carrying every problem found. Paths a game file names must stay inside
the game's folder tree.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
from dataclasses import dataclass, field

from . import ast as A
from . import card_text
from .check_support import const_value, type_of_value
from .checker import Checker
from .diagnostics import (Diagnostic, DiagnosticError, Reporter, Span, did_you_mean, listing, suggestion_budget,
                          without_knock_on)
from .files import CheckSession, GameBudget, display_path, read_text, resolve_inside
from .layout import check_layout
from .model import CardDef, Formula, GameModel
from .parser import parse_block_snippet, parse_expression, parse_rules
from .primitives import ABILITY_NAMES
from .schema import CARD_SET_SCHEMA, GAME_SCHEMA, card_data_schema, validate
from .types import ABILITY, BOOL, INT, TEXT, assignable
from .variants import VariantSpec, apply_rules, load_variant
from .yaml_loader import Marks, load_yaml_file, reindent, scalar_origin

DATA_FIELD_TYPES = {"int", "bool", "text", "ability", "list[int]", "list[text]", "list[bool]", "any"}
# The most card instances (copies counted) a game may have, its card sets included: far
# beyond any printed game, far below what would exhaust memory or time (docs/security.md).
MAX_CARDS = 10_000
RESERVED_CARD_KEYS = {"id", "kind", "name", "text", "count", "image", "faces", "back"}


def face_key(text: str) -> tuple[int, int | None]:
    """`back 180` -> (1, 180); `back` -> (1, None), meaning any rotation not listed.

    Side 0 is the front, 1 the back.
    """
    side, _, deg = text.partition(" ")
    return (0 if side == "front" else 1), (int(deg) if deg else None)


@dataclass
class SourceSet:
    """Every file read while loading one game, for error rendering and fingerprints."""
    texts: dict = field(default_factory=dict)

    def add(self, path: str, text: str) -> None:
        self.texts[path] = text

    def fingerprint(self, extra: str = "") -> str:
        h = hashlib.sha256()
        # Independent of the working directory: file names and contents only.
        for name, text in sorted((os.path.basename(p), t) for p, t in self.texts.items()):
            h.update(name.encode())
            h.update(text.encode("utf-8", "surrogatepass"))
        h.update(extra.encode())
        return h.hexdigest()[:16]


def _located(diags, span: Span) -> list[Diagnostic]:
    """A file that cannot be read is reported where the game file names it."""
    if span.line <= 0:
        return list(diags)
    return [dataclasses.replace(d, span=span) if d.span.line <= 0 else d for d in diags]


def _text_spans(marks, path: tuple, value):
    """Where each language of a text is written: the text itself, or its entry in a mapping."""
    return lambda lang: marks.span(path + (lang,) if isinstance(value, dict) else path)


def _face_key_or_none(key):
    try:
        return face_key(key)
    except ValueError:
        return None


def _localized(value) -> dict:
    """A name or description as {language: text}; a value of another type (already reported
    by the schema check) is kept as its text so the other checks can go on."""
    if value is None:
        return {}
    if isinstance(value, dict):
        return {str(k): str(v) for k, v in value.items()}
    return {"en": str(value)}


class GameLoader:
    """Builds one GameModel; `load()` collects diagnostics from every stage."""

    def __init__(self, game_path: str, card_sets: list[str] = (), variants: list[str] = (),
                 session: CheckSession | None = None):
        self.game_path = game_path
        self.display = display_path(game_path)
        self.base_dir = os.path.dirname(os.path.abspath(game_path))
        self.card_set_paths = list(card_sets)
        self.variant_names = list(variants)
        self.variant_specs: list[VariantSpec] = []
        self.option_overrides: dict = {}
        self.reporter = Reporter()
        self.sources = SourceSet()
        self.checker = Checker(self.reporter)
        self.entries: list[_Entry] = []
        self.budget = GameBudget(session, tuple(variants))     # what this game may read (docs/security.md)
        self.cards_listed = 0               # card instances listed so far (E012 before any schema check)
        self.kind_texts: dict = {}          # kind -> ({language: text}, span of the text, span of the key)

    # ---------------------------------------------------------------- stages
    def read_game_file(self) -> tuple[dict, Marks]:
        data, marks, text = load_yaml_file(self.game_path, self.display, self.budget)
        self.sources.add(self.display, text)
        if not isinstance(data, dict):
            raise DiagnosticError([Diagnostic("E010", "a game file must be a YAML mapping with keys "
                                              "`id`, `name`, `players` and `rules` (and usually `cards`)", Span(self.display, 1, 1))])
        self.count_cards(data.get("cards"), marks)
        diags = validate(data, GAME_SCHEMA, marks)
        if diags:
            raise DiagnosticError(diags)
        backs = (data.get("layout") or {}).get("backs") if isinstance(data.get("layout"), dict) else None
        self.pictures = [(hint["image"], self.game_path, marks.span(("layout", "backs", name, "image")))
                         for name, hint in (backs.items() if isinstance(backs, dict) else ())
                         if isinstance(hint, dict) and isinstance(hint.get("image"), str)]
        return data, marks

    def parse_rules_files(self, data: dict, marks: Marks) -> list[A.RulesFile]:
        names = data["rules"] if isinstance(data["rules"], list) else [data["rules"]]
        files = []
        for i, name in enumerate(names):
            span = marks.span(("rules", i) if isinstance(data["rules"], list) else ("rules",))
            try:
                full = resolve_inside(self.base_dir, name, span, "rules file")
                display = display_path(full)
                text = read_text(full, display, span, self.budget)
                self.sources.add(display, text)
                files.append(parse_rules(text, display))
            except DiagnosticError as exc:
                self.reporter.extend(exc.diagnostics)
        return files

    def read_card_files(self, data: dict, marks: Marks) -> None:
        self._add_entries(data.get("cards", []), marks)
        self._add_kind_texts(data, marks)
        # Card sets the game file names stay in its folder; those given on the command line
        # (or by the API) may be any file the user chose.
        sets = [(name, marks.span(("card_sets", i)), False) for i, name in enumerate(data.get("card_sets", []))]
        sets += [(os.path.abspath(extra), Span("<command line>", 0, 0), True) for extra in self.card_set_paths]
        for name, span, chosen in sets:
            try:
                full = name if chosen else resolve_inside(self.base_dir, name, span, "card set")
                display = display_path(full)
                try:
                    cdata, cmarks, text = load_yaml_file(full, display, self.budget, span)
                except DiagnosticError as exc:
                    raise DiagnosticError(_located(exc.diagnostics, span)) from None
                self.sources.add(display, text)
                if not isinstance(cdata, dict):
                    raise DiagnosticError([Diagnostic("E010", "a card set must be a YAML mapping with a `cards` list",
                                                      Span(display, 1, 1))])
                self.count_cards(cdata.get("cards"), cmarks)
                diags = validate(cdata, CARD_SET_SCHEMA, cmarks)
                if diags:
                    raise DiagnosticError(diags)
                self._add_entries(cdata["cards"], cmarks)
                self._add_kind_texts(cdata, cmarks)
            except DiagnosticError as exc:
                self.reporter.extend(exc.diagnostics)
                if self.stopped:
                    break

    def stop_if_capped(self) -> None:
        if self.stopped:
            raise DiagnosticError(without_knock_on(self.reporter.diagnostics))

    @property
    def stopped(self) -> bool:
        """A cap was crossed (the game's size, its cards): loading goes no further."""
        return self.budget.exceeded or self.cards_listed > MAX_CARDS

    def count_cards(self, entries, marks: Marks, prefix=("cards",)) -> None:
        """E012 at the entry that takes the cards listed so far (copies counted) past MAX_CARDS,
        checked as each file is read, before its entries are checked against a schema."""
        if not isinstance(entries, list):
            return
        for i, entry in enumerate(entries):
            self.cards_listed += _copies(entry)
            if self.cards_listed > MAX_CARDS:
                raise DiagnosticError([_too_many_cards(self.cards_listed, marks.span(prefix + (i,)))])

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

    def _add_kind_texts(self, data: dict, marks: Marks) -> None:
        """The `kinds:` mapping of a game or card-set file: each kind's rule text (a later
        file's text for a kind replaces an earlier one's)."""
        for name, spec in (data.get("kinds") or {}).items():
            if isinstance(spec, dict) and "text" in spec:
                self.kind_texts[name] = (card_text.localized(spec["text"]), _text_spans(marks, ("kinds", name, "text"),
                                                                                       spec["text"]),
                                         marks.span(("kinds", name), prefer_key=True))

    def _check_kind_texts(self) -> None:
        kinds = self.checker.kinds
        for name, (texts, span, key_span) in self.kind_texts.items():
            if name not in kinds:
                self.reporter.error("E232", f"unknown card kind `{name}` in `kinds:`", key_span,
                                    did_you_mean(name, kinds) or "kinds declared in the rules: " + listing(sorted(kinds)))
                continue
            self.reporter.extend(card_text.check(texts, kinds[name].fields, set(), span, name))

    def _card_text(self, entry: dict, marks, kind, values: dict, faces: dict, names: dict) -> dict:
        """The card's rule text filled in (its own `text:`, else its kind's), and each side's
        under `faces:` (in place, as `text`): checked at the placeholders."""
        computed = {f for f in kind.fields if isinstance(entry.get(f), dict)}
        raw = {f: (entry.get(f) if kind.fields[f].type == ABILITY else v) for f, v in values.items()}
        own = card_text.localized(entry.get("text"))
        if own:
            self.reporter.extend(card_text.check(own, kind.fields, computed, _text_spans(marks, ("text",), entry["text"]),
                                                 kind.name))
        texts = own or self.kind_texts.get(kind.name, ({},))[0]
        for key, patch in (entry.get("faces") or {}).items():
            face = faces.get(_face_key_or_none(key))
            if face is None or not isinstance(patch, dict):
                continue
            side = card_text.localized(patch.get("text"))
            if side:
                self.reporter.extend(card_text.check(side, kind.fields, computed,
                                                     _text_spans(marks, ("faces", key, "text"), patch["text"]), kind.name))
            side_values = {**raw, **{f: patch[f] for f in patch if f in kind.fields}}
            if side or texts:
                face["text"] = card_text.fill(side or texts, side_values, face.get("name") or names)
        return card_text.fill(texts, raw, names) if texts else {}

    def _add_entries(self, entries: list, marks: Marks, prefix=("cards",)) -> None:
        for i, entry in enumerate(entries):
            self.entries.append(_Entry(entry, _EntryMarks(marks, prefix + (i,)), prefix + (i,)))

    def build_cards(self) -> list[CardDef]:
        checker = self.checker
        kinds_schema = self.check_kinds_for_data()
        # Each entry is checked against its own kind's schema (one with a branch per kind would
        # cost kinds x cards); an entry of no known kind, against what every card has.
        item_schemas = {kind: card_data_schema({kind: fields})["items"] for kind, fields in kinds_schema.items()}
        any_kind = card_data_schema({})["items"]
        cards: list[CardDef] = []
        seen: dict[str, Span] = {}
        total = 0                    # card instances so far (copies included)
        for picture in getattr(self, "pictures", ()):     # the layout's card backs
            self._check_picture(*picture)
        self._check_kind_texts()
        for e in self.entries:
            entry, marks = e.entry, e.marks
            total += _copies(entry)
            if total > MAX_CARDS:              # cards a variant adds (the files' are counted as they are read)
                self.reporter.extend([_too_many_cards(total, marks.span(()))])
                break
            if not item_schemas:
                self.reporter.error("E230", "the rules declare no card kinds, but the data lists cards",
                                    marks.span(()), "declare kinds with `kind name { field: type }`")
                break
            kind = entry.get("kind") if isinstance(entry, dict) and isinstance(entry.get("kind"), str) else None
            self.reporter.extend(validate(entry, item_schemas.get(kind, any_kind), marks, code="E231",
                                          label_prefix=e.label))
            if kind not in checker.kinds:
                if isinstance(entry, dict) and isinstance(entry.get("kind"), str):
                    hint = did_you_mean(entry["kind"], checker.kinds) or \
                        "kinds declared in the rules: " + listing(sorted(checker.kinds))
                    self.reporter.error("E232", f"unknown card kind `{entry['kind']}`", marks.span(("kind",)), hint)
                continue
            cid = entry["id"]
            if cid in seen:
                self.reporter.error("E233", f"duplicate card id `{cid}`", marks.span(("id",)),
                                    "card ids must be unique across the game and its card sets",
                                    notes=((f"`{cid}` first defined here", seen[cid]),))
                continue
            seen[cid] = marks.span(("id",))
            kind = checker.kinds[entry["kind"]]
            values = {}
            for fname, fdef in kind.fields.items():
                if fname in entry:
                    value = entry[fname]
                    if fdef.type == ABILITY:
                        value = self._ability_ref(cid, fname, value, marks, (fname,))
                    elif isinstance(value, dict) and isinstance(value.get("rules"), str):
                        value = self._formula(fdef, value["rules"], marks, (fname, "rules"))
                    elif isinstance(value, list):
                        value = tuple(value)
                    values[fname] = value
                else:
                    values[fname] = fdef.default
            faces = {}
            for key, patch in (entry.get("faces") or {}).items():
                if not isinstance(patch, dict):
                    continue
                face = {}
                for fname, value in patch.items():
                    if fname == "name":
                        face["name"] = _localized(value)
                        continue
                    fdef = kind.fields.get(fname)
                    if fdef is None:
                        continue            # reported by the schema
                    if fdef.type == ABILITY:
                        value = self._ability_ref(f"{cid}@{key.replace(' ', '_')}", fname, value, marks,
                                                  ("faces", key, fname))
                    elif isinstance(value, dict):
                        # Only printed values vary with how a card lies; a formula is computed
                        # from the board and belongs to the card's own field.
                        self.reporter.error("E231", f"`{fname}` under `faces: {key}` must be a printed value, "
                                            "not a formula", marks.span(("faces", key, fname)),
                                            "give the formula as the card's own field value")
                        continue
                    elif isinstance(value, list):
                        value = tuple(value)
                    face[fname] = value
                try:
                    faces[face_key(key)] = face
                except ValueError:
                    pass                    # reported by the schema
            if isinstance(entry.get("image"), str):
                self._check_picture(entry["image"], marks.file, marks.span(("image",)))
            count = entry.get("count", 1)
            names = _localized(entry.get("name")) or {"en": cid}
            text = self._card_text(entry, marks, kind, values, faces, names)
            cards.append(CardDef(cid, entry["kind"], names,
                                 values, int(count) if isinstance(count, int) else 1, marks.file, marks.span(()),
                                 faces, str(entry.get("back", "card")), entry.get("image"), text))
        return cards

    def check_hands(self, data: dict, marks: Marks, cards: list) -> dict | None:
        """The `hands:` declaration: its zone must be per player; presets must be legal hands."""
        spec = data.get("hands")
        if spec is None:
            return None
        zone = self.checker.zones.get(spec["zone"])
        if zone is None or not zone.per_player or zone.dims:
            self.reporter.error("E070", f"`hands.zone` must name a per-player zone, not `{spec['zone']}`",
                                marks.span(("hands", "zone")),
                                did_you_mean(spec["zone"], [z.name for z in self.checker.zones.values() if z.per_player]))
        counts = {c.id: c.count for c in cards}
        legal = set()
        for name, ids in (spec.get("presets") or {}).items():
            problems = hand_problems(ids, spec, counts, marks, ("hands", "presets", name))
            self.reporter.extend(problems)
            if not problems:
                legal.add(name)
        needed: dict = {}
        for k, name in enumerate(spec.get("seats", [])):
            if name not in (spec.get("presets") or {}):
                self.reporter.error("E071", f"no preset hand `{name}`", marks.span(("hands", "seats", k)),
                                    did_you_mean(name, spec.get("presets") or {}))
                continue
            if name not in legal:
                continue
            # The seats' hands are dealt from one box: together they may not need more copies
            # of a card than the game has.
            for cid in spec["presets"][name]:
                needed[cid] = needed.get(cid, 0) + 1
                if cid in counts and needed[cid] == counts[cid] + 1:
                    self.reporter.error("E075", f"the seats' preset hands need more `{cid}` than the game has "
                                        f"({counts[cid]})", marks.span(("hands", "seats", k)),
                                        "give the cards more copies (`count:`), or change the presets")
        return {"zone": spec["zone"], "size": spec.get("size"), "unique": spec.get("unique", False),
                "presets": {k: list(v) for k, v in (spec.get("presets") or {}).items()},
                "seats": list(spec.get("seats", []))}

    # ---------------------------------------------------------------- variants
    def load_variants(self, data: dict, marks: Marks) -> None:
        known = dict(data.get("variants", {}))
        seen: set = set()
        for name in self.variant_names:
            span = None
            if name in known:
                span = marks.span(("variants", name))
                try:
                    path = resolve_inside(self.base_dir, known[name], span, "variant")
                except DiagnosticError as exc:
                    self.reporter.extend(exc.diagnostics)
                    continue
            elif os.path.isfile(name):
                path = os.path.abspath(name)
            else:
                raise VariantNotFound(name, sorted(known))
            try:
                spec = load_variant(path, display_path(path), self.budget, span)
            except DiagnosticError as exc:
                self.reporter.extend(_located(exc.diagnostics, span) if span is not None else exc.diagnostics)
                continue
            if spec.name in seen:
                self.reporter.error("E065", f"variant `{spec.name}` is applied twice", spec.marks.span(("variant",)),
                                    "each variant applies once; list it a single time")
                continue
            seen.add(spec.name)
            base = spec.data.get("base")
            if base is not None:
                try:
                    target = os.path.realpath(os.path.join(os.path.dirname(spec.path), base))
                except ValueError:          # not a path at all (a NUL character)
                    target = None
                if target != os.path.realpath(self.game_path):
                    self.reporter.error("E067", f"variant `{spec.name}` is for `{base}`, not for {self.display}",
                                        spec.marks.span(("base",)))
                    continue
            self.sources.add(spec.display, spec.text)
            for shown, text in spec.extra_sources.items():
                self.sources.add(shown, text)
            self.variant_specs.append(spec)

    def apply_variant_cards(self, spec: VariantSpec) -> None:
        cards = spec.data.get("cards") or {}
        at = self._positions()
        removed = set()
        for k, cid in enumerate(cards.get("remove", [])):
            i = _first(at, cid)
            if i is None:
                self._missing_card(spec, cid, ("cards", "remove", k), "removes", at)
            else:
                removed.add(at[cid].pop(0))
                if not at[cid]:
                    del at[cid]
        if removed:
            self.entries = [e for i, e in enumerate(self.entries) if i not in removed]
            at = self._positions()
        for k, entry in enumerate(cards.get("replace", [])):
            i = _first(at, entry.get("id"))
            path = ("cards", "replace", k)
            if i is None:
                self._missing_card(spec, entry.get("id"), path + ("id",), "replaces", at)
            else:
                self.entries[i] = _Entry(entry, _EntryMarks(spec.marks, path), path)
        for cid, patch in (cards.get("change") or {}).items():
            i = _first(at, cid)
            path = ("cards", "change", cid)
            if i is None:
                self._missing_card(spec, cid, path, "changes", at)
                continue
            if "id" in patch:
                self.reporter.error("E069", "a change cannot rename a card; remove it and add a new one",
                                    spec.marks.span(path + ("id",), prefer_key=True))
                continue
            old = self.entries[i]
            merged = dict(old.entry)
            merged.update(patch)
            overrides = {key: (spec.marks, path) for key in patch}
            self.entries[i] = _Entry(merged, _EntryMarks(old.marks.marks, old.marks.prefix, overrides), old.label)
        for k, entry in enumerate(cards.get("add", [])):
            path = ("cards", "add", k)
            self.entries.append(_Entry(entry, _EntryMarks(spec.marks, path), path))

    def _positions(self) -> dict:
        """Card id -> the positions of the entries with that id, in order: a variant's lookups
        by id, each in constant time (a scan each would cost entries x lookups)."""
        out: dict = {}
        for i, e in enumerate(self.entries):
            if isinstance(e.entry, dict):
                try:
                    out.setdefault(e.entry.get("id"), []).append(i)
                except TypeError:           # an id that is not a name (reported by the schema)
                    pass
        return out

    def _missing_card(self, spec, cid, path, verb, at: dict) -> None:
        self.reporter.error("E068", f"the variant {verb} card `{cid}`, which the game does not have",
                            spec.marks.span(path, prefer_key=verb == "changes"),
                            did_you_mean(str(cid), at))

    def apply_variant_options(self, spec: VariantSpec) -> None:
        for name, value in (spec.data.get("options") or {}).items():
            span = spec.marks.span(("options", name), prefer_key=True)
            opt = self.checker.options.get(name)
            if opt is None:
                known = listing(self.checker.options) or "none"
                self.reporter.error("E064", f"unknown option `{name}`", span,
                                    did_you_mean(name, self.checker.options) or f"options of this game: {known}")
                continue
            vspan = spec.marks.span(("options", name))
            value = tuple(value) if isinstance(value, list) else value
            if not assignable(type_of_value(value), opt.type) or value is None:
                self.reporter.error("E064", f"option `{name}` is {opt.type}, not {type_of_value(value)}", vspan)
                continue
            if opt.range and not opt.range[0] <= value <= opt.range[1]:
                self.reporter.error("E064", f"option `{name}` must be between {opt.range[0]} and {opt.range[1]}",
                                    vspan)
                continue
            if opt.choices and value not in opt.choices:
                self.reporter.error("E064", f"option `{name}` must be one of {', '.join(map(str, opt.choices))}",
                                    vspan)
                continue
            self.option_overrides[name] = value

    def _check_picture(self, name: str, source: str, span: Span) -> None:
        """A picture a card (or the layout) names is served by `rulesvm serve`: like every file a
        game names, it must lie in the game's folder (or, for a card set or variant chosen on
        the command line, in that file's folder)."""
        base = os.path.realpath(os.path.dirname(os.path.abspath(source)))
        root = os.path.realpath(self.base_dir)
        if os.path.commonpath([root, base]) != root:
            root = base
        if not name.strip() or "\x00" in name or os.path.isabs(name):
            shown = name.encode("unicode_escape").decode("ascii")
            self.reporter.error("E007", f"picture path `{shown}` must be a file name relative to "
                                f"{display_path(source)}", span, "pictures must be in the game's folder or below it")
            return
        full = os.path.realpath(os.path.join(base, name))
        if os.path.commonpath([root, full]) != root:
            self.reporter.error("E007", f"picture `{name}` is outside the game's folder", span,
                                "pictures must be in the game's folder or below it "
                                "(symbolic links may not point outside it either)")

    def _formula(self, fdef, text: str, marks, path):
        """A field computed by an expression, checked now with `self` (card) and `you` (player)."""
        span = marks.span(path)
        line, col, indent = scalar_origin(self.sources.texts.get(marks.file, ""), span)
        try:
            self.budget.charge_rules(_size(text), "this formula", marks.file, span)
            expr = parse_expression(reindent(text, indent), marks.file, line, col)
        except DiagnosticError as exc:
            self.reporter.extend(exc.diagnostics)
            return None
        t, nslots = self.checker.check_standalone(expr, self.reporter, {name: t for name, (t, _) in ABILITY_NAMES.items()})
        if not assignable(t, fdef.type):
            self.reporter.error("E303", f"field `{fdef.name}` is {fdef.type}, but this formula gives {t}", span)
        return Formula(expr, nslots, text)

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
            checker.use(value, from_data=True)
            return value
        if isinstance(value, dict) and isinstance(value.get("rules"), str):
            name = f"{cid}.{fname}"
            span = marks.span(path + ("rules",))
            line, col, indent = scalar_origin(self.sources.texts.get(marks.file, ""), span)
            text = reindent(value["rules"], indent)
            try:
                self.budget.charge_rules(_size(text), "this ability", marks.file, span)
                body = parse_block_snippet(text, marks.file, line, col)
            except DiagnosticError as exc:
                self.reporter.extend(exc.diagnostics)
                return None
            checker.add_snippet(name, body, span)
            return name
        return None

    # ---------------------------------------------------------------- the whole load
    def load(self) -> GameModel:
        data, marks = self.read_game_file()
        self.load_variants(data, marks)
        self.stop_if_capped()
        files = self.parse_rules_files(data, marks)
        if self.reporter.has_errors:        # syntax errors: nothing sensible to check further
            raise DiagnosticError(without_knock_on(self.reporter.diagnostics))
        for spec in self.variant_specs:
            # A part that cannot be replaced keeps the base version, so checking goes on.
            files, diags = apply_rules(files, spec)
            self.reporter.extend(diags)
        self.checker.collect(files)
        self.read_card_files(data, marks)
        self.stop_if_capped()
        for spec in self.variant_specs:
            self.apply_variant_cards(spec)
            self.apply_variant_options(spec)
        cards = self.build_cards()
        self.stop_if_capped()
        self.checker.check()
        for kind in self.checker.kinds.values():
            if not any(c.kind == kind.name for c in cards):
                self.reporter.warning("W406", f"card kind `{kind.name}` has no cards in the data", kind.span)
        self.reporter.extend(check_layout(data.get("layout"), self.checker.zones, self.checker.vars,
                                          self.checker.kinds, marks, self.checker.options))
        players, players_marks = data["players"], marks
        for spec in self.variant_specs:        # a variant may change the number of players
            if "players" in spec.data:
                players, players_marks = spec.data["players"], spec.marks
        if isinstance(players, int):
            players = (players, players, players)
        else:
            lo, hi = players["min"], players["max"]
            default = players.get("default", hi)
            if lo > hi or not lo <= default <= hi:
                self.reporter.error("E011", f"players: need min <= default <= max, found {lo}, {default}, {hi}",
                                    players_marks.span(("players",)))
            players = (lo, hi, default)
        if self.reporter.has_errors:
            raise DiagnosticError(without_knock_on(self.reporter.diagnostics))
        checker = self.checker
        model = GameModel(
            id=data["id"], name=_localized(data["name"]), description=_localized(data.get("description")),
            players=players, path=os.path.abspath(self.game_path), rules_files=[f.path for f in files],
            options=checker.options, kinds=checker.kinds, field_types=checker.field_types,
            zones=checker.zones, vars=checker.vars, events=checker.events, procs=checker.procs,
            funcs=checker.funcs, triggers=checker.triggers, cards=cards, resolution=checker.res,
            variants=dict(data.get("variants", {})), applied_variants=[v.name for v in self.variant_specs],
            layout=data.get("layout", {}), max_steps=data.get("max_steps", 1_000_000),
            sources=self.sources.texts, fingerprint=self.sources.fingerprint())
        model.hands = self.check_hands(data, marks, cards)
        model.bots = dict(data.get("bots") or {})
        if "playout" in model.bots and "evaluate" not in checker.funcs:
            self.reporter.error("E310", "`bots: playout:` cuts MCTS playouts short for the game's `evaluate` to "
                                "judge, but the rules declare no `evaluate`", marks.span(("bots", "playout")),
                                hint="declare `func evaluate(p: player) -> int` in the rules, or remove `playout`")
        if self.reporter.has_errors:
            raise DiagnosticError(without_knock_on(self.reporter.diagnostics))
        model.warnings = [d for d in self.reporter.diagnostics if not d.is_error]
        model.checker = checker
        model.option_overrides = dict(self.option_overrides)
        model.variant_specs = list(self.variant_specs)
        model.rules_ast = files
        return model


def _first(positions: dict, cid) -> int | None:
    """The position of the first entry with id `cid` (None if none, or if `cid` is no name)."""
    try:
        found = positions.get(cid)
    except TypeError:
        return None
    return found[0] if found else None


def _copies(entry) -> int:
    """The card instances an entry of a card list stands for (its `count:`, 1 if none or wrong)."""
    copies = entry.get("count", 1) if isinstance(entry, dict) else 1
    return copies if isinstance(copies, int) and copies > 0 else 1


def _too_many_cards(total: int, span: Span) -> Diagnostic:
    return Diagnostic("E012", f"the game has more than {MAX_CARDS:,} cards (copies counted): this entry brings the "
                      f"total to {total:,}", span, "a game this large is a mistake (or an attempt to exhaust memory)")


def _size(text: str) -> int:
    """The bytes of rules text written in a YAML value (as the file holds it, in UTF-8)."""
    return len(text.encode("utf-8", "surrogatepass"))


class VariantNotFound(ValueError):
    def __init__(self, name: str, known: list[str]):
        self.name = name
        self.known = known
        listing = ", ".join(known) if known else "none (the game file lists no variants)"
        super().__init__(f"unknown variant `{name}` (not a variant of this game, nor a file); "
                         f"variants: {listing}")


@dataclass
class _EntryMarks:
    """Positions inside one card entry: `path` is relative to the entry; some keys may come
    from a variant's `change:` (overrides: key -> (marks, path prefix))."""
    marks: Marks
    prefix: tuple
    overrides: dict = field(default_factory=dict)

    @property
    def file(self) -> str:
        return self.marks.file

    def span(self, path, prefer_key: bool = False) -> Span:
        path = tuple(path)
        if path and path[0] in self.overrides:
            marks, prefix = self.overrides[path[0]]
            return marks.span(prefix + path, prefer_key)
        return self.marks.span(self.prefix + path, prefer_key)


@dataclass
class _Entry:
    entry: object
    marks: _EntryMarks
    label: tuple          # how messages name the entry: ("cards", 3) or ("cards", "add", 0)


def hand_problems(ids: list, spec: dict, counts: dict, marks, path: tuple) -> list[Diagnostic]:
    """Why a list of card ids is not a legal hand for `spec` (size, repeats, unknown cards)."""
    out = []
    size = spec.get("size")
    if size is not None and len(ids) != size:
        out.append(Diagnostic("E072", f"a hand has exactly {size} cards; this one has {len(ids)}",
                              marks.span(path), "add or remove cards"))
    seen: dict = {}
    taken: dict = {}                # copies of each id in the hand so far
    for k, cid in enumerate(ids):
        taken[cid] = taken.get(cid, 0) + 1 if cid in counts else 0
        if cid not in counts:
            out.append(Diagnostic("E073", f"no card has the id `{cid}`", marks.span(path + (k,)),
                                  did_you_mean(str(cid), counts)))
            continue
        if spec.get("unique") and cid in seen:
            out.append(Diagnostic("E074", f"`{cid}` is in the hand twice; each card may appear once",
                                  marks.span(path + (k,)), notes=(("first here", marks.span(path + (seen[cid],))),)))
            continue
        seen.setdefault(cid, k)
        if taken[cid] > counts[cid]:
            out.append(Diagnostic("E075", f"the game has only {counts[cid]} `{cid}`", marks.span(path + (k,))))
    return out


def load_game_model(path: str, card_sets: list[str] = (), variants: list[str] = (),
                    session: CheckSession | None = None) -> GameModel:
    """Load and check a game (with card sets and variants, in order).

    Raises DiagnosticError with every problem found, or VariantNotFound for a variant that
    is neither a name the game lists nor a file. Loads sharing a `session` (the game alone and
    with each variant) read at most MAX_CHECK_BYTES together.
    """
    with suggestion_budget():
        return GameLoader(path, card_sets, variants, session).load()


def check_option(model: GameModel, name: str, value):
    """An option value given as data (a scenario, a log, the API): typed and in range, or
    ValueError with a message. Lists become tuples."""
    opt = model.options.get(name)
    if opt is None:
        option_value(model, name, "")          # raises the "unknown option" message
    value = tuple(value) if isinstance(value, list) else value
    if value is None or isinstance(value, float) or not assignable(type_of_value(value), opt.type):
        raise ValueError(f"option `{name}` is {opt.type}, not `{value}`")
    if isinstance(value, tuple) and not all(isinstance(v, (int, str, bool)) and not isinstance(v, float)
                                            for v in value):
        raise ValueError(f"option `{name}` is {opt.type}, not `{list(value)}`")
    return _within_bounds(opt, name, value)


def _within_bounds(opt, name: str, value):
    """The value, if it lies in the option's declared range and choices."""
    if opt.range and not opt.range[0] <= value <= opt.range[1]:
        raise ValueError(f"option `{name}` must be between {opt.range[0]} and {opt.range[1]}, not {value}")
    if opt.choices and value not in opt.choices:
        raise ValueError(f"option `{name}` must be one of {', '.join(map(str, opt.choices))}, not `{value}`")
    return value


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
    return _within_bounds(opt, name, value)


__all__ = ["GameLoader", "load_game_model", "option_value", "check_option", "display_path", "resolve_inside",
           "SourceSet", "const_value", "type_of_value", "assignable", "TEXT"]
