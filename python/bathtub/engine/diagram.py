"""A spec diagram in the engine's form, and the checks made before any run.

Diagrams are the spec's plain JSON form, `{"nodes": [...], "edges": [...]}`, with each
block's `model`/`repair` a BlockModel (`distribution_id`, `params` as [{name, value}] or
{name: value}, optional `base_distribution_id`, or `mean` + `given`); a subsystem node
carries its embedded diagram inline under the key `diagram`. `normalize_diagram` checks
every field (`bathtub.engine.fields`) and resolves the models; `check_run_kind` refuses
settings that need the other kind of run; `compile_diagram` has the engine compile it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from bathtub.engine import binding
from bathtub.engine.fields import (
    check_member,
    check_state,
    lower_block_costs,
    lower_capacity,
    lower_ccf,
    lower_diagram_costs,
    lower_inspection,
    lower_maintenance_groups,
    lower_network,
    lower_phases,
    lower_preventive,
    lower_production,
    lower_repair_quality,
    lower_standby_units,
    lower_switch,
)
from bathtub.engine.models import lower_model
from bathtub.engine.schema import NODE_SCALARS
from bathtub.errors import InputError
from bathtub.validate import check_boolean, check_integer, is_array

__all__ = ["NODE_TYPES", "check_run_kind", "compile_diagram", "normalize_diagram", "phases_end", "safety_settings"]

NODE_TYPES = ("input", "output", "component", "series", "parallel", "knode", "standby", "subsystem")


def normalize_diagram(diagram: Any, field: str = "diagram", _depth: int = 0) -> dict[str, Any]:
    """The engine's form of a spec diagram: models resolved to validated params, fields
    type-checked; raises InputError naming the node by its id and the field (e.g.
    `diagram.nodes.pump-a.model.params.beta`; a node without a usable id by its index)."""
    if _depth > 16:
        raise InputError(field, "subsystems nested more than 16 deep")
    if not isinstance(diagram, Mapping):
        raise InputError(field, "must be an object with nodes and edges")
    nodes, edges = diagram.get("nodes"), diagram.get("edges")
    if not is_array(nodes) or not nodes:
        raise InputError(f"{field}.nodes", "must be a non-empty array")
    if not is_array(edges):
        raise InputError(f"{field}.edges", "must be an array")
    out_nodes = []
    for i, node in enumerate(nodes):
        f = f"{field}.nodes[{i}]"
        if not isinstance(node, Mapping):
            raise InputError(f, "must be an object")
        nid, kind = node.get("id"), node.get("type")
        if not isinstance(nid, str) or not nid:
            raise InputError(f"{f}.id", "required (a non-empty string)")
        f = f"{field}.nodes.{nid}"  # users know their nodes by id, not by position
        if kind not in NODE_TYPES:
            raise InputError(f"{f}.type", f"must be one of {', '.join(NODE_TYPES)}")
        if node.get("covariate_schedules"):
            raise InputError(f"{f}.covariate_schedules", "resolve it with its saved model first "
                                                         "(bathtub.rbd.engine_form makes it the model's path)")
        out: dict[str, Any] = {"id": nid, "type": kind}
        if node.get("model") is not None:
            out["model"] = lower_model(node["model"], f"{f}.model")
        if node.get("repair") is not None:
            out["repair"] = lower_model(node["repair"], f"{f}.repair")
        if node.get("units") is not None:
            out["units"] = lower_standby_units(node["units"], node, f"{f}.units")
        for key, check in NODE_SCALARS.items():
            if node.get(key) is not None:
                out[key] = check(node[key], f"{f}.{key}")
        if out.get("switch_back") and "units" not in out:
            raise InputError(f"{f}.switch_back", "is for standby groups of non-identical units (units)")
        if node.get("switch") is not None:
            out["switch"] = lower_switch(node["switch"], node, f"{f}.switch")
        if node.get("inspection") is not None:
            out["inspection"] = lower_inspection(node["inspection"], kind, f"{f}.inspection")
        if node.get("preventive") is not None:
            out["preventive"] = lower_preventive(node["preventive"], node, f"{f}.preventive")
        if node.get("costs") is not None:
            out["costs"] = lower_block_costs(node["costs"], kind, f"{f}.costs")
        if out.get("repair_one_at_a_time"):
            if kind != "standby":
                raise InputError(f"{f}.repair_one_at_a_time", "is for standby groups")
            if node.get("costs") is not None:
                raise InputError(f"{f}.costs", "no costs on a group with its own repairer (repair_one_at_a_time)")
        if node.get("state") is not None:
            out["state"] = check_state(node["state"], node, f"{f}.state")
        if node.get("maintenance_group") is not None:
            out["maintenance_group"] = check_member(node, diagram.get("maintenance_groups"), _depth, f)
        if node.get("capacity") is not None:
            out["capacity"] = lower_capacity(node["capacity"], kind, f"{f}.capacity")
        if node.get("repair_quality") is not None:
            out["repair_quality"] = lower_repair_quality(node["repair_quality"], node, out.get("model"),
                                                    f"{f}.repair_quality")
        if kind == "subsystem":
            if node.get("diagram") is None:
                raise InputError(f"{f}.diagram", "the embedded diagram is required (resolve subsystem_rbd_id first)")
            out["diagram"] = normalize_diagram(node["diagram"], f"{f}.diagram", _depth + 1)
        out_nodes.append(out)
    out_edges = []
    for i, e in enumerate(edges):
        if not isinstance(e, Mapping) or not isinstance(e.get("source"), str) or not isinstance(e.get("target"), str):
            raise InputError(f"{field}.edges[{i}]", "must be an object {source, target} of node ids")
        out_edges.append({"source": e["source"], "target": e["target"]})
    for key in ("safety_function", "target_sil"):
        if _depth > 0 and diagram.get(key):
            raise InputError(f"{field}.{key}", "a setting of the top diagram, not of a subsystem")
    out = {"nodes": out_nodes, "edges": out_edges}
    if diagram.get("ccf"):
        out["ccf"] = lower_ccf(diagram["ccf"], out_nodes, f"{field}.ccf")
    if diagram.get("maintenance_groups"):
        if _depth > 0:
            raise InputError(f"{field}.maintenance_groups", "a setting of the top diagram, not of a subsystem")
        out["maintenance_groups"] = lower_maintenance_groups(diagram["maintenance_groups"],
                                                             f"{field}.maintenance_groups")
    if diagram.get("network") not in (None, False):
        if _depth > 0:
            raise InputError(f"{field}.network", "a setting of the top diagram, not of a subsystem")
        out["network"] = lower_network(diagram["network"], out_nodes, f"{field}.network")
    if diagram.get("phases"):
        if _depth > 0:
            raise InputError(f"{field}.phases", "a setting of the top diagram, not of a subsystem")
        out["phases"] = lower_phases(diagram["phases"], out_nodes, out_edges, f"{field}.phases")
    if diagram.get("production") and any(diagram["production"].get(k) for k in ("demand", "period")):
        if _depth > 0:
            raise InputError(f"{field}.production", "a setting of the top diagram, not of a subsystem")
        out["production"] = lower_production(diagram["production"], f"{field}.production")
        if not _has_capacity(out):
            raise InputError(f"{field}.production", "needs at least one block with a capacity")
    if diagram.get("costs"):
        if _depth > 0:
            raise InputError(f"{field}.costs", "a setting of the top diagram, not of a subsystem")
        out["costs"] = lower_diagram_costs(diagram["costs"], diagram.get("unit"), f"{field}.costs")
    return out


def _has_capacity(d: Mapping[str, Any]) -> bool:
    return any("capacity" in n or any("capacity" in u for u in n.get("units", ()))
               or ("diagram" in n and _has_capacity(n["diagram"])) for n in d["nodes"])


def safety_settings(diagram: Any) -> tuple[bool, int]:
    """(safety_function, target_sil) of a diagram, checked (target 0 = none)."""
    if not isinstance(diagram, Mapping):
        return False, 0
    sf = diagram.get("safety_function")
    if sf is not None:
        check_boolean(sf, "diagram.safety_function")
    target = diagram.get("target_sil")
    if target is not None:
        target = check_integer(target, "diagram.target_sil", 0, 4)
    if target and not sf:
        raise InputError("diagram.target_sil", "needs safety_function true")
    return bool(sf), int(target or 0)


def check_run_kind(diagram: Any, *, repairable: bool) -> dict[str, Any]:
    """The normalised diagram, refused where a setting needs the other kind of run
    (availability for repairable, mission for non-repairable): the rules both simulators
    apply, in one place so a caller can check a diagram before any run is asked for."""
    norm = normalize_diagram(diagram)
    if repairable:
        if norm.get("phases"):
            raise InputError("diagram.phases", "phased missions are simulated by simulate_mission (non-repairable)")
        safety_settings(diagram)
        return norm
    if norm.get("costs"):
        raise InputError("diagram.costs", "costs need a repairable (availability) run")
    if any("maintenance_group" in n for n in norm["nodes"]):
        raise InputError("diagram.maintenance_groups", "maintenance groups need a repairable (availability) run")
    if safety_settings(diagram)[0]:
        raise InputError("diagram.safety_function", "PFD needs a repairable (availability) run with proof tests")
    return norm


def compile_diagram(diagram: Any) -> list[str]:
    """Validate a diagram as the engine compiles it; returns its block ids (subsystem
    blocks as `outer/inner`). Raises InputError (bad fields) or EngineError (bad shape)."""
    return binding.compile_diagram(json.dumps(normalize_diagram(diagram)))


def phases_end(diagram: Mapping[str, Any]) -> float | None:
    """End of a phased mission (the sum of the phase durations, added in order as the
    engine adds them, so the value is the engine's to the bit); None without phases."""
    phases = diagram.get("phases") or []
    if not phases:
        return None
    end = 0.0
    for p in phases:
        end += float(p["duration"])
    return end
