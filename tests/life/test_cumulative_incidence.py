"""Aalen–Johansen cumulative incidence, its variances and bounds, and Gray's test, against R's
cmprsk::cuminc (estimate, Aalen variance, Gray's test), survival::survfit with a multi-state
outcome (estimate), lifelines' AalenJohansenFitter (estimate, delta-method variance, log(-log)
bounds), and the definitions written out here as loops.

Ties: lifelines cannot take tied times and jitters them at random, censorings included, so a
unit censored at a failure's time may leave the risk set first: its estimate then depends on
the seed and misses the definition (failures before censorings at a tie, the d tied failures
entering together: Kalbfleisch & Prentice, SAS LIFETEST, cuminc and survfit alike). We follow the
definition; lifelines is compared on untied data, and
`test_ties_follow_the_definition_not_lifelines_jitter` shows the difference.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from bathtub.errors import InputError
from bathtub.life.competing import fit_competing_risks
from bathtub.life.cumulative_incidence import cumulative_incidence, encode, gray_test, incidence_block
from tests.regression.rref import run_r


def tied_data(seed: int = 7, n: int = 150) -> pd.DataFrame:
    """Integer times (many ties, failures and censorings together), 3 modes, 3 groups."""
    rng = np.random.default_rng(seed)
    t = np.round(rng.exponential(10, n)) + 1
    cause = rng.choice([1, 2, 3], n, p=[0.4, 0.35, 0.25])
    status = np.where(rng.uniform(size=n) < 0.25, 0, cause)
    return pd.DataFrame({"t": t, "s": status, "g": rng.choice(["a", "b", "c"], n)})


def untied_data(seed: int = 3, n: int = 80) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"t": rng.exponential(10, n), "s": rng.choice([0, 1, 2], n, p=[0.3, 0.4, 0.3]),
                         "g": rng.choice(["a", "b"], n)})


def _modes(d: pd.DataFrame) -> list:
    return [None if s == 0 else str(s) for s in d["s"]]


def _cuminc(d: pd.DataFrame, causes: list[int]) -> dict[str, np.ndarray]:
    body = "suppressMessages(library(cmprsk))\nx <- cuminc(d$t, d$s)\n"
    for c in causes:
        # cuminc lists every corner of the step: the value after each jump is at 3, 5, ..., n-1
        body += (f'e <- x[["1 {c}"]]; k <- seq(3, length(e$time) - 1, by = 2)\n'
                 f'out("t{c}", e$time[k]); out("f{c}", e$est[k]); out("v{c}", e$var[k])\n')
    body += "y <- cuminc(d$t, d$s, d$g)\nout('stat', y$Tests[, 1]); out('p', y$Tests[, 2]); out('df', y$Tests[, 3])\n"
    return run_r(d, body)


@pytest.mark.parametrize("make", [tied_data, untied_data], ids=["ties", "no ties"])
def test_estimate_variance_and_gray_test_against_cuminc(make) -> None:
    d = make()
    causes = sorted(int(s) for s in set(d["s"]) if s)
    ref = _cuminc(d, causes)
    block = incidence_block(d["t"], d["s"].to_numpy() > 0, _modes(d), groups=d["g"].tolist())
    by_mode = {m["mode"]: m for m in block["modes"]}
    for c in causes:
        m = by_mode[str(c)]
        assert m["time"] == pytest.approx(ref[f"t{c}"], rel=1e-12)
        assert m["value"] == pytest.approx(ref[f"f{c}"], rel=1e-9, abs=1e-12)
        assert m["variance"] == pytest.approx(ref[f"v{c}"], rel=1e-7, abs=1e-14)
        # cuminc gives no bounds: ours are its variance on the log(-log) scale (lifelines' transform)
        f, se = ref[f"f{c}"], np.sqrt(ref[f"v{c}"])
        k = 1.959963984540054 * se / (f * np.log(f))
        assert m["lower"] == pytest.approx(f ** np.exp(-k), rel=1e-6)
        assert m["upper"] == pytest.approx(f ** np.exp(k), rel=1e-6)
    rows = {r["mode"]: r for r in block["gray_test"]["rows"]}
    for k, c in enumerate(causes):
        assert rows[str(c)]["statistic"] == pytest.approx(ref["stat"][k], rel=1e-7)
        assert rows[str(c)]["p"] == pytest.approx(ref["p"][k], rel=1e-6)
        assert rows[str(c)]["df"] == ref["df"][k]


def test_estimate_against_survfit_multistate() -> None:
    d = tied_data()
    ref = run_r(d, "f <- survfit(Surv(t, factor(s, 0:3)) ~ 1, data = d)\n"
                   "for (k in 2:4) out(paste0('p', k - 1), f$pstate[, k])\nout('time', f$time)")
    t, code, names = encode(d["t"], d["s"].to_numpy() > 0, _modes(d))
    for m in cumulative_incidence(t, code, names):
        k = int(m["mode"])
        at = np.searchsorted(ref["time"], m["time"])
        assert m["value"] == pytest.approx(ref[f"p{k}"][at], rel=1e-10)


def test_against_lifelines_without_ties() -> None:
    from lifelines import AalenJohansenFitter

    d = untied_data()
    t, code, names = encode(d["t"], d["s"].to_numpy() > 0, _modes(d))
    for conf in (0.95, 0.9):
        out = {m["mode"]: m for m in cumulative_incidence(t, code, names, conf, variance="delta")}
        for c in (1, 2):
            aj = AalenJohansenFitter(alpha=1 - conf, calculate_variance=True)
            aj.fit(d["t"], d["s"], event_of_interest=c)
            m = out[str(c)]
            assert m["value"] == pytest.approx(aj.cumulative_density_.loc[m["time"]].to_numpy().ravel(), abs=1e-12)
            # where the last unit at risk fails, r = d: the Greenwood ratio d/(r(r-d)) is undefined; lifelines
            # answers NaN from then on, we leave that term out (module docstring)
            ref_v = aj.variance_.loc[m["time"]].to_numpy()
            ok = np.isfinite(ref_v)
            assert ok.sum() >= len(ok) - 1
            assert np.asarray(m["variance"])[ok] == pytest.approx(ref_v[ok], rel=1e-9, abs=1e-15)
            # lifelines labels its columns the other way round: its "upper" is the lower bound
            ci = np.sort(aj.confidence_interval_.loc[m["time"]].to_numpy(), axis=1)
            assert np.asarray(m["lower"])[ok] == pytest.approx(ci[ok, 0], rel=1e-6)
            assert np.asarray(m["upper"])[ok] == pytest.approx(ci[ok, 1], rel=1e-6)


def _delta_by_definition(t: np.ndarray, code: np.ndarray, target: int) -> tuple[list, list]:
    """The delta-method variance term by term, as SAS LIFETEST writes it, at each target time."""
    times = np.unique(t)
    s_prev, f, rows = 1.0, 0.0, []
    for u in times:
        r = np.sum(t >= u)
        d = np.sum((t == u) & (code >= 0))
        dk = np.sum((t == u) & (code == target))
        f += s_prev * dk / r
        rows.append((u, r, d, dk, s_prev, f))
        s_prev *= (r - d) / r
    out_t, out_v = [], []
    for j, (u, _, _, dk, _, f_t) in enumerate(rows):
        if dk == 0:
            continue
        v = 0.0
        for (_, r, d, dk_i, s_i, f_i) in rows[: j + 1]:
            v += (f_t - f_i) ** 2 * d / (r * (r - d)) if r > d else 0.0
            v += s_i**2 * dk_i * (r - dk_i) / r**3 - 2 * (f_t - f_i) * s_i * dk_i / r**2
        out_t.append(u)
        out_v.append(v)
    return out_t, out_v


def test_ties_follow_the_definition_not_lifelines_jitter() -> None:
    from lifelines import AalenJohansenFitter

    d = tied_data()
    t, code, names = encode(d["t"], d["s"].to_numpy() > 0, _modes(d))
    m = cumulative_incidence(t, code, names, variance="delta")[0]
    want_t, want_v = _delta_by_definition(t, code, 0)
    assert m["time"] == want_t and m["variance"] == pytest.approx(want_v, rel=1e-10)
    # At t = 1, 4 of the 150 units fail by mode 1 (and 3 by others) while 2 are censored: with no one
    # removed before, F_1(1) = 4/150, as cuminc and survfit give (failures before censorings at a tie).
    first = d[d["t"] == d["t"].min()]
    assert m["value"][0] == pytest.approx(int((first["s"] == 1).sum()) / len(d), rel=1e-15)
    # lifelines jitters tied times at random, censorings among them, so a censored unit may leave the
    # risk set before a failure it tied with: its F_1(1) depends on the seed and misses 4/150
    seen = set()
    for seed in (1, 2, 3):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # lifelines warns that it jitters the ties
            aj = AalenJohansenFitter(calculate_variance=True, seed=seed).fit(d["t"], d["s"], event_of_interest=1)
        cdf = aj.cumulative_density_.iloc[:, 0]
        value = float(cdf[cdf.index < d["t"].min() + 0.5].iloc[-1])
        assert value != pytest.approx(m["value"][0], rel=1e-6)
        seen.add(round(value, 12))
    assert len(seen) > 1


def test_no_censoring_is_the_empirical_fraction_and_scale_free() -> None:
    """Without censoring F_m(t) is the share of units failed by mode m by t (a closed form); times
    x1e-3 .. x1e6 give the same values at scaled times, variances and bounds unchanged."""
    rng = np.random.default_rng(11)
    t = np.round(rng.weibull(1.5, 200) * 50, 1)
    mode = rng.choice(["seal", "bearing"], 200)
    block = incidence_block(t, np.ones(200, bool), list(mode))
    for m in block["modes"]:
        want = [np.mean((t <= u) & (mode == m["mode"])) for u in m["time"]]
        assert m["value"] == pytest.approx(want, rel=1e-12)
        assert all(lo <= v <= hi for lo, v, hi in zip(m["lower"], m["value"], m["upper"], strict=True))
    for k in (1e-3, 1e6):
        scaled = incidence_block(t * k, np.ones(200, bool), list(mode))
        for a, b in zip(scaled["modes"], block["modes"], strict=True):
            assert a["time"] == pytest.approx(np.asarray(b["time"]) * k, rel=1e-12)
            for key in ("value", "variance", "lower", "upper"):
                assert a[key] == pytest.approx(b[key], rel=1e-9, abs=1e-15)


def test_gray_test_is_scale_free_and_detects_a_difference() -> None:
    rng = np.random.default_rng(4)
    n = 300
    g = rng.choice([0, 1], n)
    # group 1 fails by mode 0 at three times the rate: Gray's test must see it
    t0 = rng.exponential(np.where(g == 1, 10.0, 30.0))
    t1 = rng.exponential(20.0, n)
    t = np.minimum(t0, t1)
    code = np.where(t0 < t1, 0, 1)
    res = gray_test(t, code, 0, g)
    assert res["p"] < 1e-4 and res["df"] == 1
    for k in (1e-3, 1e6):
        assert gray_test(t * k, code, 0, g)["statistic"] == pytest.approx(res["statistic"], rel=1e-9)


def test_record_block_and_refusals() -> None:
    d = tied_data()
    out = fit_competing_risks(d["t"], (d["s"] == 0).astype(int), _modes(d), "weibull", groups=list(d["g"]))
    cif = out["cumulative_incidence"]
    assert {m["mode"] for m in cif["modes"]} == {"1", "2", "3"} and len(cif["by_group"]) == 9
    assert cif["gray_test"]["groups"] == ["a", "b", "c"] and cif["variance"] == "aalen"
    modes = _modes(d)
    censored = int(np.argmax(d["s"].to_numpy() == 0))
    bad = list(modes)
    bad[censored] = "1"
    with pytest.raises(InputError, match=f"row {censored + 1}: a censored row has no failure mode") as err:
        fit_competing_risks(d["t"], (d["s"] == 0).astype(int), bad, "weibull", field="mapping.mode")
    assert err.value.field == "mapping.mode"
    failed = int(np.argmax(d["s"].to_numpy() > 0))
    bad = list(modes)
    bad[failed] = float("nan")  # an empty spreadsheet cell
    with pytest.raises(InputError, match=f"row {failed + 1}: every failure needs a mode"):
        fit_competing_risks(d["t"], (d["s"] == 0).astype(int), bad, "weibull")
    with pytest.raises(InputError, match="2 or more groups"):
        incidence_block(d["t"], d["s"].to_numpy() > 0, modes, groups=["a"] * len(d))
    with pytest.raises(InputError) as err:
        cumulative_incidence(*encode(d["t"], d["s"].to_numpy() > 0, modes), variance="greenwood")
    assert err.value.field == "options.cif_variance"


def test_ingest_row_checks_refuse_a_mode_on_a_censored_row() -> None:
    """The row-by-row check new rows pass before they join a dataset with a competing-risks model."""
    from bathtub.errors import RowError
    from bathtub.life.saved import check_model_rows

    mapping = {"x": "t", "c": "c", "mode": "m"}
    check_model_rows({"t": [1.0, 2.0], "c": [0, 1], "m": ["seal", None]}, mapping)
    with pytest.raises(RowError, match="a censored row has no failure mode"):
        check_model_rows({"t": [1.0, 2.0], "c": [0, 1], "m": ["seal", "seal"]}, mapping)
    with pytest.raises(RowError, match="every failure needs a mode"):
        check_model_rows({"t": [1.0, 2.0], "c": [0, 1], "m": [None, None]}, mapping)
