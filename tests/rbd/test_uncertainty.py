"""Parameter uncertainty through a diagram (`bathtub.rbd.uncertainty`, issue 31 "Must hold"):
the two-level run against closed forms (the chi-squared law of an exponential rate; a Weibull
fit's own delta-method and likelihood-ratio bounds on R(t)), the coverage of its 90% interval,
its streams (threads, split-and-merge, a dask cluster) and its refusals."""

from __future__ import annotations

import math
import threading
from typing import Any

import numpy as np
import pytest
from scipy import optimize, stats

from bathtub import engine, models
from bathtub.errors import InputError
from bathtub.life.paper import cdf_band
from bathtub.models.draws import sampling_form
from bathtub.rbd import uncertainty as unc
from bathtub.rbd.analysis import RunOptions

from .helpers import exp_model, series

LAM, MU, HORIZON = 0.01, 0.1, 20_000.0  # per hour; a horizon of ~180 failure-repair cycles


def mean_availability(lam: float | np.ndarray) -> Any:
    """One alternating-renewal block started new, exponential life (lam) and repair (MU): the
    mean of A(t) = MU/s + lam/s e^(-s t) over [0, H], s = lam + MU."""
    s = lam + MU
    return MU / s + lam * (1 - np.exp(-s * HORIZON)) / (s * s * HORIZON)


def exp_fit(r: int, same_total: bool = False) -> tuple[dict[str, Any], float]:
    """A complete-data exponential fit from r failures; `same_total`: r lives of 1/LAM each, so
    the total time is r/LAM and the fitted rate LAM whatever r (only the amount of data moves)."""
    t = np.full(r, 1 / LAM) if same_total else np.random.default_rng(r).exponential(1 / LAM, r)
    return models.fit("exponential", {"x": t.tolist()}, {"x": "x"}), float(t.sum())


def repairable_block() -> dict[str, Any]:
    d = series({"saved_model_id": "pump"})
    d["repairable"] = True
    d["nodes"][2]["repair"] = exp_model(MU)
    return d


def availability_run(rec: dict[str, Any], draws: int = 400, replications_per_draw: int = 200,
                     **kw: Any) -> dict[str, Any]:
    return unc.analyze(repairable_block(), models={"pump": rec}, horizon=HORIZON, replications=200, seed=3, grid=2,
                       uncertainty="parameters", draws=draws, replications_per_draw=replications_per_draw, **kw)


@pytest.mark.slow  # ~8 s: three two-level runs of 400 draws x 200 replications
def test_exponential_availability_interval_is_the_chi_squared_closed_form_and_shrinks_like_root_r() -> None:
    widths = {}
    for r in (5, 50, 500):
        rec, total = exp_fit(r, same_total=True)
        assert rec["n_failures"] == r and rec["n"] == r  # complete data: the gamma law is drawn
        out = availability_run(rec)
        fig = out["uncertainty"]["figures"]["mean_availability"]
        law = stats.chi2(2 * r, scale=1 / (2 * total))  # lambda ~ chi2(2r) / (2T)
        want = [mean_availability(law.ppf(0.95)), mean_availability(law.ppf(0.05))]  # A falls as lambda grows
        n = fig["draws"]
        for end, q in zip(fig["interval"], (0.95, 0.05), strict=True):
            lam_q = law.ppf(q)
            # the q-quantile of n draws has standard error sqrt(q(1-q)/n) / f(lam_q) on lambda; carried to A
            slope = abs(mean_availability(lam_q * 1.001) - mean_availability(lam_q * 0.999)) / (0.002 * lam_q)
            se = math.sqrt(q * (1 - q) / n) / law.pdf(lam_q) * slope
            tol = 4 * se + 2 * math.sqrt(fig["simulation_variance"])  # each draw's mean carries its own noise
            assert abs(end - mean_availability(lam_q)) < tol, (r, end, want, tol)
        assert fig["parameter_share"] > 0.9  # 200 replications per draw: the data dominate, not the simulation
        # the Monte Carlo interval of the point run is the plain run's, much narrower than the data allow
        mc = fig["monte_carlo_interval"]
        assert mc == out["results"]["mean_availability_interval"] and mc[1] - mc[0] < fig["interval"][1] - \
            fig["interval"][0]
        widths[r] = fig["interval"][1] - fig["interval"][0]
    # 1/sqrt(r) at the same fitted rate: width x sqrt(r) the same at r = 50 and 500 (the r = 5
    # chi-squared law is skewed, and its 90% width is wider than the normal one by about 10%)
    assert widths[50] * math.sqrt(50) == pytest.approx(widths[500] * math.sqrt(500), rel=0.10)
    assert widths[5] * math.sqrt(5) == pytest.approx(widths[500] * math.sqrt(500), rel=0.25)


def test_the_point_run_is_the_plain_run_and_the_quote_counts_every_draw() -> None:
    rec, _ = exp_fit(50)
    out = availability_run(rec, draws=5, replications_per_draw=50)
    plain = unc.analyze(repairable_block(), models={"pump": rec}, horizon=HORIZON, replications=200, seed=3, grid=2)
    assert out["results"] == plain["results"] and "uncertainty" not in plain
    assert out["quote"]["replications"] == 200 + 5 * 50 and out["quote"]["seconds"] > plain["quote"]["seconds"]
    u = out["uncertainty"]
    assert u["draws"] == 5 and u["replications_per_draw"] == 50 and u["fixed_blocks"] == ["nodes.b0.repair"]
    assert [s["model_id"] for s in u["sources"]] == ["pump"] and u["sources"][0]["law"] == "gamma"


def weibull_mission(n: int, seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
    t = np.random.default_rng(seed).weibull(2.0, n) * 1000.0
    rec = models.fit("weibull", {"x": t.tolist()}, {"x": "x"})
    return rec, series({"saved_model_id": "w"})


def lr_bounds(rec: dict[str, Any], t: float, x: np.ndarray, level: float) -> tuple[float, float]:
    """Likelihood-ratio bounds on R(t) for a complete-data Weibull, independently: R(t) = r0
    fixes alpha = t / (-ln r0)^(1/beta); the profile over beta is compared with chi2_1(level)."""
    p = {q["name"]: q["value"] for q in rec["params"]}

    def ll(alpha: float, beta: float) -> float:
        return float(np.sum(stats.weibull_min.logpdf(x, beta, scale=alpha)))

    top = ll(p["alpha"], p["beta"])
    cut = stats.chi2.ppf(level, 1) / 2

    def profile(r0: float) -> float:
        res = optimize.minimize_scalar(lambda lb: -ll(t / (-math.log(r0)) ** (1 / math.exp(lb)), math.exp(lb)),
                                       bounds=(math.log(p["beta"]) - 1, math.log(p["beta"]) + 1), method="bounded",
                                       options={"xatol": 1e-10})
        return top + res.fun - cut

    r_hat = math.exp(-((t / p["alpha"]) ** p["beta"]))
    lo = optimize.brentq(profile, r_hat * 0.5, r_hat, xtol=1e-12)
    hi = optimize.brentq(profile, r_hat, min(1 - 1e-9, r_hat + (1 - r_hat) * 0.9), xtol=1e-12)
    return lo, hi


@pytest.mark.slow  # ~10 s: 1500 closed-form draws and 300 simulated ones
def test_weibull_reliability_interval_agrees_with_the_fits_delta_and_lr_bounds_at_n_1000() -> None:
    mission = 500.0
    rec, d = weibull_mission(1000, 21)
    x = np.random.default_rng(21).weibull(2.0, 1000) * 1000.0
    out = unc.analyze(d, models={"w": rec}, mission_time=mission, seed=5, grid=2, uncertainty="parameters",
                      draws=1500)
    assert out["method"] == "closed_form" and out["uncertainty"]["draw_method"] == "closed_form"
    fig = out["uncertainty"]["figures"]["reliability"]
    band = cdf_band(rec, np.array([mission]), 0.90)  # the fit's own pointwise delta-method band on F
    delta = (1 - band["upper"][0], 1 - band["lower"][0])
    lr = lr_bounds(rec, mission, x, 0.90)
    width = delta[1] - delta[0]
    # delta and LR bounds differ by O(1/n) of the width at n = 1000; the draws' 5%/95% points
    # carry the sampling error of a quantile of 1500 draws (about 4% of the width here)
    assert abs(lr[0] - delta[0]) < 0.05 * width and abs(lr[1] - delta[1]) < 0.05 * width
    for got, a, b in zip(fig["interval"], delta, lr, strict=True):
        assert abs(got - a) < 0.08 * width and abs(got - b) < 0.08 * width, (fig["interval"], delta, lr)
    assert fig["simulation_variance"] == 0.0 and fig["parameter_share"] == 1.0
    # the same through simulation (replications_per_draw replications): wider only by the simulation's own noise
    sim = unc.analyze(d, models={"w": rec}, mission_time=mission, seed=5, grid=2, method="simulation",
                      replications=2000, uncertainty="parameters", draws=300, replications_per_draw=4000)["uncertainty"]
    f = sim["figures"]["reliability"]
    assert f["parameter_variance"] == pytest.approx(fig["total_variance"], rel=0.35)
    assert abs(f["interval"][0] - delta[0]) < 0.25 * width and abs(f["interval"][1] - delta[1]) < 0.25 * width


@pytest.mark.slow  # ~2 min: 200 datasets x 100 closed-form draws
def test_coverage_of_the_90_percent_interval_at_n_10() -> None:
    """The share of 200 datasets of n = 10 whose 90% parameter interval holds the true R(t).
    The normal law on (ln alpha, ln beta) with the Fisher covariance is an asymptotic one: at
    n = 10 the shape's spread is underestimated, and the interval covers less than 90%; the
    guide states the figure measured here (about 84%)."""
    mission, alpha, beta = 300.0, 1000.0, 2.0
    truth = math.exp(-((mission / alpha) ** beta))
    hits = 0
    for k in range(200):
        t = np.random.default_rng(1000 + k).weibull(beta, 10) * alpha
        rec = models.fit("weibull", {"x": t.tolist()}, {"x": "x"})
        out = unc.analyze(series({"saved_model_id": "w"}), models={"w": rec}, mission_time=mission, seed=k, grid=2,
                          uncertainty="parameters", draws=100)
        lo, hi = out["uncertainty"]["figures"]["reliability"]["interval"]
        hits += lo <= truth <= hi
    share = hits / 200
    print(f"coverage of the 90% parameter interval at n = 10: {share:.3f}")
    # within 3 binomial standard errors of the measured shortfall's figure, and never above nominal + error
    assert 0.78 <= share <= 0.90 + 3 * math.sqrt(0.09 / 200), share


def two_model_diagram() -> tuple[dict[str, Any], dict[str, Any]]:
    """A pump fitted from few failures beside a valve fitted from many, in series, repairable."""
    pump, _ = exp_fit(4)
    t = np.random.default_rng(9).weibull(1.5, 400) * 300.0
    valve = models.fit("weibull", {"x": t.tolist()}, {"x": "x"})
    d = series({"saved_model_id": "pump"}, {"saved_model_id": "valve"})
    d["repairable"] = True
    for n in d["nodes"][2:]:
        n["repair"] = exp_model(MU)
    return d, {"pump": pump, "valve": valve}


def test_the_block_with_least_data_carries_most_of_the_uncertainty() -> None:
    d, ms = two_model_diagram()
    out = unc.analyze(d, models=ms, horizon=2000.0, replications=100, seed=4, grid=2, uncertainty="parameters",
                      draws=200, replications_per_draw=100)["uncertainty"]
    first, second = out["sources"]
    assert first["model_id"] == "pump" and first["share_of_parameter_variance"] > 0.8
    assert second["share_of_parameter_variance"] < 0.2
    assert first["blocks"] == ["nodes.b0.model"] and out["fixed_blocks"] == ["nodes.b0.repair", "nodes.b1.repair"]


@pytest.mark.slow  # ~10 s: 800 closed-form draws
def test_block_shares_against_the_exact_first_order_indices_of_two_exponentials() -> None:
    """R(t) = exp(-(l1 + l2) t) with l_i ~ Gamma(r_i, scale s_i) independent: E[R | l1] =
    e^(-l1 t) a2, with a_i = E e^(-l_i t) = (1 + s_i t)^(-r_i) and b_i = E e^(-2 l_i t), so the
    first-order indices are V1 / V = a2^2 (b1 - a1^2) / (b1 b2 - a1^2 a2^2), and the same for 2.
    The linear share reads E[R | l1] as linear in ln l1: below the index by the curvature."""
    mission = 30.0
    pump, _ = exp_fit(5)
    valve, _ = exp_fit(40)
    law = {}
    for name, rec in (("pump", pump), ("valve", valve)):
        r = rec["n_failures"]
        law[name] = (r, rec["params"][0]["value"] / r)
    a = {k: (1 + s * mission) ** -r for k, (r, s) in law.items()}
    b = {k: (1 + 2 * s * mission) ** -r for k, (r, s) in law.items()}
    total = b["pump"] * b["valve"] - (a["pump"] * a["valve"]) ** 2
    exact = {"pump": a["valve"] ** 2 * (b["pump"] - a["pump"] ** 2) / total,
             "valve": a["pump"] ** 2 * (b["valve"] - a["valve"] ** 2) / total}
    out = unc.analyze(series({"saved_model_id": "pump"}, {"saved_model_id": "valve"}),
                      models={"pump": pump, "valve": valve}, mission_time=mission, seed=2, grid=2,
                      uncertainty="parameters", draws=800)["uncertainty"]
    shares = {s["model_id"]: s["share_of_parameter_variance"] for s in out["sources"]}
    assert [s["model_id"] for s in out["sources"]] == ["pump", "valve"]  # the model with 5 failures first
    for k in ("pump", "valve"):
        # sampling error of an R² from 800 draws ~0.02; the curvature takes up to ~0.1 off
        assert exact[k] - 0.12 < shares[k] < exact[k] + 0.05, (k, shares, exact)
    assert out["figures"]["reliability"]["total_variance"] == pytest.approx(total, rel=0.15)


def rows(threads: int | None, first: int = 0, draws: int = 12, cluster: Any = None) -> list[dict[str, Any]]:
    d, ms = two_model_diagram()
    opts = RunOptions(horizon=2000.0, mission_time=None, replications=100, precision=None, max_replications=100,
                      seed=17, grid=2, method="auto")
    return unc.draw_rows(d, ms, {}, opts, unc.UncertaintyOptions(draws=draws, replications_per_draw=300), exact=False,
                         first=first, threads=threads, cluster=cluster)


def test_same_seed_same_numbers_on_one_and_two_threads_and_split_draws_merge_exactly() -> None:
    one, two = rows(1), rows(2)
    assert one == two
    merged = unc.merge(rows(2, first=5, draws=7), rows(1, first=0, draws=5))
    assert merged == one
    d, ms = two_model_diagram()
    whole = unc.summary(one, d, ms, {}, unc.UncertaintyOptions(12, 300), exact=False)
    assert unc.summary(merged, d, ms, {}, unc.UncertaintyOptions(12, 300), exact=False) == whole
    with pytest.raises(InputError, match="adjacent"):
        unc.merge(rows(1, first=0, draws=3), rows(1, first=4, draws=3))


def test_a_cancelled_run_stops_between_or_inside_draws_and_reports_progress() -> None:
    d, ms = two_model_diagram()
    opts = RunOptions(horizon=2000.0, mission_time=None, replications=100, precision=None, max_replications=100,
                      seed=17, grid=2, method="auto")
    ctl = engine.RunControl()
    unc.draw_rows(d, ms, {}, opts, unc.UncertaintyOptions(draws=3, replications_per_draw=50), exact=False, control=ctl)
    assert (ctl.done, ctl.planned) == (150, 150)
    ctl = engine.RunControl()
    threading.Timer(0.3, ctl.cancel).start()
    with pytest.raises(engine.Cancelled):
        # far more work than 0.3 s: cancelled inside a draw's engine run or before the next draw
        unc.draw_rows(d, ms, {}, opts, unc.UncertaintyOptions(draws=2000, replications_per_draw=2000), exact=False,
                      control=ctl)


@pytest.mark.slow  # a dask LocalCluster of worker processes
def test_same_seed_same_numbers_on_a_dask_cluster() -> None:
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40) as cluster:
        assert rows(None, draws=4, cluster=cluster.scheduler_address) == rows(1, draws=4)


def test_refusals_name_the_field() -> None:
    d, ms = two_model_diagram()
    kw = {"horizon": 100.0, "replications": 10}
    cases = [
        ({"draws": 5}, "draws", "only with uncertainty: parameters"),
        ({"uncertainty": "parameters", "precision": 0.1, "replications": None}, "precision", "not with uncertainty"),
        ({"uncertainty": "parameters", "draws": 1}, "draws", "from 2 to"),
        ({"uncertainty": "parameters", "draws": 5000, "replications_per_draw": 100_000}, "replications_per_draw",
         "at most 100000000"),
        ({"uncertainty": "maybe"}, "uncertainty", "must be one of"),
    ]
    for extra, field, rule in cases:
        with pytest.raises(InputError) as e:
            unc.analyze(d, models=ms, **{k: v for k, v in {**kw, **extra}.items() if v is not None})
        assert e.value.field == field and rule in e.value.rule, (extra, e.value)
    # inline models only: nothing to draw
    with pytest.raises(InputError) as e:
        unc.analyze(series(exp_model(0.01)), mission_time=10.0, uncertainty="parameters")
    assert e.value.field == "uncertainty"
    # a saved model with no sampling distribution (Kaplan-Meier) is refused naming its block
    km = models.fit("kaplan_meier", {"x": [1.0, 2, 3]}, {"x": "x"})
    with pytest.raises(InputError) as e:
        unc.sources(series({"saved_model_id": "km"}), {"km": km}, {})
    assert e.value.field == "nodes.b0.model.saved_model_id"


def test_a_stored_runs_models_keep_what_their_law_needs() -> None:
    # A service run stores its models slimmed to MODEL_KEYS and draws from those: a complete-data
    # exponential must still take its exact chi-squared law there, not the normal approximation.
    rec, _ = exp_fit(5)
    assert sampling_form(rec)["law"] == "gamma"
    assert sampling_form(unc.slim_models({"m": rec})["m"])["law"] == "gamma"
