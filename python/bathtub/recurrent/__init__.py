"""Repairable systems: recurrent-event data, Poisson-process and generalised-renewal models,
trend and goodness-of-fit tests, Nelson's MCF. Pure functions over arrays; `record.fit_columns`
builds the saved model record the service stores (kind `recurrent`)."""

from bathtub.recurrent.data import EventData, GroupedData, System, events, from_columns
from bathtub.recurrent.record import MODELS, fit_columns, fit_data

__all__ = ["MODELS", "EventData", "GroupedData", "System", "events", "fit_columns", "fit_data", "from_columns"]
