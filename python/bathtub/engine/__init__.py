"""The engine's Python face: the only part of the library that talks to the compiled engine.

- `binding`: the one door to `bathtub._engine` (its only importer), JSON answers decoded;
- `schema`: the diagram's sub-objects declared once (check, words, published JSON Schema);
- `models`, `fields`, `diagram`: a spec diagram lowered to the engine's form, every field
  checked (by its declaration where it has one) with refusals naming the field's path;
- `runs` and `results`: availability and mission runs and what they give;
- `distribution`: `EngineLifetime`, the `Lifetime` the engine evaluates and samples;
- `control`: cancelling and watching a long call (Ctrl-C on the main thread);
- `scaleout`: a run spread over a dask cluster, merged to the same bits.

The names below are the package's public face (`bathtub.engine.<name>`).
"""

from bathtub.engine.binding import ENGINE_VERSION, Cancelled, RunControl
from bathtub.engine.control import call_engine, progress
from bathtub.engine.diagram import (
    NODE_TYPES,
    check_run_kind,
    compile_diagram,
    normalize_diagram,
    phases_end,
    safety_settings,
)
from bathtub.engine.distribution import EngineLifetime
from bathtub.engine.fields import check_state
from bathtub.engine.models import STEPS, TABLE
from bathtub.engine.results import (
    SIL_UPPER,
    AvailabilityResult,
    BlockFigures,
    MissionResult,
    SafetyFigures,
    sil_of,
)
from bathtub.engine.runs import (
    MAX_REPLICATIONS,
    MAX_U64,
    VARIANCE_REDUCTION,
    check_threads,
    merge,
    simulate_availability,
    simulate_mission,
)
from bathtub.errors import EngineError

# The version string under the name the library has always published it by.
engine_version: str = ENGINE_VERSION

__all__ = [
    "MAX_REPLICATIONS",
    "MAX_U64",
    "NODE_TYPES",
    "SIL_UPPER",
    "STEPS",
    "TABLE",
    "VARIANCE_REDUCTION",
    "AvailabilityResult",
    "BlockFigures",
    "Cancelled",
    "EngineError",
    "EngineLifetime",
    "MissionResult",
    "RunControl",
    "SafetyFigures",
    "call_engine",
    "check_run_kind",
    "check_state",
    "check_threads",
    "compile_diagram",
    "engine_version",
    "merge",
    "normalize_diagram",
    "phases_end",
    "progress",
    "safety_settings",
    "sil_of",
    "simulate_availability",
    "simulate_mission",
]
