"""`rulesvm tune`: search a game's options and card fields for the values that meet the
designer's targets. The search is `rulesvm.analysis.tune`; this module reads the options,
shows progress with the current best, and writes the variant, the plot and the JSON.
"""

from __future__ import annotations

import os
import shlex
import time
from typing import TYPE_CHECKING, List, Optional

import typer

from rulesvm.dsl.diagnostics import DiagnosticError
from rulesvm.interpreter.agents import AgentSpecError

from .common import GAME_ARG, checked_agents, SET_OPT, check_writable, load, usage
from .lazy import lazy
from .render import Screen
from .simulation import SIM_AGENTS, SIM_BACKEND, SIM_GAME_TIMEOUT, SIM_JOBS, SIM_SCHEDULER, _sigterm_as_interrupt

if TYPE_CHECKING:
    from rich import progress  # noqa: F401
    from rulesvm.analysis import report as rep, simulate as sim, tune as tn  # noqa: F401

# What only `tune` needs (see lazy.py).
progress = lazy("rich.progress")
rep = lazy("rulesvm.analysis.report")
sim = lazy("rulesvm.analysis.simulate")
tn = lazy("rulesvm.analysis.tune")


def tune(
    game: str = GAME_ARG,
    param: List[str] = typer.Option(..., "--param", metavar="NAME=RANGE",
                                    help="A parameter and its values (repeatable): an option `option.laps=1..4` "
                                         "(or `laps=1..4`), a card field `card.ID.FIELD=6..9` (every card of a kind or "
                                         "with a field's value: `card[kind=knight].number=3..5`), a variable's initial value "
                                         "`var.NAME=0..3`; a range LOW..HIGH, "
                                         "LOW..HIGH:STEP (reals: 0.5..1.5:0.25) or a list A,B,C."),
    target: List[str] = typer.Option(..., "--target", metavar="METRIC[OP VALUE][@WEIGHT]",
                                     help="A target (repeatable): first_player, seats, seat.N, agent.SPEC, "
                                          "draw_rate, outcome.NAME, card.ID (a card's win rate), decisions, turns, "
                                          "design.NAME; `=balanced` (or nothing), `=V`, `<=V`, `>=V`; `@W` weighs it."),
    players: Optional[int] = typer.Option(None, "--players", "-p", help="Number of players."),
    agents_text: Optional[str] = SIM_AGENTS,
    set_: Optional[List[str]] = SET_OPT,
    seed: int = typer.Option(0, "--seed", "-s", help="Seed: the same seed gives the same search; every candidate "
                             "plays the same game seeds."),
    games: int = typer.Option(100, "--games", "-n", help="Games of every candidate in the first stage; survivors "
                              "play as many new games again at each stage."),
    max_games: int = typer.Option(3200, "--max-games", help="Games of a candidate at most (the last stage)."),
    tolerance: float = typer.Option(0.0, "--tolerance", help="Stop once the best candidate's loss is at most this "
                                    "with 95% confidence (e.g. 0.02 with first_player=balanced: within 2 points)."),
    keep: int = typer.Option(8, "--keep", help="More candidates than this left after a stage are halved."),
    max_candidates: int = typer.Option(64, "--candidates", help="A larger grid is sampled down to this many "
                                       "candidates (seeded)."),
    jobs: Optional[int] = SIM_JOBS,
    backend: str = SIM_BACKEND,
    scheduler: Optional[str] = SIM_SCHEDULER,
    game_timeout: float = SIM_GAME_TIMEOUT,
    write_variant: Optional[str] = typer.Option(None, "--write-variant", metavar="FILE.yaml",
                                                help="Write the best candidate as a variant file."),
    confirm: bool = typer.Option(False, "--confirm", help="Then compare the written variant with the base game on "
                                 "fresh seeds (needs --write-variant)."),
    plot: Optional[str] = typer.Option(None, "--plot", metavar="FILE.png",
                                       help="Draw the metrics and the loss against one parameter (a heat map for two)."),
    as_json: bool = typer.Option(False, "--json", help="Print the search as JSON."),
    force: bool = typer.Option(False, "--force", help="Overwrite existing output files."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
) -> None:
    """Search options, card fields and variables for the values that meet targets (balance, length, win rates).

    Every candidate plays the same game seeds; candidates clearly worse than the best (95%
    intervals) are dropped after each stage and the rest play more games, until one is left,
    the best meets the targets within --tolerance, or --max-games. Exit 1 when a game failed.
    """
    screen = Screen(quiet=quiet)
    for path, what in ((write_variant, "variant"), (plot, "plot")):
        check_writable(screen, path, force, what)
    if confirm and not write_variant:
        usage(screen, "--confirm compares the written variant: give --write-variant FILE.yaml too")
    if backend not in ("local", "dask"):
        usage(screen, f"--backend must be `local` or `dask`, not `{backend}`")
    for value, name in ((games, "--games"), (max_games, "--max-games"), (keep, "--keep"),
                        (max_candidates, "--candidates")):
        if value < 1:
            usage(screen, f"{name} must be at least 1, not {value}")
    if max_games < games:
        usage(screen, f"--max-games ({max_games}) must be at least --games ({games})")
    if tolerance < 0 or game_timeout <= 0:
        usage(screen, "--tolerance must be 0 or more and --game-timeout more than 0")
    base = load(screen, game, [], [], set_ or [])
    lo, hi, default = base.model.players
    n_players = players or default
    if not lo <= n_players <= hi:
        usage(screen, f"{base.name} is for {lo} to {hi} players, not {n_players}")
    agents_list = checked_agents(screen, agents_text)
    try:
        params = tuple(tn.parse_param(p, base) for p in param)
        targets = tuple(tn.parse_target(t, base, n_players) for t in target)
    except tn.TuneError as exc:
        usage(screen, str(exc), "see `rulesvm tune --help` and docs/tune.md")
    if plot and len(params) > 2:
        usage(screen, f"--plot draws one or two parameters, not {len(params)}")
    fixed = {pair.partition("=")[0].strip() for pair in set_ or ()}
    labels = [p.label for p in params]
    for p in params:
        if p.kind == "option" and p.name in fixed:
            usage(screen, f"--param {p.text}: option `{p.name}` is also fixed by --set; keep one of them")
        if labels.count(p.label) > 1:
            usage(screen, f"--param {p.text}: `{p.label}` is given twice")
    spec = tn.TuneSpec(game=game, params=params, targets=targets, players=n_players, agents=agents_list,
                       set_pairs=tuple(set_ or ()), seed=seed, first_games=games, max_games=max_games, keep=keep,
                       max_candidates=max_candidates, tolerance=tolerance, game_timeout=game_timeout)
    jobs = jobs or os.cpu_count() or 1
    with _sigterm_as_interrupt(screen) as stop:
        result = _search(screen, spec, jobs, backend, scheduler, quiet or as_json)
        _outputs(screen, spec, result, write_variant, plot, confirm, as_json, (jobs, backend, scheduler, quiet))
    failed = sum(c["failed_games"] for c in result["candidates"])
    if stop["signal"]:
        raise typer.Exit(143)
    if failed:
        screen.note(f"{failed} game(s) failed; run `rulesvm simulate` on the candidate to see them")
        raise typer.Exit(1)


def _outputs(screen, spec, result: dict, write_variant, plot, confirm: bool, as_json: bool, run: tuple) -> None:
    """The variant file, the plot, the confirming comparison and the report."""
    jobs, backend, scheduler, quiet = run
    game = spec.game
    params = spec.params
    command = None
    if write_variant:
        best = result["best"]["values"]
        tn.write_variant(write_variant, params, tuple(best.values()), game,
                         "Found by rulesvm tune: " + ", ".join(f"{k}={v}" for k, v in best.items()))
        result["variant_file"] = write_variant
        command = _compare_command(spec, game, write_variant, max(result["games_per_finalist"], 1000))
        result["confirm_command"] = command
    if plot:
        try:
            png = tn.plot_png(result)
        except ValueError as exc:
            usage(screen, str(exc))
        with open(plot, "wb") as fh:
            fh.write(png)
    comparison = None
    if confirm:
        comparison = _confirm(screen, spec, write_variant, max(result["games_per_finalist"], 1000), jobs, backend,
                              scheduler, quiet or as_json)
        result["confirm"] = comparison
    if as_json:
        screen.json(result)
    else:
        screen.tuning(result)
        if comparison is not None:
            screen.comparison(comparison)
        elif command:
            screen.note(f"confirm on fresh seeds: {command}")


def _search(screen, spec, jobs, backend, scheduler, quiet):
    bar = progress.Progress(progress.TextColumn("[bold]tuning"), progress.BarColumn(), progress.MofNCompleteColumn(),
                            progress.TextColumn("stage {task.fields[stage]}  best: {task.fields[best]}"),
                            progress.TimeElapsedColumn(), console=screen.err, disable=quiet, transient=True)
    stage = [1]
    with bar:
        task = bar.add_task("games", total=None, stage=1, best="-")
        last = [0.0]

        def on_progress(done, total, best):
            now = time.perf_counter()
            if now - last[0] > 0.1:
                last[0] = now
                bar.update(task, completed=done, total=total, best=best, stage=stage[0])

        def on_stage(k, played, left):
            stage[0] = k + 1
        try:
            return tn.tune(spec, jobs=jobs, backend=backend, scheduler=scheduler, on_stage=on_stage,
                           on_progress=on_progress)
        except DiagnosticError as exc:
            screen.diagnostics(exc.diagnostics)
            screen.note("a candidate's variant does not load: check the parameters' values against the game")
            raise typer.Exit(1)
        except (AgentSpecError, ValueError) as exc:
            usage(screen, str(exc))


def _compare_command(spec, game: str, variant: str, n: int) -> str:
    words = ["rulesvm", "compare", game, "--variant", variant, "-n", str(n), "--seed", str(spec.seed + 1),
             "--players", str(spec.players), "--agents", ",".join(spec.agents)]
    for pair in spec.set_pairs:
        words += ["--set", pair]
    return " ".join(shlex.quote(w) for w in words)


def _confirm(screen, spec, variant: str, n: int, jobs, backend, scheduler, quiet) -> dict:
    """`compare` of the written variant against the base game on fresh seeds."""
    base_cfg, var_cfg = tn.confirm_spec(spec, variant, n)
    summaries = []
    for cfg, label in ((base_cfg, "base game"), (var_cfg, "variant")):
        bar = progress.Progress(progress.TextColumn(f"[bold]confirming: {label}"), progress.BarColumn(),
                                progress.MofNCompleteColumn(), console=screen.err, disable=quiet, transient=True)
        with bar:
            task = bar.add_task("games", total=cfg.n)
            summaries.append(sim.simulate(cfg, jobs=jobs, backend=backend, scheduler=scheduler,
                                          progress=lambda done, total: bar.update(task, completed=done)))
    return rep.compare(summaries[0], summaries[1:])
