"""pytest plugin (registered through the `pytest11` entry point): every `*.scenario.yaml`
file that pytest meets becomes a test item, so a designer's folder of scenarios and the
project's own suite run the same way (`pytest games/`)."""

from __future__ import annotations

import pytest

from .scenario import run_scenario


def pytest_collect_file(parent, file_path):
    if file_path.name.endswith(".scenario.yaml"):
        return ScenarioFile.from_parent(parent, path=file_path)
    return None


class ScenarioFile(pytest.File):
    def collect(self):
        yield ScenarioItem.from_parent(self, name=self.path.name.removesuffix(".scenario.yaml"))


class ScenarioFailed(Exception):
    pass


class ScenarioItem(pytest.Item):
    # No fixtures; declared because pytest-lsp's runtest hook returns without yielding (a
    # pluggy error) for an item that lacks it.
    funcargs: dict = {}

    def runtest(self):
        result = run_scenario(str(self.path))
        if not result.passed:
            raise ScenarioFailed(result.message)

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, ScenarioFailed):
            return f"scenario failed: {excinfo.value}"
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, 0, f"scenario: {self.name}"
