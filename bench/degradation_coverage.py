"""Coverage of the random-effects model's 95% Wald intervals on simulated degradation data of
known truth (slope-only model, REML, 30 units × 8 readings): how many of N data sets each
parameter's interval covers. Run: PYTHONPATH=python python3 bench/degradation_coverage.py [N]"""

from __future__ import annotations

import sys

import numpy as np

from bathtub.degradation import Path, Readings, fit_random_effects

TRUTH = {"mu_a": 5.0, "mu_b": 2.0, "sd_b": 0.4, "sigma": 0.5}
T = np.linspace(1.0, 10.0, 8)


def main(n: int) -> None:
    covered = dict.fromkeys(TRUTH, 0)
    m = 30
    for s in range(n):
        rng = np.random.default_rng(1000 + s)
        b = rng.normal(TRUTH["mu_b"], TRUTH["sd_b"], m)
        t = np.tile(T, m)
        y = TRUTH["mu_a"] + np.repeat(b, T.size) * t + rng.normal(0, TRUTH["sigma"], t.size)
        r = Readings(tuple(map(str, range(m))), t, y, np.arange(0, t.size + 1, T.size))
        for p in fit_random_effects(Path.parse("linear"), r, method="reml")["params"]:
            covered[p["name"]] += p["ci"][0] < TRUTH[p["name"]] < p["ci"][1]
    print({k: f"{v}/{n}" for k, v in covered.items()})


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100)
