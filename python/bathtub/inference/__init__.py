"""The inference core every fitted kind shares: one maximiser (`maximise`), one finite-difference
Hessian (`hessian`, `hessian_from_gradient`), one normal quantile for confidence (`z`) and one
row builder (`row`) that turns an estimate, its standard error and a confidence into
`{name, value, se, ci}`, and one pointwise band of a positive curve (`log_delta_band`).
Pure functions over numpy; results are frozen dataclasses."""

from bathtub.inference.bands import log_delta_band
from bathtub.inference.hessian import hessian, hessian_from_gradient
from bathtub.inference.loglocscale import standard_terms
from bathtub.inference.maximise import Maximum, Stage, maximise
from bathtub.inference.rows import interval, row, z

__all__ = ["Maximum", "Stage", "hessian", "hessian_from_gradient", "interval", "log_delta_band", "maximise", "row",
           "standard_terms", "z"]
