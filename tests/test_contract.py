"""The contract every game in games/ must keep: random games finish, every decision offers
at least one option, no card is ever lost or duplicated, the same seed gives the same game."""

from __future__ import annotations

import os

import pytest

from rulesvm import api

from .conftest import game_files, load
from .helpers import random_playout, transcript

GAMES = game_files()


def test_there_are_games():
    assert any(os.path.basename(p) == "giant_king.yaml" for p in GAMES)


@pytest.mark.parametrize("path", GAMES, ids=lambda p: os.path.relpath(p))
def test_game_validates_without_errors(path):
    diags = api.validate_game(path)
    assert not [d for d in diags if d.is_error], diags


@pytest.mark.parametrize("path", GAMES, ids=lambda p: os.path.relpath(p))
def test_random_playouts_finish_with_cards_conserved(path):
    game = load(path)
    lo, hi, _ = game.model.players
    for players in range(lo, hi + 1):
        for seed in range(8):
            match = api.new_game(game, players, seed, debug=True)   # debug: card conservation checked every step
            random_playout(match, seed)
            assert match.is_over
            result = match.result
            assert result is not None
            if result.get("ranking"):
                flat = [s for e in result["ranking"] for s in (e if isinstance(e, list) else [e])]
                assert sorted(flat) == list(range(1, players + 1))


@pytest.mark.parametrize("path", GAMES, ids=lambda p: os.path.relpath(p))
def test_same_seed_same_transcript(path):
    game = load(path)
    players = game.model.players[2]
    a = transcript(game, players, 11)
    b = transcript(game, players, 11)
    c = transcript(game, players, 12)
    assert a == b
    assert a != c
