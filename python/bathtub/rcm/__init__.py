"""Reliability-centred maintenance (RCM) worksheets per SAE JA1011 practice, as pure functions
over plain data: functions → functional failures → failure modes → decisions.

`worksheet` validates and merges worksheets and draws their outline and scheduled tasks;
`evidence` checks a decision against the saved item it cites; `units` converts intervals.
"""

from bathtub.rcm.evidence import STATES, check_evidence
from bathtub.rcm.units import convert
from bathtub.rcm.worksheet import (
    OUTLINE_MODES,
    build,
    find_function,
    merge,
    mode_count,
    outline,
    public,
    scheduled_tasks,
)

__all__ = ["OUTLINE_MODES", "STATES", "build", "check_evidence", "convert", "find_function", "merge",
           "mode_count", "outline", "public", "scheduled_tasks"]
