"""Per-unit paths, pseudo-failure times and the life fitted to them."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bathtub.degradation import crossing_times, pseudo_failures, readings_from_columns, unit_lines
from bathtub.degradation.model import build_model
from bathtub.degradation.paths import Path
from bathtub.errors import InputError, RowError
from bathtub.life import LifeData, fit

MAP = {"i": "unit", "x": "hours", "y": "wear"}


def _columns(paths: dict[str, tuple[np.ndarray, np.ndarray]]) -> dict[str, list]:
    cols: dict[str, list] = {"unit": [], "hours": [], "wear": []}
    for u, (t, y) in paths.items():
        cols["unit"] += [u] * len(t)
        cols["hours"] += list(map(float, t))
        cols["wear"] += list(map(float, y))
    return cols


SLOPES = [0.37, 1.3, 2.9, 0.81, 5.5, 1.7]


@pytest.mark.parametrize("scale", [1e-3, 1.0, 1e6])
def test_linear_paths_cross_at_threshold_over_slope(scale: float) -> None:
    t = np.array([1.0, 2.0, 4.0, 7.0, 10.0]) * scale
    cols = _columns({f"u{k}": (t, b * t / scale) for k, b in enumerate(SLOPES)})
    r = readings_from_columns(cols, MAP)
    out = pseudo_failures(Path.parse("linear"), r, 30.0, "up", extrapolation=100.0)
    got = [u["crossing_time"] for u in out["units"]]
    assert got == pytest.approx([30.0 / b * scale for b in SLOPES], rel=1e-13)
    assert all(u["status"] == "failure" for u in out["units"])


def test_downward_and_transformed_paths_cross_where_the_closed_form_says() -> None:
    t = np.array([1.0, 3.0, 5.0, 9.0])
    # downward linear y = 100 - b t reaches 40 at 60/b
    r = readings_from_columns(_columns({f"u{k}": (t, 100 - b * t) for k, b in enumerate(SLOPES)}), MAP)
    got = [u["crossing_time"] for u in pseudo_failures(Path.parse("linear"), r, 40.0, "down",
                                                       extrapolation=100.0)["units"]]
    assert got == pytest.approx([60.0 / b for b in SLOPES], rel=1e-12)
    # exponential y = 2 e^{b t}: ln(D/2)/b; power y = 2 t^b: (D/2)^(1/b); logarithmic y = 1 + b ln t: e^{(D-1)/b}
    cases = {
        "exponential": (lambda b: 2 * np.exp(b * t), lambda b: math.log(50 / 2) / b),
        "power": (lambda b: 2 * t**b, lambda b: (50 / 2) ** (1 / b)),
        "logarithmic": (lambda b: 1 + b * np.log(t), lambda b: math.exp((50 - 1) / b)),
    }
    for name, (path_of, closed) in cases.items():
        slopes = [0.9, 1.4, 2.2] if name != "logarithmic" else [20.0, 30.0, 45.0]
        r = readings_from_columns(_columns({f"u{k}": (t, path_of(b)) for k, b in enumerate(slopes)}), MAP)
        lines = unit_lines(Path.parse(name), r)
        got = crossing_times(Path.parse(name), lines, 50.0, "up")
        assert got == pytest.approx([closed(b) for b in slopes], rel=1e-11), name


def test_units_that_do_not_reach_are_censored_at_their_last_reading() -> None:
    t = np.array([1.0, 2.0, 3.0])
    cols = _columns({"fast": (t, 10 * t), "mid": (t, 4 * t), "away": (t, 5 - t), "slow": (t, 0.1 * t)})
    out = pseudo_failures(Path.parse("linear"), readings_from_columns(cols, MAP), 20.0, "up", extrapolation=3.0)
    by = {u["id"]: u for u in out["units"]}
    assert by["fast"]["status"] == "failure" and by["fast"]["crossing_time"] == pytest.approx(2.0)
    assert by["mid"]["status"] == "failure" and by["mid"]["crossing_time"] == pytest.approx(5.0)
    assert by["away"]["status"] == "censored" and by["away"]["crossing_time"] is None
    assert by["slow"]["status"] == "censored" and by["slow"]["crossing_time"] == pytest.approx(200.0)
    assert "beyond 3" in by["slow"]["censored_because"]
    assert list(out["x"]) == pytest.approx([2.0, 5.0, 3.0, 3.0]) and list(out["c"]) == [0, 0, 1, 1]


def test_pseudo_failure_life_is_the_life_fitter_on_those_times() -> None:
    rng = np.random.default_rng(7)
    slopes = rng.lognormal(0.0, 0.3, 25)
    t = np.linspace(10, 100, 6)
    cols = _columns({f"u{k}": (t, b * t + rng.normal(0, 0.5, t.size)) for k, b in enumerate(slopes)})
    rec = build_model(cols, MAP, path="linear", threshold=120.0, direction="up", model="pseudo_failure",
                      life_distribution="weibull")
    times = np.array([u["crossing_time"] if u["status"] == "failure" else u["last_reading"] for u in rec["units"]])
    codes = [0 if u["status"] == "failure" else 1 for u in rec["units"]]
    ref = fit(LifeData.from_arrays(x=times, c=codes), "weibull").to_record()
    assert [p["value"] for p in rec["life"]["params"]] == pytest.approx([p["value"] for p in ref["params"]], rel=1e-12)
    assert rec["life"]["params"][0]["ci"][0] < rec["life"]["params"][0]["value"] < rec["life"]["params"][0]["ci"][1]
    assert rec["pseudo_failures"] + rec["censored"] == 25 and rec["distribution"] == "weibull"


def test_bad_input_names_the_field() -> None:
    t = [1.0, 2.0, 3.0]
    ok = _columns({"a": (np.array(t), np.array(t)), "b": (np.array(t), 2 * np.array(t))})
    kw = dict(path="linear", direction="up", model="pseudo_failure")
    with pytest.raises(InputError) as e:
        build_model(ok, MAP, threshold=1e6, **kw)
    assert e.value.field == "threshold" and "no unit" in e.value.rule
    with pytest.raises(InputError) as e:
        build_model(ok, MAP, threshold=-5.0, **kw)  # every line already past it at t = 0
    assert e.value.field == "threshold"
    one = {"unit": ["a", "a", "b"], "hours": [1.0, 2.0, 1.0], "wear": [1.0, 2.0, 1.0]}
    with pytest.raises(RowError) as e:
        build_model(one, MAP, threshold=3.0, **kw)
    assert e.value.field == "unit" and e.value.row == 2 and "at least 2" in e.value.rule
    back = {"unit": ["a", "a", "a"], "hours": [1.0, 3.0, 2.0], "wear": [1.0, 2.0, 3.0]}
    with pytest.raises(RowError) as e:
        build_model(back, MAP, threshold=3.0, **kw)
    assert e.value.field == "hours" and e.value.row == 2 and "increase" in e.value.rule
    with pytest.raises(InputError) as e:
        build_model(ok, {"i": "unit", "x": "hours"}, threshold=3.0, **kw)
    assert e.value.field == "mapping.y"
    with pytest.raises(InputError) as e:
        build_model(ok, MAP, threshold=3.0, path="cubic", direction="up", model="pseudo_failure")
    assert e.value.field == "path"
    with pytest.raises(InputError) as e:
        build_model(ok, MAP, threshold=3.0, path="linear", direction="sideways", model="pseudo_failure")
    assert e.value.field == "direction"
    with pytest.raises(InputError) as e:
        build_model(ok, MAP, threshold=3.0, path="power", direction="up", model="random_effects")
    assert e.value.field == "path"
    neg = {"unit": ["a", "b", "a", "b"], "hours": [1.0, 1.0, 2.0, 2.0], "wear": [1.0, 1.0, 2.0, -2.0]}
    with pytest.raises(RowError) as e:
        build_model(neg, MAP, threshold=3.0, path="exponential", direction="up", model="pseudo_failure")
    assert e.value.field == "wear" and e.value.row == 3
