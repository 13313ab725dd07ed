"""One headless Chromium launcher for every page test: Debian's chromium driven through its
chromedriver by selenium. Skipped where they are missing, a failure under CI=true (the page
tests must run there). Used by tests/pages/conftest.py (share pages, reports) and by the API
access page tests (tests/session_browser.py)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
CHROMIUM = os.environ.get("BATHTUB_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")


def missing() -> str | None:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install '.[test]')"
    if not CHROMIUM or not CHROMEDRIVER:
        return "Chromium and its chromedriver are not installed (apt-get install chromium chromium-driver)"
    return None


@contextmanager
def chromium(width: int = 1280, height: int = 1600, console: bool = False) -> Iterator[Any]:
    """A headless Chromium session (`console`: keep the page's console log for the test)."""
    why = missing()
    if why:
        if IN_CI:
            pytest.fail(f"CI=true but {why}: the browser tests must run")
        pytest.skip(why)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM  # type: ignore[assignment]
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                f"--window-size={width},{height}", "--hide-scrollbars", "--force-device-scale-factor=1",
                "--disable-extensions", "--no-first-run"):
        options.add_argument(arg)
    if console:
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(180)  # a loaded machine (CI, shared cores) renders slowly
    try:
        yield driver
    finally:
        driver.quit()
