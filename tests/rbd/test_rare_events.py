"""Failure biasing (steady-state unavailability of highly available Markovian diagrams)
against the exact Markov chain: the generator matrix built here from the diagram's rules
(units fail whether or not the system is up; a crew repairs the waiting unit of highest
crew_priority, first come among equals; unlimited crews repair every failed unit at once),
its stationary law from the null space of Q^T (scipy) and, independently, from the limit
of expm(Q t). Unavailability 1e-6 to 1e-8 on 1-of-2 and 2-of-3 systems, with and without
one crew: the exact value inside the run's 95% interval at a fixed seed, and the relative
half-width under 10%. Also: the event simulator agrees where plain simulation can see
failures; same seed, same numbers on any thread count; results transform exactly with the
time unit; refusals name `method` (or the field) and the rule."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from scipy import linalg

from bathtub.engine import simulate_availability
from bathtub.errors import InputError
from bathtub.rbd import analyze
from bathtub.rbd.rare import simulate_failure_biasing
from tests.engine.engine_diagrams import block, exp_model, parallel

Down = Callable[[frozenset[int]], bool]


def generator(lam: Sequence[float], mu: Sequence[float], crews: int, down: Down,
              priority: Sequence[float] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Generator of the chain whose state is (units in repair, waiting units in queue
    order), and the mask of states where the system is down."""
    n = len(lam)
    prio = priority or [0.0] * n
    start: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())
    index = {start: 0}
    todo = [start]
    moves: list[tuple[int, Any, float]] = []
    while todo:
        s = todo.pop()
        repairing, waiting = s
        out = []
        failed = set(repairing) | set(waiting)
        for u in range(n):
            if u in failed:
                continue
            if crews == 0 or len(repairing) < crews:
                t = (tuple(sorted((*repairing, u))), waiting)
            else:
                # behind every waiting unit of at least its priority
                k = sum(1 for w in waiting if prio[w] >= prio[u])
                t = (repairing, (*waiting[:k], u, *waiting[k:]))
            out.append((t, lam[u]))
        for u in repairing:
            rest = tuple(x for x in repairing if x != u)
            t = (tuple(sorted((*rest, waiting[0]))), waiting[1:]) if waiting else (rest, ())
            out.append((t, mu[u]))
        for t, rate in out:
            if t not in index:
                index[t] = len(index)
                todo.append(t)
            moves.append((index[s], t, rate))
    q = np.zeros((len(index), len(index)))
    for i, t, rate in moves:
        q[i, index[t]] += rate
    q -= np.diag(q.sum(axis=1))
    mask = np.zeros(len(index), dtype=bool)
    for (repairing, waiting), i in index.items():
        mask[i] = down(frozenset(repairing) | frozenset(waiting))
    return q, mask


def stationary(q: np.ndarray) -> np.ndarray:
    ns = linalg.null_space(q.T)
    assert ns.shape[1] == 1
    pi = ns[:, 0] / ns[:, 0].sum()
    assert np.allclose(pi @ q, 0.0, atol=1e-15)
    return pi


def exact_unavailability(lam: Sequence[float], mu: Sequence[float], crews: int, down: Down,
                         priority: Sequence[float] | None = None) -> float:
    q, mask = generator(lam, mu, crews, down, priority)
    u = float(stationary(q)[mask].sum())
    # The same from the transient solution: P(t) = expm(Q t) from all-up at a time long past
    # every repair (here 200 mean repairs), where it has forgotten its start.
    p = linalg.expm(q * 200.0 / min(mu))[0]
    assert abs(float(p[mask].sum()) - u) <= 1e-6 * u
    return u


def diagram(lam: Sequence[float], mu: Sequence[float], need: int | None = None,
            priority: Sequence[float] | None = None) -> dict[str, Any]:
    blocks = [block(f"u{i}", exp_model(a), exp_model(b), **({} if priority is None else {"crew_priority": priority[i]}))
              for i, (a, b) in enumerate(zip(lam, mu))]
    return parallel(*blocks, need=need)


def k_of_n_down(k: int, n: int) -> Down:
    return lambda failed: n - len(failed) < k


CASES = {
    # name: (lam, mu, need k of n, crews, priorities)
    "1oo2_1e-6": ([1e-3, 1e-3], [1.0, 1.0], 1, 0, None),
    "1oo2_1e-6_one_crew": ([1e-3, 2e-3], [1.0, 2.0], 1, 1, None),
    "1oo2_1e-8": ([1e-4, 2e-4], [1.0, 2.0], 1, 0, None),
    "1oo2_1e-8_one_crew": ([1e-4, 1e-4], [1.0, 1.0], 1, 1, None),
    "2oo3_1e-6": ([5e-4, 4e-4, 6e-4], [1.0, 0.8, 1.2], 2, 0, None),
    "2oo3_1e-6_one_crew": ([3e-4, 4e-4, 2e-4], [1.0, 0.5, 2.0], 2, 1, None),
    "2oo3_1e-8_one_crew": ([5e-5, 4e-5, 6e-5], [1.0, 0.8, 1.2], 2, 1, None),
    "2oo3_one_crew_priorities": ([3e-4, 4e-4, 2e-4], [1.0, 0.5, 2.0], 2, 1, [0.0, 2.0, 1.0]),
}


@pytest.mark.parametrize("name", CASES)
def test_exact_markov_value_inside_the_interval(name: str) -> None:
    lam, mu, k, crews, prio = CASES[name]
    n = len(lam)
    exact = exact_unavailability(lam, mu, crews, k_of_n_down(k, n), prio)
    assert 1e-9 < exact < 1e-5
    r = simulate_failure_biasing(diagram(lam, mu, None if k == 1 else k, prio), crews=crews, replications=20_000,
                                 seed=2026)
    lo, hi = r.unavailability_interval
    assert lo <= exact <= hi, (name, exact, r.unavailability, lo, hi)
    assert r.relative_half_width is not None and r.relative_half_width < 0.10, r
    assert r.availability == 1.0 - r.unavailability
    assert r.cycles == 20_000 and r.cycles_reaching_failure > 1000


def test_failure_frequency_mtbf_and_down_time_of_a_pair() -> None:
    """1-of-2 identical units, one crew: the system fails from one-down at rate lam and
    stays down 1/mu (the repair under way, memoryless), so frequency = pi_1 lam."""
    lam, mu = 1e-3, 1.0
    rho = lam / mu
    pi1 = 2 * rho / (1 + 2 * rho + 2 * rho**2)
    r = simulate_failure_biasing(diagram([lam, lam], [mu, mu]), crews=1, replications=20_000, seed=3)
    lo, hi = r.failure_frequency_interval
    assert lo <= pi1 * lam <= hi
    assert r.mtbf == pytest.approx(1 / r.failure_frequency)
    assert r.mean_down_time == pytest.approx(1 / mu, rel=1e-12)
    # Mean return time to all-up: 1 / (pi_0 q_0), q_0 = 2 lam the rate out of it.
    cycle = (1 + 2 * rho + 2 * rho**2) / (2 * lam)
    assert abs(r.mean_cycle - cycle) <= 1.96 * r.mean_cycle_std_error, (r.mean_cycle, cycle)


def test_warm_standby_matches_its_chain() -> None:
    """One running unit and two warm spares (dormancy 0.3), one crew: a birth-death chain on
    the units down (failures at lam times running + 0.3 times idle), down when all are."""
    lam, mu = 1e-2, 1.0
    q = np.zeros((4, 4))
    for d in range(3):
        up = 3 - d
        q[d, d + 1] = lam * (1 + 0.3 * (up - 1))
        q[d + 1, d] = mu
    q -= np.diag(q.sum(axis=1))
    exact = float(stationary(q)[3])
    d = parallel({"id": "s", "type": "standby", "k": 1, "spares": 2, "dormancy": 0.3, "model": exp_model(lam),
                  "repair": exp_model(mu)})
    r = simulate_failure_biasing(d, crews=1, replications=20_000, seed=5)
    lo, hi = r.unavailability_interval
    assert 1e-7 < exact < 1e-5 and lo <= exact <= hi, (exact, lo, hi)


def test_agrees_with_the_event_simulator_where_plain_runs_see_failures() -> None:
    """At unavailability ~1e-3 the plain event simulator (mean availability over a horizon of
    2000 mean repairs from all-up: a transient bias of ~1e-4 relative) and failure biasing
    estimate the same figure, with priorities and one crew: the same rules in both."""
    lam, mu, prio = [2e-2, 3e-2, 1e-2], [1.0, 0.5, 2.0], [0.0, 2.0, 1.0]
    exact = exact_unavailability(lam, mu, 1, k_of_n_down(2, 3), prio)
    d = diagram(lam, mu, 2, prio)
    plain = simulate_availability(d, horizon=4000.0, replications=400, seed=9, grid=0, crews=1)
    lo, hi = plain.mean_availability_interval
    assert lo <= 1 - exact <= hi, (1 - exact, lo, hi)
    r = simulate_failure_biasing(d, crews=1, replications=20_000, seed=9)
    lo, hi = r.unavailability_interval
    assert lo <= exact <= hi


def test_same_seed_same_numbers_on_any_thread_count() -> None:
    d = diagram([1e-4, 2e-4, 3e-4], [1.0, 2.0, 1.5], 2)
    a = simulate_failure_biasing(d, crews=1, replications=5000, seed=41, threads=1)
    b = simulate_failure_biasing(d, crews=1, replications=5000, seed=41, threads=2)
    c = simulate_failure_biasing(d, crews=1, replications=5000, seed=42, threads=2)
    assert a == b
    assert c.unavailability != a.unavailability


@pytest.mark.parametrize("scale", [1e-3, 1e6])
def test_time_unit_scales_exactly(scale: float) -> None:
    """Times multiplied by `scale` (rates divided by it): the same chain, so the same
    unavailability; frequencies divide and times multiply by it."""
    lam, mu = [5e-4, 4e-4, 6e-4], [1.0, 0.8, 1.2]
    base = simulate_failure_biasing(diagram(lam, mu, 2), crews=1, replications=3000, seed=8)
    r = simulate_failure_biasing(diagram([x / scale for x in lam], [x / scale for x in mu], 2), crews=1,
                                 replications=3000, seed=8)
    assert r.unavailability == pytest.approx(base.unavailability, rel=1e-9)
    assert r.relative_half_width == pytest.approx(base.relative_half_width, rel=1e-9)
    assert r.failure_frequency == pytest.approx(base.failure_frequency / scale, rel=1e-9)
    assert r.mtbf == pytest.approx(base.mtbf * scale, rel=1e-9)
    assert r.mean_cycle == pytest.approx(base.mean_cycle * scale, rel=1e-9)


def test_precision_mode_reaches_its_target() -> None:
    d = diagram([1e-4, 1e-4], [1.0, 1.0])
    r = simulate_failure_biasing(d, crews=0, target_half_width=0.01, seed=1)
    assert r.target_reached is True and r.relative_half_width <= 0.01 and r.cycles > 1000
    lo, hi = r.unavailability_interval
    assert lo <= (1e-4 / (1 + 1e-4)) ** 2 <= hi


def repairable(d: dict[str, Any]) -> dict[str, Any]:
    return {"name": "rare", "unit": "hours", "repairable": True, **d}


def test_analyze_runs_it_as_a_method() -> None:
    lam, mu = [1e-3, 1e-3], [1.0, 1.0]
    out = analyze(repairable(diagram(lam, mu)), method="failure_biasing", replications=5000, seed=4)
    assert out["method"] == "failure_biasing" and out["quote"]["replications"] == 5000
    res = out["results"]
    lo, hi = res["unavailability_interval"]
    assert lo <= 1e-6 / (1.001**2) <= hi
    assert out["curve"] == {} and out["precision"]["replications"] == 5000


WEIBULL = {"distribution_id": "weibull", "params": [{"name": "alpha", "value": 1000.0}, {"name": "beta", "value": 2.0}]}


@pytest.mark.parametrize(("change", "field", "words"), [
    (lambda d: d["nodes"][1].update(model=WEIBULL), "method", "node \"u0\": the life must be exponential"),
    (lambda d: d["nodes"][2].update(repair=WEIBULL), "method", "node \"u1\": the repair must be exponential"),
    (lambda d: (d["nodes"][1].pop("repair"), d["nodes"][1].update(instant_repair=True)), "method",
     "instant repair"),
    (lambda d: d.update(ccf=[{"id": "c", "members": ["u0", "u1"], "beta": 0.1}]), "method", "common-cause"),
    (lambda d: d["nodes"][1].update(preventive={"interval": 100.0}), "method", "planned maintenance"),
    (lambda d: d.update(repairable=False), "method", "not repairable"),
    (lambda d: None, "horizon", "no horizon"),
])
def test_refusals_name_the_field_and_the_rule(change: Callable[[dict[str, Any]], Any], field: str,
                                              words: str) -> None:
    d = repairable(diagram([1e-3, 1e-3], [1.0, 1.0]))
    change(d)
    if d["repairable"] is False:
        for n in d["nodes"]:
            n.pop("repair", None)
    extra = {"horizon": 100.0} if field == "horizon" else {}
    with pytest.raises(InputError) as e:
        analyze(d, method="failure_biasing", replications=100, **extra)
    assert e.value.field == field and words in e.value.rule, e.value


def test_library_refuses_bad_options() -> None:
    d = diagram([1e-3, 1e-3], [1.0, 1.0])
    for kw, field in [({"replications": 1}, "replications"), ({"target_half_width": 1.5}, "target_half_width"),
                      ({"replications": 10, "target_half_width": 0.1}, "replications"), ({"crews": -1}, "crews")]:
        with pytest.raises(InputError) as e:
            simulate_failure_biasing(d, **kw)
        assert e.value.field == field

