"""A real browser for page tests: Debian's headless Chromium driven through its chromedriver by
selenium. `browser` is one session for the test module; `open_page` loads a URL, waits for it,
saves a screenshot under the test's tmp_path and returns what the page logged to its console
(tests assert it is empty of errors). Reusable by any page test (sessions, share pages, reports)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser import chromium


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium(console=True) as driver:
        yield driver


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
