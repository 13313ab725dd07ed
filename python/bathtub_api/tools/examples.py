"""Worked request bodies, one per action, published as each operation's OpenAPI example (Swagger
UI shows it instead of a body generated from the schema). Taken from the guide's topics and the
README's quick start.

A string that is exactly `{name}` stands for the id of one of the caller's own items:
`{dataset_id}` a dataset with columns time and state (datasets/create's example), `{model_id}`
a saved life model (fit/life's), `{rbd_id}` a diagram with blocks P1 and P2 (rbd/create's),
`{run_id}` its analysis run, `{job_id}` a what_to_improve job, `{analysis_id}` a saved strategy
analysis, `{fleet_id}`, `{study_id}`, `{report_id}`, `{link_id}`, `{upload_id}`.
tests/service/test_examples.py posts every example, each placeholder filled from the answer
of the example that makes such an item, and expects 2xx.

Actions without an example here (MISSING) need an uploaded file or an item no other example
makes (an ALT model, a degradation dataset, a photo); they are named so a test can hold the
list to what it says.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from bathtub_api.registry import Registry

WEIBULL = [{"name": "alpha", "value": 1000.0}, {"name": "beta", "value": 2.5}]
PUMP = {"distribution_id": "weibull", "params": WEIBULL}
REPAIR = {"distribution_id": "exponential", "params": [0.1]}
PREVENTIVE = {"policy": "age", "interval": 500.0, "cost": 100.0}

EXAMPLES: dict[str, dict[str, Any]] = {
    "guide": {"topic": "life_data"},
    "datasets/create": {"name": "pumps", "csv": "time,state\n120,F\n340,S\n410,F\n95,F\n560,F\n780,S\n"},
    "datasets/delete_rows": {"id": "{dataset_id}", "rows": [0]},
    "datasets/delete": {"id": "{dataset_id}"},
    "get/dataset": {"id": "{dataset_id}", "limit": 100},
    "list/dataset": {"limit": 20, "name_contains": "pump"},
    "list/job": {"limit": 20},
    "get/job": {"id": "{job_id}"},
    "jobs/cancel": {"id": "{job_id}"},
    "fit/life": {"name": "pump life", "dataset_id": "{dataset_id}", "distribution": "weibull",
                 "mapping": {"x": "time", "c": "state"}},
    "fit/demand": {"name": "relief valves", "batches": [{"demands": 120, "failures": 1, "label": "2024"},
                                                        {"demands": 140, "failures": 0, "label": "2025"}]},
    "get/model": {"id": "{model_id}"},
    "list/model": {"limit": 20},
    "list/degradation_model": {"limit": 20},
    "strategy/optimal_replacement": {**PUMP, "planned_cost": 100.0, "unplanned_cost": 1000.0, "save": True,
                                     "name": "pump replacement"},
    "strategy/failure_finding": {"distribution_id": "exponential", "params": [1e-4], "target_availability": 0.99},
    "strategy/demonstration_test": {"reliability": 0.9, "mission_time": 100.0, "confidence": 0.9, "shape": 2.0},
    "strategy/shut_plan": {**PUMP, "current_age": 400.0, "usage_rate": 20.0, "horizon_days": 365.0,
                           "failure_cost": 5000.0, "today": "2026-01-05",
                           "shuts": [{"name": "spring shut", "cost": 200.0, "dates": ["2026-04-01"]},
                                     {"name": "autumn shut", "cost": 200.0, "dates": ["2026-10-01"]}]},
    "get/strategy_analysis": {"id": "{analysis_id}"},
    "list/strategy_analysis": {"limit": 20},
    "rbd/create": {"name": "pumps", "unit": "h", "repairable": True, "nodes": [
        {"id": "in", "type": "input"}, {"id": "out", "type": "output"},
        {"id": "P1", "type": "component", "model": PUMP, "repair": REPAIR, "preventive": PREVENTIVE},
        {"id": "P2", "type": "component", "model": PUMP, "repair": REPAIR, "preventive": PREVENTIVE}],
        "edges": [{"source": "in", "target": "P1"}, {"source": "in", "target": "P2"},
                  {"source": "P1", "target": "out"}, {"source": "P2", "target": "out"}]},
    "rbd/edit": {"id": "{rbd_id}", "ops": [{"op": "update_node", "id": "P2", "label": "standby pump"}]},
    "get/rbd": {"id": "{rbd_id}"},
    "list/rbd": {"limit": 20},
    "rbd_analysis/analyze": {"id": "{rbd_id}", "horizon": 8760.0, "replications": 200, "seed": 1},
    "get/rbd_run": {"id": "{run_id}"},
    "list/rbd_run": {"rbd_id": "{rbd_id}", "limit": 20},
    "rbd_analysis/what_to_improve": {"id": "{rbd_id}", "horizon": 87600.0, "replications": 20000},
    "rbd_analysis/interval_search": {"id": "{rbd_id}", "knob": "preventive", "blocks": ["P1", "P2"], "low": 100.0,
                                     "high": 2000.0, "points": 5, "horizon": 8760.0, "replications": 200},
    "rbd_analysis/cheapest_design": {"id": "{rbd_id}", "horizon": 8760.0, "replications": 200,
                                     "target": {"figure": "availability", "value": 0.9},
                                     "options": {"P2": [{"name": "as is", "cost": 0.0},
                                                        {"name": "better pump", "cost": 500.0,
                                                         "model": {"distribution_id": "weibull",
                                                                   "params": [2000.0, 2.5]}}]}},
    "uploads/create": {"purpose": "excel_import", "filename": "plant.xlsx"},
    "get/upload": {"id": "{upload_id}"},
    "list/upload": {"limit": 20},
    "list/photo": {"limit": 20},
    "fleets/create": {"name": "pumps", "model_id": "{model_id}", "period_label": "month", "periods": 12,
                      "items": [{"name": "P1", "current_use": 1200.0, "rate": 90.0}]},
    "fleets/update": {"id": "{fleet_id}", "items": [{"name": "P2", "current_use": 300.0, "rate": 90.0}]},
    "fleets/delete": {"id": "{fleet_id}"},
    "get/fleet": {"id": "{fleet_id}"},
    "list/fleet": {"limit": 20},
    "list/tracked_fleet": {"limit": 20},
    "rcm/create": {"name": "cooling water", "functions": [{"text": "Supply 50 l/s of cooling water", "failures": [
        {"text": "No flow", "modes": [{"text": "Pump bearing seizes", "consequence": "operational",
                                       "decision": {"outcome": "fixed_interval", "interval": 6,
                                                    "interval_unit": "months", "task": "Replace bearing"}}]}]}]},
    "rcm/update": {"id": "{study_id}", "mode": "merge", "name": "cooling water (rev. 2)"},
    "get/rcm_study": {"id": "{study_id}"},
    "list/rcm_study": {"limit": 20},
    "reports/create": {"name": "pump review", "note": "Quarterly review", "items": [
        {"kind": "model", "id": "{model_id}", "note": "Weibull fit of the pump lives"},
        {"kind": "rbd", "id": "{rbd_id}"}]},
    "reports/delete": {"id": "{report_id}"},
    "get/report": {"id": "{report_id}"},
    "list/report": {"limit": 20},
    "sharing/create_link": {"kind": "model", "id": "{model_id}", "expires_in": 604800},
    "sharing/revoke_link": {"id": "{link_id}"},
    "sharing/list_links": {"limit": 20},
}

# Actions whose example would need an uploaded file or an item no other example makes.
MISSING = frozenset({
    "alt/bootstrap", "degradation/create", "degradation/remaining_life", "get/degradation_model",
    "datasets/upload", "uploads/import_excel", "uploads/import_rbd", "rbd/upload_outage_log", "get/photo",
    "tracked_fleets/create", "tracked_fleets/update", "tracked_fleets/delete", "get/tracked_fleet",
    "fit/recurrent",
})


def attach(reg: Registry) -> None:
    """Give each registered action its example; refuse an example for an action the registry
    lacks (a renamed action must take its example with it)."""
    names = {(f"{a.tool}/{a.action}" if a.action else a.tool): key for key, a in reg.actions.items()}
    unknown = set(EXAMPLES) - set(names)
    if unknown:
        raise RuntimeError(f"examples for actions this service lacks: {', '.join(sorted(unknown))}")
    for name, example in EXAMPLES.items():
        key = names[name]
        reg.actions[key] = dataclasses.replace(reg.actions[key], example=example)
