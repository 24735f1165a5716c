"""The host's debug panel: what only the host of a table is sent (docs/web.md#the-hosts-panel).

Everything here is for the host's page and API (web/host_api.py), which are reached with the
host's token only; no seat's page or socket is ever sent any of it (tests/test_web_host.py):

- the full state: the engine's state as JSON (`Match.to_json`, seed and generator included),
  everything on the table face up, the pending decision with all its options;
- the whole log, the rules' private lines and every secret choice included;
- the save (a `rulesvm resume` file) and the game log (a `rulesvm replay` file) to download;
- a replay book of the game so far, for the replay viewer.
"""

from __future__ import annotations

import json

from rulesvm import saves
from rulesvm.tooling.replay import LoggedGame

from .replay import ReplayBook
from .table import Table
from .views import EVERYONE, decision_view, observation


def table_summary(table_id: str, table: Table) -> dict:
    """A table as the host's list shows it: game, seats and their addresses, how far it is."""
    m = table.match
    return {"id": table_id, "game": {"id": table.game.model.id, "name": table.game.name,
                                     "variants": list(table.game.model.applied_variants)},
            "players": table.players, "seed": table.seed, "decisions": m.decisions_made, "over": m.is_over,
            "error": table.error,
            "seats": [{**info, "url": f"/seat/{table.seat_token[info['seat'] - 1]}"} for info in table.seats()],
            "bots": bot_status(table)}


def bot_status(table: Table) -> dict:
    return {"paused": table.paused, "delay": table.bot_delay, "waiting": _bot_waiting(table)}


def _bot_waiting(table: Table) -> bool:
    """Whether a bot is to move and held by the pause."""
    m = table.match
    return bool(table.paused and not m.is_over and not table.error and m.current_player in table.bots)


def host_state(table_id: str, table: Table) -> dict:
    """Everything about the table, for the host only."""
    m = table.match
    decision = decision_view(m, EVERYONE)
    return {"type": "host_state", "table": table_summary(table_id, table), "serial": table.version,
            "state": m.to_json(), "observation": observation(m, EVERYONE, table.images), "decision": decision,
            "log": host_log(table), "over": m.is_over, "result": m.result, "error": table.error,
            "layout": table.layout}


def host_log(table: Table) -> list[dict]:
    """The whole log with what each line is (a rules line, a decision, a note), who it is for
    and who decided, so the host's page can filter it."""
    out = []
    step = 0                    # decisions before the line: where "replay from here" starts
    for e in table.public.entries:
        item = {"kind": e["kind"], "to": e["to"], "step": step}
        step += e["kind"] == "decision"
        if e["kind"] == "decision":
            item.update({"text": f"Player {e['player']}: {e['label']}" + (" (secret)" if e["secret"] else ""),
                         "player": e["player"], "secret": e["secret"], "prompt": e["prompt"]})
        else:
            item["text"] = e["text"]
        out.append(item)
    return out


def _start_record(table: Table) -> dict:
    """The log's start record, naming the game's files by absolute path (the download may be
    kept anywhere) and each seat's player, as `rulesvm serve --log` writes it."""
    g = table.game
    header = {"game_path": g.path, "card_sets": [str(c) for c in g.card_sets],
              "variants": list(g.variants),
              "agents": {str(s + 1): table.specs.get(s, "human") for s in range(table.players)}}
    return {**table.records[0], **header}


def log_text(table: Table) -> str:
    """The game so far as a JSON Lines log with its checksum (`rulesvm replay` reads it)."""
    check = saves.LogChecksum()
    lines = []
    for i, rec in enumerate(table.records):
        line = json.dumps(_start_record(table) if i == 0 else rec, ensure_ascii=False, sort_keys=True) + "\n"
        check.add(line)
        lines.append(line)
    lines.append(json.dumps(check.record(), ensure_ascii=False, sort_keys=True) + "\n")
    return "".join(lines)


def save_text(table: Table) -> str:
    """The game as a save file (`rulesvm resume` continues it)."""
    data = saves.save_data(table.match, table.game, table.moves.moves, table.game.path, table.bots, table.specs)
    return json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True)


def replay_book(table: Table) -> ReplayBook:
    """The game so far in the replay viewer (its decisions, undone ones left out)."""
    decisions = []
    for i, rec in enumerate(table.records):
        if rec["type"] == "decision":
            decisions.append((i + 1, rec))
        elif rec["type"] == "undo":
            del decisions[rec["to"]:]
    log = LoggedGame(path="(table)", start=_start_record(table), decisions=decisions, end=None,
                     records=list(table.records))
    return ReplayBook(log, table.game, table.images.base)
