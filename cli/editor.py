"""`rulesvm lsp`: the language server for editors (cli: the terminal front end).

The server itself is `rulesvm.lsp` (pygls); this module only starts it. It is loaded when
the command runs (see lazy.py), so other commands do not pay for importing pygls.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from .lazy import lazy

if TYPE_CHECKING:
    from rulesvm.lsp import server as lsp_server  # noqa: F401

lsp_server = lazy("rulesvm.lsp.server")


def lsp(
    stdio: bool = typer.Option(True, "--stdio", help="Talk over standard input and output (the only way; "
                               "accepted because many editors pass it)."),
) -> None:
    """Run the language server for rules and game YAML files: errors as you type, hover, go to
    definition, references, rename across files, completion, quick fixes, formatting, outline,
    workspace symbols, semantic highlighting. Editors start it; see docs/editors.md."""
    lsp_server.run()
