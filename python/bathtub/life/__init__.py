"""Life-data analysis: data, parametric fitting with bounds, non-parametric estimates,
demand data, competing risks, and saved-model records. A record of any kind is fitted through
the one entry `bathtub.models.fit` (`saved.fit_columns` is its life, non-parametric and
competing-risks implementation)."""

from bathtub.life.competing import fit_competing_risks
from bathtub.life.data import LifeData
from bathtub.life.demand import analyse_demands
from bathtub.life.evaluate import model_from_params, reliability_at, reliability_curves
from bathtub.life.fit import LifeFit, fit, fit_best
from bathtub.life.nonparametric import kaplan_meier, turnbull
from bathtub.life.records import fit_dataset, import_model
from bathtub.life.saved import evaluate_at, evaluate_curves

__all__ = [
    "LifeData",
    "LifeFit",
    "analyse_demands",
    "evaluate_at",
    "evaluate_curves",
    "fit",
    "fit_best",
    "fit_competing_risks",
    "fit_dataset",
    "import_model",
    "kaplan_meier",
    "model_from_params",
    "reliability_at",
    "reliability_curves",
    "turnbull",
]
