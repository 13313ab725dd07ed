"""Files users bring: what format a file is (from its content, never its name), what its
sheets hold, and what each table looks like it is for. Pure functions over paths and rows; the
service streams the bytes to disk and calls these."""

from bathtub.imports.detect import detect_format
from bathtub.imports.tables import Sheet, looks_like, read_sheets

__all__ = ["Sheet", "detect_format", "looks_like", "read_sheets"]
