"""A saved fitted model as a strategy calculator's life: a life distribution as it is, a regression
model at a unit's covariates, a repairable system's fitted process as the life of a new unit.

- Regression (weibull_ph, lognormal_aft, loglogistic_aft): the unit's own life at `covariates`
  (`bathtub.regression.lives`, the law a diagram block on the model takes): Weibull PH at x is the
  Weibull of shape β and scale α·e^{−x·b/β}; an AFT model shifts log time by x·γ. A Cox model's life
  is a step survival that stops at its last failure time, and the other regressions have no single
  parametric life (additive hazards, frailty, splines, Fine–Gray): they are refused.
- Recurrent processes (what a diagram block on them takes): a power law Λ(t) = λ·t^β is minimal
  repair of a Weibull(α = λ^(−1/β), β) life, so policy `minimal_repair` prices exactly the fitted
  process, and the plans that replace at failure (age, block, shut plans, failure finding) read a
  new unit's life to its first failure, that same Weibull; with covariates z, λ·e^{z·γ}. A Kijima
  GRP's new unit follows its Weibull baseline, but its repairs restore part of the age (q), so
  `minimal_repair` (q = 1) is refused for it. An HPP's life is the exponential of its rate.
  Log-linear, Duane and MCF models have no life the calculators evaluate and are refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bathtub import models
from bathtub.distributions import Lifetime
from bathtub.errors import InputError
from bathtub.recurrent.covariates import weibull_at
from bathtub.regression import lives

GRP = ("kijima1", "kijima2")
POWER_LAWS = ("crow_amsaa", "power_law")
# the regression kinds with one parametric life at a unit's covariates (Cox: a step survival)
REGRESSION_LIVES = tuple(k for k in lives.LIFE_MODELS if k != "cox")
COX_RULE = ("a cox model's life is the Breslow step survival, which stops at the last failure time: the "
            f"calculators need a parametric life (fit {', '.join(REGRESSION_LIVES)})")
KIJIMA_MINIMAL_RULE = ("a kijima model's repairs restore part of the age (its q), not none: minimal repair (q = 1) "
                       "is not the process it fitted; give policy age or block (replace at failure: a new unit "
                       "follows its Weibull baseline)")
NO_COVARIATES_RULE = "has no covariates (a regression model or a power law with covariates has)"


def _life(block: Mapping[str, Any]) -> Lifetime:
    return Lifetime.of(block["distribution_id"], {p["name"]: float(p["value"]) for p in block["params"]})


def _covariates_of(record: Mapping[str, Any], covariates: Mapping[str, Any] | None, names: list[str],
                   model_id: str) -> dict[str, Any]:
    """The unit's values, each named covariate required and no other taken."""
    given = dict(covariates or {})
    for name in given:
        if name not in names:
            raise InputError(f"covariates.{name}", f"not a covariate of model {model_id} (covariates: "
                                                   f"{', '.join(names)})")
    for name in names:
        if name not in given:
            raise InputError(f"covariates.{name}", f"required: model {model_id} needs every covariate "
                                                   f"({', '.join(names)})")
    return given


def _regression(record: Mapping[str, Any], model_id: str, covariates: Mapping[str, Any] | None,
                field: str) -> Lifetime:
    dist = record.get("distribution")
    if dist == "cox":
        raise InputError(field, f"model {model_id}: {COX_RULE}")
    if dist not in REGRESSION_LIVES:
        lives.check_life_model(record, model_id, field)  # names why this kind has no life
    values = _covariates_of(record, covariates, list(lives.variables(record)), model_id)
    return _life(lives.life_at(record, lives.linear_predictor(record, values, "covariates")))


def _recurrent(record: Mapping[str, Any], model_id: str, covariates: Mapping[str, Any] | None, policy: str | None,
               field: str) -> Lifetime:
    dist = record.get("distribution")
    if dist in GRP and policy == "minimal_repair":
        raise InputError("policy", f"model {model_id}: {KIJIMA_MINIMAL_RULE}")
    if record.get("covariate_effects") and dist in POWER_LAWS:
        alpha, beta = weibull_at(record["covariate_effects"], covariates, "covariates")
        return Lifetime.of("weibull", {"alpha": alpha, "beta": beta})
    if covariates:
        raise InputError("covariates", f"model {model_id} {NO_COVARIATES_RULE}")
    if dist == "loglinear":
        raise InputError(field, f"model {model_id} is a log-linear process: a new unit's life (hazard "
                                "e^(g0 + g1 t)) is no family the calculators evaluate; fit crow_amsaa")
    # the block life a diagram takes: power law, Kijima baseline or HPP; others refused there
    return _life(models.from_record(record).block_life(model_id, field, None))


def saved_life(record: Mapping[str, Any], model_id: str, *, covariates: Mapping[str, Any] | None = None,
               policy: str | None = None, field: str = "saved_model_id") -> Lifetime:
    """The life a calculator reads from a saved model's `record` (refusals name `field`, `covariates.x`
    or `policy`); `policy` is optimal replacement's (None for the other calculators)."""
    kind = record.get("kind") or "distribution"
    if kind == "regression":
        return _regression(record, model_id, covariates, field)
    if kind == "recurrent":
        return _recurrent(record, model_id, covariates, policy, field)
    if covariates:
        raise InputError("covariates", f"model {model_id} {NO_COVARIATES_RULE}")
    life: Lifetime = models.from_record(record).lifetime(model_id, field)
    return life
