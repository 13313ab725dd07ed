"""Photos cleaned before they are kept: decoded, turned upright, and re-encoded from their pixels
alone, so no camera, location or editing metadata (EXIF, GPS, XMP, IPTC, maker notes, PNG text
chunks, embedded ICC device profiles) survives. Decoding is done by Pillow (HEIC through
pillow-heif), never by hand, and a decompression bomb is refused before any pixel is decoded.
"""

from __future__ import annotations

import hashlib
import io
import warnings
from dataclasses import dataclass

from PIL import Image, ImageOps, UnidentifiedImageError

from bathtub.errors import InputError

MAX_PIXELS = 64_000_000  # about 8000 × 8000: larger than any phone photo, far below a bomb
ACCEPTED = {"JPEG": "jpeg", "PNG": "png", "WEBP": "webp", "HEIF": "heic"}
# What each accepted format is stored as: HEIC becomes JPEG, which every browser shows.
STORED = {"jpeg": ("JPEG", "jpeg", "image/jpeg"), "png": ("PNG", "png", "image/png"),
          "webp": ("WEBP", "webp", "image/webp"), "heic": ("JPEG", "jpeg", "image/jpeg")}


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


def clean_image(data: bytes, field: str = "file") -> CleanImage:
    """Decode, check, orient and re-encode a JPEG, PNG, WebP or HEIC photo."""
    _register_heif()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            img = Image.open(io.BytesIO(data))
            source = ACCEPTED.get(img.format or "")
            if source is None:
                raise InputError(field, f"must be a JPEG, PNG, WebP or HEIC image (got {img.format or 'unknown'})")
            width, height = img.size
            if width * height > MAX_PIXELS:
                raise InputError(field, f"{width} × {height} pixels is more than {MAX_PIXELS:,} (a decompression "
                                        "bomb or a scan, not a photo)")
            img.load()
            upright = ImageOps.exif_transpose(img)
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise InputError(field, f"has more pixels than {MAX_PIXELS:,}: refused as a decompression bomb") from None
    except UnidentifiedImageError:
        raise InputError(field, "must be a JPEG, PNG, WebP or HEIC image (not a readable image)") from None
    except (OSError, SyntaxError, ValueError) as e:  # truncated or corrupt files
        raise InputError(field, f"the image cannot be decoded ({e})") from None
    pil_format, stored, content_type = STORED[source]
    mode = upright.mode
    if pil_format == "JPEG" and mode not in ("RGB", "L", "CMYK"):
        mode = "RGB"
    elif mode not in ("RGB", "RGBA", "L", "LA", "P", "I;16", "I", "1"):
        mode = "RGBA" if "A" in mode else "RGB"
    pixels = upright.convert(mode) if mode != upright.mode else upright
    # From raw pixels only: nothing of the original's info dictionary (exif, xmp, text, icc) is carried.
    fresh = Image.frombytes(pixels.mode, pixels.size, pixels.tobytes())
    if pixels.mode == "P":
        fresh.putpalette(pixels.getpalette() or [])
    out = io.BytesIO()
    options = {"quality": 92} if pil_format in ("JPEG", "WEBP") else {}
    fresh.save(out, pil_format, **options)
    blob = out.getvalue()
    return CleanImage(blob, stored, source, fresh.width, fresh.height, hashlib.sha256(blob).hexdigest(), content_type)
