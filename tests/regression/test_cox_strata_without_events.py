"""A Cox stratum without events (issue 26, item 10): R's coxph, lifelines and statsmodels fit such
data, the stratum adding nothing to the partial likelihood; its Breslow baseline is 0, so its
survival is 1 (R's survfit(coxph)). Reference numbers: R's survival (coxph, survfit with ctype=1,
the Breslow baseline ours is; cox.zph; concordance; robust and cluster sandwich), lifelines'
CoxPHFitter(strata=...) and statsmodels' PHReg(strata=...), all computed here on the same data.

Data: Rossi's recidivism data stratified by `cell` = wexp/paro (four strata), with every arrest in
stratum '1/0' (89 rows) turned into a censoring, so that stratum has none.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from lifelines import CoxPHFitter
from lifelines.datasets import load_rossi, load_stanford_heart_transplants
from statsmodels.duration.hazard_regression import PHReg

from bathtub import engine
from bathtub.errors import InputError
from bathtub.rbd import check_diagram, engine_form
from bathtub.regression import kinds, lives, models, records, validation, zph
from bathtub.regression.cox import fit_cox
from tests.regression.rref import run_r

COLS = ["fin", "age", "prio"]
EMPTY = "1/0"
TIMES = (10.0, 30.0, 52.0)


def _frame() -> pd.DataFrame:
    f = load_rossi()
    f["cell"] = f["wexp"].astype(str) + "/" + f["paro"].astype(str)
    f.loc[f["cell"] == EMPTY, "arrest"] = 0
    return f


FRAME = _frame()
X = FRAME[COLS].to_numpy(float)
T = FRAME["week"].to_numpy(float)
E = FRAME["arrest"].to_numpy(bool)
CELL = FRAME["cell"].tolist()
LEVELS = ["0/0", "0/1", "1/0", "1/1"]


@pytest.fixture(scope="module")
def r_ref() -> dict[str, np.ndarray]:
    """One R run: per tie method the fit, the Breslow survival of each stratum at the covariate means
    (survfit(ctype=1) at newdata = the means: R's own `means` put a 0/1 covariate at 0; strata in
    level order, TIMES within each), robust and cluster SEs, cox.zph."""
    return run_r(FRAME, """
        for (ties in c('efron', 'breslow', 'exact')) {
          f <- coxph(Surv(week, arrest) ~ fin + age + prio + strata(cell), data=d, ties=ties)
          out(paste0('coef_', ties), coef(f)); out(paste0('se_', ties), sqrt(diag(f$var)))
          out(paste0('ll_', ties), f$loglik)
          at <- data.frame(fin=mean(d$fin), age=mean(d$age), prio=mean(d$prio))
          s <- summary(survfit(f, newdata=at, ctype=1), times=c(10, 30, 52), extend=TRUE)
          out(paste0('surv_', ties), s$surv); out(paste0('surv_strata_', ties), as.integer(s$strata))
          if (ties != 'exact') {
            out(paste0('zph_', ties), cox.zph(f)$table[, 'chisq'])
            out(paste0('robust_', ties), sqrt(diag(coxph(Surv(week, arrest) ~ fin + age + prio + strata(cell),
                                                           data=d, ties=ties, robust=TRUE)$var)))
            out(paste0('cluster_', ties), sqrt(diag(coxph(Surv(week, arrest) ~ fin + age + prio + strata(cell),
                                                            cluster=paro, data=d, ties=ties)$var)))
          }
        }
        f <- coxph(Surv(week, arrest) ~ fin + age + prio + strata(cell), data=d)
        out('concordance', f$concordance['concordance'])
        out('mart_empty', residuals(f, 'martingale')[d$cell == '1/0'])
        out('score_empty', residuals(f, 'score')[d$cell == '1/0', ])""")


def _surv(fit, k: int) -> np.ndarray:
    b = fit.baseline[k]
    return np.exp(-models.step_cumhaz(b["time"], b["cumhaz"], np.array(TIMES)))


@pytest.mark.parametrize("ties", ["efron", "breslow", "exact"])
def test_fit_equals_r_coxph_and_survfit(ties: str, r_ref: dict[str, np.ndarray]) -> None:
    fit = fit_cox(X, COLS, T, E, strata=CELL, ties=ties)
    assert fit.strata == LEVELS
    assert np.allclose(fit.beta, r_ref[f"coef_{ties}"], rtol=0, atol=1e-8)
    assert np.allclose(np.sqrt(np.diag(fit.var)), r_ref[f"se_{ties}"], rtol=1e-7)
    assert np.allclose([fit.loglik0, fit.loglik], r_ref[f"ll_{ties}"], rtol=1e-10)
    # R reports every stratum at TIMES, the empty one with survival 1 (its cumulative hazard 0)
    strata_of = r_ref[f"surv_strata_{ties}"].astype(int) - 1
    assert sorted(set(strata_of)) == [0, 1, 2, 3]
    for k in range(4):
        assert np.allclose(_surv(fit, k), r_ref[f"surv_{ties}"][strata_of == k], rtol=1e-9), (ties, k)
    assert fit.baseline[2] == {"time": [], "cumhaz": []}
    assert np.all(r_ref[f"surv_{ties}"][strata_of == 2] == 1.0)
    if ties != "exact":
        test = zph.ph_test(fit.prepared, fit.beta, COLS, ties == "efron", zph.transform_times("km", None, T, E))
        ours = [row["statistic"] for row in test["rows"]] + [test["global"]["statistic"]]
        assert np.allclose(ours, r_ref[f"zph_{ties}"], rtol=1e-6)
        assert np.allclose(np.sqrt(np.diag(fit.robust_var)), r_ref[f"robust_{ties}"], rtol=1e-7)
        cfit = fit_cox(X, COLS, T, E, strata=CELL, ties=ties, cluster=FRAME["paro"].tolist())
        assert np.allclose(np.sqrt(np.diag(cfit.robust_var)), r_ref[f"cluster_{ties}"], rtol=1e-7)


def test_empty_stratum_residuals_and_concordance_equal_r(r_ref: dict[str, np.ndarray]) -> None:
    fit = fit_cox(X, COLS, T, E, strata=CELL)
    # R's martingale and score residuals of the stratum without events are 0 (no event time, no risk
    # set); ours are left out of the risk sets altogether, so they enter neither the sandwich nor cox.zph
    assert np.all(r_ref["mart_empty"] == 0) and np.all(r_ref["score_empty"] == 0)
    held = np.concatenate([s.rows for s in fit.prepared])
    assert set(held) == set(np.flatnonzero(np.array(CELL) != EMPTY))
    c, pairs = validation.concordance(fit.linear_predictor, None, T, E, fit.strata_index)
    assert math.isclose(c, r_ref["concordance"][0], rel_tol=1e-9) and pairs == 9487


def test_fit_equals_lifelines_and_statsmodels() -> None:
    fit = fit_cox(X, COLS, T, E, strata=CELL)
    sm = PHReg(T, X, status=E.astype(float), strata=np.array(CELL), ties="efron").fit()
    assert np.allclose(fit.beta, sm.params, atol=1e-7) and np.allclose(np.sqrt(np.diag(fit.var)), sm.bse, rtol=1e-6)
    assert math.isclose(fit.loglik, sm.llf, rel_tol=1e-10)
    ref = CoxPHFitter(baseline_estimation_method="breslow").fit(FRAME[["week", "arrest", *COLS, "cell"]], "week",
                                                                "arrest", strata=["cell"],
                                                                fit_options={"precision": 1e-12})
    assert np.allclose(fit.beta, ref.params_[COLS].to_numpy(), atol=1e-8)
    assert math.isclose(fit.loglik, ref.log_likelihood_, rel_tol=1e-9)
    base = ref.baseline_cumulative_hazard_
    assert list(base.columns) == LEVELS and np.all(base[EMPTY].to_numpy() == 0)
    for k, level in enumerate(LEVELS):  # lifelines' Breslow baseline at the means, at every time of its index
        ours = models.step_cumhaz(fit.baseline[k]["time"], fit.baseline[k]["cumhaz"], base.index.to_numpy())
        assert np.allclose(ours, base[level].to_numpy(), rtol=1e-8, atol=1e-15), level


@pytest.mark.slow  # ~5 s: many Cox refits
def test_a_stratum_without_events_adds_nothing() -> None:
    """Kalbfleisch–Prentice has no outside reference here; its definition does: the fit with the empty
    stratum's rows equals the fit without them, for every tie method (the baseline is at the means,
    which those rows move, so only β, its variance and the likelihood are compared)."""
    keep = np.array(CELL) != EMPTY
    for ties in ("efron", "breslow", "exact", "kalbfleisch-prentice"):
        full = fit_cox(X, COLS, T, E, strata=CELL, ties=ties)
        part = fit_cox(X[keep], COLS, T[keep], E[keep], strata=[c for c, k in zip(CELL, keep) if k], ties=ties)
        assert np.allclose(full.beta, part.beta, atol=1e-10) and np.allclose(full.var, part.var, rtol=1e-9), ties
        assert math.isclose(full.loglik, part.loglik, rel_tol=1e-12), ties


def test_record_names_the_stratum_and_predicts_survival_one() -> None:
    columns = {k: FRAME[k].tolist() for k in FRAME.columns}
    columns["state"] = np.where(E, "F", "S").tolist()
    record = records.fit_regression(columns, {"x": "week", "c": "state"}, "cox", COLS,
                                    cox_options={"strata_column": "cell"})
    strata = record["diagnostics"]["strata"]
    assert strata["without_events"] == [EMPTY] and EMPTY in strata["reading"]
    assert [(lv["level"], lv["events"]) for lv in strata["levels"]] == [("0/0", 27), ("0/1", 35), ("1/0", 0),
                                                                         ("1/1", 33)]
    assert record["baseline"][2] == {"stratum": EMPTY, "time": [], "cumhaz": []}
    assert record["validation"]["available"] and record["validation"]["brier"] is not None
    unit = {"fin": 1, "age": 30, "prio": 2, "cell": EMPTY}
    assert kinds.evaluate_at(record, 40, unit)["reliability"] == 1.0
    assert kinds.evaluate_curves(record, 10, unit)["sf"] == [1.0]
    x, k = models.unit_rows(record, [unit, {**unit, "cell": "0/0"}])
    logs = kinds.log_survival(record, x, k, np.array([[10.0, 52.0], [10.0, 52.0]]))
    assert np.all(logs[0] == 0) and np.all(logs[1] < 0)
    # as a block's life: F = 0 at every age (a steps table the engine accepts with one knot)
    assert lives.life_at(record, 0.3, 2) == {"distribution_id": "steps", "table": [[0.0, 0.0]]}


def test_counting_process_rows_equal_r() -> None:
    """Start/stop rows (Stanford heart transplants) stratified by surgery, the surgery = 1 stratum's
    deaths turned into censorings: R's coxph(Surv(start, stop, event) ~ ... + strata(surgery))."""
    heart = load_stanford_heart_transplants()
    heart.loc[heart["surgery"] == 1, "event"] = 0
    cols = ["age", "year", "transplant"]
    r = run_r(heart, "f <- coxph(Surv(start, stop, event) ~ age + year + transplant + strata(surgery), data=d); "
                     "out('coef', coef(f)); out('se', sqrt(diag(f$var))); out('ll', f$loglik)")
    fit = fit_cox(heart[cols].to_numpy(float), cols, heart["stop"].to_numpy(float), heart["event"].to_numpy(bool),
                  start=heart["start"].to_numpy(float), strata=heart["surgery"].tolist())
    assert np.allclose(fit.beta, r["coef"], atol=1e-8) and np.allclose(np.sqrt(np.diag(fit.var)), r["se"], rtol=1e-7)
    assert np.allclose([fit.loglik0, fit.loglik], r["ll"], rtol=1e-10)
    assert fit.strata == ["0", "1"] and fit.baseline[1] == {"time": [], "cumhaz": []} and fit.baseline[0]["time"]


def test_a_block_in_a_stratum_without_events_never_fails() -> None:
    """The engine simulates the never-failing steps life (one knot [0, 0]) as such: no replication fails,
    with fixed covariates or a schedule; a stratum with failures does fail."""
    columns = {k: FRAME[k].tolist() for k in FRAME.columns}
    columns["state"] = np.where(E, "F", "S").tolist()
    record = records.fit_regression(columns, {"x": "week", "c": "state"}, "cox", COLS,
                                    cox_options={"strata_column": "cell"})
    record["unit"] = "weeks"
    for cell, schedules, fails in ((EMPTY, None, False), (EMPTY, {"prio": {"expression": "1 + 3*(t >= 20)"}}, False),
                                   ("1/1", None, True)):
        fixed = {"fin": 1, "age": 30, "cell": cell, **({} if schedules else {"prio": 2})}
        block = {"id": "b", "type": "component", "model": {"saved_model_id": "m", "covariates": fixed}}
        if schedules:
            block["covariate_schedules"] = schedules
        diagram = {"name": "c", "unit": "weeks", "repairable": False,
                   "nodes": [{"id": "in", "type": "input"}, block, {"id": "out", "type": "output"}],
                   "edges": [{"source": "in", "target": "b"}, {"source": "b", "target": "out"}]}
        form = engine_form(check_diagram(diagram), {"m": record}, {}, warnings=[])
        run = engine.simulate_mission(form, mission_time=40.0, replications=500, seed=1, grid=5)
        lo, hi = run.probability_of_failure_interval
        assert lo > 0.01 if fails else hi < 0.01, (cell, lo, hi)


def test_every_stratum_without_events_is_refused() -> None:
    with pytest.raises(InputError) as err:
        fit_cox(X, COLS, T, np.zeros(T.size, dtype=bool), strata=CELL)
    assert err.value.field == "mapping.c" and "none of the 4 strata" in err.value.rule
