"""Modules a command needs only while it runs, loaded on first use (cli: the terminal front end).

Every `rulesvm` command starts by importing the whole CLI, so what one command alone needs
(the web server for `serve`, the simulator and its progress bar for `simulate`, the
formatter for `fmt`...) would slow every other command's start, and a person waits for that
before the first decision of `rulesvm run --human`. `lazy(name)` returns the module object
at once and runs its code on first attribute access (`importlib.util.LazyLoader`). Each use
also imports the module under `TYPE_CHECKING`, so the import-linter contracts see the
dependency like any other import.
"""

from __future__ import annotations

import importlib.util
import sys


def lazy(name: str):
    """Module `name`, its code run when one of its attributes is first read."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module
