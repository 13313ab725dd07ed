"""What an agent and a docs reader download (issue 29): the MCP tool list through the official
SDK (bytes in all and per tool, the largest first), the SDK's first tools/call latency (session
set-up, tools/list as the SDK does it before a call, the call), and the OpenAPI document's bytes
plain and gzipped. The service runs in this process on a loopback port over a throwaway SQLite
store. Run it against another checkout to compare: PYTHONPATH=<checkout>/python.

    python bench/schema_sizes.py [--defs]
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import socket
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx2
import orjson
from aiohttp import web
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from bathtub_api.app import create_app
from bathtub_api.cli import token_create
from bathtub_api.config import Config


def _port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def _sdk(base: str, token: str) -> tuple[list[dict[str, Any]], float]:
    """The tools as the SDK hands them over, and the seconds from opening a session to the
    first call's answer (a fresh session: what an agent's first call costs)."""
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=120) as http, \
            streamable_http_client(f"{base}/mcp", http_client=http) as streams, \
            ClientSession(streams[0], streams[1]) as session:
        await session.initialize()
        listed = await session.list_tools()
    tools = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed.tools]
    start = time.perf_counter()
    async with httpx2.AsyncClient(headers=headers, timeout=120) as http, \
            streamable_http_client(f"{base}/mcp", http_client=http) as streams, \
            ClientSession(streams[0], streams[1]) as session:
        await session.initialize()
        await session.call_tool("guide", {"topic": "rbds"})
    return tools, time.perf_counter() - start


async def main(show_defs: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        config = Config(database_url=f"sqlite:///{Path(tmp) / 'bench.db'}")
        runner = web.AppRunner(create_app(config))
        await runner.setup()
        port = _port()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        base = f"http://127.0.0.1:{port}"
        try:
            token = await token_create(config, "bench", ["read"])
            tools, first_call = await _sdk(base, token)
            async with httpx2.AsyncClient(timeout=120) as http:
                plain = (await http.get(f"{base}/api/v1/openapi.json", headers={"Accept-Encoding": "identity"})).content
        finally:
            await runner.cleanup()
    sizes = sorted(((len(orjson.dumps(t)), t["name"]) for t in tools), reverse=True)
    print(f"tools/list (SDK): {sum(s for s, _ in sizes):,} bytes, {len(tools)} tools")
    for size, name in sizes:
        print(f"  {name:16} {size:>9,}")
        if show_defs:
            for key, body in sorted(next(t for t in tools if t["name"] == name)["inputSchema"].get("$defs", {}).items(),
                                    key=lambda kv: -len(orjson.dumps(kv[1]))):
                print(f"      $defs/{key:32} {len(orjson.dumps(body)):>8,}")
    print(f"first call_tool (SDK, fresh session): {first_call:.2f} s")
    print(f"openapi.json: {len(plain):,} bytes plain, {len(gzip.compress(plain)):,} gzipped")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--defs", action="store_true", help="bytes per $defs entry of each tool")
    asyncio.run(main(ap.parse_args().defs))
