"""Photos cleaned before they are kept: decoded, turned upright, and re-encoded from their pixels
alone, so no camera, location or editing metadata (EXIF, GPS, XMP, IPTC, maker notes, PNG text
chunks, embedded ICC device profiles) survives. Decoding is done by Pillow (HEIC through
pillow-heif), never by hand, and a decompression bomb is refused before any pixel is decoded.

Memory: a decoded image costs 4 bytes a pixel in Pillow whatever its format (RGB is kept as
RGBX, 16-bit grey as 2), so `max_pixels` bounds the one full-size buffer a decode may need at
4 × max_pixels bytes. Every other buffer is at the stored size: a photo larger than `max_edge` is
scaled down right after decoding (a JPEG is even decoded straight at 1/2, 1/4 or 1/8 scale when
that still covers the stored size, so its full-size pixels never exist), then turned upright
and copied into a fresh image, and the full-size one is dropped before the copy is made.
"""

from __future__ import annotations

import hashlib
import io
import warnings
from dataclasses import dataclass

from PIL import Image, UnidentifiedImageError

from bathtub.errors import InputError

MAX_PIXELS = 64_000_000  # about 8000 × 8000: larger than any phone photo, far below a bomb
# Pillow's own bomb threshold (Image.MAX_IMAGE_PIXELS): it warns past this at open, so a limit
# above it cannot be honoured without changing a process-wide setting.
PIXEL_CEILING = 89_478_485
MAX_EDGE = 3840  # a 4K screen's width: enough to read a nameplate; 0 keeps the full size
ACCEPTED = {"JPEG": "jpeg", "PNG": "png", "WEBP": "webp", "HEIF": "heic"}
# What each accepted format is stored as: HEIC becomes JPEG, which every browser shows.
STORED = {"jpeg": ("JPEG", "jpeg", "image/jpeg"), "png": ("PNG", "png", "image/png"),
          "webp": ("WEBP", "webp", "image/webp"), "heic": ("JPEG", "jpeg", "image/jpeg")}
# EXIF orientation -> the transpose that shows the photo upright (as ImageOps.exif_transpose).
UPRIGHT = {2: Image.Transpose.FLIP_LEFT_RIGHT, 3: Image.Transpose.ROTATE_180, 4: Image.Transpose.FLIP_TOP_BOTTOM,
           5: Image.Transpose.TRANSPOSE, 6: Image.Transpose.ROTATE_270, 7: Image.Transpose.TRANSVERSE,
           8: Image.Transpose.ROTATE_90}


@dataclass(frozen=True)
class CleanImage:
    data: bytes
    format: str  # jpeg, png or webp: what is stored
    source_format: str  # what was sent
    width: int
    height: int
    sha256: str
    content_type: str


def _register_heif() -> None:
    from pillow_heif import register_heif_opener

    register_heif_opener()


def stored_size(width: int, height: int, max_edge: int) -> tuple[int, int]:
    """The size a `width` × `height` photo is kept at: its longest edge at most `max_edge` (0: as is)."""
    longest = max(width, height)
    if not max_edge or longest <= max_edge:
        return width, height
    scale = max_edge / longest
    return max(1, round(width * scale)), max(1, round(height * scale))


def clean_image(data: bytes, field: str = "file", *, max_pixels: int = MAX_PIXELS,
                max_edge: int = MAX_EDGE) -> CleanImage:
    """Decode, check, scale down to `max_edge`, orient and re-encode a JPEG, PNG, WebP or HEIC photo;
    more than `max_pixels` (at most PIXEL_CEILING) is refused before any pixel is decoded."""
    _register_heif()
    limit = min(max_pixels, PIXEL_CEILING)
    source, pixels = _decode(data, field, limit, max_edge)
    pil_format, stored, content_type = STORED[source]
    mode = pixels.mode
    if pil_format == "JPEG" and mode not in ("RGB", "L", "CMYK"):
        mode = "RGB"
    elif mode not in ("RGB", "RGBA", "L", "LA", "P", "I;16", "I", "1"):
        mode = "RGBA" if "A" in mode else "RGB"
    if mode != pixels.mode:
        pixels = pixels.convert(mode)
    # From pixels only: a new image has an empty info dictionary, so nothing of the original's
    # (exif, xmp, text, icc) can be carried into the file.
    fresh = Image.new(pixels.mode, pixels.size)
    fresh.paste(pixels)
    if pixels.mode == "P":
        fresh.putpalette(pixels.getpalette() or [])
    del pixels
    out = io.BytesIO()
    options = {"quality": 92} if pil_format in ("JPEG", "WEBP") else {}
    fresh.save(out, pil_format, **options)
    blob = out.getvalue()
    return CleanImage(blob, stored, source, fresh.width, fresh.height, hashlib.sha256(blob).hexdigest(), content_type)


def _decode(data: bytes, field: str, limit: int, max_edge: int) -> tuple[str, Image.Image]:
    """The accepted source format and the upright pixels at the stored size. The full-size
    image (if any) is local to this call, so it is freed when the call returns."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            img = Image.open(io.BytesIO(data))
            source = ACCEPTED.get(img.format or "")
            if source is None:
                raise InputError(field, f"must be a JPEG, PNG, WebP or HEIC image (got {img.format or 'unknown'})")
            width, height = img.size
            if width * height > limit:
                raise InputError(field, f"{width} × {height} pixels is more than the limit of {limit:,} pixels "
                                        "(a decompression bomb or a scan, not a photo)")
            target = stored_size(width, height, max_edge)
            if target != img.size:
                img.draft(None, target)  # JPEG: decode at the smallest 1/2^k scale covering target
            img.load()
            orientation = img.getexif().get(0x0112, 1)
            if img.size != target:
                # reducing_gap: shrink by a whole factor first (cheap, small), then resample
                img = img.resize(target, Image.Resampling.LANCZOS, reducing_gap=3.0)
            method = UPRIGHT.get(orientation)
            return source, img if method is None else img.transpose(method)
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise InputError(field, f"has more pixels than {limit:,}: refused as a decompression bomb") from None
    except UnidentifiedImageError:
        raise InputError(field, "must be a JPEG, PNG, WebP or HEIC image (not a readable image)") from None
    except (OSError, SyntaxError, ValueError) as e:  # truncated or corrupt files
        raise InputError(field, f"the image cannot be decoded ({e})") from None
