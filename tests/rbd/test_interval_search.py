"""Interval search against the closed forms: age replacement of one Weibull block (the
strategy calculator's optimum lies in the search's range of optima), the proof-test
interval of a 1oo1 exponential channel for a target PFDavg (exactly
1 - (1 - e^{-lam tau})/(lam tau)), the whole curve against it; common random numbers
tighten the comparisons; results scale with the time unit; refusals name the field."""

from __future__ import annotations

import math

import pytest
from scipy import integrate, optimize

from bathtub.errors import InputError
from bathtub.rbd.decisions import candidate_intervals, interval_search
from bathtub.strategy.failure_finding import exponential_mean_unavailability, failure_finding_interval
from bathtub.strategy.replacement import optimal_replacement
from tests.engine.engine_diagrams import block, exp_model, series

Z = 4.0
ALPHA, BETA, CP, CU = 1000.0, 3.0, 100.0, 1000.0


def weibull(alpha: float, beta: float) -> dict:
    params = [{"name": "alpha", "value": alpha}, {"name": "beta", "value": beta}]
    return {"distribution_id": "weibull", "params": params}


def age_replaced(k: float = 1.0) -> dict:
    """Renewed as new in no time at a failure (cost CU) or at age T (cost CP)."""
    return series(block("P", weibull(ALPHA * k, BETA), instant_repair=True,
                        preventive={"policy": "age", "interval": 500.0 * k, "cost": CP}, costs={"replace": CU}))


def age_rate(t: float) -> float:
    sf = lambda x: math.exp(-((x / ALPHA) ** BETA))  # noqa: E731
    return (CP * sf(t) + CU * (1 - sf(t))) / integrate.quad(sf, 0.0, t)[0]


def test_age_replacement_optimum_matches_the_strategy_calculator():
    ref = optimal_replacement("weibull", {"alpha": ALPHA, "beta": BETA}, planned_cost=CP, unplanned_cost=CU)
    t_star = ref["optimal_time"]
    res = interval_search(age_replaced(), blocks=["P"], knob="preventive", intervals=candidate_intervals(250, 650, 17),
                          horizon=100_000.0, objective="cost_rate", replications=400, seed=7)
    opt = res["optimum"]
    lo, hi = opt["indistinguishable_from"]
    assert lo <= t_star <= hi, (t_star, opt)
    assert not opt["at_edge"]
    r_lo, r_hi = opt["range"]
    assert r_lo <= lo and hi <= r_hi and r_lo <= opt["estimate"] <= r_hi
    assert abs(opt["estimate"] - t_star) <= 25.0  # within one grid step of the exact optimum
    # The optimum's cost rate and the whole curve against the renewal-reward closed form (a
    # finite horizon started new adds a bias of order one cycle in a thousand: 1% allowed).
    assert abs(opt["value"] - ref["optimal_cost_rate"]) <= Z * opt["std_error"] + 0.01 * ref["optimal_cost_rate"]
    for pt in res["curve"]:
        exact = age_rate(pt["interval"])
        assert abs(pt["value"] - exact) <= Z * pt["std_error"] + 0.01 * exact, (pt, exact)
    # One unit: its lives are drawn in the same order for every candidate, cycle by cycle.
    assert res["crn_variance_ratio_median"] > 1.5


def test_proof_test_interval_for_a_target_pfd_matches_the_closed_form():
    lam, target = 1e-4, 0.05
    d = series(block("V", exp_model(lam), instant_repair=True, inspection={"interval": 1000.0})) | \
        {"safety_function": True}
    res = interval_search(d, blocks=["V"], knob="proof_test", intervals=candidate_intervals(500, 1600, 12),
                          horizon=400_000.0, objective="pfd_avg", target=target, replications=300, seed=11)
    exact = optimize.brentq(lambda t: exponential_mean_unavailability(lam, t) - target, 1.0, 1e6, xtol=1e-9)
    # The strategy calculator's failure-finding interval is the same closed form.
    ff = failure_finding_interval("exponential", {"failure_rate": lam}, target_availability=1 - target)
    assert ff["interval"] == pytest.approx(exact, rel=1e-9)
    at = res["interval_at_target"]
    assert at["range_95"][0] <= exact <= at["range_95"][1], (exact, at)
    assert at["interval"] == pytest.approx(exact, rel=0.03)
    # The longest candidate meeting the target is chosen (no costs: the least testing).
    assert res["optimum"]["interval"] == max(x for x in candidate_intervals(500, 1600, 12) if x <= exact)
    for pt in res["curve"]:
        pfd = exponential_mean_unavailability(lam, pt["interval"])
        # A horizon that is not a multiple of the interval ends in a partial cycle: <= tau/H of PFD.
        assert abs(pt["value"] - pfd) <= Z * pt["std_error"] + pt["interval"] / 400_000.0 * pfd, (pt, pfd)


def test_target_with_costs_takes_the_cheapest_candidate_meeting_it():
    lam = 1e-4
    d = series(block("V", exp_model(lam), instant_repair=True, inspection={"interval": 1000.0, "cost": 5.0}))
    res = interval_search(d, blocks=["V"], knob="proof_test", intervals=candidate_intervals(200, 2000, 10),
                          horizon=40_000.0, objective="availability", target=0.95, replications=200, seed=1)
    meets = [p for p in res["curve"] if p["value"] >= 0.95]
    assert res["optimum"]["rule"] == "least cost rate meeting the target"
    assert res["optimum"]["cost_rate"] == min(p["cost_rate"] for p in meets)
    # Tests cost 5 each: the cost rate is 5 / interval (up to the last partial cycle).
    for p in res["curve"]:
        assert p["cost_rate"] == pytest.approx(5.0 * math.floor(40_000.0 / p["interval"]) / 40_000.0, rel=1e-9)


@pytest.mark.parametrize("k", [1e-3, 1e6])
def test_search_scales_with_the_time_unit(k):
    kw = {"blocks": ["P"], "knob": "preventive", "objective": "cost_rate", "replications": 200, "seed": 3}
    base = interval_search(age_replaced(), intervals=candidate_intervals(300, 600, 4), horizon=20_000.0, **kw)
    got = interval_search(age_replaced(k), intervals=[x * k for x in candidate_intervals(300, 600, 4)],
                          horizon=20_000.0 * k, **kw)
    assert got["optimum"]["interval"] == pytest.approx(base["optimum"]["interval"] * k, rel=1e-12)
    for a, b in zip(base["curve"], got["curve"], strict=True):
        assert b["value"] * k == pytest.approx(a["value"], rel=1e-9)


def test_refusals_name_the_field():
    d = age_replaced()
    kw = {"knob": "preventive", "intervals": [100.0, 200.0], "horizon": 1000.0}
    with pytest.raises(InputError, match=r"blocks\[0\].*no block"):
        interval_search(d, blocks=["nope"], **kw)
    with pytest.raises(InputError, match=r"blocks\[0\].*proof test"):
        interval_search(d, blocks=["P"], **{**kw, "knob": "proof_test"})
    with pytest.raises(InputError, match="intervals"):
        interval_search(d, blocks=["P"], **{**kw, "intervals": [200.0, 100.0]})
    with pytest.raises(InputError, match="target"):
        interval_search(d, blocks=["P"], **kw, target=0.5)
    with pytest.raises(InputError, match="knob"):
        interval_search(d, blocks=["P"], **{**kw, "knob": "calendar"})
    no_costs = series(block("V", exp_model(1e-3), instant_repair=True, inspection={"interval": 10.0}))
    with pytest.raises(InputError, match="no costs"):
        interval_search(no_costs, blocks=["V"], knob="proof_test", intervals=[5.0, 10.0], horizon=100.0)
    assert interval_search(d, blocks=["P"], **kw, check_only=True) == {}


def grouped(*ids: str) -> dict:
    """Age-replaced Weibull blocks in series, all in maintenance group g."""
    blocks = [block(i, weibull(ALPHA, BETA), instant_repair=True, maintenance_group="g",
                    preventive={"policy": "age", "interval": 500.0, "cost": CP}, costs={"replace": CU}) for i in ids]
    return series(*blocks) | {"maintenance_groups": {"g": {}}}


def test_a_group_of_one_block_searches_as_the_block():
    kw = {"knob": "preventive", "intervals": candidate_intervals(300, 900, 7), "horizon": 20_000.0,
          "replications": 300, "seed": 5}
    by_block = interval_search(grouped("P"), blocks=["P"], **kw)
    by_group = interval_search(grouped("P"), group="g", **kw)
    assert by_group["group"] == "g" and by_group["blocks"] == ["P"]
    assert by_group["curve"] == by_block["curve"] and by_group["optimum"] == by_block["optimum"]
    # A group of two identical blocks in series costs twice the one block's rate, on one interval.
    two = interval_search(grouped("P", "Q"), group="g", **kw)
    assert two["blocks"] == ["P", "Q"]
    for one, both in zip(by_block["curve"], two["curve"], strict=True):
        assert both["value"] == pytest.approx(2 * one["value"], abs=Z * (one["std_error"] * 2 + both["std_error"]))
        assert abs(both["value"] - 2 * age_rate(both["interval"])) <= Z * both["std_error"]


def test_a_sil_target_is_the_pfd_target_at_its_band_upper_bound():
    lam = 1e-5  # PFDavg ~ lam tau / 2: SIL 2 (PFDavg < 1e-2) up to tau ~ 2000
    d = series(block("V", exp_model(lam), instant_repair=True, inspection={"interval": 1000.0})) | \
        {"safety_function": True}
    kw = {"blocks": ["V"], "knob": "proof_test", "intervals": candidate_intervals(1000, 3000, 9),
          "horizon": 200_000.0, "replications": 300, "seed": 12}
    sil = interval_search(d, target_sil=2, **kw)
    pfd = interval_search(d, objective="pfd_avg", target=1e-2, **kw)
    assert sil["target"] == 1e-2 and sil["target_sil"] == 2 and sil["objective"] == "pfd_avg"
    for key in ("curve", "optimum", "interval_at_target"):
        assert sil[key] == pfd[key]
    exact = optimize.brentq(lambda t: exponential_mean_unavailability(lam, t) - 1e-2, 1.0, 1e6, xtol=1e-9)
    lo, hi = sil["interval_at_target"]["range_95"]
    assert lo <= exact <= hi, (lo, exact, hi)


def test_group_and_sil_refusals_name_the_field():
    kw = {"knob": "preventive", "intervals": [100.0, 200.0], "horizon": 1000.0}
    d = grouped("P")
    with pytest.raises(InputError) as e:
        interval_search(d, group="h", **kw)
    assert e.value.field == "group" and "no maintenance group 'h'" in e.value.rule
    with pytest.raises(InputError) as e:
        interval_search(d, group="g", blocks=["P"], **kw)
    assert e.value.field == "blocks"
    with pytest.raises(InputError) as e:
        interval_search(d, group="g", **{**kw, "knob": "proof_test"})
    assert e.value.field == "group"
    with pytest.raises(InputError) as e:
        interval_search(d, blocks=["P"], target_sil=2, **kw)
    assert e.value.field == "target_sil" and "safety function" in e.value.rule
    safety = d | {"safety_function": True}
    for extra, field in (({"target_sil": 5}, "target_sil"), ({"target_sil": 2, "objective": "availability"},
                                                              "objective"),
                         ({"target_sil": 2, "target": 0.01}, "target")):
        with pytest.raises(InputError) as e:
            interval_search(safety, blocks=["P"], **kw, **extra)
        assert e.value.field == field, extra
