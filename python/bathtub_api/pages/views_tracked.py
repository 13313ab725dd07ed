"""The page of a tracked fleet: each item's age (its last measurement), its predicted remaining
life with the interval, and the predicted crossing of the threshold — items ranked by when they
are expected to cross, soonest first (the order maintenance is planned in)."""

from __future__ import annotations

import asyncio
from typing import Any

from bathtub_api.errors import ApiError
from bathtub_api.pages import plots_operations
from bathtub_api.pages.section import Section, Source

ITEMS_SHOWN = 5000  # a page lists at most this many items (get tracked_fleet's own page limit)


def crossing(item: dict[str, Any]) -> dict[str, Any] | None:
    """An item's predicted crossing time (age + remaining life: median and interval), or None."""
    life = item.get("remaining_life") or {}
    age, med = life.get("as_of"), life.get("median")
    if age is None or med is None:
        return None
    lo, hi = (life.get("interval") or [None, None])[:2]
    return {"median": age + med, "lower": None if lo is None else age + lo, "upper": None if hi is None else age + hi}


async def tracked_view(src: Source, item_id: str) -> Section:
    record = await src.get("tracked_fleet", id=item_id, items_limit=ITEMS_SHOWN)
    items = [{**i, "crossing": crossing(i)} for i in record.get("items") or []]
    # soonest expected crossing first; items without a prediction (no measurements) last, by name
    items.sort(key=lambda i: (i["crossing"] is None, (i["crossing"] or {}).get("median") or 0.0, i["name"]))
    record = {**record, "items": items}
    sec = Section("tracked_fleet", item_id, record["name"], record)
    try:
        model = await src.get("degradation_model", id=record["model_id"])
        sec.extra["model"] = {"name": model.get("name"), "threshold": model.get("threshold"),
                              "direction": model.get("direction"), "model": model.get("model")}
    except ApiError as e:
        if e.status != 404:
            raise
        sec.extra["model"] = None  # the model was deleted since: the stored predictions still read
    ranked = [i for i in items if i["crossing"] is not None]
    if ranked:
        sec.figures["crossings"] = await asyncio.to_thread(
            plots_operations.crossings, [i["name"] for i in ranked], [i["remaining_life"]["as_of"] for i in ranked],
            [i["crossing"]["median"] for i in ranked], [i["crossing"]["lower"] for i in ranked],
            [i["crossing"]["upper"] for i in ranked], float(record["probability"]), record.get("unit"),
            f"{record['name']}: predicted threshold crossings")
    return sec
