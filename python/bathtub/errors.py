"""The library's error types, all under one base so a Python user catches one thing.

`BathtubError` is the base of every refusal: the library's `InputError` (bad input to a pure
function), the engine's `EngineError` (the Rust engine refused a model; raised from
`bathtub._engine`, which imports this class), and the client's `ApiError` (the service
refused a request). Every pure function refuses bad input by raising `InputError(field, rule)`;
the service turns it into a 422 whose `detail` names the field and the rule.
"""

from __future__ import annotations

from collections.abc import Sequence


class BathtubError(Exception):
    """Any refusal by Bathtub: the library, the engine, or the service through the client."""


class EngineError(BathtubError, ValueError):
    """The engine refused its input (a ValueError). Raised by `bathtub._engine`.

    `path` says where, from the outside in: names (a field such as `objective`, or an element
    named by its id such as `node "pump"`) and list positions (ints); empty when the refusal
    is about the input as a whole or the run. `rule` is what was broken. A caller that puts
    the refusal under its own field reads these, never the message, which is the engine's:
    the path's steps then the rule, each after ": " (`designs[2]: node "pump": life: ...`).
    """

    def __init__(self, rule: str, path: Sequence[str | int] = ()) -> None:
        self.path = tuple(path)
        self.rule = rule
        super().__init__(self.below(0))

    def below(self, depth: int) -> str:
        """The refusal as seen from inside the path's first `depth` steps: for
        `designs[2]: node "pump": life: ...`, `below(2)` is `node "pump": life: ...`."""
        text = ""
        for key in self.path[depth:]:
            text += f"[{key}]" if isinstance(key, int) else f"{': ' if text else ''}{key}"
        return f"{text}: {self.rule}" if text else self.rule

    def __reduce__(self) -> tuple[type[EngineError], tuple[str, tuple[str | int, ...]]]:
        # Runs on a cluster raise it in a worker: it must cross back with its path.
        return (EngineError, (self.rule, self.path))


class InputError(BathtubError, ValueError):
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


class ApiError(BathtubError):
    """The service refused a request (raised by `bathtub.client` for every refusal): `status` is
    the HTTP status (or the tool protocol's equivalent), `detail` the refusal's `detail` text."""

    def __init__(self, status: int, detail: str) -> None:
        self.status = status
        self.detail = detail
        super().__init__(f"{status}: {detail}")

    def __reduce__(self) -> tuple[type[ApiError], tuple[int, str]]:
        return (ApiError, (self.status, self.detail))
