"""Royston–Parmar models (`royston_parmar`, `proportional_odds`) against independent references.

- No interior knots: the hazard-scale model is the Weibull PH model (`weibull_ph`, itself pinned to
  R's survreg), the odds-scale model the log-logistic AFT read as odds ratios (β = −γ_AFT/σ).
- With knots: a log-likelihood written here from the paper's definition, with the spline built a
  different way (scipy's natural CubicSpline through its values at the knots, extended linearly),
  maximised by scipy.optimize; standard errors from statsmodels' GenericLikelihoodModel (numerical
  Hessian) of that likelihood. A reparametrisation of the spline leaves β and its SE unchanged.
- Knots at R's quantile(type 7) of the uncensored log times.
- A proportional-hazards simulation with a non-Weibull baseline: β close to Cox's partial likelihood.
- Time unit: t → c·t for c in 1e-3..1e6 leaves β, the spline shape and every reliability unchanged.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from lifelines.datasets import load_rossi
from scipy import interpolate, optimize, special
from statsmodels.base.model import GenericLikelihoodModel

from bathtub.errors import InputError
from bathtub.regression import design, flexible, flexible_models
from bathtub.regression.cox import fit_cox
from bathtub.regression.parametric import fit_parametric, ph_coefficients
from bathtub.regression.records import Rows, fit_regression
from tests.regression.rref import run_r

COLS = ["fin", "age", "race", "wexp", "mar", "paro", "prio"]
ROSSI = load_rossi()
X = ROSSI[COLS].to_numpy(float)
T = ROSSI["week"].to_numpy(float)
E = ROSSI["arrest"].to_numpy(bool)
COLUMNS = {**{k: ROSSI[k].tolist() for k in ROSSI.columns}, "state": (1 - ROSSI["arrest"]).tolist()}
MAPPING = {"x": "week", "c": "state"}
UNIT = {"fin": 1, "age": 30, "race": 0, "wexp": 1, "mar": 0, "paro": 1, "prio": 2}


def _delayed_entry() -> np.ndarray:
    rng = np.random.default_rng(7)
    return np.where(rng.random(T.size) < 0.3, T * rng.uniform(0.1, 0.9, T.size), 0.0)


@pytest.mark.parametrize("start", [None, _delayed_entry()], ids=["plain", "delayed entry"])
def test_no_interior_knots_is_weibull_ph(start: np.ndarray | None) -> None:
    rp = flexible.fit_spline("royston_parmar", X, T, E, start, knots=0)
    wb = fit_parametric("weibull_ph", X, T, E, start)
    b, cov = ph_coefficients(wb)
    assert np.allclose(rp.beta, b, rtol=1e-8, atol=1e-10)
    assert math.isclose(rp.loglik, wb.loglik, rel_tol=1e-12) and math.isclose(rp.loglik0, wb.loglik0, rel_tol=1e-12)
    # log H = −μ/σ + log t /σ + xb
    assert np.allclose(rp.gamma, [-wb.mu / wb.sigma, 1 / wb.sigma], rtol=1e-8)
    # weibull_ph's Hessian is by central differences: its SEs carry ~1e-6 of that
    assert np.allclose(np.sqrt(np.diag(rp.cov[2:, 2:])), np.sqrt(np.diag(cov)), rtol=1e-5)


def test_no_interior_knots_record_equals_weibull_ph_record() -> None:
    rp = fit_regression(COLUMNS, MAPPING, "royston_parmar", COLS, options={"knots": 0})
    wb = fit_regression(COLUMNS, MAPPING, "weibull_ph", COLS)
    for a, b in zip(rp["coefficients"], wb["coefficients"], strict=True):
        assert a["name"] == b["name"] and a["exp_coef_kind"] == b["exp_coef_kind"] == "hazard ratio"
        assert math.isclose(a["value"], b["value"], rel_tol=1e-8) and math.isclose(a["se"], b["se"], rel_tol=1e-5)
    p_rp, p_wb = ({p["name"]: p for p in r["params"]} for r in (rp, wb))
    for name in ("alpha", "beta"):
        assert math.isclose(p_rp[name]["value"], p_wb[name]["value"], rel_tol=1e-8)
        assert math.isclose(p_rp[name]["se"], p_wb[name]["se"], rel_tol=1e-4)
    g_rp, g_wb = ({g["id"]: g["value"] for g in r["gof"]} for r in (rp, wb))
    assert all(math.isclose(g_rp[k], g_wb[k], rel_tol=1e-9) for k in ("log_likelihood", "aic", "bic", "lr_test"))
    assert rp["spline"]["knots"]["interior"] == 0 and rp["spline"]["chosen_by"] == "options.knots"
    assert rp["diagnostics"]["ph_test"] == wb["diagnostics"]["ph_test"] | {
        "note": rp["diagnostics"]["ph_test"]["note"]}
    assert rp["validation"]["concordance"] == wb["validation"]["concordance"]
    assert math.isclose(rp["validation"]["brier"]["model"], wb["validation"]["brier"]["model"], rel_tol=1e-6)
    for t in (0.5, 20.0, 52.0, 300.0):
        a, b = flexible_models.evaluate_at(rp, t, UNIT), _weibull_at(wb, t, UNIT)
        for key in ("reliability", "hazard", "density", "cumulative_hazard"):
            assert math.isclose(a[key], b[key], rel_tol=1e-7), key


def _weibull_at(record: dict, t: float, unit: dict) -> dict:
    from bathtub.regression.kinds import evaluate_at

    return evaluate_at(record, t, unit)


# ---- an independent Royston–Parmar likelihood ----------------------------------------------------

def _natural_spline(knots: np.ndarray, values: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The natural cubic spline through (knots, values), linear beyond the end knots: s and ds/du."""
    cs = interpolate.CubicSpline(knots, values, bc_type="natural")
    lo, hi = knots[0], knots[-1]
    inside = np.clip(u, lo, hi)
    s, ds = cs(inside), cs(inside, 1)
    return s + ds * (u - inside), ds


def _loglik_rows(scale: str, knots: np.ndarray, theta: np.ndarray, x: np.ndarray, t: np.ndarray,
                 e: np.ndarray) -> np.ndarray:
    m = knots.size
    s, ds = _natural_spline(knots, theta[:m], np.log(t))
    eta = s + x @ theta[m:]
    if scale == "hazard":  # S = exp(−e^η), h = e^η s'/t
        log_s, log_h = -np.exp(eta), eta + np.log(np.where(ds > 0, ds, np.nan)) - np.log(t)
    else:  # S = 1/(1 + e^η), h = e^η/(1 + e^η) · s'/t
        log_s = -np.logaddexp(0, eta)
        log_h = eta - np.logaddexp(0, eta) + np.log(np.where(ds > 0, ds, np.nan)) - np.log(t)
    return np.where(e, log_h, 0.0) + log_s


class _Independent(GenericLikelihoodModel):
    def __init__(self, scale: str, knots: np.ndarray, x: np.ndarray, t: np.ndarray, e: np.ndarray) -> None:
        super().__init__(endog=t, exog=x)
        self.scale, self.knots, self.xx, self.tt, self.ee = scale, knots, x, t, e

    def loglikeobs(self, params: np.ndarray) -> np.ndarray:
        return _loglik_rows(self.scale, self.knots, params, self.xx, self.tt, self.ee)


@pytest.mark.parametrize(("distribution", "scale", "m"), [("royston_parmar", "hazard", 2),
                                                          ("royston_parmar", "hazard", 3),
                                                          ("proportional_odds", "odds", 2)])
def test_equals_independent_likelihood(distribution: str, scale: str, m: int) -> None:
    cols = ["fin", "age", "prio"]
    x = ROSSI[cols].to_numpy(float)
    ours = flexible.fit_spline(distribution, x, T, E, knots=m)
    knots = ours.knots
    # scipy's own optimisers from a plain start
    start = np.concatenate([-5 + 1.5 * knots, np.zeros(len(cols))])  # a Weibull-like line, no effects

    def negll(th: np.ndarray) -> float:
        v = float(np.sum(_loglik_rows(scale, knots, th, x, T, E)))
        return -v if math.isfinite(v) else 1e10

    res = optimize.minimize(negll, start, method="Nelder-Mead",
                            options={"maxiter": 40000, "maxfev": 40000, "xatol": 1e-10, "fatol": 1e-12})
    res = optimize.minimize(negll, res.x, method="BFGS", options={"gtol": 1e-8})
    assert math.isclose(-res.fun, ours.loglik, rel_tol=1e-9)
    assert np.allclose(res.x[knots.size:], ours.beta, rtol=1e-4, atol=1e-6)
    # the same spline function, read through our basis
    u = np.linspace(knots[0] - 1, knots[-1] + 1, 25)
    b, _ = flexible.basis(u, knots)
    s_indep, _ = _natural_spline(knots, res.x[: knots.size], u)
    assert np.allclose(b @ ours.gamma, s_indep, atol=1e-4)
    # standard errors of β: invariant to how the spline is parametrised
    gm = _Independent(scale, knots, x, T, E)
    bse = np.sqrt(np.diag(np.linalg.inv(-gm.hessian(res.x))))  # statsmodels' numerical Hessian
    assert np.allclose(np.sqrt(np.diag(ours.cov))[knots.size:], bse[knots.size:], rtol=1e-4)


def test_knots_at_r_quantiles_and_chosen_by_aic() -> None:
    r = run_r(ROSSI, "lt <- log(d$week[d$arrest == 1]); for (m in 1:4) out(paste0('k', m), "
                     "quantile(lt, (1:m)/(m+1), type=7)); out('b', range(lt))")
    fit = flexible.fit_spline("royston_parmar", X, T, E)
    assert np.allclose(fit.knots[[0, -1]], r["b"], rtol=1e-14)
    tried = {e["interior_knots"]: e for e in fit.selection}
    assert sorted(tried) == [1, 2, 3, 4]
    for m, entry in tried.items():
        single = flexible.fit_spline("royston_parmar", X, T, E, knots=m)
        assert np.allclose(single.knots[1:-1], r[f"k{m}"], rtol=1e-13)
        assert math.isclose(entry["aic"], -2 * single.loglik + 2 * (m + 2 + X.shape[1]), rel_tol=1e-12)
    best = min(tried.values(), key=lambda e: e["aic"])
    assert best["chosen"] and fit.knots.size - 2 == best["interior_knots"]
    assert sum(bool(e["chosen"]) for e in tried.values()) == 1
    # knot times given: the same fit as the count that puts them there
    given = flexible.fit_spline("royston_parmar", X, T, E, knots=np.exp(r["k2"]).tolist())
    assert math.isclose(given.loglik, flexible.fit_spline("royston_parmar", X, T, E, knots=2).loglik, rel_tol=1e-10)


def test_close_to_cox_when_hazards_are_proportional() -> None:
    """A bathtub-free but clearly non-Weibull baseline (log-normal-like hump): Cox and RP agree on β."""
    rng = np.random.default_rng(2026)
    n = 3000
    x = np.column_stack([rng.normal(size=n), rng.integers(0, 2, n).astype(float)])
    beta = np.array([0.5, -0.8])
    # baseline H0(t) = −log(1 − Φ(log t)) (a lognormal's), so T = H0⁻¹(E·e^{−xβ})
    h = rng.exponential(size=n) * np.exp(-(x @ beta))
    t = np.exp(special.ndtri(-np.expm1(-h)))
    c = rng.exponential(4.0, n)
    time, event = np.minimum(t, c), t <= c
    rp = flexible.fit_spline("royston_parmar", x, time, event)
    cx = fit_cox(x, ["a", "b"], time, event)
    se = np.sqrt(np.diag(rp.cov[-2:, -2:]))
    assert np.all(np.abs(rp.beta - cx.beta) < 0.1 * se)
    assert np.all(np.abs(rp.beta - beta) < 3 * se)
    # and the spline found the hump a Weibull cannot follow
    wb = fit_parametric("weibull_ph", x, time, event)
    assert rp.loglik - wb.loglik > 10


def test_proportional_odds_is_loglogistic_aft_read_as_odds() -> None:
    po = flexible.fit_spline("proportional_odds", X, T, E)
    assert po.knots.size == 2  # the log-logistic model unless knots are asked for
    ll = fit_parametric("loglogistic_aft", X, T, E)
    assert np.allclose(po.beta, -ll.gamma / ll.sigma, rtol=1e-6, atol=1e-9)
    assert np.allclose(po.gamma, [-ll.mu / ll.sigma, 1 / ll.sigma], rtol=1e-7)
    assert math.isclose(po.loglik, ll.loglik, rel_tol=1e-12)
    # delta method over (μ, log σ, γ): ∂(−γ/σ)/∂log σ = γ/σ, ∂/∂γ = −I/σ
    p = ll.gamma.size
    jac = np.zeros((p, p + 2))
    jac[:, 1] = ll.gamma / ll.sigma
    jac[:, 2:] = -np.eye(p) / ll.sigma
    assert np.allclose(np.sqrt(np.diag(po.cov[2:, 2:])), np.sqrt(np.diag(jac @ ll.cov @ jac.T)), rtol=1e-5)
    record = fit_regression(COLUMNS, MAPPING, "proportional_odds", COLS)
    assert all(c["exp_coef_kind"] == "odds ratio" for c in record["coefficients"])
    assert record["diagnostics"]["ph_test"]["available"] is False
    params = {p["name"]: p["value"] for p in record["params"]}
    assert math.isclose(params["alpha"], math.exp(ll.mu), rel_tol=1e-7)
    assert math.isclose(params["beta"], 1 / ll.sigma, rel_tol=1e-7)
    # a unit's odds of failure by t: (t/α_x)^β with α_x the unit's time scale, the AFT form
    xrow = np.array([UNIT[c] for c in COLS], float)
    for t in (5.0, 40.0):
        at = flexible_models.evaluate_at(record, t, UNIT)
        odds = (t / math.exp(ll.mu + xrow @ ll.gamma)) ** (1 / ll.sigma)
        assert math.isclose(at["failure"] / at["reliability"], odds, rel_tol=1e-6)


SCALES = (1e-3, 1e3, 1e6)


@pytest.mark.parametrize("distribution", flexible.MODELS)
@pytest.mark.parametrize("k", SCALES)
def test_time_unit_moves_only_gamma0(distribution: str, k: float) -> None:
    start = _delayed_entry()
    base = flexible.fit_spline(distribution, X, T, E, start, knots=2)
    fit = flexible.fit_spline(distribution, X, T * k, E, start * k, knots=2)
    assert np.allclose(fit.beta, base.beta, rtol=1e-9, atol=1e-12)
    assert np.allclose(fit.knots, base.knots + math.log(k), rtol=1e-14, atol=1e-12)
    assert math.isclose(fit.gamma[0], base.gamma[0] - base.gamma[1] * math.log(k), rel_tol=1e-9)
    assert np.allclose(fit.gamma[1:], base.gamma[1:], rtol=1e-9)
    assert math.isclose(fit.loglik, base.loglik - E.sum() * math.log(k), rel_tol=1e-11)
    assert np.allclose(np.sqrt(np.diag(fit.cov))[3:], np.sqrt(np.diag(base.cov))[3:], rtol=1e-8)
    # the whole record: knots chosen by AIC, reliability at the same instant in either unit
    cols = {**COLUMNS, "week": (T * k).tolist()}
    a = fit_regression(COLUMNS, MAPPING, distribution, COLS)
    b = fit_regression(cols, MAPPING, distribution, COLS)
    assert a["spline"]["knots"]["interior"] == b["spline"]["knots"]["interior"]
    assert np.allclose([c["value"] for c in a["coefficients"]], [c["value"] for c in b["coefficients"]], rtol=1e-9)
    for t in (3.0, 30.0):
        ra, rb = flexible_models.evaluate_at(a, t, UNIT), flexible_models.evaluate_at(b, t * k, UNIT)
        assert math.isclose(ra["reliability"], rb["reliability"], rel_tol=1e-10)
        assert math.isclose(ra["hazard"], rb["hazard"] * k, rel_tol=1e-9)
    ca, cb = flexible_models.evaluate_curves(a, 50, UNIT), flexible_models.evaluate_curves(b, 50, UNIT)
    assert np.allclose(np.array(cb["x"]) / k, ca["x"], rtol=1e-9) and np.allclose(ca["sf"], cb["sf"], rtol=1e-9)


@pytest.mark.parametrize("distribution", flexible.MODELS)
def test_curves_hold_together(distribution: str) -> None:
    record = fit_regression(COLUMNS, MAPPING, distribution, COLS, options={"knots": 3})
    c = flexible_models.evaluate_curves(record, 400, UNIT)
    x, sf, hf, big_h, df = (np.array(c[k], dtype=float) for k in ("x", "sf", "hf", "Hf", "df"))
    assert x[0] == 0 and sf[0] == 1 and big_h[0] == 0 and math.isclose(sf[-1], 0.001, rel_tol=1e-9)
    assert np.all(np.diff(sf) < 0) and np.allclose(sf, np.exp(-big_h), rtol=1e-12)
    assert np.allclose(df[1:], hf[1:] * sf[1:], rtol=1e-10)
    # h = dH/dt, checked by central differences of H between grid points
    mid = (x[1:-1] + x[2:]) / 2
    steps = np.diff(x)[1:]
    at = [flexible_models.evaluate_at(record, t, UNIT) for t in mid]
    lo = [flexible_models.evaluate_at(record, t - s * 1e-4, UNIT)["cumulative_hazard"] for t, s in zip(mid, steps)]
    hi = [flexible_models.evaluate_at(record, t + s * 1e-4, UNIT)["cumulative_hazard"] for t, s in zip(mid, steps)]
    numeric = (np.array(hi) - np.array(lo)) / (2e-4 * steps)
    assert np.allclose([a["hazard"] for a in at], numeric, rtol=1e-5)


def test_refusals_name_the_field() -> None:
    def refused(field: str, **kw: object) -> None:
        args = {"distribution": "royston_parmar", "covariates": COLS, "options": None, **kw}
        with pytest.raises(InputError) as err:
            fit_regression(args.pop("columns", COLUMNS), args.pop("mapping", MAPPING), args.pop("distribution"),
                           args.pop("covariates"), options=args.pop("options"))
        assert err.value.field == field, err.value

    refused("options.knots", options={"knots": 11})
    refused("options.knots", options={"knots": -1})
    refused("options.knots", options={"knots": True})
    refused("options.knots", options={"knots": "three"})
    refused("options.knots", options={"knots": [30, 20]})
    refused("options.knots", options={"knots": [0.5]})  # below the first failure: not an interior knot
    refused("options.knots[1]", options={"knots": [10, -3]})
    refused("options.knots", distribution="weibull_ph", options={"knots": 2})
    refused("options.knots", distribution="best", options={"knots": 2})
    flag = (1 - np.asarray(COLUMNS["state"])).tolist()  # every failure flagged: perfect separation
    for dist in flexible.MODELS:
        refused("covariates", distribution=dist, columns={**COLUMNS, "flag": flag}, covariates=["fin", "flag"])
    zero = [0.0, *COLUMNS["week"][1:]]
    refused("mapping.x", columns={**COLUMNS, "week": zero})
    one_time = {**COLUMNS, "week": [5.0] * len(T)}
    refused("mapping.c", columns=one_time)
    # tied times put quantile knots on top of each other
    tied = {**COLUMNS, "week": [1.0 if w < 20 else 2.0 if w < 52 else 52.0 for w in COLUMNS["week"]]}
    refused("options.knots", columns=tied, options={"knots": 4})
    # more knots than the failures can carry
    few = {**COLUMNS, "state": [0 if k < 8 else 1 for k in range(len(T))]}
    refused("options.knots", columns=few, options={"knots": 3})


def test_a_spline_that_turns_down_is_detected_and_delayed_entry() -> None:
    knots = np.array([0.0, 0.5, 1.0])
    # ds/du = γ1 + γ2·v'(u), v'(u) = −1.5u² on [0, ½]: γ2 > 0 bends it down inside the knots
    assert flexible.spline_slope_ok(np.array([0.0, 1.0, -0.5]), knots)
    assert not flexible.spline_slope_ok(np.array([0.0, 0.1, 2.0]), knots)  # 0.1 − 3u² < 0 near u = ½
    # beyond the last knot the slope is γ1 + 3γ2[(1 − ½)² − ½·1²] = 1 − 0.75γ2: negative for γ2 > 4/3
    assert flexible.spline_slope_ok(np.array([0.0, 1.0, 1.3]), knots)
    assert not flexible.spline_slope_ok(np.array([0.0, 1.0, 1.4]), knots)
    assert not flexible.spline_slope_ok(np.array([0.0, -0.1, 0.0]), knots)  # a line going down
    # counting-process rows are delayed entry: rows starting after 0 enter the likelihood conditioned
    rows = Rows(_delayed_entry(), T, E, np.arange(T.size).astype(str).astype(object), {"time": "mapping.xr"})
    d = design.design(COLUMNS, COLS, None)
    rec = flexible_models.spline_record("royston_parmar", d, rows, 0.95, "km", False, 0)
    wb = fit_parametric("weibull_ph", X, T, E, rows.start)
    assert math.isclose(rec["gof"][0]["value"], wb.loglik, rel_tol=1e-12) and rec["counting_process"]


def test_uncensored_data_and_the_hazard_at_zero() -> None:
    """No censored row: the censoring curve of the Brier weights is 1 throughout (it used to fail on an empty
    curve for every model). A falling hazard (Weibull shape 0.6) is infinite at t = 0, and said so."""
    rng = np.random.default_rng(3)
    n = 300
    x = rng.normal(size=n)
    t = rng.weibull(0.6, n) * np.exp(-0.5 * x)
    cols = {"t": t.tolist(), "x": x.tolist(), "c": [0] * n}
    for dist in ("cox", "weibull_ph", *flexible.MODELS):
        record = fit_regression(cols, {"x": "t", "c": "c"}, dist, ["x"])
        assert record["validation"]["brier"]["model"] < record["validation"]["brier"]["baseline"], dist
    record = fit_regression(cols, {"x": "t", "c": "c"}, "royston_parmar", ["x"], options={"knots": 0})
    gamma1 = record["spline"]["gamma"][1]
    assert math.isclose(gamma1, 0.6, rel_tol=0.15)
    at = flexible_models.evaluate_at(record, 0, {"x": 0.0})
    assert at["hazard"] is None and at["density"] is None and "infinite" in at["null_reason"]["hazard"]
    assert at["reliability"] == 1.0 and at["cumulative_hazard"] == 0.0
    curves = flexible_models.evaluate_curves(record, 10, {"x": 0.0})
    assert curves["hf"][0] is None and curves["hf"][1] > 0 and "hf" in curves["null_reason"]
    # a rising hazard (Rossi: gamma1 ≈ 1.4) starts at 0
    rossi = fit_regression(COLUMNS, MAPPING, "royston_parmar", COLS)
    assert flexible_models.evaluate_at(rossi, 0, UNIT)["hazard"] == 0.0
    assert flexible_models.evaluate_curves(rossi, 10, UNIT)["hf"][0] == 0.0
