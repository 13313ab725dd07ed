"""Fleet speed: a forecast of 100,000 items × 24 periods, an ingest of 10,000 usage readings with the
forecast and alert evaluation, and a tracked fleet's re-prediction of 1,000 items' remaining lives (10
measurements each; random-effects and own-line models), all through the library the service calls
(bench/README: same-run medians).

    python bench/fleet.py [--repeats 7]

Prints the median and spread of interleaved repeats and the load average before and after.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

from bathtub.distributions import Lifetime
from bathtub.fleet import forecast
from bathtub_api.tools.fleets import apply_readings, compute, evaluate_rules
from bathtub_api.tools.tracking import predict

RANDOM_EFFECTS = {"model": "random_effects", "path": "linear", "threshold": 20.0, "direction": "up",
                  "random_effects": {"params": [{"name": "mu_a", "value": 2.0}, {"name": "mu_b", "value": 0.5},
                                                {"name": "sd_b", "value": 0.1}, {"name": "sigma", "value": 0.3}]}}
OWN_LINE = {"model": "pseudo_failure", "path": "linear", "threshold": 20.0, "direction": "up",
            "units": [{"id": "u", "residual_sd": 0.3, "readings": 50}]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    rng = np.random.default_rng(1)
    life = Lifetime("weibull", {"alpha": 5000.0, "beta": 2.0})
    n = 100_000
    ages, rates = rng.uniform(0, 4000, n), rng.uniform(50, 150, n)
    m = 10_000
    body = {"items": [{"name": f"i{k}", "current_use": float(a), "rate": float(r)} for k, (a, r) in
                      enumerate(zip(ages[:m], rates[:m], strict=True))],
            "rate_source": "estimated", "default_rate": None, "periods": 24, "replace_failed": False,
            "confidence": 0.9, "period_label": "months",
            "alert_rules": [{"kind": "expected_failures_next_period", "threshold": 1e9, "periods": 1,
                             "email": "a@b.c", "active": False},
                            {"kind": "item_failure_probability", "threshold": 0.99, "periods": 3,
                             "email": "a@b.c", "active": False}]}
    readings = [{"key": f"i{k}", "current_use": float(ages[k]) + 30.0, "rate": None, "read_at": 2e9,
                 "row": f"readings[{k}]"} for k in range(m)]
    load0 = os.getloadavg()
    times: dict[str, list[float]] = {"forecast 100k x 24": [], "ingest 10k readings": [],
                                     "tracked 1k items, random effects": [], "tracked 1k items, own line": []}
    ts = np.arange(1.0, 11.0)
    series = {f"g{k}": (ts.tolist(), (2.0 + rng.uniform(0.3, 0.9) * ts + rng.normal(0, 0.3, ts.size)).tolist())
              for k in range(1000)}
    for _ in range(args.repeats):
        t = time.perf_counter()
        forecast(life, ages, rates, 24)
        times["forecast 100k x 24"].append(time.perf_counter() - t)
        t = time.perf_counter()
        new, _ = apply_readings(body, readings)
        fc, _ = compute(life, new)
        evaluate_rules(new["alert_rules"], fc, life, new)
        times["ingest 10k readings"].append(time.perf_counter() - t)
        for name, record in (("random effects", RANDOM_EFFECTS), ("own line", OWN_LINE)):
            t = time.perf_counter()
            predict(record, series, list(series), 0.9)
            times[f"tracked 1k items, {name}"].append(time.perf_counter() - t)
    load1 = os.getloadavg()
    for name, ts in times.items():
        print(f"{name}: median {statistics.median(ts):.3f} s (min {min(ts):.3f}, max {max(ts):.3f}) over "
              f"{len(ts)} interleaved repeats")
    print(f"load average before {load0[0]:.2f}, after {load1[0]:.2f}; {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
