"""Safe to open: a game file from a stranger cannot run code, reach outside its folder,
hang, or eat the machine's memory.

- YAML is loaded safely: no Python object tags, limits on size, nesting and alias expansion.
- The rules language has no file, network or Python access.
- Rules files, card sets, variants and their rules files resolve only inside the game's
  folder tree (absolute paths, `..`, symbolic links pointing outside: E007).
- Loops and recursion are bounded (the step limit, the recursion guard); memory too.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from rulesvm import api
from rulesvm.dsl import yaml_loader
from rulesvm.dsl.diagnostics import DiagnosticError
from rulesvm.dsl.primitives import PRIMITIVES
from rulesvm.interpreter import RulesRuntimeError

from .conftest import ROOT

GAME = "id: g\nname: G\nplayers: {min: 1, max: 2, default: 1}\nrules: g.rules\ncards: []\n"


def write(folder, name: str, text: str) -> str:
    path = os.path.join(str(folder), name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(textwrap.dedent(text).lstrip("\n"))
    return path


def codes(diags) -> list:
    return [d.code for d in diags if d.is_error]


def game_with(tmp_path, rules: str, yaml_text: str = GAME) -> str:
    write(tmp_path, "g.rules", rules)
    return write(tmp_path, "g.yaml", yaml_text)


# ---------------------------------------------------------------------- YAML

@pytest.mark.parametrize("tag", [
    '!!python/object/apply:os.system ["touch {marker}"]',
    '!!python/object/new:os.system ["touch {marker}"]',
    '!!python/name:os.system',
    '!!python/module:os',
    '!!python/object:builtins.object {{}}',
])
def test_yaml_python_tags_never_run_code(tmp_path, tag):
    marker = tmp_path / "owned"
    path = write(tmp_path, "g.yaml", f"id: g\nname: {tag.format(marker=marker)}\nplayers: 1\n"
                                     "rules: g.rules\ncards: []\n")
    diags = api.validate_path(path)
    assert codes(diags) == ["E003"] and "unsupported YAML tag" in diags[0].message
    assert diags[0].span.line == 2
    assert not marker.exists()


def test_yaml_collection_tags_are_refused_not_read_as_plain_data(tmp_path):
    path = write(tmp_path, "g.yaml", "id: g\nrules: !!set {a.rules, b.rules}\ncards: !!omap [a: 1]\n")
    diags = api.validate_path(path)
    assert codes(diags) == ["E003", "E003"]
    assert [d.span.line for d in diags] == [2, 3]


def test_billion_laughs_is_cut_at_the_expansion_limit_with_a_clear_error(tmp_path):
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi"):
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
    path = write(tmp_path, "g.yaml", "\n".join(lines) + "\n")      # would expand to 9**9 strings
    diags = api.validate_path(path)
    # The loader counts what aliases expand to and stops at its limit (the message says so),
    # so it never builds the 9**9 strings: no clock needed to know it is quick.
    assert codes(diags) == ["E003"]
    assert "expands to more than" in diags[0].message and "alias bomb" in diags[0].message


def test_nesting_is_limited_without_a_recursion_error(tmp_path):
    deep = "x: " + "[" * 100_000 + "]" * 100_000 + "\n"
    diags = api.validate_path(write(tmp_path, "g.yaml", deep))
    assert codes(diags) == ["E003"] and f"deeper than {yaml_loader.MAX_DEPTH}" in diags[0].message
    assert (diags[0].span.line, diags[0].span.col) == (1, 4 + yaml_loader.MAX_DEPTH)


def test_size_is_limited_before_parsing(tmp_path, monkeypatch):
    monkeypatch.setattr(yaml_loader, "MAX_BYTES", 1000)
    path = write(tmp_path, "g.yaml", "id: g\n" + "# padding\n" * 200)
    diags = api.validate_path(path)
    assert codes(diags) == ["E004"]


def test_a_big_rules_file_is_limited_too(tmp_path, monkeypatch):
    monkeypatch.setattr(yaml_loader, "MAX_BYTES", 1000)       # the loaders check the size they read (dsl/reading.py reads)
    path = game_with(tmp_path, "game { end_game(scores: [0]) }\n" + "# padding\n" * 200)
    diags = api.validate_path(path)
    assert codes(diags) == ["E004"] and diags[0].span.file.endswith("g.rules")


# ---------------------------------------------------------------------- the rules language

FORBIDDEN = ["open", "eval", "exec", "compile", "__import__", "import", "getattr", "setattr", "globals",
             "locals", "vars", "input", "print", "system", "read", "write", "file", "socket", "http", "fetch",
             "url", "env", "environ", "subprocess", "os", "sys", "breakpoint", "exit"]


def test_no_primitive_reaches_files_network_or_python():
    assert not set(PRIMITIVES) & set(FORBIDDEN)


@pytest.mark.parametrize("snippet,code", [
    ('log(open("secrets.txt"))', "E225"),
    ('log(__import__("os"))', "E225"),
    ('log(eval("1 + 1"))', "E225"),
    ('log(exec("import os"))', "E225"),
    ('log(getattr(players[0], "seat"))', "E225"),
    ('let f = open', "E217"),
    ('log("{open(\\"x\\")}")', "E225"),
    ('let x = players[0].__class__', "E218"),
    ('let x = players.__class__', "E220"),
    ('import os', "E217"),
])
def test_the_checker_rejects_any_way_out(tmp_path, snippet, code):
    path = game_with(tmp_path, f"game {{\n  {snippet}\n  end_game(scores: [0])\n}}\n")
    diags = api.validate_path(path)
    assert code in codes(diags), [(d.code, d.message) for d in diags]


def test_hostile_names_and_strings_are_only_data(tmp_path):
    """Names that are Python keywords or builtins and strings full of quotes are compiled to
    Python source by the code generator: they must stay names and text."""
    marker = tmp_path / "owned"
    evil = f'\\"); __import__(\'os\').system(\'touch {marker}\'); (\\"'
    path = game_with(tmp_path, f'''
        kind def {{ lambda: int; import: text = "x" }}
        var class: int = 0
        var __builtins__: text = "{evil}"
        func exec(__import__: int) -> int = __import__ + 1
        proc open(self_: player) {{
          class = exec(class)
          log("{evil} {{class}} {{__builtins__}}")
        }}
        game {{
          open(players[0])
          for c in cards_of_kind("def") {{ class += c.lambda }}
          end_game(scores: [class], outcome: "{evil}")
        }}
    ''', GAME.replace("cards: []", "cards:\n  - {id: lambda, kind: def, lambda: 3, import: \"'''\\\"\"}"))
    assert codes(api.validate_path(path)) == []
    lines = []
    match = api.new_game(api.load_game(path), seed=1, sink=lines.append)
    assert match.is_over and match.result["scores"] == {"1": 4}
    assert any("__import__('os')" in r.get("text", "") for r in lines)
    assert not marker.exists()


# ---------------------------------------------------------------------- the game's folder

@pytest.fixture
def outside(tmp_path):
    """A folder beside the game's with files a game must not read (their content would be a
    syntax error, so reading them would show)."""
    out = tmp_path / "outside"
    out.mkdir()
    (out / "evil.rules").write_text("this is @@ not rules\n")
    (out / "evil.yaml").write_text("cards: [{id: x, kind: token}]\nbroken: [\n")
    return out


def _game_folder(tmp_path) -> str:
    folder = tmp_path / "game"
    folder.mkdir()
    (folder / "g.rules").write_text("kind token { }\ngame { end_game(scores: [0]) }\n")
    return str(folder)


@pytest.mark.parametrize("key,value", [
    ("rules", "../outside/evil.rules"),
    ("rules", "{outside}/evil.rules"),
    ("rules", "[g.rules, ../outside/evil.rules]"),
    ("card_sets", "[../outside/evil.yaml]"),
    ("card_sets", "[{outside}/evil.yaml]"),
    ("variants", "{{v: ../outside/evil.yaml}}"),
    ("rules", "sub/../../outside/evil.rules"),
])
def test_paths_that_leave_the_folder_are_e007(tmp_path, outside, key, value):
    folder = _game_folder(tmp_path)
    value = value.format(outside=outside)
    text = "id: g\nname: G\nplayers: 1\nrules: g.rules\ncards: [{id: t, kind: token}]\n"
    text = text.replace("rules: g.rules\n", "") + f"{key}: {value}\n"
    if key != "rules":
        text += "rules: g.rules\n"
    path = os.path.join(folder, "g.yaml")
    with open(path, "w") as fh:
        fh.write(text)
    diags = api.validate_path(path)
    assert "E007" in codes(diags), [(d.code, d.message) for d in diags]
    assert not any(d.span.file.startswith(str(outside)) for d in diags)
    assert not any(c in ("E101", "E102", "E001") for c in codes(diags))


@pytest.mark.parametrize("what", ["rules", "card_set", "variant", "variant_rules"])
def test_symbolic_links_pointing_outside_are_e007(tmp_path, outside, what):
    folder = _game_folder(tmp_path)
    text = "id: g\nname: G\nplayers: 1\nrules: g.rules\ncards: [{id: t, kind: token}]\n"
    if what == "rules":
        os.symlink(outside / "evil.rules", os.path.join(folder, "linked.rules"))
        text = text.replace("rules: g.rules", "rules: linked.rules")
    elif what == "card_set":
        os.symlink(outside / "evil.yaml", os.path.join(folder, "linked.yaml"))
        text += "card_sets: [linked.yaml]\n"
    elif what == "variant":
        os.symlink(outside / "evil.yaml", os.path.join(folder, "linked.yaml"))
        text += "variants: {v: linked.yaml}\n"
    else:
        os.symlink(outside, os.path.join(folder, "more"))
        with open(os.path.join(folder, "v.yaml"), "w") as fh:
            fh.write("variant: v\nbase: g.yaml\nrules:\n  add_file: more/evil.rules\n")
        text += "variants: {v: v.yaml}\n"
    path = os.path.join(folder, "g.yaml")
    with open(path, "w") as fh:
        fh.write(text)
    diags = api.validate_path(path)
    assert codes(diags) == ["E007"], [(d.code, d.message) for d in diags]


@pytest.mark.parametrize("where", ["card", "back"])
@pytest.mark.parametrize("picture", ["../outside/secret.png", "/etc/passwd", "link/secret.png"])
def test_pictures_the_web_table_serves_stay_in_the_folder(tmp_path, outside, where, picture):
    """`rulesvm serve` sends a card's `image:` (and a layout back's) to the browser: a game
    file must not be able to name any other file on the machine."""
    (outside / "secret.png").write_text("not a picture")
    folder = _game_folder(tmp_path)
    os.symlink(outside, os.path.join(folder, "link"))
    card = f", image: {picture}" if where == "card" else ""
    text = f"id: g\nname: G\nplayers: 1\nrules: g.rules\ncards: [{{id: t, kind: token{card}}}]\n"
    if where == "back":
        text += f"layout:\n  backs:\n    card: {{image: {picture}}}\n"
    path = os.path.join(folder, "g.yaml")
    with open(path, "w") as fh:
        fh.write(text)
    diags = api.validate_path(path)
    assert codes(diags) == ["E007"], [(d.code, d.message) for d in diags]


def test_a_symbolic_link_inside_the_folder_is_fine(tmp_path):
    folder = _game_folder(tmp_path)
    os.mkdir(os.path.join(folder, "rules"))
    os.rename(os.path.join(folder, "g.rules"), os.path.join(folder, "rules", "real.rules"))
    os.symlink(os.path.join(folder, "rules", "real.rules"), os.path.join(folder, "g.rules"))
    path = os.path.join(folder, "g.yaml")
    with open(path, "w") as fh:
        fh.write("id: g\nname: G\nplayers: 1\nrules: g.rules\ncards: [{id: t, kind: token}]\n")
    assert codes(api.validate_path(path)) == []


def test_card_sets_the_user_names_on_the_command_line_may_be_anywhere(tmp_path, outside):
    (outside / "extra.yaml").write_text("cards: [{id: u, kind: token}]\n")
    folder = _game_folder(tmp_path)
    path = os.path.join(folder, "g.yaml")
    with open(path, "w") as fh:
        fh.write("id: g\nname: G\nplayers: 1\nrules: g.rules\ncards: [{id: t, kind: token}]\n")
    assert codes(api.validate_game(path, [str(outside / "extra.yaml")])) == []


# ---------------------------------------------------------------------- bounded work

def run_rules(tmp_path, rules: str, max_steps: int = 20_000):
    path = game_with(tmp_path, rules)
    game = api.load_game(path)
    return api.new_game(game, seed=1, max_steps=max_steps)


@pytest.mark.parametrize("body", [
    "while true { n += 1 }",
    "loop { }",
    "repeat 1000000000 { n += 1 }",
    "loop { for p in players { n += 1 } }",
    "let xs = [1]\n  loop { xs = xs + [1] }",           # a list growing without end
    "let s = \"a\"\n  loop { s = s + \"a\" }",          # a text growing without end
])
def test_endless_loops_hit_the_step_limit(tmp_path, body):
    with pytest.raises(RulesRuntimeError) as info:
        run_rules(tmp_path, f"var n: int = 0\ngame {{\n  {body}\n  end_game(scores: [n])\n}}\n")
    assert info.value.code == "R002" and "20000 steps" in info.value.message


@pytest.mark.parametrize("rules", [
    "func down(k: int) -> int = down(k + 1)\ngame { end_game(scores: [down(0)]) }\n",
    "func a(k: int) -> int = b(k)\nfunc b(k: int) -> int = a(k)\ngame { end_game(scores: [a(0)]) }\n",
    "proc again() { again() }\ngame { again() end_game(scores: [0]) }\n",
])
def test_endless_recursion_is_stopped(tmp_path, rules):
    with pytest.raises(RulesRuntimeError) as info:
        run_rules(tmp_path, rules)
    assert info.value.code in ("R002", "R004")


def test_recursion_through_decisions_is_bounded_by_the_decisions(tmp_path):
    m = run_rules(tmp_path, "proc ask() {\n  let c = choose([1, 2], by: players[0])\n  ask()\n}\n"
                            "game { ask() end_game(scores: [0]) }\n")
    for _ in range(200):
        m.apply(0)
    assert not m.is_over and m.decisions_made == 200


def _limited(tmp_path, rules: str, seconds: float = 8) -> subprocess.CompletedProcess:
    """Run a game in a child process with 1.5 GB of memory and a few seconds."""
    path = game_with(tmp_path, rules)
    code = textwrap.dedent(f"""
        import resource, sys
        resource.setrlimit(resource.RLIMIT_AS, (1536 * 1024 * 1024, 1536 * 1024 * 1024))
        from rulesvm import api
        from rulesvm.interpreter import RulesRuntimeError
        try:
            api.new_game(api.load_game({path!r}), seed=1, max_steps=10000)
        except RulesRuntimeError as exc:
            print(exc.code)
    """)
    try:
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=seconds, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess([], -1, "", "timed out")


def test_memory_is_bounded_when_a_list_doubles(tmp_path):
    proc = _limited(tmp_path, "game {\n  let xs = [1]\n  loop { xs = xs + xs }\n  end_game(scores: [0])\n}\n")
    assert proc.stdout.strip() in ("R002", "R015"), proc.stderr[-500:]


def test_memory_is_bounded_for_a_huge_range(tmp_path):
    proc = _limited(tmp_path, "var n: int = 0\ngame {\n  for i in 1..2000000000 { n += 1 }\n  end_game(scores: [n])\n}\n")
    assert proc.stdout.strip() in ("R002", "R015"), proc.stderr[-500:]


def test_an_exponential_function_hits_the_step_limit(tmp_path):
    proc = _limited(tmp_path, "func t(k: int) -> int = if k < 2 then 1 else t(k - 1) + t(k - 2) + t(k - 2)\n"
                              "game { end_game(scores: [t(60)]) }\n")
    assert proc.stdout.strip() == "R002", proc.stderr[-500:]


def test_endless_recursion_in_a_default_is_a_runtime_error(tmp_path):
    with pytest.raises(RulesRuntimeError):
        run_rules(tmp_path, "func down(k: int) -> int = down(k + 1)\nvar start: int = down(0)\n"
                            "game { end_game(scores: [start]) }\n")


@pytest.mark.parametrize("codegen", [True, False])
@pytest.mark.parametrize("body", [
    "loop {\n    continue\n    let c = choose([1, 2], by: players[0])\n  }",
    "while true {\n    if n >= 0 { continue }\n    let c = choose([1, 2], by: players[0])\n  }",
])
def test_continue_in_a_loop_that_can_pause_counts_steps(tmp_path, body, codegen):
    """A loop whose body can ask a decision runs on the VM; `continue` jumps back to its
    head, and that jump is a step like the loop's own end (found by the fuzz campaign)."""
    from rulesvm.interpreter import Match
    from rulesvm.interpreter.compiler import compile_program
    path = game_with(tmp_path, f"var n: int = 0\ngame {{\n  {body}\n  end_game(scores: [n])\n}}\n")
    game = api.load_game(path)
    program = compile_program(game.model, game.options, codegen=codegen)
    with pytest.raises(RulesRuntimeError) as info:
        Match(program, seed=1, max_steps=20_000)
    assert info.value.code == "R002"


# ---------------------------------------------------------------------- deep nesting

def _nested(form: str, k: int) -> str:
    """A game whose rules nest `k` levels deep in one of several ways."""
    if form == "parentheses":
        e = "1"
        for _ in range(k):
            e = f"(1 + {e})"
        body = f"  total = {e}\n"
    elif form == "calls":
        body = "  total = " + "abs(" * k + "1" + ")" * k + "\n"
    elif form == "minus signs":
        body = "  total = " + "- " * k + "1\n"
    elif form == "lists":
        body = "  let y = " + "[" * k + "1" + "]" * k + "\n"
    elif form == "a chain of operators":
        body = "  total = " + " + ".join(["1"] * k) + "\n"
    else:   # blocks (indented at most 20 levels: 1,500 levels indented in full are over the size cap)
        body = "".join("  " * min(i + 1, 20) + "if total >= 0 {\n" for i in range(k)) + "  total += 1\n" + "}\n" * k
    return "var total: int = 0\ngame {\n" + body + "  end_game(scores: [total])\n}\n"


FORMS = ["parentheses", "calls", "minus signs", "lists", "a chain of operators", "blocks"]


@pytest.mark.parametrize("form", FORMS)
def test_rules_nested_too_deeply_are_e105_not_a_crash(tmp_path, form):
    path = game_with(tmp_path, _nested(form, 1500))
    result = subprocess.run([sys.executable, "-m", "rulesvm.cli.main", "validate", path],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "error[E105]" in result.stdout + result.stderr and "Traceback" not in result.stdout + result.stderr
    with pytest.raises(DiagnosticError) as info:
        api.load_game(path)
    (diag,) = info.value.diagnostics
    assert diag.code == "E105" and diag.span.line >= 3


@pytest.mark.parametrize("form", FORMS)
def test_the_deepest_rules_allowed_run_under_both_back_ends(tmp_path, form):
    """Just under the limit, every pass (checker, compiler, generated Python, whose parser
    allows only 200 nested parentheses, and the closures) still copes."""
    from rulesvm.dsl.parser import parse_rules
    k = 1
    while True:              # the deepest nesting of this form that E105 lets through
        try:
            parse_rules(_nested(form, k + 8), "g.rules")
        except DiagnosticError:
            break
        k += 8
    path = game_with(tmp_path, _nested(form, k))
    game = api.load_game(path)
    from rulesvm.interpreter import compile_program
    for codegen in (True, False):
        match = api.Match(compile_program(game.model, game.options, codegen=codegen), 1, 0)
        assert match.is_over


def test_generated_code_python_cannot_compile_falls_back_to_closures(tmp_path, monkeypatch):
    """Python's parser allows 200 nested parentheses; generated code can need more than the
    rules show (inlining adds some). Such code runs as closures instead of failing."""
    from rulesvm.dsl import parser
    monkeypatch.setattr(parser, "MAX_NESTING", 260)
    path = game_with(tmp_path, _nested("parentheses", 230))
    game = api.load_game(path)
    # The whole expression is not generated code (its closures generate the parts Python allows).
    assert not any("(1 + " * 230 in s for s in game.program.sources)
    match = api.new_game(game, 1, 0)
    assert match.is_over and match.result["scores"] == {"1": 231}


@pytest.mark.parametrize("rules", [
    "proc down(n: int) {\n  log(\"call {n}\")\n  down(n + 1)\n}\ngame {\n  down(0)\n  end_game(scores: [0])\n}\n",
    "func down(n: int) -> int = if n < 0 then 0 else 1 + down(n + 1)\n"
    "game {\n  log(\"start\")\n  end_game(scores: [down(0)])\n}\n",
    "ability again { log(\"again\")\n  use(again, first([c for c in box]), you) }\n"
    "kind token { power: ability }\ngame {\n  use(again, first([c for c in box]), player(1))\n  end_game(scores: [0])\n}\n",
])
def test_endless_recursion_stops_at_the_same_call_under_both_back_ends(tmp_path, rules):
    """R004 comes from a count of calls inside each other, not from Python's stack, so the
    game stops at the same place whichever back end runs it (found by `--backends`)."""
    from rulesvm.interpreter import compile_program
    from .helpers import write_game
    path = write_game(tmp_path, rules, cards="- {id: t, kind: token, power: again}" if "ability" in rules else "")
    game = api.load_game(path)
    stops = []
    for codegen in (True, False):
        heard = []
        with pytest.raises(RulesRuntimeError) as info:
            api.Match(compile_program(game.model, game.options, codegen=codegen), 1, 0, sink=heard.append)
        assert info.value.code == "R004" and "more than 120 calls" in info.value.message
        stops.append(len(heard))
    assert stops[0] == stops[1]


def test_recursion_a_hundred_deep_is_fine(tmp_path):
    from rulesvm.interpreter import compile_program
    from .helpers import write_game
    path = write_game(tmp_path, "var n: int = 0\nproc down(k: int) {\n  n += 1\n  if k > 0 { down(k - 1) }\n}\n"
                                "func depth(k: int) -> int = if k == 0 then 0 else 1 + depth(k - 1)\n"
                                "game {\n  down(100)\n  end_game(scores: [n + depth(100)])\n}\n")
    game = api.load_game(path)
    for codegen in (True, False):
        match = api.Match(compile_program(game.model, game.options, codegen=codegen), 1, 0)
        assert match.result["scores"] == {"1": 201}
