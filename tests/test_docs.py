"""Documentation that is generated or promised stays true."""

from __future__ import annotations

import os

from rulesvm.tooling import docgen
from rulesvm.dsl.primitives import PRIMITIVES

from .conftest import ROOT


def test_language_reference_is_generated_from_the_registry():
    with open(docgen.language_doc_path(), encoding="utf-8") as fh:
        text = fh.read()
    assert docgen.regenerate(text) == text, "run `python -m rulesvm.tooling.docgen`"
    for p in PRIMITIVES.values():
        assert f"`{p.signature}`" in text, f"primitive {p.name} is not documented"


def test_readme_starts_with_the_two_commands():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    block = lines[lines.index("```bash") + 1:lines.index("```")]
    assert len(block) == 2
    assert block[0].endswith("rulesvm run games/giant_king.yaml")
    assert "pytest" in block[1]
    with open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8") as fh:
        assert block[1] in fh.read()


def test_every_game_has_a_doc_page_with_interpretations():
    from .conftest import game_files
    for path in game_files():
        gid = os.path.splitext(os.path.basename(path))[0]
        doc = os.path.join(ROOT, "docs", "games", f"{gid}.md")
        assert os.path.exists(doc), doc
        with open(doc, encoding="utf-8") as fh:
            assert "## Interpretations" in fh.read()
