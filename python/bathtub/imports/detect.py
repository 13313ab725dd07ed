"""A file's format from its first bytes (and, for zip containers, their table of contents).

Names lie (`data.xlsx` that is a CSV, a photo called `.png` that is a JPEG); content does not.
Formats: xlsx, ods, xls (workbooks); csv, json, text; jpeg, png, webp, heic, gif, tiff (images);
pdf, zip; otherwise binary.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

HEAD_BYTES = 8192
_HEIF_BRANDS = {b"heic", b"heix", b"heim", b"heis", b"hevc", b"hevx", b"mif1", b"msf1", b"avif"}
_OLE2 = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"


def detect_format(path: str | Path) -> str:
    """The format of the file at `path`, read from its content."""
    path = Path(path)
    with path.open("rb") as fh:
        head = fh.read(HEAD_BYTES)
    if head.startswith(b"PK\x03\x04"):
        return _zip_format(path)
    if head.startswith(_OLE2):
        return "xls"  # the OLE2 container of Excel 97-2003 workbooks
    if head.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "webp"
    if head[4:8] == b"ftyp" and head[8:12] in _HEIF_BRANDS:
        return "heic"
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return "gif"
    if head[:4] in (b"II*\x00", b"MM\x00*"):
        return "tiff"
    if head.startswith(b"%PDF-"):
        return "pdf"
    return _text_format(path, head)


def _zip_format(path: Path) -> str:
    try:
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist())
            if "xl/workbook.xml" in names:
                return "xlsx"
            if "mimetype" in names and zf.read("mimetype").strip() == b"application/vnd.oasis.opendocument.spreadsheet":
                return "ods"
    except (zipfile.BadZipFile, OSError, KeyError):
        return "binary"
    return "zip"


def _text_format(path: Path, head: bytes) -> str:
    if b"\x00" in head:
        return "binary"
    try:
        text = head.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        if e.start < len(head) - 4:  # not just a multi-byte character cut at the end of the head
            return "binary"
        text = head[: e.start].decode("utf-8-sig")
    stripped = text.lstrip()
    if stripped[:1] in ("{", "["):
        try:
            json.loads(path.read_text("utf-8-sig"))
            return "json"
        except (ValueError, UnicodeDecodeError):
            pass
    first = stripped.splitlines()[0] if stripped else ""
    if any(sep in first for sep in (",", ";", "\t")):
        return "csv"
    return "text"
