"""How many schema-valid requests the service refuses: schemathesis generates N positive
(schema-valid) requests per operation of the published OpenAPI document, sends them to the
app on a loopback port (SQLite in a temp dir, a real token) and counts the 422 answers, per
operation and in all. Derandomized: the same requests every run, so two trees compare.

    PYTHONPATH=python:. python3 bench/openapi_acceptance.py --examples 100
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import threading
from typing import Any

from aiohttp import web
from schemathesis import GenerationMode

from bathtub_api.app import create_app
from bathtub_api.cli import token_create
from bathtub_api.config import Config
from tests.service.test_schemathesis import run


def _serve(config: Config, started: threading.Event, out: dict[str, Any]) -> None:
    loop = asyncio.new_event_loop()

    async def start() -> None:
        runner = web.AppRunner(create_app(config))
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        out["base"] = f"http://127.0.0.1:{runner.addresses[0][1]}"
        out["token"] = await token_create(config, "bench", ["read", "write"])
        started.set()

    loop.run_until_complete(start())
    loop.run_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=100, help="positive requests per operation")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        config = Config(database_url=f"sqlite:///{tmp}/bench.sqlite3", rate_limit_per_minute=10**6,
                        cpu_workers=1, token_cache_seconds=0.0)
        started, out = threading.Event(), {}
        threading.Thread(target=_serve, args=(config, started, out), daemon=True).start()
        started.wait()
        report = run(out["base"], out["token"], args.examples, (GenerationMode.POSITIVE,))
    for label, n in sorted(report.refused_by_operation.items()):
        print(f"{n:5d}  {label}")
    print(f"refused {report.refused} of {report.positive} schema-valid requests "
          f"({len(report.failures)} check failures: 5xx or answers off their schema)")
    for failure in report.failures[:5]:
        print(failure.splitlines()[0])


if __name__ == "__main__":
    main()
