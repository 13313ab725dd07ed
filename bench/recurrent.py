"""Repairable-system fits against surpyval on the same data, timed interleaved.

Run: python bench/recurrent.py [--systems 1000] [--events 50] [--repeat 5] [--skip-peer]

Data: `systems` systems simulated under Kijima II (Weibull alpha 100, beta 2, q 0.4) and
observed to the end that gives `events` failures each on average. Timed, one after the other
within each repeat (so load changes hit both): our Kijima I and II fits (`grp.fit`, the
maximum-likelihood estimate with its covariance), our whole `kijima2` record (`fit_data`:
the fit, the q = 0 and q = 1 refits of the repair test, per-system predictions and trend
tests), surpyval's GeneralizedRenewal (Kijima I and II), and the power law (ours against
surpyval's CrowAMSAA). Prints the median, the spread (min-max) and the load average before
and after, and the largest parameter difference from surpyval.

On a shared host, OpenBLAS's thread pool makes L-BFGS-B's small BLAS calls wait for busy
cores: OPENBLAS_NUM_THREADS=1 roughly halves our fit times there (measured at load 11 on
2 cores: Kijima I fit 2.2 s -> 1.0 s, Kijima II 0.8 s -> 0.5 s, whole record 2.8 s -> 1.7 s).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from bathtub.recurrent import events, fit_data, grp, nhpp


def simulated(systems: int, per_system: int, seed: int = 1) -> tuple[list[np.ndarray], float]:
    rng = np.random.default_rng(seed)
    alpha, beta, q = 100.0, 2.0, 0.4
    # Ends chosen from a pilot run so that the mean count is about `per_system`.
    pilot = grp.simulate(alpha, beta, q, "kijima2", np.full(200, 100.0 * per_system), rng)
    rate = np.mean([s.size for s in pilot]) / (100.0 * per_system)
    end = per_system / rate
    return grp.simulate(alpha, beta, q, "kijima2", np.full(systems, end), rng), end


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--systems", type=int, default=1000)
    ap.add_argument("--events", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--skip-peer", action="store_true")
    args = ap.parse_args()
    sims, end = simulated(args.systems, args.events)
    data = events([s.tolist() for s in sims], ends=[end] * len(sims))
    print(f"{len(sims)} systems, {data.n_events} events ({data.n_events / len(sims):.1f} a system), end {end:.1f}")
    x, i, c = [], [], []
    for k, s in enumerate(sims):
        x += [*s.tolist(), end]
        i += [k] * (s.size + 1)
        c += [0] * s.size + [1]
    cases: dict[str, Callable[[], Any]] = {
        "ours kijima1 fit": lambda: grp.fit(data, "kijima1"),
        "ours kijima2 fit": lambda: grp.fit(data, "kijima2"),
        "ours kijima2 record": lambda: fit_data(data, "kijima2"),
        "ours power law": lambda: nhpp.power_law(data),
    }
    if not args.skip_peer:
        from surpyval import Weibull
        from surpyval.recurrent import CrowAMSAA, GeneralizedRenewal

        cases["surpyval GRP kijima i"] = lambda: GeneralizedRenewal.fit(x=x, i=i, c=c, dist=Weibull, kijima="i")
        cases["surpyval GRP kijima ii"] = lambda: GeneralizedRenewal.fit(x=x, i=i, c=c, dist=Weibull, kijima="ii")
        cases["surpyval CrowAMSAA"] = lambda: CrowAMSAA.fit(x=x, i=i, c=c)
    load_before = os.getloadavg()
    times: dict[str, list[float]] = {k: [] for k in cases}
    results: dict[str, Any] = {}
    for _ in range(args.repeat):
        for name, fn in cases.items():
            t0 = time.perf_counter()
            results[name] = fn()
            times[name].append(time.perf_counter() - t0)
    load_after = os.getloadavg()
    print(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f} (1 min); {os.cpu_count()} cores")
    print(f"{'case':28s} {'median s':>10s} {'min':>8s} {'max':>8s}")
    for name, ts in times.items():
        print(f"{name:28s} {statistics.median(ts):10.3f} {min(ts):8.3f} {max(ts):8.3f}")
    if not args.skip_peer:
        pairs = (("ours kijima1 fit", "surpyval GRP kijima i"), ("ours kijima2 fit", "surpyval GRP kijima ii"))
        for ours, peer in pairs:
            g = results[ours]
            q, alpha, beta = results[peer].params
            ratio = statistics.median(times[peer]) / statistics.median(times[ours])
            print(f"{ours}: q {g.q:.6f} vs {q:.6f}, alpha {g.alpha:.4f} vs {alpha:.4f}, beta {g.beta:.6f} vs "
                  f"{beta:.6f}; surpyval takes {ratio:.1f}x our time")
        pl = results["ours power law"]
        a, b = results["surpyval CrowAMSAA"].params
        print(f"power law: beta {pl.beta:.8f} vs {b:.8f}, alpha {pl.lam ** (-1 / pl.beta):.6f} vs {a:.6f}")


if __name__ == "__main__":
    main()
