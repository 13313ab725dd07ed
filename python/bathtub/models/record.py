"""The one model-record shape every fitted kind answers, its JSON Schema, and the reader that
brings a record stored by an earlier release up to it.

Every record has `kind, distribution, unit, n, params [{name, value, se, ci}], coefficients,
metrics, gof [{id, label, value}], life` plus its kind's own blocks (`validation`/`diagnostics`
for regression, `trend_tests` for recurrent, `stress_life` for ALT, `path`/`threshold` for
degradation). The service adds `id`, `name` and its bookkeeping (`created_at`, `url`, ...).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

NUMBER_OR_NULL = {"type": ["number", "null"]}

PARAM_ROW = {
    "type": "object",
    "required": ["name", "value"],
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "value": NUMBER_OR_NULL,
        "se": NUMBER_OR_NULL,
        "ci": {"type": "array", "items": NUMBER_OR_NULL, "minItems": 2, "maxItems": 2},
    },
    # one name for one thing: an interval is `ci`, never `lower`/`upper` beside the value
    "not": {"anyOf": [{"required": ["lower"]}, {"required": ["upper"]}]},
}

GOF_ROW = {
    "type": "object",
    "required": ["id", "label", "value"],
    "properties": {"id": {"type": "string"}, "label": {"type": "string"}, "value": NUMBER_OR_NULL},
}

# `life`: a life fit's life metrics with bounds (rows {id, label, value, ...}), a degradation
# model's implied life (an object), or null (kinds whose life depends on covariates or stress).
LIFE = {"anyOf": [
    {"type": "null"},
    {"type": "object"},
    {"type": "array", "items": {"type": "object", "required": ["id", "value"]}},
]}

RECORD_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Model record",
    "type": "object",
    "required": ["kind", "distribution", "unit", "n", "params", "coefficients", "metrics", "gof", "life"],
    "properties": {
        "kind": {"type": "string", "minLength": 1},
        "distribution": {"type": "string"},
        "unit": {"type": ["string", "null"]},
        "n": {"type": ["integer", "null"], "minimum": 0},
        "params": {"type": "array", "items": PARAM_ROW},
        "coefficients": {"type": "array", "items": {"type": "object", "required": ["name"]}},
        "metrics": {"type": ["object", "null"]},
        "gof": {"type": "array", "items": GOF_ROW},
        "life": LIFE,
        # a life fit names its matrix's rows ({names, matrix}); ALT and regression store the
        # matrix of their natural coefficients (the `coefficients` rows' order)
        "covariance": {"anyOf": [
            {"type": "null"},
            {"type": "array", "items": {"type": "array", "items": NUMBER_OR_NULL}},
            {"type": "object", "required": ["names", "matrix"],
             "properties": {"names": {"type": "array", "items": {"type": "string"}},
                            "matrix": {"type": "array", "items": {"type": "array", "items": NUMBER_OR_NULL}}}},
        ]},
    },
}

# The blocks a kind must carry besides the common ones (what its pages and tools read).
KIND_BLOCKS: dict[str, tuple[str, ...]] = {
    "regression": ("validation", "diagnostics"),
    "recurrent": ("trend_tests",),
    "alt": ("stress_life",),
    "degradation": ("path", "threshold"),
}


def param_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A parameter row in the one shape: {name, value, se, ci} (a row stored with `lower` and
    `upper` beside its value, as ALT records were, has them moved into `ci`)."""
    out = {k: v for k, v in row.items() if k not in ("lower", "upper")}
    if "ci" not in out and ("lower" in row or "upper" in row):
        lower, upper = row.get("lower"), row.get("upper")
        if lower is not None and upper is not None:
            out["ci"] = [lower, upper]
    return out


def _degradation_blocks(record: Mapping[str, Any]) -> dict[str, Any]:
    """A degradation model's params, gof and covariance, from the part that has them: a
    pseudo-failure model's life distribution, a random-effects model's path parameters."""
    life = record.get("life")
    if record.get("model") == "pseudo_failure" and isinstance(life, Mapping):
        return {"params": life.get("params") or [], "gof": life.get("gof") or [],
                "covariance": life.get("covariance")}
    re = record.get("random_effects")
    if isinstance(re, Mapping):
        ll = re.get("log_likelihood")
        label = "Restricted log-likelihood" if re.get("method") == "reml" else "Log-likelihood"
        gof = [] if ll is None else [{"id": "log_likelihood", "label": label, "value": ll}]
        return {"params": re.get("params") or [], "gof": gof, "covariance": re.get("covariance")}
    return {"params": [], "gof": []}


def upgrade(record: Mapping[str, Any]) -> dict[str, Any]:
    """`record` in the one shape, whatever release stored it: rows with `lower`/`upper` get
    `ci`, a missing or null `params`/`coefficients`/`gof` is an empty list, a missing
    `metrics`/`life`/`unit` null, a record without `kind` a life distribution's (the
    first releases wrote none), a by-mode fit's all-modes fit `pooled` is `pooled_fit` (`pooled` is
    a demand record's pooled PFD). A record already in shape comes back equal."""
    out = dict(record)
    out.setdefault("kind", "distribution")
    if out["kind"] == "degradation":
        for key, value in _degradation_blocks(record).items():
            if out.get(key) is None:
                out[key] = value
    if out["kind"] == "competing_risks" and "pooled" in out and "pooled_fit" not in out:
        # by-mode fits before this release named their all-modes-as-one fit `pooled`, which a demand
        # record uses for its pooled PFD
        out["pooled_fit"] = out.pop("pooled")
    if out["kind"] == "alt" and isinstance(out.get("life"), str):
        # ALT records before the one shape named their life family in `life`
        out["life_distribution"] = out.pop("life")
    out.setdefault("distribution", out.get("model") or "")
    for key in ("params", "coefficients", "gof"):
        if out.get(key) is None:
            out[key] = []
    out["params"] = [param_row(p) for p in out["params"]]
    for key in ("metrics", "life", "unit", "n"):
        out.setdefault(key, None)
    return out
