"""The currency of cost figures: an ISO 4217 code, optional wherever costs are entered.

Costs are plain numbers to the library (it never converts); the code rides with them so every
page and report can name the unit of a cost. The rule is ISO 4217's form, three capital letters,
so a typo such as "EUR " or "euro" is refused at the door rather than printed beside a figure.
The schema states the same pattern: listing every active code as an enum cost each agent-facing
tool schema that takes costs 1.1 kB of codes, for a unit that is only ever displayed.
"""

from __future__ import annotations

import re
from typing import Any

from bathtub.errors import InputError
from bathtub.validate import Check

PATTERN = "^[A-Z]{3}$"
RULE = "must be an ISO 4217 currency code: three capital letters such as EUR, USD or GBP"
DESCRIPTION = ("Currency of every cost given here, an ISO 4217 code (EUR, USD, GBP, ...): shown beside each "
               "cost figure on pages and reports; never converted.")
_FORM = re.compile(PATTERN)


def _check(v: Any, field: str) -> str:
    if not isinstance(v, str) or not _FORM.fullmatch(v):
        raise InputError(field, RULE)
    return v


CURRENCY = Check(_check, {"type": "string", "pattern": PATTERN, "description": DESCRIPTION})
