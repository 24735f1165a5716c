"""JSON Schemas of rulesvm's YAML files, and schema validation with positions.

The game file, card-set, variant, hand and scenario files are validated with
`jsonschema` before anything reads them; each violation becomes a `Diagnostic` (E0xx) at
the line and column of the offending value. `card_data_schema` derives, from the card kinds
a rules script declares, the schema of that game's card entries (`rulesvm schema GAME`).
"""

from __future__ import annotations

import jsonschema

from .diagnostics import Diagnostic, did_you_mean
from .yaml_loader import Marks

ID_PATTERN = r"^[A-Za-z_][A-Za-z0-9_.-]*$"
NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"
# The most a game file may raise its step limit to: a hostile file cannot make a runaway
# loop run for hours (ten million steps take seconds). Documented in docs/language.md.
MAX_STEPS = 10_000_000

LOCALIZED_TEXT = {
    "oneOf": [
        {"type": "string"},
        {"type": "object", "properties": {"en": {"type": "string"}}, "required": ["en"],
         "additionalProperties": {"type": "string"}},
    ],
    "description": "text, or a mapping of language code to text (`en` required)",
}

ABILITY_REF = {
    "oneOf": [
        {"type": "string", "pattern": NAME_PATTERN, "description": "the name of an ability in the rules"},
        {"type": "object", "properties": {"rules": {"type": "string"}}, "required": ["rules"],
         "additionalProperties": False, "description": "rules-language statements"},
    ]
}

CARD_ENTRY = {
    "type": "object",
    "required": ["id", "kind"],
    "properties": {
        "id": {"type": "string", "pattern": ID_PATTERN, "description": "unique card id"},
        "kind": {"type": "string", "pattern": NAME_PATTERN, "description": "a card kind declared in the rules"},
        "name": LOCALIZED_TEXT,
        "text": LOCALIZED_TEXT,
        "count": {"type": "integer", "minimum": 1, "maximum": 1000, "description": "number of copies"},
        "image": {"type": "string"},
        "back": {"type": "string", "description": "what the card's back shows; cards with the same back "
                 "look alike face down (default: one back for every card)"},
        "faces": {"type": "object", "description": "field values by orientation: `front`, `front 180`, `back`, ...",
                  "propertyNames": {"type": "string", "pattern": r"^(front|back)( (0|90|180|270))?$"},
                  "additionalProperties": {"type": "object"}},
    },
    "additionalProperties": True,
}
FACE_KEY = r"^(front|back)( (0|90|180|270))?$"

# `layout:` hints for the web table (`rulesvm serve`, docs/web.md); dsl/layout.py checks the names.
_LAYOUT_NAME = {"type": "string", "pattern": NAME_PATTERN}
_LAYOUT_NAMES = {"type": "array", "items": _LAYOUT_NAME}
_LAYOUT_TEXTS = {"type": "array", "items": {"type": "string"}}
_LAYOUT_AREA = {
    "type": "array", "minItems": 1,
    "description": "zone names in order, or rows of cells (repeat a name to span cells, null for an empty cell)",
    "items": {"oneOf": [_LAYOUT_NAME, {"type": "array", "minItems": 1,
                                       "items": {"oneOf": [_LAYOUT_NAME, {"type": "null"}]}}]},
}
_LAYOUT_CARD_FACE = {"type": "object", "additionalProperties": False, "properties": {
    "number": {**_LAYOUT_NAME, "description": "the field printed large in the corner"},
    "color": {**_LAYOUT_NAME, "description": "the field whose value colours the card"},
    "fields": {**_LAYOUT_NAMES, "description": "the fields printed on the face, in order"}}}
LAYOUT_SCHEMA = {
    "type": "object", "additionalProperties": False,
    "description": "how `rulesvm serve` lays out the table (optional; see docs/web.md)",
    "properties": {
        "centre": {**_LAYOUT_AREA, "description": "shared zones in the middle of the table"},
        "player": {**_LAYOUT_AREA, "description": "per-player zones in each player's area"},
        "hide": {**_LAYOUT_NAMES, "description": "zones not drawn"},
        "zones": {"type": "object", "propertyNames": {"type": "string", "pattern": NAME_PATTERN}, "additionalProperties": {
            "type": "object", "additionalProperties": False, "properties": {
                "style": {"enum": ["pile", "row", "column", "hand", "stack", "grid", "columns"]},
                "label": {"type": "string"},
                "size": {"enum": ["small", "normal"]},
                "stack": {"enum": ["up", "down"], "description": "columns: which way a column's cards overlap"},
                "min_cells": {"type": "integer", "minimum": 0, "description": "indexed zones: cells always shown"},
                "reverse": {"type": "boolean", "description": "indexed zones: the first cell on the right"},
                "cell_labels": _LAYOUT_TEXTS, "row_labels": _LAYOUT_TEXTS, "col_labels": _LAYOUT_TEXTS}}},
        "vars": {"type": "object", "additionalProperties": False, "properties": {
            "hide": _LAYOUT_NAMES, "labels": {"type": "object", "additionalProperties": {"type": "string"}}}},
        "cards": {"type": "object", "additionalProperties": False, "properties": {
            **_LAYOUT_CARD_FACE["properties"],
            "kinds": {"type": "object", "additionalProperties": _LAYOUT_CARD_FACE}}},
        "colors": {"type": "object", "additionalProperties": {"type": "string"},
                   "description": "CSS colours for values of the colour field"},
        "backs": {"type": "object", "additionalProperties": {
            "type": "object", "additionalProperties": False,
            "properties": {"color": {"type": "string"}, "label": {"type": "string"}, "image": {"type": "string"}}}},
    },
}

GAME_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://rulesvm.dev/schema/game.schema.json",
    "title": "rulesvm game file",
    "type": "object",
    "required": ["id", "name", "players", "rules"],
    "properties": {
        "id": {"type": "string", "pattern": NAME_PATTERN},
        "name": LOCALIZED_TEXT,
        "description": LOCALIZED_TEXT,
        "version": {"type": ["string", "integer"]},
        "players": {
            "oneOf": [
                {"type": "integer", "minimum": 1, "maximum": 16},
                {"type": "object", "required": ["min", "max"], "additionalProperties": False,
                 "properties": {"min": {"type": "integer", "minimum": 1, "maximum": 16},
                                "max": {"type": "integer", "minimum": 1, "maximum": 16},
                                "default": {"type": "integer", "minimum": 1, "maximum": 16}}},
            ]
        },
        "rules": {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}, "minItems": 1}]},
        "cards": {"type": "array", "items": CARD_ENTRY},
        "card_sets": {"type": "array", "items": {"type": "string"}},
        "variants": {"type": "object", "additionalProperties": {"type": "string"},
                     "propertyNames": {"type": "string", "pattern": NAME_PATTERN}},
        "layout": LAYOUT_SCHEMA,
        "max_steps": {"type": "integer", "minimum": 1000, "maximum": MAX_STEPS,
                      "description": f"the step limit of a rule that never asks a decision (1,000 to {MAX_STEPS:,})"},
        "bots": {
            "type": "object", "additionalProperties": False,
            "description": "how the built-in bots play this game (docs/simulate.md)",
            "properties": {
                "playout": {"type": "integer", "minimum": 1, "maximum": 10000,
                            "description": "MCTS playouts stop after this many decisions and the game's `evaluate` "
                                           "judges the position (default: play to the end of the game)"},
            },
        },
        "hands": {
            "type": "object", "required": ["zone"], "additionalProperties": False,
            "description": "cards each player brings, chosen before the game (`rulesvm run --hand SEAT=FILE`)",
            "properties": {
                "zone": {"type": "string", "pattern": NAME_PATTERN, "description": "a per-player zone to put them in"},
                "size": {"type": "integer", "minimum": 1, "description": "exactly this many cards"},
                "unique": {"type": "boolean", "description": "no card id twice"},
                "presets": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}}},
                "seats": {"type": "array", "items": {"type": "string"}, "description": "the preset of each seat"},
            },
        },
    },
    "additionalProperties": False,
}

HAND_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "rulesvm hand: the cards a player brings",
    "oneOf": [
        {"type": "array", "items": {"type": "string"}},
        {"type": "object", "required": ["cards"], "additionalProperties": False,
         "properties": {"name": {"type": "string"}, "cards": {"type": "array", "items": {"type": "string"}}}},
    ],
}

CARD_SET_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://rulesvm.dev/schema/card-set.schema.json",
    "title": "rulesvm card set",
    "type": "object",
    "required": ["cards"],
    "properties": {
        "name": LOCALIZED_TEXT,
        "description": LOCALIZED_TEXT,
        "cards": {"type": "array", "items": CARD_ENTRY},
    },
    "additionalProperties": False,
}

# A scenario file (`*.scenario.yaml`, run by rulesvm.testing): kept with the other file
# schemas so the runner and the editor schemas (rulesvm.tooling) read one definition.
LABEL_OR_INDEX = {"oneOf": [{"type": "string"}, {"type": "integer", "minimum": 1}]}
STEP_KEYS = {
    "choose": LABEL_OR_INDEX,
    "by": {"type": "integer", "minimum": 1},
    "reject": LABEL_OR_INDEX,
    "error": {"type": "string"},
    "expect": {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
    "expect_options": {"type": "array", "items": {"type": "string"}},
    "expect_options_include": {"type": "array", "items": {"type": "string"}},
    "expect_options_exclude": {"type": "array", "items": {"type": "string"}},
    "expect_zone": {"type": "object", "required": ["zone"], "additionalProperties": False,
                    "properties": {"zone": {"type": "string"}, "cards": {"type": "array"},
                                   "count": {"type": "integer"}, "contains": {"type": "array"}}},
    "expect_known": {"type": "object", "required": ["seat"], "additionalProperties": False,
                     "properties": {"seat": {"type": "integer", "minimum": 1}, "cards": {"type": "array"},
                                    "contains": {"type": "array"}}},
    "expect_log": {"type": "string"},
    "expect_no_log": {"type": "string"},
    "expect_event": {"type": "object"},
    "expect_result": {"type": "object", "additionalProperties": False,
                      "properties": {"winner": {"type": ["integer", "null"]}, "ranking": {"type": "array"},
                                     "scores": {"type": "object"}, "outcome": {"type": ["string", "null"]}}},
    "expect_over": {"type": "boolean"},
    "expect_phase": {"type": "string"},
    "expect_decision": {"type": "object", "additionalProperties": False,
                        "properties": {"by": {"type": "integer"}, "prompt": {"type": "string"}}},
    "play_until": {"type": "string"},
    "play_to_end": {"type": "boolean"},
    "max_decisions": {"type": "integer", "minimum": 1},
    "note": {"type": "string"},
}

SCENARIO_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "rulesvm scenario",
    "type": "object",
    "required": ["game", "steps"],
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string"},
        "description": {"type": "string"},
        "game": {"type": "string"},
        "players": {"type": "integer", "minimum": 1},
        "seed": {"type": "integer"},
        "options": {"type": "object"},
        "variants": {"type": "array", "items": {"type": "string"}},
        "card_sets": {"type": "array", "items": {"type": "string"}},
        "at": {"oneOf": [
            {"const": "start", "description": "stop right after the setup block, before the game block runs"},
            {"type": "object", "additionalProperties": False, "required": ["phase"],
             "properties": {"phase": {"type": "string"}, "occurrence": {"type": "integer", "minimum": 1}}}]},
        "setup": {"type": "object", "additionalProperties": False,
                  "properties": {"zones": {"type": "object"}, "vars": {"type": "object"},
                                 "player_vars": {"type": "object"}, "card_vars": {"type": "object"}}},
        "chance": {"type": "object", "additionalProperties": False,
                   "description": "scripted outcomes of random events (docs/scenarios.md#scripted-randomness)",
                   "properties": {
                       "rolls": {"type": "array", "items": {"type": "integer"},
                                 "description": "the next die rolls, in order"},
                       "picks": {"type": "array", "items": {"type": ["string", "integer"]},
                                 "description": "the next `random_pick` results, by label or card id"},
                       "shuffles": {"type": "object", "additionalProperties": {
                           "type": "array", "items": {"type": "string"}},
                           "description": "zone -> card ids: the next shuffle of the zone puts them on top, top first"},
                       "shuffle_into": {"type": "array", "items": {"type": "integer", "minimum": 0},
                                        "description": "the next `shuffle_into` cards: how many cards end above each"},
                       "strict": {"type": "boolean",
                                  "description": "every random event must be scripted (default: others use the seed)"}}},
        "steps": {"type": "array", "items": {"type": "object", "properties": STEP_KEYS,
                                             "additionalProperties": False, "minProperties": 1}},
    },
}

_JSON_TYPES = {"int": {"type": "integer"}, "bool": {"type": "boolean"}, "text": {"type": "string"},
               "ability": ABILITY_REF}


FORMULA = {"type": "object", "required": ["rules"], "additionalProperties": False,
           "properties": {"rules": {"type": "string", "description": "an expression computing the value"}}}


def field_json_schema(type_name: str, arg: str | None) -> dict:
    if type_name == "list":
        return {"type": "array", "items": field_json_schema(arg or "any", None)}
    base = dict(_JSON_TYPES.get(type_name, {}))
    if type_name in ("int", "bool", "text"):
        # A value, or a formula in the rules language (a continuous ability: `{rules: "..."}`).
        return {"oneOf": [base, FORMULA]}
    return base


def card_data_schema(kinds: dict) -> dict:
    """Schema of one game's card entries: `kinds` maps kind name -> {field: (type, arg, required)}."""
    branches = []
    for kind, fields in sorted(kinds.items()):
        props = dict(CARD_ENTRY["properties"])
        props["kind"] = {"const": kind}
        required = ["id", "kind"]
        face_props = {}
        for name, (tname, arg, req) in fields.items():
            props[name] = field_json_schema(tname, arg)
            face_props[name] = field_json_schema(tname, arg)
            if req:
                required.append(name)
        face_props["name"] = LOCALIZED_TEXT     # the name shown while the card lies this way
        props["faces"] = {"type": "object", "propertyNames": {"type": "string", "pattern": FACE_KEY},
                          "additionalProperties": {"type": "object", "properties": face_props,
                                                   "additionalProperties": False}}
        branches.append({"if": {"properties": {"kind": {"const": kind}}},
                         "then": {"properties": props, "required": required, "additionalProperties": False}})
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "card entries of this game",
        "type": "array",
        # Unknown kinds are reported by the loader (with a "did you mean"), not by the schema.
        "items": {"allOf": [CARD_ENTRY] + branches},
    }


def human_path(path) -> str:
    """("cards", 3, "number") -> "cards[3].number"."""
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def _describe(error: jsonschema.ValidationError, prefix=()) -> tuple[str, str | None]:
    v = error.validator
    where = human_path(tuple(prefix) + tuple(error.absolute_path)) or "the file"
    if v == "required":
        missing = error.message.split("'")[1] if "'" in error.message else error.message
        return f"missing required key `{missing}` in {where}", None
    if "propertyNames" in error.schema_path and v == "type":
        key = "null" if error.instance is None else str(error.instance).lower() \
            if isinstance(error.instance, bool) else error.instance
        return (f"a key in `{where}` is not a name: YAML reads it as {_yaml_type(error.instance)} `{key}`",
                "put the key in quotes, or choose a name made of letters, digits and `_`")
    if v == "additionalProperties":
        extra = sorted(set(error.instance) - set(error.schema.get("properties", {})), key=str)
        allowed = ", ".join(f"`{k}`" for k in sorted(error.schema.get("properties", {})))
        close = did_you_mean(extra[0], error.schema.get("properties", {})) if extra else None
        return (f"unknown key `{extra[0] if extra else '?'}` in {where}",
                close or (f"allowed keys here: {allowed}" if allowed else None))
    if v == "type":
        expected = error.validator_value
        expected = " or ".join(expected) if isinstance(expected, list) else expected
        return f"`{where}` should be {_article(expected)}, found {_yaml_type(error.instance)}", None
    if v == "oneOf":
        branches = error.validator_value
        if len(branches) == 2 and branches[1] is FORMULA and "type" in branches[0]:
            return (f"`{where}` should be {_article(branches[0]['type'])}, found {_yaml_type(error.instance)}",
                    "or a formula in the rules language: `{rules: \"...\"}`")
        return f"`{where}` has the wrong form: {_yaml_type(error.instance)} `{_short(error.instance)}`", \
            _oneof_hint(error)
    if v == "pattern":
        if error.validator_value == FACE_KEY:
            return (f"`{_short(error.instance)}` is not a side of a card (in `{where}`)",
                    "write `front` or `back`, optionally with a rotation: `back 180`")
        return f"`{_short(error.instance)}` is not a valid name for `{where}`", \
            "use letters, digits and `_`, starting with a letter"
    if v in ("minimum", "maximum"):
        return f"`{where}` is {error.instance}, {v} allowed is {error.validator_value}", None
    if v == "const":
        return f"`{where}` must be `{error.validator_value}`", None
    if v == "enum":
        return (f"`{_short(error.instance)}` is not allowed for `{where}`",
                "allowed: " + ", ".join(f"`{x}`" for x in error.validator_value))
    if v == "minItems":
        return f"`{where}` must not be empty", None
    return f"`{where}`: {error.message}", None


def _oneof_hint(error) -> str | None:
    forms = []
    for sub in error.validator_value:
        t = sub.get("type")
        if t == "object":
            forms.append("a mapping with keys " + ", ".join(f"`{k}`" for k in sub.get("properties", {})))
        elif t:
            forms.append(_article(t) if isinstance(t, str) else " or ".join(t))
    return "expected " + " or ".join(forms) if forms else None


def _article(t: str) -> str:
    names = {"object": "a mapping", "array": "a list", "string": "a string", "integer": "a whole number",
             "boolean": "true or false", "number": "a number", "null": "empty"}
    return names.get(t, t)


def _yaml_type(value) -> str:
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    if value is None:
        return "nothing"
    return type(value).__name__


def _short(value) -> str:
    text = str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _best_branch(error):
    """For a oneOf failure: the error inside the branch whose type fits the value, if any."""
    def fits(sub):
        t = sub.get("type")
        types = t if isinstance(t, list) else [t]
        value = error.instance
        return any((tt == "object" and isinstance(value, dict)) or (tt == "array" and isinstance(value, list))
                   or (tt == "string" and isinstance(value, str))
                   or (tt == "integer" and isinstance(value, int) and not isinstance(value, bool))
                   for tt in types)
    for i, sub in enumerate(error.validator_value):
        if fits(sub):
            inner = [e for e in error.context if e.schema_path and e.schema_path[0] == i]
            if inner:
                return jsonschema.exceptions.best_match(inner, key=_relevance)
    return error


def _relevance(error):
    """jsonschema's relevance, with the error's path made comparable when it mixes list
    indices and mapping keys (a YAML mapping can have a number as a key: `{en: , 4: x}`)."""
    deeper, path, *rest = jsonschema.exceptions.relevance(error)
    return (deeper, [(0, p, "") if isinstance(p, int) else (1, 0, str(p)) for p in path], *rest)


def _branch_errors(error) -> list:
    """For a oneOf failure: every error inside the branch whose type fits the value (so a
    mapping with a missing key and a misspelt one gets both), else the oneOf error itself."""
    best = _best_branch(error)
    if best is error:
        return [error]
    branch = best.schema_path[0]
    inner = [e for e in error.context if e.schema_path and e.schema_path[0] == branch]
    return sorted(inner, key=lambda e: (list(map(str, e.absolute_path)), e.validator)) or [best]


def validate(data, schema: dict, marks: Marks, code: str = "E010", path_prefix=(),
             label_prefix=None) -> list[Diagnostic]:
    """Every schema violation of `data`, each at its position, deepest first per location.

    `path_prefix` locates `data` inside its file (for positions); `label_prefix` names it in
    messages (default: the same path).
    """
    label_prefix = path_prefix if label_prefix is None else tuple(label_prefix)
    validator = jsonschema.Draft202012Validator(schema)
    diags = []
    seen = set()
    errors = sorted(validator.iter_errors(data), key=lambda e: (list(map(str, e.absolute_path)), e.validator))
    for error in errors:
        # For if/then and allOf, jsonschema reports the leaf errors in `context` or directly.
        leafs = [error] if not error.context else [e for e in error.context]
        if error.validator == "oneOf":
            leafs = _branch_errors(error)
        for leaf in leafs:
            path = path_prefix + tuple(leaf.absolute_path)
            message, hint = _describe(leaf, label_prefix)
            prefer_key = leaf.validator in ("additionalProperties",)
            span = marks.span(path, prefer_key=False)
            if leaf.validator == "additionalProperties":
                extra = sorted(set(leaf.instance) - set(leaf.schema.get("properties", {})), key=str)
                if extra:
                    span = marks.span(path + (extra[0],), prefer_key=True)
            key = (span.line, span.col, message)
            if key in seen:
                continue
            seen.add(key)
            diags.append(Diagnostic(code, message, span, hint))
            del prefer_key
    return diags
