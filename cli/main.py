"""`rulesvm`: the command-line interface (Typer). Each command calls the public API in
`rulesvm.api` (or the tools built on it) and hands everything it shows to `cli.render`.

The commands live by job: `cli.play` (run, resume, replay), `cli.checks` (validate, info,
test, diff, schema, fmt), `cli.simulation` (simulate, compare, agents), `cli.serve` (the
web table); `cli.common` holds what they share. This module only assembles the app.

Exit codes: 0 success, 1 game or validation errors (including a rules error while
playing), 2 usage errors (bad options or arguments), 130 stopped by Ctrl-C (143: `simulate`
or `compare` stopped by SIGTERM, see cli/simulation.py).
"""

from __future__ import annotations

import sys

import typer

from .checks import diff, fmt, info, schema, test_scenarios, validate
from .play import replay, resume, run
from .serve import serve
from .simulation import agents, compare, simulate

app = typer.Typer(
    name="rulesvm",
    help="Play, check and analyse card and board games written in the rulesvm rules language.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

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
app.command()(agents)
app.command()(schema)
app.command("fmt")(fmt)
app.command()(serve)


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(130)


if __name__ == "__main__":
    main()
