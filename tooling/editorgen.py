"""Generated editor support: the word lists of the TextMate grammar of `.rules` files
(editors/rulesvm.tmLanguage.json and its VS Code copy) come from the language itself, so
that a new primitive, built-in name, type or keyword is highlighted without anyone
remembering to add it.

Built-in functions, names and types come from the primitive registry and dsl/types.py;
keywords come from the Lark grammar (dsl/grammar.lark), sorted by the rules they appear
in. The rest of the TextMate grammar (its structure, declarations, operators and
punctuation) is written by hand in editors/rulesvm.tmLanguage.json; regenerating replaces
only the alternation of words inside the patterns named below and makes the VS Code copy.
`python -m rulesvm.tooling.docgen` writes these files with the language reference, and
`python -m rulesvm.tooling.docgen --check` (run by the tests) says when they are out of date.
"""

from __future__ import annotations

import json
import os
import re

from rulesvm.dsl.parser import _lark
from rulesvm.dsl.primitives import ABILITY_NAMES, BUILTIN_ZONES, CONSTANTS, PRIMITIVES
from rulesvm.dsl.types import SIMPLE

ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))    # through the rulesvm/tooling link
GRAMMAR = os.path.join("editors", "rulesvm.tmLanguage.json")
COPIES = (os.path.join("editors", "vscode", "syntaxes", "rulesvm.tmLanguage.json"),)
COMMAND = "python -m rulesvm.tooling.docgen"

# Keywords the hand-written part of the grammar gives a scope of their own.
OWN_SCOPE = ("let", "in")
# A pattern's word list: the first `\b(a|b|c)\b` of its match.
_WORDS = re.compile(r"\\b\([A-Za-z_|]+\)\\b")
# The words a declaration pattern starts with: `\b(proc|func)\s+...`.
_OPENING = re.compile(r"\\b\(([A-Za-z_|]+)\)")


def grammar_keywords() -> dict[str, list[str]]:
    """The language's keywords by role, read from the Lark grammar: words that open a
    declaration, literal values, word operators, and every other keyword (control)."""
    lark = _lark()
    words = {t.name: t.pattern.value for t in lark.terminals
             if t.pattern.type == "str" and t.pattern.value.isalpha()}
    declaration, literal, operator = set(), set(), set()
    for rule in lark.rules:
        symbols = [words[s.name] for s in rule.expansion if s.name in words]
        first = rule.expansion[0].name if rule.expansion else None
        if rule.origin.name.endswith("_decl") and first in words:
            declaration.add(words[first])
        if (rule.alias or "").endswith("_lit") and len(rule.expansion) == 1 and symbols:
            literal.update(symbols)
        if (rule.alias or "").endswith("_op") or rule.origin.name == "comp_op":
            operator.update(symbols)
    control = set(words.values()) - declaration - literal - operator - set(OWN_SCOPE)
    return {"declaration": sorted(declaration), "literal": sorted(literal),
            "operator": sorted(operator - set(OWN_SCOPE)), "control": sorted(control)}


def word_lists() -> dict[str, list[str]]:
    """Scope name of a pattern -> the words its match lists."""
    keywords = grammar_keywords()
    return {
        "keyword.control.rules": keywords["control"],
        "keyword.operator.logical.rules": keywords["operator"],
        "constant.language.rules": keywords["literal"],
        "variable.language.rules": [*ABILITY_NAMES, *CONSTANTS, *BUILTIN_ZONES],
        "support.type.rules": list(SIMPLE),
        "support.function.builtin.rules": sorted(PRIMITIVES),
    }


def _scope_of(pattern: dict) -> str | None:
    """A pattern's scope: its name, or the name of its one capture (`support.type`)."""
    if "name" in pattern:
        return pattern["name"]
    captures = pattern.get("captures", {})
    return captures["1"].get("name") if list(captures) == ["1"] else None


def _declared_words(grammar: dict) -> set[str]:
    found = set()
    for p in grammar["repository"]["declarations"]["patterns"]:
        m = _OPENING.match(p["match"])
        if m:
            found.update(m.group(1).split("|"))
    return found


def regenerate(text: str) -> str:
    """The grammar file's text with its word lists brought up to date."""
    grammar = json.loads(text)
    lists = word_lists()
    seen = set()
    for pattern in grammar["repository"]["expression"]["patterns"]:
        scope = _scope_of(pattern)
        if scope in lists and "match" in pattern and _WORDS.search(pattern["match"]):
            alternation = "\\b(" + "|".join(lists[scope]) + ")\\b"
            pattern["match"] = _WORDS.sub(lambda _: alternation, pattern["match"], count=1)
            seen.add(scope)
    missing = sorted(set(lists) - seen)
    if missing:
        raise ValueError(f"{GRAMMAR} has no word-list pattern for {', '.join(missing)}")
    undeclared = sorted(set(grammar_keywords()["declaration"]) - _declared_words(grammar))
    if undeclared:
        raise ValueError(f"{GRAMMAR}: add a declarations pattern for {', '.join(undeclared)}")
    return json.dumps(grammar, indent=2) + "\n"


def expected_files(root: str = ROOT) -> dict[str, str]:
    """Path relative to root -> the text each generated editor file should have."""
    with open(os.path.join(root, GRAMMAR), encoding="utf-8") as fh:
        text = regenerate(fh.read())
    return {path: text for path in (GRAMMAR, *COPIES)}


def main(argv: list[str], root: str = ROOT) -> int:
    """Write the editor files (or, with --check, list the stale ones and return 1)."""
    stale = []
    for path, text in expected_files(root).items():
        full = os.path.join(root, path)
        if os.path.exists(full):
            with open(full, encoding="utf-8") as fh:
                if fh.read() == text:
                    continue
        if "--check" in argv:
            stale.append(path)
        else:
            with open(full, "w", encoding="utf-8") as fh:
                fh.write(text)
    for path in stale:
        print(f"{path} is out of date: run `{COMMAND}`")
    return 1 if stale else 0
