"""A real headless browser for the report's tests: Debian's chromium, driven by selenium through chromedriver.

`browser()` skips the calling test when there is none (fails it under CI, where .ci/run installs it).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

BROWSER_HINT = "no headless browser: install Debian's chromium and chromium-driver (apt-get install chromium chromium-driver; .ci/run does)"


def _is_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"true", "1", "yes"}


def _programs() -> tuple[str, str]:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if chromium is None or driver is None:
        if _is_ci():
            pytest.fail(f"CI needs a browser: {BROWSER_HINT}", pytrace=False)
        pytest.skip(BROWSER_HINT)
    return chromium, driver


@contextmanager
def browser(width: int = 1400, height: int = 1000) -> Iterator[Any]:
    """A headless chromium (a selenium `WebDriver`) that keeps the page's console messages; closed afterwards."""
    chromium, driver = _programs()
    try:
        from selenium import webdriver
    except ImportError:
        if _is_ci():
            pytest.fail("CI needs selenium (the test extra) to drive the browser", pytrace=False)
        pytest.skip("selenium is not installed (pip install -e '.[test]')")
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = chromium
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     f"--window-size={width},{height}", "--hide-scrollbars", "--force-device-scale-factor=1"):
        options.add_argument(argument)  # fmt: skip
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    session = webdriver.Chrome(service=Service(driver), options=options)
    try:
        yield session
    finally:
        session.quit()
