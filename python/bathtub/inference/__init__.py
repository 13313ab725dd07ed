"""The inference core every fitted kind shares: one maximiser (`maximise`), one finite-difference
Hessian (`hessian`, `hessian_from_gradient`), Newton steps on a model's own gradient and Hessian
(`newton`), one normal quantile for confidence (`z`), one row builder (`row`) that turns an
estimate, its standard error and a confidence into `{name, value, se, ci}`, and one pointwise
band of a positive curve (`log_delta_band`).
Pure functions over numpy; results are frozen dataclasses."""

from bathtub.inference.bands import log_delta_band
from bathtub.inference.hessian import hessian, hessian_from_gradient
from bathtub.inference.loglocscale import standard_terms
from bathtub.inference.maximise import Maximum, Stage, maximise
from bathtub.inference.newton import (
           ITERATION_LIMIT,
           LAST_STEP,
           NO_ASCENT,
           NOT_FINITE,
           Direction,
           NewtonRule,
           Stop,
           newton,
)
from bathtub.inference.rows import interval, row, z

__all__ = ["ITERATION_LIMIT", "LAST_STEP", "NOT_FINITE", "NO_ASCENT", "Direction", "Maximum", "NewtonRule", "Stage",
           "Stop", "hessian", "hessian_from_gradient", "interval", "log_delta_band", "maximise", "newton", "row",
           "standard_terms", "z"]
