"""Parametric life-data analysis: data, fitting, bounds, evaluation and competing risks."""

from bathtub.life.competing import fit_competing_risks
from bathtub.life.data import LifeData
from bathtub.life.evaluate import model_from_params, reliability_at, reliability_curves
from bathtub.life.fit import LifeFit, fit, fit_best
from bathtub.life.records import fit_dataset, import_model

__all__ = [
    "LifeData",
    "LifeFit",
    "fit",
    "fit_best",
    "fit_competing_risks",
    "fit_dataset",
    "import_model",
    "model_from_params",
    "reliability_at",
    "reliability_curves",
]
