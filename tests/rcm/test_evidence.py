"""Evidence checks, table-driven: each outcome against items that support it, contradict it, have
changed since (stale), are gone (missing) or are of the wrong type. Strategy items are real saved
results of bathtub.strategy; the cost rate the check reads off the curve is compared with the
renewal-reward formula integrated by scipy."""

from __future__ import annotations

import math
from typing import Any

import pytest
from scipy import integrate, stats

from bathtub import strategy
from bathtub.rcm import STATES, check_evidence

WEIBULL = {"distribution_id": "weibull", "params": [1000.0, 2.5], "unit": "h"}
REPLACE = strategy.optimal_replacement(**WEIBULL, planned_cost=100.0, unplanned_cost=1000.0)
NO_PAY = strategy.optimal_replacement(distribution_id="exponential", params=[0.001], unit="h", planned_cost=100.0,
                                      unplanned_cost=1000.0)
FF = strategy.failure_finding_interval(distribution_id="exponential", params=[0.001], target_availability=0.99,
                                       unit="h")
T_OPT = REPLACE["optimal_time"]


def life(dist: str, **params: list[float]) -> dict[str, Any]:
    return {"kind": "model", "body": {"kind": "distribution", "distribution": dist,
                                      "params": [{"name": k, "value": v[0], "ci": v[1:]} for k, v in params.items()]}}


def recurrent(model: str, verdict: str) -> dict[str, Any]:
    growth = {"verdict": verdict, "on": "beta", "interval": [0.4, 0.9] if verdict == "improving" else [1.2, 2.0],
              "reading": "r"}
    return {"kind": "model", "body": {"kind": "recurrent", "distribution": model, "growth": growth}}


def analysis(calculator: str, result: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "strategy_analysis", "body": {"calculator": calculator, "inputs": {}, "result": result}}


def degradation(pf: Any, unit: str = "h") -> dict[str, Any]:
    return {"kind": "degradation_model", "body": {"kind": "degradation", "unit": unit, "pf_interval": pf}}


def decision(outcome: str, etype: str, interval: float | None = None, unit: str | None = None,
             basis: str | None = None) -> dict[str, Any]:
    d: dict[str, Any] = {"outcome": outcome, "evidence": {"type": etype, "id": "x_1"}}
    if basis:
        d["rtf_basis"] = basis
    if interval is not None:
        d.update(interval=interval, interval_unit=unit)
    return d


RANDOM = decision("rtf", "model", basis="random")
UNECONOMIC = decision("rtf", "strategy_analysis", basis="uneconomic")

CASES = [
    # rtf random ← model
    ("weibull beta interval reaches 1", RANDOM, life("weibull", alpha=[900, 700, 1200], beta=[1.3, 0.8, 2.1]),
     "supported", "reaches 1"),
    ("weibull beta interval below 1", RANDOM, life("weibull", alpha=[900, 700, 1200], beta=[0.6, 0.4, 0.9]),
     "supported", "not significantly increasing"),
    ("weibull beta interval above 1", RANDOM, life("weibull", alpha=[900, 700, 1200], beta=[2.5, 1.6, 3.9]),
     "contradicted", "lies above 1"),
    ("exponential", RANDOM, life("exponential", failure_rate=[0.001, 0.0008, 0.0012]), "supported", "constant"),
    ("gamma shape above 1", RANDOM, life("gamma", alpha=[3.0, 1.5, 6.0], beta=[10, 5, 20]), "contradicted",
     "gamma shape"),
    ("gamma shape reaching 1", RANDOM, life("gamma", alpha=[1.5, 0.7, 3.0], beta=[10, 5, 20]), "supported",
     "gamma shape"),
    ("lognormal cannot tell", RANDOM, life("lognormal", mu=[3, 2, 4], sigma=[1, 0.5, 2]), "wrong_type", "lognormal"),
    ("recurrent deteriorating", RANDOM, recurrent("crow_amsaa", "deteriorating"), "contradicted", "deterioration"),
    ("recurrent improving", RANDOM, recurrent("crow_amsaa", "improving"), "supported", "no deterioration"),
    ("recurrent no verdict", RANDOM, recurrent("hpp", "not available"), "wrong_type", "growth verdict"),
    ("an analysis cited as a model", RANDOM, analysis("optimal_replacement", REPLACE), "wrong_type",
     "strategy analysis"),
    ("no such model", RANDOM, None, "missing", "no model x_1"),
    # fixed_interval ← optimal replacement, units converted (the optimum in hours, the interval in days)
    ("at the optimum, in days", decision("fixed_interval", "strategy_analysis", T_OPT / 24, "days"),
     analysis("optimal_replacement", REPLACE), "supported", "within 5%"),
    ("twice the optimum", decision("fixed_interval", "strategy_analysis", 2 * T_OPT / 24, "days"),
     analysis("optimal_replacement", REPLACE), "contradicted", "more than 5%"),
    ("far beyond the curve", decision("fixed_interval", "strategy_analysis", 1, "years"),
     analysis("optimal_replacement", REPLACE), "contradicted", "beyond the saved cost curve"),
    ("replacement does not pay", decision("fixed_interval", "strategy_analysis", 100, "h"),
     analysis("optimal_replacement", NO_PAY), "contradicted", "does not pay"),
    ("cycles against hours", decision("fixed_interval", "strategy_analysis", 300, "cycles"),
     analysis("optimal_replacement", REPLACE), "wrong_type", "cannot be compared"),
    ("a demonstration test", decision("fixed_interval", "strategy_analysis", 300, "h"),
     analysis("demonstration_test", {}), "wrong_type", "optimal replacement"),
    ("a degradation model as an analysis", decision("fixed_interval", "strategy_analysis", 300, "h"),
     degradation({"value": 500}), "wrong_type", "degradation model"),
    # failure_finding ← failure-finding analysis (longest interval ≈ 20.13 h)
    ("test every 0.8 days", decision("failure_finding", "strategy_analysis", 0.8, "days"),
     analysis("failure_finding", FF), "supported", "meets availability 0.99"),
    ("test every day", decision("failure_finding", "strategy_analysis", 1, "days"),
     analysis("failure_finding", FF), "contradicted", "misses availability 0.99"),
    ("an optimal replacement for a hidden failure", decision("failure_finding", "strategy_analysis", 1, "days"),
     analysis("optimal_replacement", REPLACE), "wrong_type", "failure finding analysis"),
    ("target out of reach", decision("failure_finding", "strategy_analysis", 1, "days"),
     analysis("failure_finding", {**FF, "interval": None}), "contradicted", "no test interval"),
    # rtf uneconomic ← optimal replacement
    ("replacement does not pay: run to failure", UNECONOMIC, analysis("optimal_replacement", NO_PAY), "supported",
     "does not pay"),
    ("replacement pays", UNECONOMIC, analysis("optimal_replacement", REPLACE), "contradicted", "pays"),
    ("no such analysis", UNECONOMIC, None, "missing", "no strategy analysis"),
    # on_condition ← degradation model (P–F interval, its lower bound when given)
    ("inspect every 10 days, P–F lower 300 h", decision("on_condition", "degradation_model", 10, "days"),
     degradation({"value": 500, "lower": 300}), "supported", "shorter than the P–F interval"),
    ("inspect every 2 weeks, P–F lower 300 h", decision("on_condition", "degradation_model", 2, "weeks"),
     degradation({"value": 500, "lower": 300}), "contradicted", "not shorter"),
    ("P–F as a bare number, in km", decision("on_condition", "degradation_model", 900, "km"),
     degradation(1000.0, unit="km"), "supported", "1000 km"),
    ("km against hours", decision("on_condition", "degradation_model", 900, "km"),
     degradation(1000.0), "wrong_type", "cannot be compared"),
    ("no P–F interval", decision("on_condition", "degradation_model", 10, "days"), degradation(None), "wrong_type",
     "no P–F interval"),
    ("degradation stored as a model", decision("on_condition", "degradation_model", 10, "days"),
     {"kind": "model", "body": {"kind": "degradation", "unit": "h", "pf_interval": {"value": 500}}}, "supported",
     "shorter"),
    ("a life model for on_condition", decision("on_condition", "degradation_model", 10, "days"),
     life("weibull", beta=[2, 1.5, 3]), "wrong_type", "a model, not degradation model"),
]


@pytest.mark.parametrize(("decision", "item", "state", "words"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_check(decision: dict[str, Any], item: dict[str, Any] | None, state: str, words: str) -> None:
    out = check_evidence(decision, item, changed=False)
    assert out["state"] == state and out["state"] in STATES, out
    assert words in out["reason"], out["reason"]
    assert "\n" not in out["reason"] and len(out["reason"]) < 300


@pytest.mark.parametrize(("decision", "item", "state", "words"),
                         [c[1:] for c in CASES if c[2] is not None and c[3] not in ("wrong_type",)],
                         ids=[c[0] for c in CASES if c[2] is not None and c[3] not in ("wrong_type",)])
def test_changed_evidence_is_stale_and_says_what_it_shows_now(decision: dict[str, Any], item: dict[str, Any],
                                                              state: str, words: str) -> None:
    out = check_evidence(decision, item, changed=True)
    assert out["state"] == "stale" and "send it again" in out["reason"]
    assert out["current"]["state"] == state


def test_missing_and_wrong_kind_win_over_stale() -> None:
    assert check_evidence(RANDOM, None, changed=True)["state"] == "missing"
    assert check_evidence(RANDOM, analysis("optimal_replacement", REPLACE), changed=True)["state"] == "wrong_type"


def test_every_state_is_covered() -> None:
    assert {c[3] for c in CASES} | {"stale"} == set(STATES)
    outcomes = {(c[1]["outcome"], c[1].get("rtf_basis")) for c in CASES}
    assert outcomes == {("rtf", "random"), ("rtf", "uneconomic"), ("fixed_interval", None),
                        ("failure_finding", None), ("on_condition", None)}


def test_cost_rate_at_the_interval_matches_renewal_reward() -> None:
    """The check's cost rate at the decision's interval (read off the saved curve) against
    [Cp R(T) + Cu F(T)] / ∫0^T R integrated by scipy; 5% excess is the line between near and far."""
    law = stats.weibull_min(2.5, scale=1000.0)

    def rate(t: float) -> float:
        return (100.0 * law.sf(t) + 1000.0 * law.cdf(t)) / integrate.quad(law.sf, 0, t)[0]

    c_opt = rate(T_OPT)
    for factor in (0.5, 0.8, 1.0, 1.3, 1.6):
        t_days = factor * T_OPT / 24
        out = check_evidence(decision("fixed_interval", "strategy_analysis", t_days, "days"),
                             analysis("optimal_replacement", REPLACE), changed=False)
        assert math.isclose(out["cost_rate"], rate(factor * T_OPT), rel_tol=2e-3), factor
        excess = rate(factor * T_OPT) / c_opt - 1
        assert math.isclose(out["excess"], excess, abs_tol=2e-3)
        if abs(excess - 0.05) > 5e-3:
            assert out["state"] == ("supported" if excess <= 0.05 else "contradicted"), (factor, excess)


@pytest.mark.parametrize("scale", [1e-3, 1e-1, 1.0, 1e2, 1e4, 1e6])
def test_checks_transform_with_the_time_scale(scale: float) -> None:
    """Times ×scale in the analysis and the decision: the same states, the same cost excess."""
    rep = strategy.optimal_replacement(distribution_id="weibull", params=[1000.0 * scale, 2.5], unit="h",
                                       planned_cost=100.0, unplanned_cost=1000.0)
    ff = strategy.failure_finding_interval(distribution_id="exponential", params=[0.001 / scale],
                                           target_availability=0.99, unit="h")
    for factor in (0.7, 1.0, 1.4):
        d = decision("fixed_interval", "strategy_analysis", factor * T_OPT * scale / 24, "days")
        base = check_evidence(decision("fixed_interval", "strategy_analysis", factor * T_OPT / 24, "days"),
                              analysis("optimal_replacement", REPLACE), changed=False)
        out = check_evidence(d, analysis("optimal_replacement", rep), changed=False)
        assert out["state"] == base["state"] and math.isclose(out["excess"], base["excess"], abs_tol=1e-4)
    for days, state in ((0.8, "supported"), (1.0, "contradicted")):
        out = check_evidence(decision("failure_finding", "strategy_analysis", days * scale, "days"),
                             analysis("failure_finding", ff), changed=False)
        assert out["state"] == state, (scale, out)
