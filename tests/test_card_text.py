"""Card texts (docs/language.md#card-text): a card's, its kind's and each side's `text:`
with `{field}` placeholders filled in at load; `rulesvm info --card/--cards`; every launch
game's cards have text and its game page's table says it; an observation carries the text
of the cards its seat sees, never of the others."""

from __future__ import annotations

import json
import os

from rulesvm import api
from rulesvm.tooling import cardtables

from .conftest import ROOT
from .test_cli import rulesvm

EXPLAINED = os.path.join(ROOT, "tests", "games", "explained", "explained.yaml")
LAUNCH = ["giant_king", "mach_struggle", "ufo_abduction", "alien_attack", "birthdays_fight"]


def test_placeholders_are_filled_from_the_card_and_its_kind():
    game = api.load_game(EXPLAINED)
    cards = {c["id"]: c for c in api.card_catalogue(game)}
    assert cards["one"]["text"] == "A token worth 1."                      # the kind's text
    assert cards["three"]["text"] == "The highest token: three is worth 3, nothing beats it."   # its own


def test_each_side_has_its_text_and_fields(tmp_path):
    (tmp_path / "g.rules").write_text("kind k { n: int }\ngame { end_game(scores: [0]) }\n")
    (tmp_path / "g.yaml").write_text(
        "id: g\nname: G\nplayers: 1\nrules: g.rules\nkinds:\n  k: {text: 'Worth {n}. {{braces}}'}\n"
        "cards:\n  - {id: a, kind: k, n: 1, name: Ace, faces: {back: {n: 9, name: Nine}, front 180: {text: 'Upside {n}.'}}}\n")
    card = api.find_card(api.load_game(str(tmp_path / "g.yaml")).model, "ace")
    assert card["text"] == "Worth 1. {braces}"
    sides = {s["side"]: s for s in card["sides"]}
    assert sides["back"] == {"side": "back", "name": "Nine", "text": "Worth 9. {braces}"}   # the back's own values
    assert sides["front 180"]["text"] == "Upside 1."


def test_info_card_and_cards():
    p = rulesvm("info", "games/giant_king.yaml", "--card", "Joker (5)")
    assert p.returncode == 0
    assert "Joker (5) (joker: wizard, 2 copies)" in p.stdout
    assert "counts as any number from 1 to 5" in p.stdout
    p = rulesvm("info", "games/giant_king.yaml", "--card", "black_knight_3#2", "--json")
    data = json.loads(p.stdout)
    assert data["id"] == "black_knight_3" and data["text"].startswith("Adds 3 to your power. Phalanx")
    p = rulesvm("info", "games/mach_struggle.yaml", "--card", "green_attack")
    assert "front 180 (Maneuver: Hard brake (HB)): Hard brake (HB): your fighter moves two cards back." in p.stdout
    p = rulesvm("info", "games/giant_king.yaml", "--card", "jokr")
    assert p.returncode == 2 and "has no card `jokr`" in p.stderr and "did you mean `joker`?" in p.stderr
    p = rulesvm("info", "games/giant_king.yaml", "--cards")
    assert p.returncode == 0
    lines = p.stdout.splitlines()
    assert lines[0] == "Red 1 (start_red_1, start)"                   # card-file order
    assert "Seven X [3] x2 (seven_x, formation)" in lines


def test_every_launch_card_has_text_and_the_pages_show_it():
    for name in LAUNCH:
        game = api.load_game(os.path.join(ROOT, "games", f"{name}.yaml"))
        with open(os.path.join(ROOT, "docs", "games", f"{name}.md"), encoding="utf-8") as fh:
            page = fh.read()
        for card in api.card_catalogue(game):
            assert card["text"], f"{name}: {card['id']} has no text"
            assert " ".join(card["text"].split()) in page, f"docs/games/{name}.md does not show {card['id']}'s text"
    assert cardtables.main(ROOT, check=True) == 0, "run `python -m rulesvm.tooling.docgen`"


def test_an_observation_carries_only_the_texts_its_seat_sees():
    game = api.load_game(os.path.join(ROOT, "games", "giant_king.yaml"))
    match = api.new_game(game, 4, 3)
    obs = match.observation(0)
    mine = obs["zones"]["hand"]["1"]["cards"]
    assert mine and all(c["text"].startswith("Start card: adds") for c in mine)
    theirs = obs["zones"]["hand"]["2"]
    assert "cards" not in theirs                       # a count only: no card, no text
    assert "Start card" not in json.dumps(obs["zones"]["recruit"])
    # Face-down rewards of a hidden zone never carry text either.
    assert all("text" not in c for c in obs["zones"]["revealed"].get("cards", ()) if c.get("facedown"))
