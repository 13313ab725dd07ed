"""Repairable-system fits against surpyval on the same data, interleaved in the same run by the
shared harness (bench/harness.py).

    python bench/recurrent.py [--systems 1000] [--events 50] [--repeats 5]
    python bench/recurrent.py --quick      # 200 systems × ~20 events, 2 rounds (a smoke run)

Data: `systems` systems simulated under Kijima II (Weibull alpha 100, beta 2, q 0.4) and
observed to the end that gives `events` failures each on average. Timed, every case once a
round: our Kijima I and II fits (`grp.fit`, the maximum-likelihood estimate with its
covariance), our whole `kijima2` record (`fit_data`: the fit, the q = 0 and q = 1 refits of
the repair test, per-system predictions and trend tests), surpyval's GeneralizedRenewal
(Kijima I and II), and the power law (ours against surpyval's CrowAMSAA). Figures: the
per-round ratio of surpyval's wall time to ours for each fit, and for our whole record against
surpyval's one Kijima II fit (more work on our side, said in the figure's note).

The estimates are checked first (the run exits non-zero beyond): GRP alpha and beta within a
relative 5e-4 of surpyval's and q within 5e-4 (surpyval's optimiser stops ~1e-5 short of the
maximum), the power law's within a relative 1e-6.

On a shared host, OpenBLAS's thread pool makes L-BFGS-B's small BLAS calls wait for busy
cores: OPENBLAS_NUM_THREADS=1 roughly halves our fit times there (measured at load 11 on
2 cores: Kijima I fit 2.2 s -> 1.0 s, Kijima II 0.8 s -> 0.5 s, whole record 2.8 s -> 1.7 s).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import Bench, kept, timed

from bathtub.recurrent import events, fit_data, grp, nhpp

GRP_TOLERANCE = 5e-4  # relative on alpha and beta, absolute on q
POWER_LAW_TOLERANCE = 1e-6  # relative


def simulated(systems: int, per_system: int, seed: int = 1) -> tuple[list[np.ndarray], float]:
    rng = np.random.default_rng(seed)
    alpha, beta, q = 100.0, 2.0, 0.4
    # Ends chosen from a pilot run so that the mean count is about `per_system`.
    pilot = grp.simulate(alpha, beta, q, "kijima2", np.full(200, 100.0 * per_system), rng)
    rate = np.mean([s.size for s in pilot]) / (100.0 * per_system)
    end = per_system / rate
    return grp.simulate(alpha, beta, q, "kijima2", np.full(systems, end), rng), end


def main() -> None:
    from surpyval import Weibull
    from surpyval.recurrent import CrowAMSAA, GeneralizedRenewal

    ap = argparse.ArgumentParser()
    ap.add_argument("--systems", type=int, default=1000)
    ap.add_argument("--events", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="200 systems × ~20 events, 2 rounds (a smoke run)")
    args = ap.parse_args()
    if args.quick:
        args.systems, args.events, args.repeats = 200, 20, 2
    bench = Bench("recurrent")
    sims, end = simulated(args.systems, args.events)
    data = events([s.tolist() for s in sims], ends=[end] * len(sims))
    size = f"{len(sims):,} systems, {data.n_events:,} events"
    print(f"{size} ({data.n_events / len(sims):.1f} a system), end {end:.1f}")
    x, i, c = [], [], []
    for k, s in enumerate(sims):
        x += [*s.tolist(), end]
        i += [k] * (s.size + 1)
        c += [0] * s.size + [1]
    out: dict = {}
    cases = {
        "ours kijima1 fit": lambda: grp.fit(data, "kijima1"),
        "ours kijima2 fit": lambda: grp.fit(data, "kijima2"),
        "ours kijima2 record": lambda: fit_data(data, "kijima2"),
        "ours power law": lambda: nhpp.power_law(data),
        "surpyval GRP kijima i": lambda: GeneralizedRenewal.fit(x=x, i=i, c=c, dist=Weibull, kijima="i"),
        "surpyval GRP kijima ii": lambda: GeneralizedRenewal.fit(x=x, i=i, c=c, dist=Weibull, kijima="ii"),
        "surpyval CrowAMSAA": lambda: CrowAMSAA.fit(x=x, i=i, c=c),
    }
    rounds = bench.interleave({name: timed(kept(out, name, fn), calls=None) for name, fn in cases.items()},
                              args.repeats)
    for ours, peer in (("ours kijima1 fit", "surpyval GRP kijima i"), ("ours kijima2 fit", "surpyval GRP kijima ii")):
        g = out[ours]
        q, alpha, beta = out[peer].params
        print(f"{ours}: q {g.q:.6f} vs {q:.6f}, alpha {g.alpha:.4f} vs {alpha:.4f}, beta {g.beta:.6f} vs {beta:.6f}")
        bench.check(f"{ours}: alpha, beta relative to surpyval's",
                    max(abs(g.alpha / alpha - 1), abs(g.beta / beta - 1)), GRP_TOLERANCE)
        bench.check(f"{ours}: q against surpyval's", abs(g.q - q), GRP_TOLERANCE)
    pl = out["ours power law"]
    a, b = out["surpyval CrowAMSAA"].params
    bench.check("power law: alpha, beta relative to CrowAMSAA's",
                max(abs(pl.lam ** (-1 / pl.beta) / a - 1), abs(pl.beta / b - 1)), POWER_LAW_TOLERANCE)
    for ours, peer, what in (("ours kijima1 fit", "surpyval GRP kijima i", "GRP Kijima I fit"),
                             ("ours kijima2 fit", "surpyval GRP kijima ii", "GRP Kijima II fit"),
                             ("ours power law", "surpyval CrowAMSAA", "power-law (Crow-AMSAA) fit")):
        bench.figure(f"{what}, wall s", rounds, ours, peer, key="seconds", unit="s", higher_is_better=False,
                     note=f"{size}; maximum likelihood with its covariance")
    bench.figure("whole Kijima II record against one Kijima II fit, wall s", rounds, "ours kijima2 record",
                 "surpyval GRP kijima ii", key="seconds", unit="s", higher_is_better=False,
                 note=f"{size}; ours: the fit, the q = 0 and q = 1 refits of the repair test, per-system "
                      "predictions and trend tests; surpyval: the fit alone")
    bench.write()


if __name__ == "__main__":
    main()
