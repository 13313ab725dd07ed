"""The library's one input-error type.

Every pure function refuses bad input by raising `InputError(field, rule)`; the service
turns it into a 422 whose `detail` names the field and the rule, and a Python user gets
a `ValueError` they can catch.
"""

from __future__ import annotations


class InputError(ValueError):
    """Bad input: `field` is a dotted path to the offending value, `rule` what it broke."""

    def __init__(self, field: str, rule: str) -> None:
        self.field = field
        self.rule = rule
        super().__init__(f"{field}: {rule}" if field else rule)

    def __reduce__(self) -> tuple[type[InputError], tuple[str, str]]:
        # Work runs in worker processes: the error must cross back intact.
        return (InputError, (self.field, self.rule))


class RowError(InputError):
    """Bad input in one row of a column: `field` names the column, `row` the 0-based row.

    The message reads `field: row N: rule`, so a caller that holds the rows under another
    name (an ingest's `rows[i].column`) can restate it with `row` and `rule`."""

    def __init__(self, field: str, row: int, rule: str) -> None:
        super().__init__(field, f"row {row}: {rule}")
        self.row = row
        self.row_rule = rule

    def __reduce__(self) -> tuple[type[RowError], tuple[str, int, str]]:  # type: ignore[override]
        return (RowError, (self.field, self.row, self.row_rule))


def prefixed(prefix: str, err: InputError) -> InputError:
    """The same error seen from a containing object (`prefix.field`)."""
    field = f"{prefix}.{err.field}" if err.field else prefix
    return InputError(field, err.rule)
