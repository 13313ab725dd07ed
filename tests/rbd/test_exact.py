"""Closed-form reliability against textbook formulas, brute-force state enumeration and the
engine's own Monte Carlo (fixed seed, within the run's 95% interval)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, linalg

from bathtub import engine, rbd
from bathtub.rbd import exact
from tests.rbd.helpers import block, bridge, brute_force, diagram, exp_model, series, sf, weibull_model


def resolved(d):
    return rbd.engine_form(rbd.check_diagram(d), {}, {})


def test_series_of_exponentials_is_exponential_of_summed_rates() -> None:
    d = resolved(series(exp_model(0.001), exp_model(0.002), exp_model(0.0005)))
    t = np.array([0.0, 10.0, 250.0, 1000.0])
    np.testing.assert_allclose(exact.reliability(d, t), np.exp(-0.0035 * t), rtol=1e-13)
    ex = exact.structure(d)
    assert ex.exact and ex.formula is not None
    assert exact.mttf(ex.formula) == pytest.approx(1 / 0.0035, rel=1e-8)


def test_parallel_pair_mttf_textbook() -> None:
    # 1/l1 + 1/l2 - 1/(l1 + l2) for two active-redundant exponentials.
    l1, l2 = 0.01, 0.03
    d = resolved(diagram([block("a", exp_model(l1)), block("b", exp_model(l2))],
                         [("in", "a"), ("in", "b"), ("a", "out"), ("b", "out")]))
    ex = exact.structure(d)
    assert ex.exact and ex.formula is not None
    assert exact.mttf(ex.formula) == pytest.approx(1 / l1 + 1 / l2 - 1 / (l1 + l2), rel=1e-8)
    t = 40.0
    assert exact.reliability(d, [t])[0] == pytest.approx(1 - (1 - np.exp(-l1 * t)) * (1 - np.exp(-l2 * t)), rel=1e-13)


def test_n_unit_series_and_parallel_blocks() -> None:
    w = weibull_model(1000.0, 1.7)
    d = resolved(diagram([block("s", w, "series", n=3), block("p", w, "parallel", n=4)],
                         [("in", "s"), ("s", "p"), ("p", "out")]))
    t = np.array([100.0, 700.0])
    r = np.exp(-((t / 1000.0) ** 1.7))
    np.testing.assert_allclose(exact.reliability(d, t), r**3 * (1 - (1 - r) ** 4), rtol=1e-12)


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_k_of_4_mixed_blocks_against_brute_force(k: int) -> None:
    models = [exp_model(0.002), weibull_model(600.0, 2.5), exp_model(0.0007), weibull_model(900.0, 0.8)]
    ids = ["a", "b", "c", "d"]
    blocks = [block(i, m) for i, m in zip(ids, models)] + [{"id": "g", "type": "knode", "n": k, "k": 4}]
    edges = [("in", i) for i in ids] + [(i, "g") for i in ids] + [("g", "out")]
    raw = diagram(blocks, edges)
    d = resolved(raw)
    for t in (50.0, 400.0, 1500.0):
        p = {i: sf(m, t) for i, m in zip(ids, models)}
        assert exact.reliability(d, [t])[0] == pytest.approx(brute_force(raw, p), rel=1e-12, abs=1e-15)


def test_nested_stages_with_shared_gate_against_brute_force() -> None:
    # Stages: 2-of-3, then a 1-of-2, then one block: the gates feed several blocks each.
    st = [
        {"label": "A", "k_of_n": 2, "components": [
            {"label": f"a{i}", "distribution": "exponential", "params": [{"name": "failure_rate", "value": r}]}
            for i, r in enumerate((0.001, 0.002, 0.003))]},
        {"label": "B", "components": [
            {"label": f"b{i}", "distribution": "weibull",
             "params": [{"name": "alpha", "value": a}, {"name": "beta", "value": 1.5}]}
            for i, a in enumerate((800.0, 1200.0))]},
        {"label": "C", "components": [{"label": "c", "distribution": "exponential",
                                       "params": [{"name": "failure_rate", "value": 0.0001}]}]},
    ]
    raw = {"name": "stages", **rbd.stages_to_diagram(st)}
    d = resolved(raw)
    assert exact.structure(d).exact
    t = 300.0
    models = {n["id"]: n["model"] for n in raw["nodes"] if n["type"] == "component"}
    p = {i: sf(m, t) for i, m in models.items()}
    assert exact.reliability(d, [t])[0] == pytest.approx(brute_force(raw, p), rel=1e-12)


def test_bridge_is_exact_by_pivoting_and_matches_enumeration_and_simulation() -> None:
    models = [exp_model(r) for r in (0.001, 0.002, 0.0015, 0.001, 0.003)]
    raw = bridge(models)
    d = resolved(raw)
    ex = exact.structure(d)
    assert ex.exact and "pivotal decomposition" in ex.reason
    for t in (10.0, 400.0, 3000.0):
        p = {i: sf(m, t) for i, m in zip("abcde", models)}
        assert exact.reliability(d, [t])[0] == pytest.approx(brute_force(raw, p), rel=1e-12)
    opts = rbd.check_options(False, {"mission_time": 400.0, "replications": 40_000, "seed": 3,
                                     "method": "simulation"})
    assert rbd.plan(d, False, opts)["method"] == "simulation"
    out = rbd.simulate(d, False, opts)
    lo, hi = out["results"]["reliability_interval"]
    assert lo <= exact.reliability(d, [400.0])[0] <= hi


def test_random_diagrams_reduce_exactly_as_enumeration_says() -> None:
    # Random DAGs of up to 9 blocks and a k-of-n gate: every exact answer equals brute force.
    rng = np.random.default_rng(2024)
    exact_count = 0
    for _ in range(150):
        m = int(rng.integers(2, 10))
        ids = [f"x{i}" for i in range(m)]
        order = ["in", *ids, "g", "out"]
        edges: set[tuple[str, str]] = set()
        for j in range(1, len(order) - 1):  # every node fed from before and feeding after
            edges.add((order[int(rng.integers(0, j))], order[j]))
        for j in range(1, len(order) - 1):
            edges.add((order[j], order[int(rng.integers(j + 1, len(order)))]))
        for _ in range(int(rng.integers(0, m))):
            a, b = sorted(rng.choice(len(order), 2, replace=False))
            if not (order[a] == "in" and order[b] == "out"):
                edges.add((order[a], order[b]))
        feeding = sum(1 for _, b in edges if b == "g")
        gate = {"id": "g", "type": "knode", "n": int(rng.integers(1, feeding + 1))}
        rates = rng.uniform(0.1, 2.0, m)
        raw = diagram([block(i, exp_model(float(r))) for i, r in zip(ids, rates)] + [gate], sorted(edges))
        d = resolved(raw)
        ex = exact.structure(d)
        if not ex.exact:
            continue
        exact_count += 1
        p = {i: float(np.exp(-r)) for i, r in zip(ids, rates)}
        assert exact.reliability(d, [1.0])[0] == pytest.approx(brute_force(raw, p), rel=1e-11, abs=1e-14), raw
    assert exact_count >= 120


def test_too_many_pivots_falls_back_to_simulation() -> None:
    # Six bridges in series need more than MAX_PIVOTS nested conditionings.
    blocks, edges, prev = [], [], "in"
    for k in range(6):
        a, b, c, dd, e = (f"{x}{k}" for x in "abcde")
        blocks += [block(x, exp_model(0.001)) for x in (a, b, c, dd, e)]
        edges += [(prev, a), (prev, c), (a, b), (c, dd), (a, e), (e, dd)]
        j = {"id": f"j{k}", "type": "knode", "n": 1}
        blocks.append(j)
        edges += [(b, j["id"]), (dd, j["id"])]
        prev = j["id"]
    edges.append((prev, "out"))
    d = resolved(diagram(blocks, edges))
    ex = exact.structure(d)
    assert not ex.exact and "conditioning on 8 blocks" in ex.reason
    opts = rbd.check_options(False, {"mission_time": 100.0})
    assert rbd.plan(d, False, opts)["method"] == "simulation"


def test_standby_is_simulated_not_closed_form() -> None:
    raw = diagram([block("s", exp_model(0.01), "standby", spares=1, cold=True)], [("in", "s"), ("s", "out")])
    d = resolved(raw)
    assert not exact.structure(d).exact
    # Cold standby, perfect switching: R(t) = exp(-lt)(1 + lt) (Erlang-2 survival).
    opts = rbd.check_options(False, {"mission_time": 100.0, "replications": 40_000, "seed": 5})
    out = rbd.simulate(d, False, opts)
    lo, hi = out["results"]["reliability_interval"]
    assert lo <= np.exp(-1.0) * 2.0 <= hi


def test_closed_form_agrees_with_the_engine_simulation() -> None:
    w = weibull_model(500.0, 2.0)
    raw = diagram([block("a", w), block("b", exp_model(0.002)), block("c", w, "parallel", n=2)],
                  [("in", "a"), ("in", "b"), ("a", "c"), ("b", "c"), ("c", "out")])
    d = resolved(raw)
    opts = rbd.check_options(False, {"mission_time": 300.0, "replications": 50_000, "seed": 11, "grid": 11})
    closed = rbd.closed_form(d, opts)
    sim = engine.simulate_mission(d, mission_time=300.0, replications=50_000, seed=11, grid=11)
    inside = (sim.lower - 1e-12 <= np.asarray(closed["curve"]["reliability"])) & (
        np.asarray(closed["curve"]["reliability"]) <= sim.upper + 1e-12)
    assert inside.mean() >= 0.8
    lo, hi = 1 - sim.probability_of_failure_interval[1], 1 - sim.probability_of_failure_interval[0]
    assert lo <= closed["results"]["reliability"] <= hi
    # MTTF: the simulation's mean of system lives, within 3 standard errors.
    assert abs(closed["results"]["mttf"] - sim.mttf) < 3 * sim.mttf_std_error


def test_subsystem_is_exact_when_its_inner_diagram_is() -> None:
    inner = rbd.check_diagram(series(exp_model(0.001), exp_model(0.002)))
    outer = rbd.check_diagram(diagram([{"id": "s", "type": "subsystem", "subsystem_rbd_id": "rbd_inner"},
                                       block("x", exp_model(0.003))],
                                      [("in", "s"), ("in", "x"), ("s", "out"), ("x", "out")]))
    d = rbd.engine_form(outer, {}, {"rbd_inner": inner})
    t = 100.0
    expected = 1 - (1 - np.exp(-0.003 * t)) * (1 - np.exp(-(0.001 + 0.002) * t))
    assert exact.reliability(d, [t])[0] == pytest.approx(expected, rel=1e-13)


def test_large_stage_chain_reduces_and_its_mttf_matches_quadrature() -> None:
    # 300 stages of 2-of-3 (1200 nodes): R = (3 e^{-2lt} - 2 e^{-3lt})^300; MTTF by scipy's quad.
    lam, stages = 0.001, 300
    comp = {"distribution": "exponential", "params": [{"name": "failure_rate", "value": lam}]}
    st = [{"label": f"S{i}", "k_of_n": 2, "components": [{"label": f"c{i}-{j}", **comp} for j in range(3)]}
          for i in range(stages)]
    d = resolved({"name": "long", **rbd.stages_to_diagram(st)})
    ex = exact.structure(d)
    assert ex.exact and ex.formula is not None

    def r(t: float) -> float:
        return (3 * np.exp(-2 * lam * t) - 2 * np.exp(-3 * lam * t)) ** stages

    assert exact.reliability(d, [10.0])[0] == pytest.approx(r(10.0), rel=1e-12)
    reference = integrate.quad(r, 0, 50, limit=200)[0] + integrate.quad(r, 50, np.inf, limit=200)[0]
    assert exact.mttf(ex.formula) == pytest.approx(reference, rel=1e-8)


def test_one_repair_crew_against_the_markov_chain() -> None:
    # Two active-redundant exponential units, one crew: a birth-death chain on the number down,
    # rates 2l (0->1), l (1->2), mu (1->0, 2->1). Mean availability over [0, T] from the exact
    # transient: the integral of exp(Qt) by the augmented-matrix exponential (Van Loan).
    lam, mu, horizon = 0.02, 0.05, 300.0
    rep = {"distribution_id": "exponential", "params": [{"name": "failure_rate", "value": mu}]}
    raw = diagram([block("a", exp_model(lam), repair=rep), block("b", exp_model(lam), repair=rep)],
                  [("in", "a"), ("in", "b"), ("a", "out"), ("b", "out")], repairable=True)
    d = resolved(raw)
    q = np.array([[-2 * lam, 2 * lam, 0.0], [mu, -(lam + mu), lam], [0.0, mu, -mu]])
    aug = np.zeros((6, 6))
    aug[:3, :3] = q
    aug[:3, 3:] = np.eye(3)
    integral = linalg.expm(aug * horizon)[:3, 3:]  # = int_0^T exp(Qs) ds
    mean_up = (integral[0, 0] + integral[0, 1]) / horizon
    opts = rbd.check_options(True, {"horizon": horizon, "replications": 20_000, "seed": 9})
    out = rbd.simulate(d, True, opts, crews=1)
    lo, hi = out["results"]["mean_availability_interval"]
    assert lo <= mean_up <= hi
    # With unlimited crews the same system is two independent units: a different, higher figure.
    free = rbd.simulate(d, True, opts, crews=0)["results"]["mean_availability"]
    assert free > hi


def test_analyze_without_a_server_picks_closed_form_or_simulation() -> None:
    pair = diagram([block("a", exp_model(0.01)), block("b", exp_model(0.01))],
                   [("in", "a"), ("in", "b"), ("a", "out"), ("b", "out")])
    out = rbd.analyze(pair, mission_time=50.0)
    assert out["method"] == "closed_form" and out["quote"] is None
    assert out["results"]["reliability"] == pytest.approx(1 - (1 - np.exp(-0.5)) ** 2, rel=1e-14)
    sim = rbd.analyze(pair, mission_time=50.0, method="simulation", replications=20_000, seed=4)
    lo, hi = sim["results"]["reliability_interval"]
    assert sim["method"] == "simulation" and lo <= out["results"]["reliability"] <= hi
