"""Golden diagnostics: every annotated mistake in tests/diagnostics/ is reported exactly."""

from __future__ import annotations

import os
import re
import shutil
import sys

import pytest

from rulesvm import api

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "diagnostics")
ANNOTATION = re.compile(r"^(?P<pad>\s*#\s*?)(?P<caret>\^+)\s+(?P<code>[EW]\d{3})\s*(?P<msg>.*)$")
WRAPPER = "id: wrapped\nname: Wrapped\nplayers: {min: 1, max: 4}\nrules: case.rules\ncards: []\n"


def cases() -> list[str]:
    out = []
    for name in sorted(os.listdir(HERE)):
        path = os.path.join(HERE, name)
        if name.endswith(".rules") or (os.path.isdir(path) and os.path.exists(os.path.join(path, "game.yaml"))):
            out.append(path)
    return out


def expectations(path: str) -> set:
    """(file basename, line, col, code, message fragment) for every annotation in a case."""
    files = [path] if os.path.isfile(path) else [os.path.join(path, f) for f in os.listdir(path)]
    found = set()
    for f in files:
        if not f.endswith((".rules", ".yaml")):
            continue
        target = "case.rules" if f.endswith(".rules") and os.path.isfile(path) else os.path.basename(f)
        last = 0
        with open(f, encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                m = ANNOTATION.match(line.rstrip("\n"))
                if m:
                    col = line.index("^") + 1
                    if line.startswith("#^"):
                        col = 1     # a caret right after a leading `#` stands for column 1
                    found.add((target, last, col, m.group("code"), m.group("msg").strip()))
                else:
                    last = lineno
    return found


def diagnose(path: str, tmp: str):
    if os.path.isfile(path):
        shutil.copy(path, os.path.join(tmp, "case.rules"))
        with open(os.path.join(tmp, "game.yaml"), "w", encoding="utf-8") as fh:
            fh.write(WRAPPER)
        game = os.path.join(tmp, "game.yaml")
    else:
        game = os.path.join(path, "game.yaml")
    return api.validate_path(game)          # as `rulesvm validate`: each variant the game lists too


@pytest.mark.parametrize("path", cases(), ids=os.path.basename)
def test_golden_diagnostics(path, tmp_path):
    expected = expectations(path)
    assert expected, f"{path} has no annotations"
    actual = diagnose(path, str(tmp_path))
    got = {(os.path.basename(d.span.file), d.span.line, d.span.col, d.code) for d in actual}
    want = {(f, line, col, code) for f, line, col, code, _ in expected}
    missing = want - got
    extra = got - want
    detail = "\n".join(f"  {d.span.line}:{d.span.col} {d.code} {d.message}" for d in actual)
    assert not missing and not extra, f"missing {sorted(missing)}, unexpected {sorted(extra)}; reported:\n{detail}"
    for f, line, col, code, fragment in expected:
        if fragment:
            # A fragment may quote the hint too: `... [hint: in an expression write `else if``.
            messages = [d.message + (f"  [hint: {d.hint}]" if d.hint else "") for d in actual
                        if (os.path.basename(d.span.file), d.span.line, d.span.col, d.code) == (f, line, col, code)]
            assert any(fragment in m for m in messages), f"{code} at {line}:{col}: {fragment!r} not in {messages}"


def test_every_case_reports_a_different_mistake():
    codes = set()
    for path in cases():
        codes |= {code for _, _, _, code, _ in expectations(path)}
    assert len(codes) >= 15, sorted(codes)


if __name__ == "__main__":  # print what rulesvm reports for a case, to write its annotations
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        for d in diagnose(os.path.abspath(sys.argv[1]), tmp):
            print(f"{os.path.basename(d.span.file)}:{d.span.line}:{d.span.col} {d.code} {d.message}"
                  + (f"  [hint: {d.hint}]" if d.hint else ""))
