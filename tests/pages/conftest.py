"""A real browser for page tests: Debian's headless Chromium driven through its chromedriver by
selenium. `browser` is one session for the test module; `open_page` loads a URL, waits for it,
saves a screenshot under the test's tmp_path and returns what the page logged to its console
(tests assert it is empty of errors). Reusable by any page test (sessions, share pages, reports)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
CHROMIUM = os.environ.get("BATHTUB_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")


def _missing() -> str | None:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install '.[test]')"
    if not CHROMIUM or not CHROMEDRIVER:
        return "Chromium and its chromedriver are not installed (apt-get install chromium chromium-driver)"
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    why = _missing()
    if why:
        if IN_CI:
            pytest.fail(f"CI=true but {why}: the browser tests must run")
        pytest.skip(why)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM  # type: ignore[assignment]
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,1600",
                "--hide-scrollbars", "--force-device-scale-factor=1"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def open_page(browser: Any, tmp_path: Path) -> Callable[[str, str], list[dict[str, Any]]]:
    """open_page(url, name) -> console entries of level SEVERE (errors) logged while loading; the
    full-page screenshot is saved as tmp_path/screens/<name>.png."""
    shots = tmp_path / "screens"
    shots.mkdir(exist_ok=True)

    def load(url: str, name: str) -> list[dict[str, Any]]:
        browser.get_log("browser")  # drop what earlier pages logged
        browser.get(url)
        height = browser.execute_script("return document.documentElement.scrollHeight")
        browser.set_window_size(1280, min(max(int(height), 800), 8000))
        browser.save_screenshot(str(shots / f"{name}.png"))
        return [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]

    return load
