"""`rulesvm tune` (analysis/tune.py, cli/tuning.py): the search finds optima known by
construction on tests/games/tune_dice.yaml (a win needs a die roll of `need` plus the hurdle
card's `height`: exactly one half at need 4, or at height 3), is reproducible, writes a
variant that `run` and `simulate` accept, runs on a launch game, and refuses bad input with
exit 2 and a clear message."""

from __future__ import annotations

import json
import os

import pytest

from rulesvm import api
from rulesvm.analysis import tune as tn

from .conftest import ROOT
from .test_cli import rulesvm

DICE = os.path.join("tests", "games", "tune_dice.yaml")


def _tune(*args):
    p = rulesvm("tune", DICE, "-j", "1", "--json", "-q", *args)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_finds_the_option_value_that_makes_the_win_rate_one_half():
    out = _tune("--param", "need=1..6", "--target", "outcome.win=0.5", "--max-games", "800")
    assert out["best"]["values"] == {"need": 4}
    assert out["distinguishable"]
    assert len(out["candidates"]) == 6
    far = {r["values"]["need"]: r for r in out["candidates"]}
    # The far candidates were dropped after the first stage: only the close ones played more.
    assert far[1]["games"] == far[6]["games"] == 100 and far[1]["status"].startswith("dropped")
    lo, hi = out["best"]["metrics"]["outcome.win=0.5"]["ci95"]
    assert lo <= 0.5 <= hi


def test_finds_a_card_fields_value():
    out = _tune("--param", "card.hurdle.height=0..5", "--target", "outcome.win=0.5", "--max-games", "800")
    assert out["best"]["values"] == {"card.hurdle.height": 3}


def test_a_selector_sets_the_field_of_every_card_it_chooses():
    game = api.load_game(os.path.join(ROOT, DICE))
    param = tn.parse_param("card[kind=obstacle].height=2..4", game)
    assert param.label == "card[kind=obstacle].height" and param.cards == ("hurdle",)
    spec = tn.TuneSpec(game=os.path.join(ROOT, DICE), params=(param,),
                       targets=(tn.parse_target("outcome.win=0.5", game, 1),), players=1, max_games=800)
    assert tn.tune(spec)["best"]["values"] == {"card[kind=obstacle].height": 3}
    with pytest.raises(tn.TuneError, match="no card has kind `wall`"):
        tn.parse_param("card[kind=wall].height=1..2", game)


def test_finds_a_variables_initial_value():
    game = api.load_game(os.path.join(ROOT, DICE))
    param = tn.parse_param("var.penalty=0..5", game)
    spec = tn.TuneSpec(game=os.path.join(ROOT, DICE), params=(param,),
                       targets=(tn.parse_target("outcome.win=0.5", game, 1),), players=1, max_games=800)
    out = tn.tune(spec)
    assert out["best"]["values"] == {"var.penalty": 3}
    with pytest.raises(tn.TuneError, match="no variable `penalti`"):
        tn.parse_param("var.penalti=0..5", game)


def test_the_same_seed_gives_the_same_search_and_candidates_share_seeds():
    game = api.load_game(os.path.join(ROOT, DICE))
    spec = tn.TuneSpec(game=os.path.join(ROOT, DICE), params=(tn.parse_param("need=3..5", game),),
                       targets=(tn.parse_target("outcome.win>=0.6", game, 1),), players=1, first_games=40,
                       max_games=80)
    a, b = tn.tune(spec), tn.tune(spec)
    assert a == b
    assert a["best"]["values"] == {"need": 3}        # the only one that reaches 0.6 (2/3)
    # A different seed plays other games.
    c = tn.tune(tn.TuneSpec(**{**spec.__dict__, "seed": 5}))
    assert [r["metrics"] for r in c["candidates"]] != [r["metrics"] for r in a["candidates"]]


def test_losses_and_their_intervals():
    game = api.load_game(os.path.join(ROOT, DICE))
    tally = tn.Tally(sums={("outcome.win", 0): (30, 100, 0)})
    at_most = tn.estimate(tn.parse_target("outcome.win<=0.5", game, 1), tally, 1)
    assert at_most.loss == at_most.loss_lo == at_most.loss_hi == 0.0        # 0.30, interval below 0.5
    at_least = tn.estimate(tn.parse_target("outcome.win>=0.5@2", game, 1), tally, 1)
    assert at_least.loss == pytest.approx(2 * 0.2) and 0 < at_least.loss_lo < at_least.loss < at_least.loss_hi
    equal = tn.estimate(tn.parse_target("outcome.win=0.3", game, 1), tally, 1)
    assert equal.loss == 0 and equal.loss_lo == 0 and equal.loss_hi > 0.05
    mean = tn.estimate(tn.Target("decisions=10", "decisions", "=", 10.0), tn.Tally(sums={("decisions", 0): (4, 48, 580)}),
                       1)
    assert mean.value == 12 and mean.loss == pytest.approx(0.2)               # 2 decisions off 10: relative


def test_variant_round_trip_and_no_overwrite(tmp_path):
    path = str(tmp_path / "half.yaml")
    _tune("--param", "need=3..5", "--target", "outcome.win=0.5", "--max-games", "400", "--write-variant", path)
    assert "need: 4" in open(path).read()
    p = rulesvm("run", DICE, "--variant", path, "--seed", "1")
    assert p.returncode == 0, p.stderr
    p = rulesvm("simulate", DICE, "--variant", path, "-n", "30", "-j", "1", "--json", "-q")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["options"]["need"] == 4
    p = rulesvm("diff", DICE, "--variant", path)
    assert p.returncode == 0 and "need" in p.stdout
    p = rulesvm("tune", DICE, "--param", "need=3..5", "--target", "outcome.win=0.5", "--write-variant", path)
    assert p.returncode == 2 and "exists" in p.stderr


@pytest.mark.parametrize("args, message", [
    (["--param", "need", "--target", "outcome.win=0.5"], "write NAME=RANGE"),
    (["--param", "nead=1..3", "--target", "outcome.win=0.5"], "unknown option `nead`"),
    (["--param", "card.hurdle.width=1..3", "--target", "outcome.win=0.5"], "has no field `width`"),
    (["--param", "card.wall.height=1..3", "--target", "outcome.win=0.5"], "no card `wall`"),
    (["--param", "need=5..2", "--target", "outcome.win=0.5"], "is empty"),
    (["--param", "need=1..9", "--target", "outcome.win=0.5"], "between 1 and 6"),
    (["--param", "need=1..3", "--target", "speed=3"], "unknown metric `speed`"),
    (["--param", "need=1..3", "--target", "decisions=balanced"], "can be balanced"),
    (["--param", "need=1..3", "--target", "first_player"], "needs two players"),
])
def test_bad_input_is_a_usage_error(args, message):
    p = rulesvm("tune", DICE, *args)
    assert p.returncode == 2, p.stderr
    assert message in p.stderr


def test_a_launch_game_with_a_small_budget(tmp_path):
    png = str(tmp_path / "laps.png")
    p = rulesvm("tune", os.path.join("games", "giant_king.yaml"), "--param", "laps=1..2", "--target",
                "first_player=balanced", "--target", "decisions<=200@0.5", "-n", "12", "--max-games", "24",
                "-j", "1", "--plot", png, "-q")
    assert p.returncode == 0, p.stderr
    assert "all candidates (2)" in p.stdout and "best: laps=" in p.stdout
    assert open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n"


def test_confirm_compares_the_written_variant_on_fresh_seeds(tmp_path):
    path = str(tmp_path / "half.yaml")
    out = _tune("--param", "need=3..5", "--target", "outcome.win=0.5", "--max-games", "400", "--write-variant", path,
                "--confirm")
    assert out["confirm_command"].endswith(f"--variant {path} -n 1000 --seed 1 --players 1 --agents random")
    compared = out["confirm"]["variants"][0]
    assert compared["games"] == 1000
    win = next(m for m in compared["metrics"] if m["metric"] == "win rate")
    assert win["base"] == 1.0 and 0.45 < win["variant"] < 0.55 and win["significant"]
    p = rulesvm("tune", DICE, "--param", "need=3..5", "--target", "outcome.win=0.5", "--confirm")
    assert p.returncode == 2 and "--write-variant" in p.stderr


def test_seat_balance_losses_and_a_sampled_grid():
    game = api.load_game(os.path.join(ROOT, "games", "mach_struggle.yaml"))
    first = tn.parse_target("first_player=balanced", game, 2)
    tally = tn.Tally(sums={("first_player", 1): (600, 1000, 0)})
    e = tn.estimate(first, tally, 2)
    assert e.value == pytest.approx(0.1) and e.loss == pytest.approx(0.1) and e.loss_lo > 0.06
    seats = tn.parse_target("seats", game, 2)
    e = tn.estimate(seats, tn.Tally(sums={("seats", 1): (500, 1000, 0), ("seats", 2): (500, 1000, 0)}), 2)
    assert e.value == 0 and e.loss == 0 and e.loss_lo == 0 and 0 < e.loss_hi < 0.04
    spec = tn.TuneSpec(game="g", params=(tn.parse_param("target_score=2..19", game),
                                         tn.parse_param("max_gap=1..4", game)),
                       targets=(first,), players=2, max_candidates=10, seed=3)
    picked = [c.values for c in tn.candidates(spec)]
    assert len(picked) == 10 == len(set(picked)) and picked == [c.values for c in tn.candidates(spec)]
    assert len(tn.candidates(tn.TuneSpec(**{**spec.__dict__, "max_candidates": 100}))) == 72


def test_the_same_search_with_two_jobs_and_on_dask():
    game = api.load_game(os.path.join(ROOT, DICE))
    spec = tn.TuneSpec(game=os.path.join(ROOT, DICE), params=(tn.parse_param("need=3..4", game),),
                       targets=(tn.parse_target("outcome.win=0.5", game, 1),), players=1, first_games=30, max_games=30)
    alone = tn.tune(spec)
    assert tn.tune(spec, jobs=2) == alone
    assert tn.tune(spec, backend="dask") == alone
