"""One module per tool; `default_registry()` is the whole service's registry."""

from __future__ import annotations

from bathtub_api.registry import Registry
from bathtub_api.tools import (
    alt,
    datasets,
    degradation,
    examples,
    fleets,
    guide,
    jobs,
    life,
    photos,
    rbd,
    rbd_cheapest,
    rbd_compare,
    rbd_decisions,
    rcm,
    recurrent,
    reports,
    session,
    sharing,
    strategy,
    tracking,
    uploads,
)

MODULES = (guide, datasets, jobs, life, recurrent, alt, degradation, strategy, rbd, rbd_decisions, rbd_cheapest,
           rbd_compare, uploads, photos, fleets, tracking, rcm, reports, sharing, session)


def default_registry() -> Registry:
    reg = Registry()
    for module in MODULES:
        module.register(reg)
    guide.check_pages(reg)
    examples.attach(reg)
    return reg
