"""The app served on a loopback port in its own thread, so a blocking browser (tests/browser.py)
can talk to it. A plain helper module: the API access page tests import it."""

from __future__ import annotations

import asyncio
import dataclasses
import socket
import threading
from typing import Any

from aiohttp import web

from bathtub_api.app import create_app
from bathtub_api.config import Config


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
