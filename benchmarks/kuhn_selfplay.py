"""Self-play on a rules-language game with OpenSpiel's own learners: the training example of
docs/research.md#self-play.

Two tabular Q-learners (open_spiel.python.algorithms.tabular_qlearner) play games/kuhn_poker.yaml
against each other through `rulesvm.interop.openspiel` and OpenSpiel's RL environment; every
`--every` episodes each learner, playing greedily, is measured against a random player
(Player 1's and Player 2's average return over `--eval` hands).

    .venv/bin/python benchmarks/kuhn_selfplay.py                       # 10,000 episodes
    .venv/bin/python benchmarks/kuhn_selfplay.py --game games/mach_struggle.yaml --episodes 500
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from open_spiel.python import rl_environment
from open_spiel.python.algorithms import random_agent, tabular_qlearner

from rulesvm.interop import openspiel

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def play(env, agents, training: bool) -> list[float]:
    """One episode; returns each player's return."""
    time_step = env.reset()
    while not time_step.last():
        player = time_step.observations["current_player"]
        step = agents[player].step(time_step, is_evaluation=not training)
        time_step = env.step([step.action])
    for agent in agents:
        agent.step(time_step, is_evaluation=not training)
    return time_step.rewards


def against_random(env, learners, randoms, hands: int) -> tuple[float, float]:
    """Each learner's average return against a random player, in its own seat."""
    first = np.mean([play(env, [learners[0], randoms[1]], False)[0] for _ in range(hands)])
    second = np.mean([play(env, [randoms[0], learners[1]], False)[1] for _ in range(hands)])
    return float(first), float(second)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default=os.path.join(ROOT, "games", "kuhn_poker.yaml"))
    parser.add_argument("--episodes", type=int, default=10000)
    parser.add_argument("--every", type=int, default=2500)
    parser.add_argument("--eval", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    game = openspiel.load(args.game)
    env = rl_environment.Environment(game, seed=args.seed)
    actions = env.action_spec()["num_actions"]
    learners = [tabular_qlearner.QLearner(player_id=p, num_actions=actions) for p in range(2)]
    randoms = [random_agent.RandomAgent(player_id=p, num_actions=actions) for p in range(2)]
    np.random.seed(args.seed)
    start = time.perf_counter()
    print("| episodes | Player 1 vs random | Player 2 vs random | seconds |")
    print("| ---: | ---: | ---: | ---: |")
    for episode in range(1, args.episodes + 1):
        play(env, learners, True)
        if episode % args.every == 0 or episode == 1:
            first, second = against_random(env, learners, randoms, args.eval)
            print(f"| {episode} | {first:+.3f} | {second:+.3f} | {time.perf_counter() - start:.0f} |")


if __name__ == "__main__":
    main()
