"""Maintenance photos on both stores: metadata stripped (read back with Pillow and, where installed,
exiftool), orientation applied before stripping, PNG text chunks dropped, bombs and oversize bodies
refused, targets checked (own item or diagram block; another user's is 404)."""

from __future__ import annotations

import io
import shutil
import struct
import subprocess
import zlib
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from PIL import Image, PngImagePlugin
from pillow_heif import register_heif_opener

from bathtub_api.config import Config
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
