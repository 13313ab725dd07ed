"""Maintenance-strategy calculators: optimal replacement, shut plans, failure finding,
demonstration-test planning. Pure functions taking plain values, returning JSON-ready dicts."""

from bathtub.strategy.demonstration import demonstration_test, mtbf_test_plan
from bathtub.strategy.failure_finding import failure_finding_interval, mean_unavailability
from bathtub.strategy.replacement import optimal_replacement
from bathtub.strategy.shuts import shut_calendar, shut_plan

__all__ = [
    "demonstration_test",
    "failure_finding_interval",
    "mean_unavailability",
    "mtbf_test_plan",
    "optimal_replacement",
    "shut_calendar",
    "shut_plan",
]
