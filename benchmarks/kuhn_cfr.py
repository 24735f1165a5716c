"""CFR on Kuhn poker written in the rules language: the convergence plot and table of
docs/research.md#cfr-on-kuhn-poker.

Loads games/kuhn_poker.yaml through `rulesvm.interop.openspiel`, runs OpenSpiel's CFR and
CFR+ solvers, and after chosen iterations measures the average policy's exploitability
and Player 1's expected return (the game's value is -1/18). Writes docs/img/kuhn_cfr.png
and prints one Markdown row per measured iteration.

    .venv/bin/python benchmarks/kuhn_cfr.py                     # 500 iterations (a few minutes)
    .venv/bin/python benchmarks/kuhn_cfr.py --iterations 100 --out /tmp/kuhn.png
"""

from __future__ import annotations

import argparse
import os
import time

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from open_spiel.python.algorithms import cfr, expected_game_score, exploitability  # noqa: E402

from rulesvm.interop import openspiel  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GAME_VALUE = -1 / 18
SOLVERS = {"CFR": cfr.CFRSolver, "CFR+": cfr.CFRPlusSolver}


def checkpoints(iterations: int) -> list[int]:
    """About ten points per decade, up to `iterations`."""
    points, k = [], 1
    while k <= iterations:
        points.append(k)
        k = max(k + 1, round(k * 1.26))
    return points if points[-1] == iterations else points + [iterations]


def run(game, name: str, iterations: int) -> list[tuple]:
    """(iteration, exploitability, Player 1's value, seconds) at each checkpoint."""
    solver = SOLVERS[name](game)
    wanted = set(checkpoints(iterations))
    rows, spent = [], 0.0
    for i in range(1, iterations + 1):
        start = time.perf_counter()
        solver.evaluate_and_update_policy()
        spent += time.perf_counter() - start
        if i in wanted:
            policy = solver.average_policy()
            value = expected_game_score.policy_value(game.new_initial_state(), [policy, policy])[0]
            rows.append((i, exploitability.exploitability(game, policy), value, spent))
    return rows


def plot(results: dict, out: str) -> None:
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for name, rows in results.items():
        its = [r[0] for r in rows]
        left.loglog(its, [r[1] for r in rows], marker=".", label=name)
        right.semilogx(its, [r[2] for r in rows], marker=".", label=name)
    left.set(xlabel="iterations", ylabel="exploitability (chips per hand)",
             title="Exploitability of the average policy")
    right.axhline(GAME_VALUE, color="grey", linestyle="--", label="game value -1/18")
    right.set(xlabel="iterations", ylabel="Player 1's expected return",
              title="Value of the average policy")
    for ax in (left, right):
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.suptitle("OpenSpiel's CFR on games/kuhn_poker.yaml (rulesvm.interop)")
    fig.tight_layout()
    fig.savefig(out, dpi=100)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=500)
    parser.add_argument("--out", default=os.path.join(ROOT, "docs", "img", "kuhn_cfr.png"))
    args = parser.parse_args()
    game = openspiel.load(os.path.join(ROOT, "games", "kuhn_poker.yaml"))
    results = {name: run(game, name, args.iterations) for name in SOLVERS}
    plot(results, args.out)
    print("| solver | iterations | exploitability | Player 1's value | seconds |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, rows in results.items():
        for i, expl, value, spent in rows:
            if i in (1, 10, 100, args.iterations) or i == rows[-1][0]:
                print(f"| {name} | {i} | {expl:.5f} | {value:.5f} | {spent:.1f} |")
    print(f"wrote {os.path.relpath(args.out, ROOT)}")


if __name__ == "__main__":
    main()
