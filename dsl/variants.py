"""Variant files: house rules as a small file beside the game (part of loading a game).

A variant file sets options, adds, removes, replaces or changes cards, and adds, replaces
or removes named parts of the rules (a kind, zone, variable, option, event, procedure,
phase, function, ability or a named trigger), with rules text inline or in a `.rules`
file beside it. `load_variant` reads and checks one file; `GameLoader` applies variants in
order while it loads the base game, so every mistake is reported like any validation
error, at its position in the variant file (and, where it helps, in the base game).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from . import ast as A
from .diagnostics import Diagnostic, DiagnosticError, Span, did_you_mean
from .files import GameBudget, display_path, read_text, resolve_inside
from .parser import parse_rules
from .schema import CARD_ENTRY, LOCALIZED_TEXT, NAME_PATTERN, validate
from .yaml_loader import Marks, load_yaml_file, reindent, scalar_origin

VARIANT_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://rulesvm.dev/schema/variant.schema.json",
    "title": "rulesvm variant",
    "type": "object",
    "required": ["variant"],
    "additionalProperties": False,
    "properties": {
        "variant": {"type": "string", "pattern": NAME_PATTERN, "description": "the variant's name"},
        "description": LOCALIZED_TEXT,
        "base": {"type": "string", "description": "the base game file, relative to this file"},
        "players": {"description": "the number of players with this variant (like the game file's `players`)",
                    "oneOf": [{"type": "integer", "minimum": 1, "maximum": 16},
                              {"type": "object", "required": ["min", "max"], "additionalProperties": False,
                               "properties": {"min": {"type": "integer", "minimum": 1, "maximum": 16},
                                              "max": {"type": "integer", "minimum": 1, "maximum": 16},
                                              "default": {"type": "integer", "minimum": 1, "maximum": 16}}}]},
        "options": {"type": "object", "propertyNames": {"type": "string", "pattern": NAME_PATTERN}},
        "cards": {
            "type": "object", "additionalProperties": False,
            "properties": {
                "add": {"type": "array", "items": CARD_ENTRY},
                "remove": {"type": "array", "items": {"type": "string"}},
                "replace": {"type": "array", "items": CARD_ENTRY},
                "change": {"type": "object", "additionalProperties": {"type": "object"}},
            },
        },
        "rules": {
            "type": "object", "additionalProperties": False,
            "properties": {
                "add": {"type": "string", "description": "new declarations"},
                "replace": {"type": "string", "description": "declarations replacing same-named ones"},
                "remove": {"type": "array", "items": {"type": "string"}},
                "add_file": {"type": "string"},
                "replace_file": {"type": "string"},
            },
        },
    },
}


@dataclass
class VariantSpec:
    name: str
    path: str                  # absolute
    display: str
    data: dict
    marks: Marks
    text: str
    description: dict = field(default_factory=dict)
    add_rules: list = field(default_factory=list)       # of A.RulesFile
    replace_rules: list = field(default_factory=list)
    extra_sources: dict = field(default_factory=dict)   # display path -> text of .rules files


def decl_name(d) -> str | None:
    if isinstance(d, A.TriggerDecl):
        return d.label
    return getattr(d, "name", None)


def decl_kind(d) -> str:
    if isinstance(d, A.ProcDecl):
        return {"proc": "procedure", "phase": "phase", "ability": "ability", "setup": "setup block",
                "game": "game block"}[d.kind]
    return {A.KindDecl: "card kind", A.ZoneDecl: "zone", A.VarDecl: "variable", A.OptionDecl: "option",
            A.EventDecl: "event", A.FuncDecl: "function", A.TriggerDecl: "trigger"}[type(d)]


def _rules_from_yaml(text: str, marks: Marks, path: tuple, display: str, file_text: str,
                     budget: GameBudget | None = None) -> A.RulesFile:
    """Parse rules text given in a YAML value so that spans point into the YAML file."""
    line, col, indent = scalar_origin(file_text, marks.span(path))
    if budget is not None:
        budget.charge_rules(len(text.encode("utf-8", "surrogatepass")), "these rules", display, marks.span(path))
    source = "\n" * (line - 1) + " " * (col - 1) + reindent(text, indent)
    return parse_rules(source, display)


def load_variant(path: str, display: str | None = None, budget: GameBudget | None = None,
                 span: Span | None = None) -> VariantSpec:
    """Read and check one variant file. With a `budget` (its game's), the file and its rules
    count towards the game's size caps (`span`: where the game names the variant)."""
    display = display or path
    data, marks, text = load_yaml_file(path, display, budget, span)
    if not isinstance(data, dict):
        raise DiagnosticError([Diagnostic("E060", "a variant file is a YAML mapping starting with `variant: NAME`",
                                          Span(display, 1, 1))])
    diags = validate(data, VARIANT_SCHEMA, marks, code="E060")
    if diags:
        raise DiagnosticError(diags)
    spec = VariantSpec(data["variant"], os.path.abspath(path), display, data, marks, text,
                       _localized(data.get("description")))
    rules = data.get("rules") or {}
    errors: list[Diagnostic] = []
    for key, target in (("add", spec.add_rules), ("replace", spec.replace_rules)):
        if key in rules:
            try:
                target.append(_rules_from_yaml(rules[key], marks, ("rules", key), display, text, budget))
            except DiagnosticError as exc:
                errors.extend(exc.diagnostics)
        fkey = f"{key}_file"
        if fkey in rules:
            base = os.path.dirname(os.path.abspath(path))
            fspan = marks.span(("rules", fkey))
            try:
                full = resolve_inside(base, rules[fkey], fspan, "rules file", "the variant's folder")
                shown = display_path(full)
                rtext = read_text(full, shown, fspan, budget)
            except DiagnosticError as exc:
                errors.extend(exc.diagnostics)
                continue
            spec.extra_sources[shown] = rtext
            try:
                target.append(parse_rules(rtext, shown))
            except DiagnosticError as exc:
                errors.extend(exc.diagnostics)
    if errors:
        raise DiagnosticError(errors)
    return spec


def _localized(value) -> dict:
    if value is None:
        return {}
    return {"en": value} if isinstance(value, str) else dict(value)


def _a(word: str) -> str:
    return ("an " if word[:1] in "aeiou" else "a ") + word


def apply_rules(files: list, spec: VariantSpec) -> tuple[list, list[Diagnostic]]:
    """The base's rules files with the variant's removals, replacements and additions."""
    diags: list[Diagnostic] = []
    decls = [(f, d) for f in files for d in f.decls]
    names = {decl_name(d): i for i, (_, d) in enumerate(decls) if decl_name(d)}
    removed: set = set()
    for k, name in enumerate((spec.data.get("rules") or {}).get("remove", [])):
        if name not in names:
            diags.append(Diagnostic("E061", f"the variant removes `{name}`, which the game does not declare",
                                    spec.marks.span(("rules", "remove", k)), did_you_mean(name, names)))
        else:
            removed.add(names[name])
    replaced: dict = {}
    for rf in spec.replace_rules:
        for d in rf.decls:
            name = decl_name(d)
            if name is None:
                diags.append(Diagnostic("E062", "only named parts can be replaced (name a trigger with `as NAME`)",
                                        d.span))
                continue
            if name not in names or names[name] in removed:
                diags.append(Diagnostic("E061", f"the variant replaces {decl_kind(d)} `{name}`, which the game "
                                        "does not declare", d.span,
                                        did_you_mean(name, names) or "to add a new part, put it under `add:`"))
                continue
            old = decls[names[name]][1]
            if decl_kind(old) != decl_kind(d):
                diags.append(Diagnostic("E063", f"`{name}` is {_a(decl_kind(old))} in the game; the variant "
                                        f"replaces it with {_a(decl_kind(d))}", d.span,
                                        notes=((f"`{name}` declared here", old.span),)))
                continue
            replaced[names[name]] = d
    new_files = []
    index = {id(d): i for i, (_, d) in enumerate(decls)}
    for f in files:
        kept = []
        for d in f.decls:
            i = index[id(d)]
            if i in removed:
                continue
            kept.append(replaced.get(i, d))
        new_files.append(A.RulesFile(f.span, f.path, tuple(kept)))
    new_files.extend(spec.add_rules)
    return new_files, diags


def replaced_parts(files: list, spec: VariantSpec) -> list[tuple]:
    """(kind, name, old decl or None, new decl or None) for `rulesvm diff`."""
    base = {decl_name(d): d for f in files for d in f.decls if decl_name(d)}
    out = []
    for name in (spec.data.get("rules") or {}).get("remove", []):
        if name in base:
            out.append((decl_kind(base[name]), name, base[name], None))
    for rf in spec.replace_rules:
        for d in rf.decls:
            out.append((decl_kind(d), decl_name(d), base.get(decl_name(d)), d))
    for rf in spec.add_rules:
        for d in rf.decls:
            out.append((decl_kind(d), decl_name(d) or "(unnamed trigger)", None, d))
    return out
