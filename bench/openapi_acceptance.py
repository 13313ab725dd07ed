"""How many schema-valid requests the service refuses, and does any request fail or crawl:
schemathesis generates N requests per operation of the published OpenAPI document (positive:
schema-valid; with --negative also schema-invalid), sends them to the app on a loopback port
(SQLite in a temp dir, a real token) and counts the 422 answers to schema-valid requests, per
operation and per rule (the refusal's detail with the request's values taken out), each either
"cross-field, described" (a rule between values the schema states in its description and
`x-cross-field`, e.g. failures at most demands) or "not stated in the schema" (to fix); every
5xx or answer off its schema, and every request slower than 10 s. Derandomized: the same
requests every run, so two trees compare.

    PYTHONPATH=python:. python3 bench/openapi_acceptance.py --examples 100
    PYTHONPATH=python:. python3 bench/openapi_acceptance.py --examples 300 --negative   # the longer fuzz
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
from tests.service.test_schemathesis import DESCRIBED, SLOW_S, run


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
    parser.add_argument("--examples", type=int, default=100, help="requests per operation and mode")
    parser.add_argument("--negative", action="store_true", help="also schema-invalid requests (the fuzz)")
    parser.add_argument("--only", default="", help="only operations whose label contains this")
    args = parser.parse_args()
    modes = (GenerationMode.POSITIVE, GenerationMode.NEGATIVE) if args.negative else (GenerationMode.POSITIVE,)
    with tempfile.TemporaryDirectory() as tmp:
        config = Config(database_url=f"sqlite:///{tmp}/bench.sqlite3", rate_limit_per_minute=10**6,
                        cpu_workers=1, token_cache_seconds=0.0)
        started, out = threading.Event(), {}
        threading.Thread(target=_serve, args=(config, started, out), daemon=True).start()
        started.wait()
        report = run(out["base"], out["token"], args.examples, modes, args.only)
    print("schema-valid requests refused, by category, operation and rule:")
    for (kind, label, rule), n in sorted(report.refused_by_rule.items()):
        print(f"{n:5d}  [{kind}]  {label}  {rule}")
    share = report.refused / max(report.positive, 1)
    print(f"refused {report.refused} of {report.positive} schema-valid requests ({share:.1%}): "
          f"{report.described} by a rule the schema describes ({DESCRIBED}), "
          f"{report.refused - report.described} by a rule it does not state; {report.sent} sent in all")
    print(f"{len(report.failures)} check failures (5xx or answers off their schema); "
          f"{len(report.slow)} requests slower than {SLOW_S:g} s")
    for line in report.failures + report.slow:
        print(line)


if __name__ == "__main__":
    main()
