"""The corpus of bad inputs (tests/corpus/, see its README): every case gets exactly the
diagnostics, positions and exit code it expects, and never a traceback.

Each case runs the real command line (`rulesvm.cli.main.app`) in-process; a few run as
separate processes too, as a user would. `python -m tests.test_corpus CASE_ID` prints what
rulesvm reports for a case, to help write a new one.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest
import yaml
from typer.testing import CliRunner

from rulesvm.cli.main import app

from .conftest import ROOT

CORPUS = os.path.join(ROOT, "tests", "corpus")
MANIFEST = os.path.join(CORPUS, "cases.yaml")
WRAPPER = "id: wrapped\nname: Wrapped\nplayers: {min: 1, max: 4}\nrules: RULES\ncards: []\n"

# `file:line:col: error[E123]: ...`, `... runtime error[R009]: ...`, `... warning[W401]: ...`
REPORTED = re.compile(r"^\s*(?P<file>\S[^\n]*?):(?P<line>-?\d+):(?P<col>-?\d+): "
                      r"(?:runtime )?(?P<sev>error|warning)\[(?P<code>[A-Z]\d{3})\]", re.M)
# Annotations in case files: a caret under the mistake (`#   ^ E225 fragment`, `#^` = column 1)
# or an explicit position anywhere (`# expect: E102 3:7 fragment`).
CARET = re.compile(r"^(?P<pad>\s*#\s*?)(?P<caret>\^+)\s+(?P<code>[EWR]\d{3})\s*(?P<msg>.*)$")
EXPLICIT = re.compile(r"#\s*expect:\s*(?P<code>[EWR]\d{3})\s+(?P<line>\d+):(?P<col>\d+)\s*(?P<msg>.*)$")
EXPECT_ITEM = re.compile(r"^(?P<code>[EWR]\d{3})\s+(?P<file>[^:\s]+):(?P<line>-?\d+):(?P<col>-?\d+)$")


def load_cases() -> list[dict]:
    with open(MANIFEST, encoding="utf-8") as fh:
        cases = yaml.safe_load(fh)
    return cases


CASES = load_cases()


def annotations(path: str) -> set:
    """(file basename, line, col, code, fragment) for each annotation in a case file."""
    found = set()
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().split("\n")
    except (UnicodeDecodeError, IsADirectoryError, FileNotFoundError):
        return found
    last = 0
    name = os.path.basename(path)
    for lineno, line in enumerate(lines, 1):
        m = CARET.match(line)
        if m:
            col = 1 if line.lstrip().startswith("#^") else line.index("^") + 1
            found.add((name, last, col, m.group("code"), m.group("msg").strip()))
            continue
        e = EXPLICIT.search(line)
        if e:
            found.add((name, int(e.group("line")), int(e.group("col")), e.group("code"), e.group("msg").strip()))
            continue
        last = lineno          # a caret points into the nearest line above that is not an annotation
    return found


def expected(case: dict, files: list[str]) -> set:
    if "expect" in case:
        out = set()
        for item in case["expect"] or []:
            m = EXPECT_ITEM.match(item)
            assert m, f"{case['id']}: bad expect item {item!r}"
            out.add((m.group("file"), int(m.group("line")), int(m.group("col")), m.group("code"), ""))
        return out
    out = set()
    for f in files:
        out |= annotations(f)
    return out


def prepare(case: dict, tmp: str) -> tuple[list[str], list[str]]:
    """The command's arguments, and the case files whose annotations count."""
    subst = {"{corpus}": CORPUS, "{tmp}": tmp, "{root}": ROOT}
    files: list[str] = []
    target = None
    if "generate" in case:
        target = GENERATORS[case["generate"]](tmp)
    elif "file" in case:
        source = os.path.join(CORPUS, case["file"])
        files = [source]
        if os.path.basename(source) == "game.yaml" and os.path.isdir(os.path.dirname(source)):
            folder = os.path.dirname(source)
            files = [os.path.join(folder, f) for f in sorted(os.listdir(folder))
                     if f.endswith((".yaml", ".rules")) and os.path.isfile(os.path.join(folder, f))]
        target = source
        if source.endswith(".rules") and case.get("wrap", True):
            # A rules file is checked inside a game file that names it and has no cards.
            shutil.copy(source, os.path.join(tmp, os.path.basename(source)))
            target = os.path.join(tmp, "game.yaml")
            with open(target, "w", encoding="utf-8") as fh:
                fh.write(WRAPPER.replace("RULES", os.path.basename(source)))
    if target is not None:
        subst["{file}"] = target
    args = []
    for a in case.get("cmd", ["validate", "{file}"]):
        for k, v in subst.items():
            a = a.replace(k, v)
        args.append(a)
    return args, files


def run_cli(args: list[str], stdin: str | None = None):
    result = CliRunner().invoke(app, args, input=stdin, catch_exceptions=True)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        import traceback
        tb = "".join(traceback.format_exception(result.exception))
        raise AssertionError(f"rulesvm {' '.join(args)} raised an exception:\n{tb}")
    return result


def reported(text: str) -> set:
    return {(os.path.basename(m.group("file")), int(m.group("line")), int(m.group("col")), m.group("code"))
            for m in REPORTED.finditer(text)}


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_corpus_case(case, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args, files = prepare(case, str(tmp_path))
    result = run_cli(args, case.get("stdin"))
    output = result.stdout + result.stderr
    assert "Traceback" not in output, output
    want = expected(case, files)
    got = reported(output)
    missing = {w[:4] for w in want} - got
    extra = got - {w[:4] for w in want}
    assert not missing and not extra, \
        f"{case['id']}: missing {sorted(missing)}, unexpected {sorted(extra)}; output:\n{output}"
    for f, line, col, code, fragment in want:
        if fragment:
            lines = [ln for ln in output.split("\n") if f":{line}:{col}: " in ln and f"[{code}]" in ln]
            assert any(fragment in ln for ln in lines), f"{case['id']}: {fragment!r} not in {lines}"
    assert result.exit_code == case.get("exit", 1), f"{case['id']}: exit {result.exit_code}\n{output}"
    if "output" in case:
        assert case["output"] in output, output


def test_corpus_is_big_and_varied():
    assert len(CASES) >= 150
    assert len({c["id"] for c in CASES}) == len(CASES), "case ids must be unique"
    codes = set()
    for case in CASES:
        if "expect" in case:
            codes |= {item.split()[0] for item in case["expect"] or []}
        elif "file" in case:
            codes |= {a[3] for a in annotations(os.path.join(CORPUS, case["file"]))}
    families = {c[:2] for c in codes}
    assert {"E0", "E1", "E2", "E3", "W4", "R0"} <= families, sorted(codes)
    assert sum(1 for c in CASES if c.get("exit", 1) == 2) >= 10


# A few cases as a user runs them: a separate process, the real entry point.
SUBPROCESS_CASES = ["file_binary", "file_not_utf8", "yaml_tab", "syntax_several_declarations",
                    "log_not_json", "save_damaged_state", "cli_unknown_option", "runtime_empty_draw"]


@pytest.mark.parametrize("case_id", SUBPROCESS_CASES)
def test_corpus_case_in_a_process(case_id, tmp_path):
    case = next(c for c in CASES if c["id"] == case_id)
    args, _ = prepare(case, str(tmp_path))
    proc = subprocess.run([sys.executable, "-m", "rulesvm.cli.main", *args], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, input=case.get("stdin"))
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    assert proc.returncode == case.get("exit", 1), proc.stderr


# ---------------------------------------------------------------------- generated inputs

def _huge_yaml(tmp: str) -> str:
    """A game file over 8 MiB (the ceiling of any file; a YAML file's cap is 1 MiB): refused
    before it is parsed (E004)."""
    path = os.path.join(tmp, "huge.yaml")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("id: huge\nname: Huge\nplayers: 2\nrules: huge.rules\ncards:\n")
        line = "  - {id: card_%07d, kind: token}\n"
        for i in range(8 * 1024 * 1024 // (len(line) - 2) + 10):
            fh.write(line % i)
    return path


def _game_file(folder: str, rules: str, game_id: str = "g") -> str:
    """game.yaml in `folder`, naming the rules file `rules`; returns its path."""
    path = os.path.join(folder, "game.yaml")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(f"id: {game_id}\nname: {game_id.title()}\nplayers: 2\nrules: {rules}\ncards: []\n")
    return path


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


def _huge_rules(tmp: str) -> str:
    """A rules file over 8 MiB (a rules file's cap is 128 KiB), named by a small game file (E004)."""
    _write(os.path.join(tmp, "huge.rules"),
           "game { end_game(scores: [0]) }\n" + ("# " + "x" * 1020 + "\n") * (8 * 1024 + 10))
    return _game_file(tmp, "huge.rules", "huge")


def _directory(tmp: str) -> str:
    path = os.path.join(tmp, "a_folder.yaml")
    os.mkdir(path)
    return path


def _rules_directory(tmp: str) -> str:
    os.mkdir(os.path.join(tmp, "rules_dir"))
    return _game_file(tmp, "rules_dir", "d")


def _symlink_outside(tmp: str) -> str:
    """A rules file that is a symbolic link to a file outside the game's folder (E007)."""
    outside = os.path.join(tmp, "outside.rules")
    _write(outside, "game { end_game(scores: [0]) }\n")
    os.mkdir(os.path.join(tmp, "game"))
    os.symlink(outside, os.path.join(tmp, "game", "linked.rules"))
    return _game_file(os.path.join(tmp, "game"), "linked.rules", "s")


def _deep_rules(tmp: str) -> str:
    """An expression of 300 parentheses inside each other (E105 where it passes 200 levels)."""
    expr = "1"
    for _ in range(300):
        expr = f"(1 + {expr})"
    _write(os.path.join(tmp, "deep.rules"),
           f"var total: int = 0\ngame {{\n  total = {expr}\n  end_game(scores: [total])\n}}\n")
    return _game_file(tmp, "deep.rules", "deep")


GENERATORS = {"huge_yaml": _huge_yaml, "huge_rules": _huge_rules, "directory": _directory,
              "rules_directory": _rules_directory, "symlink_outside": _symlink_outside,
              "deep_rules": _deep_rules}


if __name__ == "__main__":   # show what rulesvm reports for a case
    import tempfile
    for case_id in sys.argv[1:]:
        case = next(c for c in CASES if c["id"] == case_id)
        with tempfile.TemporaryDirectory() as tmp:
            os.chdir(tmp)
            args, files = prepare(case, tmp)
            result = CliRunner().invoke(app, args, input=case.get("stdin"))
            print(f"== {case_id}: rulesvm {' '.join(args)} -> exit {result.exit_code}")
            print(result.stdout + result.stderr)
            for r in sorted(reported(result.stdout + result.stderr)):
                print("   ", f"{r[3]} {r[0]}:{r[1]}:{r[2]}")


# ---------------------------------------------------------------------- known bugs (cli/, interpreter/)

def _cli(args, tmp) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rulesvm.cli.main", *args], cwd=tmp, capture_output=True,
                          text=True, timeout=120)


GK = os.path.join(ROOT, "games", "giant_king.yaml")


@pytest.mark.parametrize("where", ["missing/dir/game.jsonl", "."])
def test_log_that_cannot_be_written_is_a_usage_error(tmp_path, where):
    p = _cli(["run", GK, "--seed", "1", "--quiet", "--force", "--log", where], tmp_path)
    assert "Traceback" not in p.stderr and p.returncode == 2, p.stderr[-300:]


def test_save_that_cannot_be_written_is_a_usage_error(tmp_path):
    p = _cli(["run", GK, "--seed", "1", "--quiet", "--save", "missing/dir/g.json", "--save-at", "2"], tmp_path)
    assert "Traceback" not in p.stderr and p.returncode == 2, p.stderr[-300:]


def test_report_that_cannot_be_written_is_a_usage_error(tmp_path):
    p = _cli(["simulate", GK, "-n", "1", "--jobs", "1", "--quiet", "--report", "missing/dir/r.html"], tmp_path)
    assert "Traceback" not in p.stderr and p.returncode == 2, p.stderr[-300:]


def test_negative_max_steps_is_a_usage_error(tmp_path):
    p = _cli(["run", GK, "--seed", "1", "--quiet", "--max-steps", "-5"], tmp_path)
    assert p.returncode == 2, p.stderr[-300:]


def test_every_diagnostic_code_is_documented():
    """docs/errors.md explains every code the sources can report."""
    import glob
    found = set()
    for path in glob.glob(os.path.join(ROOT, "dsl", "*.py")) + glob.glob(os.path.join(ROOT, "interpreter", "*.py")) \
            + glob.glob(os.path.join(ROOT, "rulesvm", "**", "*.py"), recursive=True):
        with open(path, encoding="utf-8") as fh:
            found |= set(re.findall(r'"([EWR]\d{3})"', fh.read()))
    with open(os.path.join(ROOT, "docs", "errors.md"), encoding="utf-8") as fh:
        doc = fh.read()
    missing = sorted(c for c in found if not re.search(rf"\b{c}\b", doc))
    assert not missing, f"codes not in docs/errors.md: {missing}"
