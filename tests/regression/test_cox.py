"""Cox regression against independent references: lifelines and statsmodels (Efron, Breslow,
strata), R's survival (robust and cluster sandwich on tied data, exact ties, cox.zph, counting
process), lifelines' CoxTimeVaryingFitter, and a brute-force Kalbfleisch–Prentice likelihood."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from lifelines import CoxPHFitter, CoxTimeVaryingFitter
from lifelines.datasets import load_rossi, load_stanford_heart_transplants
from statsmodels.duration.hazard_regression import PHReg

from bathtub.errors import InputError
from bathtub.regression import zph
from bathtub.regression.cox import fit_cox
from tests.regression.rref import run_r

COLS = ["fin", "age", "race", "wexp", "mar", "paro", "prio"]
ROSSI = load_rossi()
X = ROSSI[COLS].to_numpy(float)
T = ROSSI["week"].to_numpy(float)
E = ROSSI["arrest"].to_numpy(bool)
FORMULA = "fin + age + race + wexp + mar + paro + prio"


def _se(fit) -> np.ndarray:
    return np.sqrt(np.diag(fit.var))


def test_efron_equals_lifelines_and_statsmodels() -> None:
    fit = fit_cox(X, COLS, T, E)
    ref = CoxPHFitter().fit(ROSSI, "week", "arrest")
    assert np.allclose(fit.beta, ref.params_[COLS].to_numpy(), rtol=0, atol=1e-6)
    assert np.allclose(_se(fit), ref.standard_errors_[COLS].to_numpy(), rtol=1e-6)
    assert math.isclose(fit.loglik, ref.log_likelihood_, rel_tol=1e-9)
    sm = PHReg(T, X, status=E.astype(float), ties="efron").fit()
    assert np.allclose(fit.beta, sm.params, atol=1e-6)
    assert np.allclose(_se(fit), sm.bse, rtol=1e-6)
    assert math.isclose(fit.loglik, sm.llf, rel_tol=1e-9)
    # Breslow baseline cumulative hazard at the covariate means, as lifelines reports it
    base = ref.baseline_cumulative_hazard_
    ours = np.interp(base.index.to_numpy(), fit.baseline[0]["time"], fit.baseline[0]["cumhaz"])
    at_events = np.isin(base.index.to_numpy(), fit.baseline[0]["time"])
    assert np.allclose(ours[at_events], base.to_numpy().ravel()[at_events], rtol=1e-9)


def test_breslow_and_strata_equal_statsmodels_and_r() -> None:
    fit = fit_cox(X, COLS, T, E, ties="breslow")
    sm = PHReg(T, X, status=E.astype(float), ties="breslow").fit()
    assert np.allclose(fit.beta, sm.params, atol=1e-7) and np.allclose(_se(fit), sm.bse, rtol=1e-6)
    assert math.isclose(fit.loglik, sm.llf, rel_tol=1e-9)
    cols = [c for c in COLS if c != "wexp"]
    xs = ROSSI[cols].to_numpy(float)
    for ties in ("efron", "breslow"):
        sfit = fit_cox(xs, cols, T, E, strata=ROSSI["wexp"].tolist(), ties=ties)
        ssm = PHReg(T, xs, status=E.astype(float), strata=ROSSI["wexp"].to_numpy(), ties=ties).fit()
        assert np.allclose(sfit.beta, ssm.params, atol=1e-7), ties
        assert np.allclose(np.sqrt(np.diag(sfit.var)), ssm.bse, rtol=1e-6), ties
        assert math.isclose(sfit.loglik, ssm.llf, rel_tol=1e-9), ties
    r = run_r(ROSSI, "f <- coxph(Surv(week, arrest) ~ fin + age + race + mar + paro + prio + strata(wexp), data=d, "
                     "ties='breslow'); out('coef', coef(f)); out('ll', f$loglik)")
    sfit = fit_cox(xs, cols, T, E, strata=ROSSI["wexp"].tolist(), ties="breslow")
    assert np.allclose(sfit.beta, r["coef"], atol=1e-7) and math.isclose(sfit.loglik, r["ll"][1], rel_tol=1e-9)


def test_robust_and_cluster_sandwich_equal_r_on_tied_data() -> None:
    """Rossi's weeks are heavily tied; lifelines' robust SEs are off there, R's are the reference."""
    frame = ROSSI.assign(cl=ROSSI["prio"] % 7)
    r = run_r(frame, f"""
        for (ties in c('efron', 'breslow')) {{
          f <- coxph(Surv(week, arrest) ~ {FORMULA}, data=d, ties=ties, robust=TRUE)
          out(paste0('robust_', ties), sqrt(diag(f$var)))
          g <- coxph(Surv(week, arrest) ~ fin + age + race + mar + paro + prio + strata(wexp), cluster=cl,
                     data=d, ties=ties)
          out(paste0('cluster_', ties), sqrt(diag(g$var)))
          out(paste0('clcoef_', ties), coef(g))
        }}""")
    cols = [c for c in COLS if c != "wexp"]
    for ties in ("efron", "breslow"):
        fit = fit_cox(X, COLS, T, E, ties=ties)
        assert np.allclose(np.sqrt(np.diag(fit.robust_var)), r[f"robust_{ties}"], rtol=1e-6), ties
        cfit = fit_cox(frame[cols].to_numpy(float), cols, T, E, ties=ties, strata=frame["wexp"].tolist(),
                       cluster=frame["cl"].tolist())
        assert cfit.n_clusters == 7
        assert np.allclose(cfit.beta, r[f"clcoef_{ties}"], atol=1e-7)
        assert np.allclose(np.sqrt(np.diag(cfit.robust_var)), r[f"cluster_{ties}"], rtol=1e-6), ties


def test_exact_ties_equal_r() -> None:
    r = run_r(ROSSI, f"f <- coxph(Surv(week, arrest) ~ {FORMULA}, data=d, ties='exact'); out('coef', coef(f)); "
                     "out('se', sqrt(diag(f$var))); out('ll', f$loglik)")
    fit = fit_cox(X, COLS, T, E, ties="exact")
    assert np.allclose(fit.beta, r["coef"], atol=1e-6)
    assert np.allclose(_se(fit), r["se"], rtol=1e-6)
    assert math.isclose(fit.loglik0, r["ll"][0], rel_tol=1e-9) and math.isclose(fit.loglik, r["ll"][1], rel_tol=1e-9)


def _kp_brute(beta: np.ndarray, x: np.ndarray, t: np.ndarray, e: np.ndarray) -> float:
    """Kalbfleisch–Prentice by definition: the sum over every order of the tied deaths of the
    product of the successive Cox probabilities."""
    ll = 0.0
    w = np.exp(x @ beta)
    for s in np.unique(t[e]):
        dead = np.flatnonzero((t == s) & e)
        risk = float(w[t >= s].sum())
        total = 0.0
        for perm in itertools.permutations(dead):
            prob, left = 1.0, risk
            for i in perm:
                prob *= w[i] / left
                left -= w[i]
            total += prob
        ll += math.log(total)
    return ll


def test_kalbfleisch_prentice_equals_its_definition() -> None:
    rng = np.random.default_rng(3)
    n = 40
    x = rng.normal(size=(n, 2))
    t = np.ceil(rng.exponential(1 / np.exp(x @ np.array([0.7, -0.4]))) * 12)  # ties of 2, 3 and 4 deaths
    e = rng.random(n) < 0.8
    fit = fit_cox(x, ["a", "b"], t, e, ties="kalbfleisch-prentice")
    assert math.isclose(fit.loglik, _kp_brute(fit.beta, x, t, e), rel_tol=1e-11)
    assert math.isclose(fit.loglik0, _kp_brute(np.zeros(2), x, t, e), rel_tol=1e-11)
    # the maximum of the definition: zero gradient and the same information, by central differences
    h = 1e-4
    grad = [(_kp_brute(fit.beta + h * v, x, t, e) - _kp_brute(fit.beta - h * v, x, t, e)) / (2 * h) for v in np.eye(2)]
    assert np.allclose(grad, 0.0, atol=1e-7)
    hess = np.zeros((2, 2))
    for i, j in itertools.product(range(2), range(2)):
        ei, ej = np.eye(2)[i] * h, np.eye(2)[j] * h
        hess[i, j] = (_kp_brute(fit.beta + ei + ej, x, t, e) - _kp_brute(fit.beta + ei - ej, x, t, e)
                      - _kp_brute(fit.beta - ei + ej, x, t, e) + _kp_brute(fit.beta - ei - ej, x, t, e)) / (4 * h * h)
    assert np.allclose(fit.var, np.linalg.inv(-hess), rtol=1e-5)
    # without ties every method is the same partial likelihood
    tu = t + rng.random(n) * 1e-3
    base = fit_cox(x, ["a", "b"], tu, e)
    for ties in ("breslow", "exact", "kalbfleisch-prentice"):
        other = fit_cox(x, ["a", "b"], tu, e, ties=ties)
        assert np.allclose(other.beta, base.beta, atol=1e-8) and math.isclose(other.loglik, base.loglik, rel_tol=1e-10)


def test_counting_process_equals_lifelines_time_varying_and_r() -> None:
    d = load_stanford_heart_transplants()
    cols = ["age", "year", "surgery", "transplant"]
    fit = fit_cox(d[cols].to_numpy(float), cols, d["stop"].to_numpy(float), d["event"].to_numpy(bool),
                  start=d["start"].to_numpy(float), cluster=d["id"].tolist())
    ref = CoxTimeVaryingFitter().fit(d, id_col="id", event_col="event", start_col="start", stop_col="stop")
    assert np.allclose(fit.beta, ref.params_[cols].to_numpy(), atol=1e-6)
    assert np.allclose(_se(fit), ref.standard_errors_[cols].to_numpy(), rtol=1e-6)
    assert math.isclose(fit.loglik, ref.log_likelihood_, rel_tol=1e-9)
    r = run_r(d, "f <- coxph(Surv(start, stop, event) ~ age + year + surgery + transplant, data=d, cluster=id); "
                 "out('coef', coef(f)); out('robust', sqrt(diag(f$var))); "
                 "z <- cox.zph(f); out('zph', z$table[, 'chisq'])")
    assert np.allclose(fit.beta, r["coef"], atol=1e-6)
    assert np.allclose(np.sqrt(np.diag(fit.robust_var)), r["robust"], rtol=1e-6)
    g = zph.transform_times("km", d["start"].to_numpy(float), d["stop"].to_numpy(float), d["event"].to_numpy(bool))
    test = zph.ph_test(fit.prepared, fit.beta, cols, True, g)
    ours = [row["statistic"] for row in test["rows"]] + [test["global"]["statistic"]]
    assert np.allclose(ours, r["zph"], rtol=1e-6)


@pytest.mark.parametrize("ties", ["efron", "breslow"])
def test_ph_test_equals_r_cox_zph(ties: str) -> None:
    r = run_r(ROSSI, f"""
        f <- coxph(Surv(week, arrest) ~ {FORMULA}, data=d, ties='{ties}')
        for (tr in c('km', 'identity', 'log', 'rank')) {{
          z <- cox.zph(f, transform=tr); out(tr, z$table[, 'chisq']); out(paste0(tr, '_p'), z$table[, 'p'])
        }}
        g <- coxph(Surv(week, arrest) ~ fin + age + race + mar + paro + prio + strata(wexp), data=d, ties='{ties}')
        out('strata', cox.zph(g)$table[, 'chisq'])""")
    fit = fit_cox(X, COLS, T, E, ties=ties)
    for tr in ("km", "identity", "log", "rank"):
        test = zph.ph_test(fit.prepared, fit.beta, COLS, ties == "efron", zph.transform_times(tr, None, T, E))
        ours = [row["statistic"] for row in test["rows"]] + [test["global"]["statistic"]]
        ps = [row["p"] for row in test["rows"]] + [test["global"]["p"]]
        assert np.allclose(ours, r[tr], rtol=1e-6), tr
        assert np.allclose(ps, r[f"{tr}_p"], rtol=1e-5), tr
    cols = [c for c in COLS if c != "wexp"]
    sfit = fit_cox(ROSSI[cols].to_numpy(float), cols, T, E, ties=ties, strata=ROSSI["wexp"].tolist())
    test = zph.ph_test(sfit.prepared, sfit.beta, cols, ties == "efron", zph.transform_times("km", None, T, E))
    assert np.allclose([row["statistic"] for row in test["rows"]] + [test["global"]["statistic"]], r["strata"],
                       rtol=1e-6)


@pytest.mark.parametrize("scale", [1e-3, 1.0, 1e6])
def test_scale_invariance(scale: float) -> None:
    """Times multiplied by any factor leave β unchanged; a covariate multiplied by c divides its β by c."""
    base = fit_cox(X, COLS, T, E)
    fit = fit_cox(X * np.r_[1, 1, 1, 1, 1, 1, scale], COLS, T * scale, E)
    assert np.allclose(fit.beta[:6], base.beta[:6], rtol=1e-8, atol=1e-10)
    assert math.isclose(fit.beta[6] * scale, base.beta[6], rel_tol=1e-8)
    assert math.isclose(fit.loglik, base.loglik, rel_tol=1e-10)
    assert np.allclose(np.asarray(fit.baseline[0]["time"]) / scale, base.baseline[0]["time"], rtol=1e-12)
    assert np.allclose(fit.baseline[0]["cumhaz"], base.baseline[0]["cumhaz"], rtol=1e-8)


def test_refusals_name_the_field() -> None:
    with pytest.raises(InputError, match="separates"):
        x = np.r_[np.zeros(10), np.ones(10)][:, None]
        fit_cox(x, ["flag"], np.r_[np.arange(1, 11), np.arange(11, 21)].astype(float), np.r_[[True] * 10, [False] * 10])
    with pytest.raises(InputError) as err:
        fit_cox(X, COLS, T, E, start=T.copy())
    assert err.value.field == "mapping.xl" and "below stop" in err.value.rule
    # a stratum without events is fitted, as R's coxph does (tests/regression/test_cox_strata_without_events.py);
    # only when no stratum has one is there nothing to fit
    with pytest.raises(InputError) as err:
        fit_cox(X[:, :2], COLS[:2], T, np.zeros(T.size, dtype=bool), strata=ROSSI["wexp"].tolist())
    assert err.value.field == "mapping.c" and "none of the 2 strata" in err.value.rule
    with pytest.raises(InputError) as err:
        fit_cox(X, COLS, T, E, ties="average")
    assert err.value.field == "cox_options.tie_method"


def test_concordance_equals_lifelines_and_r() -> None:
    from bathtub.regression import validation

    fit = fit_cox(X, COLS, T, E)
    ref = CoxPHFitter().fit(ROSSI, "week", "arrest")
    c, _ = validation.concordance(fit.linear_predictor, None, T, E, np.zeros(T.size, dtype=np.int64))
    assert math.isclose(c, ref.concordance_index_, rel_tol=1e-9)
    cols = [c for c in COLS if c != "wexp"]
    sfit = fit_cox(ROSSI[cols].to_numpy(float), cols, T, E, strata=ROSSI["wexp"].tolist())
    r = run_r(ROSSI, "g <- coxph(Surv(week, arrest) ~ fin + age + race + mar + paro + prio + strata(wexp), data=d); "
                     "out('c', g$concordance['concordance'])")
    cs, _ = validation.concordance(sfit.linear_predictor, None, T, E, sfit.strata_index)
    assert math.isclose(cs, r["c"][0], rel_tol=1e-9)


def test_brier_and_auc_equal_their_definitions() -> None:
    """Brier (Graf 1999 IPCW) and cumulative/dynamic AUC written out pair by pair, unit by unit."""
    from bathtub.regression import validation

    fit = fit_cox(X, COLS, T, E)
    cum = np.asarray(fit.baseline[0]["cumhaz"])
    times = np.asarray(fit.baseline[0]["time"])

    def surv(rows: np.ndarray, t: np.ndarray) -> np.ndarray:
        idx = np.searchsorted(times, t, side="right") - 1
        h = np.where(idx >= 0, cum[np.maximum(idx, 0)], 0.0)
        return np.exp(-h[None, :] * np.exp(fit.linear_predictor[rows])[:, None])

    rows = np.arange(T.size)
    out = validation.brier_auc(lambda t: surv(rows, t), fit.linear_predictor, T, E)

    def km(times_: np.ndarray, obs: np.ndarray, at: float) -> float:
        s = 1.0
        for u in np.unique(times_[obs]):
            if u > at:
                break
            s *= 1 - np.sum((times_ == u) & obs) / np.sum(times_ >= u)
        return s

    grid = np.linspace(out["from"], out["to"], validation.GRID)
    bs = []
    for t in grid:
        total = 0.0
        st = surv(rows, np.array([t]))[:, 0]
        for i in range(T.size):
            if T[i] <= t and E[i]:
                total += st[i] ** 2 / km(T, ~E, T[i])
            elif T[i] > t:
                total += (1 - st[i]) ** 2 / km(T, ~E, t)
        bs.append(total / T.size)
    assert math.isclose(out["model"], np.trapezoid(bs, grid) / (grid[-1] - grid[0]), rel_tol=1e-10)
    lp = fit.linear_predictor
    for a in out["auc"]:
        t = a["time"]
        num = den = 0.0
        for i in np.flatnonzero((T <= t) & E):
            wi = 1 / km(T, ~E, T[i])
            for j in np.flatnonzero(T > t):
                num += wi * ((lp[i] > lp[j]) + 0.5 * (lp[i] == lp[j]))
                den += wi
        assert math.isclose(a["value"], num / den, rel_tol=1e-10)
    assert 0 < out["improvement"] < 1


def test_efron_large_tied_data_equals_statsmodels() -> None:
    """5 000 rows with heavy ties: the one-pass sums against statsmodels' own loop."""
    rng = np.random.default_rng(11)
    n = 5000
    x = rng.normal(size=(n, 3))
    t = np.ceil(rng.exponential(1 / np.exp(x @ np.array([0.5, -0.3, 0.2]))) * 20)
    e = rng.random(n) < 0.7
    fit = fit_cox(x, ["a", "b", "c"], t, e)
    sm = PHReg(t, x, status=e.astype(float), ties="efron").fit()
    assert np.allclose(fit.beta, sm.params, atol=1e-7) and np.allclose(_se(fit), sm.bse, rtol=1e-6)
    assert math.isclose(fit.loglik, sm.llf, rel_tol=1e-10)


def test_formula_and_covariates_give_one_design() -> None:
    from bathtub.regression import design

    cols = {"a": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "g": ["x", "y", "z", "x", "y", "z"], "k": [0, 1, 0, 1, 0, 1]}
    d1 = design.design(cols, ["a", "g"], None, reference={"g": "y"})
    assert d1.names == ["a", "g[T.x]", "g[T.z]"]
    assert d1.x[:, 1].tolist() == [1, 0, 0, 1, 0, 0]
    d2 = design.design(cols, None, "a + g + C(k)")
    assert d2.names == ["a", "g[T.y]", "g[T.z]", "C(k)[T.1]"]
    assert np.array_equal(design.row(d2.spec, {"a": 2.5, "g": "z", "k": 1}), [2.5, 0, 1, 1])
    with pytest.raises(InputError, match="constant"):
        design.design({"a": [1, 1, 1]}, ["a"], None)
    with pytest.raises(InputError, match="collinear"):
        design.design({"a": [1, 2, 3], "b": [2, 4, 6]}, ["a", "b"], None)
    with pytest.raises(InputError, match="'zz' is not a dataset column"):
        design.design(cols, None, "a + zz")
    frame = pd.DataFrame(cols)
    assert frame.shape == (6, 3)
