"""Parametric life-data analysis: data, fitting, bounds, evaluation and competing risks."""

from bathtub.life.data import LifeData
from bathtub.life.fit import LifeFit, fit, fit_best

__all__ = ["LifeData", "LifeFit", "fit", "fit_best"]
