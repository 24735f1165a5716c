"""One run reports every independent mistake: the parser resynchronises after a syntax error
(at the next declaration, or the next statement of the same block), and the checker keeps
going after each error."""

from __future__ import annotations

import os
import random
import textwrap

import pytest

from rulesvm import api
from rulesvm.dsl.diagnostics import DiagnosticError
from rulesvm.dsl.parser import MAX_SYNTAX_ERRORS, parse_rules

from .conftest import ROOT


def syntax_errors(text: str) -> list:
    try:
        parse_rules(textwrap.dedent(text).lstrip("\n"), "case.rules")
    except DiagnosticError as exc:
        return [(d.span.line, d.span.col, d.code) for d in exc.diagnostics]
    return []


def test_each_broken_declaration_is_reported_once():
    errors = syntax_errors("""
        var a int = 0
        var b: = 1
        zone z: ordered,
        event e(x: int
        func f() -> int = 1 +
        ability ab { log("x" }
        game { end_game(scores: [0]) }
    """)
    assert [e[0] for e in errors] == [1, 2, 3, 4, 5, 6], errors


def test_each_broken_statement_of_a_block_is_reported_once():
    errors = syntax_errors("""
        game {
          let a = (1 + 2
          let b = 4
          if b = 1 { b = 2 }
          for x in { }
          emit e(1
          return
          end_game(scores: [0])
        }
    """)
    assert [e[:2] for e in errors] == [(3, 3), (4, 8), (5, 12), (7, 3)], errors


def test_a_missing_brace_is_reported_where_the_next_declaration_starts():
    errors = syntax_errors("""
        proc a() {
          log("a")
        proc b() {
          log("b")
        }
        game { a() b() end_game(scores: [0]) }
    """)
    assert errors == [(2, 11, "E103")]


def test_errors_after_a_recovery_are_real_ones():
    """The correct declarations around broken ones produce no error of their own."""
    good = ["var n: int = 0", "zone pile: ordered", "func f(x: int) -> int = x * 2",
            "proc p() {\n  n += 1\n}", "event e(x: int)"]
    bad = ["var a int = 0", "zone z: ordered,", "func g() -> int = 1 +", "proc q( {\n}"]
    rng = random.Random(4)
    for _ in range(30):
        decls = [(d, False) for d in good] + [(d, True) for d in bad]
        rng.shuffle(decls)
        text = "\n".join(d for d, _ in decls) + "\ngame { end_game(scores: [0]) }\n"
        errors = syntax_errors(text)
        assert len(errors) == len(bad), (text, errors)


def test_the_number_of_syntax_errors_is_capped():
    errors = syntax_errors("\n".join(f"var v{i} int = 0" for i in range(200)) + "\n")
    assert len(errors) == MAX_SYNTAX_ERRORS


def test_a_keyword_is_never_read_as_a_name():
    errors = syntax_errors("""
        game {
          let x =
          let y = 2
          end_game(scores: [y])
        }
    """)
    assert errors == [(3, 3, "E102")]


def test_the_checker_reports_every_independent_mistake(tmp_path):
    (tmp_path / "g.rules").write_text(textwrap.dedent("""
        zone hand: per_player
        var score: int = 0, per_player
        var hand: int = 0
        option rounds: int = 12, range(1, 9)
        proc give(p: player, n: int) { draw(pile, hand(p), n) }
        game {
          let p = players[0]
          give(p)
          p.scor += 1
          let s = p.scroe + 0
          if s { s = "many" }
          move(top(hand(p)), discrad(p))
          rounds = 4
          break
          end_game(scores: [p.score for p in players])
        }
    """).lstrip("\n"))
    (tmp_path / "g.yaml").write_text("id: g\nname: G\nplayers: 2\nrules: g.rules\ncards: []\n")
    diags = [d for d in api.validate_path(str(tmp_path / "g.yaml")) if d.is_error]
    got = sorted((d.span.line, d.code) for d in diags)
    assert got == [(3, "E201"), (4, "E303"), (5, "E217"), (8, "E305"), (9, "E211"), (10, "E218"), (11, "E303"),
                   (11, "E303"), (12, "E225"), (13, "E209"), (14, "E208")], got


def test_syntax_errors_in_several_rules_files_are_all_reported(tmp_path):
    (tmp_path / "a.rules").write_text("var a int = 0\n")
    (tmp_path / "b.rules").write_text("game {\n  let x = = 1\n  end_game(scores: [0])\n}\n")
    (tmp_path / "g.yaml").write_text("id: g\nname: G\nplayers: 2\nrules: [a.rules, b.rules]\ncards: []\n")
    diags = api.validate_path(str(tmp_path / "g.yaml"))
    assert sorted((os.path.basename(d.span.file), d.span.line, d.code) for d in diags) == \
        [("a.rules", 1, "E102"), ("b.rules", 2, "E102")]


def test_card_data_mistakes_are_all_reported_with_the_rules_ones(tmp_path):
    (tmp_path / "g.rules").write_text("kind token { number: int }\ngame {\n  end_game(scores: [nope])\n}\n")
    (tmp_path / "g.yaml").write_text(textwrap.dedent("""
        id: g
        name: G
        players: 2
        rules: g.rules
        cards:
          - {id: a, kind: token, number: 1}
          - {id: a, kind: token, number: 2}
          - {id: b, kind: tokn, number: 3}
          - {id: c, kind: token, number: x}
    """).lstrip("\n"))
    diags = api.validate_path(str(tmp_path / "g.yaml"))
    assert sorted(d.code for d in diags) == ["E217", "E231", "E232", "E233"]


@pytest.mark.parametrize("name", ["giant_king", "mach_struggle", "ufo_abduction", "birthdays_fight", "alien_attack"])
def test_recovery_never_adds_errors_to_a_correct_file(name):
    path = os.path.join(ROOT, "games", f"{name}.rules")
    with open(path, encoding="utf-8") as fh:
        assert syntax_errors(fh.read()) == []
