"""A run of many scenario files, as `rulesvm test` makes it: which files (`-k PATTERN`, the
ones that failed last time), and running them one after another or in worker processes
(`-j N`), results in file order either way.

What failed last is remembered in `.rulesvm_cache/last_failed.json` under the folder the
command runs in: a cache (it ignores itself in git, and deleting it only forgets), never
written next to the user's game files.
"""

from __future__ import annotations

import json
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import yaml

from .scenario import ScenarioResult, run_scenario

CACHE_DIR = ".rulesvm_cache"
LAST_FAILED = "last_failed.json"


def matches(path: str, patterns: list[str]) -> bool:
    """`-k`: a pattern is a case-insensitive part of the file's path or of its scenario's
    `name`; with several, any one will do."""
    if not patterns:
        return True
    wanted = [p.lower() for p in patterns]
    if any(p in path.lower() for p in wanted):
        return True
    name = _name_of(path).lower()
    return any(p in name for p in wanted)


def _name_of(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as fh:
            data = yaml.safe_load(fh)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return ""                             # the run reports the file's own problem
    name = data.get("name") if isinstance(data, dict) else None
    return name if isinstance(name, str) else ""


@dataclass
class LastFailed:
    """The files that failed when they last ran (absolute paths), kept between runs."""
    folder: str
    failed: set

    @classmethod
    def load(cls, folder: str) -> "LastFailed":
        try:
            with open(os.path.join(folder, CACHE_DIR, LAST_FAILED), encoding="utf-8") as fh:
                data = json.load(fh)
            failed = {p for p in data.get("failed", []) if isinstance(p, str)}
        except (OSError, ValueError, AttributeError):
            failed = set()                    # no cache yet, or a damaged one: nothing remembered
        return cls(folder, failed)

    def select(self, files: list[str]) -> list[str]:
        return [f for f in files if os.path.abspath(f) in self.failed]

    def record(self, results: list[ScenarioResult]) -> None:
        """Forget the files that passed now, remember the ones that failed; files that did not
        run keep what they had."""
        for r in results:
            path = os.path.abspath(r.path)
            if r.passed:
                self.failed.discard(path)
            else:
                self.failed.add(path)

    def save(self) -> None:
        cache = os.path.join(self.folder, CACHE_DIR)
        try:
            os.makedirs(cache, exist_ok=True)
            ignore = os.path.join(cache, ".gitignore")
            if not os.path.exists(ignore):
                with open(ignore, "w", encoding="utf-8") as fh:
                    fh.write("# written by `rulesvm test`: a cache, safe to delete\n*\n")
            tmp = os.path.join(cache, LAST_FAILED + ".tmp")
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump({"failed": sorted(self.failed)}, fh, indent=1)
            os.replace(tmp, os.path.join(cache, LAST_FAILED))
        except OSError:
            pass                              # a read-only folder: the run itself still counts


def run_all(files: list[str], jobs: int = 1, on_result=None) -> list[ScenarioResult]:
    """Run every file (in `jobs` worker processes when more than one), calling `on_result`
    with each result in file order as soon as it and those before it are done."""
    results = []
    if jobs <= 1 or len(files) <= 1:
        outcomes = map(run_scenario, files)
        for r in outcomes:
            results.append(r)
            if on_result is not None:
                on_result(r)
        return results
    with ProcessPoolExecutor(max_workers=min(jobs, len(files))) as pool:
        for r in pool.map(run_scenario, files):
            results.append(r)
            if on_result is not None:
                on_result(r)
    return results
