"""The spec's compact `stages` form as nodes and edges.

Stages are in series; the components of a stage are in parallel, and a stage of two or
more components ends in a k-of-n gate (`k_of_n`, default 1: any one suffices). A stage's
`common_cause_beta` > 0 becomes a common-cause group of its components.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from bathtub.distribution_schema import params_rules
from bathtub.distributions import FAMILIES
from bathtub.errors import InputError
from bathtub.rbd import schema as s
from bathtub.rbd.blocks import FIELD_CHECKS
from bathtub.rbd.schema import PARAMS_ARRAY

COMPONENT_KEYS = ("label", "distribution", "params", "model_id", "repair_distribution", "repair_params",
                  "placeholder", "costs", "preventive", "inspection")
# What a stage's schema cannot say (a count against its components), as `field: rule`.
# A stage component's repair_params follow its repair_distribution's family, refused under the
# node it becomes (nodes.<id>.repair.params.<name>): the schema cannot tie the two together.
STAGE_CROSS_FIELD = ("stages[].k_of_n: must be an integer from",
                     "stages[].common_cause_beta: needs a stage of 2 or more",
                     "nodes.*.repair.params.*: not a parameter of", "nodes.*.repair.params.*: required for",
                     "nodes.*.repair.params.*: must be >")
STAGE_KEYS = ("label", "components", "k_of_n", "common_cause_beta", "common_cause_basis")


def _slug(label: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", label.strip()).strip("-").lower()
    return slug[:48] or "block"


def _unique(base: str, taken: set[str]) -> str:
    nid, i = base, 2
    while nid in taken:
        nid, i = f"{base}-{i}", i + 1
    taken.add(nid)
    return nid


def _component(c: Any, field: str, nid: str, repairable: bool) -> dict[str, Any]:
    if not isinstance(c, Mapping):
        raise InputError(field, "must be an object (StageComponent)")
    for k in c:
        if k not in COMPONENT_KEYS:
            raise InputError(f"{field}.{k}", f"unknown field; known: {', '.join(COMPONENT_KEYS)}")
    if ("distribution" in c) == ("model_id" in c):
        raise InputError(field, "give distribution (with params) or model_id (exactly one)")
    node: dict[str, Any] = {"id": nid, "type": "component", "label": c["label"]}
    model: dict[str, Any]
    if "model_id" in c:
        if "params" in c:
            raise InputError(f"{field}.params", "not with model_id")
        model = {"saved_model_id": c["model_id"]}
    else:
        model = {"distribution_id": c["distribution"], "params": c.get("params")}
    if c.get("placeholder"):
        model["placeholder"] = True
    node["model"] = model
    if "repair_distribution" in c or "repair_params" in c:
        if not repairable:
            raise InputError(f"{field}.repair_distribution", "repair models only in a repairable diagram")
        node["repair"] = {"distribution_id": c.get("repair_distribution"), "params": c.get("repair_params")}
    for key in ("costs", "preventive", "inspection"):
        if c.get(key) is not None:
            node[key] = c[key]
    return node


def stages_to_diagram(stages: Any, *, repairable: bool = False) -> dict[str, Any]:
    """{nodes, edges, ccf} of a list of Stage objects (field paths `stages[i].components[j]...`).
    The result is checked as any diagram is, by `check_diagram`."""
    stage_list = s.array(lambda v, f: v, 1, 1000)(stages, "stages")
    taken = {"input", "output"}
    nodes: list[dict[str, Any]] = [{"id": "input", "type": "input"}, {"id": "output", "type": "output"}]
    edges: list[dict[str, str]] = []
    ccf: list[dict[str, Any]] = []
    previous = ["input"]
    for i, st in enumerate(stage_list):
        f = f"stages[{i}]"
        if not isinstance(st, Mapping):
            raise InputError(f, "must be an object (Stage)")
        for k in st:
            if k not in STAGE_KEYS:
                raise InputError(f"{f}.{k}", f"unknown field; known: {', '.join(STAGE_KEYS)}")
        comps = st.get("components")
        if not isinstance(comps, Sequence) or isinstance(comps, (str, bytes)) or not comps:
            raise InputError(f"{f}.components", "required: at least one component")
        count = len(comps)
        k_of_n = 1 if st.get("k_of_n") is None else s.integer(1, count)(st["k_of_n"], f"{f}.k_of_n")
        ids: list[str] = []
        for j, c in enumerate(comps):
            cf = f"{f}.components[{j}]"
            label = c.get("label") if isinstance(c, Mapping) else None
            label = s.text(200, 1)(label, f"{cf}.label")
            nid = _unique(_slug(label), taken)
            nodes.append(_component(c, cf, nid, repairable))
            ids.append(nid)
            edges.extend({"source": p, "target": nid} for p in previous)
        beta = st.get("common_cause_beta")
        if beta is not None:
            beta = s.number(0.0, 1.0, hi_open=True)(beta, f"{f}.common_cause_beta")
            if beta > 0:
                if count < 2:
                    raise InputError(f"{f}.common_cause_beta", "needs a stage of 2 or more components")
                basis = s.enum("rate", "probability")(st.get("common_cause_basis", "rate"), f"{f}.common_cause_basis")
                ccf.append({"id": f"ccf-{len(ccf) + 1}", "members": ids, "beta": beta, "basis": basis})
        if count == 1:
            previous = ids
            continue
        stage_label = st.get("label")
        named = isinstance(stage_label, str) and stage_label.strip()
        gate_base = f"{_slug(stage_label)}-vote" if named else f"stage-{i + 1}-vote"
        gate = _unique(gate_base, taken)
        gate_node: dict[str, Any] = {"id": gate, "type": "knode", "n": k_of_n, "k": count}
        if isinstance(stage_label, str):
            gate_node["label"] = stage_label
        nodes.append(gate_node)
        edges.extend({"source": c, "target": gate} for c in ids)
        previous = [gate]
    edges.extend({"source": p, "target": "output"} for p in previous)
    return {"nodes": nodes, "edges": edges, "ccf": ccf}


def stages_schema(repairable: bool) -> s.Schema:
    """The JSON Schema of `stages` in a repairable or non-repairable diagram, from the checks'
    own declarations (a stage component becomes a component node)."""
    null: s.Schema = {"type": "null"}
    props: s.Schema = {
        "label": {"type": "string", "minLength": 1, "maxLength": 200},
        "distribution": {"enum": list(FAMILIES)},
        "params": PARAMS_ARRAY,
        "model_id": {"type": "string", "minLength": 1, "maxLength": 200},
        "placeholder": {"type": "boolean"},
    }
    component: s.Schema = {
        "type": "object", "required": ["label"], "additionalProperties": False, "properties": props,
        "oneOf": [{"required": ["distribution", "params"], "properties": {"model_id": null}},
                  {"required": ["model_id"], "properties": {"distribution": null, "params": null}}],
        "allOf": params_rules("distribution", "params"),
        "description": "StageComponent: distribution with params, or model_id (a saved parametric model of yours); "
                       "a mixture life is given as a node, not here.",
    }
    if repairable:
        props["repair_distribution"] = {"enum": list(FAMILIES)}
        props["repair_params"] = dict(PARAMS_ARRAY)
        for key in ("costs", "preventive", "inspection"):
            props[key] = FIELD_CHECKS[key].schema
        component["required"] = ["label", "repair_distribution", "repair_params"]
        # repair_params follow repair_distribution's family as params follow distribution's (the
        # generators this schema is checked with cannot combine both sets of family rules)
        props["repair_params"]["description"] = "The repair family's parameters, as params for distribution"
    stage: s.Schema = {
        "type": "object", "required": ["components"], "additionalProperties": False,
        "properties": {
            "label": {"type": "string", "maxLength": 200},
            "components": {"type": "array", "items": component, "minItems": 1, "maxItems": 1000},
            "k_of_n": {"type": "integer", "minimum": 1, "maximum": 1000},
            "common_cause_beta": {"type": "number", "minimum": 0.0, "exclusiveMaximum": 1.0},
            "common_cause_basis": {"enum": ["rate", "probability"]},
        },
        "description": "Stage: components in parallel; k_of_n at most the number of components; a "
                       "common_cause_beta above 0 needs 2 or more components.",
    }
    return {"type": "array", "items": stage, "minItems": 1, "maxItems": 1000}
