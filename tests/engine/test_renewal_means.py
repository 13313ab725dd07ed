"""Numeric renewal known means (the engine's `variance/renewal.rs`) against references computed
another way here: a Laplace inversion (mpmath, Talbot) for an Erlang life, and for a Weibull life
the unavailability's own integro-differential equation solved by scipy's quadrature and a
density-based scheme; then a plant with Weibull lives replaced at age, whose blocks become
controls: the reduced interval agrees with the plain run, the factor is above the figure the
plant had without them, and a seed gives the same numbers on any thread count and merge."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from scipy import integrate, stats

from bathtub import engine
from bathtub.engine import simulate_availability
from bathtub.engine.binding import renewal_downtime
from bathtub.errors import EngineError

from .engine_diagrams import block, exp_model, series
from .test_variance_reduction import binomial_band


def exp_spec(mean: float) -> tuple[str, dict[str, float]]:
    return ("exponential", {"failure_rate": 1.0 / mean})


def test_an_erlang_life_matches_the_laplace_inversion() -> None:
    # Alternating renewal (Barlow and Proschan): A*(s) = (1 - f*(s)) / (s (1 - f*(s) g*(s))), so the
    # expected up time over [0, T] is the inverse transform of A*(s)/s at T.
    k, mu, horizon = 0.02, 0.25, 1000.0

    def up(s):
        f = (k / (k + s)) ** 2
        g = mu / (mu + s)
        return (1 - f) / (s * s * (1 - f * g))

    with mpmath.workdps(30):  # not mp.dps = 30: that would stay set for the worker's other tests
        want = 1.0 - float(mpmath.invertlaplace(up, horizon, method="talbot")) / horizon
    got, err = renewal_downtime(("gamma", {"alpha": 2.0, "beta": 1.0 / k}), exp_spec(1.0 / mu), horizon)
    assert err <= 1e-9
    assert got == pytest.approx(want, abs=1e-9)


def weibull_down(eta: float, beta: float, mu: float, horizon: float, h: float) -> tuple[np.ndarray, np.ndarray]:
    """Mean unavailability of a Weibull unit with exponential repair (rate mu) by another route:
    q(t) = P(down at t) obeys q' = f(t) + mu (q * f)(t) - mu q (failures of the first life and of
    lives begun at repairs, less repairs ending), solved by the trapezoid rule on densities."""
    n = round(horizon / h)
    t = np.arange(n + 1) * h
    f = stats.weibull_min.pdf(t, beta, scale=eta)
    q = np.zeros(n + 1)
    rate = np.zeros(n + 1)
    rate[0] = f[0]
    for i in range(1, n + 1):
        # (q * f)(t_i) by the trapezoid; q_0 = 0 and f_0 = 0 (beta > 1), so q_i does not enter.
        conv = h * float(np.dot(q[i - 1:0:-1], f[1:i]))
        known = f[i] + mu * conv
        q[i] = (q[i - 1] + h / 2 * (rate[i - 1] + known)) / (1 + h * mu / 2)
        rate[i] = known - mu * q[i]
    return t, q


def weibull_reference(eta: float, beta: float, mu: float, horizon: float, h: float) -> float:
    t, q = weibull_down(eta, beta, mu, horizon, h)
    return float(integrate.trapezoid(q, t)) / horizon


def test_a_weibull_life_matches_the_unavailability_equation() -> None:
    eta, beta, mu, horizon = 300.0, 2.5, 0.2, 1500.0
    # Richardson over h = 0.2 and 0.1 (the scheme is second order); its own error is the change.
    coarse, fine = (weibull_reference(eta, beta, mu, horizon, h) for h in (0.2, 0.1))
    want = fine + (fine - coarse) / 3
    ref_err = abs(fine - coarse) / 3
    assert ref_err < 1e-6
    got, err = renewal_downtime(("weibull", {"alpha": eta, "beta": beta}), exp_spec(1 / mu), horizon)
    assert err <= 1e-9
    assert abs(got - want) <= 1e-9 + 0.1 * ref_err, (got, want, ref_err)


def test_the_long_run_is_mttr_over_mttf_plus_mttr() -> None:
    # D(T) T = D∞ T + b + o(1): the slope between two horizons is MTTR / (MTTF + MTTR).
    life, repair = ("weibull", {"alpha": 400.0, "beta": 2.0}), ("lognormal", {"mu": 2.5, "sigma": 0.4})
    mttf = 400.0 * math.gamma(1.5)
    mttr = math.exp(2.5 + 0.4**2 / 2)
    (d1, e1), (d2, e2) = (renewal_downtime(life, repair, t) for t in (6000.0, 9000.0))
    slope = (d2 * 9000.0 - d1 * 6000.0) / 3000.0
    assert slope == pytest.approx(mttr / (mttf + mttr), abs=1e-7 + 3 * (e1 + e2) * 3)


@pytest.mark.parametrize(("kw", "field"), [({"horizon": 0.0}, "horizon"), ({"horizon": math.inf}, "horizon"),
                                           ({"replace": (-1.0, 2.0)}, "replace"),
                                           ({"replace": (100.0, -1.0)}, "replace")])
def test_bad_inputs_are_refused_naming_the_field(kw: dict, field: str) -> None:
    args = {"horizon": 100.0, **kw}
    with pytest.raises(EngineError) as e:
        renewal_downtime(exp_spec(100.0), exp_spec(5.0), **args)
    assert field in str(e.value)


def pm_plant() -> dict:
    """Two trains of three blocks; the first of each a Weibull life replaced at age (the bench's
    plant with PM, smaller)."""
    weibull = {"distribution_id": "weibull", "params": {"alpha": 300.0, "beta": 3.0}}
    nodes = [{"id": "in", "type": "input"}, {"id": "out", "type": "output"}]
    edges = []
    for t in "ab":
        prev = "in"
        for i in range(3):
            if i == 0:
                b = block(f"{t}{i}", weibull, exp_model(0.2),
                          preventive={"policy": "age", "interval": 250.0, "duration": 2.0})
            else:
                b = block(f"{t}{i}", exp_model(0.01), exp_model(0.2))
            nodes.append(b)
            edges.append({"source": prev, "target": b["id"]})
            prev = b["id"]
        edges.append({"source": prev, "target": "out"})
    return {"nodes": nodes, "edges": edges}


def test_blocks_replaced_at_age_are_controls_on_a_plant_run() -> None:
    kw = dict(horizon=1000.0, replications=4000, seed=21, grid=0)
    plain = simulate_availability(pm_plant(), threads=2, **kw)
    red = simulate_availability(pm_plant(), threads=2, variance_reduction="auto", **kw)
    vr = red.variance_reduction
    assert "downtime of a0" in vr["controls"] and "downtime of b0" in vr["controls"]
    assert "system unavailability under independence" in vr["controls"]
    assert vr["method"] == "conditional+control"
    # The reduced estimate and the plain one agree within their joint standard error.
    joint = math.hypot(red.mean_availability_std_error, plain.mean_availability_std_error)
    assert abs(red.mean_availability - plain.mean_availability) < 1.96 * joint
    assert vr["plain_mean_availability"] == plain.mean_availability
    # Above the factor the bench's plant with PM had with the exponential blocks alone (1.66).
    assert vr["factor"] > 1.66
    # Same seed, same numbers: one thread, and two chunks merged.
    one = simulate_availability(pm_plant(), threads=1, variance_reduction="auto", **kw)
    assert one.state == red.state
    a = simulate_availability(pm_plant(), threads=2, variance_reduction="auto", **{**kw, "replications": 1500})
    b = simulate_availability(pm_plant(), threads=1, variance_reduction="auto", replication_start=1500,
                              **{**kw, "replications": 2500})
    assert engine.merge(a, b).state == red.state


def test_calendar_replacement_is_not_a_control() -> None:
    d = pm_plant()
    for n in d["nodes"]:
        if "preventive" in n:
            n["preventive"]["policy"] = "block"
    r = simulate_availability(d, horizon=1000.0, replications=300, seed=2, grid=0, variance_reduction="control")
    assert not any(c.endswith("a0") or c.endswith("b0") for c in r.variance_reduction["controls"])


@pytest.mark.slow
def test_reduced_intervals_cover_a_weibull_series_at_their_nominal_rate() -> None:
    # A Weibull block in series with an exponential one: the exact mean unavailability is
    # 1 - (1/T) ∫ (1 - q(t)) a(t) dt, q from the density scheme above (Richardson over h = 0.2, 0.1)
    # and a(t) the exponential block's closed form; the Weibull block's mean is the numeric one.
    eta, beta, mu, lam, horizon = 300.0, 2.5, 0.2, 2e-3, 1500.0

    def exact(h: float) -> float:
        t, q = weibull_down(eta, beta, mu, horizon, h)
        s = lam + mu
        a = mu / s + lam / s * np.exp(-s * t)
        return 1.0 - float(integrate.trapezoid((1 - q) * a, t)) / horizon

    coarse, fine = exact(0.2), exact(0.1)
    truth = 1.0 - (fine + (fine - coarse) / 3)
    d = series(block("w", {"distribution_id": "weibull", "params": {"alpha": eta, "beta": beta}}, exp_model(mu)),
               block("e", exp_model(lam), exp_model(mu)))
    seeds = range(3000, 3200)
    covered, methods, factors = 0, set(), []
    for seed in seeds:
        r = simulate_availability(d, horizon=horizon, replications=300, seed=seed, grid=0, threads=1,
                                  variance_reduction="control")
        lo, hi = r.mean_availability_interval
        covered += lo <= truth <= hi
        methods.add(r.variance_reduction["method"])
        factors.append(r.variance_reduction["factor"] or 1.0)
    lo_count, hi_count = binomial_band(len(seeds))
    assert lo_count <= covered <= hi_count, (covered, lo_count, hi_count)
    assert methods == {"control"}
    assert np.median(factors) > 1.2


@pytest.mark.slow  # a dask LocalCluster of worker processes (as in tests/engine/test_scaleout.py)
def test_a_pm_plant_on_the_cluster_is_the_local_run_to_the_bit() -> None:
    # Each chunk plans its run, solving the renewal means itself: the same plan to the bit, so the
    # chunks' sums merge and the figures are the local run's.
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                       silence_logs=40)
    client = distributed.Client(cluster)
    try:
        kw = {"horizon": 1000.0, "seed": 9, "grid": 0, "replications": 1500, "variance_reduction": "auto"}
        local = simulate_availability(pm_plant(), threads=1, **kw)
        remote = simulate_availability(pm_plant(), cluster=client, **kw)
        assert remote.state == local.state and remote.to_dict() == local.to_dict()
        assert "downtime of a0" in local.variance_reduction["controls"]
    finally:
        client.close()
        cluster.close()
