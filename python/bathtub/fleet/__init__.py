"""Fleets: how many items will fail in each coming period, and how fast each item is used.

`forecast` turns a life model, each item's current use and its usage rate into expected
failures per period with an interval (items independent); `usage` applies meter readings to
the items' estimated usage rates by the spec's rules. Pure functions over plain data.
"""

from bathtub.fleet.forecast import Forecast, forecast
from bathtub.fleet.usage import PERIOD_DAYS, ItemUsage, apply_reading, rate_used

__all__ = ["PERIOD_DAYS", "Forecast", "ItemUsage", "apply_reading", "forecast", "rate_used"]
