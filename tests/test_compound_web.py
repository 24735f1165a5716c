"""A compound choice (`choose` with `steps:`) in the web table, in headless Chromium: the
decider picks one step at a time (buttons, number keys, Backspace to take a pick back, a
typed pick or whole option), nothing leaves the page before the last pick, and the other
seat's page shows only that a secret choice is being made. Screenshots go to
tests/artifacts/web/ (web_steps_*.png)."""

from __future__ import annotations

import json
import os

from .test_web_e2e import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, Server, new_page, sync_api


def _browser():
    pw = sync_api.sync_playwright().start()
    return pw, pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


def _options(page) -> list:
    return page.locator("#options button .option-label").all_inner_texts()


def test_dinner_picked_step_by_step_in_the_browser(tmp_path):
    os.makedirs(ARTIFACTS, exist_ok=True)
    log = tmp_path / "game.jsonl"
    pw, browser = _browser()
    try:
        with Server("tests/games/compound/dinner.yaml", "--seed", "1", "--log", str(log)) as server:
            sent, theirs = [], []
            me = new_page(browser, server.urls[0])
            me.on("websocket", lambda ws: ws.on("framesent", lambda payload: sent.append(payload)))
            me.reload()
            other = new_page(browser, server.urls[1], theirs)
            title = me.locator("#decision .step-title")
            sync_api.expect(title).to_have_text("Step 1 of 3: Starter")
            assert _options(me) == ["soup", "salad"]
            sync_api.expect(me.locator("#step-back")).to_be_disabled()
            me.locator("#options button", has_text="salad").click()
            sync_api.expect(title).to_have_text("Step 2 of 3: Main")
            sync_api.expect(me.locator("#step-trail li.done")).to_have_text(["Startersalad"])
            me.keyboard.press("1")                                     # number keys pick too: fish
            sync_api.expect(title).to_have_text("Step 3 of 3: Drink")
            assert _options(me) == ["white (drink)", "water (drink)"]  # no red wine with fish
            me.screenshot(path=os.path.join(ARTIFACTS, "web_steps_dinner.png"))
            me.keyboard.press("Backspace")                             # take the fish back
            sync_api.expect(title).to_have_text("Step 2 of 3: Main")
            me.locator("#options button", has_text="steak").click()
            sync_api.expect(title).to_have_text("Step 3 of 3: Drink")
            assert _options(me) == ["white (drink)", "red (drink)", "water (drink)"]
            # Nothing of the half-made order left Player 1's page, and Player 2 sees only a secret choice.
            assert not [f for f in sent if '"choose"' in f], sent
            sync_api.expect(other.locator("#status")).to_have_text("Player 1 is choosing in secret…")
            for word in ("salad", "steak", "Starter"):
                assert word not in other.content()
                assert not [f for f in theirs if word in f]
            me.fill("#step-type", "red")                               # a typed pick ends the order
            me.press("#step-type", "Enter")
            sync_api.expect(other.locator("#decision .step-title")).to_have_text("Step 1 of 3: Starter")
            assert [json.loads(f)["option"] for f in sent if '"choose"' in f] == [11]   # salad steak red
            other.fill("#step-type", "Soup Pasta Water")              # or the whole order at once
            other.press("#step-type", "Enter")
            sync_api.expect(me.locator("#result")).to_contain_text("Game over")
            sync_api.expect(me.locator("#log")).to_contain_text("Player 1 ordered salad steak red")
            assert not me.errors and not other.errors, me.errors + other.errors
        records = [json.loads(line) for line in log.read_text().splitlines()]
        assert [r["label"] for r in records if r["type"] == "decision"] == ["salad steak red", "soup pasta water"]
    finally:
        browser.close()
        pw.stop()


def test_mach_struggle_plan_card_by_card_with_commit(tmp_path):
    pw, browser = _browser()
    try:
        with Server("games/mach_struggle.yaml", "--bots", "2", "--seed", "5", "--bot-delay", "0") as server:
            me = new_page(browser, server.urls[0])
            title = me.locator("#decision .step-title")
            sync_api.expect(title).to_have_text("Step 1 of 4: Aim")
            me.locator("#options button", has_text="R2 range 2").click()
            me.locator("#options button", has_text="HB hard brake").click()
            sync_api.expect(title).to_have_text("Step 3 of 4: Round 2 maneuver")
            assert _options(me) == ["A+ accelerate", "D- decelerate"]     # one Attack/Hard brake card
            me.keyboard.press("2")
            me.keyboard.press("1")
            sync_api.expect(me.locator("#confirm .confirm-label")).to_have_text("R2 HB D- A+")
            sync_api.expect(me.locator("#decision .step-done")).to_have_text("Your choice: R2 HB D- A+")
            me.screenshot(path=os.path.join(ARTIFACTS, "web_steps_mach_struggle.png"))
            me.locator("#commit").click()
            sync_api.expect(me.locator("#log")).to_contain_text("Player 1 aims at range 2")
            assert not me.errors, me.errors
    finally:
        browser.close()
        pw.stop()
