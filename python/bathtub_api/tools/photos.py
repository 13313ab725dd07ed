"""Maintenance photos: POST /api/v1/maintenance/photos?target_id=&caption= (write scope).

A photo is attached to one of the caller's own items (any kind: a dataset, model, diagram,
analysis, ...) or to a part of one: a diagram's block as `<rbd id>/<node id>`. Another user's
item, or a part that does not exist, answers 404. The body is the image itself (JPEG, PNG,
WebP or HEIC, at most 20 MiB) or multipart/form-data with a `file` field. It is decoded and
re-encoded from its pixels (see `bathtub.imports.images`), so no metadata survives; HEIC is
stored as JPEG. Kept at most `photo_max_edge` pixels on its longest side; decoded at most
`photo_decodes` at a time (`bathtub_api.photo_decoder`), which bounds the service's memory.
The owner lists (`list photo`, or GET with `target_id`), reads (`get photo`) and fetches
(GET /api/v1/maintenance/photos/{id}) their photos; nobody else can.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from pathlib import Path
from typing import Annotated, Any

from aiohttp import web
from pydantic import Field

from bathtub.errors import InputError
from bathtub.imports.images import CleanImage, clean_image
from bathtub_api.errors import ApiError, not_found
from bathtub_api.fields import NO_NUL_PATTERN
from bathtub_api.ids import iso, new_id
from bathtub_api.keys import PHOTOS
from bathtub_api.private import files_subdir, write_private
from bathtub_api.registry import Ctx, Registry
from bathtub_api.tools.common import ListRequest, Open, Strict, load_item, page

CHUNK = 256 * 1024
MAX_CAPTION = 500
CONTENT_TYPES = {"jpeg": "image/jpeg", "png": "image/png", "webp": "image/webp"}


class Photo(Open):
    id: str
    target_id: str
    caption: str
    format: str
    width: int
    height: int
    bytes: int
    sha256: str
    created_at: str | None


class PhotoGet(Strict):
    id: Annotated[str, Field(min_length=1, max_length=64)]


class PhotoList(ListRequest):
    target_id: Annotated[str, Field(min_length=1, max_length=200)] | None = None


def _dir(ctx: Ctx) -> Path:
    return files_subdir(ctx.config, "photos")


def _record(item: dict[str, Any]) -> dict[str, Any]:
    b = item["body"]
    return {"id": item["id"], "target_id": b["target_id"], "caption": b["caption"], "format": b["format"],
            "width": b["width"], "height": b["height"], "bytes": b["bytes"], "sha256": b["sha256"],
            "created_at": iso(item["created_at"])}


async def _check_target(ctx: Ctx, target_id: str) -> None:
    """The target is the caller's own item, or `<rbd id>/<node id>` for one of its diagram's blocks."""
    item_id, _, part = target_id.partition("/")
    item = await ctx.store.owned_item(ctx.user.id, item_id)
    if item is None:
        raise ApiError(404, f"target_id: no item of yours with id {item_id!r}")
    if part:
        nodes = item["body"].get("nodes") if item["kind"] == "rbd" else None
        if nodes is None:
            raise ApiError(404, f"target_id: {item_id!r} is a {item['kind']}, which has no parts; photos attach to "
                                "an item, or to a diagram block as <rbd id>/<node id>")
        if not any(n.get("id") == part for n in nodes):
            raise ApiError(404, f"target_id: diagram {item_id!r} has no block {part!r}")


async def _read_image(request: web.Request, limit: int) -> bytes:
    """The raw body, or the multipart `file` field, read in chunks up to `limit` (413 past it)."""
    too_big = ApiError(413, f"file: the image is larger than {limit} bytes")
    if request.content_length is not None and request.content_length > limit + 64 * 1024:
        raise too_big
    if request.content_type.startswith("multipart/"):
        reader = await request.multipart()
        async for part in reader:
            if getattr(part, "name", None) == "file":
                return await _read_limited(part.read_chunk, limit, too_big)  # type: ignore[union-attr]
        raise InputError("file", "multipart body without a `file` field")
    return await _read_limited(lambda size: request.content.read(size), limit, too_big)


async def _read_limited(read: Any, limit: int, too_big: ApiError) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while chunk := await read(CHUNK):
        size += len(chunk)
        if size > limit:
            raise too_big
        chunks.append(chunk)
    if size == 0:
        raise InputError("file", "empty body: send the image bytes")
    return b"".join(chunks)


def register(reg: Registry) -> None:
    @reg.route("POST", "/api/v1/maintenance/photos", scope="write", response=Photo,
               content_types=("image/jpeg", "image/png", "image/webp", "image/heic", "multipart/form-data"),
               query=(("target_id", True, "one of your items, or <rbd id>/<node id> for a diagram block",
                       {"type": "string", "minLength": 1, "maxLength": 200, "pattern": NO_NUL_PATTERN}),
                      ("caption", False, f"at most {MAX_CAPTION} characters",
                       {"type": "string", "maxLength": MAX_CAPTION, "pattern": NO_NUL_PATTERN})),
               summary="Add a photo to one of your items; it is cleaned of camera and location data",
               description="JPEG, PNG, WebP or HEIC, at most 20 MiB (413 past it), raw or multipart `file`. "
                           "Decoded, turned upright by its EXIF orientation, and re-encoded from its pixels: no EXIF, "
                           "GPS, XMP, maker notes or text chunks remain; HEIC is stored as JPEG. Kept at most 3840 "
                           "pixels on the longest side by default (BATHTUB_PHOTO_MAX_EDGE). More than 64 megapixels "
                           "by default (BATHTUB_PHOTO_MAX_PIXELS) is refused with 422 as a decompression bomb. "
                           "At most 2 photos are decoded at once by default (BATHTUB_PHOTO_DECODES); another "
                           "waits up to 30 s (BATHTUB_PHOTO_DECODE_WAIT_SECONDS), then is refused with 503 and "
                           "Retry-After.")
    async def add_photo(ctx: Ctx, request: web.Request) -> dict[str, Any]:
        target_id = request.query.get("target_id", "")
        caption = request.query.get("caption", "")
        if not target_id or len(target_id) > 200 or "\x00" in target_id:
            raise InputError("target_id", "required: one of your items' ids (at most 200 characters)")
        if len(caption) > MAX_CAPTION or "\x00" in caption:
            raise InputError("caption", f"at most {MAX_CAPTION} characters, no NUL")
        await _check_target(ctx, target_id)
        data = await _read_image(request, ctx.config.photo_max_bytes)
        image: CleanImage = await request.app[PHOTOS].run(
            functools.partial(clean_image, max_pixels=ctx.config.photo_max_pixels, max_edge=ctx.config.photo_max_edge),
            data)
        photo_id = new_id("photo")
        path = _dir(ctx) / f"{photo_id}.{image.format}"
        body = {"target_id": target_id, "caption": caption, "format": image.format, "source_format":
                image.source_format, "width": image.width, "height": image.height, "bytes": len(image.data),
                "sha256": image.sha256, "file": path.name}
        try:
            # a disk that fills up mid-write leaves part of the file: it goes with the refusal too
            await asyncio.to_thread(write_private, path, image.data)
            await ctx.store.insert_item(ctx.user.id, "photo", photo_id, caption or "photo", body)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            raise
        item = await load_item(ctx, "photo", photo_id)
        return _record(item)

    @reg.route("GET", "/api/v1/maintenance/photos/{photo_id}", summary="A photo's cleaned image bytes (owner only)")
    async def fetch_photo(ctx: Ctx, request: web.Request) -> web.StreamResponse:
        item = await load_item(ctx, "photo", request.match_info["photo_id"])
        path = _dir(ctx) / item["body"]["file"]
        if not path.exists():
            raise not_found("photo", item["id"])
        return web.FileResponse(path, headers={"Content-Type": CONTENT_TYPES[item["body"]["format"]],
                                               "Cache-Control": "private, no-store",
                                               "X-Content-Type-Options": "nosniff"})

    @reg.route("GET", "/api/v1/maintenance/photos", query=(("target_id", False, "only this target's photos"),),
               summary="The caller's photos, newest last")
    async def list_route(ctx: Ctx, request: web.Request) -> dict[str, Any]:
        target = request.query.get("target_id")
        items = await ctx.store.list_items(ctx.user.id, "photo", 10_000, 0)
        return {"photos": [_record(i) for i in items if target is None or i["body"]["target_id"] == target]}

    @reg.action("get", "photo", request=PhotoGet, response=Photo, selector="kind",
                summary="A photo's record (fetch the image with GET /api/v1/maintenance/photos/{id})")
    async def get_photo(ctx: Ctx, req: PhotoGet) -> dict[str, Any]:
        return _record(await load_item(ctx, "photo", req.id))

    @reg.action("list", "photo", request=PhotoList, selector="kind", summary="The caller's photos")
    async def list_photos(ctx: Ctx, req: PhotoList) -> dict[str, Any]:
        items, next_offset = await page(ctx, "photo", req)
        rows = [_record(i) for i in items if req.target_id is None or i["body"]["target_id"] == req.target_id]
        return {"items": rows, "next_offset": next_offset}
