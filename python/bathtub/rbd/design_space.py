"""The design space of a cheapest-design search: per block, the options it may take, and
the diagram each choice of options makes.

An option replaces a block by an arrangement of units, all on the option's life and
repair models (the block's own where the option gives none):

- active redundancy, `units` n and `required` k (default 1): n identical copies of the
  block (`<id>#1` ... `<id>#n`) fed by the block's predecessors and feeding a k-of-n gate
  that keeps the block's id, so the diagram around it is unchanged; n = 1 is the block
  itself on other models (an alternative component);
- standby spares, `spares` s with `required` k running (default 1) and `dormancy` (idle
  ageing relative to running: 0 cold, the default, to 1 hot): one standby group.

Copies keep every field of the block (costs, proof test, crew priority...) and its
common-cause membership (each copy becomes a member). `cost` is the option's capital
cost as installed, whole: a design's cost is the sum of its chosen options' costs.
Pure functions over engine-form diagrams (`bathtub.rbd.resolve.engine_form`).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bathtub.errors import InputError
from bathtub.rbd import schema as s
from bathtub.rbd.blocks import check_model

MAX_OPTIONS = 20  # per block
MAX_BLOCKS = 30  # blocks with options
MAX_UNITS = 20  # units (or running + spares) in one option
OPTION_KEYS = ("name", "cost", "units", "required", "spares", "dormancy", "model", "repair", "inspection")
# What a standby group takes of the block it replaces (the spec's standby fields).
STANDBY_KEYS = ("id", "label", "model", "repair", "costs", "maintenance_group", "crew_priority",
                "repair_one_at_a_time", "capacity")
OPTION_TYPES = ("component", "standby", "series", "parallel")


@dataclass(frozen=True)
class Option:
    """One alternative for a block (see the module docstring); `model`/`repair` in engine
    form, None where the block's own is kept."""

    name: str
    cost: float
    units: int = 1
    required: int = 1
    spares: int | None = None
    dormancy: float = 0.0
    model: Mapping[str, Any] | None = None
    repair: Mapping[str, Any] | None = None
    inspection: Mapping[str, Any] | None = None

    @property
    def standby(self) -> bool:
        return self.spares is not None

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "cost": self.cost}
        if self.standby:
            out.update(arrangement="standby", running=self.required, spares=self.spares, dormancy=self.dormancy)
        else:
            out.update(arrangement="active", units=self.units, required=self.required)
        return out


@dataclass(frozen=True)
class Space:
    """The blocks with options (in request order) and each block's options."""

    blocks: tuple[str, ...]
    options: tuple[tuple[Option, ...], ...]
    sizes: tuple[int, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sizes", tuple(len(o) for o in self.options))

    @property
    def designs(self) -> int:
        return math.prod(self.sizes)

    def cost(self, choice: Sequence[int]) -> float:
        return float(sum(self.options[b][i].cost for b, i in enumerate(choice)))

    def describe(self, choice: Sequence[int]) -> list[dict[str, Any]]:
        return [{"block": blk, "option": i, **self.options[b][i].summary()}
                for b, (blk, i) in enumerate(zip(self.blocks, choice, strict=True))]


def node_at(diagram: Mapping[str, Any], block_id: str) -> tuple[Mapping[str, Any], Mapping[str, Any]] | None:
    """(the diagram holding it, the node) of block `block_id` (`outer/inner` in subsystems)."""
    head, _, rest = block_id.partition("/")
    for n in diagram.get("nodes", []):
        if n.get("id") == head:
            if not rest:
                return diagram, n
            return node_at(n["diagram"], rest) if n.get("type") == "subsystem" and "diagram" in n else None
    return None


def _option(raw: Any, f: str, node: Mapping[str, Any], repairable: bool, index: int,
            resolve: Any) -> Option:
    if not isinstance(raw, Mapping):
        raise InputError(f, "must be an object (an option)")
    for k in raw:
        if k not in OPTION_KEYS:
            raise InputError(f"{f}.{k}", f"unknown field; known: {', '.join(OPTION_KEYS)}")
    v = {k: x for k, x in raw.items() if x is not None}
    if "cost" not in v:
        raise InputError(f"{f}.cost", "required: the option's capital cost as installed")
    cost = s.number(0.0)(v["cost"], f"{f}.cost")
    name = s.text(200, 1)(v["name"], f"{f}.name") if "name" in v else f"option {index}"
    kind = node["type"]
    if kind not in OPTION_TYPES:
        raise InputError(f, f"a {kind} node takes no options (options are for component, standby, series and "
                            "parallel blocks)")
    standby = "spares" in v
    if standby and "units" in v:
        raise InputError(f"{f}.units", "give units (active redundancy) or spares (a standby group), not both")
    units = s.integer(1, MAX_UNITS)(v["units"], f"{f}.units") if "units" in v else 1
    spares = s.integer(0, MAX_UNITS - 1)(v["spares"], f"{f}.spares") if standby else None
    required = s.integer(1, MAX_UNITS)(v["required"], f"{f}.required") if "required" in v else 1
    if standby:
        assert spares is not None
        if required + spares > MAX_UNITS:
            raise InputError(f"{f}.spares", f"required + spares at most {MAX_UNITS}")
    elif required > units:
        raise InputError(f"{f}.required", f"must not exceed units ({units})")
    if "dormancy" in v and not standby:
        raise InputError(f"{f}.dormancy", "only with spares (a standby group)")
    dormancy = s.number(0.0, 1.0)(v["dormancy"], f"{f}.dormancy") if "dormancy" in v else 0.0
    if standby and 0.0 < dormancy < 1.0 and required != 1:
        raise InputError(f"{f}.dormancy", "warm spares (0 < dormancy < 1) need required = 1")
    if standby:
        for key in ("preventive", "inspection", "repair_quality", "state"):
            if key in node:
                raise InputError(f"{f}.spares", f"block has {key}, which a standby group cannot take")
        if repairable and "repair" not in v and "repair" not in node:
            raise InputError(f"{f}.repair", "a standby group needs a repair model (the block has instant repair)")
    if not repairable:
        for key in ("repair", "inspection"):
            if key in v:
                raise InputError(f"{f}.{key}", "only in a repairable diagram")
    if "inspection" in v:
        if standby or kind != "component":
            raise InputError(f"{f}.inspection", "a proof test is for a component block (active units)")
        if "preventive" in node:
            raise InputError(f"{f}.inspection", "not together with the block's preventive policy")
    models = {key: resolve(check_model(v[key], f"{f}.{key}"), f"{f}.{key}") for key in ("model", "repair")
              if key in v}
    inspection = s.PROOF_TEST(v["inspection"], f"{f}.inspection") if "inspection" in v else None
    return Option(name=name, cost=cost, units=units, required=required, spares=spares, dormancy=dormancy,
                  model=models.get("model"), repair=models.get("repair"), inspection=inspection)


def check_space(diagram: Mapping[str, Any], options: Any, *, repairable: bool, resolve: Any = None) -> Space:
    """The design space of an engine-form diagram: `options` maps block id to a list of
    options (at least 1, at most MAX_OPTIONS, names distinct). `resolve(model, field)` turns
    a checked BlockModel into engine form (the default takes inline models only)."""
    resolve = resolve or _inline_model
    if not isinstance(options, Mapping) or not options:
        raise InputError("options", "must be an object mapping block ids to lists of options, at least one block")
    if len(options) > MAX_BLOCKS:
        raise InputError("options", f"at most {MAX_BLOCKS} blocks with options")
    blocks, opts = [], []
    for bid, lst in options.items():
        f = f"options.{bid}"
        found = node_at(diagram, bid) if isinstance(bid, str) else None
        if found is None:
            raise InputError(f, f"{bid!r} is no block of the diagram")
        holder, node = found
        if not isinstance(lst, Sequence) or isinstance(lst, (str, bytes)) or not 1 <= len(lst) <= MAX_OPTIONS:
            raise InputError(f, f"must be a list of 1 to {MAX_OPTIONS} options")
        for p in holder.get("phases") or []:
            if bid.rpartition("/")[2] in p.get("not_needed", []):
                raise InputError(f, "the block is named by a mission phase; phased missions take no options")
        parsed = [_option(o, f"{f}[{i}]", node, repairable, i, resolve) for i, o in enumerate(lst)]
        names = [o.name for o in parsed]
        for i, n in enumerate(names):
            if n in names[:i]:
                raise InputError(f"{f}[{i}].name", f"{n!r} used twice for this block")
        if any(o.units > 1 for o in parsed):
            taken = {n["id"] for n in holder["nodes"]}
            local = bid.rpartition("/")[2]
            for o in parsed:
                for u in range(1, o.units + 1):
                    if f"{local}#{u}" in taken:
                        raise InputError(f, f"a copy would be named {local}#{u}, which a node of the diagram "
                                            "already is: rename that node")
            if holder.get("network"):
                raise InputError(f, "active units need a k-of-n gate, which a network diagram has not: use spares")
        blocks.append(bid)
        opts.append(tuple(parsed))
    return Space(tuple(blocks), tuple(opts))


def _inline_model(m: Mapping[str, Any], f: str) -> dict[str, Any]:
    if "saved_model_id" in m:
        raise InputError(f"{f}.saved_model_id", "give the model inline here (saved models are resolved by the "
                                                "service)")
    out = {"distribution_id": m["distribution_id"], "params": m["params"]}
    if "base_distribution_id" in m:
        out["base_distribution_id"] = m["base_distribution_id"]
    return out


def arrangement(node: Mapping[str, Any], o: Option) -> list[dict[str, Any]]:
    """The node(s) an option puts in the block's place: one node, or the copies (the gate
    is added by the caller)."""
    base = dict(copy.deepcopy(node))
    if o.model is not None:
        base["model"] = dict(o.model)
    if o.repair is not None:
        base["repair"] = dict(o.repair)
        base.pop("instant_repair", None)
    if o.inspection is not None:
        base["inspection"] = dict(o.inspection)
    if o.standby:
        out = {k: base[k] for k in STANDBY_KEYS if k in base}
        out.update(type="standby", k=o.required, spares=o.spares, dormancy=o.dormancy)
        return [out]
    if o.units == 1:
        return [base]
    return [{**copy.deepcopy(base), "id": f"{node['id']}#{u}"} for u in range(1, o.units + 1)]


def apply_option(diagram: Mapping[str, Any], block_id: str, o: Option) -> dict[str, Any]:
    """A copy of `diagram` with block `block_id` replaced by option `o`'s arrangement."""
    out = copy.deepcopy(dict(diagram))
    head, _, rest = block_id.partition("/")
    if rest:
        for n in out["nodes"]:
            if n["id"] == head:
                n["diagram"] = apply_option(n["diagram"], rest, o)
        return out
    i = next(k for k, n in enumerate(out["nodes"]) if n["id"] == head)
    node = out["nodes"][i]
    placed = arrangement(node, o)
    if len(placed) == 1:
        out["nodes"][i] = placed[0]
        return out
    gate = {"id": head, "type": "knode", "n": o.required, "k": o.units}
    out["nodes"][i:i + 1] = [*placed, gate]
    edges = []
    for e in out["edges"]:
        if e["target"] == head:
            edges.extend({**e, "target": c["id"]} for c in placed)
        else:
            edges.append(e)
    edges.extend({"source": c["id"], "target": head} for c in placed)
    out["edges"] = edges
    for group in out.get("ccf") or []:
        # Redundant copies of a common-cause member share its common cause.
        members = group.get("members", [])
        if head in members:
            group["members"] = [m for m in members if m != head] + [c["id"] for c in placed]
    return out


def design_diagram(diagram: Mapping[str, Any], space: Space, choice: Sequence[int]) -> dict[str, Any]:
    """The diagram of one design: each block of the space on its chosen option."""
    out = dict(diagram)
    for b, i in zip(space.blocks, choice, strict=True):
        out = apply_option(out, b, space.options[space.blocks.index(b)][i])
    return out


def largest(space: Space) -> list[int]:
    """The design with the most units per block (what the quote prices: the costliest run)."""
    return [max(range(len(opts)), key=lambda i: (opts[i].units if not opts[i].standby
                                                 else opts[i].required + (opts[i].spares or 0)))
            for opts in space.options]
