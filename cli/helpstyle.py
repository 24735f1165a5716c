"""How the command line presents itself (cli: the terminal front end): the Typer command
classes every `rulesvm` command is built with.

Typer's rich help shows a type beside every option, flags included (`--json <bool>`), as if
a flag took a value. A flag takes none, so these classes show no type for flags (their own,
and `--help`, `--install-completion`, `--show-completion`); every other option keeps its
type or metavar.
"""

from __future__ import annotations

from typer.core import TyperCommand, TyperGroup


def _untyped_flags(params: list) -> list:
    for param in params:
        if getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""          # the help's type column shows the metavar when there is one
    return params


class Command(TyperCommand):
    """A `rulesvm` command whose flags show no type in `--help`."""

    def get_params(self, ctx):
        return _untyped_flags(super().get_params(ctx))


class Group(TyperGroup):
    """The `rulesvm` app itself (its `--version`, `--help` and completion flags untyped too)."""

    def get_params(self, ctx):
        return _untyped_flags(super().get_params(ctx))
