"""The host's lobby and debug panel (web/host.py, lobby.py, panel.py, host_api.py) at the
server level, with Starlette's TestClient: the host's token, opening tables from a folder's
games, bots paused / stepped / run, the downloads, replay from the panel, and the guarantee
that a seat's page or socket never receives what only the host sees.

The browser tests of the same pages are in test_web_e2e.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import pathlib
import subprocess
import sys
from contextlib import ExitStack

import pytest
from starlette.testclient import TestClient

from rulesvm import api, saves
from rulesvm.tooling.replay import game_for_log, read_log, replay
from rulesvm.web.host import Host
from rulesvm.web.lobby import Catalogue
from rulesvm.web.server import create_app
from rulesvm.web.table import Table

from .conftest import ROOT

MS = os.path.join(ROOT, "games", "mach_struggle.yaml")


@pytest.fixture(scope="module")
def mach():
    return api.load_game(MS)


@pytest.fixture(scope="module")
def catalogue():
    return Catalogue.scan(os.path.join(ROOT, "games"))


def wait_until(client, url, ok, tries=400):
    """GET `url` until `ok(json)` holds (the bots play on the server's loop meanwhile)."""
    for _ in range(tries):
        data = client.get(url).json()
        if ok(data):
            return data
        client.portal.call(_sleep)
    raise AssertionError(f"{url} never got there: {data}")


async def _sleep():
    await asyncio.sleep(0.01)


# ---------------------------------------------------------------------- the host's token

def test_the_host_pages_need_the_host_token_and_a_seat_token_is_not_it(mach):
    table = Table(mach, 2, 3, bots={1: "random"})
    host = Host()
    with TestClient(create_app(table, host=host)) as client:
        assert client.get(f"/host/{host.token}").status_code == 200
        assert client.get(f"/api/host/{host.token}").json()["tables"][0]["id"] == "t1"
        for token in ("nope", table.seat_token[0], table.seat_token[1], host.token[:-1]):
            page = client.get(f"/host/{token}")
            assert page.status_code == 404 and "No host at this address" in page.text
            for path in ("", "/tables/t1", "/tables/t1/save", "/tables/t1/log"):
                assert client.get(f"/api/host/{token}{path}").status_code == 404
            assert client.post(f"/api/host/{token}/tables/t1/bots", json={"action": "run"}).status_code == 404
            assert client.post(f"/api/host/{token}/tables/t1/replay", json={}).status_code == 404
        # The host's token is not a seat's either.
        assert client.get(f"/seat/{host.token}").status_code == 404
        assert client.get(f"/api/host/{host.token}/tables/t9").status_code == 404


def test_a_post_from_another_site_is_refused(mach):
    table = Table(mach, 2, 3, bots={0: "random", 1: "random"}, paused=True)
    host = Host()
    with TestClient(create_app(table, host=host)) as client:
        r = client.post(f"/api/host/{host.token}/tables/t1/bots", json={"action": "run"},
                        headers={"origin": "http://evil.example"})
        assert r.status_code == 403
        assert table.paused
        assert client.post(f"/api/host/{host.token}/tables/t1/bots", content=b"x" * 20000).status_code == 413
        assert client.post(f"/api/host/{host.token}/tables/t1/bots", json={"action": "fly"}).status_code == 400
        r = client.post(f"/api/host/{host.token}/tables/t1/bots", json={"action": "delay", "delay": 99})
        assert r.status_code == 400 and "0 to 10" in r.json()["error"]


# ---------------------------------------------------------------------- the host-only guarantee

def test_the_full_state_reaches_the_host_and_never_a_seat(mach):
    """Every message a seat's socket receives over a whole game, and its state API, hold
    nothing of the host's state: not the engine state, not the generator, not the seed."""
    table = Table(mach, 2, 77, bots={1: "random"})
    host = Host()
    seen = []
    with TestClient(create_app(table, host=host)) as client, ExitStack() as stack:
        ws = stack.enter_context(client.websocket_connect(f"/ws/{table.seat_token[0]}"))
        host_states = []
        while True:
            msg = ws.receive_json()
            seen.append(msg)
            if msg["type"] != "state":
                continue
            host_states.append(client.get(f"/api/host/{host.token}/tables/t1").json())
            seen.append(client.get(f"/api/seat/{table.seat_token[0]}").json())
            if msg["over"]:
                break
            d = msg["decision"]
            if d and d.get("mine") and "options" in d:
                ws.send_json({"type": "choose", "option": len(d["options"]) - 1, "serial": msg["serial"]})
    rngs = {h["state"]["state"]["rng"] for h in host_states}
    assert all(h["state"]["seed"] == 77 for h in host_states)
    final = host_states[-1]["log"]
    mine = {e["text"].split(": ", 1)[1] for e in final if e["kind"] == "decision" and e["player"] == 1}
    theirs = {e["text"].split(": ", 1)[1].removesuffix(" (secret)") for e in final
              if e["kind"] == "decision" and e["player"] == 2 and e["secret"]}
    assert theirs, "the host's log holds the bot's secret plans"

    def without_own_options(m):       # Player 1's own plan decision lists every possible plan
        m = json.loads(json.dumps(m))
        if (m.get("decision") or {}).get("mine"):
            m["decision"].pop("options", None)
        return m
    text = "\n".join(json.dumps(without_own_options(m)) for m in seen)
    for label in theirs - mine:
        assert label not in text, f"Player 2's secret plan {label!r} reached Player 1's seat"
    for rng in rngs:
        assert rng not in text
    for key in ('"rng"', '"seed"', '"fingerprint"', '"frames"', '"host_state"'):
        assert key not in text
    assert all(m.get("type") in ("hello", "state", "error") for m in seen)


# ---------------------------------------------------------------------- bots held by the host

def test_the_host_pauses_steps_and_runs_the_bots(mach):
    table = Table(mach, 2, 5, bots={0: "random", 1: "random"}, paused=True)
    host = Host()
    url = f"/api/host/{host.token}/tables/t1"
    with TestClient(create_app(table, host=host)) as client:
        state = client.get(url).json()
        assert state["table"]["decisions"] == 0 and state["table"]["bots"] == {
            "paused": True, "delay": 0.0, "waiting": True}
        for k in (1, 2, 3):
            assert client.post(url + "/bots", json={"action": "step"}).status_code == 200
            state = wait_until(client, url, lambda s: s["table"]["decisions"] >= k)
            assert state["table"]["decisions"] == k       # one move per step, never more
        client.portal.call(_sleep)
        assert client.get(url).json()["table"]["decisions"] == 3
        assert client.post(url + "/bots", json={"action": "delay", "delay": 0}).json()["bots"]["delay"] == 0
        client.post(url + "/bots", json={"action": "run"})
        state = wait_until(client, url, lambda s: s["over"])
        assert state["result"]["ranking"] and not state["table"]["bots"]["paused"]
        assert state["log"] and {e["kind"] for e in state["log"]} >= {"log", "decision"}
        assert any(e["kind"] == "decision" and e["secret"] for e in state["log"])


# ---------------------------------------------------------------------- downloads and replay

def test_the_host_downloads_a_save_and_a_log_that_resume_and_replay(mach, tmp_path):
    table = Table(mach, 2, 9, bots={0: "random", 1: "greedy"})
    host = Host()
    url = f"/api/host/{host.token}/tables/t1"
    with TestClient(create_app(table, host=host)) as client:
        wait_until(client, url, lambda s: s["table"]["decisions"] >= 6)
        client.post(url + "/bots", json={"action": "pause"})
        client.portal.call(_sleep)
        made = client.get(url).json()["table"]["decisions"]
        save = client.get(url + "/save")
        assert save.headers["content-disposition"].startswith("attachment")
        log = client.get(url + "/log")
        assert "attachment" in log.headers["content-disposition"]
        opened = client.post(url + "/replay", json={}).json()
        info = client.get(f"/api/replay/{opened['url'].rsplit('/', 1)[1]}").json()
        assert info["steps"] == made == opened["steps"]
        assert client.get(f"/api/replay/{opened['url'].rsplit('/', 1)[1]}/{made}?seat=1").status_code == 200
    (tmp_path / "game.save.json").write_text(save.text)
    game, match, data = saves.load_saved(str(tmp_path / "game.save.json"))
    assert match.decisions_made == made and data["agents"] == {"1": "random", "2": "greedy"}
    (tmp_path / "game.jsonl").write_text(log.text)
    logged = read_log(str(tmp_path / "game.jsonl"))            # the checksum matches
    replayed = replay(logged, game_for_log(logged))
    assert replayed.decisions_made == made
    assert replayed.state.gvars == match.state.gvars
    check = subprocess.run([sys.executable, "-m", "rulesvm.cli.main", "replay", str(tmp_path / "game.jsonl")],
                           cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, check.stderr


# ---------------------------------------------------------------------- the lobby

def test_the_lobby_lists_a_folder_s_games(catalogue):
    ids = [g["id"] for g in catalogue.games]
    # Every game file of the folder, by id, in order.
    assert ids == sorted(p.stem for p in pathlib.Path(ROOT, "games").glob("*.yaml"))
    assert {"alien_attack", "birthdays_fight", "giant_king", "mach_struggle", "ufo_abduction"} <= set(ids)
    ms = next(g for g in catalogue.games if g["id"] == "mach_struggle")
    assert ms["players"] == {"min": 2, "max": 2, "default": 2}
    assert set(ms["variants"]) == {"long_race", "wide_track"}
    assert {o["name"]: (o["default"], o["min"], o["max"]) for o in ms["options"]}["max_gap"] == (2, 1, 5)
    skipped = Catalogue.scan(os.path.join(ROOT, "tests", "games"))
    assert "constructs" in [g["id"] for g in skipped.games]
    assert not [f for f, _ in skipped.skipped if f in ("extra_cards.yaml", "good_cards.yaml")], \
        "card sets are not games, and not problems either"


@pytest.mark.parametrize("request_json,message", [
    ({"game": "chess"}, "no game `chess`"),
    ({"game": "mach_struggle", "players": 3}, "for 2 players, not 3"),
    ({"game": "mach_struggle", "seats": ["human", "alphago"]}, "seat 2"),
    ({"game": "mach_struggle", "options": {"max_gap": "9"}}, "between 1 and 5"),
    ({"game": "mach_struggle", "options": {"speed": "1"}}, "unknown option `speed`"),
    ({"game": "mach_struggle", "variants": ["short"]}, "no variant `short`"),
    ({"game": "mach_struggle", "seats": ["human"]}, "each of the 2 seats"),
    ({"game": "mach_struggle", "seed": -1}, "`seed`"),
    ({"game": "mach_struggle", "colour": "red"}, "unexpected field"),
    ([1, 2], "a JSON object"),
])
def test_the_lobby_refuses_a_bad_request_with_a_reason(catalogue, request_json, message):
    host = Host(catalogue)
    with TestClient(create_app(host=host)) as client:
        r = client.post(f"/api/host/{host.token}/tables", json=request_json)
        assert r.status_code == 400 and message in r.json()["error"], r.json()
        assert host.tables == {}


def test_the_host_opens_tables_from_the_lobby_and_the_seats_play(catalogue):
    host = Host(catalogue)
    with TestClient(create_app(host=host, bot_delay=0)) as client, ExitStack() as stack:
        overview = client.get(f"/api/host/{host.token}").json()
        assert overview["lobby"]["games"] and "random" in overview["bots"] and overview["tables"] == []
        r = client.post(f"/api/host/{host.token}/tables", json={
            "game": "mach_struggle", "variants": ["wide_track"], "options": {"target_score": "3"},
            "seats": ["human", "greedy"], "seed": 12})
        assert r.status_code == 200, r.text
        t = r.json()["table"]
        assert t["id"] == "t1" and t["seed"] == 12 and t["game"]["variants"] == ["wide_track"]
        assert [s["kind"] for s in t["seats"]] == ["human", "bot"] and t["seats"][1]["agent"] == "greedy"
        table = host.tables["t1"]
        assert table.game.options["target_score"] == 3 and table.game.options["max_gap"] == 3
        race = table.layout["widgets"]["race"]
        assert (race["from"], race["to"]) == (-3, 3)       # the variant's max_gap
        assert client.get(t["seats"][0]["url"]).status_code == 200
        ws = stack.enter_context(client.websocket_connect(t["seats"][0]["url"].replace("/seat/", "/ws/")))
        hello = ws.receive_json()
        assert hello["type"] == "hello" and hello["game"]["id"] == "mach_struggle"
        # A second table, of another game, with its own seats.
        r = client.post(f"/api/host/{host.token}/tables", json={"game": "giant_king", "players": 3,
                                                                 "seats": ["random", "random", "random"]})
        t2 = r.json()["table"]
        assert t2["id"] == "t2" and len(t2["seats"]) == 3
        assert {s["url"] for s in t["seats"]}.isdisjoint({s["url"] for s in t2["seats"]})
        overview = client.get(f"/api/host/{host.token}").json()
        assert [x["id"] for x in overview["tables"]] == ["t1", "t2"]
        wait_until(client, f"/api/host/{host.token}/tables/t2", lambda s: s["over"], tries=3000)


def test_serve_a_folder_prints_the_host_address_and_refuses_table_options(tmp_path):
    empty = subprocess.run([sys.executable, "-m", "rulesvm.cli.main", "serve", str(tmp_path), "--no-browser"],
                           cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert empty.returncode == 1 and "no game files in" in empty.stderr and "Traceback" not in empty.stderr
    bad = subprocess.run([sys.executable, "-m", "rulesvm.cli.main", "serve", "games", "--players", "3",
                          "--no-browser", "--port", "0"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--players" in bad.stderr and "do not apply" in bad.stderr
    proc = subprocess.Popen([sys.executable, "-m", "rulesvm.cli.main", "serve", "games", "--no-browser", "--port", "0"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        lines = []
        for line in proc.stdout:
            lines.append(line)
            if "Ctrl-C" in line:
                break
        out = "".join(lines)
        assert f"Lobby of games: {len(list(pathlib.Path(ROOT, 'games').glob('*.yaml')))} games" in out and "/host/" in out, out
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        proc.stdout.close()
