"""Scale-out of a simulation on dask.distributed: the 10-block benchmark plant run locally on one
engine thread, and on LocalClusters of 1 and 2 single-thread worker processes, interleaved.

Prints the speed-up of 2 workers over 1 (the scaling) and the cost of the cluster against the
local run on one thread (scheduling, chunk transfer, merging), and checks every cluster run
gave the local run's numbers to the bit. On a real cluster, the same chunks spread over every
worker thread of every machine (see the README's "Scale-out" section).

    python bench/scaleout.py [--replications 200000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from distributed import Client, LocalCluster
from engine.plant import HORIZON, two_trains
from harness import Bench
from harness import timed as harness_timed

from bathtub.engine import simulate_availability


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--replications", type=int, default=200_000)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    d, reps = two_trains(5), args.replications
    local = simulate_availability(d, horizon=HORIZON, replications=reps, seed=1, threads=1)
    bench = Bench("scaleout", f"python bench/scaleout.py --replications {reps}")
    kw = {"processes": True, "threads_per_worker": 1, "dashboard_address": None, "silence_logs": 40}
    with LocalCluster(n_workers=1, **kw) as one, LocalCluster(n_workers=2, **kw) as two, \
            Client(one, set_as_default=False) as c1, Client(two, set_as_default=False) as c2:

        def on(client: Client):
            def run():
                res = simulate_availability(d, horizon=HORIZON, replications=reps, seed=1, cluster=client)
                assert res.state == local.state, "a cluster run must give the local run's numbers"
                return res

            return harness_timed(run, work=lambda r: r.events)

        rounds = bench.interleave({
            "local, 1 engine thread": harness_timed(lambda: simulate_availability(
                d, horizon=HORIZON, replications=reps, seed=1, threads=1), work=lambda r: r.events),
            "cluster, 1 worker": on(c1),
            "cluster, 2 workers": on(c2),
        }, args.repeats)
    bench.figure("simulation on a 2-worker LocalCluster, events/s", rounds, "cluster, 2 workers", "cluster, 1 worker",
                 key="rate", unit="events/s", higher_is_better=True,
                 note=f"{reps:,} replications of the 10-block plant; bit-identical to the local run")
    bench.figure("simulation on a 1-worker LocalCluster, events/s (the cluster's own cost)", rounds,
                 "cluster, 1 worker", "local, 1 engine thread", key="rate", unit="events/s", higher_is_better=True)
    bench.write()


if __name__ == "__main__":
    main()
