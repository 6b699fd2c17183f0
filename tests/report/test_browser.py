"""The report as a person sees it: a real shared log's page opened in headless chromium.

The chart draws (its pixels are in the screenshot), choosing a step by click and by key shows exactly the
messages `openhands-memory view LOG --at N --messages --json` prints for that step, and the page logs no
script error. Skipped without a browser outside CI (see `_browser.py`). With REPORT_SCREENSHOT=PATH the
screenshot is also saved there (docs/report.png is made so).
"""

from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import require_real_logs_dir

from openhands_memory.cli import main

from ._browser import browser
from ._helpers import HOSTILE, content_text, recall_log

LOG_NAME = "v0_enyst-playground_issue10730_trajectory_297ev.json"
"""A real shared log whose default replay condenses 14 times in 96 steps."""
SERIES_RGB = (31, 119, 180)
"""The first pipeline's line colour (#1f77b4, `report.js` COLOURS[0])."""
PIPELINE = ["--pipeline", "default", "--tokenizer", "approximate"]


def _view_messages(
    log: Path, step: int, capsys: pytest.CaptureFixture[str], options: list[str] = PIPELINE
) -> list[dict[str, Any]]:
    capsys.readouterr()
    assert main(["view", str(log), "--at", str(step), "--messages", "--json", *options]) == 0
    return json.loads(capsys.readouterr().out)


def _shown_messages(driver: Any) -> list[dict[str, Any]]:
    return driver.execute_script(
        """return [...document.querySelectorAll('#messages .msg')].map((m) => ({
            role: m.dataset.role,
            text: m.querySelector('.msg-content').textContent,
            calls: m.querySelectorAll('.tool-call').length}));"""
    )


def _expected(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"role": m["role"], "text": content_text(m.get("content")), "calls": len(m.get("tool_calls") or [])}
        for m in messages
    ]


def _pixels_of(png: bytes, rgb: tuple[int, int, int]) -> int:
    from matplotlib.image import imread

    image = imread(io.BytesIO(png), format="png")[:, :, :3]
    target = [channel / 255 for channel in rgb]
    close = abs(image[:, :, 0] - target[0]) + abs(image[:, :, 1] - target[1]) + abs(image[:, :, 2] - target[2])
    return int((close < 0.06).sum())


def test_the_page_draws_and_shows_each_chosen_steps_messages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(require_real_logs_dir())
    log = Path(LOG_NAME)  # as a user names it, so the page names it so too
    page = tmp_path / "report.html"
    argv = ["report", str(log), *PIPELINE, "--pipeline", "no_condensation", "--pricing", "claude-sonnet-4-5"]
    assert main([*argv, "--pricing", "gpt-4o", "--out", str(page)]) == 0
    with browser() as driver:
        driver.get(page.as_uri())
        from selenium.webdriver.common.keys import Keys
        from selenium.webdriver.support.ui import WebDriverWait

        # the page's script marks the body when it has drawn everything (a guard against a hang, not a measure)
        WebDriverWait(driver, 60).until(lambda d: d.execute_script("return document.body.dataset.ready") == "1")
        canvases = driver.execute_script(
            "return [...document.querySelectorAll('#chart-tokens canvas')].map((c) => [c.width, c.height])"
        )
        assert canvases and all(w > 300 and h > 200 for w, h in canvases)
        screenshot = driver.get_screenshot_as_png()
        assert _pixels_of(screenshot, SERIES_RGB) > 500  # the first pipeline's line is drawn

        # a click on the chart chooses the step under the cursor
        over = driver.find_element("css selector", "#chart-tokens .u-over")
        from selenium.webdriver.common.action_chains import ActionChains

        ActionChains(driver).move_to_element_with_offset(over, over.size["width"] // 4, 0).click().perform()
        step = int(driver.execute_script("return document.body.dataset.step"))
        assert 1 < step < 96
        assert _shown_messages(driver) == _expected(_view_messages(log, step, capsys))
        # the right arrow key chooses the next one
        driver.find_element("tag name", "body").send_keys(Keys.ARROW_RIGHT)
        assert int(driver.execute_script("return document.body.dataset.step")) == step + 1
        assert _shown_messages(driver) == _expected(_view_messages(log, step + 1, capsys))
        # the step after the first condensation greys out what it forgot
        first = driver.execute_script("return document.querySelector('#marks tr.condensation').dataset.step")
        driver.find_element("css selector", "#marks tr.condensation").click()
        assert driver.execute_script("return document.body.dataset.step") == first
        assert driver.execute_script("return document.querySelectorAll('#forgotten .forgotten-event').length") > 0
        assert _shown_messages(driver) == _expected(_view_messages(log, int(first), capsys))

        errors = [entry for entry in driver.get_log("browser") if entry["level"] in ("SEVERE", "ERROR")]
        assert errors == []
        driver.execute_script("window.scrollTo(0, 0)")
        target = os.environ.get("REPORT_SCREENSHOT")
        if target:
            driver.set_window_size(1200, 1250)
            driver.save_screenshot(str(tmp_path / "shot.png"))
            shutil.copyfile(tmp_path / "shot.png", target)


def test_a_hostile_log_runs_nothing_and_recall_answers_are_marked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = recall_log(tmp_path / "log.jsonl")
    page = tmp_path / "report.html"
    assert main(["report", str(log), "--tokenizer", "approximate", "--out", str(page)]) == 0
    with browser() as driver:
        driver.get(page.as_uri())
        from selenium.webdriver.common.keys import Keys
        from selenium.webdriver.support.ui import WebDriverWait

        WebDriverWait(driver, 60).until(lambda d: d.execute_script("return document.body.dataset.ready") == "1")
        driver.find_element("tag name", "body").send_keys(Keys.END)  # the last step
        assert driver.execute_script("return document.body.dataset.step") == "6"
        shown = _shown_messages(driver)
        assert shown == _expected(_view_messages(log, 6, capsys))
        assert any(HOSTILE in message["text"] for message in shown)  # shown as text...
        assert driver.title.startswith("Replay of") and driver.execute_script("return document.querySelectorAll('#messages img, script:not([src])').length") == 3
        roles = driver.execute_script("return [...document.querySelectorAll('#messages .msg.recall')].map((m) => m.dataset.role)")
        assert roles == ["assistant", "tool"]  # the search_history call and its answer
        assert "1 recall answer(s)" in driver.find_element("id", "step-facts").text
        assert [entry for entry in driver.get_log("browser") if entry["level"] in ("SEVERE", "ERROR")] == []
