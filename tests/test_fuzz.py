"""A small fuzz campaign in the suite (the big one: `python -m tests.fuzz_campaign`, see
docs/dev/fuzz-campaigns.md): mutated launch games are validated and, when valid, played
briefly; rulesvm must never raise anything but its documented errors, nor hang."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .fuzz_campaign import Worker, launch_games, plan

GAMES = launch_games()
_worker = None


def worker() -> Worker:
    global _worker
    if _worker is None:
        _worker = Worker()
    return _worker


def teardown_module(module):
    if _worker is not None:
        _worker.close()


def _target(game: dict, where: str, pick: int) -> str:
    files = {"rules": game["rules"], "game": [game["game"]], "variant": game["variants"] or [game["game"]]}[where]
    return files[pick % len(files)]


def _check(result: dict) -> None:
    assert result["outcome"] != "FAILURE", \
        f"{result['target']} {result['edits']}: {result['failure']}\n{result.get('traceback', '')}"


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(game=st.sampled_from(GAMES), where=st.sampled_from(["rules", "rules", "game", "variant"]),
       pick=st.integers(0, 9), edits=st.integers(1, 3), rng=st.randoms(use_true_random=False))
def test_mutated_launch_games_never_crash_or_hang(game, where, pick, edits, rng):
    case = {"number": -1, "game": game["game"], "target": _target(game, where, pick), "edits": edits, "rng": rng}
    _check(worker().run(case))


@pytest.mark.slow
@pytest.mark.parametrize("block", range(4))
def test_a_fixed_campaign(block):
    """The first cases of the campaign with seed 0: the same files every run."""
    for number in range(block * 15, block * 15 + 15):
        _check(worker().run(plan(0, number, GAMES)))


@pytest.mark.slow
def test_mutated_games_play_the_same_under_both_back_ends():
    """Differential fuzzing of the code generator: the first cases of the campaign with seed
    7, each valid one played under the generated code and under the closures, with and
    without a listener (`python -m tests.fuzz_campaign --backends` for a big campaign)."""
    differ = Worker(backends=True)
    try:
        played = 0
        for number in range(40):
            result = differ.run(plan(7, number, GAMES))
            _check(result)
            played += result["outcome"] in ("played", "over", "runtime_error")
        assert played >= 5          # enough valid cases to compare
    finally:
        differ.close()
