"""How strong each bot is, per launch game: the table of docs/simulate.md#bot-strength.

Runs `rulesvm simulate` tournaments (agents rotated over the seats game by game) and prints
one Markdown row per agent and pairing: wins, games, win rate and its 95% interval (Wilson,
as simulate reports it). Solo games report each bot's outcome rate on the same seeds.

    .venv/bin/python benchmarks/bot_table.py                 # every game (about 30 minutes on 2 cores)
    .venv/bin/python benchmarks/bot_table.py --games mach_struggle --scale 0.5
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RULESVM = [sys.executable, "-m", "rulesvm.cli.main"]

# game -> (players, [(agents, games)]): the bots each game's table compares. Iterations are
# chosen so that a row takes minutes, not hours, on the reference machine.
PLAN = {
    "mach_struggle": (2, [("mcts:iterations=100,random", 200), ("greedy,random", 200),
                          ("mcts:iterations=100,greedy", 200)]),
    "birthdays_fight": (2, [("mcts:iterations=40,random", 40), ("greedy,random", 100),
                            ("mcts:iterations=40,greedy", 40)]),
    "giant_king": (3, [("mcts:iterations=60,greedy,random", 60)]),
    "ufo_abduction": (1, [("random", 200), ("greedy", 20), ("mcts:iterations=30", 20)]),
    "alien_attack": (1, [("random", 300), ("greedy", 20), ("mcts:iterations=20,depth=12", 20)]),
}


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return max(0.0, c - h), min(1.0, c + h)


def simulate(game: str, players: int, agents: str, games: int, jobs: int, seed: int) -> dict:
    cmd = RULESVM + ["simulate", os.path.join(ROOT, "games", f"{game}.yaml"), "-n", str(games), "--players",
                     str(players), "--agents", agents, "--jobs", str(jobs), "--seed", str(seed), "--json", "--quiet",
                     "--game-timeout", "900"]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if done.returncode not in (0, 1) or not done.stdout.strip():      # 1: some games failed, the rest counted
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stderr}")
    return json.loads(done.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", nargs="*", default=list(PLAN))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--scale", type=float, default=1.0, help="multiply every row's number of games")
    args = ap.parse_args()
    print("| game | agents (rotated over the seats) | agent | wins or outcome | games | rate | 95% interval |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for game in args.games:
        players, rows = PLAN[game]
        for agents, games in rows:
            n = max(2, int(games * args.scale))
            s = simulate(game, players, agents, n, args.jobs, args.seed)
            if players == 1:
                # Solo: the share of games each outcome took.
                for outcome, count in sorted(s["outcomes"].items()):
                    lo, hi = wilson(count, s["games"])
                    print(f"| {game} | {agents} | {agents} | {count} {outcome} | {s['games']} | "
                          f"{count / s['games']:.3f} | {lo:.2f}-{hi:.2f} |", flush=True)
                continue
            for agent, a in sorted(s["agents"].items()):
                lo, hi = a["ci95"]
                print(f"| {game} | {agents} | {agent} | {a['wins']} | {a['seats_played']} | {a['win_rate']:.3f} | "
                      f"{lo:.2f}-{hi:.2f} |", flush=True)


if __name__ == "__main__":
    main()
