"""Cheapest design in the library: the closed forms that rank and prune against textbook
formulas (at every time scale), the arrangement an option makes, the exhaustive search by
simulation where no closed form exists, and the greedy heuristic against brute force."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest
from scipy import stats

from bathtub.errors import InputError
from bathtub.rbd import cheapest
from bathtub.rbd.cheapest import cheapest_design
from bathtub.rbd.design_closed_form import ClosedForm
from bathtub.rbd.design_space import apply_option, check_space

SCALES = (1e-3, 1.0, 1e6)


def exp(rate: float) -> dict[str, Any]:
    return {"distribution_id": "exponential", "params": {"failure_rate": rate}}


def weibull(alpha: float, beta: float) -> dict[str, Any]:
    return {"distribution_id": "weibull", "params": {"alpha": alpha, "beta": beta}}


def one_block(node: dict[str, Any], **settings: Any) -> dict[str, Any]:
    return {"nodes": [{"id": "in", "type": "input"}, {"id": "x", **node}, {"id": "out", "type": "output"}],
            "edges": [{"source": "in", "target": "x"}, {"source": "x", "target": "out"}], **settings}


def figures(diagram: dict[str, Any], options: dict[str, Any], *, repairable: bool, time: float) -> list[float]:
    space = check_space(diagram, options, repairable=repairable)
    cf = ClosedForm.build(diagram, space, repairable=repairable, time=time, crews=0)
    choices = np.array(list(itertools.product(*(range(m) for m in space.sizes))))
    return [float(v) for v in cf.figures(space, choices)]


@pytest.mark.parametrize("k", SCALES)
def test_proof_tested_channels_have_the_textbook_pfd_avg(k: float) -> None:
    # Channels failing at lam, found only by proof tests every tau and renewed at once: PFD(s) =
    # 1 - exp(-lam s) in each test interval, so PFDavg(1oo1) = 1 - (1 - e^-x) / x and, tested
    # together, PFDavg(1oo2) = mean of (1 - e^-lam s)^2 = 1 - 2 (1 - e^-x) / x + (1 - e^-2x) / (2x), x = lam tau.
    lam, tau = 2e-5 / k, 8760.0 * k
    d = one_block({"type": "component", "model": exp(lam), "instant_repair": True,
                   "inspection": {"interval": tau}}, safety_function=True)
    opts = {"x": [{"cost": 1.0}, {"cost": 2.0, "units": 2}, {"cost": 3.0, "units": 3, "required": 2}]}
    a1, a12, a23 = figures(d, opts, repairable=True, time=10 * tau)
    x = lam * tau
    g = (1 - math.exp(-x)) / x
    g2 = (1 - math.exp(-2 * x)) / (2 * x)
    g3 = (1 - math.exp(-3 * x)) / (3 * x)
    assert math.isclose(1 - a1, 1 - g, rel_tol=1e-9)
    assert math.isclose(1 - a12, 1 - 2 * g + g2, rel_tol=1e-8)
    # 2oo3 fails when two of three are down: 3 F^2 - 2 F^3 with F = 1 - e^-lam s, averaged.
    pfd23 = 3 * (1 - 2 * g + g2) - 2 * (1 - 3 * g + 3 * g2 - g3)
    assert math.isclose(1 - a23, pfd23, rel_tol=1e-7)


@pytest.mark.parametrize("k", SCALES)
def test_mission_closed_forms_of_standby_and_voting(k: float) -> None:
    lam, t = 1e-3 / k, 700.0 * k
    d = one_block({"type": "component", "model": exp(lam)})
    opts = {"x": [{"cost": 1.0, "spares": 2},  # cold: Poisson(lam t) <= 2
                  {"cost": 1.0, "spares": 1, "dormancy": 0.3},  # warm: e^-lt (1 + (1 - e^-d l t) / d)
                  {"cost": 1.0, "units": 3, "required": 2, "model": weibull(900.0 * k, 2.0)}]}
    cold, warm, vote = figures(d, opts, repairable=False, time=t)
    assert math.isclose(cold, stats.poisson.cdf(2, lam * t), rel_tol=1e-9)
    assert math.isclose(warm, math.exp(-lam * t) * (1 + (1 - math.exp(-0.3 * lam * t)) / 0.3), rel_tol=1e-9)
    r = math.exp(-((t / (900.0 * k)) ** 2))
    assert math.isclose(vote, 3 * r**2 - 2 * r**3, rel_tol=1e-9)


def test_repairable_standby_tends_to_its_birth_death_steady_state() -> None:
    # One running, one cold spare, unlimited repair: pi1 = pi0 lam/mu, pi2 = pi1 lam/(2 mu); down
    # in state 2. Over 10^7 h the start-up transient (about 1/mu long) moves the average < 1e-6.
    lam, mu = 1e-2, 0.1
    d = one_block({"type": "component", "model": exp(lam), "repair": exp(mu)})
    (a,) = figures(d, {"x": [{"cost": 1.0, "spares": 1}]}, repairable=True, time=1e7)
    p = np.array([1.0, lam / mu, lam * lam / (2 * mu * mu)])
    assert abs((1 - a) - p[2] / p.sum()) < 1e-6


def test_an_option_puts_copies_and_a_gate_in_the_block_s_place() -> None:
    d = {"nodes": [{"id": "in", "type": "input"}, {"id": "a", "type": "component", "model": exp(1.0)},
                   {"id": "b", "type": "component", "model": exp(1.0)}, {"id": "out", "type": "output"}],
         "edges": [{"source": "in", "target": "a"}, {"source": "in", "target": "b"},
                   {"source": "a", "target": "out"}, {"source": "b", "target": "out"}],
         "ccf": [{"members": ["a", "b"], "beta": 0.1}]}
    space = check_space(d, {"a": [{"cost": 1.0, "units": 3, "required": 2}]}, repairable=False)
    out = apply_option(d, "a", space.options[0][0])
    ids = [n["id"] for n in out["nodes"]]
    assert ids == ["in", "a#1", "a#2", "a#3", "a", "b", "out"]
    gate = out["nodes"][4]
    assert gate == {"id": "a", "type": "knode", "n": 2, "k": 3}
    edges = {(e["source"], e["target"]) for e in out["edges"]}
    assert edges == {("in", "a#1"), ("in", "a#2"), ("in", "a#3"), ("a#1", "a"), ("a#2", "a"), ("a#3", "a"),
                     ("a", "out"), ("in", "b"), ("b", "out")}
    assert out["ccf"][0]["members"] == ["b", "a#1", "a#2", "a#3"]
    assert d["nodes"][1]["type"] == "component"  # the input is left as it was


def test_without_a_closed_form_every_design_is_simulated() -> None:
    # Weibull lives under repair: no Markov chain. A single unit's long-run availability is
    # MTTF / (MTTF + MTTR) (renewal-reward, any laws); the winner's interval holds it.
    life = weibull(1000.0, 2.0)
    mttf = 1000.0 * math.gamma(1.5)
    d = one_block({"type": "component", "model": life, "repair": exp(1 / 50.0)})
    opts = {"x": [{"name": "as is", "cost": 0.0}, {"name": "better", "cost": 5.0, "model": weibull(3000.0, 2.0)},
                  {"name": "pair", "cost": 9.0, "units": 2}]}
    res = cheapest_design(d, repairable=True, options=opts, target={"figure": "availability", "value": 0.9},
                          horizon=2e5, replications=400, seed=3)
    assert res["method"] == "simulated" and "not exponential" in res["closed_form"]["reason"]
    assert res["space"] == {"designs": 3, "enumerated": 3, "pruned": 0, "simulated": 3}
    win = res["winner"]
    assert [c["name"] for c in win["choices"]] == ["as is"] and win["cost"] == 0.0
    lo, hi = win["interval"]
    assert lo <= mttf / (mttf + 50.0) <= hi
    assert [d["cost"] for d in res["designs"]] == [0.0, 5.0, 9.0]


def test_the_greedy_heuristic_meets_the_target_near_the_brute_force_optimum(monkeypatch: Any) -> None:
    rates = {"a": (1e-3, 0.1), "b": (2e-3, 0.05), "c": (5e-4, 0.02), "d": (1e-3, 0.01)}
    nodes = [{"id": "in", "type": "input"}, {"id": "out", "type": "output"}]
    nodes += [{"id": b, "type": "component", "model": exp(lam), "repair": exp(mu)} for b, (lam, mu) in rates.items()]
    chain = ["in", *rates, "out"]
    d = {"nodes": nodes, "edges": [{"source": s, "target": t} for s, t in itertools.pairwise(chain)]}
    opts = {b: [{"cost": 4.0 * n + 1.0 * (n - k) + i, "units": n, "required": k}
                for n, k in ((1, 1), (2, 1), (3, 2), (3, 1))] for i, b in enumerate(rates)}
    target = {"figure": "availability", "value": 0.998}
    exact = cheapest_design(d, repairable=True, options=opts, target=target, horizon=2e4, replications=200, top=1)
    monkeypatch.setattr(cheapest, "EXACT_BUDGET", 10)
    heur = cheapest_design(d, repairable=True, options=opts, target=target, horizon=2e4, replications=200, top=1)
    assert exact["method"] == "exact" and heur["method"] == "heuristic"
    assert heur["winner"]["closed_form"] >= 0.998
    assert exact["winner"]["cost"] <= heur["winner"]["cost"] <= 1.25 * exact["winner"]["cost"]
    assert heur["space"]["enumerated"] < exact["space"]["enumerated"] == 256


def test_refusals_name_the_field() -> None:
    d = one_block({"type": "component", "model": exp(1e-3), "repair": exp(0.1)})
    ok = {"options": {"x": [{"cost": 1.0}]}, "target": {"figure": "availability", "value": 0.9}, "horizon": 100.0}
    cases = [
        ({"options": {"x": [{"cost": 1.0, "spares": 1, "required": 2, "dormancy": 0.5}]}}, "options.x[0].dormancy"),
        ({"options": {"x": [{"cost": 1.0, "units": 30}]}}, "options.x[0].units"),
        ({"options": {"x": [{"cost": 1.0, "inspection": {"interval": 10.0}, "spares": 1}]}},
         "options.x[0].inspection"),
        ({"options": {"x": [{"cost": 1.0, "colour": "red"}]}}, "options.x[0].colour"),
        ({"options": {"x": []}}, "options.x"),
        ({"target": {"figure": "availability", "value": 1.0}}, "target.value"),
        ({"top": 0}, "top"),
    ]
    for change, field in cases:
        with pytest.raises(InputError) as e:
            cheapest_design(d, repairable=True, **{**ok, **change}, check_only=True)
        assert e.value.field.startswith(field), (change, e.value)


def test_an_unreachable_target_says_so_with_the_best_design_available() -> None:
    # One unit or two in parallel, each available mu / (lam + mu) = 10/11 in the long run: the
    # pair's 1 - (1/11)^2 = 0.99174 is the best there is, below the 0.999 asked.
    d = one_block({"type": "component", "model": exp(1e-2), "repair": exp(0.1)})
    opts = {"x": [{"cost": 1.0}, {"cost": 2.0, "units": 2}]}
    res = cheapest_design(d, repairable=True, options=opts, target={"figure": "availability", "value": 0.999},
                          horizon=1e7, replications=100)
    assert res["winner"] is None and res["designs"] == [] and "no design" in res["note"]
    best = res["best_available"]
    assert best["cost"] == 2.0 and best["basis"] == "closed form"
    assert abs(best["value"] - (1 - (1 / 11) ** 2)) < 1e-6
    assert res["space"]["simulated"] == 0


def test_options_reach_blocks_inside_subsystems() -> None:
    # The same two blocks in series, flat or with the second inside a subsystem: the same figures.
    a = {"id": "a", "type": "component", "model": exp(1e-3), "repair": exp(0.05)}
    x = {"id": "x", "type": "component", "model": exp(2e-3), "repair": exp(0.02)}
    flat = {"nodes": [{"id": "in", "type": "input"}, a, x, {"id": "out", "type": "output"}],
            "edges": [{"source": "in", "target": "a"}, {"source": "a", "target": "x"},
                      {"source": "x", "target": "out"}]}
    inner = one_block({k: v for k, v in x.items() if k != "id"})
    nested = {"nodes": [{"id": "in", "type": "input"}, a, {"id": "s", "type": "subsystem", "diagram": inner},
                        {"id": "out", "type": "output"}],
              "edges": [{"source": "in", "target": "a"}, {"source": "a", "target": "s"},
                        {"source": "s", "target": "out"}]}
    opts = [{"cost": 1.0}, {"cost": 2.0, "units": 2}, {"cost": 2.0, "spares": 1, "dormancy": 1.0}]
    f = figures(flat, {"x": opts}, repairable=True, time=5e3)
    g = figures(nested, {"s/x": opts}, repairable=True, time=5e3)
    assert np.allclose(f, g, rtol=0, atol=1e-12) and f[1] > f[0]
    # Active 1-of-2 and hot standby of two are the same system.
    assert math.isclose(f[1], f[2], rel_tol=1e-12)
    res = cheapest_design(nested, repairable=True, options={"s/x": opts}, horizon=5e3, replications=300,
                          target={"figure": "availability", "value": f[0] + 1e-4})
    assert res["winner"]["choices"][0]["block"] == "s/x" and res["winner"]["cost"] == 2.0
    lo, hi = res["winner"]["interval"]
    assert lo <= res["winner"]["closed_form"] <= hi
