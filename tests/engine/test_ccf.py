"""Common-cause groups against closed forms and Markov chains (fixed seeds, each run's own
99% interval): a proof-tested 1oo2 beta-factor pair, non-repairable 1oo2 / 1oo3 / 2oo3 /
1oo4 groups with MGL parameters (rate basis), the probability basis, and a repairable pair."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import integrate, linalg

from bathtub.engine import simulate_availability, simulate_mission
from bathtub.errors import InputError

from .engine_diagrams import block, exp_model, parallel

Z99 = 2.5758293035489


def members(m: int, lam: float, **extra) -> list[dict]:
    return [block(f"M{i}", exp_model(lam), **extra) for i in range(m)]


def mgl_set_rates(m: int, lam: float, rho: list[float]) -> dict[int, float]:
    """NUREG/CR-4780 MGL: rate of a failure event taking one given set of k members,
    Q_k = prod(rho_1..rho_k) (1 - rho_{k+1}) / C(m-1, k-1) * lam, rho_1 = 1, rho_{m+1} = 0."""
    r = [1.0, *rho] + [1.0] * (m - 1 - len(rho)) + [0.0]
    out = {}
    for k in range(1, m + 1):
        out[k] = math.prod(r[:k]) * (1 - r[k]) / math.comb(m - 1, k - 1) * lam
    return out


def shock_chain_reliability(m: int, need: int, rates: dict[int, float], t: np.ndarray) -> np.ndarray:
    """P(at least `need` of m members up at t), non-repairable, as a Markov chain over the
    set of failed members: every event set E of size k fires at rates[k]."""
    states = list(range(1 << m))
    q = np.zeros((len(states), len(states)))
    for s in states:
        for k in range(1, m + 1):
            for e in itertools.combinations(range(m), k):
                mask = sum(1 << i for i in e)
                if s | mask != s:
                    q[s, s | mask] += rates[k]
        q[s, s] = -q[s].sum()
    up = np.array([m - bin(s).count("1") >= need for s in states], dtype=float)
    return np.array([linalg.expm(q * x)[0] @ up for x in t])


def check_curve(res, exact: np.ndarray) -> None:
    """Every point of a curve within its 99.9% band (about 99% for the curve as a whole)."""
    se = np.sqrt(exact * (1 - exact) / res.replications)
    assert np.all(np.abs(res.reliability - exact) <= 3.29 * se + 2.0 / res.replications), (res.reliability, exact)


def test_proof_tested_beta_pair_pfd():
    """1oo2, beta factor, tests every T, instant repair: PFD(t) restarts at each test,
    1 - exp(-b lam t) (1 - (1 - exp(-(1-b) lam t))^2); ~ ((1-b) lam T)^2 / 3 + b lam T / 2."""
    lam, T, beta = 1e-4, 1000.0, 0.1
    d = parallel(*members(2, lam, instant_repair=True, inspection={"interval": T}))
    d |= {"ccf": [{"members": ["M0", "M1"], "beta": beta}], "safety_function": True}
    res = simulate_availability(d, horizon=10 * T, replications=40_000, seed=3, grid=0)

    def pfd(t):
        return 1 - math.exp(-beta * lam * t) * (1 - (1 - math.exp(-(1 - beta) * lam * t)) ** 2)

    exact = integrate.quad(pfd, 0, T)[0] / T
    s = res.safety
    assert abs(s.pfd_avg - exact) <= Z99 * s.pfd_avg_std_error, (s.pfd_avg, exact)
    approx = ((1 - beta) * lam * T) ** 2 / 3 + beta * lam * T / 2
    assert abs(approx - exact) < 0.05 * exact
    assert abs(s.pfd_avg - approx) < 0.1 * approx


@pytest.mark.parametrize("m,need,mgl", [(2, 1, None), (3, 1, [0.3]), (3, 2, [0.3]), (4, 1, [0.4, 0.5]),
                                        (4, 2, None)])
def test_mgl_groups_against_their_markov_chain(m, need, mgl):
    lam, beta = 1e-3, 0.2
    blocks = members(m, lam)
    d = parallel(*blocks, need=None if need == 1 else need)
    group = {"members": [b["id"] for b in blocks], "beta": beta, "id": "pumps"}
    if mgl is not None:
        group["mgl"] = mgl
    d["ccf"] = [group]
    res = simulate_mission(d, mission_time=2000.0, replications=20_000, seed=11, grid=9)
    rates = mgl_set_rates(m, lam, [beta, *(mgl or [])])
    check_curve(res, shock_chain_reliability(m, need, rates, res.t))


def test_probability_basis_pair():
    """Each member's own failure (rate lam) takes the other with it with chance beta."""
    lam, beta = 1e-3, 0.3
    d = parallel(*members(2, lam)) | {"ccf": [{"members": ["M0", "M1"], "beta": beta, "basis": "probability"}]}
    res = simulate_mission(d, mission_time=2500.0, replications=20_000, seed=12, grid=9)
    q = np.array([[-2 * lam, 2 * lam * (1 - beta), 2 * lam * beta], [0, -lam, lam], [0, 0, 0]])
    exact = np.array([1 - linalg.expm(q * x)[0, 2] for x in res.t])
    check_curve(res, exact)


def test_repairable_beta_pair_against_markov():
    lam, mu, beta, horizon = 0.01, 0.1, 0.25, 500.0
    d = parallel(*members(2, lam, repair=exp_model(mu)))
    d["ccf"] = [{"members": ["M0", "M1"], "beta": beta}]
    res = simulate_availability(d, horizon=horizon, replications=20_000, seed=13, grid=11)
    # States: 0 both up, 1 one down, 2 both down (each down member repaired at mu).
    li = (1 - beta) * lam
    q = np.array([[0, 2 * li, beta * lam], [mu, 0, lam], [0, 2 * mu, 0]])
    q -= np.diag(q.sum(axis=1))

    def point(t):
        return 1 - linalg.expm(q * t)[0, 2]

    mean = integrate.quad(point, 0, horizon, limit=200)[0] / horizon
    assert abs(res.mean_availability - mean) <= Z99 * res.mean_availability_std_error
    p = np.array([point(x) for x in res.t])
    se = np.sqrt(p * (1 - p) / res.replications)
    assert np.all(np.abs(res.availability - p) <= Z99 * se + 2.0 / res.replications)


@pytest.mark.parametrize("group,field", [
    ({"members": ["M0"], "beta": 0.1}, "ccf[0].members"),
    ({"members": ["M0", "X"], "beta": 0.1}, "ccf[0].members[1]"),
    ({"members": ["M0", "M1"], "beta": 1.0}, "ccf[0].beta"),
    ({"members": ["M0", "M1"]}, "ccf[0].beta"),
    ({"members": ["M0", "M1"], "beta": 0.1, "basis": "demand"}, "ccf[0].basis"),
    ({"members": ["M0", "M1"], "beta": 0.1, "mgl": [0.5]}, "ccf[0].mgl"),
    ({"members": ["M0", "M1", "M2"], "beta": 0.1, "mgl": [0.5, 0.5]}, "ccf[0].mgl"),
    ({"members": ["M0", "M1", "M2"], "beta": 0.1, "mgl": [1.5]}, "ccf[0].mgl[0]"),
    ({"members": ["M0", "M1"], "beta": 0.1, "size": 2}, "ccf[0].size"),
])
def test_refusals_name_the_field(group, field):
    d = parallel(*members(3, 1e-3)) | {"ccf": [group]}
    with pytest.raises(InputError) as e:
        simulate_mission(d, mission_time=10.0, replications=10)
    assert e.value.field == f"diagram.{field}"


def test_a_block_in_one_group_only_and_components_only():
    d = parallel(*members(3, 1e-3)) | {"ccf": [{"members": ["M0", "M1"], "beta": 0.1},
                                              {"members": ["M1", "M2"], "beta": 0.1}]}
    with pytest.raises(InputError, match="already in common-cause group") as e:
        simulate_mission(d, mission_time=10.0, replications=10)
    assert e.value.field == "diagram.ccf[1].members[0]"
    d = parallel({"id": "P", "type": "parallel", "n": 2, "model": exp_model(1e-3)}, *members(1, 1e-3))
    d["ccf"] = [{"members": ["P", "M0"], "beta": 0.1}]
    with pytest.raises(InputError, match="component"):
        simulate_mission(d, mission_time=10.0, replications=10)


def test_weibull_beta_pair_is_the_textbook_model():
    """Members sharing one Weibull life, not repaired: R = S^b [1 - (1 - S^(1-b))^2]
    (shared events with beta of the hazard, independent parts with the rest)."""
    alpha, shape, beta = 1000.0, 2.5, 0.15
    life = {"distribution_id": "weibull", "params": {"alpha": alpha, "beta": shape}}
    d = parallel(block("M0", life), block("M1", life)) | {"ccf": [{"members": ["M0", "M1"], "beta": beta}]}
    res = simulate_mission(d, mission_time=1500.0, replications=20_000, seed=14, grid=7)
    s = np.exp(-((res.t / alpha) ** shape))
    check_curve(res, s**beta * (1 - (1 - s ** (1 - beta)) ** 2))
