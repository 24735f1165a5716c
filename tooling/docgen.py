"""Generated documentation: the built-in reference of docs/language.md comes from the
primitive registry, so a primitive cannot be added without being documented. The editor
grammar's word lists are generated at the same time (tooling/editorgen.py), and so are the
card tables of the game pages (tooling/cardtables.py).

    python -m rulesvm.tooling.docgen            # rewrite the generated part of docs/language.md and the editor files
    python -m rulesvm.tooling.docgen --check    # exit 1 if any is out of date (the test suite does this)
"""

from __future__ import annotations

import os
import sys

from rulesvm.dsl.primitives import (BUILTIN_ZONES, CARD_PROPERTIES, CONSTANTS, OPTION_MODIFIERS,
                                    PLAYER_PROPERTIES, PRIMITIVES, VAR_MODIFIERS, ZONE_MODIFIERS)
from rulesvm.tooling import cardtables, editorgen

BEGIN = "<!-- BEGIN GENERATED: primitives (python -m rulesvm.tooling.docgen) -->"
END = "<!-- END GENERATED: primitives -->"
CATEGORIES = [("function", "Functions (they compute a value and change nothing)"),
              ("random", "Randomness (from the game's seeded generator)"),
              ("action", "Actions (statements that change the game)"),
              ("decision", "Decisions (the game pauses until an agent answers)")]


# What a registry flag means to someone writing rules (the category, and so whether it is a
# statement only, is told by the section it is in).
TRAITS = [("moves_cards", "moves cards: `moved` triggers fire"),
          ("random", "draws from the game's seeded generator"),
          ("pure", "depends only on its arguments (not on the game)"),
          ("runs_ability", "runs a card's ability, which may pause for decisions"),
          ("turns_card", "changes only how the card lies")]


def primitive_traits(p) -> str:
    """The registry's flags of a primitive as one italic line, or "" when it has none."""
    said = [text for flag, text in TRAITS if getattr(p, flag)]
    text = "; ".join(said)
    return f"*{text[:1].upper()}{text[1:]}.*" if said else ""


def primitives_markdown() -> str:
    out = [BEGIN, ""]
    for cat, title in CATEGORIES:
        out.append(f"### {title}")
        out.append("")
        for p in sorted((p for p in PRIMITIVES.values() if p.category == cat), key=lambda p: p.name):
            out.append(f"#### `{p.signature}`")
            out.append("")
            out.append(p.doc)
            traits = primitive_traits(p)
            if traits:
                out.append("")
                out.append(traits)
            params = [q for q in p.params if q.doc]
            if params:
                out.append("")
                for q in params:
                    out.append(f"- `{q.name}`: {q.doc}")
            out.append("")
            out.append("```")
            out.append(p.example)
            out.append("```")
            out.append("")
    out.append("### Built-in names")
    out.append("")
    out.append("| name | type | meaning |")
    out.append("| --- | --- | --- |")
    for name, (t, doc) in CONSTANTS.items():
        out.append(f"| `{name}` | {t} | {doc} |")
    for name, doc in BUILTIN_ZONES.items():
        out.append(f"| `{name}` | zone | {doc} |")
    out.append("")
    out.append("### Card properties (`c.name`)")
    out.append("")
    out.append("| property | type | meaning |")
    out.append("| --- | --- | --- |")
    for name, (t, doc) in CARD_PROPERTIES.items():
        out.append(f"| `{name}` | {t} | {doc} |")
    out.append("")
    out.append("### Player properties (`p.name`)")
    out.append("")
    out.append("| property | type | meaning |")
    out.append("| --- | --- | --- |")
    for name, (t, doc) in PLAYER_PROPERTIES.items():
        out.append(f"| `{name}` | {t} | {doc} |")
    for title, table in (("Zone modifiers", ZONE_MODIFIERS), ("Variable modifiers", VAR_MODIFIERS),
                         ("Option modifiers", OPTION_MODIFIERS)):
        out.append("")
        out.append(f"### {title}")
        out.append("")
        out.append("| modifier | meaning |")
        out.append("| --- | --- |")
        for name, doc in table.items():
            out.append(f"| `{name}` | {doc} |")
    out.append("")
    out.append(END)
    return "\n".join(out)


def language_doc_path() -> str:
    # realpath: this file is the repository's tooling/docgen.py, imported through the
    # rulesvm/tooling link; docs/ is beside tooling/.
    return os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "docs", "language.md")


def regenerate(text: str) -> str:
    start, end = text.index(BEGIN), text.index(END) + len(END)
    return text[:start] + primitives_markdown() + text[end:]


def main(argv: list[str]) -> int:
    if editorgen.main(argv):
        return 1
    if cardtables.main(os.path.dirname(os.path.dirname(language_doc_path())), "--check" in argv):
        return 1
    path = language_doc_path()
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    new = regenerate(text)
    if "--check" in argv:
        if new != text:
            print(f"{path} is out of date: run `python -m rulesvm.tooling.docgen`")
            return 1
        return 0
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(new)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
