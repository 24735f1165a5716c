"""Commands over many games with bots: `simulate`, `compare` (variants against the base
game, same seeds) and `agents` (the bots there are). The numbers come from
`rulesvm.analysis`; this module reads the options, shows progress and writes the files.
"""

from __future__ import annotations

import contextlib
import csv as csvmod
import os
import signal
import time
from typing import TYPE_CHECKING, List, Optional

import typer

from rulesvm.dsl.diagnostics import DiagnosticError
from rulesvm.interpreter.agents import AgentSpecError, registered_agents

from .common import CARD_SET_OPT, checked_agents, GAME_ARG, SET_OPT, VARIANT_OPT, check_writable, usage
from .lazy import lazy
from .paths import require_file
from .render import Screen

if TYPE_CHECKING:
    from rich import progress  # noqa: F401
    from rulesvm.analysis import plots, report as rep, simulate as sim  # noqa: F401

# What only `simulate` and `compare` need (see lazy.py).
progress = lazy("rich.progress")
rep = lazy("rulesvm.analysis.report")
plots = lazy("rulesvm.analysis.plots")
sim = lazy("rulesvm.analysis.simulate")


def _sim_config(screen, game, n, players, agents_text, variant, set_, seed, card_set, max_steps,
                max_decisions: int = 100_000, game_timeout: float = 60.0, standings: str = "round"):
    if standings not in ("round", "turn", "decision"):
        usage(screen, f"--standings must be `round`, `turn` or `decision`, not `{standings}`")
    if game_timeout <= 0:
        usage(screen, f"--game-timeout must be more than 0 seconds, not {game_timeout:g}")
    if n < 1:
        usage(screen, f"-n must be at least 1, not {n}")
    if max_decisions < 1:
        usage(screen, f"--max-decisions must be at least 1, not {max_decisions}")
    require_file(screen, game)
    agents_list = checked_agents(screen, agents_text)
    return sim.SimConfig(game=game, n=n, players=players, agents=agents_list, seed=seed, variants=tuple(variant or ()),
                     card_sets=tuple(card_set or ()), set_pairs=tuple(set_ or ()), max_steps=max_steps,
                     max_decisions=max_decisions, game_timeout=game_timeout, standings=standings)


def _run_simulation(screen, config, jobs, backend, scheduler, quiet, label=""):
    bar = progress.Progress(progress.TextColumn(f"[bold]{label or 'simulating'}"), progress.BarColumn(),
                           progress.MofNCompleteColumn(), progress.TextColumn("{task.fields[rate]} games/s"),
                           progress.TimeRemainingColumn(), console=screen.err, transient=True,
                           # Only at a terminal: redirected, a bar would leave blank lines in the file.
                           disable=quiet or not screen.err.is_terminal)
    started = [None]
    with bar:
        task = bar.add_task("games", total=config.n, rate="-")

        def on_progress(done, total):
            if started[0] is None:
                started[0] = time.perf_counter()
            elapsed = max(time.perf_counter() - started[0], 1e-9)
            bar.update(task, completed=done, rate=f"{done / elapsed:.0f}")
        try:
            return sim.simulate(config, jobs=jobs, backend=backend, scheduler=scheduler, progress=on_progress)
        except DiagnosticError as exc:
            screen.diagnostics(exc.diagnostics)
            raise typer.Exit(1)
        except AgentSpecError as exc:
            usage(screen, str(exc))
        except ValueError as exc:
            usage(screen, str(exc))


SIM_GAME_TIMEOUT = typer.Option(60.0, "--game-timeout", metavar="SECONDS",
                                help="A game still running after this many seconds has failed (listed with its "
                                     "seed; checked between decisions).")
SIM_N = typer.Option(100, "-n", "--games", help="Number of games.")
SIM_STANDINGS = typer.Option("round", "--standings", metavar="round|turn|decision",
                             help="When the design metrics read the game's `evaluate`: after every round of turns "
                                  "(one per player; default), every turn, or every decision (slowest: an "
                                  "evaluation per player per decision).")
SIM_AGENTS = typer.Option(None, "--agents", help="Agents, comma separated, given to the seats in order and cycled; "
                          "different agents rotate over the seats game by game "
                          "(e.g. mcts:iterations=200,random). Default: random.", metavar="LIST")
SIM_JOBS = typer.Option(None, "--jobs", "-j", min=1, help="Worker processes (default: all cores). Results do not depend on it.")
SIM_BACKEND = typer.Option("local", "--backend", help="`local` processes, or `dask` (the dask extra: "
                           "pip install 'rulesvm\\[dask]', or pip install -e '.\\[dask]' in a checkout).")
SIM_SCHEDULER = typer.Option(None, "--scheduler", help="With --backend dask: the address of a running scheduler "
                             "(tcp://host:8786), tried for as long as Dask's connect timeout says (30 s by default; "
                             "docs/scaling.md); without it a temporary local cluster is started.", metavar="ADDRESS")


def simulate(
    game: str = GAME_ARG,
    n: int = SIM_N,
    players: Optional[int] = typer.Option(None, "--players", "-p", help="Number of players."),
    agents_text: Optional[str] = SIM_AGENTS,
    variant: Optional[List[str]] = VARIANT_OPT,
    set_: Optional[List[str]] = SET_OPT,
    seed: int = typer.Option(0, "--seed", "-s", help="Seed of the whole simulation; game i uses a seed derived from it."),
    jobs: Optional[int] = SIM_JOBS,
    backend: str = SIM_BACKEND,
    scheduler: Optional[str] = SIM_SCHEDULER,
    card_set: Optional[List[str]] = CARD_SET_OPT,
    max_steps: Optional[int] = typer.Option(None, "--max-steps", min=1, help="Step limit for a rule without decisions."),
    max_decisions: int = typer.Option(100_000, "--max-decisions", help="Stop a game after this many decisions and "
                                      "count it as unfinished (bots that never end a game)."),
    game_timeout: float = SIM_GAME_TIMEOUT,
    standings: str = SIM_STANDINGS,
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
    csv: Optional[str] = typer.Option(None, "--csv", help="Write the summary's tables as CSV to FILE.", metavar="FILE"),
    plot: Optional[str] = typer.Option(None, "--plot", help="Write a PNG with the win rates by agent (95% intervals), "
                                       "the game length, the winner's margin and the cards' win rates and use "
                                       "(needs matplotlib).", metavar="FILE.png"),
    report: Optional[str] = typer.Option(None, "--report", help="Write a self-contained HTML page: the plots, "
                                         "each explained, and every table, sortable.", metavar="FILE.html"),
    force: bool = typer.Option(False, "--force", help="Overwrite existing output files."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
) -> None:
    """Play many games with bots and report win rates, lengths, coverage, card use and design metrics.

    Ctrl-C or SIGTERM stops early: the workers are stopped and the games finished so far are
    summarised, then the exit code is 130 (Ctrl-C) or 143 (SIGTERM). Exit 1 when any game
    failed (a runtime error, unfinished at --max-decisions, past --game-timeout): the summary
    of the others is printed, and each failed game is listed with its seed.
    """
    screen = Screen(quiet=quiet)
    for path, what in ((csv, "CSV"), (plot, "plot"), (report, "report")):
        check_writable(screen, path, force, what)
    if backend not in ("local", "dask"):
        usage(screen, f"--backend must be `local` or `dask`, not `{backend}`")
    if scheduler and backend != "dask":
        usage(screen, "--scheduler goes with --backend dask")
    config = _sim_config(screen, game, n, players, agents_text, variant, set_, seed, card_set, max_steps,
                         max_decisions, game_timeout, standings)
    with _sigterm_as_interrupt(screen) as stop:
        summary = _run_simulation(screen, config, jobs or os.cpu_count() or 1, backend, scheduler, quiet or as_json)
        _write_outputs(screen, summary, csv, plot, report)
        if as_json:
            screen.json(summary)
        else:
            screen.simulation(summary)
        if summary["interrupted"]:
            screen.note(f"interrupted: {summary['games']} of {summary['requested']} games summarised")
    _exit_if_failed(stop, summary)


# The exit code of a simulation stopped early, after its partial summary: 128 + the signal's
# number, as a shell reports a command the signal ended (and as `main` does for any Ctrl-C).
EXIT_INTERRUPTED = {"SIGINT": 130, "SIGTERM": 143}


@contextlib.contextmanager
def _sigterm_as_interrupt(screen):
    """SIGTERM (kill, a service manager, a CI timeout) stops a simulation as Ctrl-C does: an
    interrupt in the main thread, so the workers are stopped and the finished games
    summarised. Yields a dict whose "signal" names the signal that stopped it, if any; a
    second SIGTERM while the summary is written is ignored. An interrupt before there is
    anything to summarise (while the game loads) exits at once, with the same code."""
    stop = {"signal": None}

    def on_sigterm(signum, frame):
        if stop["signal"] is None:
            stop["signal"] = "SIGTERM"
            raise KeyboardInterrupt
    previous = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        yield stop
    except KeyboardInterrupt:
        screen.note("interrupted")
        raise typer.Exit(EXIT_INTERRUPTED[stop["signal"] or "SIGINT"]) from None
    finally:
        signal.signal(signal.SIGTERM, previous)


def _exit_if_failed(stop: dict, *summaries) -> None:
    """Exit 130/143 when stopped early (see EXIT_INTERRUPTED), else 1 when a game failed: a
    script (or CI) must not take partial or broken figures for sound ones."""
    if any(s["interrupted"] for s in summaries):
        raise typer.Exit(EXIT_INTERRUPTED[stop["signal"] or "SIGINT"])
    if any(s["errors"] for s in summaries):
        raise typer.Exit(1)


def _write_outputs(screen, summary, csv, plot, report) -> None:
    if plot:
        try:
            png = plots.plot_png(summary)
        except plots.PlotsUnavailable as exc:
            usage(screen, str(exc))
        with open(plot, "wb") as fh:
            fh.write(png)
    if report:
        figures, missing = [], None
        try:
            figures = plots.panel_pngs(summary)
        except plots.PlotsUnavailable as exc:
            # The report is still written, with every table; it and stderr say why it has no plots.
            missing = str(exc)
            screen.error(f"the report {report} has no plots: {missing}")
        with open(report, "w", encoding="utf-8") as fh:
            fh.write(rep.html_report(summary, figures, missing))
    if csv:
        with open(csv, "w", newline="", encoding="utf-8") as fh:
            w = csvmod.writer(fh)
            for name, head, rows in rep.summary_tables(summary):
                w.writerow([name])
                w.writerow(head)
                w.writerows(rows)
                w.writerow([])


def compare(
    game: str = GAME_ARG,
    variant: List[str] = typer.Option(..., "--variant", help="A variant to compare with the base game "
                                      "(repeatable: each is compared on its own).", metavar="NAME|FILE"),
    n: int = SIM_N,
    players: Optional[int] = typer.Option(None, "--players", "-p", help="Number of players."),
    agents_text: Optional[str] = SIM_AGENTS,
    set_: Optional[List[str]] = SET_OPT,
    seed: int = typer.Option(0, "--seed", "-s", help="Seed; the base and every variant play the same seeds."),
    jobs: Optional[int] = SIM_JOBS,
    backend: str = SIM_BACKEND,
    scheduler: Optional[str] = SIM_SCHEDULER,
    as_json: bool = typer.Option(False, "--json", help="Print the comparison as JSON."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
    game_timeout: float = SIM_GAME_TIMEOUT,
    standings: str = SIM_STANDINGS,
) -> None:
    """Simulate the base game and each variant with the same seeds; show the differences and their significance.

    Exit 1 when any game of any side failed (the comparison is printed all the same). Ctrl-C
    or SIGTERM stops early: what was played so far is compared (or, during the base game,
    summarised), then the exit code is 130 (Ctrl-C) or 143 (SIGTERM).
    """
    screen = Screen(quiet=quiet)
    base_cfg = _sim_config(screen, game, n, players, agents_text, [], set_, seed, [], None, game_timeout=game_timeout,
                           standings=standings)
    configs = [_sim_config(screen, game, n, players, agents_text, [v], set_, seed, [], None, game_timeout=game_timeout,
                           standings=standings) for v in variant]
    jobs = jobs or os.cpu_count() or 1
    with _sigterm_as_interrupt(screen) as stop:
        base = _run_simulation(screen, base_cfg, jobs, backend, scheduler, quiet or as_json, "base game")
        others = []
        for v, cfg in zip(variant, configs):
            if base["interrupted"] or (others and others[-1]["interrupted"]):
                break
            others.append(_run_simulation(screen, cfg, jobs, backend, scheduler, quiet or as_json, v))
        data = dict(rep.compare(base, others), interrupted=any(s["interrupted"] for s in (base, *others)))
        if as_json:
            screen.json(data)
        elif base["interrupted"]:
            screen.simulation(base)
        else:
            screen.comparison(data)
        if data["interrupted"]:
            last = others[-1] if others else base
            where = ", ".join(last["variants"]) if others else "the base game"
            skipped = f"; not compared: {', '.join(variant[len(others):])}" if len(others) < len(variant) else ""
            screen.note(f"interrupted during {where}: {last['games']} of {last['requested']} games summarised{skipped}")
    _exit_if_failed(stop, base, *others)


def agents() -> None:
    """List the agents (bots) that can play a seat."""
    screen = Screen()
    for name, (doc, params) in sorted(registered_agents().items()):
        screen.out.print(f"{name}: {doc}")
        for key, (kind, pdoc) in sorted(params.items()):
            screen.out.print(f"    {key} ({kind.__name__}): {pdoc}")
