"""The web table (`rulesvm serve`, web/) at the server level, with Starlette's TestClient:
seat tokens, forged and stale messages, sockets closed mid-choice, secrets, bots, undo,
determinism, the replay viewer's API, layout hints and the command's usage errors.

The browser tests are in test_web_e2e.py.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from contextlib import ExitStack

import pytest
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from rulesvm import api
from rulesvm.cli.common import JsonlLog
from rulesvm.tooling.replay import game_for_log, read_log, replay
from rulesvm.web.layout import table_layout
from rulesvm.web.replay import ReplayBook
from rulesvm.web.server import create_app
from rulesvm.web.table import Table

from .conftest import ROOT

MS = os.path.join(ROOT, "games", "mach_struggle.yaml")
GK = os.path.join(ROOT, "games", "giant_king.yaml")
LAUNCH = ["giant_king", "mach_struggle", "birthdays_fight", "ufo_abduction", "alien_attack"]


@pytest.fixture(scope="module")
def mach():
    return api.load_game(MS)


@pytest.fixture(scope="module")
def giant():
    return api.load_game(GK)


class RecordingTable(Table):
    """A table that keeps the full state of every version it sends (to judge what was hidden)."""

    def __init__(self, *args, **kwargs):
        self.snaps = {}
        super().__init__(*args, **kwargs)
        self.snaps[0] = self.match.snapshot()

    def _apply(self, seat, index):
        super()._apply(seat, index)
        self.snaps[self.version] = self.match.snapshot()

    def _undo(self, seat):
        super()._undo(seat)
        self.snaps[self.version] = self.match.snapshot()


def next_state(ws, errors=None):
    """The next `state` message (errors received before it go to `errors`)."""
    while True:
        msg = ws.receive_json()
        if msg["type"] == "state":
            return msg
        if errors is not None:
            errors.append(msg)


def my_turn(msg) -> bool:
    d = msg["decision"]
    return not msg["over"] and d is not None and d.get("mine") and "options" in d


def play_to_my_turn_or_end(ws, msg, seen=None):
    while not (msg["over"] or my_turn(msg)):
        msg = next_state(ws)
        if seen is not None:
            seen.append(msg)
    return msg


def next_error(ws) -> dict:
    """The next `error` message (states sent before it, e.g. another seat connecting, are skipped)."""
    while True:
        msg = ws.receive_json()
        if msg["type"] == "error":
            return msg


def connect(stack, client, table, seat):
    """Open a seat's socket (closed with `stack`); returns (socket, first state)."""
    ws = stack.enter_context(client.websocket_connect(f"/ws/{table.seat_token[seat]}"))
    hello = ws.receive_json()
    assert hello["type"] == "hello" and hello["seat"] == seat + 1
    return ws, next_state(ws)


# ---------------------------------------------------------------------- addresses and tokens

def test_seat_pages_need_their_token(mach):
    table = Table(mach, 2, 1)
    with TestClient(create_app(table)) as client:
        page = client.get(f"/seat/{table.seat_token[0]}")
        assert page.status_code == 200 and "table.js" in page.text
        for key in ("content-security-policy", "referrer-policy", "x-frame-options", "cache-control"):
            assert key in page.headers
        assert page.headers["referrer-policy"] == "no-referrer"
        bad = client.get("/seat/not-a-token")
        assert bad.status_code == 404 and "No seat at this address" in bad.text
        assert client.get("/api/seat/not-a-token").status_code == 404
        assert client.get("/").status_code == 200 and table.seat_token[0] not in client.get("/").text
        assert client.get("/static/table.js").status_code == 200
        assert client.get("/card-image/0").status_code == 404
        with client.websocket_connect("/ws/not-a-token") as ws:
            msg = ws.receive_json()
            assert msg["type"] == "error" and msg["fatal"] and "no seat at this address" in msg["message"]
            with pytest.raises(WebSocketDisconnect) as closed:
                ws.receive_json()
            assert closed.value.code == 4404
    # Tokens are long, random and different.
    assert len(set(table.tokens)) == 2 and all(len(t) >= 20 for t in table.tokens)


def test_socket_from_another_site_is_refused(mach):
    table = Table(mach, 2, 1)
    with TestClient(create_app(table)) as client:
        with client.websocket_connect(f"/ws/{table.seat_token[0]}", headers={"origin": "http://evil.example"}) as ws:
            msg = ws.receive_json()
            assert msg["type"] == "error" and msg["fatal"]
            with pytest.raises(WebSocketDisconnect) as closed:
                ws.receive_json()
            assert closed.value.code == 4403


# ---------------------------------------------------------------------- the engine is authoritative

def test_forged_and_stale_messages_are_rejected_and_the_game_goes_on(mach):
    table = Table(mach, 2, 4)            # two people
    with TestClient(create_app(table)) as client, ExitStack() as stack:
        ws1, s1 = connect(stack, client, table, 0)
        ws2, s2 = connect(stack, client, table, 1)
        assert my_turn(s1) and not my_turn(s2)
        serial = s1["serial"]
        forged = [
            ("not json at all", "not JSON"),
            (json.dumps([1, 2]), "JSON object"),
            (json.dumps({"type": "move", "card": "blue_attack"}), "unknown message type"),
            (json.dumps({"type": "choose", "option": 999, "serial": serial}), "option 999 does not exist"),
            (json.dumps({"type": "choose", "option": -1, "serial": serial}), "option -1 does not exist"),
            (json.dumps({"type": "choose", "option": "0", "serial": serial}), "must be an option number"),
            (json.dumps({"type": "choose", "option": True, "serial": serial}), "must be an option number"),
            (json.dumps({"type": "choose", "option": 0}), "serial"),
            (json.dumps({"type": "choose", "option": 0, "serial": serial, "label": "R1 A+ A+ AT"}),
             "unexpected field"),
            (json.dumps({"type": "choose", "option": 0, "serial": serial - 1}), "stale"),
            ("x" * 5000, "too long"),
            ("[" * 2000 + "]" * 2000, "nested too deeply"),       # Python's parser would recurse 2,000 times
        ]
        for text, expected in forged:
            ws1.send_text(text)
            err = next_error(ws1)
            assert expected in err["message"], (text[:40], err)
            again = next_state(ws1)          # the page is sent the current state again
            assert again["serial"] == serial and my_turn(again)
        ws1.send_bytes(b"\x00\x01")
        assert "not binary" in next_error(ws1)["message"]
        # Not your turn: seat 2 cannot answer seat 1's decision.
        ws2.send_json({"type": "choose", "option": 0, "serial": serial})
        assert "not your turn" in next_error(ws2)["message"]
        # Nothing moved: a real answer is still accepted.
        assert table.version == serial and table.match.decisions_made == 0
        ws1.send_json({"type": "choose", "option": 3, "serial": serial})
        s1 = next_state(ws1)
        while s1["serial"] == serial:
            s1 = next_state(ws1)
        assert s1["serial"] == serial + 1 and table.match.decisions_made == 1
        # The same answer again is stale now.
        ws1.send_json({"type": "choose", "option": 3, "serial": serial})
        assert "stale" in next_error(ws1)["message"]


def test_a_socket_closed_mid_choice_leaves_the_game_waiting_and_the_seat_can_come_back(mach):
    table = Table(mach, 2, 8, bots={1: "random"})
    with TestClient(create_app(table)) as client:
        with ExitStack() as stack:
            ws, s = connect(stack, client, table, 0)
            assert my_turn(s)
            serial = s["serial"]
        # The browser tab was closed mid-choice: the game waits.
        assert table.connected[0] == 0 and table.version == serial
        with ExitStack() as stack:
            ws, s = connect(stack, client, table, 0)      # ... and the seat's address opened again
            assert my_turn(s) and s["serial"] == serial
            assert s["log_base"] == 0 and any("initial leader" in e["text"] for e in s["log"])
            ws.send_json({"type": "choose", "option": 0, "serial": serial})
            play_to_my_turn_or_end(ws, next_state(ws))
            assert table.match.decisions_made >= 2        # the bot answered too


# ---------------------------------------------------------------------- no secrets

def _ids_in(value, out):
    if isinstance(value, dict):
        for k, v in value.items():
            if k in ("id", "card") and isinstance(v, str):
                out.add(v)
            else:
                _ids_in(v, out)
    elif isinstance(value, list):
        for v in value:
            _ids_in(v, out)
    return out


def _hidden_ids(table, snap, seat):
    """The cards `seat` can neither see nor know (a card it saw go into a hand it may name)."""
    from rulesvm.interpreter.knowledge import knows
    prog = table.match.program
    return {prog.card_ids[c] for c in range(len(prog.card_ids)) if not knows(prog, snap, c, seat)}


def _check_backs(view):
    """A card shown without its name is a back: nothing but its back and whether it lies sideways."""
    if isinstance(view, dict):
        if "facedown" in view and "name" not in view:
            assert set(view) <= {"facedown", "back", "turn"} and view.get("turn", 90) == 90, view
        for v in view.values():
            _check_backs(v)
    elif isinstance(view, list):
        for v in view:
            _check_backs(v)


def _play_capturing(table, seat, pick):
    """Play `seat` to the end with `pick(state) -> option id`; returns every message it received."""
    messages = []
    with TestClient(create_app(table)) as client:
        with client.websocket_connect(f"/ws/{table.seat_token[seat]}") as ws:
            while True:
                msg = ws.receive_json()
                messages.append(msg)
                if msg["type"] != "state":
                    continue
                if msg["over"]:
                    break
                if my_turn(msg):
                    ws.send_json({"type": "choose", "option": pick(msg), "serial": msg["serial"]})
    return messages


def _assert_no_secrets(table, messages, seat):
    states = [m for m in messages if m["type"] == "state"]
    assert states and states[-1]["over"]
    for msg in messages:
        text = json.dumps(msg)
        assert '"seed"' not in text and "rng" not in text
        if msg["type"] != "state":
            continue
        hidden = _hidden_ids(table, table.snaps[msg["serial"]], seat)
        leaked = _ids_in(msg, set()) & hidden
        assert not leaked, f"state {msg['serial']} shows cards Player {seat + 1} may not see: {sorted(leaked)}"
        _check_backs(msg["observation"])
        d = msg["decision"]
        if d is not None and d["player"] != seat + 1:
            assert "options" not in d and (not d["secret"] or d["prompt"] is None)
    return states


def test_secret_plans_and_face_down_cards_never_reach_the_other_seat(mach):
    table = RecordingTable(mach, 2, 21, bots={1: "random"})
    records = []
    table.record = records.append
    messages = _play_capturing(table, 0, lambda m: len(m["decision"]["options"]) - 1)
    _assert_no_secrets(table, messages, 0)
    mine = {r["label"] for r in records if r["type"] == "decision" and r["player"] == 1}
    theirs = {r["label"] for r in records if r["type"] == "decision" and r["player"] == 2 and r["secret"]}
    assert theirs, "the bot made secret choices"
    def without_own_options(m):       # Player 1's own plan decision lists every possible plan
        m = json.loads(json.dumps(m))
        if m.get("decision") and m["decision"].get("mine"):
            m["decision"].pop("options", None)
        return m
    everything = "\n".join(json.dumps(without_own_options(m)) for m in messages)
    for label in theirs - mine:
        assert label not in everything, f"Player 2's secret plan {label!r} reached Player 1"
    assert "made a secret choice" in everything          # ... though the log says that it was made
    # The bot seat's own page would have shown its plans (the check above is not vacuous).
    assert any(r["secret"] for r in records if r["type"] == "decision")


def test_other_hands_stay_hidden_in_a_four_player_game(giant):
    table = RecordingTable(giant, 4, 5, bots={1: "random", 2: "random", 3: "random"})
    messages = _play_capturing(table, 0, lambda m: 0)
    states = _assert_no_secrets(table, messages, 0)
    # Other hands arrive as counts (and backs), never as cards.
    saw_other_hand = False
    for msg in states:
        for p in ("2", "3", "4"):
            view = msg["observation"]["zones"]["hand"][p]
            assert "cards" not in view
            saw_other_hand |= view["count"] > 0
    assert saw_other_hand
    assert states[-1]["result"]["ranking"]


# ---------------------------------------------------------------------- bots, undo, determinism

def test_bots_play_a_whole_game_and_the_log_replays(mach, tmp_path):
    path = tmp_path / "game.jsonl"
    writer = JsonlLog(str(path), {"game_path": os.path.relpath(mach.path, str(tmp_path)), "card_sets": [],
                                   "variants": [], "agents": {"1": "random", "2": "greedy"}})
    table = Table(mach, 2, 33, bots={0: "random", 1: "greedy"}, record=writer)
    with TestClient(create_app(table)) as client:
        with client.websocket_connect(f"/ws/{table.seat_token[0]}") as ws:
            msg = ws.receive_json()
            while not (msg["type"] == "state" and msg["over"]):
                msg = ws.receive_json()
            assert "options" not in (msg["decision"] or {})
    writer.close()
    logged = read_log(str(path))
    replayed = replay(logged, game_for_log(logged))
    assert replayed.result == table.match.result and replayed.decisions_made == table.match.decisions_made


def test_same_seed_and_choices_give_the_same_log(mach, tmp_path):
    logs = []
    for name in ("a", "b"):
        path = tmp_path / f"{name}.jsonl"
        writer = JsonlLog(str(path), {"game_path": "x", "card_sets": [], "variants": [], "agents": {}})
        table = Table(mach, 2, 77, bots={1: "mcts:iterations=20"}, record=writer)
        _play_capturing(table, 0, lambda m: m["serial"] % len(m["decision"]["options"]))
        writer.close()
        logs.append(path.read_bytes())
    assert logs[0] == logs[1] and b'"type": "end"' in logs[0]


def test_undo_takes_back_a_seat_s_decision_and_the_bots_after_it(mach):
    # --undo any: the bot's secret plan has been revealed since, which safe undo refuses.
    table = Table(mach, 2, 3, bots={1: "random"}, undo_any=True)
    with TestClient(create_app(table)) as client, ExitStack() as stack:
        ws, s = connect(stack, client, table, 0)
        assert my_turn(s) and not s["can_undo"]
        ws.send_json({"type": "undo", "serial": s["serial"]})
        assert "nothing to undo" in next_error(ws)["message"]
        s = next_state(ws)
        first_options = s["decision"]["options"]
        ws.send_json({"type": "choose", "option": 5, "serial": s["serial"]})
        s = play_to_my_turn_or_end(ws, next_state(ws))
        while s["serial"] != table.version:
            s = next_state(ws)
        assert s["can_undo"] and table.match.decisions_made >= 2
        ws.send_json({"type": "undo", "serial": s["serial"] - 1})
        assert "stale" in next_error(ws)["message"]
        ws.send_json({"type": "undo", "serial": s["serial"]})
        s = next_state(ws)
        while s["serial"] != table.version or table.match.decisions_made != 0:
            s = next_state(ws)
        assert my_turn(s) and s["decision"]["options"] == first_options
        assert s["log"][-1]["text"].startswith("Player 1 took back")
        assert not any(e["kind"] == "decision" for e in s["log"])


def test_a_person_cannot_undo_past_another_person_s_decision(mach):
    table = Table(mach, 2, 3)
    with TestClient(create_app(table)) as client, ExitStack() as stack:
        ws1, s1 = connect(stack, client, table, 0)
        ws2, s2 = connect(stack, client, table, 1)
        ws1.send_json({"type": "choose", "option": 0, "serial": s1["serial"]})
        s2 = play_to_my_turn_or_end(ws2, next_state(ws2))
        ws2.send_json({"type": "choose", "option": 0, "serial": s2["serial"]})
        s1 = next_state(ws1)
        while s1["serial"] != table.version:
            s1 = next_state(ws1)
        assert not s1["can_undo"]
        ws1.send_json({"type": "undo", "serial": s1["serial"]})
        assert "another player has decided" in next_error(ws1)["message"]


def test_no_undo_table(mach):
    table = Table(mach, 2, 3, bots={1: "random"}, undo=False)
    with TestClient(create_app(table)) as client, ExitStack() as stack:
        ws, s = connect(stack, client, table, 0)
        ws.send_json({"type": "choose", "option": 0, "serial": s["serial"]})
        s = play_to_my_turn_or_end(ws, next_state(ws))
        assert not s["can_undo"]
        ws.send_json({"type": "undo", "serial": s["serial"]})
        assert "undo is off" in next_error(ws)["message"]


def test_a_rule_that_fails_stops_the_game_with_a_message_and_the_server_stays_up():
    game = api.load_game(os.path.join(ROOT, "tests", "games", "runaway.yaml"))
    table = Table(game, 1, 1)
    ended = []
    table.on_end = ended.append
    with TestClient(create_app(table)) as client, ExitStack() as stack:
        ws, s = connect(stack, client, table, 0)
        go = next(o["id"] for o in s["decision"]["options"] if o["label"] == "go")
        ws.send_json({"type": "choose", "option": go, "serial": s["serial"]})
        s = next_state(ws)
        assert s["error"] and "steps" in s["error"] and ended
        assert s["log"][-1]["text"].startswith("The game stopped")
        ws.send_json({"type": "undo", "serial": s["serial"]})
        assert "the game has stopped" in next_error(ws)["message"]
        assert client.get(f"/seat/{table.seat_token[0]}").status_code == 200


class BrokenAgent:
    def choose(self, view):
        raise RuntimeError("out of ideas")

    def get_state(self):
        return None


def test_a_broken_bot_stops_the_game_with_a_message(mach):
    table = Table(mach, 2, 1, bots={1: "random"})
    table.bots[1] = BrokenAgent()
    table.history.agents = table.bots
    with TestClient(create_app(table)) as client, ExitStack() as stack:
        ws, s = connect(stack, client, table, 0)
        ws.send_json({"type": "choose", "option": 0, "serial": s["serial"]})
        while not s["error"]:
            s = next_state(ws)
        assert "the bot of seat 2 (random) failed: out of ideas" in s["error"]


# ---------------------------------------------------------------------- the replay viewer

def test_replay_viewer_steps_as_any_seat_or_everything(giant, tmp_path):
    path = tmp_path / "gk.jsonl"
    writer = JsonlLog(str(path), {"game_path": os.path.relpath(giant.path, str(tmp_path)), "card_sets": [],
                                   "variants": [], "agents": {}})
    match = api.new_game(giant, 3, 9, sink=writer)
    api.play(match, api.default_agents(match, seed=9))
    writer.close()
    logged = read_log(str(path))
    book = ReplayBook(logged, game_for_log(logged))
    assert book.problem is None and book.steps == match.decisions_made
    with TestClient(create_app(book=book)) as client:
        assert client.get(f"/replay/{book.token}").status_code == 200
        assert client.get("/replay/wrong").status_code == 404
        assert client.get("/api/replay/wrong").status_code == 404
        info = client.get(f"/api/replay/{book.token}").json()
        assert info["steps"] == book.steps and info["players"] == 3
        everything = client.get(f"/api/replay/{book.token}/10?seat=all").json()
        as_two = client.get(f"/api/replay/{book.token}/10?seat=2").json()
        hands_all = everything["observation"]["zones"]["hand"]
        hands_two = as_two["observation"]["zones"]["hand"]
        assert "cards" in hands_all["1"] and "cards" in hands_all["2"]
        assert "cards" in hands_two["2"] and "cards" not in hands_two["1"]
        hidden = {c["id"] for c in hands_all["1"]["cards"]}
        assert not (_ids_in(as_two, set()) & hidden)
        last = client.get(f"/api/replay/{book.token}/{book.steps}?seat=all").json()
        assert last["over"] and last["result"] == match.result
        assert client.get(f"/api/replay/{book.token}/{book.steps + 1}").status_code == 404
        assert client.get(f"/api/replay/{book.token}/3?seat=9").status_code == 400
        assert client.get(f"/api/replay/{book.token}/3?seat=x").status_code == 400
        # Step k shows the k-th decision's answer (when the viewer may read it).
        step0 = client.get(f"/api/replay/{book.token}/0?seat=all").json()
        assert step0["next"]["label"] == logged.decisions[0][1]["label"]
        assert any(o.get("chosen") for o in step0["decision"]["options"])
        # No socket for a replay-only server.
        with client.websocket_connect("/ws/anything") as ws:
            assert ws.receive_json()["fatal"]


def test_replay_of_a_log_the_rules_no_longer_accept_stops_there(mach, tmp_path):
    path = tmp_path / "ms.jsonl"
    writer = JsonlLog(str(path), {"game_path": os.path.relpath(mach.path, str(tmp_path)), "card_sets": [],
                                   "variants": [], "agents": {}})
    match = api.new_game(mach, 2, 2, sink=writer)
    api.play(match, api.default_agents(match, seed=2))
    writer.close()
    lines = path.read_text().splitlines()
    k = next(i for i, line in enumerate(lines) if '"type": "decision"' in line and '"n": 3' in line)
    rec = json.loads(lines[k])
    rec["label"] = "not an option"
    lines[k] = json.dumps(rec)
    path.write_text("\n".join(lines) + "\n")
    logged = read_log(str(path), allow_edited=True)          # edited: its checksum no longer matches
    assert logged.warnings[0].code == "E057"
    book = ReplayBook(logged, game_for_log(logged))
    assert book.steps == 2 and "no longer legal" in book.problem


# ---------------------------------------------------------------------- layout and pictures

def test_default_layout_comes_from_the_zone_declarations():
    game = api.load_game(os.path.join(ROOT, "tests", "games", "constructs.yaml"))
    layout = table_layout(game.model)
    zones = layout["zones"]
    assert zones["grid"]["style"] == "grid" and zones["column"]["style"] == "columns"
    assert zones["table"]["style"] == "row" and zones["shelf"]["per_player"]
    assert layout["centre"]["flow"] == ["table", "column", "grid"]
    assert layout["player"]["flow"] == ["secret_row", "shelf"]
    assert "box" not in layout["centre"]["flow"]


@pytest.mark.parametrize("name", LAUNCH)
def test_every_launch_game_has_layout_hints_that_place_every_zone(name):
    game = api.load_game(os.path.join(ROOT, "games", f"{name}.yaml"))
    assert game.model.layout, f"{name} has no layout hints"
    layout = table_layout(game.model)
    for area in (layout["centre"], layout["player"]):
        assert area["extra"] == [], f"{name}: zones the hints forgot: {area['extra']}"


def _game_with_layout(tmp_path, layout_text: str, extra_card: str = "") -> str:
    (tmp_path / "t.rules").write_text(
        "kind token { number: int; color: text }\n"
        "zone pool: ordered, visible(all)\nzone hand: per_player, visible(owner)\n"
        "zone board: indexed(3, 2), visible(all)\n"
        "var score: int = 0, per_player\n"
        "setup { move(box, pool, face: \"up\") }\n"
        "game { let c = choose(pool, by: player(1), prompt: \"Take\")\n  move(c, hand(player(1)))\n"
        "  end_game(ranking: [player(1), player(2)]) }\n")
    (tmp_path / "t.yaml").write_text(
        "id: t\nname: T\nplayers: 2\nrules: t.rules\ncards:\n"
        "  - {id: a, kind: token, name: Golden Token, number: 1, color: red" + extra_card + "}\n"
        "  - {id: b, kind: token, name: Silver Token, number: 2, color: blue}\n" + layout_text)
    return str(tmp_path / "t.yaml")


def test_layout_hints_are_checked_with_positions(tmp_path):
    path = _game_with_layout(tmp_path, "layout:\n  centre: [pol, hand]\n  player: [[hand, hand], [hand]]\n"
                                       "  zones:\n    pool: {style: grid}\n    board: {cell_labels: [x]}\n"
                                       "  vars: {hide: [scor]}\n  cards: {number: numbr}\n")
    diags = api.validate_game(path)
    got = sorted((d.code, d.span.line, d.message) for d in diags)
    codes = [c for c, _, _ in got]
    assert codes.count("E090") == 3 and codes.count("E091") == 2 and codes.count("E092") == 2, got
    messages = " | ".join(m for _, _, m in got)
    assert "unknown zone `pol`" in messages and "per player" in messages and "different lengths" in messages
    assert any(d.hint == "did you mean `pool`?" for d in diags)
    bad_style = _game_with_layout(tmp_path, "layout:\n  zones:\n    pool: {style: fan}\n")
    assert [d.code for d in api.validate_game(bad_style)] == ["E010"]
    assert api.validate_game(_game_with_layout(tmp_path, "layout:\n  centre: [[pool, board], [pool, board]]\n")) == []
    not_rect = _game_with_layout(tmp_path, "layout:\n  centre: [[pool, board], [board, pool]]\n")
    assert "rectangle" in api.validate_game(not_rect)[0].message


def test_card_pictures_are_served_only_by_number_and_only_for_visible_cards(tmp_path):
    (tmp_path / "a.png").write_bytes(b"\x89PNG\r\n\x1a\nfake")
    path = _game_with_layout(tmp_path, "", extra_card=", image: a.png")
    game = api.load_game(path)
    table = Table(game, 2, 1)
    with TestClient(create_app(table)) as client:
        s = client.get(f"/api/seat/{table.seat_token[0]}").json()
        cards = s["observation"]["zones"]["pool"]["cards"]
        url = next(c["image"] for c in cards if c["id"] == "a")
        assert url == "/card-image/0" and client.get(url).content.startswith(b"\x89PNG")
        assert client.get("/card-image/1").status_code == 404
        assert client.get("/card-image/..%2Ft.yaml").status_code == 404
        with ExitStack() as stack:
            ws, st = connect(stack, client, table, 0)
            option = next(o for o in st["decision"]["options"] if o.get("card") == "a")
            ws.send_json({"type": "choose", "option": option["id"], "serial": st["serial"]})
            while not table.match.is_over:
                next_state(ws)
        # Now in Player 1's hand: Player 2's view of that hand is a count; it saw the card
        # taken from the pool, so it knows it (docs/language.md#what-a-seat-knows), picture and all.
        other = client.get(f"/api/seat/{table.seat_token[1]}").json()
        assert other["observation"]["zones"]["hand"]["1"] == {"count": 1}
        assert [(k["id"], k["zone"], k["image"]) for k in other["observation"]["known"]] == [("a", "hand[1]", url)]
        # A seat that never saw it is sent neither the card nor its picture.
        from rulesvm.web.views import observation
        hidden = table.match.with_state(table.match.snapshot())
        hidden.state.known[table.match.program.card_by_id["a"]] = 1        # as if only Player 1 knew it
        assert "/card-image/0" not in json.dumps(observation(hidden, 1, table.images))
        # The log names it to Player 2 too: it went where they cannot see, but they saw it go.
        assert [e["text"] for e in other["log"] if e["kind"] == "decision"] == ["Player 1: Golden Token"]
        mine = client.get(f"/api/seat/{table.seat_token[0]}").json()
        assert [e["text"] for e in mine["log"] if e["kind"] == "decision"] == ["Player 1: Golden Token"]


# ---------------------------------------------------------------------- the command

def _serve(*args, timeout=60):
    proc = subprocess.run([sys.executable, "-m", "rulesvm.cli.main", "serve", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    return proc


@pytest.mark.parametrize("args,code,message", [
    (["games/mach_struggle.yaml", "--port", "70000"], 2, "--port 70000"),
    (["games/mach_struggle.yaml", "--bots", "3"], 2, "seat 3 does not exist"),
    (["games/mach_struggle.yaml", "--bots", "two"], 2, "not a seat number"),
    (["games/mach_struggle.yaml", "--agent", "2=nobody"], 2, "unknown agent `nobody`"),
    (["games/mach_struggle.yaml", "--variant", "nope"], 2, "unknown variant `nope`"),
    (["games/mach_struggle.yaml", "--players", "3"], 2, "is for 2 players"),
    (["games/mach_struggle.yaml", "--set", "target_score=99"], 2, "target_score"),
    (["games/mach_struggle.yaml", "--host", "no.such.host.invalid"], 2, "--host"),
    (["games/mach_struggle.yaml", "--bot-delay", "-1"], 2, "--bot-delay"),
    ([], 2, "give the game's YAML file"),
    (["games/nope.yaml"], 2, "no such file"),
    (["--replay", "missing.jsonl"], 2, "no such file: missing.jsonl"),
    (["--replay", "missing.jsonl", "--seed", "3"], 2, "--seed do not apply"),
])
def test_serve_usage_errors_are_clear(args, code, message):
    proc = _serve(*args, "--no-browser")
    assert proc.returncode == code, proc.stderr
    assert message in proc.stderr, proc.stderr


def test_serve_refuses_a_port_in_use():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        proc = _serve("games/mach_struggle.yaml", "--port", str(port), "--no-browser")
    assert proc.returncode == 2 and "cannot listen" in proc.stderr and "--port" in proc.stderr


def test_safe_undo_refuses_to_step_back_over_another_seat_s_secret_choice(mach):
    """Mach Struggle's plans are secret until both are made: after the bot's plan is revealed,
    taking back one's own plan would let a player answer it. The table says why."""
    table = Table(mach, 2, 3, bots={1: "random"})
    with TestClient(create_app(table)) as client, ExitStack() as stack:
        ws, s = connect(stack, client, table, 0)
        ws.send_json({"type": "choose", "option": 5, "serial": s["serial"]})
        s = play_to_my_turn_or_end(ws, next_state(ws))
        while s["serial"] != table.version:
            s = next_state(ws)
        assert table.match.decisions_made >= 2 and not s["can_undo"]
        ws.send_json({"type": "undo", "serial": s["serial"]})
        # The bot's plan was shown when both were made: the player has seen cards since.
        assert "you have seen a card since that decision" in next_error(ws)["message"]
        assert table.match.decisions_made >= 2          # nothing was taken back


def test_a_page_that_sends_but_never_reads_is_bounded_then_dropped():
    """Its errors wait in a bounded queue (states are never queued, only marked due); past the
    bound the page is dropped, and the table goes on for the others."""
    from rulesvm.web.table import MAX_OUTBOX, Listener
    listener = Listener(0)
    for k in range(MAX_OUTBOX * 10):
        listener.send({"type": "error", "message": f"junk {k}"})
    assert len(listener.outbox) == MAX_OUTBOX and listener.overflow


def test_the_server_drops_a_page_whose_messages_pile_up(mach, monkeypatch):
    from rulesvm.web import table as table_module
    from rulesvm.web.server import CLOSE_TOO_SLOW
    monkeypatch.setattr(table_module, "MAX_OUTBOX", 0)      # the first unread message is one too many
    table = Table(mach, 2, 4)
    with TestClient(create_app(table)) as client, ExitStack() as stack:
        ws1, _ = connect(stack, client, table, 0)
        ws1.send_text("junk")
        with pytest.raises(WebSocketDisconnect) as closed:
            while True:
                ws1.receive_json()
        assert closed.value.code == CLOSE_TOO_SLOW
        ws2, s2 = connect(stack, client, table, 1)             # the table goes on for the others
        assert s2["seat"] == 2 and not table.error
