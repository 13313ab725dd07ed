"""Repairable availability against closed forms and Markov chains, within each run's own
99% interval (fixed seeds)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import integrate, linalg

from bathtub.engine import simulate_availability

from .engine_diagrams import block, exp_model, parallel, series

Z99 = 2.5758293035489


def unit_avail(lam: float, mu: float):
    """Point availability of an exponential block starting new: mu/(l+m) + l/(l+m) e^{-(l+m)t}."""
    return lambda t: mu / (lam + mu) + lam / (lam + mu) * np.exp(-(lam + mu) * t)


def check_run(res, point, horizon: float) -> None:
    mean = integrate.quad(point, 0, horizon, limit=200)[0] / horizon
    assert abs(res.mean_availability - mean) <= Z99 * res.mean_availability_std_error, (
        res.mean_availability, mean, res.mean_availability_std_error)
    p = point(res.t)
    se = np.sqrt(p * (1 - p) / res.replications)
    assert np.all(np.abs(res.availability - p) <= Z99 * se + 2.0 / res.replications)


RATES = [(0.01, 0.1), (0.02, 0.25), (0.005, 0.05)]


def blocks():
    return [block(f"b{i}", exp_model(lam), exp_model(mu)) for i, (lam, mu) in enumerate(RATES)]


def test_series_with_repair():
    horizon = 200.0
    res = simulate_availability(series(*blocks()), horizon=horizon, replications=20_000, seed=1, grid=9)
    fs = [unit_avail(lam, mu) for lam, mu in RATES]

    def point(t):
        return fs[0](t) * fs[1](t) * fs[2](t)

    check_run(res, point, horizon)
    # The first failure of any block ends the failure-free period: R = exp(-sum(l) T).
    r = np.exp(-sum(lam for lam, _ in RATES) * horizon)
    assert abs(res.reliability - r) <= Z99 * np.sqrt(r * (1 - r) / res.replications)
    # System failures happen at rate sum(l) while every block is up.
    expected = sum(lam for lam, _ in RATES) * integrate.quad(point, 0, horizon)[0]
    assert abs(res.expected_failures - expected) <= Z99 * res.expected_failures_std_error
    # Each block's mean downtime: T - integral of its availability.
    for b, f in zip(res.blocks, fs, strict=True):
        down = horizon - integrate.quad(f, 0, horizon)[0]
        assert abs(b.downtime - down) <= 0.05 * down
    assert abs(sum(b.share_of_system_downtime for b in res.blocks) - 1.0) < 1e-9


def test_parallel_with_repair():
    horizon = 300.0
    res = simulate_availability(parallel(*blocks()), horizon=horizon, replications=40_000, seed=2, grid=7)
    fs = [unit_avail(lam, mu) for lam, mu in RATES]
    check_run(res, lambda t: 1 - (1 - fs[0](t)) * (1 - fs[1](t)) * (1 - fs[2](t)), horizon)


def test_two_of_three_with_repair():
    horizon = 300.0
    res = simulate_availability(parallel(*blocks(), need=2), horizon=horizon, replications=20_000, seed=3, grid=7)
    fs = [unit_avail(lam, mu) for lam, mu in RATES]

    def point(t):
        a, b, c = (f(t) for f in fs)
        return a * b * c + (1 - a) * b * c + a * (1 - b) * c + a * b * (1 - c)

    check_run(res, point, horizon)


def test_steady_state_long_horizon():
    # Long mission: mean availability -> the steady state prod mu/(l+mu) up to the O(1/T) transient.
    horizon = 20_000.0
    res = simulate_availability(series(*blocks()), horizon=horizon, replications=400, seed=4, grid=0)
    fs = [unit_avail(lam, mu) for lam, mu in RATES]
    check_run(res, lambda t: fs[0](t) * fs[1](t) * fs[2](t), horizon)
    steady = np.prod([mu / (lam + mu) for lam, mu in RATES])
    assert abs(res.mean_availability - steady) <= Z99 * res.mean_availability_std_error + 1e-4


# --- Markov chains for shared repair crews ------------------------------------------------


def ctmc(lams, mus, works, crews: int | None, priority=None):
    """Generator of `len(lams)` exponential blocks repaired by `crews` crews (None = as many
    as needed), queue by priority then arrival. States: (in repair, waiting in order)."""
    n = len(lams)
    prio = priority or [0] * n
    states = []
    for k in range(n + 1):
        for down in itertools.permutations(range(n), k):
            states.append(down)
    index = {s: i for i, s in enumerate(states)}
    q = np.zeros((len(states), len(states)))
    cap = n if crews is None else crews

    def order(down):
        # Those in repair keep their places; the waiting ones sorted by priority, then arrival.
        head, tail = list(down[:cap]), list(down[cap:])
        tail.sort(key=lambda b: -prio[b])  # stable: arrival order within a priority
        return tuple(head + tail)

    for s in states:
        i = index[s]
        for b in range(n):
            if b not in s:
                q[i, index[order((*s, b))]] += lams[b]
        for pos, b in enumerate(s[:cap]):
            rest = s[:pos] + s[pos + 1:]
            q[i, index[order(rest)]] += mus[b]
        q[i, i] = -q[i].sum()
    up = np.array([works(set(range(n)) - set(s)) for s in states], dtype=float)
    return q, up, index[()]


def interval_integral(q: np.ndarray, horizon: float) -> np.ndarray:
    """Integral of expm(Q s) over [0, T], from one exponential of the augmented matrix."""
    m = len(q)
    big = np.zeros((2 * m, 2 * m))
    big[:m, :m] = q
    big[:m, m:] = np.eye(m)
    return linalg.expm(big * horizon)[:m, m:]


@pytest.mark.parametrize("crews", [0, 1])
def test_one_of_two_pair_with_crews(crews):
    lam, mu, horizon = 0.01, 0.05, 500.0
    pair = parallel(block("A", exp_model(lam), exp_model(mu)), block("B", exp_model(lam), exp_model(mu)))
    res = simulate_availability(pair, horizon=horizon, replications=20_000, seed=5, grid=6, crews=crews)
    q, up, start = ctmc([lam, lam], [mu, mu], lambda alive: len(alive) >= 1, None if crews == 0 else crews)
    occupancy = interval_integral(q, horizon)[start]
    mean = occupancy @ up / horizon
    assert abs(res.mean_availability - mean) <= Z99 * res.mean_availability_std_error
    for t, a in zip(res.t, res.availability, strict=True):
        p = (linalg.expm(q * t)[start] @ up)
        assert abs(a - p) <= Z99 * np.sqrt(p * (1 - p) / res.replications) + 2.0 / res.replications
    # Reliability over [0, T]: the chain with "both down" made absorbing.
    qa = q.copy()
    qa[up == 0] = 0.0
    r = linalg.expm(qa * horizon)[start] @ up
    assert abs(res.reliability - r) <= Z99 * np.sqrt(r * (1 - r) / res.replications)
    # The two crew policies differ by far more than the noise: the test can tell them apart.
    other = ctmc([lam, lam], [mu, mu], lambda alive: len(alive) >= 1, 1 if crews == 0 else None)
    other_mean = interval_integral(other[0], horizon)[other[2]] @ other[1] / horizon
    assert abs(other_mean - mean) > 10 * res.mean_availability_std_error


@pytest.mark.parametrize("priority", [None, [0.0, 5.0, 1.0]])
def test_one_crew_priority_against_markov_chain(priority):
    # A in series with (B parallel C); one crew serving higher crew_priority first.
    lams, mus = [0.01, 0.03, 0.02], [0.05, 0.04, 0.1]
    names = ["A", "B", "C"]
    nodes = [block(n, exp_model(lams[i]), exp_model(mus[i]),
                   **({} if priority is None else {"crew_priority": priority[i]})) for i, n in enumerate(names)]
    d = {
        "nodes": [{"id": "in", "type": "input"}, *nodes, {"id": "out", "type": "output"}],
        "edges": [{"source": s, "target": t} for s, t in
                  [("in", "A"), ("A", "B"), ("A", "C"), ("B", "out"), ("C", "out")]],
    }
    horizon = 400.0
    res = simulate_availability(d, horizon=horizon, replications=20_000, seed=6, grid=0, crews=1)
    q, up, start = ctmc(lams, mus, lambda alive: 0 in alive and (1 in alive or 2 in alive), 1, priority)
    mean = interval_integral(q, horizon)[start] @ up / horizon
    assert abs(res.mean_availability - mean) <= Z99 * res.mean_availability_std_error


def test_instant_repair_never_stops_a_block():
    d = series(block("A", exp_model(0.1), instant_repair=True), block("B", exp_model(0.01), exp_model(0.1)))
    res = simulate_availability(d, horizon=100.0, replications=5_000, seed=7, grid=0)
    a = res.blocks[0]
    assert a.downtime == 0.0 and a.share_of_system_downtime == 0.0
    # Renewals of A still happen at rate 0.1: expected count 10 per replication.
    assert abs(a.failures - 10.0) <= Z99 * np.sqrt(10.0 / res.replications)
    check_run(res, unit_avail(0.01, 0.1), 100.0)


def test_standby_repaired_and_returned_as_spare():
    # Cold standby of 2 with one repairer: up while at least one unit is not down. States
    # 0, 1, 2 down with rates 0->1 lam, 1->2 lam (the spare is cold), 1->0 mu, 2->1 mu.
    lam, mu, horizon = 0.01, 0.05, 500.0
    node = {"id": "S", "type": "standby", "spares": 1, "cold": True, "model": exp_model(lam), "repair": exp_model(mu)}
    res = simulate_availability(series(node), horizon=horizon, replications=20_000, seed=8, grid=0, crews=1)
    q = np.array([[-lam, lam, 0.0], [mu, -(lam + mu), lam], [0.0, mu, -mu]])
    mean = interval_integral(q, horizon)[0] @ np.array([1.0, 1.0, 0.0]) / horizon
    assert abs(res.mean_availability - mean) <= Z99 * res.mean_availability_std_error
