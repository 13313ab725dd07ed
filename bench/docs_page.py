"""How long the docs page takes to show its operations in headless Chromium: from navigation until
the operations are on screen and the page is ready for input, then until rbd/create, clicked
open, shows its request body example. A fresh browser each round: nothing cached.

--page docs (default) is /api/v1/docs, the operation index rendered on the server (each
operation a `details.op`); --page try is Swagger UI at /api/v1/docs/try (each operation an
`.opblock`), the page /api/v1/docs was before; --page swagger measures Swagger UI at /api/v1/docs
itself, for a checkout from before the index. The service runs in this process (a thread) on a
loopback port over a throwaway SQLite store; run it against another checkout with
PYTHONPATH=<checkout>/python.

    python bench/docs_page.py [--rounds 3] [--page docs|try|swagger]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import socket
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from aiohttp import web
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from bathtub_api.app import create_app
from bathtub_api.config import Config


def _serve(config: Config) -> tuple[str, Any]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True).start()
    runner = web.AppRunner(create_app(config))
    asyncio.run_coroutine_threadsafe(runner.setup(), loop).result(60)
    asyncio.run_coroutine_threadsafe(web.TCPSite(runner, "127.0.0.1", port).start(), loop).result(60)

    def stop() -> None:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(60)
        loop.call_soon_threadsafe(loop.stop)

    return f"http://127.0.0.1:{port}", stop


def _browser() -> Any:
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or shutil.which("chromium-browser") or ""
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1280,1600", "--disable-extensions", "--no-first-run"):
        options.add_argument(arg)
    options.page_load_strategy = "none"
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or ""), options=options)
    driver.set_page_load_timeout(180)
    return driver


# page -> (path, an operation's selector, the part clicked to open it, its example once shown)
PAGES = {
    "docs": ("/api/v1/docs", "details.op", "summary", ".example pre"),
    "try": ("/api/v1/docs/try", ".opblock", ".opblock-summary", ".body-param__example, .highlight-code"),
    "swagger": ("/api/v1/docs", ".opblock", ".opblock-summary", ".body-param__example, .highlight-code"),
}


def one_round(base: str, page: str) -> tuple[float, float, float]:
    """Seconds to show the operations, then to open rbd/create with its example (a fresh browser
    each round: nothing cached), and the browser's own count to DOM interactive (no polling in it:
    the wall times include each poll's round trip to chromedriver, tens of ms on a loaded machine)."""
    path, operation, opener, example = PAGES[page]
    driver = _browser()
    try:
        wait = WebDriverWait(driver, 180, poll_frequency=0.02)
        start = time.perf_counter()
        # page_load_strategy "none": get() returns at once and the waits below say when the page
        # is usable (operations displayed, the document parsed), not when every asset has loaded.
        driver.get(f"{base}{path}")
        wait.until(lambda d: (found := d.find_elements(By.CSS_SELECTOR, operation)) and found[0].is_displayed()
                   and d.execute_script("return document.readyState") != "loading")
        shown = time.perf_counter() - start
        interactive = driver.execute_script(
            "return performance.getEntriesByType('navigation')[0].domInteractive / 1000")
        block = driver.find_element(By.ID, "operations-rbd-rbd_create")
        start = time.perf_counter()
        block.find_element(By.CSS_SELECTOR, opener).click()
        wait.until(lambda d: any(e.is_displayed() for e in block.find_elements(By.CSS_SELECTOR, example)))
        opened = time.perf_counter() - start
        return shown, opened, interactive
    finally:
        driver.quit()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--page", choices=sorted(PAGES), default="docs")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base, stop = _serve(Config(database_url=f"sqlite:///{Path(tmp) / 'bench.db'}"))
        try:
            rounds = [one_round(base, args.page) for _ in range(args.rounds)]
        finally:
            stop()
    for label, values in (("operations shown", [r[0] for r in rounds]), ("rbd/create opened", [r[1] for r in rounds]),
                          ("DOM interactive (browser's clock)", [r[2] for r in rounds])):
        print(f"{args.page} {label}: median {statistics.median(values):.2f} s (min {min(values):.2f}, "
              f"max {max(values):.2f}, {len(values)} rounds)")


if __name__ == "__main__":
    main()
