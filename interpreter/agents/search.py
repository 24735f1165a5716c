"""Search agents: greedy one-step look-ahead and information-set Monte Carlo tree search.

Both look ahead only in *samples* of the game (see `determinize.py`), so they never use
what their seat may not see. Both are seeded: the same seed and the same game give the
same choices. Rewards of finished games: by rank (1 for the best, 0 for the last, ties
share), or for a solo game its outcome and score.
"""

from __future__ import annotations

import math
import time

from .. import rng as R
from ..errors import RulesRuntimeError
from .base import Agent, register, switch
from .determinize import Sampler

# MCTS playouts run to the end of the game (at most FULL_PLAYOUT decisions) unless the agent
# is given a `depth` or the game file a `bots: playout:` (cut there, judged by `evaluate`).
FULL_PLAYOUT = 400

# Samples are plausible but not always possible deals; one that sends the rules into a long
# run without decisions is abandoned after this many steps instead of the game's own limit.
SAMPLE_MAX_STEPS = 20_000


def rewards(result: dict, n: int, scale: float = 100.0) -> list[float]:
    """A reward in [0, 1] per seat for a finished game."""
    if n == 1:
        outcome = (result.get("outcome") or "").lower()
        base = 1.0 if outcome in ("win", "won", "victory") else 0.0
        scores = result.get("scores") or {}
        s = float(scores.get("1", 0) or 0)
        return [0.5 * base + 0.5 * (s / (abs(s) + scale) if s > 0 else 0.0) + (0.5 if base and not scores else 0.0)]
    ranking = result.get("ranking")
    out = [0.5] * n
    if ranking:
        place = 0
        for entry in ranking:
            group = entry if isinstance(entry, list) else [entry]
            lo, hi = place, place + len(group) - 1
            value = 1.0 - ((lo + hi) / 2) / (n - 1)
            for seat in group:
                out[seat - 1] = value
            place += len(group)
        return out
    winner = result.get("winner")
    if winner is not None:
        return [1.0 if s == winner - 1 else 0.0 for s in range(n)]
    return out


MEMORY_DOC = ("on: samples keep every card the seat knows where it knows it is (shown, passed, seen go "
              "into a hand); off: only what it sees now (default on)")


def playout_depth(depth: int | None, match) -> int:
    """The longest playout: the agent's `depth` when given, else the game file's
    `bots: playout:` (a length its designer found the game's `evaluate` judges well, with
    evidence: docs/simulate.md), else FULL_PLAYOUT."""
    if depth is not None:
        return depth
    return match.program.model.bots.get("playout", FULL_PLAYOUT)


def random_rollout(m, rng_state: int, depth: int) -> tuple[int, int]:
    """Play random moves; returns (moves played, rng state)."""
    k = 0
    while not m.is_over and k < depth:
        i, rng_state = R.below(rng_state, len(m.state.pending.options))
        m.apply(i)
        k += 1
    return k, rng_state


def leaf_rewards(m, scale: float) -> list[float]:
    """Rewards for a finished game, or an estimate from the game's `evaluate` when cut off."""
    n = m.players
    if m.is_over:
        return rewards(m.result, n, scale)
    evaluate = m.program.evaluator()
    if evaluate is None or n == 1:
        return [0.5] * n
    values = [evaluate(m.rt, s) for s in range(n)]
    order = sorted(range(n), key=lambda s: -values[s])
    out = [0.0] * n
    for rank, s in enumerate(order):
        out[s] = 1.0 - rank / (n - 1)
    return out


class GreedyAgent(Agent):
    """One step of look-ahead: try each option in samples of the game and keep the best.

    After an option, the other players answer at random until this seat is asked again (or
    the game ends), so the option's consequences show; the position is then judged by the
    game's `evaluate(p)` (this seat's value minus the best opponent's), or, for a game
    without one, by the result of a random playout to the end. Each option is tried in
    `rollouts` samples.
    """
    name = "greedy"

    def __init__(self, seed: int = 0, rollouts: int = 4, depth: int = 400, horizon: int = 1, memory: bool = True):
        self.state = R.seed_state(seed)
        self.memory = memory
        self.rollouts = rollouts
        self.depth = depth
        self.horizon = horizon
        self.scale = 10.0

    def get_state(self):
        return str(self.state)

    def set_state(self, state) -> None:
        self.state = int(state)

    def describe(self) -> str:
        return ("greedy" if self.horizon == 1 else f"greedy:horizon={self.horizon}") + ("" if self.memory else
                                                                                   " (no memory)")

    def choose(self, view) -> int:
        match, seat = view.match, view.seat
        options = view.options
        if len(options) == 1:
            return 0
        evaluate = match.program.evaluator()
        sampler = Sampler(match, seat, self.memory)
        best, best_value = [], -math.inf
        for i in range(len(options)):
            total = 0.0
            for _ in range(self.rollouts):
                st, self.state = sampler.sample(self.state)
                m = match.with_state(st, max_steps=SAMPLE_MAX_STEPS)
                try:
                    m.apply(i)
                    total += self._judge(m, seat, evaluate)
                except RulesRuntimeError:
                    # A sample the rules cannot play on (an impossible deal): count it as neutral.
                    total += 0.0 if evaluate is not None else 0.5
            value = total / self.rollouts
            if value > best_value + 1e-12:
                best, best_value = [i], value
            elif abs(value - best_value) <= 1e-12:
                best.append(i)
        k, self.state = R.below(self.state, len(best))
        return best[k]

    def _judge(self, m, seat: int, evaluate) -> float:
        if evaluate is not None and m.players > 1:
            k = 0
            asked = 0
            while not m.is_over and k < self.depth:
                if m.state.pending.player == seat:
                    asked += 1
                    if asked >= self.horizon:
                        break
                i, self.state = R.below(self.state, len(m.state.pending.options))
                m.apply(i)
                k += 1
            if m.is_over:
                return 1000.0 * (rewards(m.result, m.players, self.scale)[seat] - 0.5)
            own = evaluate(m.rt, seat)
            others = [evaluate(m.rt, s) for s in range(m.players) if s != seat]
            return own - max(others)
        _, self.state = random_rollout(m, self.state, self.depth)
        self._track(m)
        return leaf_rewards(m, self.scale)[seat]

    def _track(self, m) -> None:
        if m.is_over and m.players == 1:
            s = (m.result.get("scores") or {}).get("1")
            if isinstance(s, (int, float)) and abs(s) > self.scale:
                self.scale = float(abs(s))


class _Node:
    __slots__ = ("player", "visits", "total", "avail", "children")

    def __init__(self, player: int):
        self.player = player          # who made the move leading here
        self.visits = 0
        self.total = 0.0
        self.avail = 0
        self.children: dict = {}


class MCTSAgent(Agent):
    """Single-observer information-set MCTS (Cowling, Powley & Whitehouse 2012).

    Each iteration samples a state its seat could believe in, walks down one tree shared by
    all samples (children keyed by option label, UCB on visits and availability), adds one
    node, plays randomly to the end (or `depth` moves, then the game's `evaluate`; see
    playout_depth for the default), and backs the rewards up. The most visited legal option is played.
    """
    name = "mcts"

    def __init__(self, seed: int = 0, iterations: int = 200, c: float = 0.7, depth: int | None = None,
                 seconds: float = 0.0, memory: bool = True):
        self.state = R.seed_state(seed)
        self.memory = memory
        self.iterations = iterations
        self.c = c
        self.depth = depth
        self._playout = FULL_PLAYOUT        # for the decision being searched: playout_depth
        self.seconds = seconds
        self.scale = 10.0
        self.eval_scale = 1.0

    def get_state(self):
        return str(self.state)

    def set_state(self, state) -> None:
        self.state = int(state)

    def describe(self) -> str:
        text = f"mcts:iterations={self.iterations}" if not self.seconds else f"mcts:seconds={self.seconds}"
        return text if self.memory else text + " (no memory)"

    def choose(self, view) -> int:
        match, seat = view.match, view.seat
        labels = [o.label for o in view.options]
        if len(labels) == 1:
            return 0
        root = _Node(seat)
        sampler = Sampler(match, seat, self.memory)
        self._playout = playout_depth(self.depth, match)
        deadline = time.perf_counter() + self.seconds if self.seconds else None
        it = 0
        while (deadline is None and it < self.iterations) or (deadline is not None and time.perf_counter() < deadline):
            it += 1
            try:
                self._iterate(match, sampler, root)
            except RulesRuntimeError:
                pass            # a sample the rules cannot play on (an impossible deal): skip it
        best = max((root.children.get(lbl) for lbl in labels if lbl in root.children),
                   key=lambda n: n.visits, default=None)
        if best is None:
            return 0
        for i, lbl in enumerate(labels):
            if root.children.get(lbl) is best:
                return i
        return 0

    def _iterate(self, match, sampler: Sampler, root: _Node) -> None:
        st, self.state = sampler.sample(self.state)
        m = match.with_state(st, max_steps=SAMPLE_MAX_STEPS)
        node = root
        path = []
        c, log, sqrt = self.c, math.log, math.sqrt
        while not m.is_over:
            d = m.state.pending
            labels = [o.label for o in d.options]
            children = node.children
            # One pass: every child offered here was available once more; the options never
            # tried; the first child expanded but never scored (its sample failed: try it
            # first); and the best by UCB over availability.
            untried = []
            unscored = -1
            best, best_score = 0, -math.inf
            for i, lbl in enumerate(labels):
                child = children.get(lbl)
                if child is None:
                    untried.append(i)
                    continue
                avail = child.avail = child.avail + 1
                visits = child.visits
                if visits == 0:
                    if unscored < 0:
                        unscored = i
                    continue
                score = child.total / visits + c * sqrt(log(avail) / visits)
                if score > best_score:
                    best, best_score = i, score
            if untried:
                k, self.state = R.below(self.state, len(untried))
                i = untried[k]
                child = _Node(d.player)
                child.avail = 1
                children[labels[i]] = child
                m.apply(i)
                path.append(child)
                break
            if unscored >= 0:
                best = unscored
            node = children[labels[best]]
            m.apply(best)
            path.append(node)
        _, self.state = random_rollout(m, self.state, self._playout)
        if m.is_over and m.players == 1:
            s = (m.result.get("scores") or {}).get("1")
            if isinstance(s, (int, float)) and abs(s) > self.scale:
                self.scale = float(abs(s))
        evaluate = m.program.evaluator() if not m.is_over and m.players == 1 else None
        if evaluate is not None:
            # A solo playout cut at `depth`: judge it by the game's evaluate, squashed to [0, 1]
            # against the largest value seen so far.
            v = evaluate(m.rt, 0)
            self.eval_scale = max(self.eval_scale, abs(v))
            values = [0.5 + 0.5 * v / self.eval_scale]
        else:
            values = leaf_rewards(m, self.scale)
        for n in path:
            n.visits += 1
            n.total += values[n.player]


register("greedy", GreedyAgent, "one step of look-ahead in a sample of the game, judged by the game's "
         "`evaluate(p)` or by random playouts",
         {"rollouts": (int, "samples of the game per option (default 4)"),
          "horizon": (int, "judge after this seat has been asked this many more times, the others "
                      "and its own later choices played at random (default 1)"),
          "depth": (int, "longest playout, in decisions (default 400)"),
          "memory": (switch, MEMORY_DOC)})
register("mcts", MCTSAgent, "information-set Monte Carlo tree search over samples of what its seat may know",
         {"iterations": (int, "search iterations per decision (default 200)"),
          "c": (float, "exploration constant (default 0.7)"),
          "depth": (int, "longest playout, in decisions (default: the game file's `bots: playout:`, judged by "
                    f"the game's `evaluate`; else {FULL_PLAYOUT})"),
          "seconds": (float, "think for this long instead of a number of iterations (not reproducible)"),
          "memory": (switch, MEMORY_DOC)})
