"""Repairable systems: recurrent-event data, Poisson-process and generalised-renewal models,
trend and goodness-of-fit tests, Nelson's MCF. Pure functions over arrays. A saved model record
(kind `recurrent`) is fitted through the one entry `bathtub.models.fit` (`record.fit_columns`)."""

from bathtub.recurrent.data import EventData, GroupedData, System, events, from_columns
from bathtub.recurrent.record import MODELS, fit_data

__all__ = ["MODELS", "EventData", "GroupedData", "System", "events", "fit_data", "from_columns"]
