"""Service load benchmark: authenticated small reads (get/dataset, limit 100) under concurrency,
as a ratio to the stack's physical limit measured in the same run.

Starts, on loopback: `bathtub serve` on SQLite (one process, and `--workers 2`), on PostgreSQL
when --postgres-url or BATHTUB_TEST_POSTGRES_URL is given, and the baseline: a bare aiohttp
handler answering the same request with the same 100-row page from memory (bench/service_bare.py:
no auth, store, validation or middlewares; HTTP parsing and writing and JSON in and out only).
Then, in interleaved rounds, loads each for a fixed time with N connections and records
requests/s, p50/p99 latency and the server's CPU time per request (all its processes); the
harness writes the figures, each a per-round ratio to a baseline, to bench/results/service_load.json.

The load comes from `wrk` (Debian package `wrk`) when installed, because a Python client
would spend more CPU than the server it measures on a 2-core machine; otherwise from an
aiohttp client in this process (`--python-client` forces that). On a 2-core machine wrk and
the server share the cores: 2 workers can gain only what wrk leaves free.

    python bench/service_load.py --seconds 8 --clients 50 --repeats 3
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
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import aiohttp
import asyncpg
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import Bench

BENCH = Path(__file__).resolve().parent


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


def _ticks(pid: int) -> int:
    """CPU clock ticks (user + system) of a process and of its children it waited for."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15])


def cpu_seconds(root: int) -> float:
    """CPU seconds so far of `root` and every live process under it (a supervisor's workers)."""
    parent: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parent[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (FileNotFoundError, ProcessLookupError):
                continue
    tree, frontier = {root}, {root}
    while frontier:
        frontier = {p for p, pp in parent.items() if pp in frontier} - tree
        tree |= frontier
    total = 0
    for pid in tree:
        try:
            total += _ticks(pid)
        except (FileNotFoundError, ProcessLookupError):
            continue
    return total / os.sysconf("SC_CLK_TCK")


@contextmanager
def service(url: str, workers: int = 1) -> Iterator[tuple[str, str, str, int]]:
    """`bathtub serve` on `url` with a bench token and a 1,000-row dataset: (base, token, dataset id, pid)."""
    token = cli(url, "token", "create", "--user", "bench", "--scopes", "read,write")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "BATHTUB_RATE_LIMIT": str(10**9)}  # measure the service, not the limiter
    out = tempfile.TemporaryFile("w+")
    server = subprocess.Popen([sys.executable, "-m", "bathtub_api.cli", "--database-url", url, "serve",
                               "--port", str(port), "--workers", str(workers)], env=env,
                              stdout=out, stderr=subprocess.DEVNULL, text=True)
    try:
        end = time.monotonic() + 120
        while True:  # "serving on" once every worker listens
            out.seek(0)
            if "serving on" in out.read():
                break
            if server.poll() is not None or time.monotonic() > end:
                raise RuntimeError("the service did not start")
            time.sleep(0.1)

        async def make_dataset() -> str:
            rows = "\n".join(f"{i * 7.5},{'F' if i % 3 else 'S'},{i % 4}" for i in range(1000))
            async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {token}"}) as s:
                body = {"name": "bench", "csv": "time,state,n\n" + rows}
                async with s.post(f"{base}/api/v1/datasets", json=body) as r:
                    created = await r.json()
                    if r.status != 200:
                        raise RuntimeError(f"creating the bench dataset failed: {created}")
                    return str(created["id"])

        yield base, token, asyncio.run(make_dataset()), server.pid
    finally:
        server.terminate()
        server.wait(60)
        out.close()


@contextmanager
def bare() -> Iterator[tuple[str, str, str, int]]:
    """The baseline server (bench/service_bare.py): (base, token, dataset id, pid)."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen([sys.executable, str(BENCH / "service_bare.py"), str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        asyncio.run(wait_up(base))
        yield base, "none", "ds_bare", server.pid
    finally:
        server.terminate()
        server.wait(10)


def case(target: tuple[str, str, str, int], clients: int, seconds: float, use_wrk: bool) -> Callable[[], dict]:
    base, token, dataset_id, pid = target

    def run() -> dict[str, float]:
        cpu0 = cpu_seconds(pid)
        if use_wrk:
            out = load_wrk(base, token, dataset_id, clients, seconds)
        else:
            out = asyncio.run(load(base, token, dataset_id, clients, seconds))
        cpu = cpu_seconds(pid) - cpu0
        if out["errors"]:
            raise RuntimeError(f"{out['errors']} requests failed at {base}")
        return {**out, "cpu_us_per_request": cpu / max(out["requests"], 1) * 1e6}

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=8.0, help="load time of each case in each round")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3, help="interleaved rounds")
    parser.add_argument("--postgres-url", default=os.environ.get("BATHTUB_TEST_POSTGRES_URL"))
    parser.add_argument("--python-client", action="store_true", help="load with aiohttp even if wrk is installed")
    args = parser.parse_args()
    use_wrk = shutil.which("wrk") is not None and not args.python_client
    bench = Bench("service_load", f"python bench/service_load.py --seconds {args.seconds:g} --clients {args.clients} "
                                  f"--repeats {args.repeats}")
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        targets = {"bare aiohttp handler": stack.enter_context(bare()),
                   "SQLite, 1 process": stack.enter_context(service(f"sqlite:///{Path(tmp) / 'one.sqlite3'}")),
                   "SQLite, 2 workers": stack.enter_context(service(f"sqlite:///{Path(tmp) / 'two.sqlite3'}", 2))}
        if args.postgres_url:
            # A schema of its own (asyncpg passes unknown URL parameters as server settings):
            # the bench never touches the tables already in that database.
            schema = f"bench_{os.getpid()}"
            url = f"{args.postgres_url}{'&' if '?' in args.postgres_url else '?'}search_path={schema}"
            asyncio.run(pg_admin(args.postgres_url, f"CREATE SCHEMA {schema}"))
            stack.callback(lambda: asyncio.run(pg_admin(args.postgres_url, f"DROP SCHEMA {schema} CASCADE")))
            targets["PostgreSQL, 1 process"] = stack.enter_context(service(url))
        else:
            print("PostgreSQL skipped: pass --postgres-url or set BATHTUB_TEST_POSTGRES_URL")
        cases = {name: case(t, args.clients, args.seconds, use_wrk) for name, t in targets.items()}
        rounds = bench.interleave(cases, args.repeats, warmup=1)
    what = f"get/dataset limit=100, {args.clients} connections ({'wrk' if use_wrk else 'aiohttp client'})"
    for store in [n for n in targets if n.endswith("1 process")]:
        bench.figure(f"{store}: authenticated reads/s", rounds, store, "bare aiohttp handler", key="rps",
                     unit="req/s", higher_is_better=True, note=what)
        bench.figure(f"{store}: p99 latency", rounds, store, "bare aiohttp handler", key="p99_ms", unit="ms",
                     higher_is_better=False)
        bench.figure(f"{store}: server CPU per request", rounds, store, "bare aiohttp handler",
                     key="cpu_us_per_request", unit="µs", higher_is_better=False)
    bench.figure("SQLite: reads/s with --workers 2", rounds, "SQLite, 2 workers", "SQLite, 1 process", key="rps",
                 unit="req/s", higher_is_better=True,
                 note=f"{os.cpu_count()} cores shared with the load generator")
    print(f"\n{what}, {args.seconds:g} s per case per round, {args.repeats} interleaved rounds (medians)")
    print(f"{'server':<26}{'req/s':>9}{'p50 ms':>9}{'p99 ms':>9}{'CPU µs/req':>12}")
    for name, rs in rounds.items():
        med = {k: float(np.median([r[k] for r in rs])) for k in ("rps", "p50_ms", "p99_ms", "cpu_us_per_request")}
        print(f"{name:<26}{med['rps']:>9.0f}{med['p50_ms']:>9.1f}{med['p99_ms']:>9.1f}{med['cpu_us_per_request']:>12.0f}")
    bench.write()


if __name__ == "__main__":
    main()
