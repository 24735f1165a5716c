"""Card texts and explained automatic moves in a real browser (headless system Chromium,
Playwright, as tests/test_web_e2e.py): a hand card's tooltip and its "i" zoom say what the
card does; the other seats' hidden hands carry no text; a move the engine made for the
person is told in the log. Screenshots go to tests/artifacts/web/.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from .conftest import ROOT
from .test_web_e2e import ARTIFACTS, CHROMIUM, MY_TURN, Server, browser, new_page  # noqa: F401

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM),
                                reason=f"no system Chromium at {CHROMIUM} (apt-get install chromium)")
sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed")

RED_5 = "Start card: adds 5 to your power when played."


def test_a_hand_card_says_what_it_does(browser):      # noqa: F811 (the fixture)
    with Server("games/giant_king.yaml", "--bots", "2,3,4", "--seed", "3", "--bot-delay", "0") as server:
        page = new_page(browser, server.urls[0])
        page.wait_for_selector(MY_TURN)
        card = page.locator(".player.mine [data-card='start_red_5']").first
        assert RED_5 in card.get_attribute("title")          # the tooltip
        assert RED_5 in card.get_attribute("data-text")
        card.hover()
        card.locator(".card-info").click()                   # tap-to-zoom
        zoom = page.locator("#card-zoom")
        sync_api.expect(zoom).to_be_visible()
        sync_api.expect(zoom.locator("h2")).to_have_text("Red 5")
        assert RED_5 in zoom.locator(".card-zoom-text").inner_text()
        os.makedirs(ARTIFACTS, exist_ok=True)
        page.screenshot(path=os.path.join(ARTIFACTS, "cardtext_zoom_giant_king.png"))
        zoom.click()
        sync_api.expect(zoom).to_be_hidden()
        # Clicking "i" did not choose the card: the decision still waits.
        assert page.locator(MY_TURN).count() > 0
        # The option buttons say it too.
        option = page.locator("#options button", has_text="Red 5")
        assert RED_5 in option.get_attribute("title")
        # Only cards this seat sees carry text: the others' hands are backs, without any.
        assert page.locator(".card.back").count() > 0
        assert page.locator(".card.back[data-text]").count() == 0
        assert page.locator(".card.face[data-text]").count() == page.locator(".card.face").count()
        assert not page.errors, page.errors


def test_an_automatic_move_is_told_with_its_reason(browser):      # noqa: F811 (the fixture)
    with Server("games/giant_king.yaml", "--bots", "2,3,4", "--seed", "3", "--bot-delay", "0") as server:
        page = new_page(browser, server.urls[0])
        page.wait_for_selector(MY_TURN)
        # Red 5 first: nothing is at least 5 after it, so the turn ends by itself.
        page.locator("#options button", has_text="Red 5").click()
        auto = page.locator("#log .log-auto", has_text="your turn ends")
        sync_api.expect(auto.first).to_be_visible()
        assert "no card in your hand is at least 5" in auto.first.inner_text()
        sync_api.expect(page.locator("#toast")).to_contain_text("no card in your hand is at least 5")
        assert not page.errors, page.errors


def test_the_replay_viewer_shows_card_texts(browser, tmp_path):      # noqa: F811 (the fixture)
    log = tmp_path / "gk.jsonl"
    p = subprocess.run([sys.executable, "-m", "rulesvm.cli.main", "run", "games/giant_king.yaml", "--seed", "3",
                        "--log", str(log), "--quiet"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    with Server("--replay", str(log)) as server:
        page = new_page(browser, server.urls[0])
        page.keyboard.press("ArrowRight")
        card = page.locator("[data-card='start_red_5']").first
        sync_api.expect(card).to_be_attached()
        assert RED_5 in card.get_attribute("data-text") and RED_5 in card.get_attribute("title")
        assert not page.errors, page.errors
