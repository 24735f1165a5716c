"""House-rule variants: options, card and rule changes, their errors, order, and the diff."""

from __future__ import annotations

import json
import os

import pytest

from rulesvm import api
from rulesvm.dsl.diagnostics import DiagnosticError
from rulesvm.dsl.loader import VariantNotFound

from .conftest import ROOT
from .helpers import random_playout
from .test_cli import GK, rulesvm

GK_PATH = os.path.join(ROOT, GK)
V = os.path.join(ROOT, "tests", "variants")


def _diags(*variants):
    with pytest.raises(DiagnosticError) as info:
        api.load_game(GK_PATH, variants=[os.path.join(V, v) for v in variants])
    return info.value.diagnostics


def test_named_variants_of_the_game():
    game = api.load_game(GK_PATH, variants=["three_laps"])
    assert game.program.options["laps"] == 3
    assert game.model.applied_variants == ["three_laps"]
    fair = api.load_game(GK_PATH, variants=["rewards_for_all"])
    match = api.new_game(fair, 4, 3)
    assert len(match.state.zones[fair.program.zone_index("rewards")]) == 4   # one per player holding cards
    assert not any(c.id == "four_card" for c in fair.model.cards)
    assert next(c for c in fair.model.cards if c.id == "seven_x").count == 3


def test_every_kind_of_change_applies():
    game = api.load_game(GK_PATH, variants=[os.path.join(V, "everything.yaml")])
    m, prog = game.model, game.program
    assert prog.options["laps"] == 1 and prog.options["max_cards_per_turn"] == 2
    ids = {c.id: c for c in m.cards}
    assert "golden_knight" in ids and ids["golden_knight"].fields["ability"] == "shine"
    assert "seven_x" not in ids
    assert ids["drop"].fields["number"] == 8 and ids["drop"].count == 1
    assert ids["joker"].fields["number"] == 4 and ids["black_knight_1"].count == 4
    assert "shine" in m.procs and "count_fights" in m.procs or any(
        t.proc.name == "count_fights" for t in m.triggers)
    assert not any(t.proc.name == "revealed_rewards_log" for t in m.triggers)
    lines = []
    match = api.new_game(game, 4, 2, sink=lambda r: lines.append(r))
    random_playout(match, 2)
    logs = [r["text"] for r in lines if r["type"] == "log"]
    assert "A fight begins" in logs
    assert not any(t.startswith("Rewards:") for t in logs)
    assert sum(1 for t in logs if t.startswith("--- Round")) >= 2


def test_cli_set_overrides_a_variants_option():
    game = api.load_game(GK_PATH, variants=["three_laps"], set_pairs=["laps=5"])
    assert game.program.options["laps"] == 5


def test_order_of_variants_last_one_wins_for_options():
    a = api.load_game(GK_PATH, variants=["three_laps", os.path.join(V, "laps_four.yaml")])
    b = api.load_game(GK_PATH, variants=[os.path.join(V, "laps_four.yaml"), "three_laps"])
    assert a.program.options["laps"] == 4 and b.program.options["laps"] == 3


def test_variant_applied_twice_is_an_error():
    diags = _diags("laps_four.yaml", "laps_four.yaml")
    assert [d.code for d in diags] == ["E065"]


def test_missing_parts_are_reported_with_positions_all_at_once():
    diags = _diags("missing_parts.yaml")
    got = {(d.code, d.span.line, d.span.col) for d in diags}
    assert got == {("E061", 14, 12), ("E061", 12, 5), ("E063", 13, 5), ("E068", 7, 12), ("E068", 9, 5),
                   ("E064", 4, 3), ("E064", 5, 9)}
    assert all(d.span.file.endswith("missing_parts.yaml") for d in diags)
    replace = next(d for d in diags if d.code == "E061" and d.span.line == 12)
    assert replace.hint == "did you mean `take_rewards`?"
    kind = next(d for d in diags if d.code == "E063")
    assert kind.notes and kind.notes[0][1].file.endswith("giant_king.rules")


def test_a_variant_that_breaks_the_game_is_a_validation_error():
    diags = _diags("breaks_game.yaml")
    assert [(d.code, d.span.line, d.span.col) for d in diags] == [("E303", 5, 34)]


def test_variant_for_another_game():
    diags = _diags("other_base.yaml")
    assert [d.code for d in diags] == ["E067"]


def test_unknown_variant_name():
    with pytest.raises(VariantNotFound, match="variants: four_card_two_pair, rewards_for_all, three_laps"):
        api.load_game(GK_PATH, variants=["four_laps"])
    p = rulesvm("run", GK, "--variant", "four_laps")
    assert p.returncode == 2 and "unknown variant `four_laps`" in p.stderr


@pytest.mark.slow
def test_cli_run_info_diff_validate_with_variants(tmp_path):
    run = rulesvm("run", GK, "--variant", "three_laps", "--seed", "1", "--json", "--quiet")
    assert run.returncode == 0 and json.loads(run.stdout)["options"]["laps"] == 3
    info = json.loads(rulesvm("info", GK, "--json").stdout)
    assert {v["name"] for v in info["variants"]} == {"three_laps", "rewards_for_all", "four_card_two_pair"}
    assert all(v["description"] for v in info["variants"])
    d = rulesvm("diff", GK, "--variant", "tests/variants/everything.yaml")
    assert d.returncode == 0
    for fragment in ("laps: 2 -> 1", "+ golden_knight", "- seven_x", "~ joker: number 5 -> 4",
                     "replaced function `reward_count`", "+func reward_count() -> int = 1",
                     "removed trigger `revealed_rewards_log`", "added ability `shine`"):
        assert fragment in d.stdout, fragment
    dj = json.loads(rulesvm("diff", GK, "--variant", "rewards_for_all", "--json").stdout)
    assert dj["cards"]["removed"][0]["id"] == "four_card"
    assert dj["rules"][0]["part"] == "reward_count" and dj["rules"][0]["change"] == "replaced"
    bad = rulesvm("validate", "tests/variants/missing_parts.yaml")
    assert bad.returncode == 1 and "missing_parts.yaml:12:5: error[E061]" in bad.stderr
    assert rulesvm("validate", "games/").returncode == 0


def test_save_and_replay_keep_the_variant(tmp_path):
    log = tmp_path / "v.jsonl"
    assert rulesvm("run", GK, "--variant", "rewards_for_all", "--seed", "2", "--log", str(log),
                   "--quiet").returncode == 0
    again = tmp_path / "v2.jsonl"
    assert rulesvm("replay", str(log), "--log", str(again)).returncode == 0
    assert again.read_bytes() == log.read_bytes()


def test_replay_and_resume_find_a_variant_given_as_a_file(tmp_path):
    log = tmp_path / "f.jsonl"
    assert rulesvm("run", GK, "--variant", "tests/variants/laps_four.yaml", "--seed", "2", "--log", str(log),
                   "--quiet").returncode == 0
    assert rulesvm("replay", str(log), "--quiet").returncode == 0
    save = tmp_path / "s.json"
    assert rulesvm("run", GK, "--variant", "tests/variants/laps_four.yaml", "--seed", "2", "--save", str(save),
                   "--save-at", "10", "--quiet").returncode == 0
    r = rulesvm("resume", str(save), "--json", "--quiet", cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["options"]["laps"] == 4


def test_a_variant_can_change_the_player_count():
    game = api.load_game(os.path.join(ROOT, "games", "mach_struggle.yaml"),
                         variants=[os.path.join(V, "two_players.yaml")])
    assert game.model.players == (2, 3, 3)


def test_a_variant_with_players_keeps_positions_in_the_game_file(tmp_path):
    """A variant that sets `players:` must not move the positions of the game file's other
    mistakes (here a preset hand naming a card that does not exist) into the variant file."""
    import shutil
    shutil.copytree(os.path.join(ROOT, "games"), tmp_path / "games")
    game = tmp_path / "games" / "birthdays_fight.yaml"
    game.write_text(game.read_text().replace("A: [marion,", "A: [unicorn,"))
    variant = tmp_path / "games" / "birthdays_fight" / "variants" / "two.yaml"
    variant.write_text("variant: two\ndescription: still two\nbase: ../../birthdays_fight.yaml\nplayers: 2\n")
    with pytest.raises(DiagnosticError) as info:
        api.load_game(str(game), variants=[str(variant)])
    where = [(os.path.basename(d.span.file), d.code) for d in info.value.diagnostics]
    assert ("birthdays_fight.yaml", "E073") in where, where
