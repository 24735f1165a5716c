"""Resource accounting (interpreter/limits.py): hostile rules that would take hours or
gigabytes end at once with a positioned runtime error, under both back ends, in a process
capped at 1 GB of memory. Each case is a reproduction from the hostile-inputs issue or a
neighbour of one; the expected error is written next to the rules."""

from __future__ import annotations

import subprocess
import sys

import pytest

from rulesvm import api
from rulesvm.dsl.schema import MAX_STEPS
from rulesvm.interpreter import RulesRuntimeError
from rulesvm.interpreter.limits import MAX_INT

from .helpers import write_game

try:
    import resource
except ImportError:          # pragma: no cover - not on Windows
    resource = None

MEMORY_CAP = 1 << 30        # the budget of docs/security.md: 1 GB

# name -> (rules, extra game-file lines, expected code, line of the error)
CASES = {
    "an integer squared in a loop":
        ("var x: int = 2\ngame {\n  loop { x = x * x }\n  end_game(scores: [1])\n}\n", "", "R016", 3),
    "an integer doubled with +=":
        ("var x: int = 1\ngame {\n  loop { x += x }\n  end_game(scores: [1])\n}\n", "", "R016", 3),
    "two integers growing each other":
        ("var a: int = 1\nvar b: int = 1\ngame {\n  loop {\n    a = a + b\n    b = a + b\n  }\n"
         "  end_game(scores: [1])\n}\n", "", "R016", 5),
    "an integer squared through recursion":
        ("func sq(n: int, x: int) -> int = if n == 0 then x else sq(n - 1, x * x)\n"
         "game {\n  end_game(scores: [sq(100, 3)])\n}\n", "", "R016", 1),
    "a sum that doubles": ("var x: int = 1\ngame {\n  loop { x = sum([x, x]) }\n  end_game(scores: [1])\n}\n",
                           "", "R016", 3),
    "a sum of sums over a million items":
        ("var xs: list[int] = []\ngame {\n  xs = 1..999999\n  end_game(scores: [sum([sum(xs) for i in xs])])\n}\n",
         "", "R002", 4),
    "a sorted copy per item": ("var xs: list[int] = []\ngame {\n  xs = 1..999999\n"
                               "  end_game(scores: [count([sorted(xs) for i in xs])])\n}\n", "", "R002", 4),
    "nested comprehensions over ranges":
        ("game {\n  end_game(scores: [count([count([j for j in 1..999]) for i in 1..999999])])\n}\n", "", "R002", 2),
    "membership in a long list per item":
        ("var xs: list[int] = []\ngame {\n  xs = 1..999999\n  end_game(scores: [count([i for i in xs if i in xs])])\n}\n",
         "", "R002", 4),
    "comparing long texts in a loop":
        ('var s: text = "ab"\nvar t: text = "ab"\nvar same: bool = false\ngame {\n'
         '  repeat 16 {\n    s = "{s}{s}"\n    t = "{t}{t}"\n  }\n  loop { same = s == t }\n  end_game(scores: [1])\n}\n',
         "", "R002", 9),
    "a list holding itself twice, written out":
        ("var xs: list[any] = [1]\ngame {\n  repeat 40 { xs = [xs, xs] }\n  log(\"{xs}\")\n  end_game(scores: [1])\n}\n",
         "", "R002", 3),
    "a list holding itself twice, at the highest step limit":
        ("var xs: list[any] = [1]\ngame {\n  repeat 40 { xs = [xs, xs] }\n  log(\"{xs}\")\n  end_game(scores: [1])\n}\n",
         f"max_steps: {MAX_STEPS}\n", "R015", 3),
    "a list joined to itself holding lists":
        ("var xs: list[list[int]] = [[1, 2, 3]]\ngame {\n  loop { xs = xs + xs }\n  end_game(scores: [1])\n}\n",
         f"max_steps: {MAX_STEPS}\n", "R015", 3),
    "a list wrapped in a list in a loop":
        ("var xs: list[any] = [1]\ngame {\n  loop { xs = [xs] }\n  end_game(scores: [1])\n}\n", "", "R015", 3),
    "every ordering of twenty items":
        ("game {\n  end_game(scores: [count(permutations(1..20, size: 20))])\n}\n", "", "R015", 2),
    "every combination of ten long lists":
        ("var xs: list[int] = []\ngame {\n  xs = 1..99\n  end_game(scores: [count(product([xs, xs, xs, xs, xs]))])\n}\n",
         "", "R015", 4),
    "a huge range in a comprehension, again and again":
        ("var n: int = 0\ngame {\n  loop { n = count([i for i in 1..999999 if i % 2 == 0]) }\n  end_game(scores: [n])\n}\n",
         "", "R002", 3),
    "functions calling each other twice, forty deep":
        ("func f0(x: int) -> int = x + 1\n" + "".join(f"func f{i}(x: int) -> int = f{i - 1}(x) + f{i - 1}(x)\n"
                                                   for i in range(1, 40))
         + "game {\n  end_game(scores: [f39(1)])\n}\n", "", "R002", 42),
    "a text joined from a long list in a loop":
        ('var xs: list[text] = []\nvar s: text = ""\ngame {\n  xs = [text(i) for i in 1..99999]\n'
         '  loop { s = join(xs, separator: ", ") }\n  end_game(scores: [1])\n}\n', "", "R002", 5),
}


def _game(tmp_path, rules: str, extra: str) -> str:
    (tmp_path / "g.rules").write_text(rules)
    (tmp_path / "g.yaml").write_text(f"id: g\nname: G\nplayers: 1\nrules: g.rules\n{extra}")
    return str(tmp_path / "g.yaml")


def _capped():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


@pytest.mark.skipif(resource is None, reason="needs resource limits (POSIX)")
@pytest.mark.parametrize("codegen", ["1", "0"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_rules_end_at_once_with_a_positioned_error(tmp_path, case, codegen):
    rules, extra, code, line = CASES[case]
    path = _game(tmp_path, rules, extra)
    env = {"RULESVM_CODEGEN": codegen, "PATH": "/usr/bin:/bin"}
    # The timeout only guards against a hang: the work itself is cut by the limits.
    out = subprocess.run([sys.executable, "-m", "rulesvm.cli.main", "run", path, "--seed", "1"],
                         capture_output=True, text=True, timeout=120, preexec_fn=_capped, env=env,
                         stdin=subprocess.DEVNULL)
    text = out.stdout + out.stderr
    assert out.returncode == 1, text
    assert "Traceback" not in text and "MemoryError" not in text, text
    assert f"runtime error[{code}]" in text, text
    assert f"g.rules:{line}:" in text, text


def _run(tmp_path, rules, extra=""):
    return api.new_game(api.load_game(_game(tmp_path, rules, extra)), 1, 0)


@pytest.mark.parametrize("codegen", ["1", "0"])
def test_integers_at_the_edge_of_64_bits_still_count(tmp_path, monkeypatch, codegen):
    monkeypatch.setenv("RULESVM_CODEGEN", codegen)
    top = ("var x: int = 0\nvar y: int = 0\ngame {\n  x = 999999999999999999 * 9 + 223372036854775816\n"
           "  end_game(scores: [x])\n}\n")
    assert _run(tmp_path, top).result["scores"] == {"1": MAX_INT}
    over = top.replace("  end_game", "  y = x + x\n  end_game")
    with pytest.raises(RulesRuntimeError) as info:
        _run(tmp_path, over)
    assert info.value.code == "R016" and (info.value.span.line, info.value.span.col) == (5, 7)
    assert "above 2**63 - 1" in info.value.message
    # Adding an amount bounded by the game files (a literal, a count, a function returning
    # either branch of an `if` of such) cannot double a number: it is not checked.
    assert _run(tmp_path, top.replace("  end_game", "  y = x + count([1, 2])\n  end_game")).rt.st.gvars[1] == MAX_INT + 2
    bonus = "func bonus(b: bool) -> int = if b then 3 else -3\nfunc twice(n: int) -> int = n + n\n"
    assert _run(tmp_path, bonus + top.replace("  end_game", "  y = x + bonus(true)\n  end_game")).rt.st.gvars[1] == MAX_INT + 3
    with pytest.raises(RulesRuntimeError) as info:     # a sum of two numbers is not bounded
        _run(tmp_path, bonus + top.replace("  end_game", "  y = x + twice(1)\n  end_game"))
    assert info.value.code == "R016"


@pytest.mark.parametrize("codegen", ["1", "0"])
def test_work_is_charged_per_item_the_same_in_both_back_ends(tmp_path, monkeypatch, codegen):
    """A statement walking 600 items 2,000 times passes a 1,000,000-step limit: each walk is
    charged 600 steps, so the limit stops it after about 1,666 rounds, not 1,000,000."""
    monkeypatch.setenv("RULESVM_CODEGEN", codegen)
    rules = ("var xs: list[int] = []\nvar n: int = 0\ngame {\n  xs = 1..600\n"
             "  repeat 2000 { n = sum(xs) }\n  end_game(scores: [n])\n}\n")
    with pytest.raises(RulesRuntimeError) as info:
        _run(tmp_path, rules)
    assert info.value.code == "R002" and info.value.span.line == 5
    fewer = rules.replace("repeat 2000", "repeat 1000")
    assert _run(tmp_path, fewer).result["scores"] == {"1": 180300}


def test_a_value_too_big_to_write_out_is_refused_by_the_writers(tmp_path):
    """A million references to one long text is small in memory; saving or observing it would
    write gigabytes. The writers refuse it (R015) instead."""
    rules = ('var xs: list[text] = []\nvar s: text = "ab"\ngame {\n  repeat 18 { s = "{s}{s}" }\n'
             '  xs = [s for i in 1..999999]\n  let k = choose([1, 2], by: player(1), prompt: "pick")\n'
             '  end_game(scores: [k])\n}\n')
    match = _run(tmp_path, rules, f"max_steps: {MAX_STEPS}\n")
    for write in (match.to_json, lambda: match.observation(0)):
        with pytest.raises(RulesRuntimeError) as info:
            write()
        assert info.value.code == "R015" and "written out" in info.value.message
    save = tmp_path / "s.json"
    out = subprocess.run([sys.executable, "-m", "rulesvm.cli.main", "run", str(tmp_path / "g.yaml"), "--seed", "1",
                          "--agent", "1=random", "--save-at", "0", "--save", str(save)],
                         capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert out.returncode == 1 and "R015" in out.stdout + out.stderr and "Traceback" not in out.stderr
    assert not save.exists()


@pytest.mark.parametrize("codegen", ["1", "0"])
@pytest.mark.parametrize("cards", [
    '  - {id: a, kind: unit, power: {rules: "self.power + 1"}}\n',
    '  - {id: a, kind: unit, power: {rules: "card(\\"b\\").power + 1"}}\n'
    '  - {id: b, kind: unit, power: {rules: "card(\\"a\\").power * 2"}}\n',
], ids=["itself", "each other"])
def test_card_formulas_reading_themselves_stop_at_the_call_depth(tmp_path, monkeypatch, codegen, cards):
    """Deep recursion through formulas: a card's formula reading its own field (or two cards'
    formulas reading each other) compiles, and stops at the call depth (R004) in the formula."""
    monkeypatch.setenv("RULESVM_CODEGEN", codegen)
    rules = 'kind unit { power: int }\ngame {\n  end_game(scores: [card("a").power])\n}\n'
    with pytest.raises(RulesRuntimeError) as info:
        _run(tmp_path, rules, "cards:\n" + cards)
    assert info.value.code == "R004" and info.value.span.file.endswith("g.yaml") and info.value.span.line in (6, 7)
    assert "formula of `power`" in (info.value.rule or "")


@pytest.mark.parametrize("codegen", ["1", "0"])
def test_a_long_chain_of_functions_compiles_without_exhausting_the_stack(tmp_path, monkeypatch, codegen):
    """Functions are compiled callees first (purity.callees_first): a chain of 300 functions,
    each calling the next, used to be a RecursionError traceback when the game loaded."""
    monkeypatch.setenv("RULESVM_CODEGEN", codegen)
    rules = ("func f0(x: int) -> int = x + 1\n" + "".join(f"func f{i}(x: int) -> int = f{i - 1}(x) + 1\n"
                                                        for i in range(1, 300))
             + "game {\n  end_game(scores: [f299(1)])\n}\n")
    assert _run(tmp_path, rules).result["scores"] == {"1": 301}


def _steps_at_first_decision(tmp_path, monkeypatch, codegen, body: str) -> int:
    """The work charged from the game's start to its first decision."""
    monkeypatch.setenv("RULESVM_CODEGEN", codegen)
    rules = ("var xs: list[int] = []\nvar n: int = 0\n"
             "func walk(ys: list[int]) -> int = count([y for y in ys])\n"
             f"game {{\n  xs = 1..10\n{body}\n  let c = choose([1, 2], by: players[0])\n  end_game(scores: [c])\n}}\n")
    match = _run(tmp_path, rules)
    assert match.legal_options
    return match.rt.steps


@pytest.mark.parametrize("codegen", ["1", "0"])
def test_a_short_comprehension_in_a_statement_costs_only_its_statement(tmp_path, monkeypatch, codegen):
    """A walk under FREE_WALK items is paid for by the step before it: that of its statement,
    or of the item of a comprehension charged per item (purity.paid_walks), in the
    body of a light function called from there too. A comprehension whose items walk or call
    something is charged per item, so that they are paid; one over 64 items or more always
    is (the same in both back ends)."""
    def cost(line: str) -> int:
        base = _steps_at_first_decision(tmp_path, monkeypatch, codegen, "  n = 0")
        return _steps_at_first_decision(tmp_path, monkeypatch, codegen, line) - base
    assert cost("  n = count([x for x in xs])") == 0
    assert cost("  n = count([x for x in [y for y in xs]])") == 0            # in the iterable: once
    assert cost("  n = count([x + 1 for x in xs if x > 2])") == 0            # flat items: free
    # The outer one pays 10 (its items walk), each item's short walk of 10 is paid by it.
    assert cost("  n = count([count([y for y in xs]) for x in xs])") == 10
    assert cost("  n = count([y in xs for y in xs])") == 10
    # Three deep: the outer pays 10, the middle one 10 per outer item, the inner is paid.
    assert cost("  n = count([count([count([z for z in xs]) for y in xs]) for x in xs])") == 110
    assert cost("  n = walk(xs)") == 0                                       # a function called once
    assert cost("  n = count([walk(xs) for x in xs])") == 10                # called per paid item
    # 64 items: the range is charged its length, the comprehension per item.
    assert cost("  xs = 1..64\n  n = count([x for x in xs])") == 64 + 64


@pytest.mark.parametrize("codegen", ["1", "0"])
def test_a_short_join_costs_only_its_statement_a_long_one_its_length(tmp_path, monkeypatch, codegen):
    """`a + b` of lists or texts shorter than FREE_WALK in all is free; from 64 on it costs
    its length, the same in both back ends."""
    def cost(line: str) -> int:
        base = _steps_at_first_decision(tmp_path, monkeypatch, codegen, "  n = 0")
        return _steps_at_first_decision(tmp_path, monkeypatch, codegen, line) - base
    assert cost("  n = count(xs + xs)") == 0                                 # 20 items
    # Joined left to right: 20, 30, 40, 50 and 60 items are free, the last join makes 70.
    assert cost("  n = count(xs + xs + xs + xs + xs + xs + xs)") == 70
    # "{xs}" is 29 characters: built free, joined to 58 free; "{xs}{xs}" is 58, joined 116.
    assert cost('  let s = "{xs}"\n  n = count([c for c in [s + s]])') == 0
    assert cost('  let s = "{xs}{xs}"\n  n = count([c for c in [s + s]])') == 116


@pytest.mark.parametrize("codegen", ["1", "0"])
def test_adding_a_printed_number_is_not_checked_a_formula_is(tmp_path, monkeypatch, codegen):
    """A card's printed number is bounded by the game files: adding it cannot double a number
    (purity.Bounded). A field that some card computes by a formula is not."""
    monkeypatch.setenv("RULESVM_CODEGEN", codegen)
    rules = ("kind k { power: int }\nzone deck: visible(all)\nvar x: int = 0\nvar y: int = 0\n"
             "setup {\n  move(box, deck)\n}\n"
             "game {\n  x = 999999999999999999 * 9 + 223372036854775816\n  y = x + deck[0].{field}\n"
             "  end_game(scores: [1])\n}\n")
    printed = write_game(tmp_path, rules.replace("{field}", "power"), cards="- {id: a, kind: k, power: 2}")
    assert api.new_game(api.load_game(printed), 1, 0).state.gvars[1] == MAX_INT + 2
    formula = write_game(tmp_path, rules.replace("{field}", "power"), cards='- {id: a, kind: k, power: {rules: "1 + 1"}}')
    with pytest.raises(RulesRuntimeError) as info:
        api.new_game(api.load_game(formula), 1, 0)
    assert info.value.code == "R016"
