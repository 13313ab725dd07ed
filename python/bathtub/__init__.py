"""Bathtub: reliability-engineering analysis as pure functions, with a compiled engine."""

from bathtub._engine import EngineError
from bathtub._engine import __version__ as engine_version

__all__ = ["EngineError", "engine_version"]
