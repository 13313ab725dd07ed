"""Cox regression benchmark: Efron ties, 5 covariates, n rows with heavy ties (times rounded to
1/100 of the mean), ours against lifelines' CoxPHFitter, statsmodels' PHReg and R's coxph,
interleaved in the same run by the shared harness (bench/harness.py).

    python bench/regression_cox.py [--sizes 1e4 1e5 1e6] [--repeats 3] [--peer-max 1e5]
    python bench/regression_cox.py --quick      # 10^4 rows, 2 rounds (a smoke run)

lifelines and statsmodels run at n <= --peer-max (at 10^6 they take minutes); R (Rscript with
the survival package: Debian's r-cran-survival) at every n. R runs as one persistent process
that has read the data once, and each round asks it for its batch of fits, timed inside R
(system.time around coxph), so its rounds interleave with ours like the others'.

Each figure is the per-round ratio of the peer's wall time to ours. Every peer's coefficients
are checked against ours first and the run exits non-zero beyond TOLERANCE (below).
"""

from __future__ import annotations

import argparse
import math
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import MIN_ROUND, Bench, kept, timed

from bathtub.regression.cox import fit_cox

BETA = np.array([0.5, -0.3, 0.2, 0.1, -0.1])
# Largest |Δβ| from ours: lifelines stops at its looser convergence (~1e-7 off); statsmodels and R
# solve the same partial likelihood to machine precision.
TOLERANCE = {"lifelines": 1e-6, "statsmodels": 1e-9, "R coxph": 1e-9}
R_LOOP = """suppressMessages(library(survival))
d <- read.csv("{csv}")
cat("ready\\n"); flush(stdout())
con <- file("stdin"); open(con)
while (length(line <- readLines(con, n = 1)) > 0) {{
  k <- as.integer(line)
  s <- system.time(for (i in seq_len(k)) f <- coxph(Surv(t, e) ~ x0 + x1 + x2 + x3 + x4, data = d, ties = "efron"))
  cat("fit", s[["elapsed"]] / k, (s[["user.self"]] + s[["sys.self"]]) / k,
      formatC(coef(f), digits = 17, format = "g"), "\\n")
  flush(stdout())
}}"""


def data(n: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 5))
    t = np.ceil(rng.exponential(1 / np.exp(x @ BETA)) * 100)
    c = np.ceil(rng.exponential(2.0, n) * 100)
    return x, np.minimum(t, c), t <= c


def ours(x, t, e):
    # robust=False: the peers compute no sandwich variance unless asked; same work compared
    return fit_cox(x, [f"x{j}" for j in range(5)], t, e, robust=False).beta


def lifelines_fit(x, t, e):
    from lifelines import CoxPHFitter

    frame = pd.DataFrame(x, columns=[f"x{j}" for j in range(5)]).assign(t=t, e=e.astype(int))
    return CoxPHFitter().fit(frame, "t", "e").params_.to_numpy()


def statsmodels_fit(x, t, e):
    from statsmodels.duration.hazard_regression import PHReg

    return PHReg(t, x, status=e.astype(float), ties="efron").fit().params


class RSession:
    """One Rscript holding the data; `fit` asks it for a batch of coxph fits, timed inside R (one at
    the first call, then enough for MIN_ROUND seconds, like the harness's `timed(..., calls=None)`)."""

    def __init__(self, csv: Path) -> None:
        self.proc = subprocess.Popen(["Rscript", "-e", R_LOOP.format(csv=csv)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        if self.proc.stdout.readline().strip() != "ready":
            raise SystemExit("Rscript did not start (is r-cran-survival installed?)")
        self.coef = np.full(5, np.nan)
        self.calls = 0

    def fit(self) -> dict[str, float]:
        n = self.calls or 1
        self.proc.stdin.write(f"{n}\n")
        self.proc.stdin.flush()
        words = self.proc.stdout.readline().split()
        if not words or words[0] != "fit":
            raise SystemExit(f"Rscript failed: {' '.join(words)!r}")
        self.coef = np.array([float(v) for v in words[3:]])
        wall = float(words[1])
        if not self.calls:
            self.calls = max(1, math.ceil(MIN_ROUND / max(wall, 1e-3)))  # R's clock ticks in milliseconds
        return {"seconds": wall, "cpu_seconds": float(words[2]), "calls": n}

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", nargs="+", type=float, default=[1e4, 1e5, 1e6])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--peer-max", type=float, default=1e5)
    ap.add_argument("--quick", action="store_true", help="10^4 rows, 2 rounds (a smoke run)")
    args = ap.parse_args()
    if args.quick:
        args.sizes, args.repeats = [1e4], 2
    if shutil.which("Rscript") is None:
        raise SystemExit("Rscript not found: apt-get install r-cran-survival (R's coxph is a baseline here)")
    bench = Bench("regression_cox")
    for size in args.sizes:
        n = int(size)
        x, t, e = data(n)
        out: dict = {}
        peers: dict[str, Callable] = {"lifelines": lifelines_fit, "statsmodels": statsmodels_fit} \
            if n <= args.peer_max else {}
        with tempfile.TemporaryDirectory() as tmp:
            csv = Path(tmp) / "d.csv"
            frame = pd.DataFrame(x, columns=[f"x{j}" for j in range(5)]).assign(t=t, e=e.astype(int))
            frame.to_csv(csv, index=False)
            r = RSession(csv)
            try:
                cases = {"bathtub": timed(kept(out, "bathtub", lambda x=x, t=t, e=e: ours(x, t, e)), calls=None)}
                cases |= {name: timed(kept(out, name, lambda fn=fn, x=x, t=t, e=e: fn(x, t, e)), calls=None)
                          for name, fn in peers.items()}
                cases["R coxph"] = r.fit
                rounds = bench.interleave(cases, args.repeats)
                out["R coxph"] = r.coef
            finally:
                r.close()
        for name in [*peers, "R coxph"]:
            bench.check(f"n={n:,}: max |Δβ| of {name} from ours",
                        float(np.max(np.abs(np.asarray(out[name]) - out["bathtub"]))), TOLERANCE[name])
        for name in [*peers, "R coxph"]:
            bench.figure(f"Cox fit (Efron ties, 5 covariates), {n:,} rows, wall s", rounds, "bathtub", name,
                         key="seconds", unit="s", higher_is_better=False,
                         note="R timed inside R (system.time around coxph), data already read"
                         if name == "R coxph" else "")
    bench.write()


if __name__ == "__main__":
    main()
