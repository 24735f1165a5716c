"""Shared fixtures: the project root and the launch games, loaded once per test session."""

from __future__ import annotations

import compileall
import glob
import os
import signal

import pytest

from rulesvm import api

# tests/scenarios and tests/corpus hold deliberately failing scenarios and broken files, run
# by test_scenarios.py and test_corpus.py themselves.
collect_ignore_glob = ["scenarios/*", "corpus/*"]

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GAMES_DIR = os.path.join(ROOT, "games")


def pytest_sessionstart(session) -> None:
    """Byte-compile rulesvm once, before the tests start (the controller only). Hundreds of
    tests run the command line in a fresh process; an editable install has no compiled
    modules, and where PYTHONDONTWRITEBYTECODE is set (as on the CI machine) each of those
    processes would compile every module it imports again: a quarter of their time."""
    if hasattr(session.config, "workerinput"):
        return
    package = os.path.join(ROOT, "rulesvm")
    compileall.compile_dir(package, maxlevels=0, quiet=2)
    for name in sorted(os.listdir(package)):
        part = os.path.join(package, name)
        if os.path.isdir(part) and name != "__pycache__":
            # The parts are links to the top-level folders, which compile_dir does not follow.
            compileall.compile_dir(os.path.realpath(part), quiet=2)


def pytest_collection_modifyitems(items) -> None:
    """Tests marked `slow` run first: on two cores (pytest-xdist hands tests out in this
    order) the longest start at once instead of holding one core alone at the end."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def ctrl_c_as_at_a_terminal() -> None:
    """For a child process a test sends Ctrl-C (`preexec_fn`): SIGINT's default action,
    whatever this runner inherited. A shell starts a command put in the background (`&`)
    with SIGINT ignored, and an ignored signal stays ignored across exec, so the child would
    never see the Ctrl-C."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def game_files() -> list[str]:
    """Every game entry file under games/ (a YAML file with a `rules:` key)."""
    out = []
    for path in sorted(glob.glob(os.path.join(GAMES_DIR, "**", "*.yaml"), recursive=True)):
        if path.endswith(".scenario.yaml"):
            continue
        with open(path, encoding="utf-8") as fh:
            head = "\n" + fh.read()
        if "\nrules:" in head and "\nvariant:" not in head:
            out.append(path)
    return out


_CACHE: dict = {}


def load(path: str, **kw) -> api.Game:
    key = (path, tuple(sorted(kw.items())))
    if key not in _CACHE:
        _CACHE[key] = api.load_game(path, **kw)
    return _CACHE[key]


@pytest.fixture(scope="session")
def giant_king() -> api.Game:
    return load(os.path.join(GAMES_DIR, "giant_king.yaml"))
