"""The one protocol every fitted model kind follows (after lifelines' parametric fitters: a
kind declares what it is and how to evaluate it; the base derives the rest).

A kind implements `at` (the reliability figures at one time, for covariates or a stress
where it takes them) and `curves` (whole curves), each by delegating to the evaluator its
domain module already has, so no number is derived twice. The base gives `sf`, `cdf`,
`pdf`, `hazard`, `cumulative_hazard` and `quantile` from them, `evaluate` (what the
reliability route answers, refusing inputs the kind does not take), the record round trip,
and the lives a fleet or a diagram block draws (refused by default: only the kinds that
have one life override them).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar

from bathtub.errors import InputError
from bathtub.models import draws
from bathtub.models.record import upgrade
from bathtub.rbd.resolve import model_from_saved


class FittedModel:
    """A fitted model of one kind, made from its record (`from_record`) and back (`to_record`).

    `takes`: what evaluation reads beyond a time, of "covariates" and "stress"; `natural`:
    the curve a kind without a single reliability function is read by (MCF, path), if any;
    `page`: the page kind that draws it.
    """

    kind: ClassVar[str] = ""
    takes: ClassVar[frozenset[str]] = frozenset()
    natural: ClassVar[str | None] = None
    page: ClassVar[str] = "model"  # the share page (and report section) kind that shows it

    def __init__(self, record: Mapping[str, Any]) -> None:
        self.record = upgrade(record)

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> FittedModel:
        return cls(record)

    def to_record(self) -> dict[str, Any]:
        return dict(self.record)

    # ---- what a kind implements --------------------------------------------------------------
    @staticmethod
    def fit(columns: Mapping[str, Any], source: Mapping[str, Any]) -> dict[str, Any]:
        """The record of the model `source` describes, fitted to a dataset's `columns`."""
        raise NotImplementedError  # every registered kind declares its fit

    def at(self, t: float, covariates: Mapping[str, Any] | None = None, stress: float | None = None,
           stress2: float | None = None) -> dict[str, Any]:
        """{t, reliability, failure, hazard, cumulative_hazard, density} at time t (record's unit)."""
        raise InputError("id", f"a {self.kind} model has no single reliability function")

    def curves(self, points: int = 200, covariates: Mapping[str, Any] | None = None, stress: float | None = None,
               stress2: float | None = None) -> dict[str, Any]:
        """Whole curves {x, sf, ff, hf, Hf, df} (with pointwise bands where the kind has them)."""
        raise InputError("id", f"a {self.kind} model has no single reliability function")

    def natural_curve(self, t: Any) -> dict[str, Any]:
        """The kind's own curve at times `t` (a recurrent model's mean cumulative events, a
        degradation model's path); a kind read by its reliability function has none."""
        raise InputError("id", f"a {self.kind} model is read by its reliability function, not a natural curve")

    def band(self, t: Any, confidence: float = 0.95) -> dict[str, Any]:
        """The CDF at times `t` with its pointwise `confidence` band ({t, F, lower, upper})."""
        raise InputError("id", f"a {self.kind} model has no pointwise band of one distribution function")

    def hazard_band(self, t: Any, confidence: float = 0.95) -> dict[str, Any]:
        """The hazard rate at times `t` with its pointwise `confidence` band ({t, h, lower, upper})."""
        raise InputError("id", f"a {self.kind} model has no pointwise band of one hazard rate")

    # ---- derived from `at` -------------------------------------------------------------------
    def sf(self, t: float, **where: Any) -> float | None:
        return self.at(t, **where)["reliability"]  # type: ignore[no-any-return]

    def cdf(self, t: float, **where: Any) -> float | None:
        return self.at(t, **where)["failure"]  # type: ignore[no-any-return]

    def pdf(self, t: float, **where: Any) -> float | None:
        return self.at(t, **where)["density"]  # type: ignore[no-any-return]

    def hazard(self, t: float, **where: Any) -> float | None:
        return self.at(t, **where)["hazard"]  # type: ignore[no-any-return]

    def cumulative_hazard(self, t: float, **where: Any) -> float | None:
        return self.at(t, **where)["cumulative_hazard"]  # type: ignore[no-any-return]

    def quantile(self, p: float, **where: Any) -> float:
        """The time by which a share `p` in (0, 1) has failed: the least t with cdf(t) >= p
        (a step curve's jump time), bracketed by doubling from the curves' span, then bisected
        to the float resolution with cdf(lo) < p <= cdf(hi) kept at every step."""
        if not 0.0 < p < 1.0:
            raise InputError("p", "must lie in (0, 1)")

        def cdf(t: float) -> float:
            value = self.cdf(t, **where)
            return -math.inf if value is None else float(value)

        xs = [float(x) for x in self.curves(200, **where)["x"]]
        lo, hi = 0.0, max(xs[-1], 1e-12) if xs else 1.0
        if cdf(lo) >= p:
            return lo
        for _ in range(200):
            if cdf(hi) >= p:
                break
            lo, hi = hi, hi * 2.0
        else:
            return math.inf  # never reaches p (a limited failure population, say)
        while hi - lo > 1e-13 * hi:
            mid = 0.5 * (lo + hi)
            if mid in (lo, hi):
                break
            lo, hi = (lo, mid) if cdf(mid) >= p else (mid, hi)
        return hi

    def life_metrics(self) -> Any:
        """Life metrics with bounds as the record holds them (B-lives, MTTF, median)."""
        return self.record.get("life") if self.record.get("life") is not None else self.record.get("metrics")

    # ---- the reliability route -----------------------------------------------------------------
    def evaluate(self, model_id: str, t: float | None, points: int = 200, covariates: Mapping[str, Any] | None = None,
                 stress: float | None = None, stress2: float | None = None) -> dict[str, Any]:
        """The answer of `POST /api/v1/models/{id}/reliability`: {at} with `t`, else {curves};
        a stress-taking kind adds its use-level figures, a covariate-taking one echoes them."""
        if "stress" in self.takes:
            if stress is None:
                raise InputError("stress", f"model {model_id} is an ALT model: give the use stress")
        elif stress is not None or stress2 is not None:
            raise InputError("stress", f"model {model_id} is not an ALT model; stress applies to ALT models")
        if covariates and "covariates" not in self.takes and "stress" not in self.takes:
            raise InputError("covariates", f"model {model_id} has no covariates")
        where: dict[str, Any] = {}
        if "covariates" in self.takes:
            where["covariates"] = covariates
        if "stress" in self.takes:
            where |= {"stress": stress, "stress2": stress2}
        out = self.answer(t, points, where)
        if "covariates" in self.takes:
            out["covariates"] = covariates
        return out

    def answer(self, t: float | None, points: int, where: Mapping[str, Any]) -> dict[str, Any]:
        """{at} at time t, else {curves}; a kind that says more at once (ALT's use-level figures
        beside its curve) overrides this."""
        return {"at": self.at(t, **where)} if t is not None else {"curves": self.curves(points, **where)}

    # ---- lives others draw -------------------------------------------------------------------
    def lifetime(self, model_id: str, field: str = "saved_model_id") -> Any:
        """The model as one `distributions.Lifetime` (calculators, the engine)."""
        raise InputError(field, f"model {model_id} is {self.record.get('distribution')!r}; a parametric life model "
                                "is needed")

    def fleet_life(self, model_id: str) -> Any:
        """What a fleet forecast draws its items' lives from: one `Lifetime` for every item, or a
        regression record whose items each take their covariates' curve."""
        try:
            return self.lifetime(model_id, "model_id")
        except InputError as e:
            raise InputError("model_id", e.rule) from None

    def parameter_draws(self, n: int, seed: int, *, first: int = 0, field: str = "id") -> list[dict[str, Any]]:
        """Records whose params are draws `first` .. `first + n - 1` from the fit's sampling
        distribution (`bathtub.models.draws`: normal on the fit's unconstrained scale with its
        covariance; exact pivots where they exist: a complete-data exponential, a power law, an
        HPP; Cox's baseline given its coefficients); draw i depends on (seed, i) only. A kind
        with no sampling distribution to draw refuses on `field`."""
        return draws.parameter_draws(self.record, n, seed, first=first, field=field)

    def block_life(self, model_id: str, field: str, unit: str | None) -> dict[str, Any]:
        """An inline diagram-block model ({distribution_id, params}) standing for this model."""
        return model_from_saved(self.record, model_id, field, unit)
