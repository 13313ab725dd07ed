"""What every tool module shares: strict request models, open response models, loading an
owned item (404 for anyone else's), and paging through a kind of item."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, GetJsonSchemaHandler, field_validator, model_validator
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from bathtub.errors import InputError
from bathtub_api.errors import not_found
from bathtub_api.fields import DATE_RE, integer, text
from bathtub_api.registry import Ctx


class Strict(BaseModel):
    """Requests: unknown fields and wrong JSON types are refused, naming the field.

    `exactly_one` names alternative fields of which one, and only one, is given (not null);
    `companions` the fields that may come only with one of them, `requires` those that must.
    One declaration drives both the check and the published schema (a `oneOf`), so the two
    cannot disagree. `cross_field` states, as `field: rule` in the refusal's own words, the
    rules between values that JSON Schema cannot (failures at most demands): published as the
    schema's `x-cross-field` and in its description.
    """

    model_config = ConfigDict(extra="forbid", strict=True)
    exactly_one: ClassVar[tuple[str, ...]] = ()
    companions: ClassVar[dict[str, tuple[str, ...]]] = {}
    requires: ClassVar[dict[str, tuple[str, ...]]] = {}
    cross_field: ClassVar[tuple[str, ...]] = ()

    @model_validator(mode="after")
    def _one_source(self) -> Strict:
        names = self.exactly_one
        if not names:
            return self
        alternatives = " or ".join((", ".join(names[:-1]), names[-1]))
        given = [n for n in names if getattr(self, n) is not None]
        if not given:
            raise InputError(names[0], f"give exactly one of {alternatives}")
        if len(given) > 1:
            raise InputError(given[0], f"give {' or '.join(given)}, not both" if len(given) == 2 else
                             f"give exactly one of {alternatives}, not all of {', '.join(given)}")
        for other in names:
            for extra in self.companions.get(other, ()):
                if other != given[0] and getattr(self, extra) is not None:
                    raise InputError(extra, f"goes with {other}, not with {given[0]}")
        for needed in self.requires.get(given[0], ()):
            if getattr(self, needed) is None:
                raise InputError(needed, f"required with {given[0]}")
        return self

    @classmethod
    def __get_pydantic_json_schema__(cls, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        out = handler(schema)
        if cls.exactly_one:
            target = handler.resolve_ref_schema(out)
            branches = []
            for name in cls.exactly_one:
                needed = [name, *cls.requires.get(name, ())]
                props: dict[str, Any] = {n: {"not": {"type": "null"}} for n in needed}
                for other in cls.exactly_one:
                    if other != name:
                        for absent in (other, *cls.companions.get(other, ())):
                            props[absent] = {"type": "null"}
                branches.append({"required": needed, "properties": props})
            target["oneOf"] = branches
        if cls.cross_field:
            handler.resolve_ref_schema(out)["x-cross-field"] = list(cls.cross_field)
        return out


class Open(BaseModel):
    """Responses whose documented fields may be followed by documented extras."""

    model_config = ConfigDict(extra="allow")


# ISO 8601 as `datetime.fromisoformat` reads it: a calendar date, or a date-time with optional
# seconds, fraction and zone. Published as the field's pattern, so a schema-valid instant parses.
INSTANT_PATTERN = (rf"^{DATE_RE}"
                   r"([T ]"
                   r"([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\.[0-9]{1,6})?)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])?)?$")


def parse_instant(text: str) -> float:
    """An ISO 8601 date or date-time as seconds since the epoch (no zone: UTC), as the store keeps
    creation times."""
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError("must be an ISO 8601 date or date-time, e.g. 2026-11-20 or 2026-11-20T08:00:00Z") \
            from None
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()


class ListRequest(Strict):
    """The one listing request every `list/<kind>` takes: a page (`offset`, `limit`; the answer's
    `next_offset` is the next page's offset, or null on the last) and two filters."""

    offset: integer(ge=0) = Field(0, description="items to skip, in creation order")
    limit: integer(ge=1, le=500) = Field(100, description="items in the page, at most 500")
    name_contains: text(min_length=1, max_length=200) | None = Field(
        None, description="only items whose name contains this text, ignoring case")
    created_after: text(max_length=64, pattern=INSTANT_PATTERN) | None = Field(
        None, description="only items created after this instant (ISO 8601 date or date-time; without a zone, "
                          "UTC)")

    @field_validator("created_after")
    @classmethod
    def _instant(cls, v: str | None) -> str | None:
        if v is not None:
            parse_instant(v)
        return v

    def filters(self) -> dict[str, Any]:
        # created_at is shown to the microsecond (rounded): an item's own created_at sent back must
        # leave that item out, so "after" means after the instant's microsecond.
        after = parse_instant(self.created_after) + 0.5e-6 if self.created_after else None
        return {"name_contains": self.name_contains, "created_after": after}


async def load_item(ctx: Ctx, kind: str, item_id: str) -> dict[str, Any]:
    item = await ctx.store.get_item(ctx.user.id, kind, item_id)
    if item is None:
        raise not_found(kind, item_id)
    return item


async def page(ctx: Ctx, kind: str, req: ListRequest) -> tuple[list[dict[str, Any]], int | None]:
    """One page of the caller's items of a kind, oldest first, and the next offset (or None)."""
    items = await ctx.store.list_items(ctx.user.id, kind, req.limit + 1, req.offset, **req.filters())
    more = len(items) > req.limit
    return items[: req.limit], req.offset + req.limit if more else None
