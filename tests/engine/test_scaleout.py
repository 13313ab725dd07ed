"""Simulations on a real dask.distributed LocalCluster of worker processes: the same bits as the
local run at the same seed (plain, phased, precision), progress across chunks, cancel, and a
worker killed mid-run whose chunks are run again, not lost or counted twice."""

from __future__ import annotations

import itertools
import os
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from bathtub.engine import Cancelled, RunControl, simulate_availability, simulate_mission
from bathtub.engine.scaleout import MIN_CHUNK, chunk_ranges

from .engine_diagrams import block, exp_model, parallel, series
from .test_features_reproducible import plant
from .test_reproducible import plant as trains

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                       silence_logs=40)
    c = distributed.Client(cluster)
    try:
        yield c
    finally:
        c.close()
        cluster.close()


def long_plant() -> dict[str, Any]:
    """Forty exponential blocks in series: a replication costs ~0.1 ms, so a run of many
    thousand replications lasts long enough to kill a worker or cancel in its middle."""
    return series(*(block(f"b{i}", exp_model(1e-3), exp_model(0.1)) for i in range(40)))


@pytest.mark.parametrize("start,count,parts", [(0, 1000, 8), (7, 65, 8), (0, 1, 4), (3, 10_000, 3), (0, 200, 64)])
def test_chunk_ranges_cover_the_range_once_in_order(start: int, count: int, parts: int) -> None:
    r = chunk_ranges(start, count, parts)
    assert r[0][0] == start and sum(n for _, n in r) == count
    assert all(a + n == b for (a, n), (b, _) in itertools.pairwise(r))
    assert len(r) <= parts and (len(r) == 1 or min(n for _, n in r) >= MIN_CHUNK)


@pytest.mark.slow  # a dask LocalCluster of worker processes (as in tests/service/test_rbd_cluster.py)
def test_availability_on_the_cluster_is_the_local_run_to_the_bit(client: Any) -> None:
    kw = {"horizon": 900.0, "seed": 9, "grid": 7, "replications": 1500}
    local = simulate_availability(plant(), threads=1, **kw)
    ctl = RunControl()
    remote = simulate_availability(plant(), cluster=client, control=ctl, **kw)
    assert remote.state == local.state
    assert remote.to_dict(include_curve=True) == local.to_dict(include_curve=True)
    assert (ctl.done, ctl.planned) == (1500, 1500)
    # an address works as well as a client, and an offset range too
    shifted = simulate_availability(plant(), cluster=client.scheduler.address, replication_start=300, **kw)
    assert shifted.state == simulate_availability(plant(), replication_start=300, **kw).state


@pytest.mark.slow  # a dask LocalCluster of worker processes (as in tests/service/test_rbd_cluster.py)
def test_precision_runs_take_the_same_batches_as_the_engine(client: Any) -> None:
    d = parallel(block("a", exp_model(0.01), exp_model(0.5)), block("b", exp_model(0.01), exp_model(0.5)))
    kw = {"horizon": 1000.0, "seed": 3, "target_half_width": 0.05, "max_replications": 60_000}
    local = simulate_availability(d, **kw)
    remote = simulate_availability(d, cluster=client, **kw)
    assert local.replications > 200  # more than the first batch: the growth rule was used
    assert remote.replications == local.replications and remote.state == local.state
    assert remote.target_reached == local.target_reached


@pytest.mark.slow  # a dask LocalCluster of worker processes (as in tests/service/test_rbd_cluster.py)
@pytest.mark.parametrize("method", ["control", "auto", "antithetic", "stratified"])
def test_reduced_runs_on_the_cluster_are_the_local_run_to_the_bit(client: Any, method: str) -> None:
    kw = {"horizon": 900.0, "seed": 9, "grid": 7, "replications": 1500, "variance_reduction": method}
    local = simulate_availability(trains(), threads=1, **kw)
    remote = simulate_availability(trains(), cluster=client, **kw)
    assert remote.state == local.state and remote.to_dict() == local.to_dict()
    assert local.variance_reduction["method"] != "none"
    # To a target precision: the same batches, sized on the reduced estimator.
    kw = {"horizon": 1000.0, "seed": 3, "target_half_width": 0.05, "max_replications": 60_000,
          "variance_reduction": method}
    local = simulate_availability(trains(), **kw)
    remote = simulate_availability(trains(), cluster=client, **kw)
    assert remote.replications == local.replications and remote.state == local.state
    assert local.target_reached


@pytest.mark.slow  # a dask LocalCluster of worker processes (as in tests/service/test_rbd_cluster.py)
def test_antithetic_pairs_turning_to_plain_streams_on_the_cluster_are_the_local_run(client: Any) -> None:
    # Pairs that do not pay after the 400-pair pilot: the cluster's driver tells later chunks where the run turned.
    kw = {"horizon": 1000.0, "seed": 21, "grid": 0, "target_half_width": 0.03, "max_replications": 1_000_000,
          "variance_reduction": "antithetic"}
    local = simulate_availability(trains(), **kw)
    remote = simulate_availability(trains(), cluster=client, **kw)
    assert local.variance_reduction["plain_from"] is not None
    assert remote.replications == local.replications and remote.state == local.state
    assert remote.to_dict() == local.to_dict()


@pytest.mark.slow  # a dask LocalCluster of worker processes (as in tests/service/test_rbd_cluster.py)
def test_stratified_sets_turning_to_plain_streams_on_the_cluster_are_the_local_run(client: Any) -> None:
    # Sets that do not pay after the 400-set pilot (here at the end of the 12 800-replication batch): the
    # cluster's driver tells later chunks where the run turned, as for pairs.
    kw = {"horizon": 1000.0, "seed": 21, "grid": 0, "target_half_width": 0.03, "max_replications": 1_000_000,
          "variance_reduction": "stratified"}
    local = simulate_availability(trains(), **kw)
    remote = simulate_availability(trains(), cluster=client, **kw)
    vr = local.variance_reduction
    assert vr["method"] == "stratified+plain" and vr["plain_from"] == 12_800
    assert remote.replications == local.replications and remote.state == local.state
    assert remote.to_dict() == local.to_dict()


@pytest.mark.slow  # a dask LocalCluster of worker processes (as in tests/service/test_rbd_cluster.py)
def test_mission_on_the_cluster_is_the_local_run_to_the_bit(client: Any) -> None:
    d = parallel(block("a", exp_model(0.002)), block("b", exp_model(0.003)), block("c", exp_model(0.001)), need=2)
    d["phases"] = [{"name": "climb", "duration": 100.0}, {"name": "cruise", "duration": 300.0, "not_needed": ["c"]}]
    local = simulate_mission(d, mission_time=400.0, replications=5000, seed=4, threads=1)
    remote = simulate_mission(d, mission_time=400.0, replications=5000, seed=4, cluster=client)
    assert remote.state == local.state and remote.to_dict() == local.to_dict()


@pytest.mark.slow  # a dask LocalCluster of worker processes (as in tests/service/test_rbd_cluster.py)
def test_cancel_stops_the_chunks_and_the_cluster_serves_the_next_run(client: Any) -> None:
    ctl = RunControl()
    out: list[BaseException | None] = []

    def run() -> None:
        try:
            simulate_availability(long_plant(), horizon=1e5, replications=2_000_000, seed=1, cluster=client,
                                  control=ctl)
            out.append(None)
        except BaseException as e:  # handed to the test thread
            out.append(e)

    t = threading.Thread(target=run)
    t.start()
    deadline = time.monotonic() + 60
    while ctl.planned == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    ctl.cancel()
    stopped = time.monotonic()
    t.join(60)
    assert not t.is_alive() and isinstance(out[0], Cancelled)
    assert ctl.done < 2_000_000
    # the running chunks stopped too: every worker is idle again soon, not after its chunk
    while any(client.processing().values()) and time.monotonic() - stopped < 30:
        time.sleep(0.1)
    assert not any(client.processing().values())
    small = simulate_availability(long_plant(), horizon=1e3, replications=300, seed=2, cluster=client)
    assert small.state == simulate_availability(long_plant(), horizon=1e3, replications=300, seed=2).state


@pytest.mark.slow  # a dask LocalCluster of worker processes (as in tests/service/test_rbd_cluster.py)
def test_a_killed_worker_s_chunks_are_run_again_not_lost_or_doubled(client: Any) -> None:
    kw = {"horizon": 1e4, "replications": 24_000, "seed": 5}
    local = simulate_availability(long_plant(), threads=1, **kw)
    ctl = RunControl()
    out: list[Any] = []
    t = threading.Thread(target=lambda: out.append(simulate_availability(long_plant(), cluster=client, control=ctl,
                                                                         **kw)))
    t.start()
    deadline = time.monotonic() + 60
    while ctl.done == 0 and time.monotonic() < deadline:  # chunks are running on both workers
        time.sleep(0.05)
    pids = client.run(os.getpid)
    victim = next(iter(pids.values()))
    os.kill(victim, signal.SIGKILL)  # the nanny starts a new worker; the scheduler reruns its chunks
    t.join(300)
    assert not t.is_alive() and out, "the run finished"
    assert out[0].state == local.state
    assert (ctl.done, ctl.planned) == (24_000, 24_000)
    client.wait_for_workers(2, timeout=60)
    assert victim not in client.run(os.getpid).values()  # it did die mid-run, and was replaced
