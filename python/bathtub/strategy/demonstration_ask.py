"""A demonstration-test request once checked: what is given and how answers are worded. Both
plan families read it (attribute plans in `demonstration`, constant-rate plans in
`rate_plans`), so it lives apart from either."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bathtub.errors import InputError


@dataclass(frozen=True)
class Ask:
    """One request, checked: what is given (None where not) and how the answer is worded."""

    reliability: float | None
    confidence: float
    confidence_given: bool
    failures: int | None
    mission: float | None
    test_multiple: float | None
    test_time_per_unit: float | None
    units: int | None
    shape: float | None
    mtbf: Any
    design_reliability: float | None
    design_mtbf: float | None
    discrimination_ratio: float | None
    producer_risk: float | None
    total_test_time: float | None
    solve_for: str | None
    sided: str
    termination: str
    shape_interval: tuple[float, float] | None
    unit: str | None

    @property
    def time_unit(self) -> str:
        if self.mission is None:
            return "missions"
        return self.unit or "time units"

    def given(self, field: str, value: Any, solving: str) -> None:
        if value is not None:
            raise InputError(field, f"is what solve_for {solving} asks for; leave it out")
