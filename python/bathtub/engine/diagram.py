"""A spec diagram in the engine's form, and the checks made before any run.

Diagrams are the spec's plain JSON form, `{"nodes": [...], "edges": [...]}`, with each
block's `model`/`repair` a BlockModel (`distribution_id`, `params` as [{name, value}] or
{name: value}, optional `base_distribution_id`, or `mean` + `given`); a subsystem node
carries its embedded diagram inline under the key `diagram`. `normalize_diagram` checks
every field (`bathtub.engine_fields`) and resolves the models; `check_run_kind` refuses
settings that need the other kind of run; `compile_diagram` has the engine compile it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from bathtub import _engine
from bathtub.engine_fields import (
    _block_costs,
    _bool,
    _capacity,
    _ccf,
    _diagram_costs,
    _inspection,
    _int,
    _maintenance_groups,
    _member,
    _model,
    _network,
    _num,
    _phases,
    _preventive,
    _production,
    _repair_quality,
    _standby_units,
    check_state,
)
from bathtub.errors import InputError

__all__ = ["NODE_TYPES", "check_run_kind", "compile_diagram", "normalize_diagram", "phases_end"]

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
    if not isinstance(nodes, Sequence) or isinstance(nodes, (str, bytes)) or not nodes:
        raise InputError(f"{field}.nodes", "must be a non-empty array")
    if not isinstance(edges, Sequence) or isinstance(edges, (str, bytes)):
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
            out["model"] = _model(node["model"], f"{f}.model")
        if node.get("repair") is not None:
            out["repair"] = _model(node["repair"], f"{f}.repair")
        if node.get("units") is not None:
            out["units"] = _standby_units(node["units"], node, f"{f}.units")
        for key, low in (("n", 1), ("k", 1), ("spares", 0)):
            v = _int(node, key, f, low)
            if v is not None:
                out[key] = v
        for key in ("dormancy", "crew_priority"):
            v = _num(node, key, f)
            if v is not None:
                out[key] = v
        if out.get("dormancy") is not None and not 0.0 <= out["dormancy"] <= 1.0:
            raise InputError(f"{f}.dormancy", "must be between 0 and 1")
        for key in ("cold", "instant_repair", "repair_one_at_a_time", "switch_back"):
            v = _bool(node, key, f)
            if v is not None:
                out[key] = v
        if out.get("switch_back") and "units" not in out:
            raise InputError(f"{f}.switch_back", "is for standby groups of non-identical units (units)")
        if node.get("inspection") is not None:
            out["inspection"] = _inspection(node["inspection"], kind, f"{f}.inspection")
        if node.get("preventive") is not None:
            out["preventive"] = _preventive(node["preventive"], node, f"{f}.preventive")
        if node.get("costs") is not None:
            out["costs"] = _block_costs(node["costs"], kind, f"{f}.costs")
        if out.get("repair_one_at_a_time"):
            if kind != "standby":
                raise InputError(f"{f}.repair_one_at_a_time", "is for standby groups")
            if node.get("costs") is not None:
                raise InputError(f"{f}.costs", "no costs on a group with its own repairer (repair_one_at_a_time)")
        if node.get("state") is not None:
            out["state"] = check_state(node["state"], node, f"{f}.state")
        if node.get("maintenance_group") is not None:
            out["maintenance_group"] = _member(node, diagram.get("maintenance_groups"), _depth, f)
        if node.get("capacity") is not None:
            out["capacity"] = _capacity(node["capacity"], kind, f"{f}.capacity")
        if node.get("repair_quality") is not None:
            out["repair_quality"] = _repair_quality(node["repair_quality"], node, out.get("model"),
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
        out["ccf"] = _ccf(diagram["ccf"], out_nodes, f"{field}.ccf")
    if diagram.get("maintenance_groups"):
        if _depth > 0:
            raise InputError(f"{field}.maintenance_groups", "a setting of the top diagram, not of a subsystem")
        out["maintenance_groups"] = _maintenance_groups(diagram["maintenance_groups"], f"{field}.maintenance_groups")
    if diagram.get("network") not in (None, False):
        if _depth > 0:
            raise InputError(f"{field}.network", "a setting of the top diagram, not of a subsystem")
        out["network"] = _network(diagram["network"], out_nodes, f"{field}.network")
    if diagram.get("phases"):
        if _depth > 0:
            raise InputError(f"{field}.phases", "a setting of the top diagram, not of a subsystem")
        out["phases"] = _phases(diagram["phases"], out_nodes, out_edges, f"{field}.phases")
    if diagram.get("production") and any(diagram["production"].get(k) for k in ("demand", "period")):
        if _depth > 0:
            raise InputError(f"{field}.production", "a setting of the top diagram, not of a subsystem")
        out["production"] = _production(diagram["production"], f"{field}.production")
        if not _has_capacity(out):
            raise InputError(f"{field}.production", "needs at least one block with a capacity")
    if diagram.get("costs"):
        if _depth > 0:
            raise InputError(f"{field}.costs", "a setting of the top diagram, not of a subsystem")
        out["costs"] = _diagram_costs(diagram["costs"], diagram.get("unit"), f"{field}.costs")
    return out


def _has_capacity(d: Mapping[str, Any]) -> bool:
    return any("capacity" in n or any("capacity" in u for u in n.get("units", ()))
               or ("diagram" in n and _has_capacity(n["diagram"])) for n in d["nodes"])


def _safety_settings(diagram: Any) -> tuple[bool, int]:
    """(safety_function, target_sil) of a diagram, checked (target 0 = none)."""
    if not isinstance(diagram, Mapping):
        return False, 0
    sf = diagram.get("safety_function")
    if sf is not None and not isinstance(sf, bool):
        raise InputError("diagram.safety_function", "must be true or false")
    target = diagram.get("target_sil")
    if target is not None and (isinstance(target, bool) or not isinstance(target, int) or not 0 <= target <= 4):
        raise InputError("diagram.target_sil", "must be an integer from 0 to 4")
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
        _safety_settings(diagram)
        return norm
    if norm.get("costs"):
        raise InputError("diagram.costs", "costs need a repairable (availability) run")
    if any("maintenance_group" in n for n in norm["nodes"]):
        raise InputError("diagram.maintenance_groups", "maintenance groups need a repairable (availability) run")
    if _safety_settings(diagram)[0]:
        raise InputError("diagram.safety_function", "PFD needs a repairable (availability) run with proof tests")
    return norm


def compile_diagram(diagram: Any) -> list[str]:
    """Validate a diagram as the engine compiles it; returns its block ids (subsystem
    blocks as `outer/inner`). Raises InputError (bad fields) or EngineError (bad shape)."""
    return list(_engine.compile_diagram(json.dumps(normalize_diagram(diagram))))


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
