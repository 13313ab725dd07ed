"""Do big imports stall the event loop? /healthz latency while one large request runs.

Starts `bathtub serve` as a subprocess on loopback (SQLite always; PostgreSQL too with
--postgres URL or BATHTUB_TEST_POSTGRES_URL) and, each round, runs four large requests one at
a time while a second client polls /healthz every ~10 ms:

  create  POST /api/v1/datasets with a ~20 MB `csv` field (--rows rows)
  upload  POST /api/v1/datasets/upload of the same CSV sent to an upload link first
  ingest  POST /api/ingest/datasets/{id}/lives of the same CSV as text/csv, into a dataset with
          a fitted Weibull model (so the model is refitted on every row)
  delete  POST /api/v1/datasets/delete_rows of 100,000 rows spread over the created dataset

plus an idle phase (the poller alone) as the baseline. /healthz does no work, so its latency is
how long the loop was busy elsewhere. The poller runs on its own thread and event loop, so the
client's own sending and reading of 20 MB never delays a poll on the client side. Prints p50,
p99 and max of /healthz during each request, the request's own duration and the load average;
the harness writes each request's /healthz p99 as a ratio to the idle p99 (per round) to
bench/results/loop_stall.json. The target: p99 under 100 ms during every one of them.

    python bench/loop_stall.py --repeats 3 --postgres postgresql://bathtub:bathtub@127.0.0.1/bathtub_test
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import numpy as np
import orjson

# The service's start-up and admin helpers and the harness live beside this script (bench/ is on sys.path).
from harness import Bench
from service_load import pg_admin, service

DELETED = 100_000
REQUESTS = ("create", "upload", "ingest", "delete")


def big_csv(rows: int) -> bytes:
    """A life table of `rows` rows, ~38 bytes a row: times, F/S codes, unit numbers, sites, lots."""
    rng = np.random.default_rng(5)
    times = np.round(rng.weibull(1.5, rows) * 1000.0, 3) + 0.001
    states = np.where(rng.random(rows) < 0.3, "S", "F")
    units = rng.integers(10**8, 10**9, rows)
    sites = rng.integers(1, 99, rows)
    lots = rng.integers(0, 10**6, rows)
    lines = (f"{t:.3f},{s},{u},plant-{p:02d},lot-{q:06d}" for t, s, u, p, q in zip(times, states, units, sites, lots))
    return ("time,state,unit,site,lot\n" + "\n".join(lines) + "\n").encode()


class Poller:
    """GET /healthz every `every_s` on its own thread and loop; latencies (ms) between start and stop."""

    def __init__(self, base: str, every_s: float = 0.01) -> None:
        self.base, self.every_s = base, every_s
        self.latencies: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._run()), daemon=True)

    async def _run(self) -> None:
        async with aiohttp.ClientSession() as s:
            while not self._stop.is_set():
                t0 = time.perf_counter()
                async with s.get(f"{self.base}/healthz") as r:
                    await r.read()
                    assert r.status == 200, r.status
                self.latencies.append((time.perf_counter() - t0) * 1000)
                await asyncio.sleep(self.every_s)

    def __enter__(self) -> Poller:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(30)


class Client:
    """The big requests, against one running service."""

    def __init__(self, base: str, token: str, csv: bytes, rows: int) -> None:
        self.base, self.csv, self.rows = base, csv, rows
        self.headers = {"Authorization": f"Bearer {token}"}
        self.create_body = orjson.dumps({"name": "big", "csv": csv.decode()})  # encoded once: client work stays out

    async def _call(self, s: aiohttp.ClientSession, method: str, path: str, **kw: Any) -> dict[str, Any]:
        async with s.request(method, f"{self.base}{path}", **kw) as r:
            out = await r.json()
            if r.status != 200:
                raise RuntimeError(f"{method} {path}: {r.status} {out}")
            return dict(out)

    async def timed(self, what: str, prepare: Callable[[aiohttp.ClientSession], Awaitable[dict[str, Any]]],
                    ) -> dict[str, Any]:
        """Prepare (unmeasured), then run the request while /healthz is polled."""
        async with aiohttp.ClientSession(headers=self.headers) as s:
            request = await prepare(s)
            with Poller(self.base) as poller:
                await asyncio.sleep(0.1)  # the poller's connection is open before the request starts
                t0 = time.perf_counter()
                answer = await self._call(s, **request)
                seconds = time.perf_counter() - t0
                await asyncio.sleep(0.05)  # the poll in flight when the request ended lands
        lat = np.asarray(poller.latencies)
        return {"what": what, "answer": answer, "seconds": seconds, "polls": lat.size,
                "p50_ms": float(np.percentile(lat, 50)), "p99_ms": float(np.percentile(lat, 99)),
                "max_ms": float(lat.max()), "load": os.getloadavg()[0]}

    async def idle(self, seconds: float = 2.0) -> dict[str, Any]:
        with Poller(self.base) as poller:
            await asyncio.sleep(seconds)
        lat = np.asarray(poller.latencies)
        return {"what": "idle", "seconds": seconds, "polls": lat.size, "p50_ms": float(np.percentile(lat, 50)),
                "p99_ms": float(np.percentile(lat, 99)), "max_ms": float(lat.max()), "load": os.getloadavg()[0]}

    async def round(self) -> dict[str, dict[str, Any]]:
        out = {"idle": await self.idle()}

        async def create(s: aiohttp.ClientSession) -> dict[str, Any]:
            return {"method": "POST", "path": "/api/v1/datasets", "data": self.create_body,
                    "headers": {"Content-Type": "application/json"}}

        out["create"] = await self.timed("create", create)
        big_id = out["create"]["answer"]["id"]

        async def upload(s: aiohttp.ClientSession) -> dict[str, Any]:
            link = await self._call(s, "POST", "/api/v1/uploads/create",
                                    json={"purpose": "dataset_import", "filename": "big.csv"})
            send = urlsplit(link["url_fallback"])  # on this service's own address, whatever its public one
            async with aiohttp.ClientSession() as anonymous:  # the link's token is the send's only credential
                await self._call(anonymous, "PUT", f"{send.path}?{send.query}", data=self.csv,
                                 headers={"Content-Type": "application/octet-stream"})
            return {"method": "POST", "path": "/api/v1/datasets/upload",
                    "json": {"upload_id": link["upload_id"], "name": "uploaded"}}

        out["upload"] = await self.timed("upload", upload)

        async def ingest(s: aiohttp.ClientSession) -> dict[str, Any]:
            small = self.csv[: self.csv.index(b"\n", 40_000) + 1]  # the header and ~1,000 rows
            seed = await self._call(s, "POST", "/api/v1/datasets/create", json={"name": "seed", "csv": small.decode()})
            await self._call(s, "POST", "/api/v1/fit/life", json={
                "name": "seed fit", "dataset_id": seed["id"], "distribution": "weibull",
                "mapping": {"x": "time", "c": "state"}})
            return {"method": "POST", "path": f"/api/ingest/datasets/{seed['id']}/lives", "data": self.csv,
                    "headers": {"Content-Type": "text/csv"}}

        out["ingest"] = await self.timed("ingest", ingest)

        async def delete(s: aiohttp.ClientSession) -> dict[str, Any]:
            step = self.rows // DELETED
            return {"method": "POST", "path": "/api/v1/datasets/delete_rows",
                    "json": {"id": big_id, "rows": list(range(0, step * DELETED, step))}}

        out["delete"] = await self.timed("delete", delete)
        async with aiohttp.ClientSession(headers=self.headers) as s:  # the next round starts from the same count
            for name, key in (("create", "id"), ("upload", "id")):
                await self._call(s, "POST", "/api/v1/datasets/delete", json={"id": out[name]["answer"][key]})
        return out


def run_store(url: str, csv: bytes, rows: int, repeats: int) -> list[dict[str, dict[str, Any]]]:
    with service(url) as (base, token, _dataset, _pid):
        client = Client(base, token, csv, rows)
        return [asyncio.run(client.round()) for _ in range(repeats)]


def checks(bench: Bench, store: str, runs: list[dict[str, dict[str, Any]]], rows: int) -> None:
    """Every round's requests did what they were asked: a bench never reports a wrong answer's speed."""
    for r in runs:
        bench.check(f"{store} create: rows stored", abs(r["create"]["answer"]["row_count"] - rows), 0)
        bench.check(f"{store} upload: rows stored", abs(r["upload"]["answer"]["row_count"] - rows), 0)
        bench.check(f"{store} ingest: rows appended", abs(r["ingest"]["answer"]["appended"] - rows), 0)
        bench.check(f"{store} ingest: model refitted", 1 - len(r["ingest"]["answer"]["refit"]), 0)
        bench.check(f"{store} delete: rows deleted", abs(r["delete"]["answer"]["deleted"] - DELETED), 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=520_000, help="rows of the big CSV (~38 bytes each)")
    parser.add_argument("--repeats", type=int, default=3, help="rounds per store (idle, then the four requests)")
    parser.add_argument("--postgres", default=os.environ.get("BATHTUB_TEST_POSTGRES_URL"),
                        help="a PostgreSQL URL: also measure on PostgreSQL (a schema of its own, dropped after)")
    args = parser.parse_args()
    bench = Bench("loop_stall")
    csv = big_csv(args.rows)
    results: dict[str, list[dict[str, dict[str, Any]]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        results["sqlite"] = run_store(f"sqlite:///{Path(tmp) / 'bench.sqlite3'}", csv, args.rows, args.repeats)
    if args.postgres:
        # A schema of its own (asyncpg passes unknown URL parameters as server settings), so the
        # bench never touches tables already in that database (the test suites share it).
        schema = f"bench_stall_{os.getpid()}"
        url = f"{args.postgres}{'&' if '?' in args.postgres else '?'}search_path={schema}"
        asyncio.run(pg_admin(args.postgres, f"CREATE SCHEMA {schema}"))
        try:
            results["postgresql"] = run_store(url, csv, args.rows, args.repeats)
        finally:
            asyncio.run(pg_admin(args.postgres, f"DROP SCHEMA {schema} CASCADE"))
    else:
        print("PostgreSQL skipped: pass --postgres URL or set BATHTUB_TEST_POSTGRES_URL")
    print(f"\n/healthz polled every ~10 ms while each request runs ({len(csv) / 1e6:.1f} MB CSV, {args.rows:,} rows; "
          f"delete_rows of {DELETED:,}; {os.cpu_count()} cores)")
    print(f"{'store':<12}{'request':<9}{'seconds':>9}{'polls':>7}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}{'load':>7}")
    for store, runs in results.items():
        checks(bench, store, runs, args.rows)
        for r in runs:
            for what in ("idle", *REQUESTS):
                m = r[what]
                print(f"{store:<12}{what:<9}{m['seconds']:>9.2f}{m['polls']:>7}{m['p50_ms']:>9.1f}{m['p99_ms']:>9.1f}"
                      f"{m['max_ms']:>9.1f}{m['load']:>7.2f}")
        name = "SQLite" if store == "sqlite" else "PostgreSQL"
        for what in REQUESTS:
            rounds = {what: [{"p99_ms": r[what]["p99_ms"]} for r in runs],
                      "idle": [{"p99_ms": r["idle"]["p99_ms"]} for r in runs]}
            mid = {k: float(np.median([r[what][k] for r in runs])) for k in ("p50_ms", "max_ms", "seconds")}
            bench.figure(f"{name}: /healthz p99 during {what}", rounds, what, "idle", key="p99_ms", unit="ms",
                         higher_is_better=False,
                         note=f"median p50 {mid['p50_ms']:.1f} ms, max {mid['max_ms']:.0f} ms; the request took "
                              f"{mid['seconds']:.2f} s; target p99 < 100 ms")
    bench.write()


if __name__ == "__main__":
    main()
