"""The docs page in a real browser (issue 29): Swagger UI renders every operation from the
served document, and an opened operation shows its worked example (bathtub_api.tools.examples),
not a body generated from the schema. How fast: bench/docs_page.py (timings are not asserted)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import orjson
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from bathtub_api.config import Config
from bathtub_api.tools.examples import EXAMPLES
from tests.session_browser import ServedApp


@pytest.fixture
def served(config: Config) -> Iterator[ServedApp]:
    app = ServedApp.bathtub(config)
    try:
        yield app
    finally:
        app.close()


@pytest.mark.one_store  # the docs page renders the served document: no store-specific behaviour
@pytest.mark.slow  # ~25 s: Chromium renders every operation
def test_operations_render_and_show_their_examples(browser: Any, served: ServedApp,
                                                    open_page: Callable[[str, str], list[dict[str, Any]]]) -> None:
    import requests

    doc = requests.get(f"{served.url}/api/v1/openapi.json", timeout=60).json()
    operations = sum(len(ops) for ops in doc["paths"].values())
    errors = open_page(f"{served.url}/api/v1/docs", "docs")
    wait = WebDriverWait(browser, 180, poll_frequency=0.1)
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, ".opblock")) == operations)
    assert not errors, errors
    block = browser.find_element(By.ID, "operations-rbd-rbd_create")
    block.find_element(By.CSS_SELECTOR, ".opblock-summary").click()
    shown = wait.until(lambda d: [e.text for e in block.find_elements(By.CSS_SELECTOR, ".body-param__example")
                                  if e.text.strip()])
    assert orjson.loads(shown[0]) == EXAMPLES["rbd/create"]  # the worked example, not one made from the schema
    assert "additionalProp1" not in shown[0]
