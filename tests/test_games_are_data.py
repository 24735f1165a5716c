"""Games are data: nothing under dsl/, interpreter/, cli/, web/ or lsp/ may name a launch game, one of its
cards or one of its game-specific concepts (comments and docstrings included)."""

from __future__ import annotations

import os
import re

import yaml

from .conftest import ROOT, game_files

ENGINE_DIRS = ("dsl", "interpreter", "cli", "web", "lsp")   # web: the web table; lsp: the language server
# Concepts of the launch games that a generic engine has no reason to name.
CONCEPTS = [r"giant.?king", r"mach.?struggle", r"birthday", r"alien.?attack", r"mothership", r"\bufo",
            r"abduct", r"decoy", r"bentler", r"phalanx", r"cannon", r"\bbrains\b", r"fighter", r"maneuver",
            r"wizard", r"black.?knight", r"final.?battle", r"ジャイアント", r"マッハ", r"エイリアン"]
# Words so common that a card named after them cannot be told apart from ordinary code.
GENERIC = {"red", "blue", "green", "yellow", "extra", "drop", "joker", "straight", "card", "draw",
           "fire", "wind", "sword", "flag", "fog", "range", "attack", "roll", "cow", "one", "two", "pair",
           "three", "four", "five", "seven", "double", "power", "invisible", "start",
           "alpha", "beta", "gamma", "delta", "repair", "shield", "mine", "space", "danger", "level"}


def _terms() -> list[str]:
    terms = set()
    for path in game_files():
        with open(path, encoding="utf-8") as fh:
            data = yaml.safe_load(fh)
        names = [data.get("id", "")]
        name = data.get("name", {})
        names += list(name.values()) if isinstance(name, dict) else [name]
        for card in data.get("cards", []):
            cname = card.get("name", {})
            names += list(cname.values()) if isinstance(cname, dict) else [cname]
            names.append(card.get("id", "").replace("_", " "))
        for n in names:
            n = re.sub(r"[\[\(].*?[\]\)]|\d+|#", " ", str(n)).strip().lower()
            n = re.sub(r"\s+", " ", n)
            words = n.split()
            if not words or all(w in GENERIC for w in words):
                continue
            if len(n) >= 5 or not n.isascii():
                terms.add(n)
    return sorted(terms)


def _engine_files():
    for d in ENGINE_DIRS:
        for root, _, files in os.walk(os.path.join(ROOT, d)):
            for f in files:
                if f.endswith((".py", ".lark", ".js", ".html", ".css")):
                    yield os.path.join(root, f)


def test_engine_names_no_launch_game():
    patterns = [re.compile(p, re.IGNORECASE) for p in CONCEPTS]
    patterns += [re.compile(r"(?<![a-z])" + re.escape(t).replace(r"\ ", r"[\s_-]?") + r"(?![a-z])", re.IGNORECASE)
                 for t in _terms()]
    hits = []
    for path in _engine_files():
        with open(path, encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                for p in patterns:
                    if p.search(line):
                        hits.append(f"{os.path.relpath(path, ROOT)}:{lineno}: {line.strip()}  [{p.pattern}]")
    assert not hits, "the engine names game-specific things:\n" + "\n".join(hits)


def test_the_check_would_catch_a_game_name(tmp_path):
    # Guard the guard: the patterns must match the launch games' own names and cards.
    terms = _terms()
    assert "black knight" in terms
    line = "if card.name == 'Black Knight': bonus += 1"
    assert re.search(r"black.?knight", line, re.IGNORECASE)
