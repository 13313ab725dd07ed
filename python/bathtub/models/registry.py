"""The library's registry of fitted-model kinds: kind id -> its model class (fit,
from_record, evaluate). The service asks it which kind a fit or a saved record is, and never
branches on kind itself."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from bathtub.alt import columns as alt_columns
from bathtub.alt import relationships as alt_relationships
from bathtub.alt.relationships import is_alt_model
from bathtub.distributions import FAMILIES, MIXTURE
from bathtub.errors import InputError
from bathtub.life import data as life_data
from bathtub.life import saved
from bathtub.models import kinds
from bathtub.models.protocol import FittedModel
from bathtub.recurrent import data as recurrent_data
from bathtub.recurrent import record as recurrent
from bathtub.regression import records as regression

# Every distribution id a fit takes, with the mapping roles the fits read, from the domains' own
# declarations: life distributions, regression models, recurrent-event models, ALT models.
FIT_DISTRIBUTIONS = tuple(dict.fromkeys((*FAMILIES, MIXTURE, "best", *saved.NONPARAMETRIC, *regression.MODELS,
                                         *recurrent.MODELS, *alt_relationships.MODEL_IDS)))
FIT_ROLES = tuple(dict.fromkeys((*life_data.ROLES, saved.MODE_ROLE, *regression.ROLES, *recurrent_data.ROLES,
                                 *alt_columns.ROLES)))

KINDS: dict[str, type[FittedModel]] = {k.kind: k for k in (
    kinds.LifeDistribution, kinds.Nonparametric, kinds.CompetingRisks, kinds.Regression, kinds.Accelerated,
    kinds.Recurrent, kinds.Degradation, kinds.Demand)}


def is_regression(source: Mapping[str, Any]) -> bool:
    """A fit names covariates, a formula or Cox options: a regression model."""
    return source.get("covariates") is not None or source.get("formula") is not None or bool(source.get("cox_options"))


def choose_kind(source: Mapping[str, Any]) -> str:
    """The kind a fit `source` ({distribution, mapping, options, covariates?, formula?, ...})
    makes: a regression model with covariates or a formula, a recurrent-event model for those
    ids (crow_amsaa, kijima1, mcf, ...), an ALT model for a life_relationship id, competing
    risks with a failure-mode column, non-parametric for kaplan_meier / turnbull, else a life
    distribution (a family, mixture or best). `kind`, when the source names one, wins."""
    if source.get("kind") is not None:
        if source["kind"] not in KINDS:
            raise InputError("kind", f"must be one of {', '.join(KINDS)}")
        return str(source["kind"])
    dist = source.get("distribution")
    if is_regression(source):
        return "regression"
    if dist in recurrent.MODELS:
        return "recurrent"
    if is_alt_model(dist):
        return "alt"
    if isinstance(source.get("mapping"), Mapping) and saved.MODE_ROLE in source["mapping"]:
        return "competing_risks"
    if dist in saved.NONPARAMETRIC:
        return "nonparametric"
    return "distribution"


def fit_source(columns: Mapping[str, Sequence[Any]], source: Mapping[str, Any]) -> dict[str, Any]:
    """The record of the model `source` describes, fitted to a dataset's columns."""
    return KINDS[choose_kind(source)].fit(columns, source)


def fit(distribution: str | None, columns: Mapping[str, Sequence[Any]], mapping: Mapping[str, str] | None = None,
        *, kind: str | None = None, options: Mapping[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    """One entry point for every kind: fit `distribution` (a family, best, mixture,
    kaplan_meier, turnbull, a regression, recurrent or ALT model id) to `columns` read through
    `mapping` (role -> column). `extra`: covariates, formula, cox_options (regression); path,
    threshold, direction, model, life_distribution (kind degradation); batches, confidence,
    scores (kind demand). Returns the model record."""
    source = {"distribution": distribution, "mapping": mapping, "options": options, "kind": kind, **extra}
    return fit_source(columns, source)


def kind_of(record: Mapping[str, Any]) -> type[FittedModel]:
    kind = record.get("kind") or "distribution"  # the first releases stored life fits without a kind
    if kind not in KINDS:
        raise InputError("id", f"a {kind} model is not a fitted model kind this release reads")
    return KINDS[kind]


def from_record(record: Mapping[str, Any]) -> FittedModel:
    """The fitted model a stored record holds (a record of an earlier release is upgraded)."""
    return kind_of(record).from_record(record)


def evaluate(record: Mapping[str, Any], model_id: str, t: float | None, points: int = 200,
             covariates: Mapping[str, Any] | None = None, stress: float | None = None,
             stress2: float | None = None) -> dict[str, Any]:
    """What the reliability route answers for a saved record (see `FittedModel.evaluate`)."""
    return from_record(record).evaluate(model_id, t, points, covariates, stress, stress2)


def parameter_draws(record: Mapping[str, Any], n: int, seed: int, *, first: int = 0,
                    field: str = "id") -> list[dict[str, Any]]:
    """n records of `record`'s kind whose params are drawn from its fit's sampling distribution
    (see `FittedModel.parameter_draws`); draw i depends on (seed, i) only."""
    return from_record(record).parameter_draws(n, seed, first=first, field=field)


def columns_read(columns: dict[str, Any], source: Mapping[str, Any]) -> dict[str, Any]:
    """Only the columns a fit of `source` reads, numeric ones as float arrays: what crosses to a
    worker process is pickled while holding the GIL, so it is kept small (a large dataset's
    columns would otherwise stall the event loop for a second). A regression model reads
    columns named in its formula, strata and clusters too, so it is given them all."""
    mapping = source.get("mapping")
    if is_regression(source):
        return columns
    if not isinstance(mapping, dict) or not all(isinstance(c, str) and c in columns for c in mapping.values()):
        return columns  # the fit names what is wrong, listing every column
    extra = (source.get("options") or {}).get("covariates")
    out: dict[str, Any] = {}
    # failure modes, causes and system ids are labels: 3 must stay "3", not "3.0"
    labels = {mapping.get(saved.MODE_ROLE), mapping.get("cause"), mapping.get("system")}
    wanted = set(mapping.values())
    if isinstance(extra, list):  # columns named outside the mapping (recurrent covariates)
        wanted |= {c for c in extra if isinstance(c, str) and c in columns}
    for name in wanted:
        values = columns[name]
        numeric = name not in labels and all(type(v) in (int, float) for v in values)
        arr = np.asarray(values) if numeric else None
        out[name] = arr.astype(float) if arr is not None and arr.dtype.kind in "iuf" else values
    return out
