"""Initial block states per analysis: a run that starts from the plant as it is now.

`initial_states` maps block ids (`outer/inner` inside subsystems) to the spec's BlockState:
`age` (running, this old since new or last renewed), `failed` (non-repairable runs: failed
for good) or `down` with `since` (repairable runs: in repair for `since` already). They are
put on the engine-form diagram's nodes as `state`, which the engine simulates: an aged
block's first life is its residual life at that age, a down block's first repair the rest
of a repair begun `since` ago. Pure: checks and a copy, no run.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from bathtub import engine
from bathtub.errors import InputError

MAX_STATES = 10_000
STATE_TYPES = ("component", "series", "parallel")


def _node(d: dict[str, Any], block_id: str) -> dict[str, Any] | None:
    head, _, rest = block_id.partition("/")
    for n in d.get("nodes", []):
        if n.get("id") == head:
            if not rest:
                return n
            return _node(n["diagram"], rest) if n.get("type") == "subsystem" and "diagram" in n else None
    return None


def with_initial_states(diagram: Mapping[str, Any], states: Mapping[str, Any] | None, *,
                        repairable: bool, field: str = "initial_states") -> dict[str, Any]:
    """A copy of engine-form `diagram` with each named block's `state` set. Refused, naming
    `initial_states.<block>[.key]`: an unknown block; a node that is no component, series
    or parallel block (standby groups, gates, subsystems as a whole); a state the run kind
    has no meaning for (`failed` in a repairable run: there a failed block is `down`; `down`
    in a non-repairable one); `since` without `down`; an `age` with failed/down; `down` on
    a block without a repair model; a block with preventive, inspection or repair_quality,
    or a joint unit (its age is the joint unit's)."""
    if not states:
        return dict(diagram)
    if not isinstance(states, Mapping) or len(states) > MAX_STATES:
        raise InputError(field, f"must be an object of at most {MAX_STATES} block ids to BlockStates")
    out = copy.deepcopy(dict(diagram))
    for block_id, st in states.items():
        f = f"{field}.{block_id}"
        node = _node(out, block_id) if isinstance(block_id, str) else None
        if node is None:
            raise InputError(f, f"no block {block_id!r} in the diagram (subsystem blocks as outer/inner)")
        if node["type"] not in STATE_TYPES:
            raise InputError(f, f"{block_id!r} is a {node['type']}: states are for component, series and parallel "
                                "blocks")
        if node["model"].get("distribution_id") == engine.TABLE:
            raise InputError(f, "a joint unit's state is its own (joint_unit.age and readings)")
        checked = engine.check_state(st, node, f)
        if repairable and checked.get("failed"):
            raise InputError(f"{f}.failed", "only in a non-repairable run: a failed block of a repairable diagram "
                                            "is in repair (down, with since)")
        if not repairable and checked.get("down"):
            raise InputError(f"{f}.down", "only in a repairable run: a block of a non-repairable diagram that does "
                                          "not work has failed (failed: true)")
        if checked:
            node["state"] = checked
    return out
