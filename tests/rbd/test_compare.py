"""Two analysis runs compared figure by figure (`bathtub.rbd.compare_runs`): `same` for two
seeds of one engine, `changed` for a deliberately changed input, the false-alarm rate of the
`same` verdict over many seed pairs, and figures without a standard error never given one."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from scipy import integrate, stats
from statsmodels.stats.multitest import multipletests

from bathtub import rbd
from bathtub.errors import InputError
from bathtub.rbd.compare import holm, input_differences
from tests.rbd.helpers import diagram, exp_model

MTTF, HORIZON = 1000.0, 10_000.0


def plant(mttr: float = 10.0) -> dict[str, Any]:
    """The benchmark plant (bench/engine/plant.py): two parallel trains of 5 exponential blocks in
    series, MTTF 1000 h, every block's MTTR `mttr`, repairs start at once."""
    blocks, edges = [], []
    for train in "ab":
        prev = "in"
        for i in range(5):
            nid = f"{train}{i}"
            blocks.append({"id": nid, "type": "component", "model": {"distribution_id": "exponential", "mean": MTTF},
                           "repair": {"distribution_id": "exponential", "mean": mttr}})
            edges.append((prev, nid))
            prev = nid
        edges.append((prev, "out"))
    return diagram(blocks, edges, name="plant", unit="h", repairable=True)


def plant_exact(mttr: float) -> float:
    """Interval availability over [0, HORIZON] in closed form: each block an alternating renewal
    process from new, a(t) = mu/(lam+mu) + lam/(lam+mu) exp(-(lam+mu) t), blocks independent."""
    lam, mu = 1.0 / MTTF, 1.0 / mttr

    def point(t: float) -> float:
        a = mu / (lam + mu) + lam / (lam + mu) * np.exp(-(lam + mu) * t)
        return float(1.0 - (1.0 - a**5) ** 2)

    return integrate.quad(point, 0.0, HORIZON, limit=200)[0] / HORIZON


def verdicts(comparison: dict[str, Any]) -> dict[str, str]:
    return {f["figure"]: f["verdict"] for f in comparison["figures"]}


def test_two_seeds_of_one_engine_are_the_same() -> None:
    a = rbd.analyze(plant(), horizon=HORIZON, replications=10_000, seed=11)
    b = rbd.analyze(plant(), horizon=HORIZON, replications=10_000, seed=12)
    c = rbd.compare_runs(a, b)
    assert c["verdict"] == "same" and c["changed"] == 0 and c["kind"] == "availability"
    assert c["correction"] == "holm" and c["family_wise_error"] == pytest.approx(0.05)
    v = verdicts(c)
    assert v["mean_availability"] == v["expected_failures"] == v["reliability"] == "same"
    # the three system figures whose noise the record carries, and each block's share of the
    # system's downtime (the record carries its standard error since shares have intervals)
    shares = [f for f in c["figures"] if f["figure"].endswith(".share_of_system_downtime")]
    assert len(shares) == len(a["results"]["blocks"]) and all(f["verdict"] == "same" for f in shares)
    assert c["compared"] == 3 + len(shares)
    row = next(f for f in c["figures"] if f["figure"] == "mean_availability")
    se = np.hypot(a["results"]["mean_availability_std_error"], b["results"]["mean_availability_std_error"])
    assert row["std_error"] == pytest.approx(se) and row["difference"] == pytest.approx(
        b["results"]["mean_availability"] - a["results"]["mean_availability"])
    assert row["p_value"] == pytest.approx(2 * stats.norm.sf(abs(row["difference"]) / se))


def test_a_changed_mttr_is_changed() -> None:
    """Every block's MTTR 10 -> 10.5 h. The closed form puts the interval availability at
    0.997648 vs 0.997415: a difference of 2.33e-4. At 10,000 replications each run's standard
    error of the mean availability is about 1.6e-5 (1.58e-5 and 1.72e-5 at these seeds), so the
    difference's is about 2.3e-5 and the expected z is about 10. Holm over the 3 figures compared
    rejects the smallest p-value below 0.05 / 3, i.e. |z| > 2.39: the power is Phi(10 - 2.39),
    above 1 - 1e-13. The test asserts that arithmetic from the runs' own standard errors too."""
    a = rbd.analyze(plant(10.0), horizon=HORIZON, replications=10_000, seed=11)
    b = rbd.analyze(plant(10.5), horizon=HORIZON, replications=10_000, seed=12)
    delta = plant_exact(10.5) - plant_exact(10.0)
    se = np.hypot(a["results"]["mean_availability_std_error"], b["results"]["mean_availability_std_error"])
    z_crit = stats.norm.isf(0.05 / 3 / 2)
    assert stats.norm.cdf(abs(delta) / se - z_crit) > 1 - 1e-9  # power of the test at this size
    c = rbd.compare_runs(a, b)
    assert c["verdict"] == "changed" and verdicts(c)["mean_availability"] == "changed"
    row = next(f for f in c["figures"] if f["figure"] == "mean_availability")
    assert abs(row["difference"] - delta) < 4 * se  # the change found is the closed form's


def test_inputs_that_differ_are_named() -> None:
    a = {"inputs": {"diagram": plant(10.0), "options": {"seed": 1, "horizon": HORIZON}}}
    b = {"inputs": {"diagram": plant(10.5), "options": {"seed": 2, "horizon": HORIZON}}}
    differ = input_differences(a["inputs"], b["inputs"])
    assert "diagram.nodes.a0.repair.mean" in differ and "options.seed" in differ
    assert len([p for p in differ if p.startswith("diagram.nodes.")]) == 10
    runs = [rbd.analyze(plant(m), horizon=100.0, replications=100, seed=s) for m, s in ((10.0, 1), (10.5, 2))]
    c = rbd.compare_runs({**runs[0], **a}, {**runs[1], **b})
    assert c["inputs"]["settings_only"] is False and "not from the engine" in c["inputs"]["note"]
    same_diagram = rbd.compare_runs({**runs[0], **a}, {**runs[0], "inputs": {**a["inputs"], "options": {
        "seed": 2, "horizon": HORIZON}}})
    assert same_diagram["inputs"]["settings_only"] is True and same_diagram["inputs"]["differ"] == ["options.seed"]


def test_figures_without_a_standard_error_get_no_verdict() -> None:
    a = rbd.analyze(plant(), horizon=1000.0, replications=500, seed=1)
    b = rbd.analyze(plant(), horizon=1000.0, replications=500, seed=2)
    rows = {f["figure"]: f for f in rbd.compare_runs(a, b)["figures"]}
    for name in ("mtbf", "mttr", "blocks.a0.failures", "unplanned_downtime"):
        assert rows[name]["verdict"] == "not_comparable" and rows[name]["std_error"] is None, name
        assert rows[name]["reason"] and rows[name]["p_value"] is None
        assert rows[name]["difference"] == pytest.approx(rows[name]["b"] - rows[name]["a"])
    assert "ratio" in rows["mtbf"]["reason"] and "per-block" in rows["blocks.a0.failures"]["reason"]


def test_same_seed_is_noted_and_identical_runs_are_the_same() -> None:
    a = rbd.analyze(plant(), horizon=1000.0, replications=500, seed=3)
    c = rbd.compare_runs(a, a)
    assert c["verdict"] == "same" and any("same seed" in n for n in c["notes"])
    assert all(f["difference"] == 0.0 for f in c["figures"] if f["difference"] is not None)


def two_of_three(repairable: bool) -> dict[str, Any]:
    blocks = [{"id": f"p{i}", "type": "component", "model": exp_model(0.01),
               **({"repair": exp_model(0.1)} if repairable else {})} for i in (1, 2, 3)]
    edges = [("in", f"p{i}") for i in (1, 2, 3)] + [(f"p{i}", "vote") for i in (1, 2, 3)] + [("vote", "out")]
    return diagram([*blocks, {"id": "vote", "type": "knode", "n": 2}], edges, unit="h", repairable=repairable)


def test_closed_form_against_simulation() -> None:
    """An exact run has no noise: the simulated side's binomial and MTTF errors alone decide."""
    exact = rbd.analyze(two_of_three(False), mission_time=50.0)
    sim = rbd.analyze(two_of_three(False), mission_time=50.0, method="simulation", replications=20_000, seed=5)
    assert exact["method"] == "closed_form" and sim["method"] == "simulation"
    c = rbd.compare_runs(exact, sim)
    rows = {f["figure"]: f for f in c["figures"]}
    assert c["verdict"] == "same" and c["kind"] == "mission"
    p = exact["results"]["probability_of_failure"]
    assert rows["probability_of_failure"]["basis"] == "binomial proportions"
    assert rows["probability_of_failure"]["std_error"] == pytest.approx(np.sqrt(p * (1 - p) / 20_000))
    assert rows["mttf"]["std_error"] == pytest.approx(sim["results"]["mttf_std_error"])
    assert rows["block_shares.p1"]["verdict"] == "not_comparable"
    # Two closed forms: the same figure exactly is same, another is changed, with no noise to weigh.
    other = rbd.analyze(two_of_three(False), mission_time=60.0)
    both = {f["figure"]: f["verdict"] for f in rbd.compare_runs(exact, other)["figures"]}
    assert both["reliability"] == "changed" and rbd.compare_runs(exact, exact)["verdict"] == "same"
    assert not any("same seed" in n for n in rbd.compare_runs(exact, exact)["notes"])  # nothing drawn


def test_costs_and_planned_maintenance_figures() -> None:
    """Cost totals and each cost kind carry their standard errors, so they are compared; the
    per-block cost split is not."""
    pump = {"distribution_id": "weibull", "params": [{"name": "alpha", "value": 1000.0},
                                                     {"name": "beta", "value": 2.5}]}
    blocks = [{"id": f"p{i}", "type": "component", "model": pump, "repair": exp_model(0.1),
               "preventive": {"policy": "age", "interval": 500.0, "cost": 100.0},
               "costs": {"repair": 1000.0, "downtime": 5.0}} for i in (1, 2)]
    d = diagram(blocks, [("in", "p1"), ("in", "p2"), ("p1", "out"), ("p2", "out")], unit="h", repairable=True)
    a = rbd.analyze(d, horizon=5000.0, replications=2000, seed=1)
    b = rbd.analyze(d, horizon=5000.0, replications=2000, seed=2)
    c = rbd.compare_runs(a, b)
    rows = {f["figure"]: f for f in c["figures"]}
    assert rows["costs.total"]["verdict"] == "same"
    # Cost kinds neither run incurred (no noise, no difference) are same but outside Holm's family.
    assert rows["costs.by_kind.inspection"]["std_error"] == 0.0 and c["family_size"] < c["compared"]
    assert rows["costs.total"]["std_error"] == pytest.approx(np.hypot(a["results"]["costs"]["total_std_error"],
                                                                      b["results"]["costs"]["total_std_error"]))
    kinds = [k for k in rows if k.startswith("costs.by_kind.")]
    assert kinds and all(rows[k]["verdict"] in ("same", "changed") for k in kinds)
    assert rows["costs.by_block.p1.total"]["verdict"] == "not_comparable"
    assert rows["expected_preventive_replacements"]["verdict"] == "not_comparable"


def test_runs_of_different_kinds_are_refused() -> None:
    avail = rbd.analyze(two_of_three(True), horizon=100.0, replications=200, seed=1)
    mission = rbd.analyze(two_of_three(False), mission_time=50.0)
    with pytest.raises(InputError) as e:
        rbd.compare_runs(avail, mission, field="run_ids")
    assert e.value.field == "run_ids" and "different kinds" in str(e.value)
    with pytest.raises(InputError) as e:
        rbd.compare_runs(avail, {"results": {"x": 1.0}})
    assert e.value.field == "runs"
    with pytest.raises(InputError) as e:
        rbd.compare_runs(avail, avail, confidence=1.0)
    assert e.value.field == "confidence"


def test_speed_ratio_from_events_and_durations() -> None:
    a = rbd.analyze(plant(), horizon=1000.0, replications=200, seed=1)
    b = rbd.analyze(plant(), horizon=1000.0, replications=200, seed=2)
    speed = rbd.compare_runs({**a, "duration_s": 2.0}, {**b, "duration_s": 1.0})["speed"]
    ea, eb = a["results"]["events"], b["results"]["events"]
    assert speed["ratio"] == pytest.approx((eb / 1.0) / (ea / 2.0))
    assert rbd.compare_runs(a, b)["speed"]["ratio"] is None


def test_holm_agrees_with_statsmodels() -> None:
    p = [0.01, 0.04, 0.03, 0.2, 0.0001, 0.5]
    assert holm(p) == pytest.approx(list(multipletests(p, alpha=0.05, method="holm")[1]))


SEED_PAIRS = [(1000 + 2 * i, 1001 + 2 * i) for i in range(200)]


def test_false_alarm_rate_over_seed_pairs() -> None:
    """200 fixed seed pairs of a 1-of-2 repairable pair (MTTF 100 h, MTTR 10 h, 200 h, 2000
    replications): no change, so each `changed` is a false alarm. The mean availability's own
    (unadjusted) 5% test should fire on 5% of pairs: 10 expected, binomial sd 3.1, so within
    the binomial 99.7% range [2, 20] (seen: 7). Holm bounds the whole family's rate by 5%, so at
    most 20 pairs may have any figure called changed (seen: 4). A standard error that is too
    small (say runs taken as independent when they were not) fires far more often."""
    d = diagram([{"id": f"p{i}", "type": "component", "model": exp_model(0.01), "repair": exp_model(0.1)}
                 for i in (1, 2)], [("in", "p1"), ("in", "p2"), ("p1", "out"), ("p2", "out")],
                unit="h", repairable=True)
    figure_alarms = family_alarms = 0
    for s1, s2 in SEED_PAIRS:
        a = rbd.analyze(d, horizon=200.0, replications=2000, seed=s1, grid=2)
        b = rbd.analyze(d, horizon=200.0, replications=2000, seed=s2, grid=2)
        c = rbd.compare_runs(a, b)
        row = next(f for f in c["figures"] if f["figure"] == "mean_availability")
        figure_alarms += row["p_value"] < 0.05
        family_alarms += c["verdict"] == "changed"
    lo, hi = stats.binom.ppf([0.0015, 0.9985], len(SEED_PAIRS), 0.05)
    assert lo <= figure_alarms <= hi, (figure_alarms, lo, hi)
    assert family_alarms <= hi, family_alarms


def test_a_figure_missing_or_infinite_is_listed_not_judged() -> None:
    """A system that may never fail has an infinite MTTF (null): listed, with why, never judged;
    a figure one run lacks likewise."""
    a = {"results": {"mttf": None, "mttf_std_error": None, "probability_of_failure": 0.1, "replications": 1000,
                     "note": "text"}}
    b = {"results": {"mttf": None, "mttf_std_error": None, "probability_of_failure": 0.1, "replications": 1000,
                     "extra": 2.0}}
    rows = {f["figure"]: f for f in rbd.compare_runs(a, b)["figures"]}
    assert rows["mttf"]["verdict"] == "not_comparable" and "finite" in rows["mttf"]["reason"]
    assert rows["extra"]["verdict"] == "not_comparable" and rows["extra"]["reason"] == "only in run b"
    assert "note" not in rows and rows["probability_of_failure"]["verdict"] == "same"


def test_failure_biasing_runs() -> None:
    """Steady-state runs: the unavailability, failure frequency and mean cycle carry standard
    errors; availability is 1 - U, weighed on U's error; MTBF and mean down time are ratios."""
    d = two_of_three(True)
    a = rbd.analyze(d, method="failure_biasing", replications=4000, seed=1)
    b = rbd.analyze(d, method="failure_biasing", replications=4000, seed=2)
    c = rbd.compare_runs(a, b)
    rows = {f["figure"]: f for f in c["figures"]}
    assert c["kind"] == "steady_state" and c["verdict"] == "same"
    assert rows["availability"]["std_error"] == pytest.approx(rows["unavailability"]["std_error"])
    assert rows["failure_frequency"]["verdict"] == "same" and rows["mtbf"]["verdict"] == "not_comparable"
    with pytest.raises(InputError):
        rbd.compare_runs(a, rbd.analyze(d, horizon=100.0, replications=200, seed=1))
