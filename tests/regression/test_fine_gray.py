"""Fine–Gray regression against R's cmprsk::crr (coefficients, robust standard errors, predicted
cumulative incidence; with tied times and without), against coxph where the model reduces to
Cox's (no competing failures: the weights never act and crr's sandwich is coxph's robust one),
and the scale property (times x1e-3 .. x1e6 leave coefficients and standard errors alone).
crr is run with gtol 1e-12 so that its Newton iterations stop at the optimum, not near it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bathtub.errors import InputError
from bathtub.regression import fine_gray
from bathtub.regression.fine_gray_records import evaluate_at, evaluate_curves, fit_record
from bathtub.regression.kinds import evaluate_at as any_evaluate_at
from bathtub.regression.records import fit_regression
from tests.regression.rref import run_r


def data(seed: int = 7, n: int = 160, ties: bool = True) -> pd.DataFrame:
    """Two modes (seal, bearing) plus censoring; x1 raises the seal's hazard, site a factor."""
    rng = np.random.default_rng(seed)
    x1 = rng.normal(size=n)
    x2 = rng.binomial(1, 0.4, n).astype(float)
    site = rng.choice(["north", "south", "west"], n)
    t_seal = rng.exponential(10 * np.exp(-0.5 * x1))
    t_bear = rng.exponential(14 * np.exp(-0.4 * x2))
    cens = rng.exponential(20, n)
    t = np.minimum.reduce([t_seal, t_bear, cens])
    if ties:
        t = np.ceil(t)
    status = np.where(cens <= np.minimum(t_seal, t_bear), 0, np.where(t_seal < t_bear, 1, 2))
    return pd.DataFrame({"t": t, "s": status, "x1": x1, "x2": x2, "site": site})


def crr(d: pd.DataFrame, failcode: int, cov: str = "cbind(d$x1, d$x2)", at: str = "c(0.5, 1)") -> dict:
    return run_r(d, f"suppressMessages(library(cmprsk))\n"
                    f"f <- crr(d$t, d$s, {cov}, failcode = {failcode}, cencode = 0, gtol = 1e-12, maxiter = 100)\n"
                    f"out('coef', f$coef); out('se', sqrt(diag(f$var))); out('ll', f$loglik)\n"
                    f"p <- predict(f, cov1 = rbind({at})); out('pt', p[, 1]); out('pf', p[, 2])\n")


def _status(d: pd.DataFrame, failcode: int) -> np.ndarray:
    return np.where(d["s"] == 0, 0, np.where(d["s"] == failcode, 1, 2))


@pytest.mark.parametrize("ties", [True, False], ids=["ties", "no ties"])
@pytest.mark.parametrize("failcode", [1, 2])
def test_coefficients_and_robust_se_against_crr(ties: bool, failcode: int) -> None:
    d = data(ties=ties)
    ref = crr(d, failcode)
    fit = fine_gray.fit(d[["x1", "x2"]].to_numpy(), d["t"].to_numpy(), _status(d, failcode))
    assert fit.beta == pytest.approx(ref["coef"], rel=1e-5, abs=1e-8)
    assert np.sqrt(np.diag(fit.var)) == pytest.approx(ref["se"], rel=1e-5)
    assert fit.loglik == pytest.approx(ref["ll"][0], rel=1e-9)
    f = fine_gray.cumulative_incidence(fit, np.array([0.5, 1.0]), ref["pt"])
    assert f == pytest.approx(ref["pf"], rel=1e-6)
    assert (fit.tied_times > 0) == ties


def test_record_from_columns_with_a_factor_against_crr() -> None:
    d = data()
    ref = crr(d, 1, cov="cbind(d$x1, d$site == 'south', d$site == 'west')", at="c(0.3, 0, 1)")
    cols = {k: d[k].tolist() for k in d.columns}
    cols["mode"] = [None if s == 0 else ("seal" if s == 1 else "bearing") for s in d["s"]]
    cols["c"] = (d["s"] == 0).astype(int).tolist()
    rec = fit_regression(cols, {"x": "t", "c": "c", "mode": "mode"}, "fine_gray", ["x1", "site"],
                         options={"failure_mode": "seal"})
    coef = {c["name"]: c for c in rec["coefficients"]}
    assert [coef[k]["value"] for k in ("x1", "site[T.south]", "site[T.west]")] == pytest.approx(ref["coef"],
                                                                                                 rel=1e-5)
    assert [coef[k]["se"] for k in ("x1", "site[T.south]", "site[T.west]")] == pytest.approx(ref["se"], rel=1e-5)
    row = coef["x1"]
    assert row["exp_coef"] == pytest.approx(np.exp(row["value"]), rel=1e-12)
    assert row["exp_ci"] == pytest.approx(np.exp(row["ci"]), rel=1e-12)
    assert row["ci"] == pytest.approx([row["value"] - 1.959963984540054 * row["se"],
                                       row["value"] + 1.959963984540054 * row["se"]], rel=1e-12)
    at = any_evaluate_at(rec, float(ref["pt"][4]), {"x1": 0.3, "site": "west"})
    assert at["cumulative_incidence"] == pytest.approx(ref["pf"][4], rel=1e-6)
    curves = evaluate_curves(rec, 200, {"x1": 0.3, "site": "west"})
    assert curves["ff"][1:] == pytest.approx(ref["pf"], rel=1e-6)
    assert rec["failure_mode"] == "seal" and rec["mode_names"] == ["bearing", "seal"]
    assert {m["mode"] for m in rec["cumulative_incidence"]["modes"]} == {"bearing", "seal"}


def test_without_competing_failures_it_is_cox_with_robust_se() -> None:
    """No other mode: every weight is 1 and ψ = 0, so the fit is Cox's (Breslow ties) and the
    sandwich is coxph's robust variance."""
    d = data()
    d = d[d["s"] != 2].reset_index(drop=True)
    ref = run_r(d, "f <- coxph(Surv(t, s == 1) ~ x1 + x2, data = d, ties = 'breslow', robust = TRUE)\n"
                   "out('coef', coef(f)); out('se', sqrt(diag(f$var)))")
    fit = fine_gray.fit(d[["x1", "x2"]].to_numpy(), d["t"].to_numpy(), _status(d, 1))
    assert fit.beta == pytest.approx(ref["coef"], rel=1e-6)
    assert np.sqrt(np.diag(fit.var)) == pytest.approx(ref["se"], rel=1e-6)


def test_scale_property() -> None:
    d = data()
    x, st = d[["x1", "x2"]].to_numpy(), _status(d, 1)
    base = fine_gray.fit(x, d["t"].to_numpy(), st)
    for k in (1e-3, 1e6):
        fit = fine_gray.fit(x, d["t"].to_numpy() * k, st)
        assert fit.beta == pytest.approx(base.beta, rel=1e-9)
        assert np.sqrt(np.diag(fit.var)) == pytest.approx(np.sqrt(np.diag(base.var)), rel=1e-9)
        assert fit.times == pytest.approx(base.times * k, rel=1e-12)
        at = np.array([3.0, 8.0, 15.0])
        assert fine_gray.cumulative_incidence(fit, x[0], at * k) == pytest.approx(
            fine_gray.cumulative_incidence(base, x[0], at), rel=1e-9)


def _cols(d: pd.DataFrame) -> dict:
    cols = {k: d[k].tolist() for k in ("t", "x1", "x2")}
    cols["mode"] = [None if s == 0 else ("seal" if s == 1 else "bearing") for s in d["s"]]
    cols["c"] = (d["s"] == 0).astype(int).tolist()
    return cols


MAPPING = {"x": "t", "c": "c", "mode": "mode"}


def test_refusals_name_the_field() -> None:
    cols = _cols(data())

    def refused(field: str, cols: dict = cols, mapping: dict = MAPPING, options: dict | None = None,
                covariates: list | None = None) -> str:
        with pytest.raises(InputError) as err:
            fit_record(cols, mapping, covariates or ["x1"], None, None,
                       {"failure_mode": "seal"} if options is None else options)
        assert err.value.field == field
        return err.value.rule

    assert "not a failure mode" in refused("options.failure_mode", options={"failure_mode": "gasket"})
    assert "required" in refused("options.failure_mode", options={})
    censored = cols["c"].index(1)
    bad = {**cols, "mode": list(cols["mode"])}
    bad["mode"][censored] = "seal"
    assert f"row {censored + 1}: a censored row has no failure mode" in refused("mapping.mode", bad)
    failed = cols["c"].index(0)
    bad = {**cols, "mode": list(cols["mode"])}
    bad["mode"][failed] = ""
    assert f"row {failed + 1}: a failure needs its mode" in refused("mapping.mode", bad)
    refused("mapping.mode", mapping={"x": "t", "c": "c"})
    refused("options.confidence", options={"failure_mode": "seal", "confidence": 1.5})
    refused("options.bootstrap", options={"failure_mode": "seal", "bootstrap": 10})
    refused("mapping.i", mapping={**MAPPING, "i": "t"})
    with pytest.raises(InputError) as err:
        evaluate_at(fit_record(cols, MAPPING, ["x1"], None, None, {"failure_mode": "seal"}), 5.0, None)
    assert err.value.field == "covariates"


def test_group_column_adds_grays_test_as_cuminc() -> None:
    """With `group` the record's incidence block has Gray's test per mode, cuminc's numbers."""
    d = data()
    ref = run_r(d, "suppressMessages(library(cmprsk))\ny <- cuminc(d$t, d$s, d$site)\nout('stat', y$Tests[, 1])")
    cols = {**_cols(d), "site": d["site"].tolist()}
    rec = fit_record(cols, {**MAPPING, "group": "site"}, ["x1"], None, None, {"failure_mode": "seal"})
    rows = {r["mode"]: r["statistic"] for r in rec["cumulative_incidence"]["gray_test"]["rows"]}
    assert [rows["seal"], rows["bearing"]] == pytest.approx(ref["stat"], rel=1e-7)
