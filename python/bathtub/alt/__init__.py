"""Accelerated life tests: life–stress relationships with Weibull, lognormal and exponential
lives, fitted by maximum likelihood with right censoring; use-level figures with Fisher
bounds; bootstrap bounds through the engine (`bootstrap`)."""

from bathtub.alt.data import AltData, alt_data
from bathtub.alt.fit import fit_alt
from bathtub.alt.model import AltModel, use_level
from bathtub.alt.relationships import MODEL_IDS, RELATIONSHIPS, is_alt_model, parse_model

__all__ = ["MODEL_IDS", "RELATIONSHIPS", "AltData", "AltModel", "alt_data", "fit_alt", "is_alt_model",
           "parse_model", "use_level"]
