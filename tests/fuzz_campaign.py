"""Fuzzing: mutate the launch games' files and check that rulesvm never crashes or hangs.

Each case copies one launch game's files, mutates one of them (its YAML game file, a rules
file, or one of its variant files) with one to three edits (delete, duplicate, swap or
insert lines and tokens, change a character, cut the file short), validates the result
(`rulesvm.api.validate_path`), and when it is valid plays a short game with random moves
(`load_game`, `new_game` with a step limit, up to 40 decisions, observations). The only
exceptions allowed are the documented ones: `DiagnosticError`, `ValueError` (the API's
usage errors), `RulesRuntimeError` and `IllegalMove`; anything else, or a case running
longer than the time limit, is a failure.

Cases are numbered and derived from (seed, number), so any case can be replayed:

    python -m tests.fuzz_campaign --cases 100000 --jobs 2     # a campaign (see docs/dev/fuzz-campaigns.md)
    python -m tests.fuzz_campaign --replay 12345 --seed 0      # one case again, with its traceback
    python -m tests.fuzz_campaign --cases 5000 --backends      # also compare the two back ends

`tests/test_fuzz.py` runs a small campaign with hypothesis in the test suite.
"""

from __future__ import annotations

import argparse
import collections
import glob
import json
import multiprocessing
import os
import random
import re
import shutil
import signal
import sys
import tempfile
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GAMES = os.path.join(ROOT, "games")
CASE_SECONDS = 20          # a case running longer is a hang
MAX_DECISIONS = 40
MAX_STEPS = 20_000
FILE_STEPS = 0.1           # the share of cases played with the game file's own step limit

RULES_TOKENS = (
    "kind zone var option event proc func ability phase on setup game let if elif else then for in while "
    "repeat loop break continue return emit and or not true false none simultaneous when as "
    "players p c self you hand count choose choose_many top draw move end_game x per_player per_card "
    "+ - * / % == != < <= > >= = += -= => .. . , : ; -> { } ( ) [ ] { } ( ) "
    '0 1 -1 999999999999999999999999 1.5 "" "x" "{" "}" "{1 +}" "{p}" "a\\"b" @ \' # \\ é '
    '999999999999999999 1..999999 sum sorted permutations product [[[[[[[[1]]]]]]]] * "{x}{x}"'
).split(" ") + ['"unterminated', "\t", "\x00", "\ufeff", "\n"]
YAML_TOKENS = [": ", "- ", "{", "}", "[", "]", "&a ", "*a", "!!python/object/apply:os.system [x]", "<<: *a",
               "'", '"', "#", "|", ">", "---", "...", "\t", "~", "null", "true", "1e9", "-1", "0x10",
               "key: value", "  ", "\n", "id: x", "kind: token", "count: 1000", "rules: ../x.rules",
               "/etc/passwd", "!!set {a}", "\\ud800", "\x00", "é", "count: 999999", "max_steps: 10000000",
               "[[[[[[[[[[[[1]]]]]]]]]]]]", "999999999999999999999", "power: 999999999999999999"]
# Hostile inputs (docs/security.md): huge numbers, deep nesting, big counts, growth by
# interpolation and arithmetic, work per item. A "hostile_line" edit declares the variables
# these use at the top of a rules file and inserts one of them at a random line.
HOSTILE_HEADER = 'var _g: int = 3\nvar _l: list[any] = [1]\nvar _s: text = "ab"\nvar _n: list[int] = []\n'
HOSTILE_LINES = [
    "loop { _g = _g * _g }", "repeat 200 { _g += _g }", "_g = sum([_g, _g])", 'loop { _s = "{_s}{_s}" }',
    "repeat 40 { _l = [_l, _l] }", "loop { _l = [_l] }", 'log("{_l}")', "_n = 1..999999",
    "_g = sum([sum(_n) for i in _n])", "_g = count([sorted(_n) for i in _n])", "_g = count([i for i in _n if i in _n])",
    "_g = count(permutations(1..20, size: 20))", "_g = count(product([_n, _n, _n]))", "loop { _l = _l + _l }",
    "_g = 999999999999999999 * 999999999999999999", "_l = " + "[" * 150 + "1" + "]" * 150,
    'loop { _s = join([_s, _s], separator: "") }', "_g = count([[i, _n] for i in _n])",
]
TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|\w+|\S')


# ---------------------------------------------------------------------- mutations

def _lines(text: str) -> list[str]:
    return text.split("\n")


def mutate(text: str, rng: random.Random, yaml_file: bool) -> tuple[str, str]:
    """One edit of a file's text; returns (new text, what was done)."""
    kind = rng.choice(["delete_line", "duplicate_line", "swap_lines", "insert_line", "indent_line",
                       "delete_token", "duplicate_token", "swap_tokens", "insert_token", "replace_token",
                       "insert_token", "replace_token", "change_char", "truncate", "hostile_line"])
    pool = YAML_TOKENS if yaml_file else RULES_TOKENS
    lines = _lines(text)
    if kind == "hostile_line":
        if yaml_file:
            return text + "\n" + rng.choice(YAML_TOKENS), "append_token"
        # Half the time just inside a block, where the line runs (elsewhere it is mostly a syntax error).
        blocks = [k + 1 for k, x in enumerate(lines) if x.rstrip().endswith("{") and not x.startswith(("kind", "zone"))]
        i = rng.choice(blocks) if blocks and rng.random() < 0.5 else rng.randrange(len(lines) + 1)
        line = rng.choice(HOSTILE_LINES)
        lines.insert(i, line)
        return HOSTILE_HEADER + "\n".join(lines), f"{kind} {i + 1} {line[:40]!r}"
    if kind.endswith("line") or kind == "swap_lines":
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        if kind == "delete_line":
            del lines[i]
        elif kind == "duplicate_line":
            lines.insert(i, lines[i])
        elif kind == "swap_lines":
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == "insert_line":
            lines.insert(i, lines[j] if rng.random() < 0.7 else rng.choice(pool))
        else:
            lines[i] = (" " * rng.choice([1, 2, 4]) + lines[i]) if rng.random() < 0.5 else lines[i].lstrip()
        return "\n".join(lines), f"{kind} {i + 1} {j + 1}"
    if kind == "truncate":
        k = rng.randrange(len(text) + 1)
        return text[:k], f"truncate {k}"
    if kind == "change_char":
        k = rng.randrange(len(text) + 1)
        ch = rng.choice(["", " ", "\n", "{", "}", ":", '"', "'", "#", "\\", "0", "a", "\t", "é", "\x00"])
        return text[:k] + ch + text[k + 1:], f"change_char {k} {ch!r}"
    tokens = [(m.start(), m.end()) for m in TOKEN.finditer(text)]
    if not tokens:
        return text + rng.choice(pool), "append_token"
    a = tokens[rng.randrange(len(tokens))]
    b = tokens[rng.randrange(len(tokens))]
    if kind == "delete_token":
        return text[:a[0]] + text[a[1]:], f"{kind} @{a[0]}"
    if kind == "duplicate_token":
        return text[:a[1]] + " " + text[a[0]:a[1]] + text[a[1]:], f"{kind} @{a[0]}"
    if kind == "swap_tokens":
        (s1, e1), (s2, e2) = sorted([a, b])
        if e1 > s2:
            return text, "swap_tokens (same)"
        return text[:s1] + text[s2:e2] + text[e1:s2] + text[s1:e1] + text[e2:], f"{kind} @{s1} @{s2}"
    new = rng.choice(pool) if rng.random() < 0.6 else text[b[0]:b[1]]
    if kind == "insert_token":
        return text[:a[0]] + new + " " + text[a[0]:], f"{kind} @{a[0]} {new!r}"
    return text[:a[0]] + new + text[a[1]:], f"{kind} @{a[0]} {new!r}"


# ---------------------------------------------------------------------- the games

def launch_games() -> list[dict]:
    """Each launch game: its YAML file, rules files and variant files (paths relative to games/)."""
    import yaml
    out = []
    for path in sorted(glob.glob(os.path.join(GAMES, "*.yaml"))):
        with open(path, encoding="utf-8") as fh:
            data = yaml.safe_load(fh)
        if not isinstance(data, dict) or "rules" not in data:
            continue
        rules = data["rules"] if isinstance(data["rules"], list) else [data["rules"]]
        variants = list((data.get("variants") or {}).values())
        rel = os.path.relpath(path, GAMES)
        out.append({"game": rel, "rules": rules, "variants": variants,
                    "card_sets": list(data.get("card_sets") or [])})
    return out


def plan(seed: int, number: int, games: list[dict]) -> dict:
    """The case `number` of a campaign: which game, which file, which edits."""
    rng = random.Random(f"{seed}:{number}")
    g = games[rng.randrange(len(games))]
    r = rng.random()
    if r < 0.55:
        target = rng.choice(g["rules"])
    elif r < 0.9 or not g["variants"]:
        target = g["game"]
    else:
        target = rng.choice(g["variants"])
    return {"number": number, "game": g["game"], "target": target, "edits": 1 + (rng.random() < 0.3)
            + (rng.random() < 0.1), "rng": rng}


# ---------------------------------------------------------------------- one case

class Hang(BaseException):
    pass


def _alarm(signum, frame):
    raise Hang()


def _set_limit(seconds: float) -> None:
    """Limit a case's CPU time (SIGPROF: a busy machine does not make a slow case a hang),
    with a wall-clock backstop ten times longer (SIGALRM)."""
    signal.setitimer(signal.ITIMER_PROF, seconds)
    signal.alarm(int(seconds * 10) if seconds else 0)


class Worker:
    """A private copy of games/ to mutate files in, case after case."""

    def __init__(self, backends: bool = False):
        self.backends = backends      # also play each valid case under both back ends and compare
        self.dir = tempfile.mkdtemp(prefix="rulesvm-fuzz-")
        self.games_dir = os.path.join(self.dir, "games")
        shutil.copytree(GAMES, self.games_dir, ignore=shutil.ignore_patterns("scenarios", "__pycache__"))
        self.originals: dict = {}
        signal.signal(signal.SIGALRM, _alarm)
        signal.signal(signal.SIGPROF, _alarm)

    def close(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def run(self, case: dict) -> dict:
        from rulesvm import api
        from rulesvm.dsl.diagnostics import DiagnosticError
        from rulesvm.interpreter import IllegalMove, RulesRuntimeError

        rng = case["rng"]
        path = os.path.join(self.games_dir, case["target"])
        if path not in self.originals:
            with open(path, encoding="utf-8") as fh:
                self.originals[path] = fh.read()
        text = self.originals[path]
        done = []
        for _ in range(case["edits"]):
            text, what = mutate(text, rng, path.endswith(".yaml"))
            done.append(what)
        result = {"number": case["number"], "game": case["game"], "target": case["target"], "edits": done}
        with open(path, "w", encoding="utf-8", errors="surrogatepass") as fh:
            fh.write(text)
        _set_limit(CASE_SECONDS)
        try:
            game_path = os.path.join(self.games_dir, case["game"])
            is_variant = "/variants/" in case["target"]
            diags = api.validate_path(path if is_variant else game_path)
            if any(d.is_error for d in diags):
                result["outcome"] = "invalid"
                result["codes"] = sorted({d.code for d in diags if d.is_error})
                return result
            variants = [path] if is_variant else []
            game = api.load_game(game_path, variants=variants)
            if self.backends:
                difference = compare_backends(game, case["number"])
                if difference:
                    result["outcome"] = "FAILURE"
                    result["failure"] = f"back ends differ: {difference}"
                    return result
            # Mostly a short step limit; sometimes the file's own (up to the 10,000,000 ceiling).
            limit = None if rng.random() < FILE_STEPS else MAX_STEPS
            match = api.new_game(game, seed=rng.randrange(1000), max_steps=limit)
            for k in range(MAX_DECISIONS):
                if match.is_over:
                    break
                if k % 7 == 0:
                    match.observation(match.current_player)
                match.apply(rng.randrange(len(match.legal_options)))
            result["outcome"] = "over" if match.is_over else "played"
        except RulesRuntimeError as exc:
            result["outcome"] = "runtime_error"
            result["codes"] = [exc.code]
        except (DiagnosticError, ValueError, IllegalMove) as exc:
            result["outcome"] = "refused"
            result["codes"] = [type(exc).__name__]
            result["message"] = str(exc)[:300]
        except Hang:
            result["outcome"] = "FAILURE"
            result["failure"] = f"hang: more than {CASE_SECONDS}s of CPU time"
        except BaseException as exc:  # noqa: BLE001 - this is what the campaign looks for
            if isinstance(exc, KeyboardInterrupt):
                raise
            tb = traceback.extract_tb(exc.__traceback__)
            where = next((f"{os.path.relpath(f.filename, ROOT)}:{f.lineno}" for f in reversed(tb)
                          if f.filename.startswith(ROOT)), "?")
            result["outcome"] = "FAILURE"
            result["failure"] = f"{type(exc).__name__} at {where}: {str(exc)[:200]}"
            result["traceback"] = traceback.format_exc()
        finally:
            _set_limit(0)
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(self.originals[path])
        return result


def compare_backends(game, number: int) -> str | None:
    """Play one game (seeded by the case number) under the generated code and under the
    plain closures, with a listener and without; None if they agree, else what differs.

    The back ends must agree event for event with a listener, and on the end without one.
    With and without a listener must end alike too (the cheap moves against the general
    ones), except when the logged game stops with an error: a log line's text is built only
    for a listener, so a mistake in it shows only then (docs/language.md, Randomness)."""
    import json as _json
    from rulesvm import api
    from rulesvm.interpreter import RulesRuntimeError, compile_program
    from rulesvm.interpreter.state import state_to_json

    def play(codegen: bool, listen: bool):
        program = compile_program(game.model, game.options, codegen=codegen)
        lines: list = []
        sink = (lambda r: lines.append(_json.dumps(r, sort_keys=True, default=str))) if listen else None
        choose = random.Random(number).randrange
        try:
            match = api.Match(program, None, number % 1000, sink=sink, max_steps=MAX_STEPS)
            for _ in range(MAX_DECISIONS):
                if match.is_over:
                    break
                match.apply(choose(len(match.legal_options)))
            return lines, _json.dumps([match.result, state_to_json(match.state)], sort_keys=True, default=str), False
        except RulesRuntimeError as exc:
            return lines, f"{exc.code} {exc.message} at {exc.span}", True

    def first_difference(a: list, b: list) -> str:
        at = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        return f"event {at}: {a[at:at + 1]} != {b[at:at + 1]}"
    generated, closures = play(True, True), play(False, True)
    if generated[0] != closures[0]:
        return "with a listener, " + first_difference(generated[0], closures[0])
    if generated[1] != closures[1]:
        return f"with a listener, the end: {generated[1][:200]} != {closures[1][:200]}"
    quiet, quiet_closures = play(True, False), play(False, False)
    if quiet[1] != quiet_closures[1]:
        return f"without a listener, the end: {quiet[1][:200]} != {quiet_closures[1][:200]}"
    if not closures[2] and quiet[1] != closures[1]:
        return f"without a listener against with one: {quiet[1][:200]} != {closures[1][:200]}"
    return None


# ---------------------------------------------------------------------- a campaign

_WORKER = None


def _cache_parses() -> None:
    """Most cases leave most files alone: parse each unchanged rules and YAML text once per
    worker. (The AST is immutable and every load checks it afresh; YAML data is copied for
    each load. Only parsing is saved: a mutated text is always parsed for real.)"""
    import copy
    import functools
    from rulesvm.dsl import loader, parser, yaml_loader
    cached = functools.lru_cache(maxsize=64)(parser.parse_rules)

    def parse_rules(text: str, path: str):
        return cached(text, path)
    loader.parse_rules = parse_rules
    cached_yaml = functools.lru_cache(maxsize=64)(yaml_loader.load_yaml_text)

    def load_yaml_text(text: str, file: str, values=yaml_loader.ValueLimit()):
        data, marks = cached_yaml(text, file, values)      # (a value limit is a frozen, hashable record)
        return copy.deepcopy(data), copy.copy(marks)
    yaml_loader.load_yaml_text = load_yaml_text


def _init(backends: bool = False):
    global _WORKER
    os.nice(10)                 # a campaign leaves the machine to interactive work
    _cache_parses()
    _WORKER = Worker(backends)


def _run_range(args):
    seed, start, stop, games = args
    out = []
    for n in range(start, stop):
        case = plan(seed, n, games)
        out.append(_WORKER.run(case))
    return out


def campaign(cases: int, seed: int = 0, jobs: int = 1, chunk: int = 200, progress=None,
             failures_file: str | None = None, backends: bool = False) -> dict:
    games = launch_games()
    started = time.perf_counter()
    outcomes: collections.Counter = collections.Counter()
    codes: collections.Counter = collections.Counter()
    failures: list = []
    ranges = [(seed, a, min(a + chunk, cases), games) for a in range(0, cases, chunk)]
    with multiprocessing.Pool(jobs, initializer=_init, initargs=(backends,)) as pool:
        for batch in pool.imap_unordered(_run_range, ranges):
            for r in batch:
                outcomes[r["outcome"]] += 1
                for c in r.get("codes", []):
                    codes[c] += 1
                if r["outcome"] == "FAILURE":
                    failures.append(r)
                    if failures_file:             # as they come: a long campaign may be stopped
                        with open(failures_file, "a", encoding="utf-8") as fh:
                            fh.write(json.dumps(r) + "\n")
            if progress:
                progress(sum(outcomes.values()), cases, len(failures), time.perf_counter() - started)
    return {"cases": cases, "seed": seed, "jobs": jobs, "seconds": round(time.perf_counter() - started, 1),
            "outcomes": dict(outcomes), "codes": dict(codes.most_common()), "failures": failures,
            "distinct_failures": sorted({f["failure"].split(": ")[0] for f in failures})}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--out", help="write the summary (and every failure) as JSON to this file; failures "
                    "also go to OUT.failures.jsonl as they are found")
    ap.add_argument("--replay", type=int, help="run one case (its number) and print its result and traceback")
    ap.add_argument("--backends", action="store_true",
                    help="also play every valid case under both back ends (generated code, closures), with "
                    "and without a listener, and count any difference as a failure")
    args = ap.parse_args(argv)
    if args.replay is not None:
        worker = Worker(args.backends)
        try:
            r = worker.run(plan(args.seed, args.replay, launch_games()))
        finally:
            worker.close()
        print(json.dumps({k: v for k, v in r.items() if k != "traceback"}, indent=1))
        if "traceback" in r:
            print(r["traceback"])
        return 1 if r["outcome"] == "FAILURE" else 0

    def show(done, total, nfail, secs):
        sys.stderr.write(f"\r{done}/{total} cases, {nfail} failures, {secs:.0f}s, {done / max(secs, 1e-9):.0f}/s   ")
        sys.stderr.flush()
    summary = campaign(args.cases, args.seed, args.jobs, progress=show,
                       failures_file=args.out + ".failures.jsonl" if args.out else None, backends=args.backends)
    sys.stderr.write("\n")
    brief = {k: v for k, v in summary.items() if k != "failures"}
    brief["failures"] = len(summary["failures"])
    print(json.dumps(brief, indent=1))
    for f in summary["failures"][:20]:
        print(f"case {f['number']}: {f['game']} {f['target']} {f['edits']}: {f['failure']}")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump(summary, fh, indent=1)
    return 1 if summary["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
