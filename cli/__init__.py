"""rulesvm.cli: the command-line interface (Typer)."""
