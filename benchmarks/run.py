"""Benchmarks (run by hand, never as timed tests), printed as five tables.

1. Per launch game and player count (interpreter): random games per second, decisions per
   second, snapshot+restore pairs per second.
2. Per launch game: time to load the game (`api.load_game`: YAML, rules, checks, compile),
   cold (a fresh Python process: imports + load) and warm (again in this process); peak
   memory of a fresh process that loads the game and plays 20 random games (resident set,
   from `resource`); Python heap peaks (`tracemalloc`) of loading the game (in a process
   that loaded it before: the grammar is cached) and of playing 20 random games (above
   what was allocated before them).
2b. Bots, default parameters, default player count: MCTS iterations per second and greedy
   decisions per second, deciding along random games; for Giant King, the CPU time of a
   whole 4-player game with four `mcts:iterations=100` seats.
3. Per launch game: the cost of simulation's statistics: CPU time per game of
   `rulesvm simulate --agents random --jobs 1` (`analysis.simulate.play_one`, every metric of
   the default run) over the raw random playout of the same seeds (`api.play`), alternating
   batches, median ratio (the target is at most 1.2x).
4. For the games with a hand-written reference (benchmarks/reference/): interpreted time
   per game / hand-written time per game. Both play the same seeds with the same choices
   (tests/test_differential.py checks that they are the same games); batches of reference
   and interpreted games alternate in one run, and the ratio is the median of `--reps`
   repetitions (min-max shown). Where a game also has a literal translation of its rules
   script (LITERALS), it is timed on the same seeds: literal/reference is the cost of the
   script's way of playing (its cards and zones), interpreted/literal the cost of interpreting.

    .venv/bin/python benchmarks/run.py                 # every game, a few minutes
    .venv/bin/python benchmarks/run.py --games giant_king --seconds 10
    .venv/bin/python benchmarks/run.py --games mach_struggle --only reference

Figures go to docs/performance.md; see it for the numbers on the reference machine.
"""

from __future__ import annotations

import argparse
import gc
import glob
import json
import os
import random
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from rulesvm import api  # noqa: E402
from rulesvm.interpreter.agents import SeatView, make_agent  # noqa: E402
from rulesvm.interpreter.rng import below, seed_state  # noqa: E402

from benchmarks.reference import giant_king, giant_king_literal, mach_struggle, mach_struggle_literal  # noqa: E402

# Games with a hand-written reference, and the player counts to compare.
REFERENCES = {"giant_king": (giant_king, (4, 3)), "mach_struggle": (mach_struggle, (2,))}
# Statement-by-statement translations of a game's rules script (see mach_struggle_literal.py):
# they split the ratio into what the script's way of playing costs and what interpreting costs.
LITERALS = {"mach_struggle": mach_struggle_literal, "giant_king": giant_king_literal}
SECTIONS = ("playouts", "games", "bots", "simulate", "reference")
MCTS_ITERATIONS = 25     # per decision, when measuring MCTS iterations per second


def game_paths(names: list[str] | None) -> list[str]:
    out = []
    for path in sorted(glob.glob(os.path.join(ROOT, "games", "*.yaml"))):
        gid = os.path.splitext(os.path.basename(path))[0]
        if names is None or gid in names:
            out.append(path)
    return out


# ---------------------------------------------------------------------- 1. playouts

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


# ---------------------------------------------------------------------- 2. loading, MCTS, memory

_COLD = r"""
import json, resource, sys, time, tracemalloc
t0 = time.perf_counter()
from rulesvm import api
from rulesvm.interpreter.rng import below, seed_state
t1 = time.perf_counter()
game = api.load_game(sys.argv[1])
t2 = time.perf_counter()

def play(n):
    for seed in range(n):
        match = api.new_game(game, None, seed)
        state = seed_state(seed)
        while not match.is_over:
            i, state = below(state, len(match.legal_options))
            match.apply(i)

play(20)
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss      # KiB on Linux
tracemalloc.start()
game = api.load_game(sys.argv[1])
load_heap = tracemalloc.get_traced_memory()[1]
tracemalloc.reset_peak()
base = tracemalloc.get_traced_memory()[0]
play(20)
play_heap = tracemalloc.get_traced_memory()[1] - base
print(json.dumps({"imports": t1 - t0, "load": t2 - t1, "rss_kib": rss, "load_heap": load_heap,
                  "play_heap": play_heap}))
"""


def cold_process(path: str) -> dict:
    """Imports + load in a fresh Python process, and that process's memory peaks."""
    out = subprocess.run([sys.executable, "-c", _COLD, path], capture_output=True, text=True, check=True,
                         cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def warm_load(path: str, repeats: int = 5) -> float:
    api.load_game(path)
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        api.load_game(path)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def bot_rate(game, players: int, seconds: float, spec: str) -> float:
    """Decisions per second of the agent `spec`, deciding at successive decisions (those with
    more than one option) of random games."""
    agent = make_agent(spec, 1)
    done = 0
    spent = 0.0
    seed = 0
    match = api.new_game(game, players, seed)
    state = seed_state(seed)
    while spent < seconds:
        if match.is_over:
            seed += 1
            match = api.new_game(game, players, seed)
        n = len(match.legal_options)
        if n > 1:
            t = time.perf_counter()
            agent.choose(SeatView(match, match.current_player))
            spent += time.perf_counter() - t
            done += 1
        i, state = below(state, n)
        match.apply(i)
    return done / spent


def bot_game_seconds(game, players: int, spec: str, seeds=range(3)) -> float:
    """Median CPU seconds of a whole game with `spec` in every seat."""
    times = []
    for seed in seeds:
        agents = api.make_agents({s: spec for s in range(players)}, seed)
        match = api.new_game(game, players, seed)
        t = time.process_time()
        while not match.is_over:
            seat = match.current_player
            match.apply(agents[seat].choose(SeatView(match, seat)))
        times.append(time.process_time() - t)
    return statistics.median(times)


# ---------------------------------------------------------------------- 3. against the references

def simulate_overhead(path: str, reps: int, batch: int = 50) -> tuple[float, float]:
    """Median CPU µs per game: raw random playouts, and simulate's play_one on the same seeds."""
    from rulesvm.analysis import simulate as sim
    config = sim.SimConfig(game=path, n=batch, seed=1, agents=("random",))
    game = sim.load_for(config)
    heads = [sim._record_head(config, i) for i in range(batch)]

    def raw_batch() -> float:
        start = time.process_time()
        for h in heads:
            # Random bots read no knowledge, and simulate keeps none for them (Agent.reads_knowledge).
            m = api.new_game(game, h["players"], h["seed"], knowledge=False)
            api.play(m, api.make_agents(dict(enumerate(h["agents"])), h["seed"]))
        return (time.process_time() - start) / batch * 1e6

    def sim_batch() -> float:
        start = time.process_time()
        for i in range(batch):
            sim.play_one(config, i)
        return (time.process_time() - start) / batch * 1e6
    raw_batch(), sim_batch()            # warm up
    raws, sims = [], []
    for _ in range(reps):
        raws.append(raw_batch())
        sims.append(sim_batch())
    return statistics.median(raws), statistics.median(sims)


def play_batch(new, players: int, seeds, passes: int = 1) -> float:
    """Seconds to play the games of `seeds` (`passes` times) with seeded random choices.

    The choices come from `random.Random(seed)` (cheap, so the driver weighs little in the
    time); both engines get the same driver, so they play the same games.
    """
    gc.collect()
    start = time.perf_counter()
    for _ in range(passes):
        for seed in seeds:
            g = new(players, seed)
            r = random.Random(seed).random
            d = g.decision
            while d is not None:
                g.apply(int(r() * len(d.options)))
                d = g.decision
    return time.perf_counter() - start


def reference_ratio(game, reference, players: int, seconds: float, reps: int, literal=None) -> dict:
    """Interleaved batches of reference and interpreted games on the same seeds (and of the
    literal translation, if there is one)."""
    def interpreted(n, seed):
        return api.new_game(game, n, seed)
    ref = reference.Game
    # Calibrate: batches of about seconds / (2 reps) each side.
    t_int = play_batch(interpreted, players, range(10**6, 10**6 + 3)) / 3
    t_ref = play_batch(ref, players, range(10**6, 10**6 + 30)) / 30
    budget = seconds / (2 * reps)
    size = max(5, int(budget / t_int))
    passes = max(1, round(budget / (size * t_ref)))
    ratios, ref_rates, int_rates, lit_ratios = [], [], [], []
    for rep in range(reps):
        seeds = range(rep * size, (rep + 1) * size)
        if rep % 2 == 0:
            tr = play_batch(ref, players, seeds, passes)
            ti = play_batch(interpreted, players, seeds)
        else:
            ti = play_batch(interpreted, players, seeds)
            tr = play_batch(ref, players, seeds, passes)
        per_ref, per_int = tr / (size * passes), ti / size
        ratios.append(per_int / per_ref)
        ref_rates.append(1 / per_ref)
        int_rates.append(1 / per_int)
        if literal is not None:
            lit_ratios.append(play_batch(literal.Game, players, seeds, passes) / (size * passes) / per_ref)
    out = {"ratio": statistics.median(ratios), "min": min(ratios), "max": max(ratios),
           "ref_gps": statistics.median(ref_rates), "int_gps": statistics.median(int_rates),
           "games": size, "passes": passes}
    if lit_ratios:
        out["literal"] = statistics.median(lit_ratios)
    return out


# ---------------------------------------------------------------------- the tables

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", nargs="*", help="game ids (default: every game in games/)")
    parser.add_argument("--seconds", type=float, default=5.0, help="time per measurement")
    parser.add_argument("--reps", type=int, default=7, help="repetitions of the reference comparison")
    parser.add_argument("--only", nargs="*", choices=SECTIONS, help="tables to print (default: all)")
    args = parser.parse_args()
    sections = args.only or SECTIONS
    paths = game_paths(args.games)
    games = {}
    for path in paths:
        games[path] = api.load_game(path)

    if "playouts" in sections:
        print("Interpreter: random playouts")
        print(f"{'game':<16}{'players':>8}{'games/s':>10}{'decisions/s':>13}{'snap+restore/s':>16}")
        for path, game in games.items():
            lo, hi, default = game.model.players
            for players in sorted({lo, default, hi}):
                gps, dps, _ = playouts(game, players, args.seconds)
                sps = snapshots(game, players, min(args.seconds, 2.0))
                print(f"{game.model.id:<16}{players:>8}{gps:>10.1f}{dps:>13.0f}{sps:>16.0f}", flush=True)
        print()

    if "games" in sections:
        print("Interpreter: loading (api.load_game), memory")
        print(f"{'game':<16}{'load cold s':>12}{'(imports s)':>12}{'load warm s':>12}"
              f"{'peak RSS MB':>13}{'load heap MB':>14}{'game heap KB':>14}")
        for path, game in games.items():
            cold = cold_process(path)
            warm = warm_load(path)
            print(f"{game.model.id:<16}{cold['imports'] + cold['load']:>12.3f}{cold['imports']:>12.3f}"
                  f"{warm:>12.3f}{cold['rss_kib'] / 1024:>13.1f}{cold['load_heap'] / 2**20:>14.1f}"
                  f"{cold['play_heap'] / 1024:>14.0f}",
                  flush=True)
        print()

    if "bots" in sections:
        print("Bots (default parameters): MCTS iterations per second, greedy decisions per second, "
              "along random games")
        print(f"{'game':<16}{'players':>8}{'MCTS it/s':>11}{'greedy dec/s':>14}")
        for path, game in games.items():
            players = game.model.players[2]
            its = bot_rate(game, players, min(args.seconds, 5.0), f"mcts:iterations={MCTS_ITERATIONS}") * MCTS_ITERATIONS
            greedy = bot_rate(game, players, min(args.seconds, 5.0), "greedy")
            print(f"{game.model.id:<16}{players:>8}{its:>11.0f}{greedy:>14.1f}", flush=True)
            if game.model.id == "giant_king":
                secs = bot_game_seconds(game, 4, "mcts:iterations=100")
                print(f"  giant_king, 4 players, four mcts:iterations=100 seats: {secs:.1f} s CPU per game "
                      "(median of seeds 0-2)", flush=True)
        print()

    if "simulate" in sections:
        print("Simulation: CPU time per game of `simulate --agents random --jobs 1` / raw random playout")
        print(f"{'game':<16}{'players':>8}{'raw µs':>10}{'simulate µs':>13}{'overhead':>10}")
        for path, game in games.items():
            raw, sim = simulate_overhead(path, args.reps)
            print(f"{game.model.id:<16}{game.model.players[2]:>8}{raw:>10.0f}{sim:>13.0f}{sim / raw:>9.2f}x", flush=True)
        print()

    if "reference" in sections:
        compared = [(game, REFERENCES[game.model.id]) for game in games.values() if game.model.id in REFERENCES]
        if compared:
            print(f"Interpreter / hand-written reference: time per game, same seeds and choices, "
                  f"interleaved, median of {args.reps}")
            print(f"{'game':<16}{'players':>8}{'reference games/s':>19}{'interpreted games/s':>21}"
                  f"{'ratio':>8}{'min-max':>14}{'literal/ref':>13}{'interpreted/literal':>21}")
            for game, (reference, counts) in compared:
                for players in counts:
                    r = reference_ratio(game, reference, players, 2 * args.seconds, args.reps,
                                        LITERALS.get(game.model.id))
                    span = f"{r['min']:.1f}-{r['max']:.1f}"
                    split = f"{r['literal']:>12.1f}x{r['ratio'] / r['literal']:>20.1f}x" if "literal" in r else ""
                    print(f"{game.model.id:<16}{players:>8}{r['ref_gps']:>19.0f}{r['int_gps']:>21.1f}"
                          f"{r['ratio']:>7.1f}x{span:>14}{split}", flush=True)


if __name__ == "__main__":
    main()
