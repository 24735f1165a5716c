"""Commands that play or re-play one game at the terminal: `run`, `resume`, `replay`.

Bots are seated by `rulesvm.api.make_agents` (the seeds every front end shares); people
play through `cli.human`; everything shown goes through `cli.render`.
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, List, Optional

import typer

from rulesvm import api, saves
from rulesvm.dsl.diagnostics import DiagnosticError
from rulesvm.interpreter import CHANCE, RulesRuntimeError
from rulesvm.interpreter.agents import AgentSpecError

from .common import (ALLOW_EDITED_OPT, CARD_SET_OPT, GAME_ARG, SET_OPT, UNDO_OPT, VARIANT_OPT, JsonlLog, check_writable,
                     load, log_header, parse_seat, player_count, read_hands, seat_pairs, undo_any, usage)
from .human import HumanAgent, QuitGame, TerminalDealer
from .lazy import lazy
from .render import Screen

if TYPE_CHECKING:
    from rulesvm.tooling import replay as logs  # noqa: F401

logs = lazy("rulesvm.tooling.replay")        # `replay` alone needs it (see lazy.py)


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
    undo: str = UNDO_OPT,
    explicit_chance: bool = typer.Option(False, "--explicit-chance", help="Ask at the terminal for the outcome of "
                                         "every random event (a die roll, a random pick, each card of a shuffle): "
                                         "type it, or press Enter to draw it from the seed. For real dice, or to "
                                         "set up a situation; not with --log or --save."),
) -> None:
    """Play a game: bots by default, `--human SEAT` for a person at the terminal."""
    screen = Screen(log_to_stderr=as_json, quiet=quiet)
    any_undo = undo_any(screen, undo)
    if save_at is not None and not save:
        usage(screen, "--save-at needs --save FILE")
    if explicit_chance and (log or save):
        usage(screen, "--explicit-chance cannot be combined with " + ("--log" if log else "--save"),
              "a log or save of a game whose random outcomes were typed in could not be replayed from its seed")
    check_writable(screen, log, force, "log")
    check_writable(screen, save, force, "save")
    g = load(screen, game, card_set, variant, set_)
    n = player_count(screen, g, players)
    if seed is None:
        seed = secrets.randbelow(10**9)
    humans = {parse_seat(screen, h, n, "--human") for h in (human or [])}
    specs = {}
    for s, name in seat_pairs(screen, agent, n, "--agent", "SEAT=NAME, e.g. 2=random"):
        if s in humans:
            usage(screen, f"seat {s + 1} is both --human and --agent")
        specs[s] = name
    try:
        agents = api.make_agents(specs, seed, [s for s in range(n) if s not in humans])
    except AgentSpecError as exc:
        usage(screen, str(exc))
    hands = read_hands(screen, g, hand, n)
    viewer = {h + 1 for h in humans} if humans else None
    seat_specs = {s: ("human" if s in humans else specs.get(s, "random")) for s in range(n)}
    log_writer = JsonlLog(log, log_header(g, log, seat_specs)) if log else None

    def sink(record: dict) -> None:
        if log_writer is not None:
            log_writer(record)
        if record["type"] == "decision" and verbose:
            screen.decision_echo(record, viewer)
        elif record["type"] in ("log", "reveal", "start"):
            screen.event(record, viewer)
    if save:
        sink = saves.MoveRecorder(sink)         # a save records every answer since the start

    def on_save(match) -> str:
        saves.save_match(match, g, save, agents, seat_specs)
        return f"saved to {save} (resume with `rulesvm resume {save}`)"

    history = api.UndoHistory(agents, any_undo) if humans else None
    terminal = {} if len(humans) > 1 else None
    for h in humans:
        agents[h] = HumanAgent(screen, on_save=on_save if save else None, history=history, terminal=terminal)
    if explicit_chance:
        agents[CHANCE] = TerminalDealer(screen)
    try:
        match = api.new_game(g, n, seed, sink, debug, max_steps, hands=hands, explicit_chance=explicit_chance)
        if save_at is not None:
            while not match.is_over and match.decisions_made < save_at:
                s = match.current_player
                choice = agents[s].choose(api.SeatView(match, s))
                match.apply(choice)
            saves.save_match(match, g, save, agents, seat_specs)
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
    _finish(screen, g, match, result, seed, n, {s: a for s, a in agents.items() if s != CHANCE}, as_json, quiet)


def known_at_the_end(match) -> dict:
    """Per seat, the cards it knew at the end without seeing them (docs/language.md#what-a-seat-knows)."""
    return {str(s + 1): [k["id"] for k in match.observation(s).get("known", [])] for s in range(match.players)}


def _finish(screen: Screen, g, match, result, seed, n, agents, as_json: bool, quiet: bool) -> None:
    names = {s: a.describe() for s, a in agents.items()}
    if as_json:
        screen.json({"game": g.model.id, "seed": seed, "players": n, "decisions": match.decisions_made,
                     "options": {k: (list(v) if isinstance(v, tuple) else v) for k, v in g.program.options.items()},
                     "variants": g.variants, "agents": {str(s + 1): a for s, a in names.items()},
                     "result": result, "known": known_at_the_end(match)})
    else:
        screen.result(result, names, g.name)


def resume(
    save_file: str = typer.Argument(..., help="A file written by `rulesvm run --save FILE`.", metavar="SAVE"),
    human: Optional[List[str]] = typer.Option(None, "--human", help="Play this seat at the terminal (repeatable); "
                                              "by default the seats the save file records as human.", metavar="SEAT"),
    as_json: bool = typer.Option(False, "--json", help="Print the result as one JSON object."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Do not print the readable log."),
    undo: str = UNDO_OPT,
    allow_edited: bool = ALLOW_EDITED_OPT,
) -> None:
    """Resume a saved game exactly where it was saved.

    Refuses (exit 1) a save that was edited: its checksum does not match, or its state is
    not the one its seed and moves lead to (`--allow-edited` resumes it with a warning).
    """
    screen = Screen(log_to_stderr=as_json, quiet=quiet)
    any_undo = undo_any(screen, undo)
    sink = lambda record: screen.event(record) if record["type"] in ("log", "reveal") else None
    warnings: list = []
    try:
        g, match, data = saves.load_saved(save_file, sink, allow_edited=allow_edited, warnings=warnings)
    except DiagnosticError as exc:
        screen.diagnostics(warnings + exc.diagnostics)
        raise typer.Exit(1)
    except ValueError as exc:
        usage(screen, str(exc))
    if warnings:
        screen.diagnostics(warnings)
        screen.note("resuming the edited save anyway (--allow-edited)")
    n = match.players
    recorded = data.get("agents", {})
    humans = {parse_seat(screen, h, n, "--human") for h in (human or [])} if human else \
        {int(s) - 1 for s, a in recorded.items() if a == "human"}
    # A seat saved as human that is not played by a person now is a random bot.
    bot_specs = {s: ("random" if spec == "human" else spec)
                 for s, spec in ((s, recorded.get(str(s + 1), "random")) for s in range(n))}
    try:
        agents = api.make_agents(bot_specs, match.seed, [s for s in range(n) if s not in humans])
    except AgentSpecError as exc:
        usage(screen, str(exc))
    states = data.get("agent_states", {})
    for s, bot in agents.items():
        if str(s + 1) in states:
            bot.set_state(states[str(s + 1)])
    seat_specs = {s: ("human" if s in humans else recorded.get(str(s + 1), "random")) for s in range(n)}

    def on_save(m) -> str:
        saves.save_match(m, g, save_file, agents, seat_specs)
        return f"saved to {save_file}"
    history = api.UndoHistory(agents, any_undo) if humans else None
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
    allow_edited: bool = ALLOW_EDITED_OPT,
) -> None:
    """Re-run a logged game against the current game files, step by step.

    Stops with exit 1 where the current rules no longer accept a logged decision: a
    regression check after a rule change. With the game files the log was written with,
    every record must be what the replayed game writes (E057), and the log's checksum must
    match (`--allow-edited` replays a log whose checksum does not, with a warning).
    """
    screen = Screen(quiet=quiet)
    check_writable(screen, log, force, "log")
    try:
        logged = logs.read_log(log_file, allow_edited)
        if logged.warnings:
            screen.diagnostics(logged.warnings)
            screen.note("replaying the edited log anyway (--allow-edited); every record is still checked")
        g = logs.game_for_log(logged, game)
    except DiagnosticError as exc:
        screen.diagnostics(exc.diagnostics)
        raise typer.Exit(1)
    except ValueError as exc:
        usage(screen, str(exc))
    players = logged.start["players"]
    if as_seat is not None and not 1 <= as_seat <= players:
        usage(screen, f"--as: seat {as_seat} does not exist in a {players}-player game")
    viewer = {as_seat} if as_seat is not None else None
    writer = None
    if log:
        writer = JsonlLog(log, {k: logged.start[k] for k in ("game_path", "card_sets", "agents")
                                 if k in logged.start})

    def sink(record: dict) -> None:
        if writer is not None:
            writer(record)
        if record["type"] in ("decision", "forced"):
            screen.decision_echo(record, viewer if viewer is not None else {record["player"]})
        elif record["type"] in ("log", "reveal", "start", "undo"):
            screen.event(record, viewer)
    try:
        match = logs.replay(logged, g, to, sink)
    except DiagnosticError as exc:           # a record differs from the replayed game (E057)
        screen.diagnostics(exc.diagnostics)
        raise typer.Exit(1)
    except logs.ReplayMismatch as exc:
        where = f" (line {exc.line})" if exc.line else ""
        screen.error(f"{exc.decision and f'decision {exc.decision}{where}: '}{exc.message}",
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
