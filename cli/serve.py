"""`rulesvm serve`: play a game in the browser (a web table), or watch a logged game again.

    rulesvm serve games/my_game.yaml --players 4 --bots 2,3,4
    rulesvm serve games/my_game.yaml --agent 2=mcts:iterations=300
    rulesvm serve --replay game.jsonl
    rulesvm serve games/                   # a lobby: the host picks the game and the seats

It prints one address per seat (each with its own secret token) and the host's address (the
lobby and the debug panel), and opens the first person's seat (or the lobby) in the browser.
The server is `rulesvm.web` (Starlette on uvicorn); this module only reads the options, loads
the game and prints, through `cli.render`. See docs/web.md.
"""

from __future__ import annotations

import ipaddress
import os
import secrets
import signal
import socket
import sys
import threading
import webbrowser
from typing import TYPE_CHECKING, List, Optional

import typer
from rich.text import Text

from rulesvm.dsl.diagnostics import DiagnosticError
from rulesvm.interpreter import RulesRuntimeError
from rulesvm.interpreter.agents import AgentSpecError, make_agent

from .common import (ALLOW_EDITED_OPT, UNDO_OPT, JsonlLog, check_writable, load, log_header, parse_seat,
                     player_count, read_hands, seat_pairs, undo_any, usage)
from .lazy import lazy
from .paths import require_file
from .render import Screen

if TYPE_CHECKING:
    import uvicorn  # noqa: F401
    from rulesvm.tooling import replay as logs  # noqa: F401
    from rulesvm.web import connections, host as web_host, lobby as web_lobby  # noqa: F401
    from rulesvm.web import replay as web_replay, server, table as web_table  # noqa: F401

# The most connections a table holds at once (pages, their sockets, the pictures they load).
MAX_CONNECTIONS = 100

uvicorn = lazy("uvicorn")                                 # the web table's server: `serve` alone needs it
logs = lazy("rulesvm.tooling.replay")
web_replay = lazy("rulesvm.web.replay")
server = lazy("rulesvm.web.server")
connections = lazy("rulesvm.web.connections")
web_table = lazy("rulesvm.web.table")
web_host = lazy("rulesvm.web.host")
web_lobby = lazy("rulesvm.web.lobby")


def _url_host(host: str) -> str:
    """The host as it goes in an address: an IPv6 literal in brackets; 0.0.0.0 as loopback."""
    if host in ("0.0.0.0", ""):
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    try:
        if ipaddress.ip_address(host).version == 6:
            return f"[{host}]"
    except ValueError:
        pass
    return host


def _listen(screen: Screen, host: str, port: int):
    """A listening socket on host:port (port 0: any free port); a usage error if impossible."""
    if not 0 <= port <= 65535:
        usage(screen, f"--port {port}: a port is a number from 1 to 65535 (0 for any free port)")
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        usage(screen, f"--host {host}: not an address of this machine ({exc.strerror})",
              "use 127.0.0.1 (this machine only, the default) or 0.0.0.0 (the local network)")
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        hint = "choose another port with --port, or --port 0 for any free one" if exc.errno in (98, 48, 10048) \
            else "use --host 127.0.0.1 (this machine) or 0.0.0.0 (the local network)"
        usage(screen, f"cannot listen on {host}:{port}: {exc.strerror or exc}", hint)
    sock.set_inheritable(True)
    return sock


def _run_server(app, sock) -> None:
    # A table serves a handful of people: past MAX_CONNECTIONS at once (pages, sockets and
    # pictures alike) the server answers 503 instead of holding more, an idle connection is
    # closed after 5 s, a request that has not arrived whole after 10 s is cut off, and so is a
    # page that leaves what it is sent unread for 20 s (web/connections.py).
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on", ws_max_size=65536,
                            timeout_graceful_shutdown=2, limit_concurrency=MAX_CONNECTIONS, timeout_keep_alive=5,
                            http=connections.TableHTTP, ws=connections.TableWebSocket)
    try:
        uvicorn.Server(config).run(sockets=[sock])
    except KeyboardInterrupt:       # uvicorn stops on Ctrl-C, then passes the signal on: a normal end
        pass


def _open_browser(url: str) -> None:
    def go():
        try:
            webbrowser.open(url)
        except Exception:       # no browser here: the address is printed anyway
            pass
    threading.Timer(0.5, go).start()


def serve(
    game: Optional[str] = typer.Argument(None, help="The game's YAML file, or a folder of games (a lobby: the host "
                                         "picks the game, options and seats in the browser). With --replay: the game "
                                         "to replay the log against (default: the file the log names).",
                                         show_default=False),
    players: Optional[int] = typer.Option(None, "--players", "-p", help="Number of players (the game's default "
                                          "if omitted)."),
    seed: Optional[int] = typer.Option(None, "--seed", "-s", help="Random seed (random and printed if omitted): "
                                       "the same seed and choices give the same game."),
    bots: Optional[str] = typer.Option(None, "--bots", help="Seats played by bots, e.g. 2,3 (random bots unless "
                                       "--agent names another).", metavar="SEATS"),
    agent: Optional[List[str]] = typer.Option(None, "--agent", help="The bot for a seat: SEAT=NAME, e.g. "
                                              "2=mcts:iterations=300 (repeatable; the seat becomes a bot).",
                                              metavar="SEAT=NAME"),
    port: int = typer.Option(8000, "--port", help="The port to listen on (0: any free port)."),
    host: str = typer.Option("127.0.0.1", "--host", help="The address to listen on: 127.0.0.1 is this machine "
                             "only; 0.0.0.0 lets others on the local network join."),
    no_browser: bool = typer.Option(False, "--no-browser", help="Do not open a browser."),
    log: Optional[str] = typer.Option(None, "--log", help="Write every event and decision as JSON Lines to FILE "
                                      "(for `rulesvm replay` and `rulesvm serve --replay`).", metavar="FILE"),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing --log file."),
    bot_delay: float = typer.Option(0.6, "--bot-delay", help="Seconds between two bot moves, so people can follow.",
                                    metavar="SECONDS"),
    no_undo: bool = typer.Option(False, "--no-undo", help="Do not let people take back their decisions."),
    undo: str = UNDO_OPT,
    replay_log: Optional[str] = typer.Option(None, "--replay", help="Watch a logged game (from --log) step by step "
                                             "instead of playing.", metavar="LOG"),
    allow_edited: bool = ALLOW_EDITED_OPT,
    card_set: Optional[List[str]] = typer.Option(None, "--card-set", help="Add a card-set YAML file (repeatable).",
                                                 metavar="FILE"),
    set_: Optional[List[str]] = typer.Option(None, "--set", help="Override a game option: NAME=VALUE (repeatable).",
                                             metavar="NAME=VALUE"),
    variant: Optional[List[str]] = typer.Option(None, "--variant", help="Apply a variant by name or file "
                                                "(repeatable, in order).", metavar="NAME|FILE"),
    hand: Optional[List[str]] = typer.Option(None, "--hand", help="The cards a seat brings, in games with hands: "
                                             "SEAT=FILE or SEAT=PRESET (repeatable).", metavar="SEAT=FILE"),
    paused: bool = typer.Option(False, "--paused", help="The bots wait until the host runs or steps them from the "
                                "host's panel."),
) -> None:
    """Play a game in the browser with bots and friends, open a lobby of a folder's games, or watch a logged game.

    Prints one address per seat, each with its own secret token: only whoever has a seat's
    address can play it. The table listens on 127.0.0.1 (this machine) unless --host says otherwise.
    """
    screen = Screen()
    if bot_delay < 0:
        usage(screen, f"--bot-delay must be 0 or more seconds, not {bot_delay}")
    if replay_log is not None:
        clash = [name for name, given in (("--players", players is not None), ("--seed", seed is not None),
                                          ("--bots", bots is not None), ("--agent", bool(agent)), ("--log", log),
                                          ("--set", bool(set_)), ("--variant", bool(variant)),
                                          ("--card-set", bool(card_set)), ("--hand", bool(hand))) if given]
        if clash:
            usage(screen, f"--replay shows a logged game as it was played: {', '.join(clash)} do not apply",
                  "the log records the game's seed, players, options and variants")
        _serve_replay(screen, replay_log, game, host, port, no_browser, allow_edited)
        return
    if allow_edited:
        usage(screen, "--allow-edited applies to a log read with --replay")
    if game is None:
        usage(screen, "give the game's YAML file (e.g. rulesvm serve games/my_game.yaml), a folder of games "
              "(a lobby), or --replay LOG")
    if os.path.isdir(game):
        clash = [name for name, given in (("--players", players is not None), ("--seed", seed is not None),
                                          ("--bots", bots is not None), ("--agent", bool(agent)), ("--log", log),
                                          ("--set", bool(set_)), ("--variant", bool(variant)),
                                          ("--card-set", bool(card_set)), ("--hand", bool(hand)),
                                          ("--no-undo", no_undo), ("--paused", paused)) if given]
        if clash:
            usage(screen, f"a lobby ({game} is a folder): {', '.join(clash)} do not apply",
                  "the host picks the game, its options and seats on the host's page")
        _serve_lobby(screen, game, host, port, no_browser, bot_delay)
        return
    check_writable(screen, log, force, "log")
    any_undo = undo_any(screen, undo)
    _serve_game(screen, game, players, seed, bots, agent, host, port, no_browser, log, bot_delay,
                None if no_undo else ("any" if any_undo else "safe"), card_set, set_, variant, hand, paused)


def _bot_seats(screen: Screen, bots: Optional[str], agent: Optional[List[str]], n: int) -> dict:
    specs = {}
    for piece in (bots or "").split(","):
        piece = piece.strip()
        if piece:
            specs[parse_seat(screen, piece, n, "--bots")] = "random"
    if bots is not None and not specs:
        usage(screen, "--bots: list seat numbers, e.g. --bots 2,3")
    for s, name in seat_pairs(screen, agent, n, "--agent", "SEAT=NAME, e.g. 2=mcts:iterations=300"):
        specs[s] = name
    for s, spec in specs.items():
        try:
            make_agent(spec, 0)
        except AgentSpecError as exc:
            usage(screen, f"seat {s + 1}: {exc}", "`rulesvm agents` lists the bots and their parameters")
    return specs


def _serve_game(screen, game, players, seed, bots, agent, host, port, no_browser, log, bot_delay, undo_mode,
                card_set, set_, variant, hand, paused=False) -> None:
    """`undo_mode`: None (no undo), "safe" or "any" (see --undo)."""
    g = load(screen, game, card_set, variant, set_)
    n = player_count(screen, g, players)
    specs = _bot_seats(screen, bots, agent, n)
    hands = read_hands(screen, g, hand, n)
    sock = _listen(screen, host, port)
    if seed is None:
        seed = secrets.randbelow(10**9)
    log_writer = None
    if log:
        log_writer = JsonlLog(log, log_header(g, log, {s: specs.get(s, "human") for s in range(n)}))

    def record(rec: dict) -> None:
        log_writer(rec)
        if rec["type"] in ("decision", "end", "undo"):
            log_writer.fh.flush()       # the log is complete up to the last move, even if the table is killed

    try:
        table = web_table.Table(g, n, seed, specs, record=record if log_writer else None, bot_delay=bot_delay,
                                    undo=undo_mode is not None, undo_any=undo_mode == "any", hands=hands,
                                    paused=paused)
    except RulesRuntimeError as exc:
        sock.close()
        screen.runtime_error(exc)
        raise typer.Exit(1)
    except ValueError as exc:            # e.g. hands that need more copies than the game has
        sock.close()
        screen.error(str(exc))
        raise typer.Exit(1)

    def on_end(match) -> None:
        if table.error:
            screen.error(f"the game stopped: {table.error}")
        else:
            screen.result(match.result, {s: (f"bot {specs[s]}" if s in specs else "person") for s in range(n)}, g.name)
        sys.stdout.flush()
    table.on_end = on_end
    port = sock.getsockname()[1]
    base = f"http://{_url_host(host)}:{port}"
    variants = f", variants {', '.join(g.variants)}" if g.variants else ""
    screen.out.print(Text(f"{g.name}: {n} player{'s' if n != 1 else ''}, seed {seed}{variants}", style="bold"))
    first = None
    for s in range(n):
        url = f"{base}/seat/{table.seat_token[s]}"
        who = f"bot {specs[s]}, watch only" if s in specs else "a person"
        screen.out.print(Text.assemble(f"  Player {s + 1} ({who}): ", (url, "cyan")))
        if first is None and s not in specs:
            first = url
    the_host = web_host.Host()
    screen.out.print(Text.assemble("  Host (lobby and panel, keep it to yourself): ",
                                   (f"{base}/host/{the_host.token}", "cyan")))
    if paused:
        screen.note("The bots are paused: run or step them from the host's panel.")
    if host in ("0.0.0.0", "::"):
        screen.note("Others on the network: use this machine's address instead of "
                    f"{_url_host(host).strip('[]')} in the addresses above.")
    elif host != "127.0.0.1" and host != "localhost":
        screen.note(f"Listening on {host}: anyone who can reach it and has a seat's address can play that seat.")
    if log:
        screen.note(f"Logging to {log} (replay it with `rulesvm serve --replay {log}`).")
    screen.note("Give each player their own address. Ctrl-C stops the table.")
    sys.stdout.flush()
    if not no_browser:
        _open_browser(first or f"{base}/seat/{table.seat_token[0]}")
    # uvicorn stops on SIGTERM too, then passes the signal on: end as after Ctrl-C, so the
    # log is closed with its checksum rather than cut off.
    previous = signal.signal(signal.SIGTERM, _terminated)
    try:
        _run_server(server.create_app(table, host=the_host), sock)
    except Terminated:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        if log_writer is not None:
            log_writer.close()
        screen.note("Table closed.")


def _serve_lobby(screen, folder, host, port, no_browser, bot_delay) -> None:
    """A lobby: the games of `folder`; the host opens tables from the host's page."""
    catalogue = web_lobby.Catalogue.scan(folder)
    for name, reason in catalogue.skipped:
        screen.note(f"not listed: {name} ({reason})")
    if not catalogue.games:
        screen.error(f"no game files in {folder}", "a game file is a YAML file with `rules:` (see docs/tutorial.md)")
        raise typer.Exit(1)
    sock = _listen(screen, host, port)
    the_host = web_host.Host(catalogue)
    url = f"http://{_url_host(host)}:{sock.getsockname()[1]}/host/{the_host.token}"
    count = len(catalogue.games)
    screen.out.print(Text(f"Lobby of {folder}: {count} game{'s' if count != 1 else ''}", style="bold"))
    screen.out.print(Text.assemble("  Host (keep it to yourself): ", (url, "cyan")))
    screen.note("Open a table there, then give each player their seat's address. Ctrl-C stops the server.")
    sys.stdout.flush()
    if not no_browser:
        _open_browser(url)
    previous = signal.signal(signal.SIGTERM, _terminated)
    try:
        _run_server(server.create_app(host=the_host, bot_delay=bot_delay), sock)
    except Terminated:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        screen.note("Lobby closed.")


class Terminated(Exception):
    """SIGTERM, raised where the table's server passes it on once it has stopped."""


def _terminated(signum, frame) -> None:
    raise Terminated()


def _serve_replay(screen, path, game, host, port, no_browser, allow_edited) -> None:
    if game is not None:
        require_file(screen, game)
    require_file(screen, path, "log", (".jsonl",))
    try:
        logged = logs.read_log(path, allow_edited)
        if logged.warnings:
            screen.diagnostics(logged.warnings)
            screen.note("showing the edited log anyway (--allow-edited); every record is still checked")
        g = logs.game_for_log(logged, game)
        logs.check_records(logged, g)        # E057 where a record is not what the replayed game writes
        book = web_replay.ReplayBook(logged, g)
    except DiagnosticError as exc:
        screen.diagnostics(exc.diagnostics)
        raise typer.Exit(1)
    except RulesRuntimeError as exc:
        screen.runtime_error(exc)
        raise typer.Exit(1)
    except ValueError as exc:
        usage(screen, str(exc))
    if book.problem:
        screen.error(f"the replay stops early: {book.problem}",
                     "the game files changed since the log was written; the viewer shows the game up to there")
    sock = _listen(screen, host, port)
    url = f"http://{_url_host(host)}:{sock.getsockname()[1]}/replay/{book.token}"
    screen.out.print(Text(f"{g.name}: replay of {path} ({book.steps} decisions, seed {logged.start['seed']})",
                          style="bold"))
    screen.out.print(Text.assemble("  Replay: ", (url, "cyan")))
    screen.note("Step with the arrow keys; view as any seat or with everything revealed. Ctrl-C stops.")
    sys.stdout.flush()
    if not no_browser:
        _open_browser(url)
    try:
        _run_server(server.create_app(book=book), sock)
    finally:
        screen.note("Replay closed.")
