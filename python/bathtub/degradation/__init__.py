"""Degradation analysis: paths fitted per unit to readings, a critical threshold, pseudo-failure
times with a fitted life distribution, a random-effects path model with its failure-time law,
and each running unit's conditional remaining life from its own readings (joint model). A saved
model record (kind `degradation`) is fitted through `bathtub.models.fit` (`model.build_model`)."""

from bathtub.degradation.crossing import LineCrossing, Residual
from bathtub.degradation.joint import conditional_life, life_table, posterior, summarise
from bathtub.degradation.model import MODELS
from bathtub.degradation.paths import PATHS, Path, Readings, readings_from_columns, unit_lines
from bathtub.degradation.pseudo import crossing_times, fit_pseudo_failures, pseudo_failures
from bathtub.degradation.random_effects import fit_random_effects, population_life

__all__ = [
    "MODELS",
    "PATHS",
    "LineCrossing",
    "Path",
    "Readings",
    "Residual",
    "conditional_life",
    "crossing_times",
    "fit_pseudo_failures",
    "fit_random_effects",
    "life_table",
    "population_life",
    "posterior",
    "pseudo_failures",
    "readings_from_columns",
    "summarise",
    "unit_lines",
]
