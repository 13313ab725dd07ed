"""Large requests never freeze the event loop: while a ~20 MB CSV is parsed, stored and read
back whole by a fit, the service keeps answering /healthz (both stores).

No absolute timing: the bound is a ratio of the health latency to the large request's own
duration, measured in the same run.
"""

from __future__ import annotations

import asyncio
import functools
import io
from typing import Any

import numpy as np
import orjson
import pytest

from bathtub.imports.tables import text_cell, text_column
from tests.conftest import Api

ROWS = 700_000  # about 20 MB of CSV text


@functools.lru_cache(maxsize=1)  # one text for both stores
def _big_csv() -> str:
    rng = np.random.default_rng(5)
    times = np.round(rng.weibull(1.5, ROWS) * 1000.0, 3) + 0.001
    states = np.where(rng.random(ROWS) < 0.3, "S", "F")
    units = rng.integers(1, 10**9, ROWS)
    sites = rng.integers(1, 99, ROWS)
    lines = (f"{t:.3f},{s},{u},plant-{p:02d}" for t, s, u, p in zip(times, states, units, sites))
    return "time,state,unit,site\n" + "\n".join(lines) + "\n"


async def _health_while(api: Api, work: Any) -> tuple[Any, float, list[float]]:
    """Run `work` and poll /healthz until it ends: (its result, its duration, health latencies)."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    task = asyncio.ensure_future(work)
    latencies = []
    while not task.done():
        t0 = loop.time()
        async with api.client.get("/healthz") as resp:
            assert resp.status == 200
        latencies.append(loop.time() - t0)
        await asyncio.sleep(0.005)
    result = await task
    return result, loop.time() - start, latencies


@pytest.mark.slow  # ~10 s: a large CSV through the service
async def test_a_large_csv_does_not_freeze_the_service(api: Api) -> None:
    text = _big_csv()
    assert len(text) > 19_000_000
    body = orjson.dumps({"name": "big", "csv": text})  # encoded up front: the client's own work stays out
    created_call = api.call("POST", "/api/v1/datasets", data=io.BytesIO(body),
                            headers={"Content-Type": "application/json"})
    (status, created), duration, latencies = await _health_while(api, created_call)
    assert status == 200 and created["n_rows"] == ROWS, created
    # Health answered many times while the upload was in flight, none waiting for a large part of it
    # (before: one health request waited for the whole parse, ~ the upload's duration). A ratio of the
    # run's own duration, not a clock limit; half leaves room for a garbage-collection pause on a
    # loaded machine while still failing on the old behaviour.
    assert len(latencies) >= 10, (len(latencies), duration)
    assert max(latencies) < duration / 2, (max(latencies), duration)
    # A fit reads the whole dataset back: the loop stays free then too.
    fit_call = api.post("fit/life", {"name": "big", "dataset_id": created["id"], "distribution": "weibull",
                                     "mapping": {"x": "time", "c": "state"}})
    (status, fitted), duration, latencies = await _health_while(api, fit_call)
    assert status == 200 and fitted["n"] == ROWS, fitted
    assert len(latencies) >= 10 and max(latencies) < duration / 2, (len(latencies), max(latencies), duration)


def test_csv_columns_convert_as_cells_do() -> None:
    """The whole-column CSV conversion gives exactly what converting cell by cell gives."""
    cells = ["1", " 2 ", "", "2.5", "1e3", "-0", "+5", "1_000", "\u0661\u0662", "7.0", " ", "1e999", "inf",
             "nan", "Infinity", "abc", "F", "12ab", ".5", "0x10"]
    columns = [["1", " 2 ", "", "-0", "+5", "1_000", "\u0661\u0662"], ["1", "2.5", "", "1e3", "7.0", ".5", " "],
               ["1", "1e999"], ["2", "nan"], ["F", "S", "1", "2.5"], cells]
    for col in columns:
        want = [text_cell(c) for c in col]
        got = text_column(col)
        assert [(type(v), v) for v in got] == [(type(v), v) for v in want], col
