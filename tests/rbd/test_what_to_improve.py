"""What to improve against closed forms: importance measures on series, parallel, 2-of-3
and bridge (Birnbaum = dR/dp_i of the structure polynomial), non-repairable at a mission
end and repairable as time averages; "what if" differences on common random numbers
against the closed form and against two independent runs (same mean, much smaller
variance); results that scale exactly with the time unit; refusals naming the field."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import pytest
from scipy import integrate

from bathtub.engine import simulate_availability
from bathtub.errors import InputError
from bathtub.rbd.decisions import what_to_improve
from tests.engine.engine_diagrams import block, bridge, exp_model, parallel, series

Z = 4.0  # several figures per test: a wide band, fixed seeds

RATES = {"A": 1.0e-3, "B": 2.0e-3, "C": 1.5e-3, "D": 0.7e-3, "E": 2.5e-3}
REPAIR = {"A": 8.0, "B": 20.0, "C": 5.0, "D": 12.0, "E": 30.0}


def r_series(p: dict[str, float]) -> float:
    return p["A"] * p["B"] * p["C"]


def r_parallel(p: dict[str, float]) -> float:
    return 1 - (1 - p["A"]) * (1 - p["B"]) * (1 - p["C"])


def r_2oo3(p: dict[str, float]) -> float:
    a, b, c = p["A"], p["B"], p["C"]
    return a * b + a * c + b * c - 2 * a * b * c


def r_bridge(p: dict[str, float]) -> float:
    """Pivoting on the bridge's middle block E (paths A-C, B-D, A-E-D, B-E-C)."""
    e_up = (1 - (1 - p["A"]) * (1 - p["B"])) * (1 - (1 - p["C"]) * (1 - p["D"]))
    e_down = 1 - (1 - p["A"] * p["C"]) * (1 - p["B"] * p["D"])
    return p["E"] * e_up + (1 - p["E"]) * e_down


def build(shape: str, repairable: bool) -> dict:
    ids = "ABCDE" if shape == "bridge" else "ABC"
    blocks = [block(i, exp_model(RATES[i]), exp_model(1 / REPAIR[i]) if repairable else None) for i in ids]
    if shape == "series":
        return series(*blocks)
    if shape == "parallel":
        return parallel(*blocks)
    if shape == "2oo3":
        return parallel(*blocks, need=2)
    return bridge(*blocks)


STRUCTURES: dict[str, Callable[[dict[str, float]], float]] = {
    "series": r_series, "parallel": r_parallel, "2oo3": r_2oo3, "bridge": r_bridge}


def fussell_vesely(r: Callable[[dict[str, float]], float], p: dict[str, float]) -> dict[str, float]:
    """Vesely's definition by brute force: the minimal cut sets from the structure function
    (R at 0/1 probabilities), then P(system down and some minimal cut holding i all down) / Q
    summed over every state."""
    ids = sorted(p)
    phi = lambda down: r({i: 0.0 if i in down else 1.0 for i in ids})  # noqa: E731
    subsets = [frozenset(c) for k in range(1, len(ids) + 1) for c in itertools.combinations(ids, k)]
    cuts = [s for s in subsets if phi(s) == 0 and all(phi(s - {j}) == 1 for j in s)]
    num = dict.fromkeys(ids, 0.0)
    for down in [frozenset(), *subsets]:
        if phi(down) != 0:
            continue
        prob = math.prod((1 - p[i]) if i in down else p[i] for i in ids)
        for i in ids:
            if any(i in c and c <= down for c in cuts):
                num[i] += prob
    q = 1 - r(p)
    return {i: num[i] / q for i in ids}


def closed_measures(r: Callable[[dict[str, float]], float], p: dict[str, float]) -> dict[str, dict[str, float]]:
    """Every measure from the structure polynomial: R(1_i), R(0_i), and dR/dp_i by a central
    difference (exact for a polynomial linear in each p_i, so it checks Birnbaum = dR/dp_i)."""
    q = 1 - r(p)
    fv = fussell_vesely(r, p)
    out = {}
    for i in p:
        r1, r0 = r({**p, i: 1.0}), r({**p, i: 0.0})
        h = 1e-4
        deriv = (r({**p, i: p[i] + h}) - r({**p, i: p[i] - h})) / (2 * h)
        assert deriv == pytest.approx(r1 - r0, abs=1e-9)
        out[i] = {"birnbaum": deriv, "system_up_if_block_up": r1, "system_up_if_block_down": r0,
                  "criticality": deriv * (1 - p[i]) / q, "fussell_vesely": fv[i],
                  "risk_achievement_worth": (1 - r0) / q, "risk_reduction_worth": q / (1 - r1) if r1 < 1 else None}
    return out


def check_measures(got: dict, want: dict, n: int, rel: float) -> None:
    assert abs(got["birnbaum"] - want["birnbaum"]) <= Z * got["birnbaum_std_error"] + 1e-12, (got, want)
    for k in ("system_up_if_block_up", "system_up_if_block_down"):
        se = math.sqrt(max(want[k] * (1 - want[k]), 1e-12) / n)
        assert abs(got[k] - want[k]) <= Z * se + 1e-12, (k, got[k], want[k])
    for k in ("criticality", "fussell_vesely"):
        assert abs(got[k] - want[k]) <= Z * got[f"{k}_std_error"] + 1e-9, (k, got[k], want[k])
    for k in ("risk_achievement_worth", "risk_reduction_worth"):
        # A perfect block that makes the system perfect: RRW has no value (the engine says None).
        assert (got[k] is None) if want[k] is None else got[k] == pytest.approx(want[k], rel=rel), (k, got, want)


@pytest.mark.parametrize("shape", list(STRUCTURES))
def test_mission_importance_and_what_if_match_closed_forms(shape):
    T, n = 300.0, 40_000
    d = build(shape, repairable=False)
    res = what_to_improve(d, repairable=False, mission_time=T, replications=n, seed=5)
    ids = sorted({b["id"] for b in res["blocks"]})
    p = {i: math.exp(-RATES[i] * T) for i in ids}
    r = STRUCTURES[shape]
    assert res["objective"] == "reliability"
    assert abs(res["base"]["value"] - r(p)) <= Z * res["base"]["std_error"]
    want = closed_measures(r, p)
    by_id = {b["id"]: b for b in res["blocks"]}
    for i in ids:
        check_measures(by_id[i], want[i], n, rel=0.08)
        # MTBF doubled: the block's rate halves; the difference against the exact one.
        w = by_id[i]["what_if"]["mtbf_doubled"]
        exact = r({**p, i: math.exp(-RATES[i] * T / 2)}) - r(p)
        assert w["interval"][0] - 1e-12 <= exact <= w["interval"][1] + 1e-12 or \
            abs(w["difference"] - exact) <= Z * w["std_error"], (i, w, exact)
        assert by_id[i]["what_if"]["mttr_halved"] is None  # nothing is repaired in a mission
    gains = [b["best_gain"] for b in res["blocks"]]
    assert gains == sorted(gains, reverse=True)
    assert len(res["top"]) >= 3 and res["top"][0].startswith("Doubling the MTBF of")


def time_average(f: Callable[[float], float], horizon: float) -> float:
    return integrate.quad(f, 0.0, horizon, limit=400, points=[horizon / 100, horizon / 10])[0] / horizon


@pytest.mark.parametrize("shape", ["2oo3", "bridge"])
def test_availability_importance_is_the_time_average_of_the_closed_form(shape):
    """Unlimited crews: blocks are independent alternating renewal processes started new,
    a_i(t) = mu/(lam+mu) + lam/(lam+mu) e^{-(lam+mu)t}; each measure's time average over
    the horizon by quadrature of the structure polynomial at a(t)."""
    H, n = 2000.0, 3000
    d = build(shape, repairable=True)
    res = what_to_improve(d, repairable=True, horizon=H, replications=n, seed=9)
    ids = sorted({b["id"] for b in res["blocks"]})
    r = STRUCTURES[shape]

    def a(t: float) -> dict[str, float]:
        out = {}
        for i in ids:
            lam, mu = RATES[i], 1 / REPAIR[i]
            out[i] = mu / (lam + mu) + lam / (lam + mu) * math.exp(-(lam + mu) * t)
        return out

    avail = time_average(lambda t: r(a(t)), H)
    assert abs(res["base"]["value"] - avail) <= Z * res["base"]["std_error"]
    by_id = {b["id"]: b for b in res["blocks"]}
    for i in ids:
        a1 = time_average(lambda t, i=i: r({**a(t), i: 1.0}), H)
        a0 = time_average(lambda t, i=i: r({**a(t), i: 0.0}), H)
        got = by_id[i]
        assert abs(got["birnbaum"] - (a1 - a0)) <= Z * got["birnbaum_std_error"], (i, got["birnbaum"], a1 - a0)
        q = 1 - avail
        crit = time_average(lambda t, i=i: (1 - a(t)[i]) * (r({**a(t), i: 1.0}) - r({**a(t), i: 0.0})), H) / q
        assert abs(got["criticality"] - crit) <= Z * got["criticality_std_error"], (i, got["criticality"], crit)
        fv = time_average(lambda t, i=i: fussell_vesely(r, a(t))[i] * (1 - r(a(t))), H) / q
        assert abs(got["fussell_vesely"] - fv) <= Z * got["fussell_vesely_std_error"], (i, got["fussell_vesely"], fv)
        assert got["risk_achievement_worth"] == pytest.approx((1 - a0) / q, rel=0.1)
        # Share of downtime and the what-if lanes are there for every repairable block.
        assert 0.0 <= got["share_of_downtime"] <= 1.0
        assert got["what_if"]["mttr_halved"] is not None and got["what_if"]["mtbf_doubled"] is not None


def independent_difference(d: dict, changed: dict, horizon: float, n: int) -> tuple[float, float]:
    base = simulate_availability(d, horizon=horizon, replications=n, seed=101, grid=0)
    other = simulate_availability(changed, horizon=horizon, replications=n, seed=202, grid=0)
    diff = other.mean_availability - base.mean_availability
    return diff, math.hypot(base.mean_availability_std_error, other.mean_availability_std_error)


def test_what_if_equals_two_independent_runs_with_a_much_smaller_variance():
    """A series of three: the blocks not changed draw the same lives and repairs in both
    designs (each unit has its own stream), so their downtime cancels from the difference."""
    H, n = 3000.0, 4000
    d = build("series", repairable=True)
    res = what_to_improve(d, repairable=True, horizon=H, replications=n, seed=3)
    by_id = {b["id"]: b for b in res["blocks"]}
    for change, field, factor in (("mtbf_doubled", "model", 0.5), ("mttr_halved", "repair", 2.0)):
        changed = build("series", repairable=True)
        node = next(x for x in changed["nodes"] if x["id"] == "A")
        node[field] = exp_model(node[field]["params"][0]["value"] * factor)
        crn = by_id["A"]["what_if"][change]
        diff, se_indep = independent_difference(d, changed, H, n)
        # Same mean: the two estimates differ by less than their combined spread.
        assert abs(crn["difference"] - diff) <= Z * math.hypot(crn["std_error"], se_indep), (change, crn, diff)
        # Much tighter: measured against the independent runs' actual spread, and as reported.
        assert (se_indep / crn["std_error"]) ** 2 > 10.0, (change, se_indep, crn["std_error"])
        assert crn["variance_ratio"] > 10.0
    # Non-repairable lives are drawn once per replication: the pairing is near perfect.
    m = what_to_improve(build("2oo3", repairable=False), repairable=False, mission_time=500.0, replications=4000,
                        seed=3)
    assert m["crn_variance_ratio_median"] > 3.0


@pytest.mark.parametrize("k", [1e-3, 1.0, 1e6])
def test_results_scale_exactly_with_the_time_unit(k):
    """Every time (lives, repairs, horizon) times k: the same streams give the same
    replications, so availability, importance and gains are unchanged and the cost rate is
    divided by k."""
    def scaled(kk: float) -> dict:
        ids = "ABC"
        blocks = [block(i, exp_model(RATES[i] / kk), exp_model(1 / (REPAIR[i] * kk)), costs={"repair": 50.0})
                  for i in ids]
        return parallel(*blocks, need=2)

    base = what_to_improve(scaled(1.0), repairable=True, horizon=2000.0, replications=400, seed=4,
                           objective="cost_rate")
    got = what_to_improve(scaled(k), repairable=True, horizon=2000.0 * k, replications=400, seed=4,
                          objective="cost_rate")
    assert got["base"]["value"] * k == pytest.approx(base["base"]["value"], rel=1e-9)
    for b0, b1 in zip(base["blocks"], got["blocks"], strict=True):
        assert b0["id"] == b1["id"]
        assert b1["birnbaum"] == pytest.approx(b0["birnbaum"], rel=1e-9, abs=1e-12)
        w0, w1 = b0["what_if"]["mtbf_doubled"], b1["what_if"]["mtbf_doubled"]
        assert w1["difference"] * k == pytest.approx(w0["difference"], rel=1e-9, abs=1e-12)
        assert b1["share_of_cost"] == pytest.approx(b0["share_of_cost"], rel=1e-9)


def test_cost_share_and_pfd_objective():
    d = build("2oo3", repairable=True)
    for n in d["nodes"]:
        if n["id"] in "ABC":
            n["costs"] = {"repair": {"A": 10.0, "B": 100.0, "C": 1.0}[n["id"]]}
    res = what_to_improve(d, repairable=True, horizon=1000.0, replications=300, seed=2, objective="cost_rate")
    shares = {b["id"]: b["share_of_cost"] for b in res["blocks"]}
    assert sum(shares.values()) == pytest.approx(1.0)
    assert shares["B"] > shares["A"] > shares["C"]
    assert not res["higher_is_better"]
    # A lower cost rate is a gain: the gain is minus the difference.
    w = next(b for b in res["blocks"] if b["id"] == "B")["what_if"]["mtbf_doubled"]
    assert w["gain"] == -w["difference"] and w["gain"] > 0
    pfd = what_to_improve(d | {"safety_function": True}, repairable=True, horizon=1000.0, replications=300, seed=2)
    av = what_to_improve(d, repairable=True, horizon=1000.0, replications=300, seed=2)
    assert pfd["objective"] == "pfd_avg" and av["objective"] == "availability"
    assert pfd["base"]["value"] == pytest.approx(1 - av["base"]["value"], abs=1e-12)


def test_refusals_name_the_field():
    d = build("series", repairable=True)
    with pytest.raises(InputError, match="objective"):
        what_to_improve(d, repairable=True, horizon=10.0, objective="reliability")
    with pytest.raises(InputError, match="no costs"):
        what_to_improve(d, repairable=True, horizon=10.0, objective="cost_rate")
    with pytest.raises(InputError, match="replications"):
        what_to_improve(d, repairable=True, horizon=10.0, replications=5)
    with pytest.raises(InputError, match="horizon"):
        what_to_improve(d, repairable=True, horizon=-1.0)
    with pytest.raises(InputError, match="mission_time"):
        what_to_improve(build("series", False), repairable=False)
    with pytest.raises(InputError, match=r"blocks\[0\]"):
        what_to_improve(d, repairable=True, horizon=10.0, blocks=["nope"])
    assert what_to_improve(d, repairable=True, horizon=10.0, check_only=True) == {}


def test_what_if_for_chosen_blocks_only_importance_for_all():
    d = build("bridge", repairable=True)
    whole = what_to_improve(d, repairable=True, horizon=500.0, replications=200, seed=6)
    part = what_to_improve(d, repairable=True, horizon=500.0, replications=200, seed=6, blocks=["E", "A"])
    by_id = {b["id"]: b for b in part["blocks"]}
    assert set(by_id) == set("ABCDE")
    assert all((by_id[i]["what_if"]["mtbf_doubled"] is None) == (i not in "EA") for i in "ABCDE")
    # The same streams: the chosen blocks' figures are those of the full run.
    full = {b["id"]: b for b in whole["blocks"]}
    for i in "EA":
        assert by_id[i]["what_if"] == full[i]["what_if"] and by_id[i]["birnbaum"] == full[i]["birnbaum"]
