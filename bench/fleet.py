"""Fleet speed, through the library the service calls, against physical-limit baselines measured
in the same run by the shared harness (bench/harness.py). No peer library forecasts a fleet, so
each baseline is the least work the computation must do, written as bare NumPy/Python with no
checks, no structure and no output beyond the numbers:

- forecast of 100,000 items × 24 periods (Weibull life, no replacement, Poisson-binomial
  intervals by the refined normal approximation at this size): baseline = the bare passes over
  the same arrays, S(a + r·t)/S(a) from the Weibull closed form, its differences, and the three
  per-period sums (Σp, Σp(1−p), Σp(1−p)(1−2p)) the intervals are made from;
- ingest of 10,000 usage readings with the forecast and alert evaluation: baseline = a Python
  loop reading every reading into arrays, then the same bare forecast passes on those items;
- a tracked fleet's remaining-life re-prediction of 1,000 items (10 measurements each; the
  random-effects and the own-line model): baseline = a Python loop turning each item's
  measurements into arrays and fitting its least-squares line (np.polyfit), the least a
  per-item prediction from a line does.

Each figure is the per-round ratio of our items per second to the baseline's (below 1: the
share of the limit we reach). The forecast's and the ingest's expected counts are checked
against the baseline's; every tracked item must come out predicted.

    python bench/fleet.py [--repeats 7]
    python bench/fleet.py --quick        # 2 rounds (a smoke run)
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import Bench, kept, timed

from bathtub.degradation.tracking import predict
from bathtub.distributions import Lifetime
from bathtub.fleet import forecast
from bathtub.fleet.plan import apply_readings, evaluate_rules, fleet_forecast

ALPHA, BETA, PERIODS = 5000.0, 2.0, 24
RANDOM_EFFECTS = {"model": "random_effects", "path": "linear", "threshold": 20.0, "direction": "up",
                  "random_effects": {"params": [{"name": "mu_a", "value": 2.0}, {"name": "mu_b", "value": 0.5},
                                                {"name": "sd_b", "value": 0.1}, {"name": "sigma", "value": 0.3}]}}
OWN_LINE = {"model": "pseudo_failure", "path": "linear", "threshold": 20.0, "direction": "up",
            "units": [{"id": "u", "residual_sd": 0.3, "readings": 50}]}
TOLERANCE = 1e-9  # relative difference of the expected counts per period from the bare passes'


def bare_forecast(ages: np.ndarray, rates: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Σp, Σp(1−p), Σp(1−p)(1−2p) per period, p the chance of failing in it given survival to now."""
    steps = np.arange(PERIODS + 1, dtype=float)
    h0 = (ages / ALPHA) ** BETA
    surv = np.exp(h0[:, None] - ((ages[:, None] + rates[:, None] * steps) / ALPHA) ** BETA)
    p = surv[:, :-1] - surv[:, 1:]
    q = p * (1.0 - p)
    return p.sum(axis=0), q.sum(axis=0), (q * (1.0 - 2.0 * p)).sum(axis=0)


def relative_gap(ours: list[float] | np.ndarray, bare: np.ndarray) -> float:
    return float(np.max(np.abs(np.asarray(ours) / bare - 1.0)))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--quick", action="store_true", help="2 rounds (a smoke run)")
    args = ap.parse_args()
    repeats = 2 if args.quick else args.repeats
    bench = Bench("fleet")
    rng = np.random.default_rng(1)
    life = Lifetime.of("weibull", {"alpha": ALPHA, "beta": BETA})
    n, m = 100_000, 10_000
    ages, rates = rng.uniform(0, 4000, n), rng.uniform(50, 150, n)

    out: dict = {}
    rounds = bench.interleave({
        "bathtub": timed(kept(out, "ours", lambda: forecast(life, ages, rates, PERIODS)), work=lambda _: n,
                         calls=None),
        "bare NumPy passes": timed(kept(out, "bare", lambda: bare_forecast(ages, rates)), work=lambda _: n,
                                   calls=None)}, repeats)
    bench.check("forecast: expected failures per period, relative to the bare passes",
                relative_gap(out["ours"].expected_failures, out["bare"][0]), TOLERANCE)
    bench.figure(f"fleet forecast, {n:,} items × {PERIODS} periods, items/s", rounds, "bathtub", "bare NumPy passes",
                 key="rate", unit="items/s", higher_is_better=True,
                 note=f"with 90% intervals ({out['ours'].interval_method}); the baseline only "
                      "computes the conditional survival grid and the per-period sums the intervals need")

    body = {"items": [{"name": f"i{k}", "current_use": float(a), "rate": float(r)} for k, (a, r) in
                      enumerate(zip(ages[:m], rates[:m], strict=True))],
            "rate_source": "estimated", "default_rate": None, "periods": PERIODS, "replace_failed": False,
            "confidence": 0.9, "period_label": "months",
            "alert_rules": [{"kind": "expected_failures_next_period", "threshold": 1e9, "periods": 1,
                             "email": "a@b.c", "active": False},
                            {"kind": "item_failure_probability", "threshold": 0.99, "periods": 3,
                             "email": "a@b.c", "active": False}]}
    readings = [{"key": f"i{k}", "current_use": float(ages[k]) + 30.0, "rate": None, "read_at": 2e9,
                 "row": f"readings[{k}]"} for k in range(m)]

    def ingest() -> dict:
        new, _ = apply_readings(body, readings)
        fc, _ = fleet_forecast(life, new)
        evaluate_rules(new["alert_rules"], fc, life, new)
        return fc

    def bare_ingest() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        use = {r["key"]: r["current_use"] for r in readings}
        a = np.array([use[i["name"]] for i in body["items"]])
        r = np.array([i["rate"] for i in body["items"]])
        return bare_forecast(a, r)

    rounds = bench.interleave({
        "bathtub": timed(kept(out, "ours", ingest), work=lambda _: m, calls=None),
        "bare loop + NumPy passes": timed(kept(out, "bare", bare_ingest), work=lambda _: m, calls=None)}, repeats)
    bench.check("ingest: expected failures per period, relative to the bare passes",
                relative_gap(out["ours"]["expected_failures"], out["bare"][0]), TOLERANCE)
    bench.figure(f"fleet ingest of {m:,} usage readings with forecast and alerts, readings/s", rounds, "bathtub",
                 "bare loop + NumPy passes", key="rate", unit="readings/s", higher_is_better=True,
                 note="ours checks every reading, updates each item's usage state and evaluates 2 alert rules; "
                      "the baseline reads the readings into arrays and makes the bare forecast passes")

    ts = np.arange(1.0, 11.0)
    series = {f"g{k}": (ts.tolist(), (2.0 + rng.uniform(0.3, 0.9) * ts + rng.normal(0, 0.3, ts.size)).tolist())
              for k in range(1000)}

    def line_fits() -> list[np.ndarray]:
        return [np.polyfit(np.asarray(t), np.asarray(v), 1) for t, v in series.values()]

    for name, record in (("random effects", RANDOM_EFFECTS), ("own line", OWN_LINE)):
        rounds = bench.interleave({
            "bathtub": timed(kept(out, "ours", lambda r=record: predict(r, series, list(series), 0.9)),
                             work=lambda _: len(series), calls=None),
            "per-item line fits": timed(line_fits, work=lambda _: len(series), calls=None)}, repeats)
        lives = [row["remaining_life"] for row in out["ours"].values()]
        bad = sum(1 for life_ in lives if life_.get("status") != "predicted" or not math.isfinite(life_["median"]))
        bench.check(f"tracked fleet, {name}: items without a finite predicted median", bad, 0)
        bench.figure(f"tracked fleet re-prediction, {name}, 1,000 items × 10 measurements, items/s", rounds,
                     "bathtub", "per-item line fits", key="rate", unit="items/s", higher_is_better=True,
                     note="ours: each item's remaining-life median, 90% interval, mean and P(never); the baseline "
                          "only fits each item's least-squares line (np.polyfit)")
    bench.write()


if __name__ == "__main__":
    main()
