"""Optional dependencies (the extras of pyproject.toml: `plot` for matplotlib, `dask`) and
the command that installs one, as messages give it (analysis: statistics and their outputs).

A checkout of rulesvm installs an extra from its own folder (`pip install -e '.[plot]'`); an
installed rulesvm from the package index (`pip install 'rulesvm[plot]'`). The brackets are
quoted: zsh, macOS's shell, reads an unquoted `[plot]` as a file pattern and refuses it.
"""

from __future__ import annotations

import os

# The repository's folder when rulesvm runs from a checkout (analysis/ is one of its folders).
_HERE = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))


def checkout_folder() -> str | None:
    """The folder of the rulesvm checkout this code runs from, or None for an installed package."""
    try:
        with open(os.path.join(_HERE, "pyproject.toml"), encoding="utf-8") as fh:
            text = fh.read()
    except OSError:
        return None
    return _HERE if 'name = "rulesvm"' in text else None


def install_hint(extra: str) -> str:
    """How to install one of rulesvm's extras here: `pip install -e '.[plot]'` (in the checkout)."""
    folder = checkout_folder()
    if folder is not None:
        return f"pip install -e '.[{extra}]' (in {folder}, your checkout of rulesvm)"
    return f"pip install 'rulesvm[{extra}]'"
