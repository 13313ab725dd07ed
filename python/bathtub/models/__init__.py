"""One protocol for every fitted model kind, one registry of kinds, one record shape.

`fit(distribution, columns, mapping, ...)` fits any kind; `from_record(record)` gives the
`FittedModel` a stored record holds (records of earlier releases upgraded by
`record.upgrade`); `evaluate` answers the reliability route; `KINDS` lists the kinds.
"""

from bathtub.models.protocol import FittedModel
from bathtub.models.record import KIND_BLOCKS, RECORD_SCHEMA, upgrade
from bathtub.models.registry import (
    FIT_DISTRIBUTIONS,
    FIT_ROLES,
    KINDS,
    choose_kind,
    columns_read,
    evaluate,
    fit,
    fit_source,
    from_record,
    is_regression,
    kind_of,
    parameter_draws,
)

__all__ = ["FIT_DISTRIBUTIONS", "FIT_ROLES", "KINDS", "KIND_BLOCKS", "RECORD_SCHEMA", "FittedModel", "choose_kind",
           "columns_read", "evaluate", "fit", "fit_source", "from_record", "is_regression", "kind_of",
           "parameter_draws", "upgrade"]
