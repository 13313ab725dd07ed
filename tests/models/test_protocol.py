"""Every kind the model registry knows: fitted on a small reference dataset, its record checked
against the one record schema (the library's and the service's published `ModelRecord`),
round-tripped through `from_record`/`to_record`, and evaluated at a time (at covariates or a
stress where the kind takes them) against the domain's own closed forms. A kind added to the
registry without a reference dataset here fails `test_every_kind_has_a_reference`."""

from __future__ import annotations

import json
import math
from typing import Any

import jsonschema
import numpy as np
import pytest
from scipy import stats

from bathtub import models
from bathtub.errors import InputError
from bathtub.models import KIND_BLOCKS, KINDS, RECORD_SCHEMA
from tests.models.reference import ALT, CRACKS, DEGRADATION, GROWTH, LIFE

# kind -> [(columns, fit source, where to evaluate)]; several sources where a kind's fits differ
REFERENCE: dict[str, list[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]]] = {
    "distribution": [(LIFE, {"distribution": "weibull", "mapping": {"x": "x", "c": "c"}}, {})],
    "nonparametric": [(LIFE, {"distribution": "kaplan_meier", "mapping": {"x": "x", "c": "c"}}, {})],
    "competing_risks": [(LIFE, {"distribution": "weibull", "mapping": {"x": "x", "c": "c", "mode": "mode"}}, {})],
    "regression": [(LIFE, {"distribution": d, "mapping": {"x": "x", "c": "c"}, "covariates": ["z"]},
                    {"covariates": {"z": 0.5}}) for d in ("cox", "weibull_ph", "lognormal_aft", "additive_hazards")],
    "alt": [(ALT, {"distribution": "weibull_arrhenius", "mapping": {"x": "x", "c": "c", "stress": "temp"}},
             {"stress": 30.0, "stress2": None})],
    "recurrent": [(GROWTH, {"distribution": d, "mapping": {"t": "t"}}, {}) for d in ("crow_amsaa", "mcf")],
    "degradation": [(CRACKS, DEGRADATION, {}), (CRACKS, {**DEGRADATION, "model": "random_effects"}, {})],
    "demand": [({}, {"kind": "demand", "batches": [{"demands": 100, "failures": 2}, {"demands": 80, "failures": 1}]},
                {})],
}
CASES = [(kind, *case) for kind, cases in REFERENCE.items() for case in cases]


def _published_schema() -> dict[str, Any]:
    """The service's published model record (`GET /api/v1/models/{id}`), as OpenAPI states it."""
    from bathtub_api.tools.life import ModelRecord

    return ModelRecord.model_json_schema()


def test_every_kind_has_a_reference() -> None:
    assert set(REFERENCE) == set(KINDS), "a kind in the registry needs a reference dataset here"


@pytest.mark.parametrize(("kind", "columns", "source", "where"), CASES,
                         ids=[f"{c[0]}-{c[2].get('distribution') or c[2].get('model')}" for c in CASES])
def test_kind_fits_round_trips_and_evaluates(kind: str, columns: dict[str, Any], source: dict[str, Any],
                                              where: dict[str, Any]) -> None:
    assert models.choose_kind(source) == kind
    record = models.fit_source(columns, source)
    assert record["kind"] == kind
    shaped = models.upgrade(record)
    jsonschema.validate(shaped, RECORD_SCHEMA)
    # the service adds id, name and its bookkeeping; the rest is the library's record as it is
    service = {"id": "model_1", "name": "reference", **shaped, "unit": shaped["unit"] or "hours"}
    jsonschema.validate(service, _published_schema())
    for block in KIND_BLOCKS.get(kind, ()):
        assert block in shaped, (kind, block)
    assert json.loads(json.dumps(shaped)) == shaped  # plain JSON all through

    model = models.from_record(record)
    assert type(model) is KINDS[kind] and model.kind == kind
    again = models.from_record(json.loads(json.dumps(model.to_record())))
    assert again.to_record() == model.to_record() == shaped
    assert models.upgrade(shaped) == shaped  # a record in shape is its own upgrade

    if kind in ("recurrent", "demand"):
        with pytest.raises(InputError, match="no single reliability function"):
            model.at(100.0)
        return
    t = 700.0 if kind != "degradation" else 380.0
    at = model.at(t, **where)
    assert at["reliability"] == pytest.approx(1.0 - at["failure"], abs=1e-12)
    assert again.at(t, **where) == at
    if at["cumulative_hazard"] is not None and at["reliability"] > 0:
        assert at["cumulative_hazard"] == pytest.approx(-math.log(at["reliability"]), rel=1e-9, abs=1e-12)
    curves = model.curves(50, **where)
    assert len(curves["x"]) == len(curves["sf"]) >= 2  # step curves (Kaplan–Meier, Cox) have a point a step
    # the median is the least time by which half have failed (a step curve's: its jump's time)
    q = model.quantile(0.5, **where)
    assert model.cdf(q, **where) >= 0.5 - 1e-9
    assert model.cdf(q * (1 - 1e-9), **where) <= 0.5 + 1e-6


def test_life_distribution_against_scipy() -> None:
    """The protocol's figures are the family's: Weibull sf, pdf, hazard and quantile by scipy."""
    model = models.from_record(models.fit("weibull", LIFE, {"x": "x", "c": "c"}))
    p = {r["name"]: r["value"] for r in model.record["params"]}
    ref = stats.weibull_min(p["beta"], scale=p["alpha"])
    assert model.sf(900.0) == pytest.approx(ref.sf(900.0), rel=1e-12)
    assert model.pdf(900.0) == pytest.approx(ref.pdf(900.0), rel=1e-10)
    assert model.hazard(900.0) == pytest.approx(ref.pdf(900.0) / ref.sf(900.0), rel=1e-10)
    assert model.quantile(0.1) == pytest.approx(ref.ppf(0.1), rel=1e-9)
    band = model.band([500.0, 900.0])
    assert all(lo < f < hi for lo, f, hi in zip(band["lower"], band["F"], band["upper"]))
    assert model.lifetime("m").sf(900.0) == pytest.approx(ref.sf(900.0), rel=1e-12)


def test_alt_at_stress_is_the_use_level_weibull() -> None:
    model = models.from_record(models.fit("weibull_arrhenius", ALT, {"x": "x", "c": "c", "stress": "temp"}))
    p = {r["name"]: r for r in model.record["params"]}
    assert all(set(r) <= {"name", "value", "se", "ci"} for r in p.values())
    alpha = p["A"]["value"] * math.exp(p["B"]["value"] / 30.0)
    ref = stats.weibull_min(p["beta"]["value"], scale=alpha)
    assert model.sf(5000.0, stress=30.0) == pytest.approx(ref.sf(5000.0), rel=1e-10)
    out = model.evaluate("m", 5000.0, stress=30.0)
    assert out["at"]["reliability"] == pytest.approx(ref.sf(5000.0), rel=1e-10) and "use" in out
    with pytest.raises(InputError, match="give the use stress"):
        model.evaluate("m", 5000.0)


def test_recurrent_natural_curve_is_the_power_law() -> None:
    model = models.from_record(models.fit("crow_amsaa", GROWTH, {"t": "t"}))
    p = {r["name"]: r["value"] for r in model.record["params"]}
    curve = model.natural_curve([100.0, 1000.0])
    assert curve["mcf"] == pytest.approx([p["lambda"] * t ** p["beta"] for t in (100.0, 1000.0)], rel=1e-12)
    mcf = models.from_record(models.fit("mcf", GROWTH, {"t": "t"}))
    assert mcf.natural_curve([0.0, 14.0, 15.0, 1050.0])["mcf"] == [0.0, 0.0, 1.0, 12.0]  # one event per time


def test_degradation_record_has_params_gof_and_a_path() -> None:
    record = models.upgrade(models.fit_source(CRACKS, DEGRADATION))
    assert record["params"] == record["life"]["params"] and record["gof"] == record["life"]["gof"]
    assert record["covariance"] == record["life"]["covariance"]
    model = models.from_record(record)
    unit = record["units"][0]
    path = model.natural_curve([0.0, 100.0])["units"][0]["value"]
    assert path == pytest.approx([unit["intercept"], unit["intercept"] + 100.0 * unit["slope"]], rel=1e-12)
    mu, sigma = (next(r["value"] for r in record["params"] if r["name"] == n) for n in ("mu", "sigma"))
    assert model.sf(380.0) == pytest.approx(stats.norm.sf((math.log(380.0) - mu) / sigma), rel=1e-10)


def test_an_old_alt_record_upgrades_to_ci_rows() -> None:
    """ALT records stored before this release carry {name, value, se, lower, upper} rows."""
    record = models.fit("weibull_arrhenius", ALT, {"x": "x", "c": "c", "stress": "temp"})
    old = {**record, "params": [{"name": r["name"], "value": r["value"], "se": r["se"], "lower": r["ci"][0],
                                 "upper": r["ci"][1]} for r in record["params"]]}
    del old["gof"]
    shaped = models.upgrade(old)
    jsonschema.validate(shaped, RECORD_SCHEMA)
    assert shaped["params"] == record["params"] and shaped["gof"] == []
    assert models.from_record(old).sf(5000.0, stress=30.0) == models.from_record(record).sf(5000.0, stress=30.0)


def test_evaluate_refuses_what_a_kind_does_not_take() -> None:
    life = models.fit("weibull", LIFE, {"x": "x", "c": "c"})
    with pytest.raises(InputError, match="has no covariates"):
        models.evaluate(life, "m", 10.0, covariates={"z": 1.0})
    with pytest.raises(InputError, match="stress applies to ALT models"):
        models.evaluate(life, "m", 10.0, stress=30.0)
    with pytest.raises(InputError, match="not a fitted model kind"):
        models.from_record({"kind": "hologram"})
    reg = models.fit("cox", LIFE, {"x": "x", "c": "c"}, covariates=["z"])
    assert models.from_record(reg).fleet_life("m")["distribution"] == "cox"
    additive = models.fit("additive_hazards", LIFE, {"x": "x", "c": "c"}, covariates=["z"])
    with pytest.raises(InputError, match="a fleet takes"):
        models.from_record(additive).fleet_life("m")
    assert np.isfinite(models.from_record(life).fleet_life("m").sf(100.0))


def test_block_lives_are_what_a_diagram_draws() -> None:
    """A life fit is its family and parameters; a power-law growth model the Weibull it implies
    under minimal repair (alpha = lambda^(-1/beta)); a regression model needs its covariates,
    so it is no block life on its own."""
    life = models.from_record(models.fit("weibull", LIFE, {"x": "x", "c": "c"}))
    block = life.block_life("m", "model.saved_model_id", None)
    assert block == {"distribution_id": "weibull",
                     "params": [{"name": r["name"], "value": r["value"]} for r in life.record["params"]]}
    growth = models.from_record(models.fit("crow_amsaa", GROWTH, {"t": "t"}))
    p = {r["name"]: r["value"] for r in growth.record["params"]}
    block = growth.block_life("m", "model.saved_model_id", None)
    assert block["distribution_id"] == "weibull"
    assert block["params"][0]["value"] == pytest.approx(p["lambda"] ** (-1.0 / p["beta"]), rel=1e-12)
    cox = models.from_record(models.fit("cox", LIFE, {"x": "x", "c": "c"}, covariates=["z"]))
    with pytest.raises(InputError, match="saved parametric life model is needed"):
        cox.block_life("m", "model.saved_model_id", None)
