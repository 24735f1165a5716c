"""A digest of seeded games, to prove that a change keeps every game byte-identical.

For every game file under games/ (each variant too), every player count it allows and
seeds 0..N-1, plays a game with the default bots (`random` on every seat, seeded as the CLI
seeds them) and hashes the JSON Lines log the CLI's `--log` would write. Prints one line
per game and variant, then the digest of everything. Run it before and after a change:

    .venv/bin/python benchmarks/seeded_digest.py --seeds 200 > before.txt
    ... change ...
    .venv/bin/python benchmarks/seeded_digest.py --seeds 200 | diff before.txt -
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from rulesvm import api  # noqa: E402
from rulesvm.interpreter.runtime import PERSON_ONLY  # noqa: E402


def digest_game(path: str, variant: str | None, seeds: int) -> str:
    game = api.load_game(path, variants=[variant] if variant else [])
    low, high = game.model.players[:2]
    h = hashlib.sha256()
    for players in range(low, high + 1):
        for seed in range(seeds):
            lines: list[str] = []
            # What the CLI's --log writes: not the records told only to people.
            match = api.new_game(game, players, seed, sink=lambda e: e["type"] in PERSON_ONLY
                                 or lines.append(json.dumps(e, sort_keys=True)))
            try:
                api.play(match, api.default_agents(match, seed=seed))
            except Exception as exc:            # a rules error is part of the game's bytes too
                lines.append(f"error {type(exc).__name__}: {exc}")
            h.update("\n".join(lines).encode())
            h.update(f"\n#{players}/{seed}\n".encode())
    return h.hexdigest()[:16]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--games", nargs="*", help="game ids (default: every game under games/)")
    args = ap.parse_args()
    total = hashlib.sha256()
    for path in sorted(glob.glob(os.path.join(ROOT, "games", "*.yaml"))):
        gid = os.path.splitext(os.path.basename(path))[0]
        if args.games and gid not in args.games:
            continue
        model = api.load_game(path).model
        for variant in [None, *sorted(model.variants)]:
            d = digest_game(path, variant, args.seeds if variant is None else max(1, args.seeds // 10))
            total.update(d.encode())
            print(f"{gid:20} {variant or '-':24} {d}", flush=True)
    print(f"{'all':20} {'':24} {total.hexdigest()[:16]}")


if __name__ == "__main__":
    main()
