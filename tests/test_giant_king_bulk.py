"""1,000 complete random Giant King games with 4 players and 1,000 with 3, without error."""

from __future__ import annotations

import pytest

from rulesvm import api

from .helpers import random_playout


@pytest.mark.slow
@pytest.mark.parametrize("players", [4, 3])
def test_thousand_random_games(giant_king, players):
    winners = set()
    lengths = []
    for seed in range(1000):
        match = api.new_game(giant_king, players, seed)
        random_playout(match, seed + 7919)
        result = match.result
        assert sorted(result["ranking"]) == list(range(1, players + 1))
        assert result["winner"] == result["ranking"][0]
        winners.add(result["winner"])
        lengths.append(match.decisions_made)
    assert winners == set(range(1, players + 1))      # every seat can win
    assert min(lengths) > 20
