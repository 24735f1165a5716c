"""The lobby: the games of a folder, and a host's request for a new table checked against them.

`rulesvm serve FOLDER` lists every game file in FOLDER (the `*.yaml` files at its top level
that load as games; card sets, variants and broken files are left out, the broken ones with
the reason). The host picks a game, its variants, option values, the number of players and
who plays each seat (a person, or which bot) on the host's page (web/static/host.html);
`Catalogue.table_request` turns that choice into a loaded game and the table's settings, or
a `LobbyError` that says what is wrong.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass, field

from rulesvm import api
from rulesvm.dsl.diagnostics import DiagnosticError
from rulesvm.interpreter.agents import AgentSpecError, make_agent, registered_agents

MAX_GAMES = 200         # game files listed from one folder


class LobbyError(ValueError):
    """A table request the lobby refuses; the text says why (sent back to the host's page)."""


@dataclass
class TableRequest:
    """A checked request: the loaded game and the table's settings."""
    game: api.Game
    players: int
    seed: int
    bots: dict                  # 0-based seat -> agent spec
    undo: str | None            # None (no undo), "safe" or "any"
    paused: bool


@dataclass
class Catalogue:
    """The games of a folder, as the lobby lists them."""
    folder: str
    games: list = field(default_factory=list)       # of dicts (JSON for the page), in file-name order
    paths: dict = field(default_factory=dict)       # game id -> file path
    skipped: list = field(default_factory=list)     # (file, reason) of files that are not playable games

    @classmethod
    def scan(cls, folder: str) -> "Catalogue":
        cat = cls(os.path.abspath(folder))
        names = sorted(n for n in os.listdir(cat.folder) if n.endswith((".yaml", ".yml")))[:MAX_GAMES]
        for name in names:
            path = os.path.join(cat.folder, name)
            try:
                data = api.load_yaml_file(path, name)[0]
                if not isinstance(data, dict) or "rules" not in data:
                    continue            # a card set, a variant or a hand: not a game file
                game = api.load_game(path)
            except DiagnosticError as exc:
                first = exc.diagnostics[0]
                cat.skipped.append((name, f"{first.code}: {first.message}"))
                continue
            except (ValueError, OSError) as exc:
                cat.skipped.append((name, str(exc)))
                continue
            if game.model.id in cat.paths:
                cat.skipped.append((name, f"a second game with the id `{game.model.id}`"))
                continue
            cat.paths[game.model.id] = path
            cat.games.append(describe(game, name))
        return cat

    def table_request(self, data) -> TableRequest:
        """Check a host's request (JSON: game, players, variants, options, seats, seed,
        undo, paused) and load the game it names."""
        if not isinstance(data, dict):
            raise LobbyError("a table request is a JSON object")
        allowed = {"game", "players", "variants", "options", "seats", "seed", "undo", "paused"}
        extra = sorted(set(data) - allowed)
        if extra:
            raise LobbyError(f"unexpected field(s): {', '.join(map(str, extra))}")
        gid = data.get("game")
        if gid not in self.paths:
            raise LobbyError(f"no game `{gid}` in this lobby; games: {', '.join(self.paths) or 'none'}")
        variants = data.get("variants") or []
        options = data.get("options") or {}
        if not isinstance(variants, list) or not all(isinstance(v, str) for v in variants):
            raise LobbyError("`variants` is a list of variant names")
        if not isinstance(options, dict) or not all(isinstance(v, (str, int, bool)) for v in options.values()):
            raise LobbyError("`options` maps option names to values")
        entry = next(g for g in self.games if g["id"] == gid)
        for v in variants:
            if v not in entry["variants"]:
                raise LobbyError(f"{entry['name']} has no variant `{v}`; variants: "
                                 f"{', '.join(entry['variants']) or 'none'}")
        pairs = [f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in options.items() if v != ""]
        try:
            game = api.load_game(self.paths[gid], variants=variants, set_pairs=pairs)
        except DiagnosticError as exc:
            raise LobbyError(f"{exc.diagnostics[0].code}: {exc.diagnostics[0].message}") from None
        except ValueError as exc:
            raise LobbyError(str(exc)) from None
        lo, hi, default = game.model.players
        players = data.get("players", default)
        if not _is_int(players) or not lo <= players <= hi:
            raise LobbyError(f"{game.name} is for {lo}" + (f" to {hi}" if hi != lo else "") + f" players, not {players}")
        seats = data.get("seats") or ["human"] * players
        if not isinstance(seats, list) or len(seats) != players:
            raise LobbyError(f"`seats` lists who plays each of the {players} seats (\"human\" or a bot, e.g. \"random\")")
        bots = {}
        for s, who in enumerate(seats):
            if who == "human":
                continue
            if not isinstance(who, str):
                raise LobbyError(f"seat {s + 1}: \"human\" or a bot's name, not {who!r}")
            try:
                make_agent(who, 0)
            except AgentSpecError as exc:
                raise LobbyError(f"seat {s + 1}: {exc}") from None
            bots[s] = who
        seed = data.get("seed")
        if seed is None or seed == "":
            seed = secrets.randbelow(10**9)
        if not _is_int(seed) or seed < 0:
            raise LobbyError(f"`seed` is a whole number (0 or more), not {seed!r}")
        undo = data.get("undo", "safe")
        if undo not in ("safe", "any", None):
            raise LobbyError("`undo` is \"safe\", \"any\" or null (no undo)")
        return TableRequest(game, players, seed, bots, undo, bool(data.get("paused", False)))


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def describe(game: api.Game, file: str) -> dict:
    """A game as the lobby lists it: name, players, variants and options with their bounds."""
    m = game.model
    lo, hi, default = m.players
    options = []
    for o in m.options.values():
        if str(o.type) not in ("int", "bool", "text"):
            continue                    # lists cannot be typed into a box (as with --set)
        options.append({"name": o.name, "type": str(o.type), "default": o.default, "doc": o.doc,
                        "min": o.range[0] if o.range else None, "max": o.range[1] if o.range else None,
                        "choices": list(o.choices) if o.choices else None})
    return {"id": m.id, "name": game.name, "file": file, "players": {"min": lo, "max": hi, "default": default},
            "variants": api.variant_descriptions(game), "options": options}


def bot_names() -> list[str]:
    """The bots a seat may be given (as `rulesvm agents` lists them)."""
    return sorted(registered_agents())
