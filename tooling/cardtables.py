"""The card tables of the game pages (docs/games/*.md), generated from each game's card
texts (docs/language.md#card-text), so a page always says what the cards say.

A page opts in with the two marker lines below; `python -m rulesvm.tooling.docgen` rewrites
what is between them and `--check` fails when a table is out of date (tests/test_docs.py).
The game of docs/games/NAME.md is games/NAME.yaml.
"""

from __future__ import annotations

import os

from rulesvm import api

BEGIN = "<!-- BEGIN GENERATED: card texts (python -m rulesvm.tooling.docgen) -->"
END = "<!-- END GENERATED: card texts -->"


def _cell(text: str) -> str:
    return " ".join(text.replace("|", "\\|").split())


def card_table(game: api.Game) -> str:
    """Every card in card-file order: name, id, copies, rule text; a row per side with its own text."""
    rows = ["| card | id | copies | text |", "| --- | --- | --- | --- |"]
    for card in api.card_catalogue(game):
        rows.append(f"| {_cell(card['name'])} | `{card['id']}` | {card['count']} | {_cell(card['text']) or '—'} |")
        for side in card["sides"]:
            if side["text"] and side["text"] != card["text"]:
                rows.append(f"| ↳ {side['side']}: {_cell(side['name'])} | | | {_cell(side['text'])} |")
    return "\n".join(rows)


def regenerate(text: str, game: api.Game) -> str:
    start, end = text.index(BEGIN), text.index(END) + len(END)
    return text[:start] + BEGIN + "\n\n" + card_table(game) + "\n\n" + END + text[end:]


def pages(root: str) -> list[tuple[str, str]]:
    """(page, game file) for every game page with the markers under `root`/docs/games."""
    folder = os.path.join(root, "docs", "games")
    out = []
    for name in sorted(os.listdir(folder)):
        page = os.path.join(folder, name)
        game = os.path.join(root, "games", name[:-3] + ".yaml")
        with open(page, encoding="utf-8") as fh:
            if name.endswith(".md") and BEGIN in fh.read() and os.path.isfile(game):
                out.append((page, game))
    return out


def main(root: str, check: bool) -> int:
    """Rewrite (or with `check`, compare) every page's table; 1 if one is out of date."""
    stale = 0
    for page, game_path in pages(root):
        with open(page, encoding="utf-8") as fh:
            text = fh.read()
        new = regenerate(text, api.load_game(game_path))
        if new == text:
            continue
        if check:
            print(f"{page} is out of date: run `python -m rulesvm.tooling.docgen`")
            stale = 1
        else:
            with open(page, "w", encoding="utf-8") as fh:
                fh.write(new)
    return stale
