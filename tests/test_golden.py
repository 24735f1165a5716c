"""Golden playthroughs (as OpenSpiel keeps them): one transcript per launch game and seed,
showing every decision's legal options and the choice made. After an intended rule
change, regenerate them and review the diff:

    .venv/bin/python -m tests.test_golden --update
"""

from __future__ import annotations

import json
import os
import sys

import pytest

from rulesvm import api
from rulesvm.interpreter.rng import below, seed_state

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN_DIR = os.path.join(HERE, "golden")
ROOT = os.path.dirname(HERE)
# (game file, players, seed): one or two per launch game.
PLAYTHROUGHS = [
    ("games/giant_king.yaml", 4, 1),
    ("games/giant_king.yaml", 3, 2),
    ("games/mach_struggle.yaml", 2, 1),
    ("games/birthdays_fight.yaml", 2, 1),
    ("games/ufo_abduction.yaml", 1, 1),
    ("games/alien_attack.yaml", 1, 1),
    ("games/tutorial/crazy_eights.yaml", 3, 1),
    ("games/kuhn_poker.yaml", 2, 1),
]


def golden_name(path: str, players: int, seed: int) -> str:
    gid = os.path.splitext(os.path.basename(path))[0]
    return os.path.join(GOLDEN_DIR, f"{gid}_p{players}_seed{seed}.txt")


def transcript(path: str, players: int, seed: int) -> str:
    game = api.load_game(os.path.join(ROOT, path))
    lines = [f"# {game.model.id}, {players} players, seed {seed}; choices: seeded random",
             "# regenerate: .venv/bin/python -m tests.test_golden --update"]

    def sink(rec):
        t = rec["type"]
        if t == "log":
            lines.append(f"log: {rec['text']}" + (f"  (to Player {rec['to']})" if rec.get("to") else ""))
        elif t == "forced":
            lines.append(f"forced: Player {rec['player']}: {rec['prompt']} -> {rec['label']}")
        elif t == "end":
            lines.append("end: " + json.dumps(rec["result"], sort_keys=True))
    match = api.new_game(game, players, seed, sink=sink)
    state = seed_state(seed * 7 + 1)
    while not match.is_over:
        d = match.decision
        i, state = below(state, len(d.options))
        lines.append(f"decision {match.decisions_made + 1}: Player {d.player + 1}: {d.prompt}")
        lines.append("  options: " + " | ".join(d.labels))
        lines.append(f"  choice: {d.options[i].label}")
        match.apply(i)
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("path,players,seed", PLAYTHROUGHS)
def test_golden_playthrough(path, players, seed):
    with open(golden_name(path, players, seed), encoding="utf-8") as fh:
        expected = fh.read()
    actual = transcript(path, players, seed)
    assert actual == expected, ("the playthrough changed; if intended, run "
                                "`.venv/bin/python -m tests.test_golden --update` and review the diff")


def update() -> None:
    os.makedirs(GOLDEN_DIR, exist_ok=True)
    for path, players, seed in PLAYTHROUGHS:
        with open(golden_name(path, players, seed), "w", encoding="utf-8") as fh:
            fh.write(transcript(path, players, seed))
        print("wrote", os.path.relpath(golden_name(path, players, seed), ROOT))


if __name__ == "__main__":
    if "--update" in sys.argv:
        update()
    else:
        print(__doc__)
