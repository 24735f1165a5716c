"""Screenshots of each launch game's web table at the start, mid-game and the end, for the
docs (docs/web.md#the-launch-games-at-the-table), plus the host's lobby and panel.

Each game is served as a user serves it (`rulesvm serve GAME --paused`, every seat a bot);
the host's panel API steps the bots to the middle of the game (half of the decisions the same
seed and bots make in a whole game, counted beforehand with the API) and then runs them to
the end. Seat 1's page is photographed at 1400x950 in headless Chromium (Playwright, the
`test` extra; the system's /usr/bin/chromium).

    .venv/bin/python benchmarks/screenshots.py                    # every game, into docs/img/
    .venv/bin/python benchmarks/screenshots.py --games mach_struggle --out /tmp/shots
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
import urllib.request

from playwright.sync_api import sync_playwright

from rulesvm import api

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHROMIUM = "/usr/bin/chromium"
VIEWPORT = {"width": 1400, "height": 950}
# game -> (players, seed): the tables photographed (every seat a random bot).
GAMES = {
    "giant_king": (4, 4),
    "mach_struggle": (2, 5),
    "birthdays_fight": (2, 3),
    "ufo_abduction": (1, 2),
    "alien_attack": (1, 2),
}


PANEL_GAME = "giant_king"      # the table the host's panel is photographed at, mid-game


def decisions_in_game(game: str, players: int, seed: int) -> int:
    """How many decisions the table's bots make in the whole game (they play as the table's)."""
    g = api.load_game(os.path.join(ROOT, "games", f"{game}.yaml"))
    match = api.new_game(g, players, seed)
    bots = api.make_agents({s: "random" for s in range(players)}, seed)
    while not match.is_over:
        match.apply(bots[match.current_player].choose(api.SeatView(match, match.current_player)))
    return match.decisions_made


class Table:
    """`rulesvm serve GAME --paused` with every seat a bot; its seat 1 and host addresses."""

    def __init__(self, game: str, players: int, seed: int):
        bots = ",".join(str(s) for s in range(1, players + 1))
        self.proc = subprocess.Popen([sys.executable, "-m", "rulesvm.cli.main", "serve", f"games/{game}.yaml",
                                      "--players", str(players), "--bots", bots, "--seed", str(seed), "--paused",
                                      "--bot-delay", "0", "--port", "0", "--no-browser"],
                                     cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        out = []
        for line in self.proc.stdout:
            out.append(line)
            if "Ctrl-C" in line:
                break
        text = "".join(out)
        self.seat = re.search(r"(http://127\.0\.0\.1:\d+/seat/\S+)", text).group(1)
        host = re.search(r"(http://127\.0\.0\.1:\d+)/host/(\S+)", text)
        self.api = f"{host.group(1)}/api/host/{host.group(2)}/tables/t1"
        self.host_page = f"{host.group(1)}/host/{host.group(2)}"

    def state(self) -> dict:
        with urllib.request.urlopen(self.api) as r:
            return json.load(r)

    def bots(self, action: str) -> None:
        req = urllib.request.Request(self.api + "/bots", data=json.dumps({"action": action}).encode(),
                                     headers={"content-type": "application/json"}, method="POST")
        urllib.request.urlopen(req).close()

    def wait(self, done, timeout: float = 300) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            s = self.state()
            if done(s):
                return s
            time.sleep(0.05)
        raise TimeoutError(f"the table did not get there in {timeout} s")

    def step_to(self, decisions: int) -> None:
        while self.state()["table"]["decisions"] < decisions and not self.state()["over"]:
            made = self.state()["table"]["decisions"]
            self.bots("step")
            self.wait(lambda s: s["table"]["decisions"] > made or s["over"])

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=20)
        self.proc.stdout.close()


def shoot(page, url: str, path: str, settle: str = ".zone") -> None:
    page.goto(url)
    page.wait_for_selector(settle)
    page.wait_for_timeout(400)          # the socket's first state, then fonts
    page.screenshot(path=path)
    print(path)


def lobby(page, out: str) -> None:
    """The host's lobby of games/, a Mach Struggle table being set up."""
    proc = subprocess.Popen([sys.executable, "-m", "rulesvm.cli.main", "serve", "games", "--port", "0",
                             "--no-browser"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        text = ""
        for line in proc.stdout:
            text += line
            if "Ctrl-C" in line:
                break
        page.goto(re.search(r"(http://127\.0\.0\.1:\d+/host/\S+)", text).group(1))
        page.wait_for_selector("#game option", state="attached")
        page.select_option("#game", "mach_struggle")
        page.locator("[data-variant='wide_track']").check()
        page.select_option("[data-seat='2']", "mcts")
        page.wait_for_timeout(300)
        path = os.path.join(out, "web_host_lobby.png")
        page.screenshot(path=path)
        print(path)
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        proc.stdout.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", nargs="*", default=list(GAMES), choices=list(GAMES))
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "img"))
    ap.add_argument("--lobby", action="store_true", help="only the lobby's picture")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport=VIEWPORT)
        lobby(page, args.out)
        for game in [] if args.lobby else args.games:
            players, seed = GAMES[game]
            total = decisions_in_game(game, players, seed)
            table = Table(game, players, seed)
            try:
                shoot(page, table.seat, os.path.join(args.out, f"web_{game}_start.png"))
                table.step_to(total // 2)
                shoot(page, table.seat, os.path.join(args.out, f"web_{game}_mid.png"))
                if game == PANEL_GAME:
                    shoot(page, table.host_page, os.path.join(args.out, "web_host_panel.png"), "#state-json")
                table.bots("run")
                table.wait(lambda s: s["over"])
                shoot(page, table.seat, os.path.join(args.out, f"web_{game}_end.png"), ".result-box")
            finally:
                table.close()
        browser.close()


if __name__ == "__main__":
    main()
