"""The web table in a real browser: headless Chromium (the system's, /usr/bin/chromium) driven
by Playwright, against `rulesvm serve` started as a user starts it, on a free loopback port.

A person plays a whole Mach Struggle game by clicking and typing against a bot; the pages and
the socket frames of a seat never hold the other seat's hidden cards or secret plans; the
replay viewer steps through the game; and a screenshot of each launch game's table is saved
in tests/artifacts/web/ (docs/img/web_GAME.png are copies of them, shown in docs/web.md).

The tests skip when /usr/bin/chromium is missing (`apt-get install chromium`; .ci/run does it).
They wait on the page's state, never on the clock.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from .conftest import ROOT

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ARTIFACTS = os.path.join(ROOT, "tests", "artifacts", "web")
VIEWPORT = {"width": 1366, "height": 860}
TIMEOUT_MS = 20_000

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM),
                                reason=f"no system Chromium at {CHROMIUM} (apt-get install chromium)")
sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed")


class Server:
    """`rulesvm serve ...` in a subprocess; `urls` has one address per seat (or the replay's)."""

    def __init__(self, *args):
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen([sys.executable, "-m", "rulesvm.cli.main", "serve", *args, "--port", "0",
                                      "--no-browser"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, env=env)
        self.urls = []
        self.output = []
        for line in self.proc.stdout:
            self.output.append(line)
            m = re.search(r"(http://127\.0\.0\.1:\d+/(?:seat|replay)/\S+)", line)
            if m:
                self.urls.append(m.group(1))
            if "Ctrl-C" in line:
                break
        assert self.urls, "".join(self.output)

    def close(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.proc.stdout.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


@pytest.fixture(scope="module")
def browser():
    pw = sync_api.sync_playwright().start()
    b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    yield b
    b.close()
    pw.stop()


def new_page(browser, url, frames=None):
    page = browser.new_page(viewport=VIEWPORT)
    page.set_default_timeout(TIMEOUT_MS)
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.errors = errors
    if frames is not None:
        page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: frames.append(payload)))
    page.goto(url)
    return page


MY_TURN = "#decision.active:not(.sent) #options button"
OVER = "#result:not([hidden])"


def wait_turn_or_end(page) -> bool:
    """Wait until this seat must decide (True) or the game is over (False)."""
    page.wait_for_selector(f"{MY_TURN}, {OVER}")
    return page.locator(OVER).count() == 0


def hidden_ids_in_dom(page, prefix: str) -> list:
    """Card ids shown on the table, not counting the "You know" strip (cards this seat saw
    before they went out of sight: docs/language.md#what-a-seat-knows)."""
    return page.evaluate("(p) => [...document.querySelectorAll('[data-card]')].filter(e => !e.closest('.known'))"
                         ".map(e => e.dataset.card).filter(id => id.startsWith(p))", prefix)


def test_a_person_plays_mach_struggle_against_a_bot_in_the_browser(browser, tmp_path):
    log = tmp_path / "game.jsonl"
    frames = []
    # --undo any: the bot's secret plan is revealed before Player 1 takes theirs back.
    with Server("games/mach_struggle.yaml", "--bots", "2", "--seed", "11", "--bot-delay", "0",
                "--log", str(log), "--undo", "any") as server:
        me = new_page(browser, server.urls[0], frames)
        bot_page = new_page(browser, server.urls[1])
        assert "Mach Struggle" in me.locator("#game-name").inner_text()
        sync_api.expect(me.locator("#who")).to_have_text("You are Player 1 of 2")
        turns = 0
        undone = False
        while wait_turn_or_end(me):
            # Whenever Player 1 decides, all of Player 2's cards are in their hand or face down.
            assert hidden_ids_in_dom(me, "blue_") == [], "Player 2's hidden cards are in Player 1's page"
            assert "blue_" not in me.evaluate("() => { const b = document.body.cloneNode(true); "
                                              "b.querySelectorAll('.known').forEach(e => e.remove()); return b.outerHTML; }")
            prompt = me.locator("#decision .prompt").inner_text()
            if prompt.startswith("Set your aim"):
                turns += 1
                plan = ["R2 A+ AT D-", "R1 D- HB A+", "R2 AT A+ A+"][turns % 3]
                if turns % 2:
                    me.fill("#step-type", plan.lower())              # type the whole plan, any case
                    me.press("#step-type", "Enter")
                else:                                                # or pick it card by card
                    for code in plan.split():
                        me.locator(f'#options button[data-pick^="{code} "]').click()
                sync_api.expect(me.locator("#confirm .confirm-label")).to_have_text(plan)
                me.keyboard.press("Enter")                           # Commit is focused
                if not undone:
                    # Take it back once (U) and choose again by clicking.
                    wait_turn_or_end(me)
                    sync_api.expect(me.locator("#undo")).to_be_enabled()
                    me.keyboard.press("u")
                    sync_api.expect(me.locator("#log")).to_contain_text("Player 1 took back")
                    assert wait_turn_or_end(me)
                    sync_api.expect(me.locator("#decision .prompt")).to_have_text(re.compile("^Set your aim"))
                    assert "Player 1: " not in me.locator("#log").inner_text()    # the plan is gone
                    undone = True
                    for _ in range(4):                               # the first pick of each step
                        me.locator("#options button").nth(0).click()
                    me.locator("#commit").click()
            else:
                me.keyboard.press("1")                               # number keys pick options
        # The result page, on both seats' pages.
        result = me.locator("#result")
        sync_api.expect(result).to_contain_text("Game over")
        rows = result.locator("table.ranking tr")
        sync_api.expect(rows).to_have_count(3)
        sync_api.expect(result).to_contain_text("Player 1 (you)")
        sync_api.expect(bot_page.locator("#result")).to_contain_text("Game over")
        sync_api.expect(me.locator("#status")).to_contain_text("Game over")
        assert turns >= 3
        assert not me.errors and not bot_page.errors, me.errors + bot_page.errors
    # Player 1's socket never carried Player 2's secret plans (its own decision lists every
    # possible plan, so those lists are left out of the search).
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert records[-2]["type"] == "end" and records[-1]["type"] == "checksum"     # closed on SIGTERM
    mine = {r["label"] for r in records if r["type"] == "decision" and r["player"] == 1}
    theirs = {r["label"] for r in records if r["type"] == "decision" and r["player"] == 2 and r["secret"]}
    shown = []
    for payload in frames:
        msg = json.loads(payload)
        if (msg.get("decision") or {}).get("mine"):
            msg["decision"].pop("options", None)
        shown.append(json.dumps(msg))
    text = "\n".join(shown)
    assert theirs and not [label for label in theirs - mine if label in text]
    assert '"seed"' not in text
    # The table's log is an ordinary game log: `rulesvm replay` accepts it (undo included).
    check = subprocess.run([sys.executable, "-m", "rulesvm.cli.main", "replay", str(log)], cwd=ROOT,
                           capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, check.stderr
    # The log replays in the replay viewer: step through it, as a seat and with everything shown.
    with Server("--replay", str(log)) as server:
        page = new_page(browser, server.urls[0])
        sync_api.expect(page.locator("#step-text")).to_have_text(re.compile(r"^step 0 of \d+$"))
        steps = int(page.locator("#step-text").inner_text().split()[-1])
        page.keyboard.press("ArrowRight")
        sync_api.expect(page.locator("#step-text")).to_have_text(f"step 1 of {steps}")
        sync_api.expect(page.locator("[data-card^='blue_']").first).to_be_attached()   # everything revealed
        page.select_option("#seat", "1")
        page.locator("#first").click()
        sync_api.expect(page.locator("#step-text")).to_have_text(f"step 0 of {steps}")
        sync_api.expect(page.locator("[data-card^='green_']").first).to_be_attached()
        assert hidden_ids_in_dom(page, "blue_") == []
        page.keyboard.press("End")
        sync_api.expect(page.locator("#status")).to_contain_text("Game over")
        assert not page.errors, page.errors


def test_a_wrong_seat_address_explains_itself(browser):
    with Server("games/mach_struggle.yaml", "--seed", "1") as server:
        base = server.urls[0].rsplit("/seat/", 1)[0]
        page = new_page(browser, base + "/seat/no-such-token")
        sync_api.expect(page.locator("h1")).to_have_text("No seat at this address")


SCREENSHOTS = [
    ("giant_king", ["--bots", "2,3,4", "--seed", "4"], 3),
    ("mach_struggle", ["--bots", "2", "--seed", "5"], 2),
    ("birthdays_fight", ["--bots", "2", "--seed", "3"], 6),
    ("ufo_abduction", ["--seed", "2"], 9),
    ("alien_attack", ["--seed", "2"], 4),
]


@pytest.mark.parametrize("game,args,moves", SCREENSHOTS, ids=[g for g, _, _ in SCREENSHOTS])
def test_screenshot_of_each_launch_game(browser, game, args, moves):
    os.makedirs(ARTIFACTS, exist_ok=True)
    with Server(f"games/{game}.yaml", "--bot-delay", "0", *args) as server:
        page = new_page(browser, server.urls[0])
        for _ in range(moves):
            if not wait_turn_or_end(page):
                break
            cards = page.locator("#table .card.choosable")
            (cards if cards.count() else page.locator(MY_TURN)).first.click()    # a card on the table, or a button
            if page.locator("#commit").count():
                page.locator("#commit").click()
        wait_turn_or_end(page)
        page.wait_for_selector(".player.mine, .centre")
        # The table shows backs for hidden cards and faces for visible ones, laid out by the hints.
        assert page.locator(".card.face").count() > 0
        assert page.locator(".zone").count() >= 4
        page.screenshot(path=os.path.join(ARTIFACTS, f"web_{game}.png"))
        assert not page.errors, page.errors
