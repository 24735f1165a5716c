"""`rulesvm`: the command-line interface (Typer). Each command calls the public API in
`rulesvm.api` (or the tools built on it) and hands everything it shows to `cli.render`.

The commands live by job: `cli.play` (run, resume, replay), `cli.checks` (validate, info,
test, diff, schema, fmt), `cli.simulation` (simulate, compare, agents), `cli.tuning` (tune), `cli.serve` (the
web table), `cli.editor` (lsp, the language server); `cli.common` holds what they share.
This module only assembles the app.

Exit codes: 0 success, 1 game or validation errors (including a rules error while
playing), 2 usage errors (bad options or arguments), 130 stopped by Ctrl-C, 143 stopped by
SIGTERM (which every command takes as Ctrl-C: logs are closed with their checksum,
`simulate` summarises the games finished, see cli/simulation.py).
"""

from __future__ import annotations

import signal
import sys
from importlib.metadata import PackageNotFoundError, version

import typer

from .checks import diff, fmt, info, schema, test_scenarios, validate
from .editor import lsp
from .helpstyle import Command, Group
from .play import replay, resume, run
from .serve import serve
from .simulation import agents, compare, simulate
from .tuning import tune

app = typer.Typer(
    name="rulesvm",
    help="Play, check and analyse card and board games written in the rulesvm rules language.",
    no_args_is_help=True,
    cls=Group,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

def _version(value: bool) -> None:
    if value:
        try:
            number = version("rulesvm")
        except PackageNotFoundError:        # run from a checkout that was never installed
            number = "(not installed)"
        typer.echo(f"rulesvm {number}")
        raise typer.Exit()


@app.callback()
def _options(show_version: bool = typer.Option(False, "--version", is_eager=True, callback=_version,
                                               help="Print rulesvm's version and exit.")) -> None:
    """Play, check and analyse card and board games written in the rulesvm rules language."""


# In this order in `rulesvm --help`.
for name, command in (("run", run), ("resume", resume), ("validate", validate), ("info", info), ("replay", replay),
                      ("test", test_scenarios), ("diff", diff), ("simulate", simulate), ("compare", compare),
                      ("tune", tune),
                      ("agents", agents), ("schema", schema), ("fmt", fmt), ("serve", serve), ("lsp", lsp)):
    app.command(name, cls=Command)(command)

def main() -> None:
    stop = {"signal": None}

    def on_sigterm(signum, frame):
        # SIGTERM (kill, a service manager, a CI timeout) stops any command as Ctrl-C does, so
        # what it was writing is finished properly (a log gets its checksum). `simulate` and
        # `serve` put their own handlers in place while they run.
        if stop["signal"] is None:
            stop["signal"] = "SIGTERM"
            raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_sigterm)
    try:
        # The name `rulesvm` however it was started (`python -m rulesvm.cli.main` too): usage
        # lines and shell completion (its _RULESVM_COMPLETE variable) are named after it.
        app(prog_name="rulesvm")
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(143 if stop["signal"] else 130)
    except SystemExit as exc:
        if stop["signal"] and not exc.code:
            sys.exit(143)           # a game stopped at its prompt ends normally, but was killed
        raise


if __name__ == "__main__":
    main()
