"""Paths typed on the command line: one style for every command when a file is missing or a
folder was given where a file was meant. Both are usage errors (exit 2) whose hint names the
files the user may have meant (`rulesvm run my_game`: did you mean games/my_game.yaml?).
"""

from __future__ import annotations

import difflib
import os

import typer

from .render import Screen

# Folders never searched for a did-you-mean: tools' own, not the user's.
SKIPPED = {".git", ".venv", "node_modules", "__pycache__", ".rulesvm_cache", ".pytest_cache", "site"}
SEARCH_DEPTH = 4            # the working folder and three levels below (games/x/scenarios/)
MAX_LISTED = 12
GAME_EXTS = (".yaml", ".yml")


def require_file(screen: Screen, path: str, what: str = "game", exts: tuple = GAME_EXTS) -> None:
    """Stop with a usage error unless `path` is an existing file (`what` names the kind of
    file expected: "game", "log", "save", "scenario")."""
    if os.path.isdir(path):
        folder_given(screen, path, what, exts)
    if not os.path.exists(path):
        missing(screen, path, what, exts)


def require_path(screen: Screen, path: str, what: str, exts: tuple) -> None:
    """Stop with a usage error unless `path` exists (a file or a folder to search)."""
    if not os.path.exists(path):
        missing(screen, path, what, exts, folders=True)


def missing(screen: Screen, path: str, what: str, exts: tuple, folders: bool = False) -> None:
    guess = did_you_mean(path, exts)
    hint = f"did you mean {guess}?" if guess else EXAMPLES.get(what, f"give the path of a {what} file")
    _usage(screen, "no such file" + (" or folder" if folders else "") + f": {path}", hint)


def folder_given(screen: Screen, path: str, what: str, exts: tuple) -> None:
    found = files_in(path, exts)
    listed = ", ".join(found[:MAX_LISTED]) + (f" (and {len(found) - MAX_LISTED} more)" if len(found) > MAX_LISTED else "")
    _usage(screen, f"{path} is a folder: give a{'n' if what[0] in 'aeiou' else ''} {what}'s {_kind(exts)} file",
           f"in it: {listed}" if found else f"it holds no {_kind(exts)} file")


EXAMPLES = {"game": "give the path of a game's YAML file, e.g. games/my_game.yaml",
            "log": "give a log written by `rulesvm run --log FILE`",
            "save": "give a save written by `rulesvm run --save FILE`",
            "scenario": "give a scenario file (*.scenario.yaml) or a folder of them",
            "rules": "give a rules file (*.rules) or a folder of them"}


KINDS = {".yaml": "YAML", ".scenario.yaml": "scenario", ".json": "JSON", ".jsonl": "JSON Lines", ".rules": "rules"}


def _kind(exts: tuple) -> str:
    return KINDS.get(exts[0], exts[0])


def _usage(screen: Screen, message: str, hint: str) -> None:
    screen.error(message, hint)
    raise typer.Exit(2)


def files_in(folder: str, exts: tuple) -> list[str]:
    """The files of one folder (not below it) with one of the extensions, as paths to type."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [os.path.join(folder, n) for n in names if _wanted(n, exts) and os.path.isfile(os.path.join(folder, n))]


def _wanted(name: str, exts: tuple) -> bool:
    """A file of the kind asked for (a game's YAML file is not a scenario's)."""
    return name.endswith(exts) and (".scenario.yaml" in exts or not name.endswith(".scenario.yaml"))


def did_you_mean(path: str, exts: tuple) -> str | None:
    """The existing file the user most likely meant: the path with an extension added, or a
    file of that name (or a close one) in the working folder or a folder below it."""
    for ext in exts:
        if os.path.isfile(path + ext):
            return path + ext
    stem = os.path.basename(path.rstrip("/\\"))
    for ext in exts:
        stem = stem[:-len(ext)] if stem.endswith(ext) else stem
    if not stem:
        return None
    candidates = {}
    for found in _search(".", exts):
        candidates.setdefault(_stem(found, exts), []).append(found)
    if stem in candidates:
        return _shortest(candidates[stem])
    close = difflib.get_close_matches(stem, list(candidates), n=1, cutoff=0.75)
    return _shortest(candidates[close[0]]) if close else None


def _stem(path: str, exts: tuple) -> str:
    name = os.path.basename(path)
    for ext in exts:
        if name.endswith(ext):
            return name[:-len(ext)]
    return name


def _shortest(paths: list[str]) -> str:
    return min(paths, key=lambda p: (p.count(os.sep), p))


def _search(root: str, exts: tuple):
    for folder, dirs, names in os.walk(root):
        depth = 0 if folder == root else os.path.relpath(folder, root).count(os.sep) + 1
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED and not d.startswith(".")) if depth < SEARCH_DEPTH - 1 else []
        for n in sorted(names):
            if _wanted(n, exts):
                yield os.path.relpath(os.path.join(folder, n), root)
