"""The docs pages in a real browser (issue 29). /api/v1/docs, rendered on the server, lists every
operation of the served document; an opened operation shows its worked example
(bathtub_api.tools.examples) and its request body's fields with their descriptions; the page
fits a phone's width and a desktop's with nothing wider than the window, and logs no error.
Swagger UI at /api/v1/docs/try renders every operation too and shows the same example, not a
body generated from the schema. How fast: bench/docs_page.py (timings are not asserted)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

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


def _operations(served: ServedApp) -> int:
    import requests

    doc = requests.get(f"{served.url}/api/v1/openapi.json", timeout=60).json()
    return sum(len(ops) for ops in doc["paths"].values())


@pytest.mark.one_store  # the docs pages render the served document: no store-specific behaviour
@pytest.mark.slow  # Chromium
@pytest.mark.parametrize("width", [400, 1300])
def test_the_index_lists_every_operation_with_its_example_at_any_width(browser: Any, served: ServedApp,
                                                                        tmp_path: Path, width: int) -> None:
    # selenium here, not at the top: its webdriver package costs ~0.55 s in every xdist worker
    from selenium.webdriver.common.by import By

    operations = _operations(served)
    browser.set_window_size(width, 1000)
    browser.get_log("browser")  # drop what earlier pages logged
    browser.get(f"{served.url}/api/v1/docs")
    blocks = browser.find_elements(By.CSS_SELECTOR, "details.op")
    assert len(blocks) == operations and blocks[0].is_displayed()
    shots = tmp_path / "screens"
    shots.mkdir(exist_ok=True)
    browser.save_screenshot(str(shots / f"docs-{width}-top.png"))  # what shows first
    block = browser.find_element(By.ID, "operations-rbd-rbd_create")
    assert not block.find_element(By.CSS_SELECTOR, ".example pre").is_displayed()  # closed until asked
    block.find_element(By.TAG_NAME, "summary").click()
    shown = block.find_element(By.CSS_SELECTOR, ".example pre")
    assert shown.is_displayed() and orjson.loads(shown.text) == EXAMPLES["rbd/create"]
    fields = {e.text for e in block.find_elements(By.CSS_SELECTOR, "ul.props > li > code.name")}
    assert {"name", "nodes", "edges", "repairable"} <= fields
    assert "Refusals" in block.text and "Try it in Swagger UI" in block.text
    # a placeholder's meaning is said under the example that uses it
    upload = browser.find_element(By.ID, "operations-datasets-datasets_upload")
    upload.find_element(By.TAG_NAME, "summary").click()
    assert "{csv_upload_id}" in upload.find_element(By.CSS_SELECTOR, "ul.placeholders").text
    # nothing is wider than the window, a phone's or a desktop's: no sideways scrolling
    overflow = browser.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
    assert overflow[0] <= overflow[1], overflow
    # a field of a named schema leads to that schema's own fields on the schema page
    outages = browser.find_element(By.ID, "operations-rbd-rbd_upload_outage_log")
    outages.find_element(By.TAG_NAME, "summary").click()
    setup = outages.find_element(By.CSS_SELECTOR, "details.setup")  # how to make the upload it names
    setup.find_element(By.TAG_NAME, "summary").click()
    assert "Asset,Start,End,Reason,Planned" in setup.find_element(By.TAG_NAME, "pre").text
    link = outages.find_element(By.CSS_SELECTOR, "ul.props a[href$='#schema-OutageColumns']")
    link.click()
    target = browser.find_element(By.ID, "schema-OutageColumns")
    assert {e.text for e in target.find_elements(By.CSS_SELECTOR, "code.name")} >= {"asset", "start", "end"}
    assert browser.execute_script("return location.pathname + location.hash") == \
        "/api/v1/docs/schemas#schema-OutageColumns"
    assert not browser.execute_script("return document.documentElement.scrollWidth > innerWidth")
    browser.back()  # the index again
    block = browser.find_element(By.ID, "operations-rbd-rbd_create")
    if block.get_attribute("open") is None:  # reopened for the screenshot when the browser did not keep it
        block.find_element(By.TAG_NAME, "summary").click()
    height = browser.execute_script("return Math.min(document.documentElement.scrollHeight, 5000)")
    browser.set_window_size(width, int(height))
    browser.execute_script("document.getElementById('operations-rbd-rbd_create').scrollIntoView()")
    browser.save_screenshot(str(shots / f"docs-{width}.png"))
    errors = [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
    assert not errors, errors


@pytest.mark.one_store
@pytest.mark.slow  # ~25 s: Chromium runs Swagger UI over the whole document
def test_swagger_ui_renders_every_operation_and_its_example(browser: Any, served: ServedApp,
                                                            open_page: Callable[[str, str], list[dict[str, Any]]]
                                                            ) -> None:
    # selenium here, not at the top: its webdriver package costs ~0.55 s in every xdist worker
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    operations = _operations(served)
    errors = open_page(f"{served.url}/api/v1/docs/try", "try")
    wait = WebDriverWait(browser, 180, poll_frequency=0.1)
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, ".opblock")) == operations)
    assert not errors, errors
    block = browser.find_element(By.ID, "operations-rbd-rbd_create")
    block.find_element(By.CSS_SELECTOR, ".opblock-summary").click()
    shown = wait.until(lambda d: [e.text for e in block.find_elements(By.CSS_SELECTOR, ".body-param__example")
                                  if e.text.strip()])
    assert orjson.loads(shown[0]) == EXAMPLES["rbd/create"]  # the worked example, not one made from the schema
    assert "additionalProp1" not in shown[0]
