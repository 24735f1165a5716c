"""The budget of docs/security.md, measured at its boundary: a game just under every size cap is
validated and run within 30 s and 1 GB of memory on the 2-core machine; one just over is
refused with a positioned error.

Builds each boundary input in a temporary folder: rules files exactly at the rules cap
(declarations, procedures, one string literal, a chain of calls), a card set exactly at the
YAML cap with 10,000 cards and 200,000 values, a game whose files are exactly at the game's
caps of bytes and values, rules written in YAML exactly at the rules cap, each one byte (or
value) over; and inputs whose checks once cost a product (many kinds x many cards, many
mistakes x many names, a variant's lookups, a long preset hand, a game with many variants).
Runs `rulesvm validate` and `rulesvm run --agent 1=random` on each in a fresh process and
prints the time, the peak memory (resident set) and the outcome. Exits 1 if any is over 30 s
or 1 GB, or ends otherwise than expected (exit code, error code, position).

    .venv/bin/python benchmarks/budgets.py                  # every case, about four minutes
    .venv/bin/python benchmarks/budgets.py --only rules     # the cases whose name has "rules"
    .venv/bin/python benchmarks/budgets.py --gaps           # also the known gaps (over budget)

tests/test_budgets.py builds the same inputs (with these functions) and checks the outcomes
under a 1 GB cap, without timing anything. The figures are in docs/security.md.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Callable

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from rulesvm.dsl.loader import MAX_CARDS  # noqa: E402
from rulesvm.dsl.reading import (MAX_CHECK_BYTES, MAX_CHECK_VALUES, MAX_GAME_BYTES, MAX_GAME_VALUES,  # noqa: E402
                                 MAX_RULES_BYTES, MAX_YAML_BYTES)
from rulesvm.dsl.yaml_loader import MAX_NODES, load_yaml_text  # noqa: E402

SECONDS = 30                 # the budget of docs/security.md
MEMORY = 1 << 30             # bytes
HANG_GUARD = 120             # seconds: a command still running then is killed (and is over budget)

RULES_HEAD = """kind unit { power: int; note: text = ""; tags: list[int] = [] }
zone deck: ordered, hidden
zone hand: per_player, ordered, visible(owner)
"""
SETUP = """setup {
  move(box, deck, face: "down")
  shuffle(deck)
}
"""
GAME_HEAD = "game {\n  let p = player(1)\n  draw(deck, hand(p), 1)\n"
GAME_TAIL = "  let k = choose([1, 2], by: p, prompt: \"pick\")\n  end_game(scores: [k])\n}\n"
RULES = RULES_HEAD + SETUP + GAME_HEAD + GAME_TAIL


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def _padding(n: int) -> str:
    """A comment line of exactly n bytes (rules and YAML write comments alike)."""
    return "" if n <= 0 else "\n" if n == 1 else "#" + "x" * (n - 2) + "\n"


def fill(head: str, unit: Callable[[int], tuple[str, str]], tail: str, size: int, before: str = "") -> str:
    """head + the units' first parts + tail, with the units' second parts inserted in the tail
    before the text `before` (at its end without one): as many units as fit, padded with a
    comment to exactly `size` bytes (UTF-8)."""
    body: list[str] = []
    late: list[str] = []
    used = _size(head) + _size(tail)
    n = 0
    while True:
        first, second = unit(n)
        cost = _size(first) + _size(second)
        if used + cost + 2 > size:
            break
        body.append(first)
        late.append(second)
        used += cost
        n += 1
    cut = tail.index(before) if before else len(tail)
    text = head + "".join(body) + _padding(size - used) + tail[:cut] + "".join(late) + tail[cut:]
    assert _size(text) == size, (_size(text), size)
    return text


def _write(folder: str, name: str, text: str) -> str:
    path = os.path.join(folder, name)
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
    return path


def game_file(folder: str, rules: str = RULES, cards: str = "  - {id: c0, kind: unit, power: 0}\n",
              card_sets: tuple[str, ...] = (), extra_lines: str = "") -> str:
    """g.yaml (naming g.rules, which holds `rules`, and the card sets) in `folder`; returns its path."""
    _write(folder, "g.rules", rules)
    sets = f"card_sets: [{', '.join(card_sets)}]\n" if card_sets else ""
    listed = f"cards:\n{cards}" if cards else "cards: []\n"
    return _write(folder, "g.yaml", f"id: g\nname: G\nplayers: 1\nrules: g.rules\n{sets}{extra_lines}{listed}")


# ---------------------------------------------------------------------- rules files

def rules_of_declarations(size: int = MAX_RULES_BYTES) -> str:
    return fill(RULES_HEAD, lambda n: (f"var v{n}: int = {n}\n", ""), SETUP + GAME_HEAD + GAME_TAIL, size)


def rules_of_procedures(size: int = MAX_RULES_BYTES) -> str:
    """Procedures with a few statements each, every one called once by the game."""
    def unit(n: int) -> tuple[str, str]:
        return (f"proc p{n}(q: player) {{\n  let x = count(hand(q)) + {n}\n  if x > 3 {{\n"
                f"    draw(deck, hand(q), 1)\n  }}\n  log(\"p{n}: {{x}}\")\n}}\n", f"  p{n}(p)\n")
    return fill(RULES_HEAD, unit, SETUP + GAME_HEAD + GAME_TAIL, size, before=GAME_TAIL)


def rules_of_a_call_chain(size: int = MAX_RULES_BYTES) -> str:
    """Procedures each calling the next, the last one asking a question: which procedures may
    pause is found through the whole chain."""
    last = "proc p_last(q: player) {\n  let k = choose([1, 2], by: q, prompt: \"last\")\n}\n"
    text = fill(RULES_HEAD, lambda n: (f"proc p{n}(q: player) {{\n  p{n + 1}(q)\n}}\n", ""),
                last + SETUP + GAME_HEAD + "  p0(p)\n" + GAME_TAIL, size - 16)
    n = text.count("\nproc p") - 1                  # the chain's procedures, p_last aside
    text = text.replace(f"  p{n}(q)\n", "  p_last(q)\n")
    return text + _padding(size - _size(text))


def rules_of_a_function_chain(size: int = MAX_RULES_BYTES) -> str:
    """Functions each calling the next: compiled callees first, charged as heavy calls (R002 when run)."""
    text = fill(RULES_HEAD, lambda n: (f"func f{n}(x: int) -> int = f{n + 1}(x)\n", ""),
                "func f_last(x: int) -> int = x\n" + SETUP + GAME_HEAD + "  log(\"{f0(1)}\")\n" + GAME_TAIL,
                size - 16)
    n = text.count("\nfunc f") - 1
    text = text.replace(f"= f{n}(x)\n", "= f_last(x)\n")
    return text + _padding(size - _size(text))


def doubling_functions(depth: int = 40) -> str:
    """Functions each calling the next twice: 2**depth calls if nothing stops them."""
    funcs = "".join(f"func f{i}(x: int) -> int = f{i + 1}(x) + f{i + 1}(x)\n" for i in range(depth))
    return RULES_HEAD + funcs + f"func f{depth}(x: int) -> int = x\n" + SETUP + GAME_HEAD + \
        "  log(\"{f0(1)}\")\n" + GAME_TAIL


def rules_of_one_string(size: int = MAX_RULES_BYTES) -> str:
    """One string literal filling the file, with an escape every 64 characters."""
    head = RULES_HEAD + 'var s: text = "'
    tail = '"\n' + SETUP + GAME_HEAD + "  log(\"{count([s])}\")\n" + GAME_TAIL
    chunk = "x" * 62 + "\\n"
    room = size - _size(head) - _size(tail)
    text = head + (chunk * (room // len(chunk) + 1))[:room] + tail
    if text[-len(tail) - 1] == "\\":                 # do not end on half an escape
        text = text[:-len(tail) - 1] + "y" + tail
    assert _size(text) == size
    return text


# ---------------------------------------------------------------------- YAML files

def card_set(size: int = MAX_YAML_BYTES, cards: int = MAX_CARDS, first: int = 1, values: int = MAX_NODES) -> str:
    """A card set of `cards` cards holding exactly `values` YAML values, padded to exactly `size`
    bytes: each card has a list of numbers (`tags`) sharing out the values."""
    spare = values - 3 - 9 * cards          # the file's mapping, `cards` and its list; 9 a card and its tags
    lines = []
    for k, i in enumerate(range(first, first + cards)):
        tags = ", ".join(str(t % 10) for t in range(spare // cards + (k < spare % cards)))
        lines.append(f"  - {{id: c{i}, kind: unit, power: {i % 7}, tags: [{tags}]}}\n")
    head = "cards:\n"
    text = head + "".join(lines)
    assert _size(text) + 2 <= size, f"{cards} cards holding {values:,} values do not fit in {size:,} bytes"
    return head + _padding(size - _size(text)) + "".join(lines)


def plain_card_set(size: int = MAX_YAML_BYTES) -> str:
    """As many plain entries as fit (`- {id: cN, kind: unit, power: N}`): more than 20,000 cards."""
    return fill("cards:\n", lambda n: (f"  - {{id: c{n + 1}, kind: unit, power: {n}}}\n", ""), "", size)


def card_of_many_values(values: int = MAX_NODES + 1) -> str:
    """One card whose list of numbers takes the file to `values` YAML values."""
    return "cards:\n  - {id: c1, kind: unit, power: 1, tags: [" + ", ".join(["0"] * (values - 12)) + "]}\n"


def small_card_set(cards: int, first: int = 1) -> str:
    return "cards:\n" + "".join(f"  - {{id: c{i}, kind: unit, power: 1}}\n" for i in range(first, first + cards))


def with_formulas(size: int) -> str:
    """Cards whose power is a formula (rules written in YAML), `size` bytes of rules text in all
    (each formula's text counts, not its quotes or its card)."""
    formula = "count(hand(you)) + 1"
    formulas = [formula] * (size // len(formula))
    if size % len(formula):
        formulas.append(" " * (size % len(formula) - 1) + "1")
    return "".join(f"  - {{id: f{i}, kind: unit, power: {{rules: \"{t}\"}}}}\n" for i, t in enumerate(formulas))


# ---------------------------------------------------------------------- many names, many mistakes

def many_kinds(folder: str, known: bool = True) -> str:
    """Rules declaring as many card kinds as fit in the rules cap, 10,000 cards of those kinds
    (or of kinds the rules do not declare): each card's check must not cost kinds x cards."""
    rules = fill(RULES_HEAD, lambda n: (f"kind k{n} {{ a: int }}\n", ""), SETUP + GAME_HEAD + GAME_TAIL,
                 MAX_RULES_BYTES)
    kinds = rules.count("\nkind k")
    prefix = "k" if known else "q"
    cards = "".join(f"  - {{id: d{i}, kind: {prefix}{i % kinds}, a: 1}}\n" for i in range(MAX_CARDS - 1))
    _write(folder, "set.yaml", "cards:\n" + cards)
    return game_file(folder, rules, card_sets=("set.yaml",))


def unknown_names(folder: str) -> str:
    """500 variables and a game that assigns unknown names to them, as many lines as fit: an
    error each, with a "did you mean" among the 500."""
    head = RULES_HEAD + "".join(f"var variable_number_{i}: int = 0\n" for i in range(500)) + SETUP + GAME_HEAD
    rules = fill(head, lambda n: (f"  variable_number_{n % 500} = variable_numbr_{n}\n", ""), GAME_TAIL,
                 MAX_RULES_BYTES)
    return game_file(folder, rules)


def variant_of_missing_cards(folder: str) -> str:
    """A variant removing, at the YAML cap, cards the game does not have: an error each."""
    path = game_file(folder, extra_lines="variants:\n  v: v.yaml\n")
    _write(folder, "v.yaml", fill("variant: v\ncards:\n  remove:\n", lambda n: (f"    - card_{n}\n", ""), "",
                                  MAX_YAML_BYTES))
    return path


def many_variants(folder: str, total: int = MAX_GAME_BYTES, values: int = MAX_NODES) -> str:
    """A game of `total` bytes and `values` YAML values listing 40 variants: `validate` checks
    it with each."""
    for i in range(40):
        _write(folder, f"v{i}.yaml", f"variant: v{i}\n")
    return game_total(0, "variants:\n" + "".join(f"  v{i}: v{i}.yaml\n" for i in range(40)), total, values)(folder)


def many_formulas(folder: str, fields: int = 13) -> str:
    """Cards with a one-character formula in each of their fields, as many as a card set may
    hold (200,000 values): each formula is found in its file and parsed on its own."""
    kind = "kind f { " + "; ".join(f"x{k}: int" for k in range(fields)) + " }\n"
    cards = (MAX_NODES - 3) // (5 + 4 * fields)      # a card: its mapping, id and kind; 4 values a formula
    _write(folder, "set.yaml", "cards:\n" + "".join(
        "  - {id: " + f"e{n}, kind: f, " + ", ".join(f'x{k}: {{rules: "1"}}' for k in range(fields)) + "}\n"
        for n in range(cards)))
    return game_file(folder, RULES_HEAD + kind + SETUP + GAME_HEAD + GAME_TAIL, card_sets=("set.yaml",))


def long_preset_hand(folder: str) -> str:
    """A preset hand as long as the YAML cap allows: its checks must not cost hand x hand."""
    ids = "".join("    - c0\n" for _ in range(100_000))
    return game_file(folder, extra_lines=f"hands:\n  zone: hand\n  size: 5\n  presets:\n    long:\n{ids}")


# ---------------------------------------------------------------------- the cases

@dataclass
class Case:
    name: str
    build: Callable[[str], str]       # folder -> the game file
    exit: int                         # expected exit code of validate and run
    code: str | None = None           # the error code expected (None: none)
    where: str | None = None          # where the error is expected ("set.yaml:1:1")
    only: str | None = None           # the one command to measure ("validate": what only it reads)
    run: tuple | None = None          # (exit, code) of `run` where it differs (`validate` plays no game)
    gap: str | None = None            # a known gap of docs/security.md: why it is over budget


def _rules_case(make: Callable[[], str]) -> Callable[[str], str]:
    return lambda folder: game_file(folder, make())


def _yaml_case(text_of: Callable[[], str]) -> Callable[[str], str]:
    def build(folder: str) -> str:
        _write(folder, "set.yaml", text_of())
        return game_file(folder, cards="", card_sets=("set.yaml",))
    return build


def game_values(path: str) -> int:
    """The YAML values of a game file (as its budget counts them)."""
    with open(path, encoding="utf-8") as fh:
        return load_yaml_text(fh.read(), path)[1].count


def game_total(extra: int, extra_lines: str = "", total: int = MAX_GAME_BYTES, values: int = MAX_NODES,
                extra_values: int = 0, rules: Callable[[], str] = rules_of_declarations) -> Callable[[str], str]:
    """Rules at the rules cap and two card sets of 10,000 cards in all: the files together
    exactly `total` bytes (+ extra) and `values` YAML values (+ extra_values)."""
    def build(folder: str) -> str:
        path = game_file(folder, rules(), card_sets=("a.yaml", "b.yaml"), extra_lines=extra_lines)
        rest = total - MAX_RULES_BYTES - os.path.getsize(path)
        left = values - game_values(path)
        _write(folder, "a.yaml", card_set(rest // 2, cards=MAX_CARDS // 2 - 1, values=left // 2))  # + c0
        _write(folder, "b.yaml", card_set(rest - rest // 2 + extra, cards=MAX_CARDS // 2, first=MAX_CARDS,
                                          values=left - left // 2 + extra_values))
        return path
    return build


def formula_case(extra: int) -> Callable[[str], str]:
    """Half the rules in a rules file, half written as card formulas: exactly the rules cap (+ extra)."""
    def build(folder: str) -> str:
        rules = rules_of_declarations(MAX_RULES_BYTES // 2)
        return game_file(folder, rules, cards=with_formulas(MAX_RULES_BYTES - MAX_RULES_BYTES // 2 + extra))
    return build


CASES = [
    Case("rules file of declarations at the cap", _rules_case(rules_of_declarations), 0),
    Case("rules file of procedures at the cap", _rules_case(rules_of_procedures), 0),
    Case("rules file of one string literal at the cap", _rules_case(rules_of_one_string), 0),
    Case("rules file of a chain of procedure calls at the cap", _rules_case(rules_of_a_call_chain), 0),
    Case("rules file of a chain of function calls at the cap", _rules_case(rules_of_a_function_chain), 0,
         run=(1, "R002")),
    Case("rules file one byte over the cap", _rules_case(lambda: rules_of_declarations(MAX_RULES_BYTES + 1)),
         1, "E004", "g.rules:1:1"),
    Case("card set of 10,000 cards and 200,000 values at the YAML cap", _yaml_case(card_set), 0),
    Case("card set one byte over the YAML cap", _yaml_case(lambda: card_set(MAX_YAML_BYTES + 1)),
         1, "E004", "set.yaml:1:1"),
    Case("card set of plain entries at the YAML cap (too many cards)", _yaml_case(plain_card_set),
         1, "E012", "set.yaml:10002:"),
    Case("card set of 200,000 values", _yaml_case(lambda: card_of_many_values(MAX_NODES)), 0),
    Case("card set of 200,001 values", _yaml_case(card_of_many_values), 1, "E004", "set.yaml:2:"),
    Case("card set of 10,001 cards", _yaml_case(lambda: small_card_set(MAX_CARDS + 1)), 1, "E012", "set.yaml:"),
    Case("game files together at the game cap", game_total(0), 0),
    Case("game files together at the game caps of bytes and values", game_total(0, values=MAX_GAME_VALUES), 0),
    Case("heaviest: a chain of calls at the rules cap, YAML at the game caps",
         game_total(0, values=MAX_GAME_VALUES, rules=rules_of_a_call_chain), 0),
    Case("game files together one value over the game cap", game_total(0, values=MAX_GAME_VALUES, extra_values=1),
         1, "E004", "the game's YAML files together hold more than"),
    Case("game files together one byte over the game cap", game_total(1), 1, "E004", "g.yaml:5:"),
    Case("rules in a rules file and in card formulas at the rules cap", formula_case(0), 0),
    Case("rules in a rules file and in card formulas one byte over", formula_case(1), 1, "E004", "g.yaml:"),
    Case("6,000 kinds and 10,000 cards of them", many_kinds, 0),
    Case("6,000 kinds and 10,000 cards of other kinds", lambda f: many_kinds(f, known=False), 1, "E232"),
    Case("a rules file of unknown names", unknown_names, 1, "E217"),
    Case("a variant removing 75,000 cards the game lacks", variant_of_missing_cards, 1, "E068", only="validate"),
    Case("a game at the game cap with 40 variants", many_variants, 1, "E004", "checking the game alone and with each",
         only="validate"),
    Case("a game of half the check caps with 40 variants (read twice)",
         lambda f: many_variants(f, MAX_CHECK_BYTES // 2 - 4096, MAX_CHECK_VALUES // 2 - 100),
         1, "E004", "checking the game alone and with each", only="validate"),
    Case("a preset hand of 100,000 cards", long_preset_hand, 1, "E072"),
    Case("a card set of 45,000 one-character formulas", many_formulas, 0),
    Case("functions each calling the next twice, 40 deep (2 KB)", lambda f: game_file(f, doubling_functions()), 0,
         run=(1, "R002")),
]


# ---------------------------------------------------------------------- measuring

def _guarded() -> None:
    """Past 4 GB a command is far over budget already: stop it before it takes the machine."""
    resource.setrlimit(resource.RLIMIT_AS, (4 * MEMORY, 4 * MEMORY))


def measure(args: list[str], cwd: str, timeout: float = HANG_GUARD) -> tuple[float, int, int, str]:
    """Run `rulesvm ARGS` in a fresh process: (seconds, peak resident bytes, exit code, output)."""
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "rulesvm.cli.main", *args], cwd=cwd, stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, preexec_fn=_guarded)
        timer = threading.Timer(timeout, proc.kill)        # a hang guard, far past the budget
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode("utf-8", "replace")
    return seconds, usage.ru_maxrss * 1024, proc.returncode, text


def commands(game: str) -> dict[str, list[str]]:
    return {"validate": ["validate", game],
            "run": ["run", game, "--agent", "1=random", "--seed", "1", "--quiet"]}


def expected(case: Case, command: str) -> tuple[int, str | None, str | None]:
    """The exit code, error code and position a command should end with."""
    if command == "run" and case.run is not None:
        return case.run[0], case.run[1], None
    return case.exit, case.code, case.where


def outcome_problem(case: Case, command: str, code: int, text: str) -> str | None:
    """Why a command's outcome is not the one the case expects (None if it is)."""
    exit_code, error, where = expected(case, command)
    if "Traceback" in text:
        return "a traceback"
    if code != exit_code:
        return f"exit {code}, expected {exit_code}"
    if error and f"error[{error}]" not in text:
        return f"no {error}"
    if where and where not in text:
        return f"not at {where}"
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", help="only the cases whose name contains this text")
    ap.add_argument("--gaps", action="store_true", help="also the known gaps of docs/security.md (each may run "
                    f"until the hang guard, {HANG_GUARD} s)")
    args = ap.parse_args(argv)
    print(f"caps: rules {MAX_RULES_BYTES:,} B, YAML file {MAX_YAML_BYTES:,} B, game {MAX_GAME_BYTES:,} B; "
          f"budget {SECONDS} s, {MEMORY >> 20} MiB; {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    print(f"{'case':<66} {'command':<9} {'seconds':>8} {'peak MiB':>9}  outcome")
    failed = 0
    for case in CASES:
        if (args.only and args.only not in case.name) or (case.gap and not args.gaps):
            continue
        with tempfile.TemporaryDirectory() as folder:
            game = case.build(folder)
            for name, command in commands(game).items():
                if case.only and name != case.only:
                    continue
                seconds, peak, code, text = measure(command, folder, HANG_GUARD)
                problem = outcome_problem(case, name, code, text)
                over = seconds > SECONDS or peak > MEMORY
                error = expected(case, name)[1]
                verdict = problem or ("OVER BUDGET" if over else f"exit {code}" + (f" {error}" if error else ""))
                if case.gap and (problem or over):
                    verdict = f"known gap: {verdict} ({case.gap})"
                else:
                    failed += bool(problem or over)
                print(f"{case.name:<66} {name:<9} {seconds:8.2f} {peak / (1 << 20):9.0f}  {verdict}", flush=True)
    print("all within budget" if not failed else f"{failed} over budget or not as expected")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
