"""One row shape and one covariance shape everywhere in every record.

Every kind the registry knows (tests/models/test_protocol.py's reference fits, plus an ALT model
fitted with a use stress and carrying a bootstrap) is walked to its last nested object: an
estimate (an object with a standard error) is a row {name?, value, se, ci} with no `lower`/`upper`
beside its value, a list of estimates names each one, no object keys an estimate `coef`, no object
holds a two-sided interval as numbers `lower` and `upper` (a band's arrays may: they are curves; a
one-sided bound is `lower` alone), and every `covariance` is {names, matrix}.

Records written by the release before this shape (tests/service/data/old_model_records.json: cox
and weibull_ph with `coef` rows and a `scale` beside the covariance, an ALT model with a bare
covariance matrix, {value, se, lower, upper} use-level figures and {percentile, bca} bootstrap rows,
a power law's {t, value, lower, upper} ROCOF, all written by that release's library on
tests/models/reference.py's data) upgrade to what today's library writes for the same fit (the
same structure, the numbers to 1e-9), and draw and evaluate the same."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pytest

from bathtub import models
from bathtub.alt.bootstrap import bootstrap_bounds
from bathtub.alt.columns import alt_arrays
from bathtub.alt.data import alt_data
from bathtub.alt.model import AltModel
from bathtub.models.record import COVARIANCE, RECORD_SCHEMA, ROW
from tests.models.reference import ALT, GROWTH, LIFE
from tests.models.test_protocol import CASES


def same_record(a: Any, b: Any, rel: float = 1e-9) -> bool:
    """Equal in structure, strings, integers and None, and in every float to `rel`: the old records
    were written by that release on that day's numpy and scipy, and their later releases move the
    optimum's last bits (seen: 1e-16 in a coefficient, 1e-11 in a standard error, which a numerical
    Hessian's differences amplify); a changed formula or a dropped factor moves them by far more."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same_record(a[k], b[k], rel) for k in a)
    if isinstance(a, (list, tuple)):
        return (isinstance(b, (list, tuple)) and len(a) == len(b)
                and all(same_record(x, y, rel) for x, y in zip(a, b, strict=True)))
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (np.isfinite(a) and abs(a - b) <= rel * max(abs(a), abs(b)))
    return type(a) is type(b) and a == b


OLD = json.loads((Path(__file__).parents[1] / "service" / "data" / "old_model_records.json").read_text())
ALT_MAP = {"x": "x", "c": "c", "stress": "temp"}


def _objects(value: Any, where: str = "") -> Iterator[tuple[str, Any]]:
    """Every object and list in `value` with its path, depth first."""
    if isinstance(value, dict):
        yield where, value
        for k, v in value.items():
            yield from _objects(v, f"{where}.{k}")
    elif isinstance(value, list):
        yield where, value
        for i, v in enumerate(value):
            yield from _objects(v, f"{where}[{i}]")


def shape_faults(record: dict[str, Any]) -> list[str]:
    """Where `record` leaves the one row or covariance shape (empty: it keeps to them)."""
    faults = []
    for where, obj in _objects(record):
        if isinstance(obj, list):
            rows = [o for o in obj if isinstance(o, dict) and "se" in o]
            faults += [f"{where}: an estimate without a name" for o in rows if not o.get("name")]
            continue
        if "coef" in obj:
            faults.append(f"{where}: keyed coef")
        if all(isinstance(obj.get(k), (int, float)) for k in ("lower", "upper")):
            faults.append(f"{where}: an interval as lower and upper, not ci")
        if "se" in obj:
            named = {"name": "row", **obj}
            try:
                jsonschema.validate(named, ROW)
            except jsonschema.ValidationError as e:
                faults.append(f"{where}: {e.message}")
        if "covariance" in obj and obj["covariance"] is not None and not isinstance(obj["covariance"], list):
            try:
                jsonschema.validate(obj["covariance"], COVARIANCE)
            except jsonschema.ValidationError as e:
                faults.append(f"{where}.covariance: {e.message}")
        elif "covariance" in obj and isinstance(obj["covariance"], list) and where.count(".") == 0:
            faults.append(f"{where}.covariance: a bare matrix")
    return faults


def _alt_with_use_and_bootstrap() -> dict[str, Any]:
    record = models.fit("weibull_arrhenius", ALT, ALT_MAP, options={"use_stress": 30.0, "b_lives": [0.1]})
    model = AltModel.from_record(record)
    data = alt_data(model.spec, *alt_arrays(ALT, ALT_MAP, "weibull_arrhenius"))
    record["bootstrap"] = bootstrap_bounds(model, data, count=200, seed=5, use=(30.0, None), b_lives=[0.1])
    return record


@pytest.mark.parametrize(("kind", "columns", "source", "where"), CASES,
                         ids=[f"{c[0]}-{c[2].get('distribution') or c[2].get('model')}" for c in CASES])
def test_every_row_of_every_kind_is_one_shape(kind: str, columns: dict[str, Any], source: dict[str, Any],
                                             where: dict[str, Any]) -> None:
    record = models.fit_source(columns, source)
    assert shape_faults(record) == []  # as the fit writes it, before any upgrade
    assert shape_faults(models.upgrade(record)) == []


def test_alt_use_level_figures_and_bootstrap_rows_are_one_shape() -> None:
    record = _alt_with_use_and_bootstrap()
    assert shape_faults(record) == []
    jsonschema.validate(models.upgrade(record), RECORD_SCHEMA)
    cov = record["covariance"]
    assert cov["names"] == [c["name"] for c in record["coefficients"]] == ["a", "b1", "ln_sigma"]
    # the coefficient rows' standard errors are the covariance's diagonal
    se = np.sqrt(np.diag(np.asarray(cov["matrix"])))
    assert [c["se"] for c in record["coefficients"]] == pytest.approx(se.tolist(), rel=1e-15)
    assert [b["name"] for b in record["use"]["b_lives"]] == ["b10"]


def test_the_walk_finds_each_old_shape() -> None:
    """The walk is not vacuous: each shape the previous release wrote is a fault it names."""
    faults = " ".join(shape_faults(OLD["cox"]) + shape_faults(OLD["alt_use_bootstrap"])
                      + shape_faults(OLD["crow_amsaa"]))
    for needle in ("keyed coef", ".covariance: a bare matrix", "use.life", "b_lives[0]",
                   "bootstrap.intervals[0].percentile", ".rocof", ".mtbf.instantaneous"):
        assert needle in faults, needle
    assert "Additional properties" in " ".join(shape_faults(OLD["weibull_ph"]))  # `scale` beside names and matrix


@pytest.mark.parametrize("distribution", ["cox", "weibull_ph"])
def test_an_old_regression_record_upgrades_to_todays_record(distribution: str) -> None:
    old = OLD[distribution]
    assert all("coef" in c and "value" not in c for c in old["coefficients"])  # as that release stored it
    new = models.fit(distribution, LIFE, {"x": "x", "c": "c"}, covariates=["z"])
    up = models.upgrade(old)
    assert shape_faults(up) == [] and same_record(up, models.upgrade(new))
    jsonschema.validate(up, RECORD_SCHEMA)
    at = {"covariates": {"z": 0.5}}
    assert same_record(models.from_record(old).at(700.0, **at), models.from_record(new).at(700.0, **at))
    # its parameters draw as today's record's do (the same law, the same numbers for a seed)
    assert same_record(models.parameter_draws(old, 3, 11), models.parameter_draws(new, 3, 11))


def test_an_old_alt_record_with_use_and_bootstrap_upgrades_to_todays_record() -> None:
    old = OLD["alt_use_bootstrap"]
    assert isinstance(old["covariance"], list) and "percentile" in old["bootstrap"]["intervals"][0]
    new = _alt_with_use_and_bootstrap()
    up = models.upgrade(old)
    assert shape_faults(up) == []
    for key in ("params", "coefficients", "covariance", "levels", "use", "bootstrap"):
        assert same_record(up[key], new[key]), key
    assert same_record(models.from_record(old).at(5000.0, stress=30.0), models.from_record(new).at(5000.0, stress=30.0))


def test_an_old_power_law_record_upgrades_to_todays_record() -> None:
    """ROCOF and MTBF figures were {t, value, lower, upper, method}; they are {t, value, ci, method}."""
    old = OLD["crow_amsaa"]
    assert "lower" in old["rocof"] and "ci" not in old["rocof"]
    new = models.fit("crow_amsaa", GROWTH, {"t": "t"})
    up = models.upgrade(old)
    assert shape_faults(up) == [] and same_record(up, models.upgrade(new))
    assert up["rocof"]["ci"] == [old["rocof"]["lower"], old["rocof"]["upper"]]
    assert same_record(models.parameter_draws(old, 3, 11), models.parameter_draws(new, 3, 11))


def test_an_old_mcf_comparison_upgrades_to_a_ci() -> None:
    """Two groups' MCF difference at the last time was {time, difference, lower, upper}; the
    previous release's record is today's with the pair as `ci` (the fit's own numbers, unchanged)."""
    columns = {"t": GROWTH["t"], "s": ["s1", "s2", "s3", "s4"] * 3, "g": ["a", "a", "b", "b"] * 3}
    new = models.fit("mcf", columns, {"t": "t", "system": "s", "group": "g"})
    final = new["comparison"]["final"]
    old = {**new, "comparison": {**new["comparison"], "final": {
        "time": final["time"], "difference": final["difference"], "lower": final["ci"][0], "upper": final["ci"][1]}}}
    assert "interval as lower and upper" in " ".join(shape_faults(old))
    assert same_record(models.upgrade(old), models.upgrade(new)) and shape_faults(new) == []
