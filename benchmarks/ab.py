"""A/B of two checkouts in one process: random games per second of each launch game.

Loads the rulesvm of another checkout (A, e.g. a worktree of an older commit) and this one
(B) into one Python process, then plays the same seeded random games with each, in
alternating batches (so a drift of the machine's speed hits both alike), and prints the
median microseconds per game and the ratio B/A. Both must play the same games: the games'
result digests are compared too.

    git worktree add /tmp/before <commit>
    .venv/bin/python benchmarks/ab.py /tmp/before                  # every launch game
    .venv/bin/python benchmarks/ab.py /tmp/before --games giant_king --reps 9
    .venv/bin/python benchmarks/ab.py /tmp/before --cpu --separate     # each batch in a fresh process

Both sides in one process share its memory, and the one loaded second lies elsewhere in it:
on the reference machine the same code measured as A and as B differed by up to 3%.
`--separate` plays each batch in a fresh Python process of its own side instead (after a few
games to warm it), alternating the sides as well.

A checkout from before the packaging rule (its `rulesvm.dsl` mapped from `dsl/` by an
install) is given a temporary folder of links, so it can be compared as well.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLOCK = [time.perf_counter]      # --cpu: time.process_time
GAMES = ("giant_king", "mach_struggle", "alien_attack", "birthdays_fight", "ufo_abduction")


def importable_root(checkout: str, scratch: str) -> str:
    """A folder from which `import rulesvm.dsl` finds the checkout's code."""
    if os.path.isdir(os.path.join(checkout, "rulesvm", "dsl")):
        return checkout
    shim = os.path.join(scratch, "rulesvm")
    shutil.copytree(os.path.join(checkout, "rulesvm"), shim)
    for name in ("dsl", "interpreter", "cli"):
        os.symlink(os.path.join(checkout, name), os.path.join(shim, name))
    return scratch


def load_api(root: str):
    """The `rulesvm.api` of the checkout at `root`, loaded fresh (whatever rulesvm was loaded before)."""
    for name in list(sys.modules):
        if name == "rulesvm" or name.startswith("rulesvm."):
            del sys.modules[name]
    sys.path.insert(0, root)
    try:
        import rulesvm.api as api
    finally:
        sys.path.remove(root)
    return api


def batch(api, game, seeds, **how) -> tuple[float, str]:
    """Microseconds per random game over `seeds`, and a digest of their results."""
    h = hashlib.sha256()
    start = CLOCK[0]()
    for s in seeds:
        match = api.new_game(game, None, s, **how)
        rng = random.Random(s)
        while not match.is_over:
            match.apply(rng.randrange(len(match.legal_options)))
        h.update(json.dumps(match.result, sort_keys=True).encode())
    return (CLOCK[0]() - start) / len(seeds) * 1e6, h.hexdigest()


def separate_batch(checkout: str, folder: str, game: str, seeds: range, knowledge: bool, cpu: bool) -> tuple[float, str]:
    """`batch` in a fresh process that loads only `checkout`'s rulesvm (see --separate)."""
    code = ("import json, sys, time\n"
            f"sys.path.insert(0, {ROOT!r})\n"
            "import benchmarks.ab as ab\n"
            f"ab.CLOCK[0] = {'time.process_time' if cpu else 'time.perf_counter'}\n"
            f"api = ab.load_api({checkout!r})\n"
            f"g = api.load_game({os.path.join(folder, game + '.yaml')!r})\n"
            f"how = {{}} if {knowledge!r} else {{'knowledge': False}}\n"
            "ab.batch(api, g, range(5), **how)\n"
            f"print(json.dumps(ab.batch(api, g, range({seeds.start}, {seeds.stop}), **how)))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    us, digest = json.loads(out)
    return us, digest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("other", help="the checkout to compare with (A)")
    ap.add_argument("--games", nargs="*", default=list(GAMES))
    ap.add_argument("--reps", type=int, default=7, help="batches of each side")
    ap.add_argument("--batch", type=int, default=100, help="games in a batch")
    ap.add_argument("--cpu", action="store_true",
                    help="measure this process's CPU time, not the wall clock (other work on the machine counts less)")
    ap.add_argument("--games-from", default=os.path.join(ROOT, "games"), metavar="DIR",
                    help="read the game files from DIR (default: this checkout's games/), e.g. a copy without the keys "
                         "an older A cannot read")
    ap.add_argument("--own-games", action="store_true",
                    help="each side reads its own checkout's games/ (a change that also edited the game files)")
    ap.add_argument("--no-knowledge", action="store_true",
                    help="B keeps no record of what each seat knows, as a simulation of random bots and a search's "
                         "playouts do (A: a checkout from before knowledge was kept)")
    ap.add_argument("--separate", action="store_true",
                    help="play each batch in a fresh process of its side (see above), not both sides in this one")
    args = ap.parse_args()
    if args.cpu:
        CLOCK[0] = time.process_time
    sides = (("A", os.path.abspath(args.other)), ("B", ROOT))
    folders = {label: os.path.join(checkout, "games") if args.own_games else args.games_from for label, checkout in sides}
    with tempfile.TemporaryDirectory() as scratch:
        roots = {label: importable_root(checkout, os.path.join(scratch, label)) for label, checkout in sides}
        if args.separate:
            def play(label, game, seeds, knowledge):
                return separate_batch(roots[label], folders[label], game, seeds, knowledge, args.cpu)
        else:
            loaded = {}
            # Each side loads its games before the next side's rulesvm replaces it in sys.modules.
            for label, _ in sides:
                api = load_api(roots[label])
                loaded[label] = (api, {g: api.load_game(os.path.join(folders[label], f"{g}.yaml")) for g in args.games})

            def play(label, game, seeds, knowledge):
                api, games = loaded[label]
                return batch(api, games[game], seeds, **({} if knowledge else {"knowledge": False}))
        print(f"A = {args.other}, B = {ROOT}; median µs per random game over {args.reps} batches of {args.batch}"
              + (", each in a fresh process" if args.separate else ""))
        for g in args.games:
            times: dict = {"A": [], "B": []}
            for rep in range(args.reps):
                seeds = range(rep * args.batch, (rep + 1) * args.batch)
                digests = set()
                for label in (("A", "B") if rep % 2 == 0 else ("B", "A")):
                    us, digest = play(label, g, seeds, not (args.no_knowledge and label == "B"))
                    times[label].append(us)
                    digests.add(digest)
                if len(digests) != 1:
                    print(f"{g}: the two sides play different games (seeds {seeds.start}..{seeds.stop - 1})")
            a, b = statistics.median(times["A"]), statistics.median(times["B"])
            print(f"{g:18} A {a:8.0f} µs   B {b:8.0f} µs   B/A {b / a:.3f}", flush=True)


if __name__ == "__main__":
    main()
