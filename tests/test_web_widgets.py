"""The table's widgets (`layout.widgets`: dsl/widgets.py, web/widgets.py; docs/web.md#widgets)
and the web log's wording (web/views.py): checks with positions, bounds resolved from the
game's options, where each widget is drawn, and a choice the rules narrate logged once.

Drawing them in a browser is tested in test_web_e2e.py.
"""

from __future__ import annotations

import os

import pytest

from rulesvm import api
from rulesvm.web.layout import table_layout
from rulesvm.web.views import PublicLog

from .conftest import ROOT

RACE = os.path.join(ROOT, "tests", "games", "widgets", "race.yaml")
LAUNCH = ["giant_king", "mach_struggle", "birthdays_fight", "ufo_abduction", "alien_attack"]


def _race_with(tmp_path, widgets: str, placement: str = "") -> str:
    """The dice race with other widgets (its rules file beside it)."""
    (tmp_path / "race.rules").write_text(open(os.path.join(os.path.dirname(RACE), "race.rules")).read())
    (tmp_path / "race.yaml").write_text("id: dice_race\nname: Dice race\nplayers: 2\nrules: race.rules\n"
                                        "cards:\n  - {id: token, kind: token}\nlayout:\n" + placement
                                        + "  widgets:\n" + widgets)
    return str(tmp_path / "race.yaml")


def test_widgets_resolve_their_bounds_and_know_where_they_are_drawn():
    game = api.load_game(RACE)
    layout = table_layout(game.model, game.options)
    w = layout["widgets"]
    assert (w["track"]["from"], w["track"]["to"]) == (0, 12)
    assert w["track"]["markers"] == [{"var": "square", "per_player": True}]
    assert w["lead"]["markers"][0] == {"at": 0, "label": "Player 2", "per_player": False}
    assert w["die"] == {"name": "die", "style": "die", "label": "Last roll", "area": "player", "var": "last_roll",
                        "per_player": True, "sides": 6}
    assert layout["centre"]["rows"] == [["track"], ["lead"]] and layout["player"]["rows"] == [["die"]]
    # `round` is not placed: it is drawn with the centre's variables; drawn variables are no chips.
    assert layout["vars"]["widgets"] == {"global": ["round"], "player": []}
    assert layout["vars"]["global"] == [] and layout["vars"]["player"] == []
    longer = api.load_game(RACE, set_pairs=["goal=20"])
    assert table_layout(longer.model, longer.options)["widgets"]["track"]["to"] == 20


def test_the_launch_games_draw_their_races_and_counters_with_widgets():
    ms = api.load_game(os.path.join(ROOT, "games", "mach_struggle.yaml"), variants=["wide_track"])
    race = table_layout(ms.model, ms.options)["widgets"]["race"]
    assert (race["from"], race["to"]) == (-3, 3) and [m.get("var") for m in race["markers"]] == [None, "gap"]
    aa = api.load_game(os.path.join(ROOT, "games", "alien_attack.yaml"))
    assert table_layout(aa.model, aa.options)["widgets"]["mothership_row"]["labels"][1] == "launch line"
    for name in LAUNCH:
        game = api.load_game(os.path.join(ROOT, "games", f"{name}.yaml"))
        layout = table_layout(game.model, game.options)
        if name != "ufo_abduction":
            assert layout["widgets"], f"{name} has no widgets"


def test_widget_mistakes_are_reported_with_positions(tmp_path):
    path = _race_with(tmp_path,
                      "    a: {style: track, from: 0, to: gaol, markers: [{var: squre}]}\n"
                      "    b: {style: counter, var: last_roll}\n"
                      "    c: {style: die, var: round}\n"
                      "    d: {style: track, from: 5, to: 5, markers: [{at: 1}]}\n",
                      "  centre: [[a, b]]\n  player: [[c]]\n")
    diags = api.validate_game(path)
    got = sorted((d.code, d.message) for d in diags)
    messages = " | ".join(m for _, m in got)
    assert [c for c, _ in got].count("E090") == 2 and "unknown integer option `gaol`" in messages
    assert "unknown variable `squre` in widget `a`" in messages
    assert any(d.hint == "did you mean `goal`?" for d in diags)
    assert any(d.hint == "did you mean `square`?" for d in diags)
    assert "widget `b` belongs in `layout.player`" in messages and "widget `c` belongs in `layout.centre`" in messages
    assert "`from` must be below `to`" in messages
    assert all(d.span.line > 6 for d in diags), "each problem points at its line in the layout"
    # The schema: a track needs its bounds and markers, a counter its variable.
    no_markers = _race_with(tmp_path, "    a: {style: track, from: 0, to: 3}\n")
    assert [d.code for d in api.validate_game(no_markers)] == ["E010"]
    assert [d.code for d in api.validate_game(_race_with(tmp_path, "    a: {style: counter}\n"))] == ["E010"]
    placed = _race_with(tmp_path, "    a: {style: counter, var: round}\n", "  centre: [a]\n")
    assert api.validate_game(placed) == []
    clash = api.validate_game(_race_with(tmp_path, "    box: {style: counter, var: round}\n"))
    assert [d.code for d in clash] == ["E091"] and "has the name of a zone" in clash[0].message


def test_a_text_variable_cannot_be_a_track(tmp_path):
    (tmp_path / "t.rules").write_text("kind token { }\nvar name: text = \"x\"\ngame { end_game(scores: [1]) }\n")
    (tmp_path / "t.yaml").write_text("id: t\nname: T\nplayers: 1\nrules: t.rules\ncards:\n  - {id: a, kind: token}\n"
                                     "layout:\n  widgets:\n    n: {style: die, var: name}\n")
    diags = api.validate_game(str(tmp_path / "t.yaml"))
    assert [d.code for d in diags] == ["E092"] and "`name` is of type text" in diags[0].message


# ---------------------------------------------------------------------- the log's wording

@pytest.mark.parametrize("label,after,shown", [
    ("Blue 1", "Player 2 plays Blue 1", False),         # the rules say it: not twice
    ("End turn", "Player 3 plays Yellow 3", True),      # the rules say something else
    ("3", "Player 2 draws 3 cards", True),              # a number is never "recognised" in a sentence
])
def test_a_choice_the_rules_narrate_is_logged_once(label, after, shown):
    log = PublicLog()
    log.entries.append({"kind": "decision", "player": 2, "label": label, "secret": False, "prompt": "Play a card",
                        "hidden_from": [], "to": None})
    log.sink({"type": "log", "text": after})
    texts = [e["text"] for e in log.for_seat(0)]
    assert texts == ([f"Player 2 - Play a card: {label}" if label.isdigit() else f"Player 2: {label}"] if shown
                     else []) + [after]


def test_a_chain_of_picks_narrated_at_its_end_is_logged_once():
    log = PublicLog()
    for label in ("Lily", "Spitz", "Attack with these"):
        log.entries.append({"kind": "decision", "player": 1, "label": label, "secret": False, "prompt": "Attack?",
                            "hidden_from": [], "to": None})
    log.sink({"type": "log", "text": "Player 1 attacks with Lily, Spitz"})
    log.entries.append({"kind": "decision", "player": 2, "label": "Spitz", "secret": False, "prompt": "Block?",
                        "hidden_from": [], "to": None})
    log.sink({"type": "log", "text": "Player 2 takes 1 damage"})
    assert [e["text"] for e in log.for_seat(1)] == ["Player 1: Attack with these", "Player 1 attacks with Lily, Spitz",
                                                    "Player 2: Spitz", "Player 2 takes 1 damage"]


def test_a_narration_only_one_seat_reads_hides_the_choice_only_for_it():
    log = PublicLog()
    log.entries.append({"kind": "decision", "player": 1, "label": "Joker", "secret": False, "prompt": "Take",
                        "hidden_from": [], "to": None})
    log.sink({"type": "log", "text": "You take the Joker", "to": 1})
    assert [e["text"] for e in log.for_seat(0)] == ["You take the Joker"]
    assert [e["text"] for e in log.for_seat(1)] == ["Player 1: Joker"]
