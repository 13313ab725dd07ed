"""Bathtub: reliability-engineering analysis as pure functions, with a compiled engine."""

# The version string alone comes straight from the compiled engine (everything else goes through
# `bathtub.engine`): `import bathtub` stays light, without numpy and scipy.
from bathtub._engine import __version__ as engine_version
from bathtub.errors import EngineError

__all__ = ["EngineError", "engine_version"]
