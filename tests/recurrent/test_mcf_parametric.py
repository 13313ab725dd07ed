"""The power-law MCF and the per-row MCF variance against the `reliability` package: its
MCF_parametric on its own example data (MCF_1, the ReliaWiki example in its docstring, and
MCF_2), and its MCF_nonparametric's variance and bounds on data with tied times. reliability
fits with curve_fit's default tolerance (~1e-8), so its estimates agree to ~1e-7, not 1e-12."""

from __future__ import annotations

import math

import numpy as np
import pytest
from reliability.Datasets import MCF_1, MCF_2
from reliability.Repairable_systems import MCF_nonparametric, MCF_parametric

from bathtub.errors import InputError
from bathtub.recurrent import events, mcf
from bathtub.recurrent.data import EventData
from bathtub.recurrent.expected import cumulative_intensity
from bathtub.recurrent.mcf_parametric import fit_power_law, recurrence_points
from bathtub.recurrent.record import fit_columns, fit_data


def _data(times: list) -> EventData:
    """reliability's format: each system's list ends with its end of observation."""
    return events([t[:-1] for t in times], ends=[t[-1] for t in times])


def _params(record: dict) -> dict:
    return {p["name"]: p for p in record["params"]}


@pytest.mark.parametrize("times", [MCF_1().times, MCF_2().times], ids=["MCF_1", "MCF_2"])
def test_power_law_against_reliability(times: list) -> None:
    ref = MCF_parametric(data=times, CI=0.95, print_results=False, show_plot=False)
    record = fit_data(_data(times), "mcf_power_law", 0.95)
    p = _params(record)
    assert p["alpha"]["value"] == pytest.approx(ref.alpha, rel=1e-4)
    assert p["beta"]["value"] == pytest.approx(ref.beta, rel=1e-4)
    assert p["alpha"]["se"] == pytest.approx(ref.alpha_SE, rel=1e-4)
    assert p["beta"]["se"] == pytest.approx(ref.beta_SE, rel=1e-4)
    assert record["covariance"]["matrix"][0][1] == pytest.approx(ref.cov_alpha_beta, rel=1e-4)
    assert p["alpha"]["ci"] == pytest.approx([ref.alpha_lower, ref.alpha_upper], rel=1e-4)
    assert p["beta"]["ci"] == pytest.approx([ref.beta_lower, ref.beta_upper], rel=1e-4)
    # the points fitted are reliability's: the MCF after each recurrence, ties one point each
    t, m = recurrence_points(record["curve"])
    assert t == pytest.approx(np.asarray(ref.times, dtype=float), rel=1e-12)
    assert m == pytest.approx(np.asarray(ref.MCF, dtype=float), rel=1e-12)


def test_power_law_is_the_least_squares_optimum_and_scales() -> None:
    """The gradient of the SSE vanishes at the fit (independent of the optimiser), and times
    x1e-3..1e6 scale alpha and its se and leave beta alone."""
    record = fit_data(_data(MCF_1().times), "mcf_power_law")
    t, m = recurrence_points(record["curve"])
    p = _params(record)
    a, b = p["alpha"]["value"], p["beta"]["value"]
    pred = (t / a) ** b
    grad = [np.sum((pred - m) * pred * -b / a), np.sum((pred - m) * pred * np.log(t / a))]
    assert grad == pytest.approx([0.0, 0.0], abs=1e-7)  # SSE ~0.1: a round-off-level gradient
    for k in (1e-3, 1e6):
        scaled = _params(fit_data(_data(MCF_1().times).scaled(k), "mcf_power_law"))
        assert scaled["alpha"]["value"] == pytest.approx(k * a, rel=1e-8)
        assert scaled["alpha"]["se"] == pytest.approx(k * p["alpha"]["se"], rel=1e-6)
        assert scaled["beta"]["value"] == pytest.approx(b, rel=1e-8)
        assert scaled["beta"]["ci"] == pytest.approx(p["beta"]["ci"], rel=1e-6)


def test_power_law_record_curve_and_expected() -> None:
    record = fit_data(_data(MCF_1().times), "mcf_power_law")
    p = _params(record)
    a, b = p["alpha"]["value"], p["beta"]["value"]
    fitted = record["fitted_curve"]
    assert fitted["time"][-1] == 28.0 and fitted["mcf"][-1] == pytest.approx((28 / a) ** b, rel=1e-12)
    assert cumulative_intensity(record, [10.0, 20.0]) == pytest.approx([(10 / a) ** b, (20 / a) ** b], rel=1e-12)
    assert record["growth"]["verdict"] == "deteriorating"  # reliability: "beta > 1 ... WORSENING"
    assert [s["expected"] for s in record["systems_vs_model"]] == pytest.approx(
        [(e / a) ** b for e in (17, 19, 26, 24, 28)], rel=1e-12)
    assert record["kind"] == "recurrent" and record["distribution"] == "mcf_power_law"


def test_power_law_refuses_too_few_recurrences() -> None:
    with pytest.raises(InputError, match="at least 3"):
        fit_power_law(np.array([1.0, 2.0]), np.array([0.5, 1.0]))
    with pytest.raises(InputError, match="one time"):
        fit_power_law(np.array([2.0, 2.0, 2.0]), np.array([0.5, 1.0, 1.5]))


def test_per_row_variance_against_reliability_on_ties() -> None:
    """MCF_1 has ties at 13, 15 and 25: reliability lists each event as its own row. Its
    variance and bounds at the last row of each time are our per_row ones; its bounds use the
    one-sided z at CI (1.645 at 0.95), our two-sided 90%."""
    times = MCF_1().times
    ref = MCF_nonparametric(data=times, CI=0.95, print_results=False, show_plot=False)
    failed = np.asarray(ref.variance) != ""
    rt = np.asarray(ref.time)[failed].astype(float)
    last = np.r_[rt[1:] != rt[:-1], True]  # the last row at each time carries the time's value
    out = mcf.mcf(_data(times), confidence=0.90, variance="per_row")
    assert out["time"] == rt[last].tolist()
    assert out["variance_per_row"] == pytest.approx(np.asarray(ref.variance)[failed][last].astype(float), rel=1e-9)
    assert out["lower_per_row"] == pytest.approx(np.asarray(ref.lower)[failed][last].astype(float), rel=1e-9)
    assert out["upper_per_row"] == pytest.approx(np.asarray(ref.upper)[failed][last].astype(float), rel=1e-9)
    nelson = mcf.mcf(_data(times), confidence=0.90)
    # Nelson's per-time variance is smaller at ties and the same without: at 13 (2 of 5 systems
    # fail) 0.048 against 0.064 for the first five rows' sum
    assert "variance_per_row" not in nelson and nelson["variance"] == "nelson"
    assert nelson["variance_nelson"][4] == pytest.approx(0.128 + 0.048, rel=1e-12)
    assert out["variance_per_row"][4] == pytest.approx(0.128 + 0.064, rel=1e-12)
    untied = [[5, 10, 15.5, 17], [6, 13, 17.5, 19], [12, 20, 25, 26], [13.5, 15, 24], [16, 22, 25.5, 28]]
    a, b = mcf.mcf(_data(untied), variance="per_row"), mcf.mcf(_data(untied))
    assert a["variance_per_row"] == pytest.approx(b["variance_nelson"], rel=1e-12)
    # Lawless–Nadeau's robust variance has no per-row convention: unchanged
    assert out["variance_lawless_nadeau"] == pytest.approx(nelson["variance_lawless_nadeau"], rel=1e-12)


def test_variance_option_in_the_record() -> None:
    cols = {"t": [5, 10, 15, 6, 13, 17, 13, 15], "system": ["a"] * 3 + ["b"] * 3 + ["c"] * 2,
            "end": [17] * 3 + [19] * 3 + [24] * 2}
    mapping = {"t": "t", "system": "system", "end": "end"}
    rec = fit_columns(cols, mapping, "mcf", {"variance": "per_row"})
    assert rec["variance"] == "per_row" and "lower_per_row" in rec["curve"]
    assert fit_columns(cols, mapping, "mcf")["variance"] == "nelson"
    rec = fit_columns(cols, mapping, "mcf_power_law", {"variance": "per_row"})
    assert "variance_per_row" in rec["curve"] and math.isfinite(_params(rec)["beta"]["value"])
    with pytest.raises(InputError) as err:
        fit_columns(cols, mapping, "crow_amsaa", {"variance": "per_row"})
    assert err.value.field == "options.variance"
    with pytest.raises(InputError) as err:
        fit_columns(cols, mapping, "mcf", {"variance": "greenwood"})
    assert err.value.field == "options.variance"
