"""The host's pages and the layout's widgets in a real browser: headless Chromium driven by
Playwright against `rulesvm serve` started as a user starts it (the set-up of
test_web_e2e.py). A host opens a table from the lobby; the panel pauses and steps a bot and
shows the full state, which the seats' pages never receive; the track, counter and die
widgets draw the game's variables. Screenshots go to tests/artifacts/web/.
"""

from __future__ import annotations

import glob
import json
import os
import re

import pytest

from .conftest import ROOT
from . import test_web_e2e
from .test_web_e2e import ARTIFACTS, CHROMIUM, Server, new_page

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM),
                                reason=f"no system Chromium at {CHROMIUM} (apt-get install chromium)")
sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed")
expect = sync_api.expect
browser = test_web_e2e.browser          # the fixture: one Chromium for the module


def host_url(server: Server) -> str:
    m = re.search(r"(http://127\.0\.0\.1:\d+/host/\S+)", "".join(server.output))
    assert m, "".join(server.output)
    return m.group(1)


class LobbyServer(Server):
    """`rulesvm serve FOLDER`: it prints the host's address only (Server needs a seat's)."""

    def __init__(self, *args):
        try:
            super().__init__(*args)
        except AssertionError:
            pass
        assert "/host/" in "".join(self.output), "".join(self.output)


def shot(page, name: str) -> None:
    os.makedirs(ARTIFACTS, exist_ok=True)
    page.screenshot(path=os.path.join(ARTIFACTS, name))


def test_a_host_opens_a_table_from_the_lobby(browser):
    with LobbyServer("games", "--bot-delay", "0") as server:
        host = new_page(browser, host_url(server))
        expect(host.locator("#lobby")).to_be_visible()
        expect(host.locator("#game option")).to_have_count(len(glob.glob(os.path.join(ROOT, "games", "*.yaml"))))
        host.select_option("#game", "mach_struggle")
        expect(host.locator("#players")).to_have_value("2")
        expect(host.locator("[data-variant]")).to_have_count(2)
        host.locator("[data-variant='wide_track']").check()
        host.fill("[data-option='target_score']", "4")
        host.select_option("[data-seat='1']", "human")
        host.select_option("[data-seat='2']", "mcts")
        expect(host.locator("[data-params='1']")).to_be_hidden()
        host.fill("[data-params='2']", "iterations=20")
        host.fill("#seed", "8")
        shot(host, "host_lobby.png")
        host.locator("#open").click()
        expect(host.locator("#panel-title")).to_contain_text("Mach Struggle")
        expect(host.locator("#panel-title")).to_contain_text("wide_track")
        expect(host.locator("#panel-title")).to_contain_text("seed 8")
        expect(host.locator(".table-item")).to_have_count(1)
        expect(host.locator("[data-seat-link]")).to_have_count(2)
        expect(host.locator("[data-seat-link='2']")).to_contain_text("bot mcts:iterations=20")
        seat_url = host.locator("[data-seat-link='1']").get_attribute("href")
        # The seat's link opens that seat's page, with the variant's wider race track.
        me = new_page(browser, host.url.split("/host/")[0] + seat_url)
        expect(me.locator("#who")).to_have_text("You are Player 1 of 2")
        expect(me.locator("[data-widget='race'] .track-cell")).to_have_count(7)
        expect(host.locator("[data-seat-link='1']")).to_contain_text("online")
        # A bad request is refused with its reason, and no table is opened.
        host.fill("[data-option='max_gap']", "9")
        host.locator("#open").click()
        expect(host.locator("#toast")).to_contain_text("between 1 and 5")
        expect(host.locator(".table-item")).to_have_count(1)
        assert not host.errors and not me.errors, host.errors + me.errors


def test_the_host_panel_steps_a_paused_bot_and_only_the_host_sees_the_state(browser):
    frames = []
    with Server("games/giant_king.yaml", "--players", "3", "--bots", "1,2,3", "--seed", "6", "--paused",
                "--bot-delay", "0") as server:
        seat = new_page(browser, server.urls[0], frames)
        host = new_page(browser, host_url(server))
        expect(host.locator("#bot-state")).to_contain_text("bots paused")
        expect(host.locator("#bot-state")).to_contain_text("0 decisions")
        expect(host.locator("#bot-state")).to_have_attribute("data-waiting", "true")
        expect(seat.locator("#status")).to_contain_text("paused the bots")     # the seats are told why
        for k in (1, 2, 3):
            host.locator("#step").click()
            expect(host.locator("#bot-state")).to_contain_text(f" {k} decisions")
        host.wait_for_timeout(300)
        expect(host.locator("#bot-state")).to_contain_text(" 3 decisions")      # a step is one move, no more
        expect(host.locator("#host-log .log-decision")).to_have_count(3)
        # The log's filters.
        host.locator("#f-decision").uncheck()
        expect(host.locator("#host-log .log-decision")).to_have_count(0)
        host.locator("#f-decision").check()
        deciders = [t.split(":")[0] for t in host.locator("#host-log .log-decision .log-text").all_inner_texts()]
        first = deciders[0].split()[-1]
        host.select_option("#f-player", first)
        expect(host.locator("#host-log .log-decision")).to_have_count(deciders.count(f"Player {first}"))
        host.fill("#f-text", "no line says this")
        expect(host.locator("#host-log li")).to_have_count(0)
        host.fill("#f-text", "")
        host.select_option("#f-player", "")
        # The full state is on the host's page ...
        state = json.loads(host.locator("#state-json").inner_text())
        rng = state["match"]["state"]["rng"]
        assert state["match"]["seed"] == 6 and rng
        expect(host.locator(".host-table [data-card]").first).to_be_attached()     # everything revealed
        shot(host, "host_panel.png")
        # ... and never on a seat's: not in its page, not in anything its socket received.
        expect(seat.locator("#log")).to_contain_text("End turn")         # the seat has seen the moves
        assert rng not in seat.content()
        assert seat.locator("#state-json").count() == 0
        received = "\n".join(f if isinstance(f, str) else f.decode() for f in frames)
        assert received and rng not in received and '"seed"' not in received and '"rng"' not in received
        # Replay so far opens the replay viewer at the game's current step.
        with host.context.expect_page() as opened:
            host.locator("#replay").click()
        replay = opened.value
        expect(replay.locator("#step-text")).to_have_text(re.compile(r"^step 0 of 3$"))
        # A log line's button opens the replay at the decision before it.
        with host.context.expect_page() as opened:
            host.locator("#host-log .log-decision .jump").nth(1).click()
        expect(opened.value.locator("#step-text")).to_have_text("step 1 of 3")
        # Run: the bots play the game to its end.
        host.fill("#delay", "0")
        host.locator("#run").click()
        expect(host.locator("#bot-state")).to_contain_text("game over", timeout=120_000)
        expect(seat.locator("#result")).to_contain_text("Game over", timeout=60_000)     # it catches up
        assert not host.errors and not seat.errors, host.errors + seat.errors


def test_track_counter_and_die_widgets_show_the_variables(browser):
    with Server("tests/games/widgets/race.yaml", "--bots", "2", "--seed", "3", "--bot-delay", "0") as server:
        me = new_page(browser, server.urls[0])
        track = me.locator("[data-widget='track']")
        expect(track.locator(".track-cell")).to_have_count(13)                  # 0 to goal (12)
        expect(track.locator(".marker")).to_have_count(2)
        expect(track.locator(".marker[data-seat='1']")).to_have_attribute("data-position", "0")
        expect(me.locator("[data-widget='round'] .counter-value")).to_have_text("1")
        expect(me.locator(".player.mine [data-widget='die'] .die")).to_have_attribute("data-value", "")
        me.locator("#options button", has_text="Roll").click()
        die = me.locator(".player.mine [data-widget='die'] .die")
        expect(die).not_to_have_attribute("data-value", "")
        rolled = int(die.get_attribute("data-value"))
        expect(die.locator(".pip.on")).to_have_count(rolled)                   # pips, as on a die
        expect(track.locator(".marker[data-seat='1']")).to_have_attribute("data-position", str(rolled))
        cell = track.locator(f".track-cell[data-position='{rolled}'] .marker[data-seat='1']")
        expect(cell).to_have_count(1)                                          # on its square
        lead = me.locator("[data-widget='lead']")
        expect(lead.locator(".track-ends")).to_contain_text("Player 1 ahead")
        expect(lead.locator(".marker", has_text="Player 2")).to_have_attribute("data-position", "0")
        shot(me, "widgets_race.png")
        assert not me.errors, me.errors
