"""Non-parametric life estimates: Kaplan–Meier and Turnbull's NPMLE, as step functions.

Both take plain arrays (not `LifeData`) so they stand alone, and share the censoring
convention of `bathtub.life.data`:

- `kaplan_meier(x, c, n)`: `x` times (>= 0), `c` codes 0 = failure, 1 = right-censored
  (suspended), `n` counts per row. At a time with both, failures come first (the usual
  convention: a unit suspended at t was at risk of the failures at t).
- `turnbull(xl, xr, n)`: each row is a set the failure is known to lie in: `xl == xr` an
  exact failure at that time, otherwise the half-open interval (xl, xr] (working at the
  inspection at xl, found failed at the inspection at xr); `xr = inf` is right-censored at
  xl, `xl = 0` left-censored at xr.

Conventions and how they compare with the peers:

- Greenwood variance Var S(t) = S(t)^2 * sum_{t_i <= t} d_i / (r_i (r_i - d_i)).
- `ci="log-log"` (default): bounds on log(-log S), the "exponential Greenwood" interval that
  lifelines' `KaplanMeierFitter` reports. `ci="plain"`: S ± z·sd clipped to [0, 1], the
  normal-approximation interval that `reliability`'s `KaplanMeier` (and Minitab) report.
  Where S = 1 both give [1, 1]; where S = 0 both give [0, 0] and the variance is undefined
  (reported as null), as in both peers.
- Median and B10: the smallest time at which the estimate is <= 0.5 (<= 0.9), lifelines'
  `percentile` rule; null when the curve never gets there.
- MTTF: the area under the curve. When the curve does not reach 0 the mean is not
  identified from the data, so `mttf` is the *restricted* mean up to the last observed time
  (`mttf_horizon` in the record; `restricted` says which case applies), lifelines'
  `restricted_mean_survival_time` at that time.
- Turnbull: mass sits on the innermost (Turnbull) intervals; where an interval has width,
  the NPMLE does not say where inside it the mass lies. `sf` puts it at the right end
  (surpyval's `R`, the upper curve), `sf_left` at the left end (surpyval's `R_lower`). The
  metrics spread each interval's mass uniformly over it (a point mass for exact data, so
  they reduce to Kaplan–Meier's), which gives the midpoint rule for MTTF.
- Turnbull bounds: pointwise bootstrap percentiles (there is no Greenwood analogue for
  interval data). surpyval's Turnbull uses the same half-open sets and agrees to 1e-9;
  lifelines' interval NPMLE takes closed sets [xl, xr] (so where an exact time meets an
  interval's end it may pool them differently) and stops at a likelihood change of 1e-7,
  agreeing to ~1e-6 in the masses where no endpoints coincide.
- reliability's KaplanMeier sorts rows unstably, so where a failure and a suspension share
  a time its estimate may differ from the failures-first convention in the last digits.
- Hazard and density: a step function has neither, so both are null with the reason in
  `null_reason`; the cumulative hazard is -ln S (null where S = 0).
"""

from bathtub.life.product_limit import CiMethod, KaplanMeier, greenwood_bounds, kaplan_meier
from bathtub.life.step_estimates import NO_CUMULATIVE_HAZARD, NO_DENSITY
from bathtub.life.turnbull_npmle import BOOTSTRAP_TOL, Turnbull, turnbull

# The estimates live in product_limit (Kaplan–Meier) and turnbull_npmle (interval data);
# what they share in step_estimates. Every name stays importable from here.
__all__ = [
    "BOOTSTRAP_TOL",
    "NO_CUMULATIVE_HAZARD",
    "NO_DENSITY",
    "CiMethod",
    "KaplanMeier",
    "Turnbull",
    "greenwood_bounds",
    "kaplan_meier",
    "turnbull",
]
