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
from .play import replay, resume, run
from .serve import serve
from .simulation import agents, compare, simulate
from .tuning import tune

app = typer.Typer(
    name="rulesvm",
    help="Play, check and analyse card and board games written in the rulesvm rules language.",
    no_args_is_help=True,
    add_completion=False,
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
app.command()(run)
app.command()(resume)
app.command()(validate)
app.command()(info)
app.command()(replay)
app.command("test")(test_scenarios)
app.command()(diff)
app.command()(simulate)
app.command()(compare)
app.command()(tune)
app.command()(agents)
app.command()(schema)
app.command("fmt")(fmt)
app.command()(serve)
app.command()(lsp)


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
        app()
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(143 if stop["signal"] else 130)
    except SystemExit as exc:
        if stop["signal"] and not exc.code:
            sys.exit(143)           # a game stopped at its prompt ends normally, but was killed
        raise


if __name__ == "__main__":
    main()
