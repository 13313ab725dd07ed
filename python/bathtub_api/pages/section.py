"""What a page is made of: a section per item (its record, figures and extras) and the owner's
read-only view of the store that the views read records through."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from bathtub_api.registry import Ctx, Registry
from bathtub_api.tables import by_column

# The kinds a link or a report may show; a recurrent model is stored as a model.
KINDS = ("model", "recurrent_model", "dataset", "rbd", "rbd_run", "strategy_analysis", "degradation_model",
         "rcm_study", "fleet", "tracked_fleet")
KIND_TITLES = {"model": "Life model", "recurrent_model": "Recurrent-event model", "dataset": "Dataset",
               "rbd": "Reliability block diagram", "rbd_run": "Availability simulation",
               "strategy_analysis": "Maintenance strategy analysis", "degradation_model": "Degradation model",
               "rcm_study": "RCM worksheet", "fleet": "Fleet forecast", "tracked_fleet": "Tracked fleet",
               "report": "Report",
               "missing": "No longer available"}


@dataclass
class Section:
    kind: str  # the page kind (a recurrent model's is recurrent_model)
    id: str
    name: str
    record: dict[str, Any]
    figures: dict[str, str] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    note: str | None = None  # a report's note, shown above the section (plain text, escaped)

    @property
    def title(self) -> str:
        return KIND_TITLES[self.kind]


@dataclass(frozen=True)
class Source:
    """The item owner's view of the store (read-only) and the registry's handlers."""

    ctx: Ctx
    registry: Registry

    async def get(self, kind: str, **args: Any) -> dict[str, Any]:
        action = self.registry.actions[("get", kind)]
        return await action.handler(self.ctx, action.request.model_validate(args))  # type: ignore[no-any-return]

    async def columns(self, dataset_id: str | None) -> dict[str, list[Any]] | None:
        """The columns of a dataset of the owner's (the data a model was fitted on), or None."""
        if not dataset_id:
            return None
        item = await self.ctx.store.get_item(self.ctx.user.id, "dataset", dataset_id)
        if item is None:
            return None
        rows = await self.ctx.store.dataset_rows(dataset_id)
        return await asyncio.to_thread(by_column, [c["name"] for c in item["body"]["columns"]], rows)

    async def source_of(self, kind: str, item_id: str) -> dict[str, Any]:
        item = await self.ctx.store.get_item(self.ctx.user.id, kind, item_id)
        return {} if item is None else (item["body"].get("source") or item["body"].get("fitted_on") or {})


