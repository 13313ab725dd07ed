"""What every tool module shares: strict request models, open response models, loading an
owned item (404 for anyone else's), and paging through a kind of item."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from bathtub_api.errors import not_found
from bathtub_api.registry import Ctx


class Strict(BaseModel):
    """Requests: unknown fields and wrong JSON types are refused, naming the field."""

    model_config = ConfigDict(extra="forbid", strict=True)


class Open(BaseModel):
    """Responses whose documented fields may be followed by documented extras."""

    model_config = ConfigDict(extra="allow")


class ListRequest(Strict):
    offset: Annotated[int, Field(ge=0)] = 0
    limit: Annotated[int, Field(ge=1, le=500)] = 100


async def load_item(ctx: Ctx, kind: str, item_id: str) -> dict[str, Any]:
    item = await ctx.store.get_item(ctx.user.id, kind, item_id)
    if item is None:
        raise not_found(kind, item_id)
    return item


async def page(ctx: Ctx, kind: str, req: ListRequest) -> tuple[list[dict[str, Any]], int | None]:
    """One page of the caller's items of a kind, oldest first, and the next offset (or None)."""
    items = await ctx.store.list_items(ctx.user.id, kind, req.limit + 1, req.offset)
    more = len(items) > req.limit
    return items[: req.limit], req.offset + req.limit if more else None
