"""`rulesvm`: the command-line interface (Typer). Each command calls the public API in
`rulesvm.api` and hands everything it shows to `cli.render`.

Exit codes: 0 success, 1 game or validation errors (including a rules error while
playing), 2 usage errors (bad options or arguments).
"""

from __future__ import annotations

import json
import os
import secrets
import sys
from typing import List, Optional

import typer

from rulesvm import api
from rulesvm.dsl.diagnostics import DiagnosticError
from rulesvm.interpreter import RulesRuntimeError
from rulesvm.interpreter.agents import AgentSpecError, make_agent, registered_agents
from rulesvm.interpreter.rng import derive

from .human import HumanAgent, QuitGame
from .render import Screen

app = typer.Typer(
    name="rulesvm",
    help="Play, check and analyse card and board games written in the rulesvm rules language.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

GAME_ARG = typer.Argument(..., help="The game's YAML file (its entry point), e.g. games/my_game.yaml.",
                          show_default=False)
CARD_SET_OPT = typer.Option(None, "--card-set", help="Add a card-set YAML file to the game (repeatable).",
                            metavar="FILE")
SET_OPT = typer.Option(None, "--set", help="Override a game option: NAME=VALUE (repeatable). "
                       "`rulesvm info GAME` lists the options.", metavar="NAME=VALUE")
VARIANT_OPT = typer.Option(None, "--variant", help="Apply a variant by name or file (repeatable, in order).",
                           metavar="NAME|FILE")


def _usage(screen: Screen, message: str, hint: str | None = None) -> None:
    screen.error(message, hint)
    raise typer.Exit(2)


def _load(screen: Screen, path: str, card_sets, variants, set_pairs) -> api.Game:
    if not os.path.exists(path):
        _usage(screen, f"no such file: {path}", "give the path of a game's YAML file, e.g. games/my_game.yaml")
    try:
        game = api.load_game(path, card_sets or [], variants or [], set_pairs=set_pairs or [])
    except DiagnosticError as exc:
        screen.diagnostics(exc.diagnostics)
        errors = sum(1 for d in exc.diagnostics if d.is_error)
        screen.note(f"{errors} error(s): the game cannot be loaded (run `rulesvm validate {path}`)")
        raise typer.Exit(1)
    except ValueError as exc:
        _usage(screen, str(exc))
    return game


def _parse_seat(screen: Screen, text: str, players: int, what: str) -> int:
    try:
        seat = int(text)
    except ValueError:
        _usage(screen, f"{what}: `{text}` is not a seat number")
    if not 1 <= seat <= players:
        _usage(screen, f"{what}: seat {seat} does not exist in a {players}-player game (seats 1-{players})")
    return seat - 1


class _JsonlLog:
    """The --log file: one JSON object per line, keys sorted, so equal games give equal bytes."""

    def __init__(self, path: str, header: dict):
        self.fh = open(path, "w", encoding="utf-8")
        self.header = header

    def __call__(self, record: dict) -> None:
        if record["type"] == "start":
            record = {**record, **self.header}
        self.fh.write(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")

    def close(self) -> None:
        self.fh.close()


def _check_writable(screen: Screen, path: Optional[str], force: bool, what: str) -> None:
    """Refuse an output file before any work is done: one that exists (unless --force), one
    that is a folder, or one whose folder does not exist or cannot be written."""
    if not path:
        return
    if os.path.isdir(path):
        _usage(screen, f"{what} file {path} is a folder", "give a file name, e.g. out/game.jsonl")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        _usage(screen, f"cannot write the {what} file {path}: the folder {folder} does not exist",
               "create the folder first, or choose another place")
    if not os.access(folder, os.W_OK):
        _usage(screen, f"cannot write the {what} file {path}: the folder {folder} is not writable")
    if os.path.exists(path) and not force:
        _usage(screen, f"{what} file {path} already exists", "choose another name, or add --force to overwrite it")


def _log_header(g: api.Game, log: str, seat_specs: dict) -> dict:
    """What a log's start record adds so `rulesvm replay` finds the game: the files, relative
    to the log's folder, and each seat's agent."""
    log_dir = os.path.dirname(os.path.abspath(log))
    return {"game_path": os.path.relpath(g.path, log_dir),
            "card_sets": [os.path.relpath(os.path.abspath(c), log_dir) for c in g.card_sets],
            "variants": [v if v in g.model.variants else os.path.relpath(os.path.abspath(v), log_dir)
                         for v in g.variants],
            "agents": {str(s + 1): spec for s, spec in seat_specs.items()}}


def _player_count(screen: Screen, g: api.Game, players: Optional[int]) -> int:
    """--players, or the game's default; a count outside the game's range is a usage error."""
    lo, hi, default = g.model.players
    n = players if players is not None else default
    if not lo <= n <= hi:
        _usage(screen, f"{g.name} is for {lo}" + (f" to {hi}" if hi != lo else "") + f" players, not {n}",
               f"use --players {lo}" + (f" to {hi}" if hi != lo else ""))
    return n


def _seat_pairs(screen: Screen, items: Optional[List[str]], n: int, option: str, form: str) -> list:
    """SEAT=VALUE options (`--agent 2=random`, `--hand 1=A`) as (0-based seat, value)."""
    out = []
    for item in items or []:
        seat_text, eq, value = item.partition("=")
        if not eq or not value.strip():
            _usage(screen, f"{option} {item}: write {form}")
        out.append((_parse_seat(screen, seat_text.strip(), n, option), value.strip()))
    return out


def _read_hands(screen: Screen, g: api.Game, hand: Optional[List[str]], n: int) -> dict:
    """--hand SEAT=FILE|PRESET options: seat -> card ids; an illegal hand is a game error."""
    hands = {}
    for s, source in _seat_pairs(screen, hand, n, "--hand", "SEAT=FILE or SEAT=PRESET"):
        try:
            hands[s] = api.read_hand(g, source)
        except DiagnosticError as exc:
            screen.diagnostics(exc.diagnostics)
            screen.note(f"the hand for seat {s + 1} is not legal")
            raise typer.Exit(1)
        except ValueError as exc:
            _usage(screen, str(exc))
    return hands


@app.command()
def run(
    game: str = GAME_ARG,
    players: Optional[int] = typer.Option(None, "--players", "-p", help="Number of players (the game's default if omitted)."),
    seed: Optional[int] = typer.Option(None, "--seed", "-s", help="Random seed; the same seed, files and choices "
                                       "give the same game, byte for byte. Random (and printed) if omitted."),
    human: Optional[List[str]] = typer.Option(None, "--human", help="Play this seat at the terminal (repeatable).",
                                              metavar="SEAT"),
    agent: Optional[List[str]] = typer.Option(None, "--agent", help="Agent for a seat: SEAT=NAME, e.g. 2=random "
                                              "(repeatable; other seats play random).", metavar="SEAT=NAME"),
    log: Optional[str] = typer.Option(None, "--log", help="Write every event and decision as JSON Lines to FILE.",
                                      metavar="FILE"),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object with the result to stdout "
                                 "(the readable log goes to stderr)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Do not print the readable log."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Also print every decision."),
    save: Optional[str] = typer.Option(None, "--save", help="Save file: a human types `save` to write it; "
                                       "with --save-at the game stops and saves there.", metavar="FILE"),
    save_at: Optional[int] = typer.Option(None, "--save-at", help="Stop after N decisions and write the --save file.",
                                          metavar="N"),
    force: bool = typer.Option(False, "--force", help="Overwrite existing --log/--save files."),
    card_set: Optional[List[str]] = CARD_SET_OPT,
    set_: Optional[List[str]] = SET_OPT,
    variant: Optional[List[str]] = VARIANT_OPT,
    max_steps: Optional[int] = typer.Option(None, "--max-steps", min=1, help="Stop a rule that runs this many steps "
                                            "without a decision (default: the game's max_steps or 1,000,000)."),
    debug: bool = typer.Option(False, "--debug", help="Check after every step that no card is lost or duplicated."),
    hand: Optional[List[str]] = typer.Option(None, "--hand", help="The cards a seat brings, in games that let "
                                             "players choose them: SEAT=FILE (a YAML list of card ids) or "
                                             "SEAT=PRESET (repeatable).", metavar="SEAT=FILE"),
) -> None:
    """Play a game: bots by default, `--human SEAT` for a person at the terminal."""
    screen = Screen(log_to_stderr=as_json, quiet=quiet)
    if save_at is not None and not save:
        _usage(screen, "--save-at needs --save FILE")
    _check_writable(screen, log, force, "log")
    _check_writable(screen, save, force, "save")
    g = _load(screen, game, card_set, variant, set_)
    n = _player_count(screen, g, players)
    if seed is None:
        seed = secrets.randbelow(10**9)
    humans = {_parse_seat(screen, h, n, "--human") for h in (human or [])}
    specs = {}
    for s, name in _seat_pairs(screen, agent, n, "--agent", "SEAT=NAME, e.g. 2=random"):
        if s in humans:
            _usage(screen, f"seat {s + 1} is both --human and --agent")
        specs[s] = name
    agents = {}
    try:
        for s in range(n):
            if s not in humans:
                agents[s] = make_agent(specs.get(s, "random"), derive(seed, 1000 + s))
    except AgentSpecError as exc:
        _usage(screen, str(exc))
    hands = _read_hands(screen, g, hand, n)
    viewer = {h + 1 for h in humans} if humans else None
    seat_specs = {s: ("human" if s in humans else specs.get(s, "random")) for s in range(n)}
    log_writer = _JsonlLog(log, _log_header(g, log, seat_specs)) if log else None

    def sink(record: dict) -> None:
        if log_writer is not None:
            log_writer(record)
        if record["type"] == "decision" and verbose:
            screen.decision_echo(record, viewer)
        elif record["type"] in ("log", "start"):
            screen.event(record, viewer)

    def on_save(match) -> str:
        api.save_match(match, g, save, agents, seat_specs)
        return f"saved to {save} (resume with `rulesvm resume {save}`)"

    history = api.UndoHistory(agents) if humans else None
    terminal = {} if len(humans) > 1 else None
    for h in humans:
        agents[h] = HumanAgent(screen, on_save=on_save if save else None, history=history, terminal=terminal)
    try:
        match = api.new_game(g, n, seed, sink, debug, max_steps, hands=hands)
        if save_at is not None:
            while not match.is_over and match.decisions_made < save_at:
                s = match.current_player
                choice = agents[s].choose(api.SeatView(match, s))
                match.apply(choice)
            api.save_match(match, g, save, agents, seat_specs)
            screen.note(f"saved after {match.decisions_made} decisions to {save}")
            return
        result = api.play(match, agents, history=history)
    except QuitGame as exc:
        screen.note(f"Game stopped ({exc.reason})." + (" Saved games can be resumed with `rulesvm resume`."
                                                         if save else ""))
        return
    except ValueError as exc:          # e.g. hands that need more copies than the game has
        screen.error(str(exc))
        raise typer.Exit(1)
    except RulesRuntimeError as exc:
        screen.runtime_error(exc)
        if log:
            screen.note(f"the log up to the error is in {log} (replay it with `rulesvm replay {log}`)")
        raise typer.Exit(1)
    finally:
        if log_writer is not None:
            log_writer.close()
    _finish(screen, g, match, result, seed, n, agents, as_json, quiet)


def _finish(screen: Screen, g, match, result, seed, n, agents, as_json: bool, quiet: bool) -> None:
    names = {s: a.describe() for s, a in agents.items()}
    if as_json:
        screen.json({"game": g.model.id, "seed": seed, "players": n, "decisions": match.decisions_made,
                     "options": {k: (list(v) if isinstance(v, tuple) else v) for k, v in g.program.options.items()},
                     "variants": g.variants, "agents": {str(s + 1): a for s, a in names.items()},
                     "result": result})
    else:
        screen.result(result, names, g.name)


@app.command()
def resume(
    save_file: str = typer.Argument(..., help="A file written by `rulesvm run --save FILE`.", metavar="SAVE"),
    human: Optional[List[str]] = typer.Option(None, "--human", help="Play this seat at the terminal (repeatable); "
                                              "by default the seats the save file records as human.", metavar="SEAT"),
    as_json: bool = typer.Option(False, "--json", help="Print the result as one JSON object."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Do not print the readable log."),
) -> None:
    """Resume a saved game exactly where it was saved."""
    screen = Screen(log_to_stderr=as_json, quiet=quiet)
    sink = lambda record: screen.event(record) if record["type"] == "log" else None
    try:
        g, match, data = api.load_saved(save_file, sink)
    except DiagnosticError as exc:
        screen.diagnostics(exc.diagnostics)
        raise typer.Exit(1)
    except ValueError as exc:
        _usage(screen, str(exc))
    n = match.players
    recorded = data.get("agents", {})
    humans = {_parse_seat(screen, h, n, "--human") for h in (human or [])} if human else \
        {int(s) - 1 for s, a in recorded.items() if a == "human"}
    agents = {}
    states = data.get("agent_states", {})
    try:
        for s in range(n):
            if s not in humans:
                spec = recorded.get(str(s + 1), "random")
                agents[s] = make_agent("random" if spec == "human" else spec, derive(match.seed, 1000 + s))
                if str(s + 1) in states:
                    agents[s].set_state(states[str(s + 1)])
    except AgentSpecError as exc:
        _usage(screen, str(exc))
    seat_specs = {s: ("human" if s in humans else recorded.get(str(s + 1), "random")) for s in range(n)}

    def on_save(m) -> str:
        api.save_match(m, g, save_file, agents, seat_specs)
        return f"saved to {save_file}"
    history = api.UndoHistory(agents) if humans else None
    terminal = {} if len(humans) > 1 else None
    for h in humans:
        agents[h] = HumanAgent(screen, on_save=on_save, history=history, terminal=terminal)
    screen.note(f"Resuming {g.name} after {match.decisions_made} decisions (seed {match.seed}).")
    try:
        result = api.play(match, agents, history=history)
    except QuitGame as exc:
        screen.note(f"Game stopped ({exc.reason}).")
        return
    except RulesRuntimeError as exc:
        screen.runtime_error(exc)
        raise typer.Exit(1)
    _finish(screen, g, match, result, match.seed, n, agents, as_json, quiet)


@app.command()
def validate(
    paths: List[str] = typer.Argument(..., help="Game YAML files, or folders to search for them.", metavar="PATH..."),
    card_set: Optional[List[str]] = CARD_SET_OPT,
    as_json: bool = typer.Option(False, "--json", help="Print the diagnostics as JSON."),
    no_warnings: bool = typer.Option(False, "--no-warnings", help="Show errors only."),
) -> None:
    """Check game files: YAML, schema, rules scripts and card data. Exit 1 on errors."""
    screen = Screen()
    files = []
    for p in paths:
        if os.path.isdir(p):
            for root, _, names in sorted(os.walk(p)):
                files.extend(os.path.join(root, f) for f in sorted(names) if _is_game_file(os.path.join(root, f)))
        elif os.path.exists(p):
            files.append(p)
        else:
            _usage(screen, f"no such file or folder: {p}")
    if not files:
        _usage(screen, "no game files found", "a game file is a YAML file with a `rules:` key")
    all_diags = []
    errors = 0
    for f in files:
        diags = api.validate_path(f, card_set or [])
        all_diags.extend(diags)
        errors += sum(1 for d in diags if d.is_error)
        if not as_json:
            screen.diagnostics(diags, warnings=not no_warnings)
            n_err = sum(1 for d in diags if d.is_error)
            n_warn = len(diags) - n_err
            status = "ok" if not n_err else f"{n_err} error(s)"
            screen.note(f"{f}: {status}" + (f", {n_warn} warning(s)" if n_warn and not no_warnings else ""))
    if as_json:
        screen.json({"files": files, "errors": errors,
                     "diagnostics": [d.to_json() for d in all_diags if d.is_error or not no_warnings]})
    raise typer.Exit(1 if errors else 0)


def _is_game_file(path: str) -> bool:
    """Game files (a top-level `rules:` key) and variant files (`variant:`) found in folders."""
    if not path.endswith((".yaml", ".yml")) or path.endswith(".scenario.yaml"):
        return False
    try:
        with open(path, encoding="utf-8") as fh:
            head = "\n" + fh.read(4096)
    except (OSError, UnicodeDecodeError):
        return False
    return "\nrules:" in head or "\nvariant:" in head


@app.command()
def info(
    game: str = GAME_ARG,
    card_set: Optional[List[str]] = CARD_SET_OPT,
    set_: Optional[List[str]] = SET_OPT,
    variant: Optional[List[str]] = VARIANT_OPT,
    as_json: bool = typer.Option(False, "--json", help="Print the summary as one JSON object."),
) -> None:
    """Show a game's players, options, variants, zones and cards."""
    screen = Screen()
    g = _load(screen, game, card_set, variant, set_)
    data = api.game_info(g)
    if as_json:
        screen.json(data)
    else:
        screen.info(data)


@app.command()
def replay(
    log_file: str = typer.Argument(..., help="A game log written by `rulesvm run --log FILE`.", metavar="LOG"),
    as_seat: Optional[int] = typer.Option(None, "--as", help="Show only what this seat could see "
                                          "(default: everything revealed).", metavar="SEAT"),
    to: Optional[int] = typer.Option(None, "--to", help="Stop after decision N and print the whole state there.",
                                     metavar="N"),
    game: Optional[str] = typer.Option(None, "--game", help="Replay against this game file instead of the one "
                                       "the log names.", metavar="GAME"),
    log: Optional[str] = typer.Option(None, "--log", help="Write the replayed game's log to FILE "
                                      "(equal to the original when nothing changed).", metavar="FILE"),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing --log file."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print only the outcome."),
) -> None:
    """Re-run a logged game against the current game files, step by step.

    Stops with exit 1 where the current rules no longer accept a logged decision: a
    regression check after a rule change.
    """
    from rulesvm.replay import ReplayMismatch, game_for_log, read_log, replay as run_replay
    screen = Screen(quiet=quiet)
    _check_writable(screen, log, force, "log")
    try:
        logged = read_log(log_file)
        g = game_for_log(logged, game)
    except DiagnosticError as exc:
        screen.diagnostics(exc.diagnostics)
        raise typer.Exit(1)
    except ValueError as exc:
        _usage(screen, str(exc))
    players = logged.start["players"]
    if as_seat is not None and not 1 <= as_seat <= players:
        _usage(screen, f"--as: seat {as_seat} does not exist in a {players}-player game")
    viewer = {as_seat} if as_seat is not None else None
    writer = None
    if log:
        writer = _JsonlLog(log, {k: logged.start[k] for k in ("game_path", "card_sets", "agents")
                                 if k in logged.start})

    def sink(record: dict) -> None:
        if writer is not None:
            writer(record)
        if record["type"] in ("decision", "forced"):
            screen.decision_echo(record, viewer if viewer is not None else {record["player"]})
        elif record["type"] in ("log", "start"):
            screen.event(record, viewer)
    try:
        match = run_replay(logged, g, to, sink)
    except ReplayMismatch as exc:
        screen.error(f"{exc.decision and f'decision {exc.decision}: '}{exc.message}",
                     "the rules changed since the log was written")
        raise typer.Exit(1)
    except RulesRuntimeError as exc:
        screen.runtime_error(exc)
        raise typer.Exit(1)
    finally:
        if writer is not None:
            writer.close()
    if to is not None or not match.is_over:
        seat = as_seat - 1 if as_seat is not None else -1
        screen.state(match.observation(seat), as_seat)
        screen.note(f"after {match.decisions_made} decisions" + ("" if match.is_over else " (the game goes on)"))
    else:
        screen.result(match.result, {s: logged.start.get("agents", {}).get(str(s + 1), "?")
                                     for s in range(players)}, g.name)


@app.command("test")
def test_scenarios(
    paths: Optional[List[str]] = typer.Argument(None, help="Scenario files (*.scenario.yaml) or folders to search; "
                                                "default: games/.", metavar="[PATH...]"),
) -> None:
    """Run scenario files: a line per scenario, then `N passed, N failed`. Exit 1 on any failure."""
    from rulesvm.testing.scenario import find_scenarios, run_scenario
    screen = Screen()
    paths = paths or ["games"]
    for p in paths:
        if not os.path.exists(p):
            _usage(screen, f"no such file or folder: {p}")
    files = find_scenarios(paths)
    if not files:
        _usage(screen, "no scenario files (*.scenario.yaml) found in " + ", ".join(paths))
    passed = failed = 0
    for f in files:
        result = run_scenario(f)
        screen.scenario_line(os.path.relpath(f), result)
        passed += result.passed
        failed += not result.passed
    screen.summary_line(passed, failed)
    raise typer.Exit(1 if failed else 0)


@app.command()
def diff(
    game: str = GAME_ARG,
    variant: List[str] = typer.Option(..., "--variant", help="The variant(s) to compare with the base game "
                                      "(name or file; repeatable, applied in order).", metavar="NAME|FILE"),
    card_set: Optional[List[str]] = CARD_SET_OPT,
    as_json: bool = typer.Option(False, "--json", help="Print the differences as one JSON object."),
) -> None:
    """Show what variants change: options, cards and rule parts (a unified diff)."""
    from rulesvm.diff import variant_diff
    screen = Screen()
    if not os.path.exists(game):
        _usage(screen, f"no such file: {game}")
    try:
        data = variant_diff(game, variant, card_set or [])
    except DiagnosticError as exc:
        screen.diagnostics(exc.diagnostics)
        raise typer.Exit(1)
    except ValueError as exc:
        _usage(screen, str(exc))
    if as_json:
        screen.json(data)
    else:
        screen.variant_diff(data)


def _sim_config(screen, game, n, players, agents_text, variant, set_, seed, card_set, max_steps,
                max_decisions: int = 100_000):
    from rulesvm.interpreter.agents import split_agent_list
    from rulesvm.simulate import SimConfig
    if n < 1:
        _usage(screen, f"-n must be at least 1, not {n}")
    if max_decisions < 1:
        _usage(screen, f"--max-decisions must be at least 1, not {max_decisions}")
    if not os.path.exists(game):
        _usage(screen, f"no such file: {game}")
    agents_list = tuple(split_agent_list(agents_text)) if agents_text else ("random",)
    for spec in agents_list:
        try:
            make_agent(spec, 0)
        except AgentSpecError as exc:
            _usage(screen, str(exc))
    return SimConfig(game=game, n=n, players=players, agents=agents_list, seed=seed, variants=tuple(variant or ()),
                     card_sets=tuple(card_set or ()), set_pairs=tuple(set_ or ()), max_steps=max_steps,
                     max_decisions=max_decisions)


def _run_simulation(screen, config, jobs, backend, scheduler, quiet, label=""):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
    from rulesvm.simulate import simulate
    progress = Progress(TextColumn(f"[bold]{label or 'simulating'}"), BarColumn(), MofNCompleteColumn(),
                        TextColumn("{task.fields[rate]} games/s"), TimeRemainingColumn(),
                        console=screen.err, disable=quiet, transient=True)
    started = [None]
    with progress:
        task = progress.add_task("games", total=config.n, rate="-")

        def on_progress(done, total):
            import time as _t
            if started[0] is None:
                started[0] = _t.perf_counter()
            elapsed = max(_t.perf_counter() - started[0], 1e-9)
            progress.update(task, completed=done, rate=f"{done / elapsed:.0f}")
        try:
            return simulate(config, jobs=jobs, backend=backend, scheduler=scheduler, progress=on_progress)
        except DiagnosticError as exc:
            screen.diagnostics(exc.diagnostics)
            raise typer.Exit(1)
        except AgentSpecError as exc:
            _usage(screen, str(exc))
        except ValueError as exc:
            _usage(screen, str(exc))


SIM_N = typer.Option(100, "-n", "--games", help="Number of games.")
SIM_AGENTS = typer.Option(None, "--agents", help="Agents, comma separated, given to the seats in order and cycled; "
                          "different agents rotate over the seats game by game "
                          "(e.g. mcts:iterations=200,random). Default: random.", metavar="LIST")
SIM_JOBS = typer.Option(None, "--jobs", "-j", min=1, help="Worker processes (default: all cores). Results do not depend on it.")
SIM_BACKEND = typer.Option("local", "--backend", help="`local` processes, or `dask` (pip install rulesvm[dask]).")
SIM_SCHEDULER = typer.Option(None, "--scheduler", help="With --backend dask: the address of a running scheduler "
                             "(tcp://host:8786); without it a temporary local cluster is started.", metavar="ADDRESS")


@app.command()
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
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
    csv: Optional[str] = typer.Option(None, "--csv", help="Write the summary's tables as CSV to FILE.", metavar="FILE"),
    plot: Optional[str] = typer.Option(None, "--plot", help="Write a PNG with the win rates, game lengths and scores.",
                                       metavar="FILE.png"),
    report: Optional[str] = typer.Option(None, "--report", help="Write a self-contained HTML report.",
                                         metavar="FILE.html"),
    force: bool = typer.Option(False, "--force", help="Overwrite existing output files."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
) -> None:
    """Play many games with bots and report win rates, lengths, coverage, card use and design metrics.

    Ctrl-C stops early and reports the games finished so far.
    """
    screen = Screen(quiet=quiet)
    for path, what in ((csv, "CSV"), (plot, "plot"), (report, "report")):
        _check_writable(screen, path, force, what)
    if backend not in ("local", "dask"):
        _usage(screen, f"--backend must be `local` or `dask`, not `{backend}`")
    if scheduler and backend != "dask":
        _usage(screen, "--scheduler goes with --backend dask")
    config = _sim_config(screen, game, n, players, agents_text, variant, set_, seed, card_set, max_steps,
                         max_decisions)
    summary = _run_simulation(screen, config, jobs or os.cpu_count() or 1, backend, scheduler, quiet or as_json)
    _write_outputs(screen, summary, csv, plot, report)
    if as_json:
        screen.json(summary)
    else:
        screen.simulation(summary)
    if summary["interrupted"]:
        screen.note(f"interrupted: {summary['games']} of {summary['requested']} games summarised")


def _write_outputs(screen, summary, csv, plot, report) -> None:
    from rulesvm import report as rep
    png = None
    if plot or report:
        try:
            png = rep.plot_png(summary)
        except ValueError as exc:
            if plot:
                _usage(screen, str(exc))
    if plot:
        with open(plot, "wb") as fh:
            fh.write(png)
    if report:
        with open(report, "w", encoding="utf-8") as fh:
            fh.write(rep.html_report(summary, png))
    if csv:
        import csv as csvmod
        with open(csv, "w", newline="", encoding="utf-8") as fh:
            w = csvmod.writer(fh)
            for name, head, rows in rep.summary_tables(summary):
                w.writerow([name])
                w.writerow(head)
                w.writerows(rows)
                w.writerow([])


@app.command()
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
) -> None:
    """Simulate the base game and each variant with the same seeds; show the differences and their significance."""
    from rulesvm.report import compare as compare_runs
    screen = Screen(quiet=quiet)
    base_cfg = _sim_config(screen, game, n, players, agents_text, [], set_, seed, [], None)
    jobs = jobs or os.cpu_count() or 1
    base = _run_simulation(screen, base_cfg, jobs, backend, scheduler, quiet or as_json, "base game")
    others = []
    for v in variant:
        cfg = _sim_config(screen, game, n, players, agents_text, [v], set_, seed, [], None)
        others.append(_run_simulation(screen, cfg, jobs, backend, scheduler, quiet or as_json, v))
    data = compare_runs(base, others)
    if as_json:
        screen.json(data)
    else:
        screen.comparison(data)


@app.command()
def agents() -> None:
    """List the agents (bots) that can play a seat."""
    screen = Screen()
    for name, (doc, params) in sorted(registered_agents().items()):
        screen.out.print(f"{name}: {doc}")
        for key, (kind, pdoc) in sorted(params.items()):
            screen.out.print(f"    {key} ({kind.__name__}): {pdoc}")


@app.command()
def schema(
    game: Optional[str] = typer.Argument(None, help="A game's YAML file: type the cards by the card kinds its rules "
                                         "declare (default kind then: card-set).", metavar="GAME"),
    kind: Optional[str] = typer.Option(None, "--kind", help="The kind of file: game (the default), card-set, "
                                       "variant, scenario or hand.", metavar="KIND"),
    write: Optional[str] = typer.Option(None, "--write", help="Write the schema of every kind of file into DIR "
                                        "as KIND.schema.json (the repository keeps them in schema/).", metavar="DIR"),
) -> None:
    """Print the JSON Schema of a kind of YAML file, for editors that validate and complete it.

    Point a file at it with a first line `# yaml-language-server: $schema=PATH`.
    """
    from rulesvm import schemas
    screen = Screen()
    if write is not None:
        if game or kind:
            _usage(screen, "--write writes every kind of file's schema: give it without GAME or --kind")
        for path in schemas.write_all(write):
            screen.note(f"wrote {path}")
        return
    if kind is not None and kind not in schemas.KINDS:
        _usage(screen, f"--kind {kind}: unknown kind of file", "one of " + ", ".join(schemas.KINDS))
    if game is None:
        screen.document(schemas.to_text(schemas.schema_for(kind or "game")))
        return
    if not os.path.exists(game):
        _usage(screen, f"no such file: {game}", "give the path of a game's YAML file, e.g. games/my_game.yaml")
    kind = kind or "card-set"
    if kind not in schemas.CARD_KINDS:
        _usage(screen, f"--kind {kind} has no cards to type by a game's card kinds",
               "with GAME use --kind " + ", ".join(schemas.CARD_KINDS))
    try:
        game_id, kinds = schemas.game_card_kinds(game)
    except DiagnosticError as exc:
        screen.diagnostics(exc.diagnostics)
        screen.note(f"the game's rules have errors (run `rulesvm validate {game}`)")
        raise typer.Exit(1)
    screen.document(schemas.to_text(schemas.game_schema_for(kind, game_id, kinds)))


@app.command("fmt")
def fmt(
    paths: List[str] = typer.Argument(..., help="Rules files (*.rules), or folders to search for them; `-` formats "
                                      "standard input to standard output.", metavar="FILE..."),
    check: bool = typer.Option(False, "--check", help="Write nothing; list the files that would change and exit 1 "
                               "if there are any."),
    show_diff: bool = typer.Option(False, "--diff", help="Write nothing; print a unified diff of the changes."),
) -> None:
    """Format rules files canonically: one layout, 2-space indentation, comments kept.

    A file is rewritten only once the new text is checked to parse to exactly the same rules.

    A file with syntax errors is left as it is (exit 1).
    """
    import difflib

    from rulesvm.dsl.formatter import FormatError, format_file, format_text, write_atomically
    screen = Screen()
    files = []
    for p in paths:
        if p == "-":
            files.append(p)
        elif os.path.isdir(p):
            found = [os.path.join(root, f) for root, _, names in sorted(os.walk(p)) for f in sorted(names)
                     if f.endswith(".rules")]
            if not found:
                _usage(screen, f"no rules files (*.rules) in {p}")
            files.extend(found)
        elif os.path.isfile(p):
            files.append(p)
        else:
            _usage(screen, f"no such file or folder: {p}")
    changed = failed = 0
    for path in files:
        try:
            if path == "-":
                text = sys.stdin.read().replace("\r\n", "\n")
                out = format_text(text, "<stdin>")
                result = None
            else:
                result = format_file(path)
                text, out = result.original, result.formatted
        except DiagnosticError as exc:
            screen.diagnostics(exc.diagnostics)
            screen.note(f"{path}: not formatted: fix the syntax errors first")
            failed += 1
            continue
        except FormatError as exc:
            screen.error(f"{path}: cannot be formatted safely ({exc})",
                         "the file is unchanged; please report this to the rulesvm developers")
            failed += 1
            continue
        except (OSError, ValueError) as exc:
            screen.error(f"{path}: {exc.strerror if isinstance(exc, OSError) and exc.strerror else exc}")
            failed += 1
            continue
        if path == "-" and not check and not show_diff:
            screen.document(out)
        if out == text:
            continue
        changed += 1
        if show_diff:
            screen.unified_diff(difflib.unified_diff(text.splitlines(True), out.splitlines(True), path,
                                                     f"{path} (formatted)"))
        if check and path != "-":
            screen.path_line(path)
        if result is not None and not check and not show_diff:
            try:
                write_atomically(path, out, result.newline)
            except OSError as exc:
                screen.error(f"{path}: cannot write: {exc.strerror or exc}", "the file is unchanged")
                failed += 1
                changed -= 1
    done = "would be reformatted" if check or show_diff else "reformatted"
    screen.note(f"{changed} file(s) {done}, {len(files) - changed - failed} unchanged"
                + (f", {failed} with errors" if failed else ""))
    raise typer.Exit(1 if failed or (check and changed) else 0)


from .serve import serve  # noqa: E402  (the web table: cli/serve.py)
app.command()(serve)


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(130)


if __name__ == "__main__":
    main()
