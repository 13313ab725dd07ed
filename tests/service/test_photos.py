"""Maintenance photos on both stores: metadata stripped (read back with Pillow and, where installed,
exiftool), orientation applied before stripping, PNG text chunks dropped, bombs and oversize bodies
refused, targets checked (own item or diagram block; another user's is 404)."""

from __future__ import annotations

import asyncio
import dataclasses
import io
import shutil
import struct
import subprocess
import threading
import zlib
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from PIL import Image, PngImagePlugin
from pillow_heif import register_heif_opener

from bathtub_api.app import create_app
from bathtub_api.cli import token_create
from bathtub_api.config import Config
from bathtub_api.errors import ApiError
from bathtub_api.keys import PHOTOS
from bathtub_api.photo_decoder import PhotoDecoder
from bathtub_api.registry import Registry
from tests.conftest import Api
from tests.service.test_errors import assert_refusal

register_heif_opener()
GPS = {1: "N", 2: (59.0, 20.0, 1.5), 3: "E", 4: (18.0, 4.0, 2.0)}


def exif_with_gps(orientation: int = 1) -> bytes:
    exif = Image.Exif()
    exif[0x010F] = "Canon"  # Make
    exif[0x0110] = "EOS 5D"  # Model
    exif[0x0112] = orientation
    exif[0x8825] = GPS
    return exif.tobytes()


def photo(fmt: str, size: tuple[int, int] = (64, 48), **save: Any) -> bytes:
    img = Image.new("RGB", size, (200, 30, 30))
    img.paste((20, 20, 220), (0, 0, size[0] // 2, size[1]))  # left half blue: orientation shows
    out = io.BytesIO()
    img.save(out, fmt, **save)
    return out.getvalue()


def png_bomb(width: int = 40_000, height: int = 40_000) -> bytes:
    """A PNG whose header claims width × height pixels; the data is a token amount."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\x00" * 1000)) + \
        chunk(b"IEND", b"")


async def dataset(api: Api) -> str:
    status, out = await api.post("/api/v1/datasets", {"name": "pumps", "csv": "t\n1\n"})
    assert status == 200
    return out["id"]


async def post_photo(api: Api, target: str, data: bytes, caption: str = "", content_type: str = "image/jpeg",
                     ) -> tuple[int, Any]:
    return await api.call("POST", "/api/v1/maintenance/photos", params={"target_id": target, "caption": caption},
                          data=io.BytesIO(data), headers={"Content-Type": content_type})


def stored(config: Config, record: dict[str, Any]) -> Path:
    return Path(config.files_dir()) / "photos" / f"{record['id']}.{record['format']}"


def assert_clean(path: Path) -> Image.Image:
    img = Image.open(io.BytesIO(path.read_bytes()))
    assert not img.getexif(), dict(img.getexif())
    assert not {"exif", "xmp", "XML:com.adobe.xmp", "icc_profile", "comment"} & set(img.info), img.info
    if shutil.which("exiftool"):  # an independent reader of every metadata block there is
        tags = subprocess.run(["exiftool", "-a", "-G1", "-s", str(path)], capture_output=True, text=True,
                              check=True).stdout
        for word in ("GPS", "Canon", "EOS", "Make", "Model", "Orientation", "XMP", "MakerNotes", "secret"):
            assert word not in tags, tags
    return img


async def test_jpeg_with_gps_comes_back_clean_and_upright(api: Api, config: Config) -> None:
    target = await dataset(api)
    data = photo("JPEG", exif=exif_with_gps(orientation=6))  # 6: the camera was turned; show rotated 90°
    assert Image.open(io.BytesIO(data)).getexif().get_ifd(0x8825)  # the input really carries GPS
    status, rec = await post_photo(api, target, data, "seal leak")
    assert status == 200, rec
    assert set(rec) >= {"id", "target_id", "caption", "format", "width", "height", "bytes", "sha256", "created_at"}
    assert (rec["target_id"], rec["caption"], rec["format"]) == (target, "seal leak", "jpeg")
    assert (rec["width"], rec["height"]) == (48, 64)  # orientation applied before the EXIF went
    img = assert_clean(stored(config, rec))
    assert img.size == (48, 64)
    # rotated 90° clockwise: the blue left half is now the top
    assert img.convert("RGB").getpixel((24, 5))[2] > 150 and img.convert("RGB").getpixel((24, 58))[0] > 150
    async with api.client.get(f"/api/v1/maintenance/photos/{rec['id']}", headers=api.headers) as resp:
        assert resp.status == 200 and resp.content_type == "image/jpeg"
        assert await resp.read() == stored(config, rec).read_bytes()


async def test_heic_with_metadata_comes_back_clean(api: Api, config: Config) -> None:
    target = await dataset(api)
    data = photo("HEIF", exif=exif_with_gps())
    assert Image.open(io.BytesIO(data)).getexif().get(0x010F) == "Canon"
    status, rec = await post_photo(api, target, data, content_type="image/heic")
    assert status == 200, rec
    assert rec["format"] == "jpeg" and (rec["width"], rec["height"]) == (64, 48)  # HEIC is kept as JPEG
    assert_clean(stored(config, rec))


async def test_png_text_chunks_are_dropped_and_multipart_works(api: Api, config: Config) -> None:
    target = await dataset(api)
    info = PngImagePlugin.PngInfo()
    info.add_text("Comment", "secret location: plant 7")
    info.add_itxt("XML:com.adobe.xmp", "<x:xmpmeta>secret</x:xmpmeta>")
    data = photo("PNG", pnginfo=info)
    assert Image.open(io.BytesIO(data)).info["Comment"].startswith("secret")
    form = aiohttp.FormData()
    form.add_field("file", data, filename="p.png", content_type="image/png")
    status, rec = await api.call("POST", "/api/v1/maintenance/photos", params={"target_id": target}, data=form)
    assert status == 200, rec
    img = assert_clean(stored(config, rec))
    assert rec["format"] == "png" and "Comment" not in img.info


async def test_webp_is_accepted(api: Api, config: Config) -> None:
    target = await dataset(api)
    status, rec = await post_photo(api, target, photo("WEBP", exif=exif_with_gps()), content_type="image/webp")
    assert status == 200 and rec["format"] == "webp"
    assert_clean(stored(config, rec))


async def test_refusals(api: Api, other_api: Api, config: Config) -> None:
    target = await dataset(api)
    assert_refusal(*await post_photo(api, target, png_bomb(), content_type="image/png"), 422, "bomb")
    assert_refusal(*await post_photo(api, target, b"GIF89a" + b"\x00" * 100), 422, "JPEG, PNG, WebP or HEIC")
    assert_refusal(*await post_photo(api, target, b""), 422, "file")
    too_big = photo("JPEG") + b"\x00" * (config.photo_max_bytes + 1)
    assert_refusal(*await post_photo(api, target, too_big), 413)
    # targets: another user's item or an unknown one is 404; a part must exist
    assert_refusal(*await post_photo(other_api, target, photo("JPEG")), 404, "target_id")
    assert_refusal(*await post_photo(api, "ds_nope", photo("JPEG")), 404)
    assert_refusal(*await post_photo(api, f"{target}/pump", photo("JPEG")), 404, "no parts")
    assert_refusal(*await api.call("POST", "/api/v1/maintenance/photos", data=photo("JPEG")), 422, "target_id")
    assert_refusal(*await post_photo(api, target, photo("JPEG"), caption="x" * 501), 422, "caption")
    kept = Path(config.files_dir()) / "photos"
    assert not kept.exists() or not list(kept.glob("*")), "nothing of a refused photo is kept"


async def test_diagram_block_target_listing_and_privacy(api: Api, other_api: Api, client: Any,
                                                        config: Config) -> None:
    from bathtub_api.cli import token_create

    diagram = {"name": "pumps", "unit": "hours", "repairable": False,
               "nodes": [{"id": "in", "type": "input"}, {"id": "out", "type": "output"},
                         {"id": "pump", "type": "component",
                          "model": {"distribution_id": "exponential", "mean": 1000.0}}],
               "edges": [{"source": "in", "target": "pump"}, {"source": "pump", "target": "out"}]}
    status, rbd = await api.post("rbd/create", diagram)
    assert status == 200, rbd
    status, rec = await post_photo(api, f"{rbd['id']}/pump", photo("JPEG"), "impeller")
    assert status == 200, rec
    assert_refusal(*await post_photo(api, f"{rbd['id']}/valve", photo("JPEG")), 404, "no block")
    status, listed = await api.post("list/photo", {"target_id": f"{rbd['id']}/pump"})
    assert [p["id"] for p in listed["items"]] == [rec["id"]]
    status, listed = await api.get("/api/v1/maintenance/photos", params={"target_id": f"{rbd['id']}/pump"})
    assert [p["id"] for p in listed["photos"]] == [rec["id"]]
    assert (await api.post("get/photo", {"id": rec["id"]}))[1]["caption"] == "impeller"
    assert_refusal(*await other_api.post("get/photo", {"id": rec["id"]}), 404)
    assert_refusal(*await other_api.call("GET", f"/api/v1/maintenance/photos/{rec['id']}"), 404)
    reader = Api(client, await token_create(config, "rita", ["read"]))
    assert_refusal(*await post_photo(reader, f"{rbd['id']}/pump", photo("JPEG")), 403)


@pytest.mark.parametrize("fmt", ["JPEG", "PNG"])
def test_cleaning_is_deterministic_and_keeps_pixels(fmt: str) -> None:
    from bathtub.imports.images import clean_image

    data = photo(fmt)
    a, b = clean_image(data), clean_image(data)
    assert a.data == b.data and a.sha256 == b.sha256
    src = Image.open(io.BytesIO(data)).convert("RGB")
    out = Image.open(io.BytesIO(a.data)).convert("RGB")
    if fmt == "PNG":  # lossless: the very same pixels
        assert src.tobytes() == out.tobytes()


async def photo_app(aiohttp_client: Any, config: Config, registry: Registry, **changes: Any,
                    ) -> tuple[Api, web.Application]:
    """The service with some photo settings changed, and alice's client on it."""
    changed = dataclasses.replace(config, **changes)
    app = create_app(changed, registry)
    client = await aiohttp_client(app)
    return Api(client, await token_create(changed, "alice", ["read", "write"])), app


async def test_large_jpeg_is_kept_at_the_max_edge_and_upright(api: Api, config: Config) -> None:
    target = await dataset(api)
    data = photo("JPEG", size=(6000, 4000), exif=exif_with_gps(orientation=6))
    status, rec = await post_photo(api, target, data)
    assert status == 200, rec
    # the longest edge scaled to photo_max_edge (3840), then turned: 6000 × 4000 -> 3840 × 2560 -> 2560 × 3840
    assert config.photo_max_edge == 3840 and (rec["width"], rec["height"]) == (2560, 3840)
    img = assert_clean(stored(config, rec)).convert("RGB")
    assert img.size == (2560, 3840)
    assert img.getpixel((1280, 100))[2] > 150 and img.getpixel((1280, 3700))[0] > 150  # blue half on top


async def test_pixel_limit_is_the_configured_one(aiohttp_client: Any, config: Config, registry: Registry) -> None:
    api, _ = await photo_app(aiohttp_client, config, registry, photo_max_pixels=1_000_000)
    target = await dataset(api)
    assert_refusal(*await post_photo(api, target, photo("PNG", size=(1001, 1000)), content_type="image/png"), 422,
                   "file", "1001 × 1000 pixels", "limit of 1,000,000 pixels")
    status, rec = await post_photo(api, target, photo("PNG", size=(1000, 1000)), content_type="image/png")
    assert status == 200 and (rec["width"], rec["height"]) == (1000, 1000)


async def test_decodes_past_the_limit_are_refused_with_retry_after(aiohttp_client: Any, config: Config,
                                                                   registry: Registry) -> None:
    api, app = await photo_app(aiohttp_client, config, registry, photo_decodes=1, photo_decode_wait_s=0.0)
    target = await dataset(api)
    decoder = app[PHOTOS]
    await decoder.acquire()  # the one decode slot is busy
    async with api.client.post("/api/v1/maintenance/photos", params={"target_id": target}, data=photo("JPEG"),
                               headers={**api.headers, "Content-Type": "image/jpeg"}) as resp:
        assert resp.headers["Retry-After"].isdigit()
        assert_refusal(resp.status, await resp.json(), 503, "file", "at most 1 photo(s) at once",
                       "BATHTUB_PHOTO_DECODES")
    decoder.release()
    status, rec = await post_photo(api, target, photo("JPEG"))
    assert status == 200, rec
    assert len(list((Path(config.files_dir()) / "photos").glob("*"))) == 1


async def test_decodes_past_the_limit_wait_for_a_slot(aiohttp_client: Any, config: Config,
                                                      registry: Registry) -> None:
    api, app = await photo_app(aiohttp_client, config, registry, photo_decodes=1, photo_decode_wait_s=600.0)
    target = await dataset(api)
    decoder = app[PHOTOS]
    await decoder.acquire()
    sent = asyncio.create_task(post_photo(api, target, photo("JPEG")))
    for _ in range(10_000):  # until the request is queued for the slot (not a timing assertion)
        if decoder.waiting or sent.done():
            break
        await asyncio.sleep(0.01)
    assert decoder.waiting == 1 and not sent.done(), "the second decode must wait while the slot is taken"
    decoder.release()
    status, rec = await sent
    assert status == 200, rec
    assert decoder.waiting == 0


def test_jpeg_decoded_at_reduced_scale_covers_the_stored_size() -> None:
    from bathtub.imports.images import clean_image, stored_size

    data = photo("JPEG", size=(7990, 7990))
    out = clean_image(data)
    assert (out.width, out.height) == (3840, 3840)
    assert stored_size(7990, 5000, 3840) == (3840, 2403) and stored_size(800, 600, 3840) == (800, 600)
    full = clean_image(photo("JPEG", size=(1200, 900)), max_edge=0)
    assert (full.width, full.height) == (1200, 900)
    assert (clean_image(photo("JPEG", size=(1200, 900)), max_edge=600).width) == 600


def test_photo_settings_are_checked() -> None:
    for changes, words in (({"photo_decodes": 0}, "BATHTUB_PHOTO_DECODES"),
                           ({"photo_decode_wait_s": -1.0}, "BATHTUB_PHOTO_DECODE_WAIT_SECONDS"),
                           ({"photo_max_pixels": 100_000_000}, "BATHTUB_PHOTO_MAX_PIXELS"),
                           ({"photo_max_edge": -1}, "BATHTUB_PHOTO_MAX_EDGE")):
        with pytest.raises(ValueError, match=words):
            Config(**changes)  # type: ignore[arg-type]


async def test_a_decode_keeps_its_slot_until_its_thread_is_done() -> None:
    """A client that hangs up stops waiting, but its decode still runs and holds memory: the slot
    is given back when the thread finishes, never sooner, so the bound holds."""
    decoder = PhotoDecoder(slots=1, wait_s=0.0)
    started, finish = threading.Event(), threading.Event()

    def decode() -> str:
        started.set()
        finish.wait(60)
        return "done"

    try:
        waiter = asyncio.create_task(decoder.run(decode))
        while not started.is_set():  # until the decode thread runs (no clock involved)
            await asyncio.sleep(0.01)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        with pytest.raises(ApiError) as refused:  # the cancelled caller's decode still has the slot
            await decoder.run(str)
        assert refused.value.status == 503 and refused.value.headers["Retry-After"].isdigit()
        finish.set()
        for _ in range(10_000):
            if not decoder.full:
                break
            await asyncio.sleep(0.01)
        assert await decoder.run(str.upper, "free again") == "FREE AGAIN"
    finally:
        finish.set()
        decoder.close()
