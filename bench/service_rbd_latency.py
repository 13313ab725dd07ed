"""Do simulations in flight block other requests? get/dataset latency while jobs run.

Starts `bathtub serve` as a subprocess on loopback (SQLite always; PostgreSQL too when
--postgres-url or BATHTUB_TEST_POSTGRES_URL is given), creates a dataset and a repairable
diagram, measures get/dataset latency with no job running (baseline), then queues `--jobs`
long `rbd_analysis analyze` runs at once (default 2: the must-hold "read p99 while two
simulation jobs run"; the service runs two at a time by default) and measures get/dataset
from this process, with a few concurrent clients, until every job is done. Prints p50/p99
for both phases, the jobs' durations, what the service quoted before they ran, and the load
average (the machine may be shared). The target: p99 under 100 ms while the jobs run.
The harness (bench/harness.py) writes each store's p99 while the jobs run as a ratio to the
p99 with none, per round, to bench/results/service_rbd_latency.json.

    python bench/service_rbd_latency.py --seconds 10 --jobs 2 --repeats 2
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import numpy as np

# The service's start-up and admin helpers and the harness live beside this script (bench/ is on sys.path).
from harness import Bench
from service_load import cli, free_port, pg_admin, wait_up

BLOCKS = 12  # 4 stages of 2-of-3 repairable pumps


def diagram() -> dict[str, Any]:
    def exp(rate: float) -> dict[str, Any]:
        return {"distribution_id": "exponential", "params": [{"name": "failure_rate", "value": rate}]}

    stages = [{"label": f"Stage {s}", "k_of_n": 2, "components": [
        {"label": f"P{s}{i}", "distribution": "weibull",
         "params": [{"name": "alpha", "value": 800.0}, {"name": "beta", "value": 1.5}],
         "repair_distribution": "exponential", "repair_params": exp(0.1)["params"]} for i in range(3)]}
        for s in range(BLOCKS // 3)]
    return {"name": "bench plant", "unit": "hours", "repairable": True, "stages": stages}


async def timed_reads(s: aiohttp.ClientSession, base: str, dataset_id: str, clients: int,
                      until: asyncio.Event | None, seconds: float) -> np.ndarray:
    """get/dataset from `clients` loops, each pausing 5 ms between calls, for `seconds` or
    until `until` is set; latencies in ms."""
    lat: list[float] = []
    stop = time.perf_counter() + seconds

    async def worker() -> None:
        while time.perf_counter() < stop and not (until is not None and until.is_set()):
            t0 = time.perf_counter()
            async with s.post(f"{base}/api/v1/get/dataset", json={"id": dataset_id, "limit": 100}) as r:
                await r.read()
                assert r.status == 200, r.status
            lat.append((time.perf_counter() - t0) * 1000)
            await asyncio.sleep(0.005)

    await asyncio.gather(*(worker() for _ in range(clients)))
    return np.asarray(lat)


async def measure(base: str, token: str, seconds: float, clients: int, jobs: int) -> dict[str, Any]:
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {token}"}) as s:
        async def post(path: str, body: dict[str, Any]) -> dict[str, Any]:
            async with s.post(f"{base}/api/v1/{path}", json=body) as r:
                out = await r.json()
                assert r.status == 200, out
                return out

        rows = {"time": [i * 7.5 for i in range(1000)], "state": ["F" if i % 3 else "S" for i in range(1000)]}
        dataset_id = (await post("datasets/create", {"name": "bench", "data": rows}))["id"]
        rbd_id = (await post("rbd/create", diagram()))["id"]
        # Size the run from the service's own quote so it lasts about `seconds` on one core.
        probe = await post("rbd_analysis/analyze", {"id": rbd_id, "horizon": 50_000.0, "replications": 100})
        per_rep = (probe["quote"]["seconds"] - 0.005) / 100
        reps = max(100, int(seconds / per_rep))
        await timed_reads(s, base, dataset_id, clients, None, 1.0)  # warm-up
        baseline = await timed_reads(s, base, dataset_id, clients, None, 3.0)

        # Distinct seeds: distinct runs (the same inputs would be one cached run).
        queued = [await post("rbd_analysis/analyze", {"id": rbd_id, "horizon": 50_000.0, "replications": reps,
                                                      "seed": 1000 + i}) for i in range(jobs)]
        done = asyncio.Event()

        async def watch() -> list[dict[str, Any]]:
            while True:
                states = [await post("get/job", {"id": q["job_id"]}) for q in queued]
                if all(j["status"] in ("done", "failed") for j in states):
                    done.set()
                    return states
                await asyncio.sleep(0.2)

        load0 = os.getloadavg()[0]
        t0 = time.perf_counter()
        watcher = asyncio.create_task(watch())
        during = await timed_reads(s, base, dataset_id, clients, done, 3600.0)
        finished = await watcher
        wall = time.perf_counter() - t0
        assert all(j["status"] == "done" for j in finished), finished
        return {"baseline": baseline, "during": during, "job_s": [j["result"]["duration_s"] for j in finished],
                "wall_s": wall, "quoted_s": queued[0]["quote"]["seconds"], "replications": reps,
                "load": (load0, os.getloadavg()[0])}


def run_store(url: str, seconds: float, clients: int, jobs: int) -> dict[str, Any]:
    token = cli(url, "token", "create", "--user", "bench", "--scopes", "read,write")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "BATHTUB_RATE_LIMIT": str(10**9)}
    server = subprocess.Popen([sys.executable, "-m", "bathtub_api.cli", "--database-url", url, "serve",
                               "--port", str(port)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        asyncio.run(wait_up(base))
        return asyncio.run(measure(base, token, seconds, clients, jobs))
    finally:
        server.terminate()
        server.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=10.0, help="aimed job length (from the service's quote)")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--jobs", type=int, default=2, help="simulation jobs queued at once")
    parser.add_argument("--repeats", type=int, default=1, help="rounds (each: reads with no job, then with the jobs)")
    parser.add_argument("--postgres-url", default=os.environ.get("BATHTUB_TEST_POSTGRES_URL"))
    args = parser.parse_args()
    bench = Bench("service_rbd_latency", f"python bench/service_rbd_latency.py --seconds {args.seconds:g} "
                                         f"--jobs {args.jobs} --repeats {args.repeats}")
    results: dict[str, list[dict[str, Any]]] = {}
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory() as tmp:
            results.setdefault("sqlite", []).append(run_store(f"sqlite:///{Path(tmp) / 'bench.sqlite3'}",
                                                              args.seconds, args.clients, args.jobs))
        if args.postgres_url:
            # A schema of its own (asyncpg passes unknown URL parameters as server settings), so the
            # bench never touches tables already in that database (the test suites share it).
            schema = f"bench_rbd_{os.getpid()}"
            url = f"{args.postgres_url}{'&' if '?' in args.postgres_url else '?'}search_path={schema}"
            asyncio.run(pg_admin(args.postgres_url, f"CREATE SCHEMA {schema}"))
            try:
                results.setdefault("postgresql", []).append(run_store(url, args.seconds, args.clients, args.jobs))
            finally:
                asyncio.run(pg_admin(args.postgres_url, f"DROP SCHEMA {schema} CASCADE"))
    if not args.postgres_url:
        print("PostgreSQL skipped: pass --postgres-url or set BATHTUB_TEST_POSTGRES_URL")
    print(f"\nget/dataset (limit 100) from {args.clients} clients, before and while {args.jobs} rbd_analysis "
          f"job(s) run ({BLOCKS}-block repairable diagram; {os.cpu_count()} cores)")
    print(f"{'store':<12}{'phase':<10}{'requests':>9}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}")
    for name, runs in results.items():
        for r in runs:
            for phase in ("baseline", "during"):
                lat = r[phase]
                print(f"{name:<12}{phase:<10}{lat.size:>9}{np.percentile(lat, 50):>9.1f}"
                      f"{np.percentile(lat, 99):>9.1f}{lat.max():>9.1f}")
            verdict = "OK" if np.percentile(r["during"], 99) < 100 else "OVER 100 ms"
            ran = ", ".join(f"{t:.2f}" for t in r["job_s"])
            print(f"{'':<12}jobs: {len(r['job_s'])} x {r['replications']} replications, ran {ran} s (quoted "
                  f"{r['quoted_s']:.2f} s each on one core), load average {r['load'][0]:.1f} -> {r['load'][1]:.1f}, "
                  f"p99 target <100 ms: {verdict}")
        during, before = f"while {args.jobs} jobs run", "no job running"
        rounds = {during: [{"p99_ms": float(np.percentile(r["during"], 99))} for r in runs],
                  before: [{"p99_ms": float(np.percentile(r["baseline"], 99))} for r in runs]}
        store = "SQLite" if name == "sqlite" else "PostgreSQL"
        bench.figure(f"{store}: get/dataset p99 while {args.jobs} simulation jobs run", rounds, during, before,
                     key="p99_ms", unit="ms", higher_is_better=False,
                     note=f"{args.clients} clients; target < 100 ms")
    bench.write()


if __name__ == "__main__":
    main()
