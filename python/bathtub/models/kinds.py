"""Every fitted kind as an object of the one protocol, each delegating to the fit and the
evaluators its domain module already has (no number is computed here twice)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from bathtub.alt import columns as alt_columns
from bathtub.alt.evaluate import at_stress
from bathtub.degradation.joint import conditional_life
from bathtub.degradation.model import build_model
from bathtub.degradation.paths import Path
from bathtub.distributions import FAMILIES, MIXTURE, Lifetime
from bathtub.errors import InputError
from bathtub.life import saved
from bathtub.life.demand import analyse_demands
from bathtub.life.evaluate import reliability_at, reliability_curves
from bathtub.life.paper import cdf_band, hazard_band
from bathtub.models.protocol import FittedModel
from bathtub.recurrent import record as recurrent
from bathtub.recurrent.expected import cumulative_intensity
from bathtub.regression import kinds as regression_kinds
from bathtub.regression import records as regression

Columns = Mapping[str, Sequence[Any]]


class LifeDistribution(FittedModel):
    """A parametric life distribution (a family or a mixture; offset, zero-inflated, LFP)."""

    kind = "distribution"

    @staticmethod
    def fit(columns: Columns, source: Mapping[str, Any]) -> dict[str, Any]:
        return saved.fit_columns(columns, source["mapping"], source["distribution"], source.get("options"))

    def at(self, t: float, covariates: Mapping[str, Any] | None = None, stress: float | None = None,
           stress2: float | None = None) -> dict[str, Any]:
        return saved.evaluate_at(self.record, t)

    def curves(self, points: int = 200, covariates: Mapping[str, Any] | None = None, stress: float | None = None,
               stress2: float | None = None) -> dict[str, Any]:
        return saved.evaluate_curves(self.record, points)

    def band(self, t: Any, confidence: float = 0.95) -> dict[str, Any]:
        """The CDF at times `t` with its pointwise `confidence` band ({t, F, lower, upper})."""
        return cdf_band(self.record, np.asarray(t, dtype=float), confidence)

    def hazard_band(self, t: Any, confidence: float = 0.95) -> dict[str, Any]:
        """h(t) at times `t` with its pointwise band: the delta method on ln h(t) ({t, h, lower, upper})."""
        return hazard_band(self.record, np.asarray(t, dtype=float), confidence)

    def lifetime(self, model_id: str, field: str = "saved_model_id") -> Lifetime:
        dist = self.record.get("distribution")
        opts = self.record.get("options") or {}
        if dist not in FAMILIES and dist != MIXTURE:
            return super().lifetime(model_id, field)
        if opts.get("zi") or opts.get("lfp"):
            raise InputError(field, "zero-inflated and limited-population models cannot be used here")
        values = {p["name"]: p["value"] for p in self.record["params"]}
        return Lifetime.of(dist, values, self.record.get("base_distribution"))


class Nonparametric(LifeDistribution):
    """Kaplan–Meier or Turnbull: a step survival curve, no density."""

    kind = "nonparametric"

    def band(self, t: Any, confidence: float = 0.95) -> dict[str, Any]:
        curve = self.record["curve"]
        return {"t": curve["time"], "F": [1.0 - s for s in curve["sf"]],
                "lower": [None if u is None else 1.0 - u for u in curve.get("upper") or []],
                "upper": [None if lo is None else 1.0 - lo for lo in curve.get("lower") or []]}

    def hazard_band(self, t: Any, confidence: float = 0.95) -> dict[str, Any]:
        raise InputError("id", "a step survival curve has no density, so no hazard rate to band")

    def lifetime(self, model_id: str, field: str = "saved_model_id") -> Lifetime:
        return FittedModel.lifetime(self, model_id, field)


class CompetingRisks(LifeDistribution):
    """One parametric distribution per failure mode, acting in series."""

    kind = "competing_risks"

    def band(self, t: Any, confidence: float = 0.95) -> dict[str, Any]:
        raise InputError("id", "competing risks have no joint covariance: bands are per mode")

    def hazard_band(self, t: Any, confidence: float = 0.95) -> dict[str, Any]:
        raise InputError("id", "competing risks have no joint covariance: bands are per mode")

    def lifetime(self, model_id: str, field: str = "saved_model_id") -> Lifetime:
        return FittedModel.lifetime(self, model_id, field)


class Regression(FittedModel):
    """A life regression (cox, weibull_ph, AFT, royston_parmar, additive_hazards,
    proportional_odds, buckley_james, frailty): one unit's curves for its covariates."""

    kind = "regression"
    takes = frozenset({"covariates"})

    @staticmethod
    def fit(columns: Columns, source: Mapping[str, Any]) -> dict[str, Any]:
        return regression.fit_regression(columns, source["mapping"], source["distribution"], source.get("covariates"),
                                         source.get("formula"), source.get("cox_options"), source.get("options"))

    def at(self, t: float, covariates: Mapping[str, Any] | None = None, stress: float | None = None,
           stress2: float | None = None) -> dict[str, Any]:
        return regression_kinds.evaluate_at(self.record, t, covariates)

    def curves(self, points: int = 200, covariates: Mapping[str, Any] | None = None, stress: float | None = None,
               stress2: float | None = None) -> dict[str, Any]:
        return regression_kinds.evaluate_curves(self.record, points, covariates)

    def fleet_life(self, model_id: str) -> dict[str, Any]:
        dist = self.record.get("distribution")
        if dist not in regression_kinds.PER_UNIT:
            raise InputError("model_id", f"model {model_id} is a {dist} regression model; a fleet takes "
                                         f"{', '.join(regression_kinds.PER_UNIT)} (an item's curve for its covariates)")
        return self.record


class Accelerated(FittedModel):
    """An accelerated life test model: a life distribution whose scale follows a stress
    relationship; evaluated at a use stress."""

    kind = "alt"
    takes = frozenset({"stress"})

    @staticmethod
    def fit(columns: Columns, source: Mapping[str, Any]) -> dict[str, Any]:
        return alt_columns.fit_columns(columns, source["mapping"], source["distribution"], source.get("options"))

    def at(self, t: float, covariates: Mapping[str, Any] | None = None, stress: float | None = None,
           stress2: float | None = None) -> dict[str, Any]:
        return at_stress(self.record, stress, stress2, t)["at"]  # type: ignore[no-any-return]

    def curves(self, points: int = 200, covariates: Mapping[str, Any] | None = None, stress: float | None = None,
               stress2: float | None = None) -> dict[str, Any]:
        return at_stress(self.record, stress, stress2, None, points)["curves"]  # type: ignore[no-any-return]

    def answer(self, t: float | None, points: int, where: Mapping[str, Any]) -> dict[str, Any]:
        # the use-level figures and the curve come from one evaluation at the stress
        return at_stress(self.record, where["stress"], where["stress2"], t, points)


class Recurrent(FittedModel):
    """A recurrent-event model (Crow-AMSAA, log-linear, HPP, Duane, GRP, MCF): read by its mean
    cumulative events Λ(t), not by one unit's reliability."""

    kind = "recurrent"
    natural = "mcf"
    page = "recurrent_model"

    @staticmethod
    def fit(columns: Columns, source: Mapping[str, Any]) -> dict[str, Any]:
        return recurrent.fit_columns(columns, source["mapping"], source["distribution"], source.get("options"))

    def natural_curve(self, t: Any) -> dict[str, Any]:
        """{t, mcf}: the model's Λ(t), or the non-parametric MCF's step value (null where a
        generalised renewal model has no closed form)."""
        t = np.asarray(t, dtype=float)
        lam = cumulative_intensity(self.record, t)
        curve = self.record.get("curve")
        if lam is None and isinstance(curve, Mapping) and curve.get("time"):
            time = np.asarray(curve["time"], dtype=float)
            steps = np.asarray(curve["mcf"], dtype=float)
            idx = np.searchsorted(time, t, side="right") - 1
            lam = np.where(idx >= 0, steps[np.maximum(idx, 0)], 0.0)
        values = [None] * t.size if lam is None else [float(v) for v in lam]
        return {"t": t.tolist(), "mcf": values}


class Degradation(FittedModel):
    """A degradation model (pseudo-failure times with a life distribution, or a random-effects
    path model — the joint model's base): its implied life, and its paths."""

    kind = "degradation"
    natural = "path"
    page = "degradation_model"

    @staticmethod
    def fit(columns: Columns, source: Mapping[str, Any]) -> dict[str, Any]:
        return build_model(columns, source["mapping"], path=source["path"], threshold=source["threshold"],
                           direction=source["direction"], model=source["model"],
                           life_distribution=source.get("life_distribution", "weibull"), options=source.get("options"),
                           potential_failure=source.get("potential_failure"))

    def at(self, t: float, covariates: Mapping[str, Any] | None = None, stress: float | None = None,
           stress2: float | None = None) -> dict[str, Any]:
        if self.record.get("model") == "pseudo_failure":
            return reliability_at(self.record["life"], t)
        # a new unit's life: the random-effects crossing law from age 0 with no readings of its own
        life = conditional_life(self.record, 0.0, [])
        s = float(life.sf(float(t)))
        return {"t": float(t), "reliability": s, "failure": float(life.cdf(float(t))), "hazard": None,
                "cumulative_hazard": -math.log(s) + 0.0 if s > 0 else None, "density": None,
                "null_reason": {"hazard": "the crossing law is given by its distribution function only",
                                "density": "the crossing law is given by its distribution function only"}}

    def curves(self, points: int = 200, covariates: Mapping[str, Any] | None = None, stress: float | None = None,
               stress2: float | None = None) -> dict[str, Any]:
        if self.record.get("model") == "pseudo_failure":
            return reliability_curves(self.record["life"], points)
        quantiles = [q["t"] for q in self.record["life"]["quantiles"] if q["t"] is not None]
        x = np.linspace(0.0, max(quantiles) * 1.2, points)
        rows = [self.at(float(v)) for v in x]
        return {"x": x.tolist(), **{k: [r[f] for r in rows] for k, f in (
            ("sf", "reliability"), ("ff", "failure"), ("hf", "hazard"), ("Hf", "cumulative_hazard"),
            ("df", "density"))}}

    def natural_curve(self, t: Any) -> dict[str, Any]:
        """{t, threshold, units: [{id, value}]}: each unit's fitted path at times `t`."""
        path = Path.parse(self.record["path"])
        t = np.asarray(t, dtype=float)
        units = [{"id": u["id"], "value": [float(v) for v in path.value(u["intercept"], u["slope"], t)]}
                 for u in self.record.get("units") or [] if "intercept" in u and "slope" in u]
        return {"t": t.tolist(), "threshold": self.record["threshold"], "units": units}


class Demand(FittedModel):
    """Probability of failure on demand (binomial): no time function."""

    kind = "demand"

    @staticmethod
    def fit(columns: Columns, source: Mapping[str, Any]) -> dict[str, Any]:
        analysis = analyse_demands(source["batches"], confidence=source.get("confidence", 0.95),
                                   scores=source.get("scores")).to_dict()
        return {**analysis, "kind": "demand", "distribution": "binomial", "n": analysis["pooled"]["demands"],
                "unit": "demands", "params": [], "coefficients": [], "gof": [], "metrics": None}
