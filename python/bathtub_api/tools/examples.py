"""Worked request bodies, one per action, published as each operation's OpenAPI example (Swagger
UI and the docs page show it instead of a body generated from the schema). Taken from the guide's
topics and the README's quick start.

A string that is exactly `{name}` stands for the id of one of the caller's own items:
`{dataset_id}` a dataset with columns time and state (datasets/create's example), `{model_id}`
a saved life model (fit/life's), `{rbd_id}` a diagram with blocks P1 and P2 (rbd/create's),
`{run_id}` its analysis run (`{second_run_id}` another, at seed 2), `{job_id}` a what_to_improve
job, `{analysis_id}` a saved strategy analysis, `{degradation_model_id}` (degradation/create's),
`{tracked_fleet_id}` (tracked_fleets/create's), `{fleet_id}`, `{study_id}`, `{report_id}`, `{link_id}`, `{upload_id}`.
Items no example makes (a sent upload, a photo, an accelerated life model, the datasets they are
fitted on) are made first by the steps in SETUP, each the request a user sends (with the file PUT
to the upload link it answers). tests/service/test_examples.py runs those steps, posts every
example with each placeholder filled from the answer that makes its item, and expects 2xx.
"""

from __future__ import annotations

import dataclasses
import io
import json
import urllib.parse
from collections.abc import Callable
from typing import Any

import orjson

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
    "rbd_analysis/compare": {"run_ids": ["{run_id}", "{second_run_id}"]},
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
    # Accelerated tests (guide topic accelerated): bounds by resampling, a job.
    "alt/bootstrap": {"model_id": "{alt_model_id}", "replicates": 500, "kind": "parametric", "seed": 1,
                      "use_stress": 313.0, "b_lives": [0.1]},
    # Repairable systems (guide topic repairable).
    "fit/recurrent": {"name": "compressor growth", "dataset_id": "{events_dataset_id}", "model": "crow_amsaa",
                      "mapping": {"t": "t", "system": "system", "end": "end"}},
    # Degradation (guide topic life_data; the README's gearbox wear).
    "degradation/create": {"name": "gearbox wear", "dataset_id": "{wear_dataset_id}",
                           "mapping": {"i": "unit", "x": "hours", "y": "wear"}, "threshold": 10.0,
                           "direction": "up", "model": "random_effects", "unit": "h", "potential_failure": 7.0},
    "get/degradation_model": {"id": "{degradation_model_id}"},
    "degradation/remaining_life": {"id": "{degradation_model_id}", "age": 2000.0,
                                   "readings": [[1000.0, 2.4], [2000.0, 4.9]], "probability": 0.9},
    "tracked_fleets/create": {"name": "gearboxes", "model_id": "{degradation_model_id}",
                              "items": [{"name": "G1"}, {"name": "G2"}]},
    "tracked_fleets/update": {"id": "{tracked_fleet_id}", "items": [{"name": "G3"}], "remove_items": ["G2"]},
    "get/tracked_fleet": {"id": "{tracked_fleet_id}", "items_limit": 100},
    "tracked_fleets/delete": {"id": "{tracked_fleet_id}"},
    # Files (guide topic uploads): each import takes an upload link its file was sent to.
    "datasets/upload": {"upload_id": "{csv_upload_id}", "name": "lives"},
    "uploads/import_excel": {"upload_id": "{xlsx_upload_id}", "sheets": [
        {"sheet": "Pump lives", "name": "pump lives", "columns": {"time": "Time", "state": "State"}},
        {"sheet": "Valve lives", "name": "valve lives"}]},
    "uploads/import_rbd": {"upload_id": "{rbd_upload_id}", "unit": "hours"},
    "rbd/upload_outage_log": {"id": "{rbd_id}", "upload_id": "{outage_upload_id}",
                              "columns": {"asset": "Asset", "start": "Start", "end": "End", "reason": "Reason",
                                          "planned": "Planned"},
                              "tbf_distribution": "exponential", "ttr_distribution": "lognormal"},
    "get/photo": {"id": "{photo_id}"},
}


# placeholder -> (the example whose answer holds it, the answer's field)
MADE_BY: dict[str, tuple[str, str]] = {
    "dataset_id": ("datasets/create", "id"),
    "model_id": ("fit/life", "id"),
    "analysis_id": ("strategy/optimal_replacement", "analysis_id"),
    "rbd_id": ("rbd/create", "id"),
    "run_id": ("rbd_analysis/analyze", "run_id"),
    "job_id": ("rbd_analysis/what_to_improve", "job_id"),
    "fleet_id": ("fleets/create", "id"),
    "study_id": ("rcm/create", "id"),
    "report_id": ("reports/create", "id"),
    "link_id": ("sharing/create_link", "id"),
    "upload_id": ("uploads/create", "upload_id"),
    "degradation_model_id": ("degradation/create", "id"),
    "tracked_fleet_id": ("tracked_fleets/create", "id"),
}


@dataclasses.dataclass(frozen=True)
class Step:
    """A request a user sends before the examples that use its answer: `call` is an action
    ("datasets/create") or an original route ("POST /api/v1/fit"); `body` its JSON, or for a
    route that takes a file its query parameters; `read` the answer's field holding the id that
    fills `{placeholder}`. `file` gives the bytes: PUT to the answer's upload `url` for
    uploads/create, the request's body (`content_type`) for a route that takes a file."""

    placeholder: str
    call: str
    body: dict[str, Any]
    read: str
    says: str  # what the placeholder stands for, as the docs page tells a reader
    file: Callable[[], bytes] | None = None
    content_type: str = "application/octet-stream"


def workbook(sheets: dict[str, list[list[Any]]]) -> bytes:
    """An .xlsx file with these sheets (rows of cells), as a spreadsheet program saves it."""
    import openpyxl  # the service's own workbook reader; loaded only when a file is made

    book = openpyxl.Workbook()
    book.remove(book.active)
    for name, rows in sheets.items():
        sheet = book.create_sheet(name)
        for row in rows:
            sheet.append(row)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def gray_jpeg() -> bytes:
    """A 640 x 480 JPEG, as the README's `Image.new("RGB", (640, 480), "gray").save("seal.jpg")`."""
    from PIL import Image  # the service's own image library; loaded only when a file is made

    out = io.BytesIO()
    Image.new("RGB", (640, 480), "gray").save(out, "JPEG")
    return out.getvalue()


WEAR = {"unit": ["A", "A", "A", "A", "B", "B", "B", "B", "C", "C", "C", "C", "D", "D", "D", "D"],
        "hours": [0, 1000, 2000, 3000, 0, 1000, 2000, 3000, 0, 1000, 2000, 3000, 0, 1000, 2000, 3000],
        "wear": [0.1, 2.2, 4.1, 6.3, 0.0, 2.6, 5.1, 7.4, 0.2, 1.9, 3.5, 5.6, 0.1, 3.0, 6.1, 8.8]}
EVENTS = ("system,t,end\nC1,120,2000\nC1,480,2000\nC1,1100,2000\nC1,1750,2000\nC2,300,2500\nC2,950,2500\n"
          "C2,1900,2500\nC3,60,1800\nC3,700,1800\nC3,1500,1800\n")
# Time to failure (hours; S: still running when the test stopped) at three temperatures in kelvin.
ALT_TEST = ("time,state,temp\n1298,F,313\n1390,F,313\n3187,F,313\n3241,F,313\n4501,F,313\n5000,S,313\n"
            "5000,S,313\n581,F,333\n925,F,333\n1432,F,333\n1586,F,333\n2452,F,333\n5000,S,333\n283,F,353\n"
            "361,F,353\n515,F,353\n638,F,353\n854,F,353\n1024,F,353\n")
LIVES_CSV = b"time,state\n500,S\n620,F\n"
PLANT_SHEETS = {"Pump lives": [["Time", "State"], [120, "F"], [340, "S"], [410, "F"], [95, "F"]],
                "Valve lives": [["hours", "state"], [2100, "F"], [3400, "F"], [5000, "S"]]}
PLANT_JSON = {"name": "one pump", "unit": "hours", "repairable": True, "nodes": [
    {"id": "in", "type": "input"}, {"id": "out", "type": "output"},
    {"id": "pump", "type": "component", "label": "Feed pump",
     "model": {"distribution_id": "exponential", "mean": 1000},
     "repair": {"distribution_id": "exponential", "mean": 8}}],
    "edges": [{"source": "in", "target": "pump"}, {"source": "pump", "target": "out"}]}
OUTAGES_CSV = (b"Asset,Start,End,Reason,Planned\n"
               b"P1,2025-01-04T08:00,2025-01-04T14:00,seal leak,no\nP2,2025-02-10T09:00,2025-02-10T11:30,trip,no\n"
               b"P1,2025-03-02T07:00,2025-03-02T08:00,PM,yes\nP1,2025-04-18T22:00,2025-04-19T05:00,bearing,no\n"
               b"P2,2025-06-01T10:00,2025-06-01T19:00,seal leak,no\nP1,2025-08-09T03:00,2025-08-09T07:30,trip,no\n"
               b"P2,2025-09-23T12:00,2025-09-23T16:00,bearing,no\nP1,2025-11-30T06:00,2025-11-30T10:00,trip,no\n"
               b"P2,2025-12-15T08:00,2025-12-15T13:00,trip,no\n")

# Items no example makes, made first as a user would (the guide's and README's steps).
SETUP: tuple[Step, ...] = (
    Step("wear_dataset_id", "datasets/create", {"name": "gearbox wear", "data": WEAR}, "id",
         "a dataset of wear readings (columns unit, hours, wear; the README's)"),
    Step("events_dataset_id", "datasets/create", {"name": "compressor failures", "csv": EVENTS}, "id",
         "a dataset of failure events (columns system, t, end): one row per failure, `end` each "
         "compressor's end of observation"),
    Step("alt_dataset_id", "datasets/create", {"name": "bearing test", "csv": ALT_TEST}, "id",
         "an accelerated test (columns time, state, temp in kelvin)"),
    Step("alt_model_id", "POST /api/v1/fit", {"name": "bearing life", "dataset_id": "{alt_dataset_id}",
                                               "distribution": "weibull_arrhenius", "unit": "h",
                                               "mapping": {"x": "time", "c": "state", "stress": "temp"}}, "id",
         "an accelerated life model (a life-stress distribution fitted on the accelerated test)"),
    Step("second_run_id", "rbd_analysis/analyze", {"id": "{rbd_id}", "horizon": 8760.0, "replications": 200,
                                                   "seed": 2}, "run_id",
         "a second analysis run of the diagram, at another seed (rbd_analysis/analyze's example with seed 2)"),
    Step("csv_upload_id", "uploads/create", {"purpose": "dataset_import", "filename": "lives.csv"}, "upload_id",
         "an upload link its file lives.csv was sent to (the README's)",
         file=lambda: LIVES_CSV),
    Step("xlsx_upload_id", "uploads/create", {"purpose": "excel_import", "filename": "plant.xlsx"}, "upload_id",
         "an upload link a workbook was sent to, with sheets `Pump lives` (Time, State) and "
         "`Valve lives` (hours, state)", file=lambda: workbook(PLANT_SHEETS)),
    Step("rbd_upload_id", "uploads/create", {"purpose": "rbd_import", "filename": "plant.json"}, "upload_id",
         "an upload link plant.json was sent to, a diagram in this service's JSON (the README's)",
         file=lambda: orjson.dumps(PLANT_JSON)),
    Step("outage_upload_id", "uploads/create", {"purpose": "outage_log", "filename": "outages.csv"}, "upload_id",
         "an upload link outages.csv was sent to, an outage log of blocks P1 and P2 (columns Asset, "
         "Start, End, Reason, Planned)", file=lambda: OUTAGES_CSV),
    Step("photo_id", "POST /api/v1/maintenance/photos", {"target_id": "{model_id}", "caption": "worn seal"}, "id",
         "a maintenance photo of the pump life model's item, sent as a JPEG body with target_id and "
         "caption in the query", file=gray_jpeg, content_type="image/jpeg"),
)


def placeholders() -> dict[str, str]:
    """What each `{placeholder}` of the examples stands for, in words a reader of the docs page
    follows: the example that makes the item, or the set-up step a user takes first."""
    out = {name: f"the `{field}` answered by `{action}` (its example)" for name, (action, field) in MADE_BY.items()}
    for step in SETUP:
        out[step.placeholder] = f"the `{step.read}` of {step.says}, made by `{step.call}` (set-up below)"
    return out


def _keys_on_lines(body: dict[str, Any]) -> str:
    """JSON with one top-level key a line and each value on its line: short enough to read, and
    long column arrays stay one line (the page scrolls them sideways) instead of one item a line."""
    lines = [f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in body.items()]
    return "{\n" + ",\n".join(lines) + "\n}"


def setup_requests() -> dict[str, str]:
    """Each set-up step as the requests a user sends, for the docs page: the call and its JSON,
    and the file (its text, or what it holds when it is binary)."""
    out = {}
    for step in SETUP:
        if step.call.startswith("POST /"):
            method_path = step.call
        else:
            method_path = f"POST /api/v1/{step.call}"
        if step.file is not None and step.call.startswith("POST /"):  # the file is the body, the JSON the query
            query = "&".join(f"{k}={urllib.parse.quote(str(v), safe='{}')}" for k, v in step.body.items())
            text = f"{method_path}?{query}\nContent-Type: {step.content_type}\n\n(the image file's bytes)"
        else:
            text = f"{method_path}\n{_keys_on_lines(step.body)}"
        if step.file is not None and not step.call.startswith("POST /"):
            filename = step.body.get("filename", "the file")
            data = step.file()
            shown = (_keys_on_lines(orjson.loads(data)) if filename.endswith(".json") else data.decode()
                     if filename.endswith(".csv") else f"({len(data):,} bytes, binary)")
            text += f"\n\nthen PUT {filename} to the answer's url (no token):\n{shown}"
        out[step.placeholder] = text
    return out


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
