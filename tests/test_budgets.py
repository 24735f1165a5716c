"""The budget of docs/security.md at its boundary: a game just under every size cap is
validated and run, in a process capped at 1 GB; one byte over is refused with a positioned
E004 and exit 1, before anything is parsed. The inputs are benchmarks/budgets.py's (which
times them against the 30 s budget: no test here times anything; `timeout=` only guards
against a hang).

The costly cases (a file at the YAML cap, the game's files at the game cap) run one command
each; the other commands read the same files the same way.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from benchmarks import budgets
from rulesvm import api
from rulesvm.dsl import diagnostics, files, yaml_loader
from rulesvm.dsl.diagnostics import DiagnosticError
from rulesvm.dsl.parser import parse_rules
from rulesvm.dsl.reading import (MAX_CHECK_BYTES, MAX_CHECK_VALUES, MAX_GAME_BYTES, MAX_GAME_VALUES, MAX_RULES_BYTES,
                                 MAX_YAML_BYTES)
from rulesvm.tooling import formatter

try:
    import resource
except ImportError:          # pragma: no cover - not on Windows
    resource = None

MEMORY_CAP = 1 << 30        # the budget of docs/security.md: 1 GB

pytestmark = pytest.mark.skipif(resource is None, reason="needs resource limits (POSIX)")


def _capped():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def rulesvm(command: str, game: str) -> tuple[int, str]:
    """`rulesvm validate GAME` or `rulesvm run GAME` (a random bot) under the memory cap."""
    args = budgets.commands(game)[command]
    out = subprocess.run([sys.executable, "-m", "rulesvm.cli.main", *args], capture_output=True, text=True,
                         timeout=300, preexec_fn=_capped, stdin=subprocess.DEVNULL, cwd=os.path.dirname(game))
    text = out.stdout + out.stderr
    assert "Traceback" not in text and "MemoryError" not in text, text[-3000:]
    return out.returncode, text


def codes(diags) -> list:
    return [d.code for d in diags if d.is_error]


# ---------------------------------------------------------------------- rules files

@pytest.mark.slow
@pytest.mark.parametrize("make", [budgets.rules_of_declarations, budgets.rules_of_procedures,
                                  budgets.rules_of_one_string, budgets.rules_of_a_call_chain],
                         ids=["declarations", "procedures", "one string literal", "a chain of calls"])
@pytest.mark.parametrize("command", ["validate", "run"])
def test_a_rules_file_at_the_cap_is_validated_and_run(tmp_path, make, command):
    text = make()
    assert len(text.encode()) == MAX_RULES_BYTES
    code, out = rulesvm(command, budgets.game_file(str(tmp_path), text))
    assert code == 0, out[-3000:]


@pytest.mark.parametrize("command", ["validate", "run"])
def test_a_rules_file_one_byte_over_the_cap_is_refused_before_it_is_parsed(tmp_path, command):
    game = budgets.game_file(str(tmp_path), budgets.rules_of_declarations(MAX_RULES_BYTES + 1))
    code, out = rulesvm(command, game)
    assert code == 1 and "g.rules:1:1: error[E004]: the rules file is too large: 131,073 bytes" in out, out
    assert "at most 131,072 (128 KiB)" in out and "hint:" in out


def test_a_big_string_literal_costs_no_more_than_its_size():
    """The lexer's pattern for strings keeps no state per character: a literal at the cap is
    scanned in one go (the old pattern took ~150 bytes of memory a character)."""
    tree = parse_rules(budgets.rules_of_one_string(), "g.rules")
    value = next(d for d in tree.decls if getattr(d, "name", None) == "s").default
    assert len(value.parts[0]) > 120_000 and value.parts[0].count("\n") > 1000


# ---------------------------------------------------------------------- YAML files

@pytest.mark.slow
def test_a_card_set_at_the_yaml_cap_with_the_most_values_runs(tmp_path):
    text = budgets.card_set()
    assert len(text.encode()) == MAX_YAML_BYTES
    (tmp_path / "set.yaml").write_text(text)
    code, out = rulesvm("run", budgets.game_file(str(tmp_path), cards="", card_sets=("set.yaml",)))
    assert code == 0, out[-3000:]


def test_a_card_set_one_byte_over_the_yaml_cap_is_refused_before_it_is_parsed(tmp_path):
    (tmp_path / "set.yaml").write_text(budgets.card_set(MAX_YAML_BYTES + 1))
    code, out = rulesvm("validate", budgets.game_file(str(tmp_path), cards="", card_sets=("set.yaml",)))
    assert code == 1 and "set.yaml:1:1: error[E004]: the YAML file is too large: 1,048,577 bytes" in out, out


def test_a_card_set_of_sixty_thousand_entries_is_refused_at_once(tmp_path):
    """The reproduction of the issue: 2.5 MB of `- {id: cN, kind: unit, power: N}` took 12 s
    and was called an alias bomb; it is over the YAML cap, refused before it is parsed."""
    (tmp_path / "set.yaml").write_text(budgets.plain_card_set(2_500_000))
    code, out = rulesvm("validate", budgets.game_file(str(tmp_path), cards="", card_sets=("set.yaml",)))
    assert code == 1 and "set.yaml:1:1: error[E004]" in out and "alias" not in out, out


def test_more_than_ten_thousand_cards_are_refused_before_any_schema_check(tmp_path):
    (tmp_path / "set.yaml").write_text(budgets.small_card_set(10_001))
    diags = api.validate_path(budgets.game_file(str(tmp_path), cards="", card_sets=("set.yaml",)))
    assert codes(diags) == ["E012"] and diags[0].span.line == 10_002 and "10,001" in diags[0].message
    # Copies count: eleven entries of 1,000 copies cross the limit at the eleventh.
    (tmp_path / "set.yaml").write_text("cards:\n" + "".join(f"  - {{id: c{i}, kind: unit, power: 1, count: 1000}}\n"
                                                             for i in range(1, 12)))
    diags = api.validate_path(str(tmp_path / "g.yaml"))
    assert codes(diags) == ["E012"] and diags[0].span.line == 12


@pytest.mark.slow
def test_a_plain_big_file_is_not_called_an_alias_bomb(tmp_path):
    """Values written in the file are counted while it is read (E004, at the first value past
    the limit); only aliases can expand a document past it afterwards (E003, tests/test_safety.py)."""
    (tmp_path / "set.yaml").write_text(budgets.card_of_many_values(yaml_loader.MAX_NODES + 1))
    diags = api.validate_path(budgets.game_file(str(tmp_path), cards="", card_sets=("set.yaml",)))
    assert codes(diags) == ["E004"] and "more than 200,000 values" in diags[0].message
    assert "alias" not in diags[0].message and diags[0].span.file.endswith("set.yaml") and diags[0].span.line == 2
    (tmp_path / "set.yaml").write_text(budgets.card_of_many_values(yaml_loader.MAX_NODES))
    assert not codes(api.validate_path(str(tmp_path / "g.yaml")))


# ---------------------------------------------------------------------- a game's files together

@pytest.mark.slow
def test_a_game_whose_files_together_are_at_the_game_cap_validates(tmp_path):
    game = budgets.game_total(0)(str(tmp_path))
    assert sum(os.path.getsize(tmp_path / name) for name in ("g.yaml", "g.rules", "a.yaml", "b.yaml")) \
        == MAX_GAME_BYTES
    code, out = rulesvm("validate", game)
    assert code == 0, out[-3000:]


def test_a_game_one_byte_over_the_game_cap_is_refused_where_the_last_file_is_named(tmp_path):
    code, out = rulesvm("run", budgets.game_total(1)(str(tmp_path)))
    assert code == 1 and "g.yaml:5:" in out and "error[E004]: the game's files together are too large: with " \
        "`b.yaml` they hold 2,097,153 bytes" in out, out


def test_the_values_of_a_game_s_yaml_files_are_counted_together(tmp_path, monkeypatch):
    """Values cost far more than bytes: a game's YAML files together hold at most
    MAX_GAME_VALUES; the file that crosses it stops where it does, before it is read whole."""
    game = budgets.game_file(str(tmp_path), cards="", card_sets=("set.yaml",))
    (tmp_path / "set.yaml").write_text(budgets.small_card_set(100))          # 1 + 1 + 1 + 100 x 7 values
    own = budgets.game_values(game)
    monkeypatch.setattr(files, "MAX_GAME_VALUES", own + 703)
    assert not codes(api.validate_path(game))
    monkeypatch.setattr(files, "MAX_GAME_VALUES", own + 702)
    diags = api.validate_path(game)
    assert codes(diags) == ["E004"] and diags[0].message.startswith("the game's YAML files together hold more than")
    assert diags[0].span.file.endswith("set.yaml") and diags[0].span.line == 101      # the last card's last value


@pytest.mark.slow
def test_rules_written_in_yaml_count_towards_the_rules_cap(tmp_path):
    at_cap = budgets.formula_case(0)(str(tmp_path))
    assert not codes(api.validate_path(at_cap))
    over = budgets.formula_case(1)(str(tmp_path))
    diags = api.validate_path(over)
    assert codes(diags) == ["E004"] and "the game's rules are too large: with this formula" in diags[0].message
    assert diags[0].span.file.endswith("g.yaml") and diags[0].span.line > 5


def test_the_caps_are_checked_in_one_place_with_one_message(tmp_path, monkeypatch):
    """A variant's files and rules count too; the first file past a cap is the one reported,
    and the load stops there (one error, not one per file after it)."""
    monkeypatch.setattr(files, "MAX_GAME_BYTES", 1000)
    (tmp_path / "v.yaml").write_text("variant: v\nrules:\n  add: |\n    var extra: int = 1\n" + "#\n" * 600)
    (tmp_path / "set.yaml").write_text(budgets.small_card_set(3, first=5))
    game = budgets.game_file(str(tmp_path), card_sets=("set.yaml",), extra_lines="variants:\n  v: v.yaml\n")
    assert not codes(api.validate_game(game))
    diags = api.validate_game(game, variants=["v"])
    assert codes(diags) == ["E004"] and "with `" in diags[0].message and "v.yaml" in diags[0].message
    assert diags[0].span.file.endswith("g.yaml") and diags[0].span.line == 7


def test_validate_reads_a_game_at_most_so_much_for_all_its_variants(tmp_path, monkeypatch):
    """`rulesvm validate` checks a game alone and with each variant, reading its files again
    each time: together at most MAX_CHECK_BYTES, then one E004 and no more loads."""
    for i in range(5):
        (tmp_path / f"v{i}.yaml").write_text(f"variant: v{i}\n")
    game = budgets.game_file(str(tmp_path), budgets.rules_of_declarations(5000),
                             extra_lines="variants:\n" + "".join(f"  v{i}: v{i}.yaml\n" for i in range(5)))
    assert not codes(api.validate_path(game))
    monkeypatch.setattr(files, "MAX_CHECK_BYTES", 3 * 5200)
    diags = api.validate_path(game)
    assert codes(diags) == ["E004"] and "checking the game alone and with each of its variants" in diags[0].message
    assert "(now with variant `v1`)" in diags[0].message
    assert MAX_CHECK_BYTES >= MAX_GAME_BYTES and MAX_CHECK_VALUES >= MAX_GAME_VALUES
    monkeypatch.setattr(files, "MAX_CHECK_BYTES", MAX_CHECK_BYTES)
    monkeypatch.setattr(files, "MAX_CHECK_VALUES", 3 * budgets.game_values(game) + 2)      # the values, read 3 times
    diags = api.validate_path(game)
    assert codes(diags) == ["E004"] and "the YAML files read hold more than" in diags[0].message


# ---------------------------------------------------------------------- the other readers of rules files

def test_fmt_reads_rules_files_within_the_same_cap(tmp_path):
    path = tmp_path / "big.rules"
    path.write_text(budgets.rules_of_declarations(MAX_RULES_BYTES + 1))
    with pytest.raises(DiagnosticError) as info:
        formatter.format_file(str(path))
    assert info.value.diagnostics[0].code == "E004"
    path.write_text(budgets.rules_of_declarations(MAX_RULES_BYTES))
    assert formatter.format_file(str(path)).formatted.startswith("kind unit")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fmt_never_waits_on_a_fifo(tmp_path):
    os.mkfifo(tmp_path / "pipe.rules")
    out = subprocess.run([sys.executable, "-m", "rulesvm.cli.main", "fmt", "--check", str(tmp_path)],
                         capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert out.returncode == 1 and "FIFO" in out.stdout + out.stderr


# ---------------------------------------------------------------------- many names, many mistakes

def test_suggestions_are_bounded(monkeypatch):
    many = [f"name_{i}" for i in range(diagnostics.MAX_SUGGESTION_CANDIDATES + 1)]
    assert diagnostics.did_you_mean("name_1x", many) is None
    assert diagnostics.did_you_mean("name_1x", many[:10]) == "did you mean `name_1`?"
    with diagnostics.suggestion_budget(25):
        assert diagnostics.did_you_mean("name_1x", many[:20]) == "did you mean `name_1`?"
        assert diagnostics.did_you_mean("name_1x", many[:20]) is None      # 40 names: past the budget
    assert diagnostics.listing(many, limit=3) == "`name_0`, `name_1`, `name_2` and 498 more"


def test_many_kinds_and_many_cards_are_checked_kind_by_kind(tmp_path):
    """Each card is checked against its own kind's schema, not one branch per kind (6,000 kinds
    x 10,000 cards took hours); a card of an unknown kind lists a few kinds, not all."""
    budgets.many_kinds(str(tmp_path), known=False)
    diags = api.validate_path(str(tmp_path / "g.yaml"))
    assert set(codes(diags)) == {"E232"} and len(codes(diags)) == 9_999
    assert diags[0].hint.startswith("kinds declared in the rules: `k0`, `k1`") and " more" in diags[0].hint


@pytest.mark.slow
def test_a_long_preset_hand_is_checked_in_one_pass(tmp_path):
    diags = api.validate_path(budgets.long_preset_hand(str(tmp_path)))
    assert codes(diags)[:2] == ["E072", "E075"] and len(codes(diags)) == 100_000
