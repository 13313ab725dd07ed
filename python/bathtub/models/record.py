"""The one model-record shape every fitted kind answers, its JSON Schema, and the reader that
brings a record stored by an earlier release up to it.

Every record has `kind, distribution, unit, n, params [{name, value, se, ci}], coefficients,
metrics, gof [{id, label, value}], life` plus its kind's own blocks (`validation`/`diagnostics`
for regression, `trend_tests` for recurrent, `stress_life` for ALT, `path`/`threshold` for
degradation). The service adds `id`, `name` and its bookkeeping (`created_at`, `url`, ...).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from bathtub import inference

NUMBER_OR_NULL = {"type": ["number", "null"]}

ROW = {
    "type": "object",
    "required": ["name", "value"],
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "value": NUMBER_OR_NULL,
        "se": NUMBER_OR_NULL,
        "ci": {"anyOf": [{"type": "null"},
                         {"type": "array", "items": NUMBER_OR_NULL, "minItems": 2, "maxItems": 2}]},
    },
    # one name for one thing: an estimate is `value` (never `coef`), its interval `ci` (never
    # `lower`/`upper` beside the value)
    "not": {"anyOf": [{"required": ["lower"]}, {"required": ["upper"]}, {"required": ["coef"]}]},
}
PARAM_ROW = ROW  # a parameter row and a coefficient row are the one row

# A fit's covariance: the matrix of the estimates `names` (on the scale the names say, e.g.
# log_sigma), null where the information matrix was singular.
COVARIANCE = {
    "anyOf": [
        {"type": "null"},
        {"type": "object", "required": ["names", "matrix"], "additionalProperties": False,
         "properties": {"names": {"type": "array", "items": {"type": "string"}},
                        "matrix": {"anyOf": [{"type": "null"},
                                             {"type": "array", "items": {"type": "array", "items": NUMBER_OR_NULL}}]}}},
    ]}

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
        "coefficients": {"type": "array", "items": ROW},
        "metrics": {"type": ["object", "null"]},
        "gof": {"type": "array", "items": GOF_ROW},
        "life": LIFE,
        "covariance": COVARIANCE,
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


def coefficient_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A coefficient row in the one shape {name, value, se, ci, ...}: a regression row stored with
    its estimate under `coef` (as releases before the one row shape wrote it) has it under `value`."""
    out = param_row(row)
    if "coef" in out:
        coef = out.pop("coef")
        out.setdefault("value", coef)
    return out


def covariance_block(record: Mapping[str, Any]) -> dict[str, Any] | None:
    """`record`'s covariance as {names, matrix} (or None): an ALT record stored the bare matrix of
    its natural coefficients (their names are its `coefficients` rows' names), and a parametric
    regression a `scale` beside names that already say it."""
    cov = record.get("covariance")
    if cov is None:
        return None
    if isinstance(cov, Mapping):
        return {"names": list(cov.get("names") or []), "matrix": cov.get("matrix")}
    return {"names": [str(c["name"]) for c in record.get("coefficients") or []], "matrix": cov}


def in_shape(record: Mapping[str, Any]) -> dict[str, Any]:
    """`record` with its rows and covariance read in the one shape, nothing else touched: what a
    reader of estimates and their covariance (parameter draws, ALT bootstrap) calls on a record
    that may predate it. Coefficient rows carry `value`, params `ci`, covariance {names, matrix}."""
    out = dict(record)
    if out.get("coefficients"):
        out["coefficients"] = [coefficient_row(c) for c in out["coefficients"]]
    if out.get("params"):
        out["params"] = [param_row(p) for p in out["params"]]
    if "covariance" in out:
        out["covariance"] = covariance_block(out)
    return out


def _estimate(value: Any) -> Any:
    """An ALT figure stored as {value, se, lower, upper} as {value, se, ci} (param_row's move)."""
    return param_row(value) if isinstance(value, Mapping) else value


def _bootstrap_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A bootstrap row stored as {name, value, percentile: {lower, upper}, bca: {lower, upper}, se}
    in the one shape {name, value, se, ci (percentile), ci_method, bca_ci}."""
    out = {k: v for k, v in row.items() if k not in ("percentile", "bca")}
    if "percentile" in row:
        pct = row.get("percentile") or {}
        out["ci"] = [pct.get("lower"), pct.get("upper")]
        out["ci_method"] = "percentile"
    if "bca" in row:
        bca = row.get("bca")
        out["bca_ci"] = None if not bca else [bca.get("lower"), bca.get("upper")]
    return out


def _alt_blocks(record: dict[str, Any]) -> None:
    """ALT figures and bootstrap rows stored before the one row shape, brought to it in place."""
    if isinstance(record.get("levels"), list):
        record["levels"] = [{**lv, "life": _estimate(lv.get("life"))} if isinstance(lv, Mapping) else lv
                            for lv in record["levels"]]
    use = record.get("use")
    if isinstance(use, Mapping):
        use = dict(use)
        for key in ("life", "mttf"):
            use[key] = _estimate(use.get(key))
        b_names = {float(b["p"]): f"b{100 * float(b['p']):g}" for b in use.get("b_lives") or [] if "p" in b}
        use["b_lives"] = [{"name": b_names.get(float(b.get("p", 0.0)), ""), **param_row(b)}
                          for b in use.get("b_lives") or []]
        use["acceleration_factors"] = [
            {"name": f"af_{a['stress']:g}" + ("" if a.get("stress2") is None else f"_{a['stress2']:g}"),
             **param_row(a)} for a in use.get("acceleration_factors") or []]
        record["use"] = use
    cov = covariance_block(record)
    coefs = record.get("coefficients") or []
    if cov is not None and cov["matrix"] is not None and coefs and all("se" not in c for c in coefs):
        # the natural coefficients were stored as {name, value}: their Wald rows from the stored
        # covariance, as `AltModel.coefficients` writes them today
        zq = inference.z(float(record.get("confidence") or 0.95))
        diag = [row[j] for j, row in enumerate(cov["matrix"])]
        record["coefficients"] = [inference.row(c["name"], float(c["value"]), math.sqrt(v) if v >= 0 else None,
                                                zq=zq, finite=True) for c, v in zip(coefs, diag, strict=True)]
    boot = record.get("bootstrap")
    if isinstance(boot, Mapping) and isinstance(boot.get("intervals"), list):
        record["bootstrap"] = {**boot, "intervals": [_bootstrap_row(r) for r in boot["intervals"]]}


def _recurrent_blocks(record: dict[str, Any]) -> None:
    """A recurrent model's ROCOF and MTBF figures stored as {t, value, lower, upper, method}, as
    {t, value, ci, method}, and an MCF comparison's last difference {time, difference, lower,
    upper} as {time, difference, ci}, in place."""
    if isinstance(record.get("rocof"), Mapping):
        record["rocof"] = param_row(record["rocof"])
    mtbf = record.get("mtbf")
    if isinstance(mtbf, Mapping):
        record["mtbf"] = {k: param_row(v) if isinstance(v, Mapping) else v for k, v in mtbf.items()}
    comparison = record.get("comparison")  # two groups' MCFs: the difference at the last time
    if isinstance(comparison, Mapping) and isinstance(comparison.get("final"), Mapping):
        final = {k: v for k, v in comparison["final"].items() if k not in ("lower", "upper")}
        if "ci" not in final and ("lower" in comparison["final"] or "upper" in comparison["final"]):
            lo, hi = comparison["final"].get("lower"), comparison["final"].get("upper")
            final["ci"] = None if lo is None or hi is None else [lo, hi]
        record["comparison"] = {**comparison, "final": final}


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
    `ci`, coefficient rows' `coef` is `value`, a covariance is {names, matrix} (`in_shape`), a
    missing or null `params`/`coefficients`/`gof` is an empty list, a missing `metrics`/`life`/
    `unit` null, a record without `kind` a life distribution's (the
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
    if out["kind"] == "alt":
        _alt_blocks(out)
    if out["kind"] == "recurrent":
        _recurrent_blocks(out)
    out.setdefault("distribution", out.get("model") or "")
    for key in ("params", "coefficients", "gof"):
        if out.get(key) is None:
            out[key] = []
    out = in_shape(out)
    for key in ("metrics", "life", "unit", "n"):
        out.setdefault(key, None)
    return out
