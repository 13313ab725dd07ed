"""A fleet's forecast and alerts from its stored body: each item's life law (one model, or a
regression model's curve per item from its covariates), the spec's forecast block with the
per-item rows, meter readings applied, and the alert rules evaluated. Pure functions over the
fleet body (plain data), so the service and the benchmarks call the same code."""

from __future__ import annotations

from typing import Any

from bathtub import models
from bathtub.errors import InputError, RowError
from bathtub.fleet.forecast import MAX_RENEWAL_LAWS, failure_probability, forecast
from bathtub.fleet.lives import CovariateLives
from bathtub.fleet.uncertain import parameter_forecast
from bathtub.fleet.usage import ItemUsage, apply_reading, rate_used
from bathtub.regression import kinds as regression_kinds

NOT_IN_FLEET = "must name an item of the fleet"
DRAWS = 100  # parameter draws of a forecast with uncertainty: parameters, unless the fleet says
MAX_DRAWS = 2000
# the most cells (draws × items × periods) one forecast with parameter uncertainty evaluates
MAX_DRAW_CELLS = 50_000_000
DRAW_CELLS_RULE = f"draws × items × periods must be at most {MAX_DRAW_CELLS:,}"
REPEATED_ITEM = "must not repeat an item of the request"


def item_lives(life: Any, body: dict[str, Any], items: list[dict[str, Any]]) -> Any:
    """The items' life laws: the model itself, or (a regression model) each item's own from its
    covariates merged over the fleet's defaults; a missing or unknown covariate names the item."""
    if not isinstance(life, dict):
        return life
    default = body.get("default_covariates") or {}
    try:
        return CovariateLives.from_covariates(life, [{**default, **(i.get("covariates") or {})} for i in items])
    except RowError as e:
        name = items[e.row]["name"]
        field = e.field.removeprefix("covariates")
        k = next(j for j, i in enumerate(body["items"]) if i["name"] == name)
        raise InputError(f"items[{k}].covariates{field}", f"item {name!r}: {e.row_rule} (or give it in "
                                                          "default_covariates)") from None


def life_draws(record: dict[str, Any], body: dict[str, Any]) -> list[Any]:
    """The life law of each of the fleet's parameter draws (`draws`, `seed` from the body): draw i
    depends on (seed, i) only. A model with no sampling distribution is refused on `uncertainty`."""
    n = _draw_count(body)
    model = models.from_record(record)
    return [models.from_record(d).fleet_life(body["model_id"])
            for d in model.parameter_draws(n, int(body.get("seed") or 0), field="uncertainty")]


def _draw_count(body: dict[str, Any]) -> int:
    """The body's draws, within the work one forecast may do (refused on `draws` past it)."""
    n = int(body.get("draws") or DRAWS)
    cells = n * max(len(body["items"]), 1) * body["periods"]
    if cells > MAX_DRAW_CELLS:
        raise InputError("draws", f"{DRAW_CELLS_RULE} (here {cells:,}): fewer draws or a shorter horizon")
    return n


def check_uncertainty(record: dict[str, Any], body: dict[str, Any]) -> None:
    """At the door: with uncertainty: parameters the model's parameters must be drawable."""
    if body.get("uncertainty") == "parameters":
        models.from_record(record).parameter_draws(1, int(body.get("seed") or 0), field="uncertainty")
        _draw_count(body)


def check_covariates(life: Any, body: dict[str, Any]) -> None:
    """At the door: a regression model needs every covariate for every item; another model none."""
    if isinstance(life, dict):
        lives = item_lives(life, body, body["items"])
        if body["replace_failed"] and lives.distinct_laws() > MAX_RENEWAL_LAWS:
            raise InputError("replace_failed", f"with replacement a Cox fleet takes at most {MAX_RENEWAL_LAWS} "
                                               f"distinct covariate sets (a renewal function each); here "
                                               f"{lives.distinct_laws()}")
        return
    if body.get("default_covariates"):
        raise InputError("default_covariates", f"model {body['model_id']} has no covariates (a regression model "
                                               "has)")
    for k, i in enumerate(body["items"]):
        if i.get("covariates"):
            raise InputError(f"items[{k}].covariates", f"item {i['name']!r}: model {body['model_id']} has no "
                                                       "covariates (a regression model has)")


def fleet_forecast(life: Any, body: dict[str, Any], record: dict[str, Any] | None = None
                   ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The spec's forecast block and the per-item rows, from a fleet body. With the body's
    `uncertainty` "parameters" and the life model's `record`, the block adds
    `parameter_uncertainty` (`bathtub.fleet.uncertain`) beside the point model's interval."""
    items = body["items"]
    rows, ages, rates, used = [], [], [], []
    for i in items:
        rate, basis = rate_used(body["rate_source"], i.get("estimated_rate"), i.get("rate"), body.get("default_rate"))
        rows.append({"name": i["name"], "current_use": i["current_use"], "rate_used": rate, "rate_basis": basis})
        if rate is not None:
            ages.append(i["current_use"])
            rates.append(rate)
            used.append(len(rows) - 1)
    lives = item_lives(life, body, [items[j] for j in used])
    fc = forecast(lives, ages, rates, body["periods"], renewal=body["replace_failed"], confidence=body["confidence"])
    for k, j in enumerate(used):
        rows[j]["expected_failures"] = float(fc.item_expected[k])
        rows[j]["failure_probability_next_period"] = float(fc.item_next[k])
    missing = len(items) - len(used)
    status = "ok" if missing == 0 else "partial"
    out = {"status": status, **fc.to_dict(), "period_label": body["period_label"],
           "items_forecast": len(used), "items_without_rate": missing}
    out["interval"]["basis"] = "point model"
    if body.get("uncertainty") == "parameters":
        if record is None:
            raise InputError("uncertainty", "needs the fleet's saved life model")
        draws = life_draws(record, body)
        out["parameter_uncertainty"] = parameter_forecast(
            [item_lives(d, body, [items[j] for j in used]) for d in draws], ages, rates, body["periods"],
            seed=int(body.get("seed") or 0), renewal=body["replace_failed"], confidence=body["confidence"]).to_dict()
    notes = []
    if missing:
        notes.append(f"{missing} item(s) have no usage rate (no manual rate, no estimate, no fleet default) and are "
                     "left out of the counts")
    if isinstance(life, dict):
        out["life"] = "each item's own curve from its covariates (regression model)"
        end = regression_kinds.support_end(life)
        if end is not None and any(a + r * body["periods"] > end for a, r in zip(ages, rates)):
            notes.append(f"the Cox baseline ends at the last failure time in its data ({end:g}): no failures are "
                         "counted for use beyond it, so items used past it are under-forecast")
    if notes:
        out["note"] = "; ".join(notes)
    return out, rows


def apply_readings(body: dict[str, Any], readings: list[dict[str, Any]]) -> tuple[dict[str, Any], int]:
    """The fleet body after the readings (all checked first: an unknown or repeated item refuses all)."""
    by_name = {i["name"]: k for k, i in enumerate(body["items"])}
    seen: dict[str, str] = {}
    for r in readings:
        if r["key"] not in by_name:
            raise InputError(f"{r['row']}.name", f"{NOT_IN_FLEET} (no item {r['key']!r})")
        if r["key"] in seen:
            raise InputError(f"{r['row']}.name", f"{REPEATED_ITEM} ({r['key']!r} is also {seen[r['key']]})")
        seen[r["key"]] = r["row"]
    items = [dict(i) for i in body["items"]]
    updated = 0
    for r in readings:
        item = items[by_name[r["key"]]]
        state = ItemUsage(item["current_use"], item.get("read_at"), item.get("baseline_use"), item.get("baseline_at"),
                          item.get("estimated_rate"))
        new, what = apply_reading(state, r["current_use"], r["read_at"], body["period_label"])
        if r["rate"] is not None:
            item["rate"] = r["rate"]
        if what != "ignored":
            item.update(current_use=new.current_use, read_at=new.read_at, baseline_use=new.baseline_use,
                        baseline_at=new.baseline_at, estimated_rate=new.estimated_rate)
            updated += 1
        elif r["rate"] is not None:
            updated += 1
    return {**body, "items": items}, updated


def ingest_readings(body: dict[str, Any], readings: list[dict[str, Any]], life: Any,
                    record: dict[str, Any] | None = None
                    ) -> tuple[dict[str, Any], int, dict[str, Any], list[dict[str, Any]]]:
    """Usage ingest in one step: (the fleet body after the readings with its alert rules' new
    state, how many items the readings changed, the forecast from then, the rule crossings to
    mail). `life` and `record` as `fleet_forecast` takes them."""
    body, updated = apply_readings(body, readings)
    fc, _ = fleet_forecast(life, body, record)
    rules, fired = evaluate_rules(body["alert_rules"], fc, life, body)
    return {**body, "alert_rules": rules}, updated, fc, fired


def evaluate_rules(rules: list[dict[str, Any]], fc: dict[str, Any], life: Any,
                   body: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(rules with their new state, the crossings to mail): a rule fires when its figure is above the
    threshold and it was not already active; it re-arms when the figure is back at or below."""
    out, fired = [], []
    for rule in rules:
        value, detail = _figure(rule, fc, life, body)
        above = value > rule["threshold"]
        if above and not rule["active"]:
            fired.append({**rule, "value": value, "detail": detail})
        out.append({**rule, "active": above, "last_value": value})
    return out, fired


def _figure(rule: dict[str, Any], fc: dict[str, Any], life: Any, body: dict[str, Any]) -> tuple[float, str]:
    if rule["kind"] == "expected_failures_next_period":
        return float(fc["expected_failures"][0]), "expected failures in the next period"
    if rule["kind"] == "expected_failures_horizon":
        return float(fc["total_expected"]), f"expected failures over {fc['periods']} periods"
    ages, rates, names, used = [], [], [], []
    for i in body["items"]:
        rate, _ = rate_used(body["rate_source"], i.get("estimated_rate"), i.get("rate"), body.get("default_rate"))
        if rate is not None:
            ages.append(i["current_use"])
            rates.append(rate)
            names.append(i["name"])
            used.append(i)
    if not ages:
        return 0.0, "no item has a usage rate"
    probs = failure_probability(item_lives(life, body, used), ages, rates, rule["periods"])
    k = int(probs.argmax())
    return float(probs[k]), f"item {names[k]!r}: chance of failing within {rule['periods']} period(s)"
