"""Helpers for tests: play games with seeded random choices and record transcripts."""

from __future__ import annotations

import json

from rulesvm import api
from rulesvm.interpreter.rng import below, seed_state


def random_playout(match, seed: int, limit: int = 100_000) -> list[int]:
    """Answer every decision with a seeded random option; returns the choices made."""
    state = seed_state(seed)
    choices = []
    while not match.is_over:
        assert match.decision is not None and match.legal_options, "a decision with no options"
        i, state = below(state, len(match.legal_options))
        choices.append(i)
        match.apply(i)
        assert len(choices) < limit, "game did not end"
    return choices


def transcript(game: api.Game, players: int, seed: int, choice_seed: int | None = None) -> str:
    """The full JSON event log of a random game, as text."""
    lines = []
    match = api.new_game(game, players, seed, sink=lambda r: lines.append(json.dumps(r, sort_keys=True)))
    random_playout(match, seed if choice_seed is None else choice_seed)
    return "\n".join(lines)


def write_game(tmp_path, rules: str, players: int = 1, cards: str = "") -> str:
    """A one-file game in tmp_path (g.yaml + g.rules) for testing a construct on its own;
    `cards` is the YAML list under `cards:` (one `- {...}` per line). Returns g.yaml's path."""
    (tmp_path / "g.rules").write_text(rules)
    card_list = "cards:\n" + "".join(f"  {line}\n" for line in cards.strip("\n").split("\n")) if cards else ""
    (tmp_path / "g.yaml").write_text(f"id: g\nname: G\nplayers: {players}\nrules: g.rules\n{card_list}")
    return str(tmp_path / "g.yaml")
