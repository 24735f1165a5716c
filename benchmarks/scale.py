"""Simulation at scale: is memory flat in the number of games? (run by hand, never as a test)

Plays `simulate --agents random` of a game for each number of games and each backend, every
run in a fresh Python process (peak memory is a process's high-water mark), and prints wall
time, games per second and peak resident memory: of the parent process, of its largest
worker, and of the whole process tree (sampled every 0.2 s). Runs of the same number of
games on different backends must give the same numbers: the summaries (without times and
the backend's name) are compared by digest.

    .venv/bin/python benchmarks/scale.py                              # 10,000 games, jobs 2 and dask
    .venv/bin/python benchmarks/scale.py --games 10000 1000000 --backends jobs2 dask
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BACKENDS = {"jobs1": {"jobs": 1}, "jobs2": {"jobs": 2},
            "dask": {"backend": "dask", "cluster_options": {"workers": 2}}}
VARYING = ("wall_time", "jobs", "backend", "time_per_game")


def tree_rss_mb() -> float:
    """Resident memory of this process and all its descendants, in MB (psutil, which Dask
    brings; 0 without it)."""
    try:
        import psutil
    except ImportError:
        return 0.0
    me = psutil.Process()
    total = 0
    for p in [me] + me.children(recursive=True):
        try:
            total += p.memory_info().rss
        except psutil.Error:
            pass            # a worker that ended between the listing and the reading
    return total / 2 ** 20


def one_run(game: str, n: int, backend: str) -> dict:
    """In this process: simulate n games, return figures and the summary's digest."""
    sys.path.insert(0, ROOT)
    from rulesvm.analysis.simulate import SimConfig, simulate
    peak = [0.0]
    done = threading.Event()

    def sample():
        while not done.wait(0.2):
            peak[0] = max(peak[0], tree_rss_mb())
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    start = time.perf_counter()
    summary = simulate(SimConfig(game=game, n=n, chunk=100), **BACKENDS[backend])
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    kept = {k: v for k, v in summary.items() if k not in VARYING}
    return {"games": summary["games"], "errors": len(summary["errors"]), "wall_s": round(wall, 1),
            "games_per_s": round(n / wall), "parent_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "largest_worker_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
            "tree_mb": round(peak[0], 1),
            "digest": hashlib.sha256(json.dumps(kept, sort_keys=True).encode()).hexdigest()[:16]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--game", default=os.path.join(ROOT, "games", "mach_struggle.yaml"))
    ap.add_argument("--games", type=int, nargs="*", default=[10_000])
    ap.add_argument("--backends", nargs="*", default=["jobs2", "dask"], choices=sorted(BACKENDS))
    ap.add_argument("--one", nargs=2, metavar=("N", "BACKEND"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one_run(args.game, int(args.one[0]), args.one[1])))
        return
    print(f"{'games':>10} {'backend':>8} {'wall s':>8} {'games/s':>8} {'parent MB':>10} "
          f"{'worker MB':>10} {'tree MB':>8}  digest")
    for n in args.games:
        digests = set()
        for backend in args.backends:
            out = subprocess.run([sys.executable, __file__, "--game", args.game, "--one", str(n), backend],
                                 capture_output=True, text=True, check=True)
            r = json.loads(out.stdout.strip().splitlines()[-1])
            digests.add(r["digest"])
            print(f"{n:>10} {backend:>8} {r['wall_s']:>8} {r['games_per_s']:>8} {r['parent_mb']:>10.0f} "
                  f"{r['largest_worker_mb']:>10.0f} {r['tree_mb']:>8.0f}  {r['digest']}"
                  + (f"  ({r['errors']} failed)" if r["errors"] else ""), flush=True)
        if len(digests) > 1:
            print(f"{n} games: the backends gave different summaries")


if __name__ == "__main__":
    main()
