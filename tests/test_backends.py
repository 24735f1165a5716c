"""The two compiler back ends (generated Python source, and plain closures) mean the same:
every game plays identically, event for event, under both."""

from __future__ import annotations

import json
import os

import pytest

from rulesvm import api
from rulesvm.interpreter import compile_program

from .conftest import game_files
from .helpers import random_playout


def _transcript(program, players, seed):
    lines = []
    match = api.Match(program, players, seed, sink=lambda r: lines.append(json.dumps(r, sort_keys=True)))
    random_playout(match, seed)
    return lines


@pytest.mark.parametrize("path", game_files(), ids=lambda p: os.path.basename(p))
def test_codegen_and_closures_agree(path):
    game = api.load_game(path)
    generated = compile_program(game.model, game.options, codegen=True)
    closures = compile_program(game.model, game.options, codegen=False)
    # Generated programs write expressions and blocks as source; the closures' programs only
    # their procedures' runners.
    assert any(s.startswith("def _e") for s in generated.sources)
    assert all(s.startswith("def _run") for s in closures.sources)
    players = game.model.players[2]
    for seed in range(6):
        assert _transcript(generated, players, seed) == _transcript(closures, players, seed)
