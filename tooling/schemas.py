"""The JSON Schemas of rulesvm's YAML files, for editors (`rulesvm schema`).

The schemas themselves live beside the code that validates with them (dsl/schema.py,
also the scenario files' schema, and dsl/variants.py); this module names them by file kind,
derives a game's own card schema from the card kinds its rules declare, and writes the
copies kept in the repository's `schema/` folder, which YAML files point their editor at:

    # yaml-language-server: $schema=../schema/game.schema.json
"""

from __future__ import annotations

import copy
import json
import os

from rulesvm.dsl.diagnostics import DiagnosticError
from rulesvm.dsl.loader import GameLoader
from rulesvm.dsl.schema import CARD_SET_SCHEMA, GAME_SCHEMA, HAND_SCHEMA, SCENARIO_SCHEMA, card_data_schema
from rulesvm.dsl.variants import VARIANT_SCHEMA

KINDS = ("game", "card-set", "variant", "scenario", "hand")
# The file kinds whose cards a game's own card schema can describe.
CARD_KINDS = ("game", "card-set", "variant")
BASE_URL = "https://rulesvm.dev/schema/"


def file_name(kind: str) -> str:
    return f"{kind}.schema.json"


def schema_for(kind: str) -> dict:
    """The schema of one kind of file (a copy, with its `$id`)."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind of file `{kind}`: one of {', '.join(KINDS)}")
    base = {"game": GAME_SCHEMA, "card-set": CARD_SET_SCHEMA, "variant": VARIANT_SCHEMA,
            "hand": HAND_SCHEMA, "scenario": SCENARIO_SCHEMA}[kind]
    schema = copy.deepcopy(base)
    out = {"$schema": schema.pop("$schema", "https://json-schema.org/draft/2020-12/schema"),
           "$id": schema.pop("$id", BASE_URL + file_name(kind))}
    out.update(schema)
    return out


def game_schema_for(kind: str, game_id: str, kinds: dict) -> dict:
    """The schema of a `kind` file (game, card set or variant) whose cards are typed by one
    game's card kinds: `kinds` maps kind name -> {field: (type, arg, required)}."""
    if kind not in CARD_KINDS:
        raise ValueError(f"a game's card kinds only shape files with cards ({', '.join(CARD_KINDS)}), "
                         f"not `{kind}` files")
    schema = schema_for(kind)
    del schema["$id"]
    items = card_data_schema(kinds)["items"]
    schema["title"] = f"{schema['title']}, with the cards of `{game_id}`"
    props = schema["properties"]
    if kind == "variant":
        props["cards"]["properties"]["add"]["items"] = items
        props["cards"]["properties"]["replace"]["items"] = items
    else:
        props["cards"]["items"] = items
    return schema


def to_text(schema: dict) -> str:
    """The text of a schema file: indented JSON, keys in the order the schema gives them."""
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def expected_files() -> dict[str, str]:
    """File name -> text of every schema file kept in the repository's `schema/` folder."""
    return {file_name(k): to_text(schema_for(k)) for k in KINDS}


def write_all(folder: str) -> list[str]:
    """Write every schema file into `folder` (created if needed); returns the paths written."""
    os.makedirs(folder, exist_ok=True)
    written = []
    for name, text in expected_files().items():
        path = os.path.join(folder, name)
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        written.append(path)
    return written


def game_card_kinds(path: str) -> tuple[str, dict]:
    """A game's id and its card kinds (name -> {field: (type, arg, required)}), read from the
    game file and its rules only: mistakes in the card data do not matter here.

    Raises DiagnosticError for a game file or rules that cannot be read.
    """
    loader = GameLoader(path)
    data, marks = loader.read_game_file()
    files = loader.parse_rules_files(data, marks)
    kinds: dict = {}
    if not loader.reporter.has_errors:
        loader.checker.collect(files)
        kinds = loader.check_kinds_for_data()
    errors = [d for d in loader.reporter.diagnostics if d.is_error]
    if errors:
        raise DiagnosticError(errors)
    return data["id"], kinds
