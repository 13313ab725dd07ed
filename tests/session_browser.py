"""Headless Chromium for the API access page tests (Debian's /usr/bin/chromium and chromedriver,
driven by selenium), and the app served on a loopback port in its own thread so the blocking
browser can talk to it. A plain helper module: the page tests import it."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import shutil
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from aiohttp import web

from bathtub_api.app import create_app
from bathtub_api.config import Config

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class ServedApp:
    """An aiohttp app on 127.0.0.1 in a thread with its own event loop."""

    def __init__(self, app: web.Application, port: int) -> None:
        self.url = f"http://127.0.0.1:{port}"
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.runner = web.AppRunner(app)
        self._run(self.runner.setup())
        self._run(web.TCPSite(self.runner, "127.0.0.1", port).start())

    @classmethod
    def bathtub(cls, config: Config) -> ServedApp:
        port = free_port()  # known before start, so the service's own base URL (its origin) is right
        return cls(create_app(dataclasses.replace(config, base_url=f"http://127.0.0.1:{port}")), port)

    def _run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=60)

    def close(self) -> None:
        self._run(self.runner.cleanup())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=30)
        self.loop.close()


@contextmanager
def chromium(width: int = 1200, height: int = 900) -> Iterator[Any]:
    """A headless Chromium session; skipped where Chromium is not installed (failed under CI)."""
    if not (shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER)):
        if IN_CI:
            pytest.fail(f"CI=true but {CHROMIUM} or {CHROMEDRIVER} is missing: the page tests must run")
        pytest.skip("headless Chromium (Debian's chromium and chromium-driver) is not installed")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                f"--window-size={width},{height}", "--disable-extensions", "--no-first-run"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(180)  # a loaded machine (CI, shared cores) renders slowly
    try:
        yield driver
    finally:
        driver.quit()
