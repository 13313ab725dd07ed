"""Saved regression models as RBD block lives: fixed covariates and covariate schedules.

References: each record's own survival for a unit (`evaluate_at`, itself checked against
lifelines in tests/regression) for fixed covariates; for schedules the closed form
S(t) = exp(−Σ H0(segment)·e^{x_k b}) (PH) or S0(Σ e^{−x_k γ}·segment) (AFT) written out here
from the record's parameters, which the simulation (fixed seed) must hold within its own
95% interval."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from bathtub import engine
from bathtub.errors import InputError
from bathtub.rbd import analyze, check_diagram, engine_form
from bathtub.rbd.schedules import compile_expression
from bathtub.regression.kinds import evaluate_at
from bathtub.regression.records import fit_regression

REPS = 40_000


def _data(scale: float = 1.0, seed: int = 3) -> dict[str, list]:
    """Weibull PH lives (shape 1.5, scale 100) with hazard ratio e^{0.7·load}, censored at 150,
    and a two-level categorical site."""
    rng = np.random.default_rng(seed)
    n = 400
    load = rng.uniform(0, 2, n)
    site = rng.choice(["north", "south"], n)
    t = 100 * rng.weibull(1.5, n) * np.exp(-(0.7 * load + 0.3 * (site == "south")) / 1.5)
    c = np.minimum(t, 150.0)
    return {"t": (c * scale).tolist(), "c": (t > 150).astype(int).tolist(), "load": load.tolist(),
            "site": site.tolist()}


def _fit(dist: str, scale: float = 1.0, covariates: tuple[str, ...] = ("load",), **kw) -> dict:
    rec = fit_regression(_data(scale), {"x": "t", "c": "c"}, dist, covariates=list(covariates), **kw)
    rec["unit"] = "hours"
    return rec


@pytest.fixture(scope="module")
def records() -> dict[str, dict]:
    return {d: _fit(d) for d in ("weibull_ph", "lognormal_aft", "loglogistic_aft", "cox")}


def _diagram(model: dict, schedules: dict | None = None, *, n: int = 1) -> dict:
    b = {"id": "b", "type": "component" if n == 1 else "series", "model": model}
    if n > 1:
        b["n"] = n
    if schedules is not None:
        b["covariate_schedules"] = schedules
    nodes = [{"id": "in", "type": "input"}, b, {"id": "out", "type": "output"}]
    edges = [{"source": a, "target": c} for a, c in itertools.pairwise(["in", "b", "out"])]
    return {"name": "cov", "unit": "hours", "repairable": False, "nodes": nodes, "edges": edges}


def _form(rec: dict, model_extra: dict | None = None, schedules: dict | None = None, warnings=None, n: int = 1):
    d = _diagram({"saved_model_id": "m", **(model_extra or {})}, schedules, n=n)
    return engine_form(check_diagram(d), {"m": rec}, {}, warnings=warnings)


def _life(form: dict) -> dict:
    return next(n for n in form["nodes"] if n["id"] == "b")["model"]


def _run(form: dict, mission: float, seed: int = 7) -> engine.MissionResult:
    return engine.simulate_mission(form, mission_time=mission, replications=REPS, seed=seed, grid=5)


def _within(m: engine.MissionResult, want: float) -> None:
    lo, hi = (1.0 - x for x in reversed(m.probability_of_failure_interval))
    assert lo <= want <= hi, (lo, want, hi)
    assert hi - lo < 0.03


@pytest.mark.parametrize("dist", ["weibull_ph", "lognormal_aft", "loglogistic_aft"])
def test_fixed_covariates_give_the_models_own_life(records: dict, dist: str) -> None:
    rec = records[dist]
    life = _life(_form(rec, {"covariates": {"load": 1.3}}))
    assert "path" not in life
    d = engine.EngineLifetime.from_input(life["distribution_id"], life["params"])
    for t in (5.0, 40.0, 120.0, 300.0):
        want = evaluate_at(rec, t, {"load": 1.3})["reliability"]
        assert math.isclose(float(d.sf(t)), want, rel_tol=1e-10, abs_tol=1e-300), (t, float(d.sf(t)), want)
    # the diagram answers in closed form (exact): R at the mission end is that survival
    out = analyze(_diagram({"saved_model_id": "m", "covariates": {"load": 1.3}}), models={"m": rec},
                  mission_time=60.0)
    assert out["method"] == "closed_form" and out["warnings"] == []
    assert math.isclose(out["results"]["reliability"], evaluate_at(rec, 60.0, {"load": 1.3})["reliability"],
                        rel_tol=1e-9)


def test_fixed_covariates_on_a_cox_model_are_its_breslow_steps(records: dict) -> None:
    rec = records["cox"]
    life = _life(_form(rec, {"covariates": {"load": 0.4}}))
    assert life["distribution_id"] == "steps"
    series = _form(rec, {"covariates": {"load": 0.4}}, n=2)  # two units in series: R = S²
    for t in (30.0, 90.0):
        s = evaluate_at(rec, t, {"load": 0.4})["reliability"]
        _within(_run(series, t), s * s)


def _weibull_h(rec: dict, t: float) -> float:
    return (t / math.exp(rec["mu"])) ** (1.0 / rec["sigma"])


def test_weibull_ph_step_schedule_is_the_closed_form(records: dict) -> None:
    """load 0.5 up to age 40, 1.8 after: H(t) = H0(40)e^{0.5b} + (H0(t) − H0(40))e^{1.8b}."""
    rec = records["weibull_ph"]
    b = rec["coefficients"][0]["value"]
    form = _form(rec, schedules={"load": {"expression": "0.5 + 1.3*(t >= 40)"}})
    assert _life(form)["path"]["starts"] == [0.0, 40.0]
    for t in (30.0, 80.0):
        h = _weibull_h(rec, min(t, 40.0)) * math.exp(0.5 * b)
        if t > 40:
            h += (_weibull_h(rec, t) - _weibull_h(rec, 40.0)) * math.exp(1.8 * b)
        _within(_run(form, t), math.exp(-h))


def test_cox_phase_table_with_period_is_the_closed_form(records: dict) -> None:
    """Duty cycle every 25 h: load 0.2 for 10 h, then 1.5; the Breslow steps each take the factor
    of the phase they fall in ((start, next] rule)."""
    rec = records["cox"]
    beta = rec["coefficients"][0]["value"]
    mean = rec["means"][0]
    table = [{"t": 0, "value": 0.2}, {"t": 10, "value": 1.5}]
    form = _form(rec, schedules={"load": {"table": table, "period": 25}})
    path = _life(form)["path"]
    assert path["period"] == 25 and path["starts"] == [0.0, 10.0]
    times = np.asarray(rec["baseline"][0]["time"])
    jumps = np.diff(np.concatenate([[0.0], rec["baseline"][0]["cumhaz"]]))
    offset = np.mod(times, 25.0)
    load = np.where((offset > 0) & (offset <= 10), 0.2, 1.5)  # at a multiple of 25: the phase ending there
    load[times <= 10] = 0.2
    for t in (20.0, 70.0):
        keep = times <= t
        h = float(np.sum(jumps[keep] * np.exp((load[keep] - mean) * beta)))
        _within(_run(form, t), math.exp(-h))


def test_aft_schedule_runs_the_clock(records: dict) -> None:
    """Lognormal AFT: psi(t) = Σ e^{−x_k γ}·segment; S = Φ(−(ln psi − μ)/σ)."""
    rec = records["lognormal_aft"]
    g = rec["gamma"][0]
    form = _form(rec, schedules={"load": {"table": [{"t": 0, "value": 1.9}, {"t": 30, "value": 0.1}]}})
    assert _life(form)["path"]["scale"] == "time"
    t = 75.0
    psi = 30.0 * math.exp(-1.9 * g) + (t - 30.0) * math.exp(-0.1 * g)
    _within(_run(form, t), float(stats.norm.sf((math.log(psi) - rec["mu"]) / rec["sigma"])))


def test_values_outside_the_fitted_range_are_clipped_with_a_warning(records: dict) -> None:
    rec = records["weibull_ph"]
    lo, hi = rec["design"]["terms"][0]["min"], rec["design"]["terms"][0]["max"]
    warnings: list[str] = []
    form = _form(rec, schedules={"load": {"expression": "3*(t >= 40) - 1"}}, warnings=warnings)
    factors = _life(form)["path"]["factors"]
    b = rec["coefficients"][0]["value"]
    assert factors == pytest.approx([math.exp(lo * b), math.exp(hi * b)], rel=1e-12)
    assert len(warnings) == 1 and "nodes.b.covariate_schedules.load" in warnings[0] and "clipped" in warnings[0]
    out = analyze(_diagram({"saved_model_id": "m"}, {"load": {"expression": "3*(t >= 40) - 1"}}),
                  models={"m": rec}, mission_time=50.0, replications=2000)
    assert out["method"] == "simulation" and out["warnings"] == warnings


def test_categorical_phases_and_a_fixed_numeric(records: dict) -> None:
    rec = _fit("weibull_ph", covariates=("load", "site"))
    coef = {c["name"]: c["value"] for c in rec["coefficients"]}
    form = _form(rec, {"covariates": {"load": 1.0}},
                 {"site": {"table": [{"t": 0, "value": "north"}, {"t": 50, "value": "south"}]}})
    f = _life(form)["path"]["factors"]
    assert f == pytest.approx([math.exp(coef["load"]), math.exp(coef["load"] + coef["site[T.south]"])], rel=1e-12)


def test_expression_steps_fall_exactly() -> None:
    e = compile_expression("min(floor(t/100), 3) + (t > 250)", "x")
    # floor(t/100) keeps stepping past the min (equal neighbours merge later); at exact ages
    assert e.breaks(1000.0, "x").tolist() == [100.0, 200.0, 250.0, *(100.0 * k for k in range(3, 10))]
    assert compile_expression("t//24 - 7*((t//24)//7)", "x").breaks(400.0, "x").tolist() == \
        [24.0 * k for k in range(1, 17)]
    assert compile_expression("ceil(sqrt(t))", "x").breaks(10.0, "x").tolist() == [1.0, 4.0, 9.0]


@pytest.mark.parametrize("expr, words", [
    ("t", "changes continuously"), ("sin(t)", "changes continuously"), ("floor(sin(t))", "one way"),
    ("t % 24", "steps"), ("x + 1", "unknown name"), ("floor(log(t))", "not a finite number"),
    ("t == 5", "instant"), ("__import__('os')", "not a number"), ("floor(t", "cannot parse"),
    ("open(t)", "unknown function"),
])
def test_bad_expressions_are_refused_naming_the_field(expr: str, words: str) -> None:
    d = _diagram({"saved_model_id": "m"}, {"load": {"expression": expr}})
    with pytest.raises(InputError) as e:
        check_diagram(d)
    assert e.value.field == "nodes.b.covariate_schedules.load.expression" and words in e.value.rule


@pytest.mark.parametrize("model, schedules, field", [
    ({}, None, "nodes.b.model.covariates.load"),  # a covariate without a value
    ({"covariates": {"load": 1.0, "age": 3}}, None, "nodes.b.model.covariates.age"),
    ({}, {"age": {"expression": "1"}}, "nodes.b.covariate_schedules.age"),
    ({"covariates": {"load": 1.0}}, {"load": {"expression": "1"}}, "nodes.b.covariate_schedules.load"),
    ({}, {"load": {"table": [{"t": 0, "value": 1}, {"t": 5, "value": 2}], "period": 5}},
     "nodes.b.covariate_schedules.load.period"),
    ({}, {"load": {"table": [{"t": 0, "value": 1}, {"t": 5, "value": 2}, {"t": 5, "value": 3}]}},
     "nodes.b.covariate_schedules.load.table"),
    ({}, {"load": {"table": [{"t": 0, "value": "high"}]}}, "nodes.b.covariate_schedules.load.table"),
])
def test_refusals_name_the_field(records: dict, model: dict, schedules: dict | None, field: str) -> None:
    with pytest.raises(InputError) as e:
        _form(records["weibull_ph"], model, schedules)
    assert e.value.field == field, e.value


def test_model_kinds_that_are_not_lives_are_refused(records: dict) -> None:
    add = _fit("additive_hazards")
    with pytest.raises(InputError) as e:
        _form(add, {"covariates": {"load": 1.0}})
    assert e.value.field == "nodes.b.model.saved_model_id" and "additive" in e.value.rule
    cat = _fit("weibull_ph", covariates=("load", "site"))
    with pytest.raises(InputError) as e:
        _form(cat, {"covariates": {"load": 1.0}}, {"site": {"expression": "t > 3"}})
    assert e.value.field == "nodes.b.covariate_schedules.site.expression"
    life = {"kind": "distribution", "distribution": "weibull", "unit": "hours",
            "params": [{"name": "alpha", "value": 10.0}, {"name": "beta", "value": 2.0}]}
    with pytest.raises(InputError) as e:
        _form(life, {"covariates": {"load": 1.0}})
    assert e.value.field == "nodes.b.model.covariates"
    with pytest.raises(InputError) as e:
        _form(life, schedules={"load": {"expression": "1"}})
    assert e.value.field == "nodes.b.covariate_schedules"
    with pytest.raises(InputError) as e:
        engine_form(check_diagram(_diagram({"saved_model_id": "nope", "covariates": {"load": 1}})), {}, {})
    assert e.value.field == "nodes.b.model.saved_model_id"


def test_the_stratum_is_fixed_not_scheduled() -> None:
    data = _data()
    rec = fit_regression(data, {"x": "t", "c": "c"}, "cox", covariates=["load"],
                         cox_options={"strata_column": "site"})
    with pytest.raises(InputError) as e:
        _form(rec, {"covariates": {"load": 1.0}},
              {"site": {"table": [{"t": 0, "value": "north"}]}})
    assert e.value.field == "nodes.b.covariate_schedules.site"
    life = _life(_form(rec, {"covariates": {"load": 1.0, "site": "south"}}))
    k = [b["stratum"] for b in rec["baseline"]].index("south")
    assert life["table"][0][0] == rec["baseline"][k]["time"][0]


@pytest.mark.parametrize("scale", [1e-3, 1e6])
def test_times_scale_exactly(scale: float) -> None:
    """Data and schedule in other units: the path's ages scale, its factors do not, the life
    scales: the same seed draws the same lives times the scale."""
    base, scaled = _fit("weibull_ph"), _fit("weibull_ph", scale=scale)
    f1 = _form(base, schedules={"load": {"table": [{"t": 0, "value": 0.5}, {"t": 40, "value": 1.8}]}})
    f2 = _form(scaled, schedules={"load": {"table": [{"t": 0, "value": 0.5}, {"t": 40 * scale, "value": 1.8}]}})
    p1, p2 = _life(f1)["path"], _life(f2)["path"]
    assert p2["starts"] == pytest.approx([s * scale for s in p1["starts"]], rel=1e-12)
    assert p2["factors"] == pytest.approx(p1["factors"], rel=1e-6)
    m1, m2 = _run(f1, 80.0), _run(f2, 80.0 * scale)
    assert m2.probability_of_failure == pytest.approx(m1.probability_of_failure, abs=2e-3)
    assert m2.mttf == pytest.approx(m1.mttf * scale, rel=1e-4)


def test_fixed_covariates_in_a_repairable_diagram(records: dict) -> None:
    """A saved Weibull PH life at fixed covariates with exponential repairs: the mean availability
    is MTTF / (MTTF + MTTR) (alternating renewal, horizon long against a cycle); a Cox block runs too
    (its quote reads the mean of its Breslow steps: infinite when the last step leaves survivors)."""
    for dist in ("weibull_ph", "cox"):
        d = _diagram({"saved_model_id": "m", "covariates": {"load": 1.0}})
        d["repairable"] = True
        d["nodes"][1]["repair"] = {"distribution_id": "exponential", "params": [{"name": "failure_rate",
                                                                                 "value": 0.2}]}
        out = analyze(d, models={"m": records[dist]}, horizon=20_000.0, replications=200, seed=2)
        assert out["method"] == "simulation" and math.isfinite(out["quote"]["seconds"])
        if dist == "weibull_ph":
            life = _life(_form(records[dist], {"covariates": {"load": 1.0}}))
            p = {q["name"]: q["value"] for q in life["params"]}
            mttf = p["alpha"] * math.gamma(1 + 1 / p["beta"])
            assert out["results"]["mean_availability"] == pytest.approx(mttf / (mttf + 5.0), abs=0.01)


def test_a_running_block_follows_the_schedule_from_its_age(records: dict) -> None:
    """t is the block's age: a unit 30 h old at the start has R(m) = S(30 + m) / S(30) on the path."""
    rec = records["weibull_ph"]
    b = rec["coefficients"][0]["value"]
    d = _diagram({"saved_model_id": "m"}, {"load": {"expression": "0.5 + 1.3*(t >= 40)"}})
    form = engine_form(check_diagram(d), {"m": rec}, {})
    next(n for n in form["nodes"] if n["id"] == "b")["state"] = {"age": 30.0}  # the engine's initial state

    def big_h(t: float) -> float:
        h = _weibull_h(rec, min(t, 40.0)) * math.exp(0.5 * b)
        return h + (_weibull_h(rec, t) - _weibull_h(rec, 40.0)) * math.exp(1.8 * b) if t > 40 else h

    _within(_run(form, 50.0), math.exp(-(big_h(80.0) - big_h(30.0))))
