"""The shape of the code base, checked: one packaging rule, the pipeline's layers, no import
cycles, and imports at module top.

- The packaging rule: every subpackage `rulesvm.X` is a top-level folder `X/` of the
  repository and `rulesvm/X` is a relative symbolic link to it; `rulesvm/` itself holds only
  the public API modules and those links. So a plain checkout, static tools (import-linter)
  and setuptools' package finder all resolve `rulesvm.X` through the file system.
- The layers and the absence of cycles are import-linter contracts in pyproject.toml
  (`[tool.importlinter]`); this runs `lint-imports`.
- An import inside a function hides a dependency from readers and from the layer check's
  reasons; only optional dependencies (imported when a feature that needs them is used)
  may be imported there, each with a comment saying why.
"""

from __future__ import annotations

import ast
import os
import site
import subprocess
import sys
import tomllib

from .conftest import ROOT

# What `rulesvm/` holds besides the links: the public API.
API_MODULES = {"__init__.py", "api.py", "saves.py"}
# Top-level folders that are Python packages but not part of `rulesvm`.
NOT_RULESVM = {"tests", "benchmarks", "rulesvm"}
# Optional dependencies (extras in pyproject.toml): imported inside the function that needs them.
OPTIONAL_MODULES = {"matplotlib", "dask", "playwright", "pyinstrument"}
# Sizes past which a module or a function no longer reads as one job.
MAX_MODULE_LINES = 800
MAX_FUNCTION_LINES = 120


def _package_folders() -> list[str]:
    """The top-level folders that are the subpackages of `rulesvm`."""
    return sorted(name for name in os.listdir(ROOT)
                  if name not in NOT_RULESVM and not name.startswith(".")
                  and os.path.isfile(os.path.join(ROOT, name, "__init__.py")))


def _source_files() -> list[str]:
    """Every Python file of rulesvm, relative to the repository, each once (the links of
    rulesvm/ are not followed: their folders are walked as themselves)."""
    files = [os.path.join("rulesvm", f) for f in sorted(os.listdir(os.path.join(ROOT, "rulesvm")))
             if f.endswith(".py")]
    for folder in _package_folders():
        for base, dirs, names in os.walk(os.path.join(ROOT, folder)):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            files.extend(os.path.relpath(os.path.join(base, n), ROOT) for n in sorted(names) if n.endswith(".py"))
    return files


def test_every_package_folder_is_linked_from_rulesvm():
    folders = _package_folders()
    assert {"dsl", "interpreter", "cli", "analysis", "tooling", "web", "testing"} <= set(folders)
    for name in folders:
        link = os.path.join(ROOT, "rulesvm", name)
        assert os.path.islink(link), f"rulesvm/{name} should be a link to ../{name} (ln -s ../{name} rulesvm/{name})"
        assert os.readlink(link) == f"../{name}", f"rulesvm/{name} should link to ../{name}, a relative path"


def test_rulesvm_holds_only_the_api_and_the_links():
    folders = set(_package_folders())
    for entry in sorted(os.listdir(os.path.join(ROOT, "rulesvm"))):
        path = os.path.join(ROOT, "rulesvm", entry)
        if entry == "__pycache__":
            continue
        if os.path.islink(path):
            assert entry in folders, f"rulesvm/{entry} links to something that is not a top-level package folder"
        else:
            assert entry in API_MODULES, (f"rulesvm/{entry}: rulesvm/ holds only the public API modules "
                                          f"({', '.join(sorted(API_MODULES))}) and links; a subpackage is a "
                                          "top-level folder linked from rulesvm/")


def test_packages_are_found_not_listed():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as fh:
        setuptools = tomllib.load(fh)["tool"]["setuptools"]
    assert "package-dir" not in setuptools
    assert "packages" in setuptools and set(setuptools["packages"]) == {"find"}
    assert setuptools["packages"]["find"]["include"] == ["rulesvm*"]


def test_a_plain_checkout_imports_every_package():
    """Without the installed package (no site.py, so no editable-install finder): the
    repository folder alone resolves every subpackage through the links."""
    names = ["rulesvm.api", "rulesvm.saves"] + [f"rulesvm.{name}" for name in _package_folders()]
    code = ("import importlib, sys\n"
            f"sys.path[:0] = [{ROOT!r}] + {site.getsitepackages()!r}\n"
            f"for name in {names!r}:\n"
            "    print(importlib.import_module(name).__file__)\n")
    proc = subprocess.run([sys.executable, "-S", "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    for name, path in zip(names, proc.stdout.split()):
        assert path.startswith(os.path.join(ROOT, "rulesvm") + os.sep), f"{name} came from {path}"


def test_import_contracts():
    """The layers and no-cycles contracts of pyproject.toml's [tool.importlinter]."""
    lint_imports = os.path.join(os.path.dirname(sys.executable), "lint-imports")
    proc = subprocess.run([lint_imports, "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _imports_inside_functions(tree: ast.AST):
    def visit(node, in_function: bool):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)) and in_function:
                yield child
            yield from visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                      ast.Lambda)))
    yield from visit(tree, False)


def test_imports_are_at_module_top():
    problems = []
    for rel in _source_files():
        with open(os.path.join(ROOT, rel), encoding="utf-8") as fh:
            text = fh.read()
        lines = text.splitlines()
        for node in _imports_inside_functions(ast.parse(text, rel)):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or "."]
            where = f"{rel}:{node.lineno}: {lines[node.lineno - 1].strip()}"
            if getattr(node, "level", 0) or any(m.split(".")[0] not in OPTIONAL_MODULES for m in modules):
                problems.append(f"{where}  (move it to the module's top)")
            elif not any("#" in line for line in lines[max(0, node.lineno - 4):node.lineno]):
                problems.append(f"{where}  (say in a comment why this optional dependency is imported here)")
    assert not problems, "imports inside functions:\n" + "\n".join(problems)


def test_modules_and_functions_stay_small():
    problems = []
    for rel in _source_files():
        with open(os.path.join(ROOT, rel), encoding="utf-8") as fh:
            text = fh.read()
        if text.count("\n") > MAX_MODULE_LINES:
            problems.append(f"{rel}: {text.count(chr(10))} lines (split it by job: at most {MAX_MODULE_LINES})")
        for node in ast.walk(ast.parse(text, rel)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                size = node.end_lineno - node.lineno + 1
                if size > MAX_FUNCTION_LINES:
                    problems.append(f"{rel}:{node.lineno}: function `{node.name}` has {size} lines "
                                    f"(at most {MAX_FUNCTION_LINES})")
    assert not problems, "\n".join(problems)


def test_every_module_is_named_in_the_architecture_page():
    with open(os.path.join(ROOT, "docs", "architecture.md"), encoding="utf-8") as fh:
        page = fh.read()
    missing = [rel for rel in _source_files()
               if not rel.endswith("__init__.py") and f"`{rel.replace(os.sep, '/')}`" not in page]
    assert not missing, ("docs/architecture.md does not name these modules (a row in the table of their "
                         "package, as `path/module.py`): " + ", ".join(missing))
