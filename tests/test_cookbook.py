"""Every recipe of docs/cookbook.md is real rules code that does what the page says.

A recipe is the code block after `<!-- recipe: NAME -->`. The test copies the harness game
`tests/cookbook/NAME/` (game.yaml, harness.rules, check*.yaml) to a temporary folder,
writes the recipe there as snippet.rules (the game reads both rules files), validates the
game (no error, no warning), runs every check file as a scenario, and plays the game with
random choices. Then it breaks the recipe on purpose (MUTATIONS) and requires the checks
to notice, so the assertions are known to bite.
"""

from __future__ import annotations

import glob
import os
import re
import shutil

import pytest

from rulesvm import api
from rulesvm.tooling.formatter import format_text
from rulesvm.testing.scenario import run_scenario

from .helpers import random_playout

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "cookbook.md")
HARNESS = os.path.join(ROOT, "tests", "cookbook")
MARKER = re.compile(r"^<!-- recipe: (\w+) -->$")

# The mechanics the cookbook promises (issue: "how to express common mechanics").
PROMISED = {"draw_up_to", "hand_limit", "market_row", "trick_taking", "deck_reshuffle", "die_table",
            "once_per_game", "effect_stack", "grid", "deal_then_play"}

# recipe -> (text in the recipe, replacement): each must make a check fail.
MUTATIONS = {
    "draw_up_to": ("n - count(hand(p))", "n"),
    "hand_limit": ("count(hand(p)) - limit", "count(hand(p)) - limit - 1"),
    "market_row": ("if c.cost <= p.coins", "if c.cost < p.coins"),
    "trick_taking": ("if c.suit == trump then 2", "if c.suit == trump then 0"),
    "deck_reshuffle": ("shuffle(deck)\n", ""),
    "die_table": ("[0, -2, 0, 0, 1, 1, 4]", "[0, -2, 0, 0, 1, 4, 1]"),
    "once_per_game": ("c.used = true", "c.used = false"),
    "effect_stack": ("let c = top(stack)", "let c = bottom(stack)"),
    "grid": ("all([symbol_at(i, i) == s for i in 0..2])", "all([symbol_at(i, 0) == s for i in 0..2])"),
    "deal_then_play": ("draw(deck, hand(p), 3)", "draw(deck, hand(p), 2)"),
}


def recipes() -> dict[str, str]:
    with open(DOC, encoding="utf-8") as fh:
        lines = fh.read().split("\n")
    out = {}
    for i, line in enumerate(lines):
        m = MARKER.match(line.strip())
        if not m:
            continue
        assert lines[i + 1].startswith("```"), f"docs/cookbook.md:{i + 1}: a recipe marker precedes a code block"
        j = i + 2
        while not lines[j].startswith("```"):
            j += 1
        assert m.group(1) not in out, f"recipe {m.group(1)} twice"
        out[m.group(1)] = "\n".join(lines[i + 2:j]) + "\n"
    return out


RECIPES = recipes()


def assemble(name: str, snippet: str, tmp: str) -> str:
    folder = os.path.join(tmp, name)
    shutil.copytree(os.path.join(HARNESS, name), folder)
    with open(os.path.join(folder, "snippet.rules"), "w", encoding="utf-8") as fh:
        fh.write(snippet)
    return folder


def run_checks(folder: str) -> list[str]:
    """Run every check file of a harness as a scenario; returns the failure messages."""
    failures = []
    checks = sorted(glob.glob(os.path.join(folder, "check*.yaml")))
    assert checks, f"{folder} has no check file"
    for check in checks:
        path = check[:-len(".yaml")] + ".scenario.yaml"
        shutil.copy(check, path)
        result = run_scenario(path)
        if not result.passed:
            failures.append(f"{os.path.basename(check)}: {result.message}")
    return failures


def test_the_cookbook_has_every_promised_recipe_and_each_has_a_harness():
    assert PROMISED <= set(RECIPES), PROMISED - set(RECIPES)
    harnesses = {d for d in os.listdir(HARNESS) if os.path.isdir(os.path.join(HARNESS, d))}
    assert harnesses == set(RECIPES), ("recipes without a harness", set(RECIPES) - harnesses,
                                       "harnesses without a recipe", harnesses - set(RECIPES))
    assert set(MUTATIONS) == set(RECIPES)


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_recipe_validates_and_does_what_the_page_says(name, tmp_path):
    folder = assemble(name, RECIPES[name], str(tmp_path))
    game_file = os.path.join(folder, "game.yaml")
    diags = api.validate_game(game_file)
    assert not diags, [str(d) for d in diags]          # not even a warning
    assert run_checks(folder) == []
    game = api.load_game(game_file)
    lo, hi, _ = game.model.players
    for seed in range(3):
        match = api.new_game(game, hi, seed, debug=True)
        random_playout(match, seed, limit=2000)
        assert match.is_over


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_recipe_is_laid_out_canonically(name):
    # Recipes are meant to be copied: they follow the layout `rulesvm fmt` gives.
    assert format_text(RECIPES[name], f"{name}.rules") == RECIPES[name], f"run the recipe {name} through rulesvm fmt"


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_a_broken_recipe_is_caught(name, tmp_path):
    old, new = MUTATIONS[name]
    snippet = RECIPES[name]
    assert snippet.count(old) == 1, f"`{old}` should occur once in recipe {name}"
    folder = assemble(name, snippet.replace(old, new), str(tmp_path))
    diags = [d for d in api.validate_game(os.path.join(folder, "game.yaml")) if d.is_error]
    assert diags or run_checks(folder), f"recipe {name} still passes its checks with `{new}` instead of `{old}`"
