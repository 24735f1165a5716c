"""Parameter search: which option or card value meets a designer's targets
(pipeline: running game -> agents -> statistics -> **search over variants**).

`tune(spec)` tries every candidate setting of the parameters (the grid, or a seeded sample of
it when it is large) as a variant file, plays each with `simulate` on the same game seeds
(common random numbers), and races them: after each stage the candidates whose loss interval
lies wholly above the best one's are dropped, more than `keep` are halved (successive
halving), and the survivors play as many new games again. It stops when one candidate is
left, when the best meets the targets within `tolerance` with 95% confidence, or at
`max_games`. Why a racing scheme rather than a library sampler is said in docs/tune.md.
"""

from __future__ import annotations

import io
import itertools
import math
import os
import random
import tempfile
from dataclasses import dataclass, field, replace

import yaml

from . import simulate as sim
from .stats import wilson
# The search's input, re-exported: `tune.parse_param` and the rest are the search's interface.
from .tune_params import (METRICS, Param, Target, TuneError, parse_param, parse_target, parse_values,  # noqa: F401
                          shown, variant_data, write_variant)

Z95 = 1.959964


# ---------------------------------------------------------------------- estimates

@dataclass
class Tally:
    """What a candidate's games say about each target, summed over stages: for a rate its
    successes and trials per part (one part, or one per seat), for a mean n, sum, sum of squares."""
    sums: dict = field(default_factory=dict)
    games: int = 0
    errors: int = 0

    def add(self, summary: dict, targets: list[Target]) -> None:
        self.games += summary["games"]
        self.errors += len(summary["errors"])
        for t in targets:
            for key, a, b, c in _observations(summary, t.metric):
                old = self.sums.get((t.metric, key), (0.0, 0.0, 0.0))
                self.sums[(t.metric, key)] = (old[0] + a, old[1] + b, old[2] + c)


def _observations(s: dict, metric: str) -> list:
    """(part, successes, trials, 0) for a rate, (part, n, sum, sum of squares) for a mean."""
    n = s["games"]
    head, _, rest = metric.partition(".")
    if head in ("first_player", "seats"):
        seats = s["seats"] if head == "seats" else s["seats"][:1]
        return [(x["seat"], x["wins"], n, 0) for x in seats]
    if head == "seat":
        return [(0, s["seats"][int(rest) - 1]["wins"], n, 0)]
    if head == "agent":
        a = s["agents"].get(rest) or {"wins": 0, "seats_played": 0}
        return [(0, a["wins"], a["seats_played"], 0)]
    if head == "draw_rate":
        return [(0, s["draws"], n, 0)]
    if head == "outcome":
        return [(0, s["outcomes"].get(rest, 0), n, 0)]
    if head == "card":
        c = s["cards"].get(rest) or {"wins": 0, "games": 0}
        return [(0, c["wins"], c["games"], 0)]
    d = s["length"][head] if head in ("decisions", "turns") else s["design"].get(rest, {"n": 0})
    k = d.get("n", 0)
    if not k:
        return [(0, 0, 0.0, 0.0)]
    mean, sd = d["mean"], d["sd"]
    return [(0, k, mean * k, sd * sd * (k - 1) + mean * mean * k)]


@dataclass(frozen=True)
class Estimate:
    value: float | None
    lo: float | None
    hi: float | None
    loss: float
    loss_lo: float
    loss_hi: float


def estimate(t: Target, tally: Tally, players: int) -> Estimate:
    """The target metric's estimate with its 95% interval, and the target's loss (how far the
    metric misses the target, weighted) with the interval that the metric's interval gives."""
    parts = sorted((key, v) for (m, key), v in tally.sums.items() if m == t.metric)
    fair = 1 / players if players > 1 else 0.5
    if not parts or (parts[0][1][1] if t.is_rate else parts[0][1][0]) == 0:
        return Estimate(None, None, None, math.inf, math.inf, math.inf)
    if t.metric == "seats":
        pieces = []
        for _, (w, n, _) in parts:
            lo, hi = wilson(w, int(n))
            pieces.append((w / n, lo, hi))
        miss = [(abs(p - fair), _distance(fair, lo, hi), max(abs(lo - fair), abs(hi - fair))) for p, lo, hi in pieces]
        spread = max(p for p, _, _ in pieces) - min(p for p, _, _ in pieces)
        return Estimate(round(spread, 4), None, None, *(t.weight * max(x[k] for x in miss) for k in range(3)))
    a, b, c = parts[0][1]
    if t.is_rate:
        value, (lo, hi) = a / b, wilson(a, int(b))
    else:
        value = b / a
        var = max(c / a - value * value, 0.0) * a / (a - 1) if a > 1 else 0.0
        half = Z95 * math.sqrt(var / a)
        lo, hi = value - half, value + half
    if t.metric == "first_player":
        value, lo, hi = value - fair, lo - fair, hi - fair
    goal = t.value if t.op != "balanced" else (0.0 if t.metric == "first_player" else fair)
    scale = abs(goal) if t.metric.startswith(("decisions", "turns")) and goal else 1.0
    if t.op in ("=", "balanced"):
        point, best, worst = abs(value - goal), _distance(goal, lo, hi), max(abs(lo - goal), abs(hi - goal))
    elif t.op == "<=":
        point, best, worst = max(0.0, value - goal), max(0.0, lo - goal), max(0.0, hi - goal)
    else:
        point, best, worst = max(0.0, goal - value), max(0.0, goal - hi), max(0.0, goal - lo)
    w = t.weight / scale
    return Estimate(round(value, 4), round(lo, 4), round(hi, 4), w * point, w * best, w * worst)


def _distance(x: float, lo: float, hi: float) -> float:
    return 0.0 if lo <= x <= hi else min(abs(x - lo), abs(x - hi))


# ---------------------------------------------------------------------- the search

@dataclass(frozen=True)
class TuneSpec:
    game: str
    params: tuple            # of Param
    targets: tuple           # of Target
    players: int
    agents: tuple = ("random",)
    set_pairs: tuple = ()
    seed: int = 0
    first_games: int = 100   # games of every candidate in the first stage
    max_games: int = 3200    # games of a candidate at most
    keep: int = 8            # more survivors than this are halved after a stage
    max_candidates: int = 64  # a larger grid is sampled (seeded) down to this
    tolerance: float = 0.0   # stop once the best's loss is at most this with 95% confidence
    max_decisions: int = 100_000
    game_timeout: float = 60.0


@dataclass
class Candidate:
    index: int
    values: tuple
    tally: Tally = field(default_factory=Tally)
    status: str = "racing"
    estimates: list = field(default_factory=list)
    path: str = ""

    @property
    def loss(self) -> tuple[float, float, float]:
        return (sum(e.loss for e in self.estimates), sum(e.loss_lo for e in self.estimates),
                sum(e.loss_hi for e in self.estimates))


def candidates(spec: TuneSpec) -> list[Candidate]:
    """Every combination of the parameters' values, or a seeded sample of `max_candidates`."""
    grid = list(itertools.product(*(p.values for p in spec.params)))
    if len(grid) > spec.max_candidates:
        picked = sorted(random.Random(spec.seed).sample(range(len(grid)), spec.max_candidates))
        grid = [grid[i] for i in picked]
    return [Candidate(i, values) for i, values in enumerate(grid)]


def tune(spec: TuneSpec, jobs: int = 1, backend: str = "local", scheduler: str | None = None, on_stage=None,
         on_progress=None) -> dict:
    """Race the candidates (see the module docstring) and report them. `on_progress(done,
    total, best)` follows the games; raises DiagnosticError when a candidate does not load."""
    cands = candidates(spec)
    played, step, stage = 0, spec.first_games, 0
    stop_reason = ""
    done_games = 0
    with tempfile.TemporaryDirectory(prefix="rulesvm-tune-") as tmp:
        for c in cands:
            c.path = os.path.join(tmp, f"candidate_{c.index}.yaml")
            with open(c.path, "w", encoding="utf-8") as fh:
                yaml.safe_dump(variant_data(spec.params, c.values, f"candidate_{c.index}"), fh, sort_keys=False)
        while True:
            stage += 1
            alive = [c for c in cands if c.status == "racing"]
            n = min(step, spec.max_games - played)
            total = done_games + n * len(alive)
            best_text = _best_text(spec, cands)
            for c in alive:
                config = sim.SimConfig(game=spec.game, n=n, first=played, players=spec.players, agents=spec.agents,
                                       seed=spec.seed, variants=(c.path,), set_pairs=spec.set_pairs,
                                       max_decisions=spec.max_decisions, game_timeout=spec.game_timeout)
                offset = done_games

                def progress(k, _total, offset=offset):
                    if on_progress is not None:
                        on_progress(offset + k, total, best_text)
                summary = sim.simulate(config, jobs=jobs, backend=backend, scheduler=scheduler, progress=progress)
                done_games += n
                c.tally.add(summary, list(spec.targets))
                c.estimates = [estimate(t, c.tally, spec.players) for t in spec.targets]
                if summary["interrupted"]:
                    raise KeyboardInterrupt
            played += n
            stop_reason = _race(spec, alive, played)
            if on_stage is not None:
                on_stage(stage, played, len([c for c in cands if c.status == "racing"]))
            if stop_reason:
                break
            step = played          # the survivors play as many new games again
    return report(spec, cands, played, stop_reason, done_games)


def _best_text(spec: TuneSpec, cands: list[Candidate]) -> str:
    scored = [c for c in cands if c.estimates]
    if not scored:
        return "-"
    best = min(scored, key=lambda c: (c.status != "racing", c.loss[0]))
    return ", ".join(f"{p.label}={shown(v)}" for p, v in zip(spec.params, best.values)) + f" (loss {best.loss[0]:.3f})"


def _race(spec: TuneSpec, alive: list[Candidate], played: int) -> str:
    """Drop the candidates that are clearly worse than the best; halve a large field; say why
    the search stops, or "" to go on."""
    best = min(alive, key=lambda c: c.loss[0])
    for c in alive:
        if c is not best and c.loss[1] > best.loss[2]:
            c.status = f"dropped at {played}"
    left = sorted((c for c in alive if c.status == "racing"), key=lambda c: c.loss[0])
    if len(left) > spec.keep:
        for c in left[max(spec.keep, len(left) // 2):]:
            c.status = f"cut at {played}"
        left = left[:max(spec.keep, len(left) // 2)]
    if len(left) == 1:
        return f"one candidate left after {played} games"
    if spec.tolerance > 0 and best.loss[2] <= spec.tolerance:
        return f"the best meets the targets within {spec.tolerance:g} with 95% confidence after {played} games"
    if played >= spec.max_games:
        return f"reached --max-games {spec.max_games}"
    return ""


def report(spec: TuneSpec, cands: list[Candidate], played: int, stop_reason: str, total_games: int) -> dict:
    """The search as data: every candidate with its metrics and intervals, the best, and
    whether the best is distinguishable from the runner-up."""
    def row(c: Candidate) -> dict:
        loss, lo, hi = c.loss
        return {"values": {p.label: v for p, v in zip(spec.params, c.values)}, "games": c.tally.games,
                "failed_games": c.tally.errors, "status": c.status,
                "loss": round(loss, 4), "loss_ci95": [round(lo, 4), round(hi, 4)],
                "metrics": {t.text: {"value": e.value, "ci95": None if e.lo is None else [e.lo, e.hi],
                                     "loss": round(e.loss, 4)} for t, e in zip(spec.targets, c.estimates)}}
    ranked = sorted(cands, key=lambda c: (-c.tally.games, c.loss[0], c.index))
    best, runner = ranked[0], (ranked[1] if len(ranked) > 1 else None)
    finalists = [c for c in cands if c.status == "racing"]
    distinct = runner is None or len(finalists) == 1 or runner.loss[1] > best.loss[2]
    best.status = "best"
    for c in finalists:
        if c is not best:
            c.status = "finalist"
    return {"game": spec.game, "seed": spec.seed, "players": spec.players, "agents": list(spec.agents),
            "params": [p.text for p in spec.params], "targets": [t.text for t in spec.targets],
            "tolerance": spec.tolerance, "games_per_finalist": played, "games_total": total_games,
            "stop_reason": stop_reason, "best": row(best), "runner_up": row(runner) if runner else None,
            "distinguishable": distinct, "candidates": [row(c) for c in ranked]}


def confirm_spec(spec: TuneSpec, variant_path: str, n: int) -> tuple:
    """The base game's and the written variant's simulations on fresh seeds (seed + 1)."""
    base = sim.SimConfig(game=spec.game, n=n, players=spec.players, agents=spec.agents, seed=spec.seed + 1,
                         set_pairs=spec.set_pairs, max_decisions=spec.max_decisions, game_timeout=spec.game_timeout)
    return base, replace(base, variants=(variant_path,))


# ---------------------------------------------------------------------- plot

def plot_png(result: dict) -> bytes:
    """Each target's metric (with its 95% interval) and the loss against the parameter (one
    parameter), or the loss as a heat map (two parameters)."""
    try:
        # matplotlib is optional (`pip install rulesvm[plot]`): imported only to draw a plot.
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ValueError("plots need matplotlib: `pip install rulesvm[plot]`") from None
    labels = list(result["candidates"][0]["values"])
    if len(labels) not in (1, 2):
        raise ValueError("--plot draws one or two parameters; this search has " + str(len(labels)))
    rows = result["candidates"]
    if len(labels) == 1:
        rows = sorted(rows, key=lambda r: r["values"][labels[0]])
        xs = [r["values"][labels[0]] for r in rows]
        fig, axes = plt.subplots(1, len(result["targets"]) + 1, figsize=(4.2 * (len(result["targets"]) + 1), 3.6))
        for ax, t in zip(axes, result["targets"]):
            pts = [(x, r["metrics"][t]) for x, r in zip(xs, rows) if r["metrics"][t]["value"] is not None]
            vals = [m["value"] for _, m in pts]
            errs = [[m["value"] - m["ci95"][0] if m["ci95"] else 0 for _, m in pts],
                    [m["ci95"][1] - m["value"] if m["ci95"] else 0 for _, m in pts]]
            ax.errorbar([x for x, _ in pts], vals, yerr=errs, fmt="o-", capsize=3, color="#4c72b0")
            ax.set_title(t, fontsize=9)
            ax.set_xlabel(labels[0])
        ax = axes[-1]
        ax.errorbar(xs, [r["loss"] for r in rows], yerr=[[r["loss"] - r["loss_ci95"][0] for r in rows],
                                                          [r["loss_ci95"][1] - r["loss"] for r in rows]],
                    fmt="s-", capsize=3, color="#c44e52")
        ax.set_title("loss (lower is better, 95% CI)", fontsize=9)
        ax.set_xlabel(labels[0])
    else:
        xs = sorted({r["values"][labels[0]] for r in rows})
        ys = sorted({r["values"][labels[1]] for r in rows})
        grid = [[math.nan] * len(xs) for _ in ys]
        for r in rows:
            grid[ys.index(r["values"][labels[1]])][xs.index(r["values"][labels[0]])] = r["loss"]
        fig, ax = plt.subplots(figsize=(6, 4.5))
        im = ax.imshow(grid, origin="lower", cmap="viridis_r", aspect="auto")
        ax.set_xticks(range(len(xs)), [str(x) for x in xs])
        ax.set_yticks(range(len(ys)), [str(y) for y in ys])
        ax.set_xlabel(labels[0])
        ax.set_ylabel(labels[1])
        fig.colorbar(im, ax=ax, label="loss (lower is better)")
    fig.suptitle(f"{os.path.basename(result['game'])}: tune, seed {result['seed']}", fontsize=10)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    return buf.getvalue()
