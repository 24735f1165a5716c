"""docs/language.md documents every construct of the grammar: each rule of dsl/grammar.lark
(and each of its aliases) is mapped to the text that documents it, each keyword and
operator of the grammar appears in the page, and so do the built-in events and the
reserved words of the parser. A grammar rule added without documentation fails here."""

from __future__ import annotations

import os
import re

from rulesvm.dsl.checker import BUILTIN_EVENTS
from rulesvm.dsl.parser import GRAMMAR_PATH, KEYWORDS

from .conftest import ROOT

DOC = os.path.join(ROOT, "docs", "language.md")

# grammar rule or alias -> text that must appear in language.md where it is documented.
DOCUMENTED = {
    "start": "## Rules files at a glance",
    "_item": "## Declarations",
    "kind_decl": "`kind NAME { field: type [= default]; ... }`",
    "field_decl": "`kind NAME { field: type [= default]; ... }`",
    "zone_decl": "`zone NAME: modifier, ...`",
    "var_decl": "`var NAME: type = default",
    "option_decl": "`option NAME: type = default",
    "modifier": "### Zone modifiers",
    "event_decl": "`event NAME(param: type, ...)`",
    "proc_decl": "`proc NAME(params) [-> type] { ... }`",
    "func_decl": "`func NAME(params) -> type = expression`",
    "ability_decl": "`ability NAME { ... }`",
    "phase_decl": "`phase NAME(params) { ... }`",
    "trigger_decl": "`on EVENT(names) [as LABEL] [when condition] { ... }`",
    "setup_decl": "`setup { ... }`",
    "game_decl": "`game { ... }`",
    "params": "`proc NAME(params)",
    "param": "`proc NAME(params)",
    "names": "`names` bind the event's arguments",
    "type_expr": "## Types",
    "simple_type": "| `int` | whole numbers, 64-bit",
    "generic_type": "| `list[T]` |",
    "block": "`if c { } elif c { } else { }`",
    "_stmt": "## Statements",
    "let_stmt": "`let x = expr`",
    "assign_stmt": "`x = expr`, `x += n`, `x -= n`",
    "assign_op": "`x = expr`, `x += n`, `x -= n`",
    "if_stmt": "`if c { } elif c { } else { }`",
    "elif_clause": "`if c { } elif c { } else { }`",
    "for_stmt": "`for x in list_or_zone { }`",
    "simultaneous_stmt": "`simultaneous for x in list { }`",
    "while_stmt": "`while c { }`",
    "repeat_stmt": "`repeat n { }`",
    "loop_stmt": "`loop { }`",
    "break_stmt": "`break`",
    "continue_stmt": "`continue`",
    "return_stmt": "`return [expr]`",
    "emit_stmt": "`emit event(args)`",
    "expr_stmt": "`name(args)`",
    "expr": "## Expressions",
    "lambda_expr": "`x => expr`",
    "if_expr": "`if c then a else b`",
    "or_expr": "`a or b`",
    "or_op": "`a or b`",
    "and_expr": "`a and b`",
    "and_op": "`a and b`",
    "not_expr": "`not a`",
    "not_op": "`not a`",
    "comparison": "`a == b`, `!=`, `<`, `<=`, `>`, `>=`, `a in xs`, `a not in xs`",
    "compare": "`a == b`, `!=`, `<`, `<=`, `>`, `>=`, `a in xs`, `a not in xs`",
    "comp_op": "`a == b`, `!=`, `<`, `<=`, `>`, `>=`, `a in xs`, `a not in xs`",
    "range_expr": "`a..b`",
    "range_op": "`a..b`",
    "sum_expr": "`a + b`, `a - b`",
    "add_op": "`a + b`, `a - b`",
    "product": "`a * b`, `a / b`, `a % b`",
    "mul_op": "`a * b`, `a / b`, `a % b`",
    "binary": "`a + b`, `a - b`",
    "unary": "| `-a` | negation |",
    "neg": "| `-a` | negation |",
    "postfix": "`x.name`, `f(args)`, `xs[i]`",
    "attr": "`x.name`",
    "call": "`f(args)`",
    "index": "`xs[i]`",
    "atom": "`42`, `\"text\"`, `true`, `false`, `none`, `name`, `(expr)`",
    "int_lit": "**Numbers**",
    "str_lit": "**Text**",
    "true_lit": "`true`",
    "false_lit": "`false`",
    "none_lit": "`none` fits every type",
    "name": "**Names**",
    "tuple_lit": "`(a, b)`",
    "list_lit": "`[a, b]`",
    "comprehension": "`[expr for x in xs if cond]`",
    "args": "keyword arguments",
    "arg": "keyword arguments",
    "kwarg": "keyword arguments",
}


def _doc() -> str:
    with open(DOC, encoding="utf-8") as fh:
        return fh.read()


def _grammar() -> str:
    with open(GRAMMAR_PATH, encoding="utf-8") as fh:
        return "\n".join(line.split("//")[0] for line in fh)


def grammar_rules() -> set[str]:
    text = _grammar()
    rules = set(re.findall(r"^[?!]?([a-z_]+):", text, re.MULTILINE))
    aliases = set(re.findall(r"->\s*([a-z_]+)", text))
    return rules | aliases


def grammar_literals() -> set[str]:
    found = set(re.findall(r'"([^"\s]+)"', _grammar()))
    return {lit for lit in found if re.fullmatch(r"[a-z_]+|[=<>!+\-*/%.]+|[(){}\[\],:;]", lit)}


def test_every_grammar_rule_is_mapped_to_its_documentation():
    rules = grammar_rules()
    assert {"trigger_decl", "simultaneous_stmt", "comprehension", "lambda_expr"} <= rules
    missing = sorted(rules - set(DOCUMENTED))
    assert not missing, f"grammar rules without documentation in language.md: {missing}"
    stale = sorted(set(DOCUMENTED) - rules)
    assert not stale, f"no longer in the grammar: {stale}"


def test_the_documentation_of_every_rule_is_in_the_page():
    doc = _doc()
    absent = {rule: text for rule, text in DOCUMENTED.items() if text not in doc}
    assert not absent, absent


def test_every_keyword_and_operator_appears_in_code():
    doc = _doc()
    blocks = re.findall(r"^```.*?\n(.*?)^```", doc, re.S | re.M)
    prose = re.sub(r"^```.*?\n.*?^```", "", doc, flags=re.S | re.M)
    code = " ".join(re.findall(r"`([^`\n]+)`", prose)) + " " + " ".join(blocks)
    punctuation = set("(){}[],:;.")
    for literal in sorted(grammar_literals() | KEYWORDS):
        if literal in punctuation:
            continue
        if literal.isalpha() or "_" in literal:
            assert re.search(rf"(?<![\w]){re.escape(literal)}(?![\w])", code), f"keyword `{literal}` is not documented"
        else:
            assert literal in code, f"operator `{literal}` is not documented"


def test_the_keyword_list_is_complete():
    doc = _doc()
    section = doc.split("- **Keywords**:")[1].split("\n- ")[0]
    listed = set(re.findall(r"[a-z_]+", section.split("They are reserved")[0]))
    assert listed == KEYWORDS, (KEYWORDS - listed, listed - KEYWORDS)


def test_builtin_events_are_documented():
    doc = _doc()
    for name, params in BUILTIN_EVENTS.items():
        shown = f"`{name}({', '.join(p for p, _ in params)})`"
        assert shown in doc, shown


def test_the_check_would_catch_an_undocumented_rule():
    # Guard the guard: a rule name the mapping does not know is reported.
    assert "frobnicate_stmt" not in DOCUMENTED
    assert grammar_rules() - (set(DOCUMENTED) - {"loop_stmt"}) == {"loop_stmt"}


def test_the_example_at_a_glance_is_a_complete_game(tmp_path):
    # The rules file shown under "Rules files at a glance" validates cleanly and plays to the end.
    from rulesvm import api

    from .helpers import random_playout
    section = _doc().split("## Rules files at a glance")[1]
    rules = re.search(r"^```\n(.*?)^```", section, re.S | re.M).group(1)
    (tmp_path / "glance.rules").write_text(rules, encoding="utf-8")
    (tmp_path / "glance.yaml").write_text(
        "id: glance\nname: Glance\nplayers: 2\nrules: glance.rules\n"
        "cards:\n  - {id: knight, kind: unit, power: 2, ability: charge, count: 10}\n", encoding="utf-8")
    path = str(tmp_path / "glance.yaml")
    assert api.validate_game(path) == []
    game = api.load_game(path)
    for seed in range(5):
        match = api.new_game(game, 2, seed, debug=True)
        random_playout(match, seed, limit=5000)
        assert match.result["ranking"]
