"""Benchmarks (run by hand, never as timed tests): random playouts, decisions and
snapshot+restore per second for every game in games/.

    .venv/bin/python benchmarks/run.py                 # all games, about a minute
    .venv/bin/python benchmarks/run.py --games giant_king --seconds 10

Figures go to docs/performance.md; see it for the numbers on the reference machine.
"""

from __future__ import annotations

import argparse
import glob
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from rulesvm import api  # noqa: E402
from rulesvm.interpreter.rng import below, seed_state  # noqa: E402


def game_paths(names: list[str] | None) -> list[str]:
    out = []
    for path in sorted(glob.glob(os.path.join(ROOT, "games", "*.yaml"))):
        gid = os.path.splitext(os.path.basename(path))[0]
        if names is None or gid in names:
            out.append(path)
    return out


def playouts(game, players: int, seconds: float) -> tuple[float, float, int]:
    """Complete random games per second and decisions per second."""
    games = decisions = 0
    start = time.perf_counter()
    seed = 0
    while time.perf_counter() - start < seconds:
        match = api.new_game(game, players, seed)
        state = seed_state(seed)
        while not match.is_over:
            i, state = below(state, len(match.legal_options))
            match.apply(i)
            decisions += 1
        games += 1
        seed += 1
    elapsed = time.perf_counter() - start
    return games / elapsed, decisions / elapsed, games


def snapshots(game, players: int, seconds: float) -> float:
    """Snapshot + restore pairs per second, on states taken along a random game."""
    match = api.new_game(game, players, 1)
    states = []
    state = seed_state(1)
    while not match.is_over:
        states.append(match.snapshot())
        i, state = below(state, len(match.legal_options))
        match.apply(i)
    count = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for s in states:
            match.restore(s)
            match.snapshot()
        count += len(states)
    return count / (time.perf_counter() - start)


def load_times(path: str, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        api.load_game(path)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", nargs="*", help="game ids (default: every game in games/)")
    parser.add_argument("--seconds", type=float, default=5.0, help="time per measurement")
    args = parser.parse_args()
    print(f"{'game':<16}{'players':>8}{'games/s':>10}{'decisions/s':>13}{'snap+restore/s':>16}{'load s':>9}")
    for path in game_paths(args.games):
        game = api.load_game(path)
        lo, hi, default = game.model.players
        for players in sorted({lo, default, hi}):
            gps, dps, _ = playouts(game, players, args.seconds)
            sps = snapshots(game, players, min(args.seconds, 2.0))
            print(f"{game.model.id:<16}{players:>8}{gps:>10.1f}{dps:>13.0f}{sps:>16.0f}{load_times(path):>9.3f}")


if __name__ == "__main__":
    main()
