"""From a stored diagram to the engine's input: saved models and subsystems resolved, and
every field the engine does not simulate yet refused, naming the node and the field.

Pure: the caller loads the saved models and diagrams the stored one names
(`referenced_ids`) and passes them in.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bathtub.degradation import conditional_life, life_table
from bathtub.distributions import FAMILIES, MIXTURE
from bathtub.errors import InputError
from bathtub.rbd.blocks import node_models
from bathtub.rbd.covariate_life import block_life
from bathtub.recurrent.covariates import weibull_at
from bathtub.regression.lives import check_life_model
from bathtub.units import units_clash

# Node fields handed to the engine as stored (it validates them, naming node and field).
NODE_ENGINE_FIELDS = ("n", "k", "spares", "cold", "dormancy", "preventive", "inspection", "costs", "capacity",
                      "maintenance_group", "repair_quality", "state")
REPAIRABLE_NODE_FIELDS = ("instant_repair", "crew_priority", "repair_one_at_a_time", "switch_back")
# Diagram settings the engine reads (the top diagram's; a subsystem's are refused by the engine).
DIAGRAM_ENGINE_FIELDS = ("ccf", "maintenance_groups", "costs", "production", "phases", "network",
                         "safety_function", "target_sil", "unit")
MAX_DEPTH = 16


def referenced_ids(d: Mapping[str, Any]) -> tuple[set[str], set[str]]:
    """(saved model ids, subsystem diagram ids) a diagram names directly."""
    models: set[str] = set()
    rbds: set[str] = set()
    for n in d["nodes"]:
        for _, m in node_models(n):
            mid = m.get("saved_model_id")
            if mid:
                models.add(mid)
        if n.get("subsystem_rbd_id"):
            rbds.add(n["subsystem_rbd_id"])
    return models, rbds


def check_no_cycle(root_id: str, d: Mapping[str, Any], diagrams: Mapping[str, Mapping[str, Any]]) -> None:
    """Refuse a diagram that embeds itself through its subsystems (at any depth)."""

    def walk(body: Mapping[str, Any], path: tuple[str, ...], prefix: str) -> None:
        if len(path) > MAX_DEPTH:
            raise InputError(prefix + "nodes", f"subsystems nested more than {MAX_DEPTH} deep")
        for n in body["nodes"]:
            sub = n.get("subsystem_rbd_id")
            if not sub:
                continue
            field = f"{prefix}nodes.{n['id']}"
            if sub in path:
                chain = " -> ".join((*path, sub))
                raise InputError(f"{field}.subsystem_rbd_id", f"embeds a cycle of diagrams ({chain})")
            if sub in diagrams:
                walk(diagrams[sub], (*path, sub), f"{field}.subsystem.")

    walk(d, (root_id,), "")


def recurrent_life(body: Mapping[str, Any], model_id: str, field: str, covariates: Mapping[str, Any] | None = None,
                   ) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """A saved recurrent model as a block's life and repair quality: a power-law NHPP is a
    Weibull(alpha = lambda^(-1/beta), beta) life under minimal repair (Kijima q = 1), with
    covariates z (the block's `model.covariates`) lambda·e^{z·gamma}; a Kijima GRP is its Weibull
    baseline with its q; an HPP an exponential life (any repair). Other recurrent models have no
    such life and are refused. `field` names the block's saved_model_id."""
    dist = body.get("distribution")
    params = {p["name"]: p["value"] for p in body.get("params") or []}
    cov_field = field.removesuffix("saved_model_id") + "covariates"
    if body.get("covariate_effects"):
        if not covariates:
            raise InputError(cov_field, f"required: model {model_id} was fitted with covariates, so its intensity "
                                        "depends on them: give the system's value of each")
        alpha, beta = weibull_at(body["covariate_effects"], covariates, cov_field)
        life = {"distribution_id": "weibull", "params": [{"name": "alpha", "value": alpha},
                                                          {"name": "beta", "value": beta}]}
        return life, {"model": "kijima1", "q": 1.0}
    if covariates:
        raise InputError(cov_field, f"model {model_id} has no covariates (a regression model or a power law fitted "
                                    "with covariates has)")
    if dist in ("crow_amsaa", "power_law"):
        alpha = params["lambda"] ** (-1.0 / params["beta"])
        life = {"distribution_id": "weibull", "params": [{"name": "alpha", "value": alpha},
                                                          {"name": "beta", "value": params["beta"]}]}
        return life, {"model": "kijima1", "q": 1.0}
    if dist in ("kijima1", "kijima2"):
        life = {"distribution_id": "weibull", "params": [{"name": "alpha", "value": params["alpha"]},
                                                          {"name": "beta", "value": params["beta"]}]}
        return life, {"model": dist, "q": params["q"]}
    if dist == "hpp":
        return {"distribution_id": "exponential", "params": [{"name": "failure_rate", "value": params["lambda"]}]}, None
    raise InputError(field, f"model {model_id} is a {dist!r} recurrent model; a block's life can be a saved power-law "
                            "(crow_amsaa), kijima1/kijima2 or hpp model")


def model_from_saved(body: Mapping[str, Any], model_id: str, field: str, unit: str | None) -> dict[str, Any]:
    """A saved life model as an inline BlockModel; refuses what cannot be a block's life."""
    dist = body.get("distribution")
    opts = body.get("options") or {}
    if body.get("kind") == "recurrent":
        model_unit = body.get("unit")
        if unit and model_unit and model_unit != unit:
            raise InputError(field, f"model {model_id} is in {model_unit!r} but the diagram is in {unit!r}")
        return recurrent_life(body, model_id, field)[0]
    if body.get("kind", "distribution") != "distribution" or (dist not in FAMILIES and dist != MIXTURE):
        raise InputError(field, f"model {model_id} is {dist!r} ({body.get('kind')}); a saved parametric life "
                                "model is needed (not a non-parametric one)")
    if opts.get("zi") or opts.get("lfp"):
        raise InputError(field, f"model {model_id} is zero-inflated or limited-population; it cannot be a block's life")
    model_unit = body.get("unit")
    if units_clash(model_unit, unit):
        raise InputError(field, f"model {model_id} is in {model_unit!r} but the diagram is in {unit!r}")
    out: dict[str, Any] = {"distribution_id": dist, "params": [{"name": p["name"], "value": p["value"]}
                                                               for p in body["params"]]}
    if dist == MIXTURE:
        out["base_distribution_id"] = body.get("base_distribution")
    return out


def check_saved(body: Mapping[str, Any], model_id: str, field: str, unit: str | None,
                covariates: Mapping[str, Any] | None = None) -> None:
    """Refuse a saved model that cannot be a block's life (what `engine_form` would refuse;
    `covariates`: the naming block's, which a power law fitted with covariates needs)."""
    if body.get("kind") == "recurrent" and body.get("covariate_effects"):
        if units_clash(body.get("unit"), unit):
            raise InputError(field, f"model {model_id} is in {body.get('unit')!r} but the diagram is in {unit!r}")
        recurrent_life(body, model_id, field, covariates)
        return
    if body.get("kind") == "regression":
        check_life_model(body, model_id, field)
        if units_clash(body.get("unit"), unit):
            raise InputError(field, f"model {model_id} is in {body.get('unit')!r} but the diagram is in {unit!r}")
        return
    model_from_saved(body, model_id, field, unit)


def _regression_block(n: Mapping[str, Any], f: str, models: Mapping[str, Mapping[str, Any]], unit: str | None,
                      warnings: list[str]) -> dict[str, Any] | None:
    """A block on a saved regression model (fixed covariates and/or schedules), else None;
    covariates or schedules on any other model are refused."""
    m = n.get("model") or {}
    mid = m.get("saved_model_id")
    if mid and mid not in models:
        raise InputError(f"{f}.model.saved_model_id", f"no model with id {mid!r}")
    body = models.get(mid) if mid else None
    if body is not None and body.get("kind") == "regression" and "joint_unit" not in m:
        return block_life(body, mid, m.get("covariates"), n.get("covariate_schedules"), f, unit, warnings)
    if body is not None and body.get("kind") == "recurrent" and body.get("covariate_effects"):
        if n.get("covariate_schedules"):
            raise InputError(f"{f}.covariate_schedules", f"model {mid} is a power law with covariates: give fixed "
                                                         "values in model.covariates (schedules need a saved "
                                                         "regression model)")
        if units_clash(body.get("unit"), unit):
            raise InputError(f"{f}.model.saved_model_id", f"model {mid} is in {body.get('unit')!r} but the diagram "
                                                          f"is in {unit!r}")
        return recurrent_life(body, mid, f"{f}.model.saved_model_id", m.get("covariates"))[0]
    if m.get("covariates"):
        raise InputError(f"{f}.model.covariates", "only with a saved regression model or a power law fitted with "
                                                  "covariates (model.saved_model_id)")
    if n.get("covariate_schedules"):
        what = f"model {mid} is not a regression model" if mid else "the block's life is not a saved model"
        raise InputError(f"{f}.covariate_schedules", f"needs a saved regression model (cox, weibull_ph, "
                                                     f"lognormal_aft, loglogistic_aft); {what}")
    return None


def joint_life(
    body: Mapping[str, Any], model_id: str, unit_in: Mapping[str, Any], field: str, unit: str | None
) -> dict[str, Any]:
    """A joint unit's life for the engine: its conditional remaining life given its age and
    readings (`bathtub.degradation.conditional_life`), tabulated as [t, F] knots.

    The conditioning on survival to the unit's age is done here, exactly (S(age + s) / S(age)
    of the closed-form first-crossing law), so the engine's block starts new at the mission's
    start with that remaining life; the table's linear interpolation is the only approximation."""
    if body.get("kind") != "degradation" or body.get("model") != "random_effects":
        raise InputError(f"{field}.saved_model_id", f"model {model_id} is not a random-effects degradation model; "
                                                    "a joint unit needs one (degradation create, model random_effects)")
    model_unit = body.get("unit")
    if unit and model_unit and model_unit != unit:
        raise InputError(f"{field}.saved_model_id", f"model {model_id} is in {model_unit!r} but the diagram is in "
                                                    f"{unit!r}")
    if unit_in.get("covariates"):
        raise InputError(f"{field}.joint_unit.covariates", f"model {model_id} has no covariates")
    try:
        life = conditional_life(body, float(unit_in.get("age", 0.0)), unit_in.get("readings") or [])
        return {"distribution_id": "table", "table": life_table(life)}
    except InputError as e:
        sub = e.field if e.field.startswith("readings") or e.field == "age" else ""
        raise InputError(f"{field}.joint_unit" + (f".{sub}" if sub else ""), e.rule) from None


def _check_joint_block(n: Mapping[str, Any], field: str) -> None:
    """A joint unit is one running unit's remaining life from its age: simulated on a single
    component with no spares, no replacement (a new unit is not this unit) and no other age."""
    if n["type"] != "component":
        raise InputError(f"{field}.model.joint_unit", "simulated on a component block only (one running unit)")
    for key in ("preventive", "inspection", "state", "spares"):
        if n.get(key) is not None:
            raise InputError(f"{field}.{key}", "not with a joint unit (its life is one running unit's remaining "
                                               "life from its age)")
    if n.get("n", 1) != 1:
        raise InputError(f"{field}.n", "must be 1 with a joint unit (one running unit)")


def _model(
    m: Mapping[str, Any], field: str, models: Mapping[str, Mapping[str, Any]], unit: str | None
) -> dict[str, Any]:
    if "joint_unit" in m:
        mid = m["saved_model_id"]
        if mid not in models:
            raise InputError(f"{field}.saved_model_id", f"no model with id {mid!r}")
        return joint_life(models[mid], mid, m["joint_unit"], field, unit)
    return life_model(m, field, models, unit)


def life_model(
    m: Mapping[str, Any], field: str, models: Mapping[str, Mapping[str, Any]], unit: str | None
) -> dict[str, Any]:
    """A block's (or a design option's) life or repair model as the engine takes it: a saved
    model's id as the inline model it stands for, an inline model as given. `models`: saved
    model bodies by id; `unit`: the diagram's."""
    if "saved_model_id" in m:
        mid = m["saved_model_id"]
        if mid not in models:
            raise InputError(f"{field}.saved_model_id", f"no model with id {mid!r}")
        return model_from_saved(models[mid], mid, f"{field}.saved_model_id", unit)
    out = {"distribution_id": m["distribution_id"], "params": m["params"]}
    if "base_distribution_id" in m:
        out["base_distribution_id"] = m["base_distribution_id"]
    return out


def _units(units: list[dict[str, Any]], f: str, models: Mapping[str, Mapping[str, Any]],
           d: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A standby group's non-identical units with their models resolved (a saved recurrent
    model is a life here without its repair quality: standby units are renewed by repair)."""
    out = []
    for i, u in enumerate(units):
        uf = f"{f}.units[{i}]"
        unit: dict[str, Any] = {"model": _model(u["model"], f"{uf}.model", models, d.get("unit"))}
        if "repair" in u:
            if not d.get("repairable"):
                raise InputError(f"{uf}.repair", "a unit of a non-repairable diagram is never repaired: clear the "
                                                 "repair model or make the diagram repairable")
            unit["repair"] = _model(u["repair"], f"{uf}.repair", models, d.get("unit"))
        unit.update({k: u[k] for k in ("dormancy", "capacity") if k in u})
        out.append(unit)
    return out


def _recurrent_quality(n: Mapping[str, Any], field: str, models: Mapping[str, Mapping[str, Any]],
                       repairable: bool) -> dict[str, Any] | None:
    """The repair quality a saved recurrent life brings (repairable diagrams only: without
    repair only the first life, Weibull from age 0, is simulated, which is exact)."""
    mid = (n.get("model") or {}).get("saved_model_id")
    if not repairable or mid not in models or models[mid].get("kind") != "recurrent":
        return None
    _, quality = recurrent_life(models[mid], mid, f"{field}.model.saved_model_id", n["model"].get("covariates"))
    if quality is None:
        return None
    if n.get("repair_quality") is not None:
        raise InputError(f"{field}.repair_quality", f"the saved recurrent model {mid} sets the repair quality "
                                                    f"({quality['model']}, q = {quality['q']:g}); remove this one")
    return quality


def engine_form(
    d: Mapping[str, Any],
    models: Mapping[str, Mapping[str, Any]],
    diagrams: Mapping[str, Mapping[str, Any]],
    *,
    field: str = "",
    depth: int = 0,
    warnings: list[str] | None = None,
) -> dict[str, Any]:
    """The engine's diagram (`bathtub.engine` form, subsystems inline under `diagram`).
    `models`: saved model bodies by id; `diagrams`: stored diagrams by id. `warnings`, when
    given, collects what the run's answer should say (covariate values clipped to a fit's range)."""
    warnings = [] if warnings is None else warnings
    if depth > MAX_DEPTH:
        raise InputError(field or "nodes", f"subsystems nested more than {MAX_DEPTH} deep")
    pre = f"{field}." if field else ""
    nodes = []
    for n in d["nodes"]:
        f = f"{pre}nodes.{n['id']}"
        out: dict[str, Any] = {"id": n["id"], "type": n["type"]}
        if "joint_unit" in (n.get("model") or {}):
            _check_joint_block(n, f)
        regression = _regression_block(n, f, models, d.get("unit"), warnings)
        if regression is not None:
            out["model"] = regression
        elif "model" in n:
            out["model"] = _model(n["model"], f"{f}.model", models, d.get("unit"))
        if "repair" in n:
            if not d.get("repairable"):
                # Stored diagrams may hold one (switched to non-repairable); a mission run
                # would ignore it, so it is refused rather than silently dropped.
                raise InputError(f"{f}.repair", "a block of a non-repairable diagram is never repaired: clear the "
                                                "repair model or make the diagram repairable")
            repair_id = n["repair"].get("saved_model_id")
            if repair_id in models and models[repair_id].get("kind") == "recurrent":
                raise InputError(f"{f}.repair.saved_model_id", f"model {repair_id} is a recurrent (failure) model, "
                                                               "not a repair-time distribution")
            out["repair"] = _model(n["repair"], f"{f}.repair", models, d.get("unit"))
        if "units" in n:
            out["units"] = _units(n["units"], f, models, d)
        if "switch" in n:
            out["switch"] = {k: v for k, v in n["switch"].items() if k != "life"}
            if "life" in n["switch"]:
                out["switch"]["life"] = _model(n["switch"]["life"], f"{f}.switch.life", models, d.get("unit"))
        for key in NODE_ENGINE_FIELDS:
            if n.get(key) is not None:
                out[key] = n[key]
        quality = _recurrent_quality(n, f, models, bool(d.get("repairable")))
        if quality is not None:
            out["repair_quality"] = quality
        if d.get("repairable"):
            for key in REPAIRABLE_NODE_FIELDS:
                if key in n:
                    out[key] = n[key]
        if n["type"] == "subsystem":
            sub = n["subsystem_rbd_id"]
            if sub not in diagrams:
                raise InputError(f"{f}.subsystem_rbd_id", f"no rbd with id {sub!r}")
            inner = diagrams[sub]
            if units_clash(inner.get("unit"), d.get("unit")):
                raise InputError(f"{f}.subsystem_rbd_id", f"diagram {sub} is in {inner['unit']!r}, this one in "
                                                          f"{d['unit']!r}")
            out["diagram"] = engine_form(inner, models, diagrams, field=f"{f}.subsystem", depth=depth + 1,
                                         warnings=warnings)
        nodes.append(out)
    form: dict[str, Any] = {"nodes": nodes, "edges": [dict(e) for e in d["edges"]]}
    for key in DIAGRAM_ENGINE_FIELDS:
        if d.get(key) not in (None, False, [], {}):
            form[key] = d[key]
    return form
