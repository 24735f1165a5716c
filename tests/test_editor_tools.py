"""Editor support: JSON Schemas of the YAML files, the TextMate grammar of `.rules` files, and
`rulesvm fmt`. Each is checked against the launch games (every game under games/, by glob)."""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass

import jsonschema
import pytest
import yaml

from rulesvm.dsl import ast as A
from rulesvm.dsl.diagnostics import DiagnosticError
from rulesvm.dsl.parser import KEYWORDS, _lark, parse_rules
from rulesvm.tooling import editorgen, schemas
from rulesvm.tooling.formatter import FormatError, find_comments, format_text

from .conftest import ROOT, game_files

SCHEMA_DIR = os.path.join(ROOT, "schema")
GRAMMAR = os.path.join(ROOT, "editors", "rulesvm.tmLanguage.json")
VSCODE = os.path.join(ROOT, "editors", "vscode")


def rulesvm(*args, input_text: str | None = None, cwd: str = ROOT) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "rulesvm.cli.main", *args], cwd=cwd, input=input_text,
                          capture_output=True, text=True, timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stdout, proc.stdout
    return proc


def _parses(path: str) -> bool:
    try:
        with open(path, encoding="utf-8") as fh:
            parse_rules(fh.read(), path)
    except (DiagnosticError, UnicodeDecodeError):     # tests/corpus holds deliberately bad files
        return False
    return True


def launch_rules_files() -> list[str]:
    """The rules files of the games under games/ (a game being written joins once it parses)."""
    files = []
    for game in game_files():
        with open(game, encoding="utf-8") as fh:
            rules = yaml.safe_load(fh)["rules"]
        for name in rules if isinstance(rules, list) else [rules]:
            files.append(os.path.join(os.path.dirname(game), name))
    files += sorted(glob.glob(os.path.join(ROOT, "games", "*", "variants", "*.rules")))
    return [f for f in files if _parses(f)]


def all_rules_files() -> list[str]:
    """Every rules file of the repository that parses (test files included)."""
    found = sorted(glob.glob(os.path.join(ROOT, "games", "**", "*.rules"), recursive=True)
                   + glob.glob(os.path.join(ROOT, "tests", "**", "*.rules"), recursive=True))
    return [f for f in found if _parses(f)]


def _rel(path: str) -> str:
    return os.path.relpath(path, ROOT)


def test_the_launch_games_are_found():
    names = {os.path.basename(f) for f in launch_rules_files()}
    assert {"giant_king.rules", "mach_struggle.rules", "birthdays_fight.rules", "ufo_abduction.rules"} <= names


# ============================================================================ JSON Schemas

def _load_schema_file(name: str) -> dict:
    with open(os.path.join(SCHEMA_DIR, name), encoding="utf-8") as fh:
        return json.load(fh)


def test_schema_files_are_up_to_date():
    expected = schemas.expected_files()
    present = sorted(os.listdir(SCHEMA_DIR))
    assert present == sorted(expected), "run `rulesvm schema --write schema`"
    for name, text in expected.items():
        with open(os.path.join(SCHEMA_DIR, name), encoding="utf-8") as fh:
            assert fh.read() == text, f"schema/{name} is out of date: run `rulesvm schema --write schema`"


@pytest.mark.parametrize("kind", schemas.KINDS)
def test_every_schema_is_a_valid_json_schema(kind):
    schema = _load_schema_file(schemas.file_name(kind))
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$id"].endswith(schemas.file_name(kind))


@pytest.mark.parametrize("game", game_files(), ids=os.path.basename)
def test_game_files_point_their_editor_at_the_schema_and_pass_it(game):
    with open(game, encoding="utf-8") as fh:
        text = fh.read()
    first = text.splitlines()[0]
    m = re.fullmatch(r"# yaml-language-server: \$schema=(\S+)", first)
    assert m, f"{_rel(game)} should start with `# yaml-language-server: $schema=...`"
    target = os.path.normpath(os.path.join(os.path.dirname(game), m.group(1)))
    assert target == os.path.join(SCHEMA_DIR, "game.schema.json"), m.group(1)
    data = yaml.safe_load(text)
    jsonschema.validate(data, _load_schema_file("game.schema.json"), cls=jsonschema.Draft202012Validator)
    # The game's own schema types its cards by its card kinds, and its cards pass it too.
    game_id, kinds = schemas.game_card_kinds(game)
    jsonschema.validate(data, schemas.game_schema_for("game", game_id, kinds),
                        cls=jsonschema.Draft202012Validator)


def test_variant_and_scenario_files_that_name_a_schema_name_the_right_one():
    checked = 0
    for path in sorted(glob.glob(os.path.join(ROOT, "games", "**", "*.yaml"), recursive=True)):
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        m = re.search(r"^# yaml-language-server: \$schema=(\S+)", text, re.MULTILINE)
        if not m or path in game_files():
            continue
        kind = "scenario" if path.endswith(".scenario.yaml") else "variant"
        target = os.path.normpath(os.path.join(os.path.dirname(path), m.group(1)))
        assert target == os.path.join(SCHEMA_DIR, schemas.file_name(kind)), _rel(path)
        jsonschema.validate(yaml.safe_load(text), _load_schema_file(schemas.file_name(kind)),
                            cls=jsonschema.Draft202012Validator)
        checked += 1
    assert checked >= 5     # the launch games' variants


def test_schema_command_prints_the_game_file_schema():
    p = rulesvm("schema")
    assert p.returncode == 0, p.stderr
    with open(os.path.join(SCHEMA_DIR, "game.schema.json"), encoding="utf-8") as fh:
        assert p.stdout == fh.read()
    for kind in schemas.KINDS:
        p = rulesvm("schema", "--kind", kind)
        assert p.returncode == 0, p.stderr
        assert json.loads(p.stdout) == _load_schema_file(schemas.file_name(kind))


def test_schema_of_a_games_card_data_types_its_cards():
    game = os.path.join("games", "mach_struggle.yaml")
    p = rulesvm("schema", game)
    assert p.returncode == 0, p.stderr
    schema = json.loads(p.stdout)
    assert "mach_struggle" in schema["title"]
    validator = jsonschema.Draft202012Validator(schema)
    with open(os.path.join(ROOT, game), encoding="utf-8") as fh:
        cards = yaml.safe_load(fh)["cards"]
    assert not list(validator.iter_errors({"cards": cards}))       # a card set of this game's cards
    bad = dict(cards[0], seat="one")                                # a field of the wrong type
    assert list(validator.iter_errors({"cards": [bad]}))
    unknown = dict(cards[0], wings=2)                               # a field no kind declares
    assert list(validator.iter_errors({"cards": [unknown]}))
    missing = {k: v for k, v in cards[0].items() if k != "seat"}    # a required field left out
    assert list(validator.iter_errors({"cards": [missing]}))
    # --kind game: the whole game file, with typed cards.
    p = rulesvm("schema", game, "--kind", "game")
    assert p.returncode == 0
    with open(os.path.join(ROOT, game), encoding="utf-8") as fh:
        jsonschema.validate(yaml.safe_load(fh), json.loads(p.stdout), cls=jsonschema.Draft202012Validator)


def test_schema_command_errors(tmp_path):
    p = rulesvm("schema", "--kind", "deck")
    assert p.returncode == 2 and "unknown kind of file" in p.stderr and "card-set" in p.stderr
    p = rulesvm("schema", "no/such/game.yaml")
    assert p.returncode == 2 and "no such file" in p.stderr
    p = rulesvm("schema", os.path.join("games", "giant_king.yaml"), "--kind", "scenario")
    assert p.returncode == 2 and "no cards" in p.stderr
    p = rulesvm("schema", "--write", str(tmp_path), "--kind", "game")
    assert p.returncode == 2
    # A game whose rules do not parse: the usual diagnostics, exit 1.
    (tmp_path / "g.yaml").write_text("id: g\nname: G\nplayers: 2\nrules: g.rules\ncards: []\n")
    (tmp_path / "g.rules").write_text("kind token { points: int\n")
    p = rulesvm("schema", str(tmp_path / "g.yaml"))
    assert p.returncode == 1
    assert re.search(r"g\.rules:\d+:\d+: error\[E1\d\d\]", p.stderr), p.stderr


def test_schema_write_creates_the_repository_files(tmp_path):
    p = rulesvm("schema", "--write", str(tmp_path / "out"))
    assert p.returncode == 0, p.stderr
    for name, text in schemas.expected_files().items():
        assert (tmp_path / "out" / name).read_text(encoding="utf-8") == text


# ============================================================================ the TextMate grammar

@dataclass
class _Frame:
    name: str | None            # the scope of the whole begin/end rule
    content: str | None         # its contentName (between begin and end)
    end: object                 # the compiled end pattern
    end_captures: dict
    rules: list


class TextMate:
    """A small TextMate tokenizer (match and begin/end rules, captures, contentName, includes),
    enough to check which scopes the grammar gives every character of a file. The grammar's
    regular expressions are kept to what Python's `re` and Oniguruma read alike."""

    def __init__(self, grammar: dict):
        self.grammar = grammar
        self.repo = grammar.get("repository", {})
        self._cache: dict = {}

    def _rules(self, patterns: list) -> list:
        out = []
        for p in patterns:
            if "include" in p:
                ref = p["include"]
                entry = self.grammar if ref == "$self" else self.repo[ref[1:]]
                out.extend(self._rules(entry["patterns"]) if "patterns" in entry and
                           "begin" not in entry and "match" not in entry else [entry])
            else:
                out.append(p)
        return out

    def _re(self, text: str):
        if text not in self._cache:
            self._cache[text] = re.compile(text)
        return self._cache[text]

    @staticmethod
    def _base(stack) -> tuple:
        return tuple(s for f in stack for s in (f.name, f.content) if s)

    def tokenize(self, source: str) -> list[list[tuple[str, tuple]]]:
        """For each line, a (character, scopes) pair per character."""
        stack = [_Frame("source.rules", None, None, {}, self._rules(self.grammar["patterns"]))]
        lines = []
        for line in source.split("\n"):
            scopes: list = [None] * len(line)
            pos = 0
            for _ in range(10 * len(line) + 10):
                frame = stack[-1]
                base = self._base(stack)
                best = None
                if frame.end is not None:
                    m = frame.end.search(line, pos)
                    if m:
                        best = (m.start(), m, None)
                for rule in frame.rules:
                    m = self._re(rule.get("match") or rule["begin"]).search(line, pos)
                    if m and (best is None or m.start() < best[0]):
                        best = (m.start(), m, rule)
                if best is None:
                    self._scope(scopes, pos, len(line), base)
                    break
                _, m, rule = best
                self._scope(scopes, pos, m.start(), base)           # text no rule matched
                if rule is None:                                    # the end of a begin/end rule
                    stack.pop()
                    outer = self._base(stack) + ((frame.name,) if frame.name else ())
                    self._scope(scopes, m.start(), m.end(), outer)
                    self._captures(scopes, m, frame.end_captures, outer)
                    pos = m.end()
                    continue
                outer = base + ((rule["name"],) if "name" in rule else ())
                self._scope(scopes, m.start(), m.end(), outer)
                if "match" in rule:
                    self._captures(scopes, m, rule.get("captures", {}), outer)
                    pos = m.end() if m.end() > m.start() else m.end() + 1
                else:
                    self._captures(scopes, m, rule.get("beginCaptures", rule.get("captures", {})), outer)
                    stack.append(_Frame(rule.get("name"), rule.get("contentName"), self._re(rule["end"]),
                                        rule.get("endCaptures", rule.get("captures", {})),
                                        self._rules(rule.get("patterns", []))))
                    pos = m.end()
                if pos > len(line):
                    break
            else:
                raise AssertionError(f"the tokenizer does not advance on: {line}")
            lines.append(list(zip(line, scopes)))
        return lines

    @staticmethod
    def _scope(scopes, start, end, names):
        for i in range(start, end):
            scopes[i] = names

    @staticmethod
    def _captures(scopes, m, captures, outer):
        for key, value in captures.items():
            g = int(key)
            if g <= m.re.groups and m.start(g) >= 0 and "name" in value:
                for i in range(m.start(g), m.end(g)):
                    scopes[i] = outer + (value["name"],)


def _grammar() -> TextMate:
    with open(GRAMMAR, encoding="utf-8") as fh:
        return TextMate(json.load(fh))


def _unscoped(source: str) -> list[str]:
    problems = []
    for n, line in enumerate(_grammar().tokenize(source), 1):
        for col, (ch, scopes) in enumerate(line, 1):
            if ch.isspace():
                continue
            if len(scopes) < 2:
                problems.append(f"{n}:{col}: `{ch}` has no scope")
            elif any("invalid" in s for s in scopes):
                problems.append(f"{n}:{col}: `{ch}` is {scopes[-1]}")
    return problems


def _scopes_of(source: str, word: str, occurrence: int = 0) -> tuple:
    """The scopes of the first character of the n-th `word` in a one-line source."""
    line = _grammar().tokenize(source)[0]
    idx = [m.start() for m in re.finditer(re.escape(word), source)][occurrence]
    return line[idx][1]


def test_grammar_regexes_compile_and_the_vscode_copy_is_identical():
    with open(GRAMMAR, encoding="utf-8") as fh:
        text = fh.read()
    grammar = json.loads(text)
    assert grammar["scopeName"] == "source.rules"
    with open(os.path.join(VSCODE, "syntaxes", "rulesvm.tmLanguage.json"), encoding="utf-8") as fh:
        assert fh.read() == text, "editors/vscode/syntaxes/ must hold a copy of editors/rulesvm.tmLanguage.json"

    def walk(node):
        if isinstance(node, dict):
            for key in ("match", "begin", "end"):
                if key in node:
                    re.compile(node[key])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
    walk(grammar)


def test_editor_grammar_word_lists_are_generated_from_the_registry_and_the_grammar():
    for path, text in editorgen.expected_files(ROOT).items():
        with open(os.path.join(ROOT, path), encoding="utf-8") as fh:
            assert fh.read() == text, f"{path} is out of date: run `python -m rulesvm.tooling.docgen`"


def test_editor_grammar_generation_notices_a_stale_file_and_a_missing_pattern(tmp_path, capsys):
    for path, text in editorgen.expected_files(ROOT).items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text.replace("|field_at|", "|"), encoding="utf-8")
    assert editorgen.main(["--check"], root=str(tmp_path)) == 1
    assert "run `python -m rulesvm.tooling.docgen`" in capsys.readouterr().out
    assert editorgen.main([], root=str(tmp_path)) == 0
    assert editorgen.main(["--check"], root=str(tmp_path)) == 0
    grammar = json.loads((tmp_path / editorgen.GRAMMAR).read_text(encoding="utf-8"))
    grammar["repository"]["expression"]["patterns"] = [
        p for p in grammar["repository"]["expression"]["patterns"] if p.get("name") != "constant.language.rules"]
    with pytest.raises(ValueError, match="constant.language.rules"):
        editorgen.regenerate(json.dumps(grammar))


def test_vscode_extension_layout():
    with open(os.path.join(VSCODE, "package.json"), encoding="utf-8") as fh:
        package = json.load(fh)
    lang = package["contributes"]["languages"][0]
    assert lang["extensions"] == [".rules"]
    grammar = package["contributes"]["grammars"][0]
    assert grammar["scopeName"] == "source.rules" and grammar["language"] == lang["id"]
    assert os.path.exists(os.path.join(VSCODE, grammar["path"]))
    with open(os.path.join(VSCODE, lang["configuration"]), encoding="utf-8") as fh:
        config = json.load(fh)
    assert config["comments"]["lineComment"] == "#"
    assert ["{", "}"] in config["brackets"] and ["(", ")"] in config["brackets"]
    assert {"open": '"', "close": '"', "notIn": ["string", "comment"]} in config["autoClosingPairs"]


@pytest.mark.parametrize("path", launch_rules_files(), ids=_rel)
def test_every_character_of_the_launch_games_is_scoped(path):
    with open(path, encoding="utf-8") as fh:
        problems = _unscoped(fh.read())
    assert not problems, f"{_rel(path)}:\n" + "\n".join(problems[:20])


def test_grammar_knows_every_keyword_and_operator_of_the_language():
    with open(GRAMMAR, encoding="utf-8") as fh:
        grammar_text = fh.read()
    for kw in KEYWORDS:
        assert re.search(rf"[(|]{kw}[|)]|\\\\b{kw}\\\\b", grammar_text), f"keyword `{kw}` is not in the grammar"
    # Every punctuation and operator terminal of grammar.lark is scoped, none as invalid.
    symbols = [t.pattern.value for t in _lark().terminals
               if t.pattern.type == "str" and not t.pattern.value.isalpha()]
    assert {"=>", "..", "->", "+=", "!=", "%"} <= set(symbols)
    for sym in symbols:
        assert not _unscoped(f"x {sym} y"), sym


def test_grammar_scopes_the_constructs_of_the_language():
    src = ('kind unit { power: int; names: list[text] = [] } '
           'zone hand: per_player phase take_turn(p: player) { } on moved(c, a, b) as tidy when c.kind == "unit" { } '
           'simultaneous for p in players { let x = choose(hand(p), by: p, label: c => "{c.name} \\" {join([], \\", \\")}") }'
           '  # a comment')
    line = src
    assert "storage.type.kind.rules" in _scopes_of(line, "kind")
    assert "entity.name.type.kind.rules" in _scopes_of(line, "unit")
    assert "support.type.rules" in _scopes_of(line, "int")
    assert "storage.type.zone.rules" in _scopes_of(line, "zone")
    assert "entity.name.function.rules" in _scopes_of(line, "take_turn")
    assert "storage.type.trigger.rules" in _scopes_of(line, "on moved")
    assert "keyword.control.rules" in _scopes_of(line, "when")
    assert "variable.other.property.rules" in _scopes_of(line, "kind", 1)        # c.kind is a field
    assert "keyword.control.rules" in _scopes_of(line, "simultaneous")
    assert "support.function.builtin.rules" in _scopes_of(line, "choose")
    assert "keyword.operator.arrow.rules" in _scopes_of(line, "=>")
    assert "meta.interpolation.rules" in _scopes_of(line, "c.name")
    assert "constant.character.escape.rules" in _scopes_of(line, '\\"')
    assert "comment.line.number-sign.rules" in _scopes_of(line, "# a comment")
    assert not _unscoped(src)


def test_grammar_flags_characters_the_language_does_not_have():
    assert _unscoped("let x = 'a'")                   # single quotes
    assert _unscoped("x = a @ b")
    assert not _unscoped('log("it\'s {x} @ 100%")')    # but anything goes inside a string


# ============================================================================ the formatter

def _check_format(text: str, path: str = "<test>") -> str:
    out = format_text(text, path)
    assert A.ast_equal(parse_rules(text, path), parse_rules(out, path))
    assert [c.text for c in find_comments(text)] == [c.text for c in find_comments(out)]
    assert format_text(out, path) == out, "formatting is not idempotent"
    return out


@pytest.mark.parametrize("path", all_rules_files(), ids=_rel)
def test_formatting_keeps_the_rules_and_comments_and_is_idempotent(path):
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    out = _check_format(text, path)
    assert out.endswith("\n") or out == ""
    for line in out.splitlines():
        assert line == line.rstrip(), "trailing spaces"
        assert not line.startswith("\t")


def test_formatting_a_launch_game_twice_changes_nothing_the_second_time():
    for path in launch_rules_files():
        with open(path, encoding="utf-8") as fh:
            once = format_text(fh.read(), path)
        assert format_text(once, path) == once


TRICKY = '''\
# header comment

kind  token{label:text;points:int=-1}   # trailing on a kind
kind finale { }
kind wide { a: int; b: text = "x";   # about b
  c: list[int] = [] }
zone   deck :per_player,ordered,hidden
option laps:int=2,range(1,5),doc("Laps")
var total:int=0
event scored(p: player, n: int)

func f(x: int) -> int = (x + 1) * 2 - (3 - x) + -(x) + x % 2
func g(a: bool, b: bool) -> bool = not (a and b) or (a or b) and not a
func h(xs: list[int]) -> list[int] = [x*2 for x in (if true then xs else []) if x not in xs and x in 1..3]
func t(x: int) -> any = (x,)
func k(x: int) -> bool = (x == 1) == true
func r() -> list[int] = (1..2) + [3][0..0]

setup {
  let a = 1; (a, 2)
  total = a; -a
  log("a {a} \\" {join([\\"x\\"], \\", \\")} }")     # strings stay as written
  if a > 0 { return }
  elif a < 0 {
    # alone in a block
  } else { total += 1 }
  for x in [1, 2,   # inside a list
            3] {
    total -= x
  }


  while total > 100 { break }
  repeat 2 { continue }
  loop { return; }
  emit scored(players[0], 1)
  simultaneous for p in players {
    p.x = choose([1, 2], by: p, label: v => if v == 1 then "one" else if v == 2 then "two" else "many")
  }
  # before the closing brace
}

on scored(p, n) as counted when n > 0 and p != none { total += n }
game { end_game(scores: [0]) }
# at the very end
'''


def test_formatting_tricky_constructs():
    out = _check_format(TRICKY)
    assert "kind token { label: text; points: int = -1 }  # trailing on a kind" in out
    assert "kind finale {}" in out
    assert "zone deck: per_player, ordered, hidden" in out
    assert "option laps: int = 2, range(1, 5), doc(\"Laps\")" in out
    assert "func f(x: int) -> int = (x + 1) * 2 - (3 - x) + -x + x % 2" in out
    assert "not (a and b) or (a or b) and not a" in out
    assert "func t(x: int) -> any = (x,)" in out
    assert "(x == 1) == true" in out
    assert "  let a = 1;\n  (a, 2)" in out            # the `;` that keeps two statements apart
    assert "  total = a;\n  -a" in out
    assert "  loop { return }" in out
    assert '  log("a {a} \\" {join([\\"x\\"], \\", \\")} }")  # strings stay as written' in out
    assert "  if a > 0 {\n    return\n  } elif a < 0 {\n    # alone in a block\n  } else {" in out
    assert "  # inside a list\n  for x in [1, 2, 3] {" in out      # moved above its statement
    assert "  }\n\n  while total > 100 { break }" in out         # blank lines: at most one
    assert "  # before the closing brace\n}" in out
    assert out.endswith("game { end_game(scores: [0]) }\n# at the very end\n")
    assert out.startswith("# header comment\n\nkind token")


def test_long_lines_are_wrapped():
    src = ("phase p(pl: player) {\n  let c = choose([c for c in box if c.kind == \"x\" and c.points > 3], by: pl, "
           "prompt: \"Pick a card to play now\", label: c => \"{c} ({c.points})\", pass: \"Pass\")\n}\n"
           "func long_one(a: int, b: int) -> bool = a > 1 and b > 2 and a + b > 3 and a * b > 4 and a - b > 5 "
           "and a % 2 == 0\n")
    out = _check_format(src)
    assert all(len(line) <= 100 for line in out.splitlines()), out
    lines = out.splitlines()
    assert lines[1].startswith("  let c = choose([c for c in box")
    assert lines[2].startswith(" " * len("  let c = choose(")) and not lines[2][len("  let c = choose("):].startswith(" ")
    assert "func long_one(a: int, b: int) -> bool =\n  a > 1" in out


def test_comments_and_blank_lines_survive_formatting_in_odd_places():
    src = ("setup {   # after the brace\n  let a = f(1,   # inside a call\n    2)\n\n\n  # own line\n  g(a) ; h(a)   # two\n"
           "}  # after setup\n# between\ngame {\n}\n")
    out = _check_format(src)
    assert out == ("setup {  # after the brace\n  # inside a call\n  let a = f(1, 2)\n\n  # own line\n  g(a)\n"
                   "  h(a)  # two\n}  # after setup\n# between\ngame {\n}\n")


def test_end_of_line_comments_of_neighbouring_lines_are_aligned():
    out = _check_format("var a: int = 0   # one\nvar long_name: int = 0 # two\nvar c: int = 0\nvar d: int = 0 # three\n")
    assert out == ("var a: int = 0          # one\nvar long_name: int = 0  # two\nvar c: int = 0\n"
                   "var d: int = 0  # three\n")


def test_empty_and_comment_only_files():
    assert _check_format("") == ""
    assert _check_format("\n\n") == ""
    assert _check_format("# just a note\n\n\n# and another   \n") == "# just a note\n\n# and another\n"


def test_formatter_refuses_what_it_cannot_keep():
    # The parser keeps no trace of keyword arguments to `emit`: formatting would drop them.
    with pytest.raises(FormatError, match="would lose"):
        format_text("setup {\n  emit scored(p: 1)\n}\n")
    with pytest.raises(DiagnosticError):
        format_text("setup {\n  let = 3\n}\n")


# ============================================================================ rulesvm fmt

UGLY = "kind  token{label:text}\nsetup{move(box,deck)  # fill the deck\n}\n"
PRETTY = "kind token { label: text }\nsetup {\n  move(box, deck)  # fill the deck\n}\n"


def test_fmt_rewrites_a_file_in_place(tmp_path):
    f = tmp_path / "g.rules"
    f.write_text(UGLY)
    f.chmod(0o640)
    p = rulesvm("fmt", str(f))
    assert p.returncode == 0, p.stderr
    assert f.read_text() == PRETTY
    assert stat.S_IMODE(f.stat().st_mode) == 0o640
    assert "1 file(s) reformatted" in p.stderr
    assert sorted(os.listdir(tmp_path)) == ["g.rules"]        # no temporary file left behind
    p = rulesvm("fmt", str(f))
    assert p.returncode == 0 and "0 file(s) reformatted, 1 unchanged" in p.stderr


def test_fmt_check_lists_files_that_would_change_and_writes_nothing(tmp_path):
    ugly, pretty = tmp_path / "ugly.rules", tmp_path / "pretty.rules"
    ugly.write_text(UGLY)
    pretty.write_text(PRETTY)
    p = rulesvm("fmt", "--check", str(ugly), str(pretty))
    assert p.returncode == 1
    assert p.stdout.splitlines() == [str(ugly)]
    assert ugly.read_text() == UGLY
    assert "1 file(s) would be reformatted, 1 unchanged" in p.stderr
    p = rulesvm("fmt", "--check", str(pretty))
    assert p.returncode == 0 and p.stdout == ""


def test_fmt_diff_prints_a_unified_diff_and_writes_nothing(tmp_path):
    f = tmp_path / "g.rules"
    f.write_text(UGLY)
    p = rulesvm("fmt", "--diff", str(f))
    assert p.returncode == 0
    assert f"--- {f}" in p.stdout and f"+++ {f} (formatted)" in p.stdout
    assert "-kind  token{label:text}" in p.stdout and "+kind token { label: text }" in p.stdout
    assert f.read_text() == UGLY
    p = rulesvm("fmt", "--diff", "--check", str(f))
    assert p.returncode == 1 and "+kind token" in p.stdout


def test_fmt_refuses_a_file_with_syntax_errors(tmp_path):
    f = tmp_path / "bad.rules"
    text = "setup {\n  let x = = 3\n}\n"
    f.write_text(text)
    for args in ((), ("--check",), ("--diff",)):
        p = rulesvm("fmt", *args, str(f))
        assert p.returncode == 1
        assert re.search(r"bad\.rules:2:\d+: error\[E102\]", p.stderr), p.stderr
        assert " 2 |   let x = = 3" in p.stderr
        assert f.read_text() == text


def test_fmt_error_paths(tmp_path):
    p = rulesvm("fmt", str(tmp_path / "missing.rules"))
    assert p.returncode == 2 and "no such file" in p.stderr
    p = rulesvm("fmt", str(tmp_path))
    assert p.returncode == 2 and "no rules files" in p.stderr
    binary = tmp_path / "bin.rules"
    binary.write_bytes(b"\xff\xfe\x00kind")
    p = rulesvm("fmt", str(binary))
    assert p.returncode == 1 and "not UTF-8" in p.stderr
    emit = tmp_path / "emit.rules"
    emit.write_text("setup {\n  emit scored(p: 1)\n}\n")
    p = rulesvm("fmt", str(emit))
    assert p.returncode == 1 and "cannot be formatted safely" in p.stderr
    assert emit.read_text() == "setup {\n  emit scored(p: 1)\n}\n"
    p = rulesvm("fmt")
    assert p.returncode == 2


def test_fmt_formats_folders_standard_input_and_keeps_crlf(tmp_path):
    (tmp_path / "sub").mkdir()
    a, b = tmp_path / "a.rules", tmp_path / "sub" / "b.rules"
    a.write_text(UGLY)
    b.write_bytes(UGLY.replace("\n", "\r\n").encode())
    (tmp_path / "notes.txt").write_text("not rules {")
    p = rulesvm("fmt", str(tmp_path))
    assert p.returncode == 0, p.stderr
    assert a.read_text() == PRETTY
    assert b.read_bytes() == PRETTY.replace("\n", "\r\n").encode()
    assert (tmp_path / "notes.txt").read_text() == "not rules {"
    p = rulesvm("fmt", "-", input_text=UGLY)
    assert p.returncode == 0 and p.stdout == PRETTY
    p = rulesvm("fmt", "--check", "-", input_text=UGLY)
    assert p.returncode == 1 and p.stdout == ""


def test_the_launch_games_are_in_canonical_format():
    # games/ shows the layout `rulesvm fmt` writes: a designer who copies a launch game and
    # runs `fmt --check` in CI starts clean. After editing one, run `rulesvm fmt games/`.
    p = rulesvm("fmt", "--check", "games/")
    assert p.returncode == 0, f"run `rulesvm fmt games/`; not in canonical format:\n{p.stdout}{p.stderr}"
    assert "0 file(s) would be reformatted" in p.stderr
    assert all(_rel(f).startswith("games") for f in launch_rules_files())


def test_help_texts():
    p = rulesvm("fmt", "--help")
    assert p.returncode == 0
    for word in ("--check", "--diff", "FILE", "canonically", "standard input"):
        assert word in p.stdout
    p = rulesvm("schema", "--help")
    assert p.returncode == 0
    for word in ("--kind", "--write", "GAME", "JSON Schema", "card-set"):
        assert word in p.stdout
    p = rulesvm("--help")
    assert "fmt" in p.stdout and "schema" in p.stdout


def test_formatting_mutated_launch_games():
    """A small fixed campaign: mutate the launch games token by token; whatever still parses
    formats without losing anything, and formats to itself a second time."""
    import random
    token = re.compile(r'"(?:[^"\\\n]|\\.)*"|#[^\n]*|[A-Za-z_]\w*|\d+|\s+|\S')
    texts = []
    for path in launch_rules_files():
        with open(path, encoding="utf-8") as fh:
            texts.append(fh.read())
    rng = random.Random(10)
    formatted = 0
    for _ in range(60):
        toks = token.findall(rng.choice(texts))
        solid = [i for i, t in enumerate(toks) if not t.isspace()]
        for _ in range(rng.randint(1, 3)):
            i, j = rng.choice(solid), rng.choice(solid)
            op = rng.randrange(4)
            if op == 0:
                toks[i] = ""                                        # delete a token
            elif op == 1:
                toks[i] = toks[i] + " " + toks[j]                   # duplicate one
            elif op == 2:
                toks[i], toks[j] = toks[j], toks[i]                 # swap two
            else:
                toks[i] = toks[i] + rng.choice(["\n", " ;", " # note\n", "\n\n", " (", ") ", " -"])
        text = "".join(toks)
        try:
            parse_rules(text, "mutant.rules")
        except DiagnosticError:
            continue
        _check_format(text, "mutant.rules")
        formatted += 1
    assert formatted >= 10


# A stand-in for VS Code's `vscode` module: what the extension calls before it starts a client.
VSCODE_STUB = """
const shown = [];
let setting;
module.exports = {
  shown, set(value) { setting = value; },
  window: {
    showWarningMessage: (m) => { shown.push(["warning", m]); return Promise.resolve(); },
    showErrorMessage: (m) => { shown.push(["error", m]); return Promise.resolve(); },
  },
  workspace: { getConfiguration: () => ({ get: (key, fallback) => setting === undefined ? fallback : setting }) },
};
"""
ACTIVATE = """
const vscode = require("vscode");
const extension = require("./extension.js");
vscode.set(JSON.parse(process.argv[1]));
const context = { subscriptions: [] };
extension.activate(context);
console.log(JSON.stringify({ started: context.subscriptions.length, shown: vscode.shown }));
"""


def _activate(folder, command: list) -> dict:
    done = subprocess.run(["node", "-e", ACTIVATE, json.dumps(command)], cwd=folder, capture_output=True, text=True,
                          timeout=60, check=True)
    return json.loads(done.stdout)


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_vscode_extension_goes_on_without_the_server(tmp_path):
    """Without the language server (or without `npm install`), activating the extension warns
    once and starts nothing; highlighting needs no code (package.json declares the grammar)."""
    shutil.copy(os.path.join(VSCODE, "extension.js"), tmp_path)
    stub = tmp_path / "node_modules" / "vscode"
    stub.mkdir(parents=True)
    (stub / "index.js").write_text(VSCODE_STUB, encoding="utf-8")
    missing = _activate(tmp_path, ["rulesvm-no-such-server", "lsp"])
    assert missing["started"] == 0
    assert [kind for kind, _ in missing["shown"]] == ["warning"]
    assert "`rulesvm-no-such-server` was not found" in missing["shown"][0][1]
    assert "highlighted" in missing["shown"][0][1]
    no_client = _activate(tmp_path, [sys.executable, "-m", "rulesvm.cli.main", "lsp"])     # no vscode-languageclient
    assert no_client["started"] == 0 and "npm install" in no_client["shown"][0][1]
    with open(os.path.join(VSCODE, "package.json"), encoding="utf-8") as fh:
        manifest = json.load(fh)
    assert manifest["contributes"]["grammars"][0]["path"] == "./syntaxes/rulesvm.tmLanguage.json"
