"""Service load benchmark: authenticated small reads (get/dataset, limit 100) under concurrency.

Starts `bathtub serve` as a subprocess on loopback for each store (SQLite always; PostgreSQL
when --postgres-url or BATHTUB_TEST_POSTGRES_URL is given), then loads it from a second
process with N concurrent connections for a fixed time and prints requests/s and p50/p99
latency. The load comes from `wrk` (Debian package `wrk`) when installed, because a Python
client would spend more CPU than the server it measures on a 2-core machine; otherwise from
an aiohttp client in this process (`--python-client` forces that).

    python bench/service_load.py --seconds 10 --clients 50
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import asyncpg
import numpy as np


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cli(url: str, *args: str) -> str:
    out = subprocess.run([sys.executable, "-m", "bathtub_api.cli", "--database-url", url, *args],
                         check=True, capture_output=True, text=True)
    return out.stdout.strip()


async def wait_up(base: str, timeout: float = 30.0) -> None:
    end = time.monotonic() + timeout
    async with aiohttp.ClientSession() as s:
        while time.monotonic() < end:
            try:
                async with s.get(f"{base}/healthz") as r:
                    if r.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.1)
    raise RuntimeError("service did not start")


async def load(base: str, token: str, dataset_id: str, clients: int, seconds: float) -> dict[str, float]:
    headers = {"Authorization": f"Bearer {token}"}
    body = {"id": dataset_id, "limit": 100}
    latencies: list[float] = []
    errors = 0
    connector = aiohttp.TCPConnector(limit=clients)
    async with aiohttp.ClientSession(connector=connector, headers=headers) as s:
        # Warm up connections and caches before timing.
        for _ in range(clients):
            async with s.post(f"{base}/api/v1/get/dataset", json=body) as r:
                await r.read()
        stop = time.perf_counter() + seconds

        async def worker() -> None:
            nonlocal errors
            while time.perf_counter() < stop:
                t0 = time.perf_counter()
                async with s.post(f"{base}/api/v1/get/dataset", json=body) as r:
                    await r.read()
                    if r.status != 200:
                        errors += 1
                latencies.append(time.perf_counter() - t0)

        t0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(clients)))
        elapsed = time.perf_counter() - t0
    lat = np.array(latencies) * 1000
    return {"requests": len(lat), "rps": len(lat) / elapsed, "p50_ms": float(np.percentile(lat, 50)),
            "p99_ms": float(np.percentile(lat, 99)), "errors": errors}


def load_wrk(base: str, token: str, dataset_id: str, clients: int, seconds: float) -> dict[str, float]:
    script = (
        'wrk.method = "POST"\n'
        f"wrk.body = '{{\"id\": \"{dataset_id}\", \"limit\": 100}}'\n"
        'wrk.headers["Content-Type"] = "application/json"\n'
        f'wrk.headers["Authorization"] = "Bearer {token}"\n'
    )
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        f.write(script)
    try:
        out = subprocess.run(
            ["wrk", "-t1", f"-c{clients}", f"-d{seconds:.0f}s", "--latency", "-s", f.name,
             f"{base}/api/v1/get/dataset"], check=True, capture_output=True, text=True).stdout
    finally:
        os.unlink(f.name)

    def ms(label: str) -> float:
        m = re.search(rf"^\s+{label}\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
        assert m, out
        return float(m.group(1)) * {"us": 1e-3, "ms": 1.0, "s": 1e3}[m.group(2)]

    requests = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {"requests": requests, "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),  # type: ignore[union-attr]
            "p50_ms": ms("50%"), "p99_ms": ms("99%"), "errors": int(non2xx.group(1)) if non2xx else 0}


async def pg_admin(url: str, sql: str) -> None:
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


def run_store(name: str, url: str, clients: int, seconds: float, use_wrk: bool) -> dict[str, float]:
    token = cli(url, "token", "create", "--user", "bench", "--scopes", "read,write")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "BATHTUB_RATE_LIMIT": str(10**9)}  # measure the service, not the limiter
    server = subprocess.Popen([sys.executable, "-m", "bathtub_api.cli", "--database-url", url, "serve",
                               "--port", str(port)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        asyncio.run(wait_up(base))

        async def make_dataset() -> str:
            rows = "\n".join(f"{i * 7.5},{'F' if i % 3 else 'S'},{i % 4}" for i in range(1000))
            async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {token}"}) as s:
                body = {"name": "bench", "csv": "time,state,n\n" + rows}
                async with s.post(f"{base}/api/v1/datasets", json=body) as r:
                    created = await r.json()
                    if r.status != 200:
                        raise RuntimeError(f"creating the bench dataset failed: {created}")
                    return created["id"]

        dataset_id = asyncio.run(make_dataset())
        if use_wrk:
            return load_wrk(base, token, dataset_id, clients, seconds)
        return asyncio.run(load(base, token, dataset_id, clients, seconds))
    finally:
        server.terminate()
        server.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--postgres-url", default=os.environ.get("BATHTUB_TEST_POSTGRES_URL"))
    parser.add_argument("--python-client", action="store_true", help="load with aiohttp even if wrk is installed")
    args = parser.parse_args()
    use_wrk = shutil.which("wrk") is not None and not args.python_client
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'bench.sqlite3'}"
        results["sqlite"] = run_store("sqlite", url, args.clients, args.seconds, use_wrk)
    if args.postgres_url:
        # A schema of its own (asyncpg passes unknown URL parameters as server settings):
        # the bench never touches the tables already in that database.
        schema = f"bench_{os.getpid()}"
        url = f"{args.postgres_url}{'&' if '?' in args.postgres_url else '?'}search_path={schema}"
        asyncio.run(pg_admin(args.postgres_url, f"CREATE SCHEMA {schema}"))
        try:
            results["postgresql"] = run_store("postgresql", url, args.clients, args.seconds, use_wrk)
        finally:
            asyncio.run(pg_admin(args.postgres_url, f"DROP SCHEMA {schema} CASCADE"))
    else:
        print("PostgreSQL skipped: pass --postgres-url or set BATHTUB_TEST_POSTGRES_URL")
    client = "wrk" if use_wrk else "aiohttp client"
    print(f"\nget/dataset limit=100, {args.clients} connections ({client}), {args.seconds:.0f} s, one server process")
    print(f"{'store':<12}{'requests':>10}{'req/s':>10}{'p50 ms':>10}{'p99 ms':>10}{'errors':>8}")
    for name, r in results.items():
        print(f"{name:<12}{r['requests']:>10.0f}{r['rps']:>10.0f}{r['p50_ms']:>10.1f}{r['p99_ms']:>10.1f}"
              f"{r['errors']:>8.0f}")


if __name__ == "__main__":
    main()
