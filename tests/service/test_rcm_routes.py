"""RCM studies through the service, on both stores: create/get/update/list, evidence checked on
every read against real saved items (life models fitted, strategy analyses saved, a degradation
item stored in the shape the degradation models carry), stale after a refit, the outline at 301
modes, and refusals at the limits' edges that change nothing."""

from __future__ import annotations

import math
from typing import Any

from scipy import stats

from bathtub_api.keys import STORE
from tests.conftest import Api
from tests.service.test_errors import assert_refusal

P = [(i - 0.3) / (20 + 0.4) for i in range(1, 21)]  # Benard's median ranks: exact quantile samples
WEAR_OUT = [float(stats.weibull_min(4.0, scale=1000.0).ppf(p)) for p in P]
RANDOM = [float(stats.expon(scale=1000.0).ppf(p)) for p in P]


async def _model(api: Api, times: list[float]) -> tuple[str, str]:
    status, ds = await api.post("/api/v1/datasets", {"name": "lives", "data": {"time": times}})
    assert status == 200, ds
    status, fitted = await api.post("/api/v1/fit", {"name": "w", "dataset_id": ds["id"], "distribution": "weibull",
                                                    "mapping": {"x": "time"}, "unit": "hours"})
    assert status == 200, fitted
    return ds["id"], fitted["id"]


async def _analysis(api: Api, action: str, body: dict[str, Any]) -> dict[str, Any]:
    status, out = await api.post(f"strategy/{action}", {**body, "unit": "hours", "save": True})
    assert status == 200, out
    return out


def _mode(text: str, decision: dict[str, Any] | None, consequence: str = "operational") -> dict[str, Any]:
    return {"text": text, "consequence": consequence, **({"decision": decision} if decision else {})}


def _study(*modes: dict[str, Any]) -> dict[str, Any]:
    return {"name": "pump", "functions": [{"text": "Deliver 100 l/min at 4 bar", "standard": "4 bar",
                                           "failures": [{"text": "No flow", "modes": list(modes)}]}]}


def _modes(study: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {m["text"]: m for f in study["functions"] for ff in f["failures"] for m in ff["modes"]}


async def test_evidence_states_on_every_read(api: Api, other_api: Api, client: Any) -> None:
    wear_ds, wear = await _model(api, WEAR_OUT)
    _, flat = await _model(api, RANDOM)
    weibull = {"distribution_id": "weibull", "params": [1000.0, 2.5]}
    replace = await _analysis(api, "optimal_replacement", {**weibull, "planned_cost": 100.0, "unplanned_cost": 1000.0})
    no_pay = await _analysis(api, "optimal_replacement", {"distribution_id": "exponential", "params": [0.001],
                                                          "planned_cost": 100.0, "unplanned_cost": 1000.0})
    ff = await _analysis(api, "failure_finding", {"distribution_id": "exponential", "params": [0.001],
                                                  "target_availability": 0.99})
    store = client.server.app[STORE]
    alice = await store.ensure_user("alice")
    await store.insert_item(alice, "degradation_model", "dgm_1", "liner wear",
                            {"kind": "degradation", "unit": "hours", "pf_interval": {"value": 800.0, "lower": 500.0}})
    _, theirs = await _model(other_api, RANDOM)

    def ev(kind: str, item: str) -> dict[str, str]:
        return {"type": kind, "id": item}

    t_days = replace["optimal_time"] / 24
    table = [  # (mode, decision, consequence, expected state, words in the reason)
        ("random", {"outcome": "rtf", "rtf_basis": "random", "evidence": ev("model", flat)}, "operational",
         "supported", "β interval"),
        ("wear-out", {"outcome": "rtf", "rtf_basis": "random", "evidence": ev("model", wear)}, "operational",
         "contradicted", "lies above 1"),
        ("someone else's", {"outcome": "rtf", "rtf_basis": "random", "evidence": ev("model", theirs)},
         "operational", "missing", theirs),
        ("deleted", {"outcome": "rtf", "rtf_basis": "random", "evidence": ev("model", "mdl_gone")},
         "operational", "missing", "mdl_gone"),
        ("analysis as model", {"outcome": "rtf", "rtf_basis": "random",
                               "evidence": ev("model", replace["analysis_id"])}, "operational", "wrong_type",
         "strategy analysis"),
        ("replace at optimum", {"outcome": "fixed_interval", "interval": t_days, "interval_unit": "days",
                                "evidence": ev("strategy_analysis", replace["analysis_id"])}, "operational",
         "supported", "within 5%"),
        ("replace late", {"outcome": "fixed_interval", "interval": 2 * t_days, "interval_unit": "days",
                          "evidence": ev("strategy_analysis", replace["analysis_id"])}, "operational",
         "contradicted", "more than 5%"),
        ("replace in cycles", {"outcome": "fixed_interval", "interval": 300, "interval_unit": "cycles",
                               "evidence": ev("strategy_analysis", replace["analysis_id"])}, "operational",
         "wrong_type", "cannot be compared"),
        ("hidden ok", {"outcome": "failure_finding", "interval": 0.8, "interval_unit": "days",
                       "evidence": ev("strategy_analysis", ff["analysis_id"])}, "hidden", "supported", "meets"),
        ("hidden late", {"outcome": "failure_finding", "interval": 1, "interval_unit": "days",
                         "evidence": ev("strategy_analysis", ff["analysis_id"])}, "hidden", "contradicted",
         "misses"),
        ("uneconomic", {"outcome": "rtf", "rtf_basis": "uneconomic",
                        "evidence": ev("strategy_analysis", no_pay["analysis_id"])}, "operational", "supported",
         "does not pay"),
        ("uneconomic wrongly", {"outcome": "rtf", "rtf_basis": "uneconomic",
                                "evidence": ev("strategy_analysis", replace["analysis_id"])}, "operational",
         "contradicted", "pays"),
        ("inspect weekly", {"outcome": "on_condition", "interval": 1, "interval_unit": "weeks",
                            "evidence": ev("degradation_model", "dgm_1")}, "operational", "supported", "P–F"),
        ("inspect monthly", {"outcome": "on_condition", "interval": 1, "interval_unit": "months",
                             "evidence": ev("degradation_model", "dgm_1")}, "operational", "contradicted", "P–F"),
        ("life model as degradation", {"outcome": "on_condition", "interval": 1, "interval_unit": "weeks",
                                       "evidence": ev("degradation_model", flat)}, "operational", "wrong_type",
         "not degradation model"),
    ]
    modes = [_mode(name, {**d, "check": {"state": "supported", "reason": "ignored on write"}}, c)
             for name, d, c, _, _ in table]
    status, study = await api.post("rcm/create", _study(*modes))
    assert status == 200, study
    for _ in range(2):  # create's answer, then a read: the same checks
        got = _modes(study)
        for name, _, _, state, words in table:
            check = got[name]["decision"]["check"]
            assert check["state"] == state, (name, check)
            assert words in check["reason"], (name, check)
        status, study = await api.post("get/rcm_study", {"id": study["id"]})
        assert status == 200
    # Scheduled tasks: the decisions with intervals, with where they come from.
    tasks = {t["mode"]: t for t in study["scheduled_tasks"]}
    assert set(tasks) == {n for n, d, *_ in table if "interval" in d}
    assert tasks["inspect weekly"]["interval_unit"] == "weeks" and tasks["hidden ok"]["outcome"] == "failure_finding"

    # The wear-out model is refitted after more lives arrive: its decisions go stale, saying what it shows now.
    status, out = await api.post(f"/api/ingest/datasets/{wear_ds}/lives", {"rows": [{"time": 900.0}]})
    assert status == 200 and out["refit"], out
    got = _modes((await api.post("get/rcm_study", {"id": study["id"]}))[1])
    check = got["wear-out"]["decision"]["check"]
    assert check["state"] == "stale" and check["current"]["state"] == "contradicted", check
    assert got["random"]["decision"]["check"]["state"] == "supported"
    # Sending the decision again re-takes the evidence: no longer stale.
    wear_mode = got["wear-out"]
    status, study = await api.post("rcm/update", {"id": study["id"], "mode": "merge", "functions": [
        {"id": study["functions"][0]["id"], "failures": [{"id": study["functions"][0]["failures"][0]["id"], "modes": [
            {"id": wear_mode["id"], "decision": wear_mode["decision"]}]}]}]})
    assert status == 200, study
    assert _modes(study)["wear-out"]["decision"]["check"]["state"] == "contradicted"


async def test_create_update_remove_list(api: Api, other_api: Api) -> None:
    status, study = await api.post("rcm/create", _study(
        _mode("Bearing seizes", {"outcome": "fixed_interval", "interval": 2, "interval_unit": "years"}),
        _mode("Impeller wear", {"outcome": "rtf", "rtf_basis": "random"})))
    assert status == 200, study
    assert study["id"].startswith("rcm_") and study["outline"] is False and study["mode_count"] == 2
    f = study["functions"][0]
    ff = f["failures"][0]
    bearing, impeller = ff["modes"]
    assert f["text"] == "Deliver 100 l/min at 4 bar" and f["standard"] == "4 bar"
    assert bearing["decision"] == {"outcome": "fixed_interval", "interval": 2, "interval_unit": "years"}
    assert "check" not in impeller["decision"]  # no evidence, nothing to check
    # The answer is the form create takes: sending it back as a new study works.
    again = {"name": "copy", "functions": [_strip_ids(f)]}
    status, copy = await api.post("rcm/create", again)
    assert status == 200 and _strip_ids(copy["functions"][0]) == _strip_ids(f)

    status, upd = await api.post("rcm/update", {"id": study["id"], "mode": "merge", "name": "pump P-101",
                                                "remove": [impeller["id"]], "functions": [
        {"id": f["id"], "failures": [{"id": ff["id"], "modes": [
            {"id": bearing["id"], "notes": "OEM", "decision": None},
            {"text": "Seal leaks", "decision": {"outcome": "on_condition", "interval": 1, "interval_unit": "weeks",
                                                "task": "check for drips"}}]}]},
        {"text": "Contain the fluid", "failures": [{"text": "Leaks", "modes": [{"text": "Gasket"}]}]}]})
    assert status == 200, upd
    assert upd["name"] == "pump P-101" and upd["mode_count"] == 3 and len(upd["functions"]) == 2
    modes = upd["functions"][0]["failures"][0]["modes"]
    assert [m["text"] for m in modes] == ["Bearing seizes", "Seal leaks"]
    assert modes[0]["id"] == bearing["id"] and "decision" not in modes[0] and modes[0]["notes"] == "OEM"
    assert upd["scheduled_tasks"] == [{"function_id": f["id"], "failure_id": ff["id"], "mode_id": modes[1]["id"],
                                       "mode": "Seal leaks", "outcome": "on_condition", "task": "check for drips",
                                       "interval": 1, "interval_unit": "weeks"}]
    assert upd["functions"][1]["failures"][0]["modes"][0]["id"].startswith("fm_")

    # A refused update changes nothing.
    before = await api.post("get/rcm_study", {"id": study["id"]})
    assert_refusal(*await api.post("rcm/update", {"id": study["id"], "mode": "merge", "remove": [modes[0]["id"]],
                                                  "functions": [{"id": "fn_nope"}]}), 422, "functions.0.id")
    assert_refusal(*await api.post("rcm/update", {"id": study["id"], "mode": "merge", "functions": [
        {"id": f["id"], "text": "renamed", "failures": [{"id": ff["id"], "modes": [
            {"id": modes[1]["id"], "decision": {"outcome": "rtf"}}]}]}]}), 422,
        "functions.0.failures.0.modes.0.decision.rtf_basis", "required when outcome is rtf")
    assert await api.post("get/rcm_study", {"id": study["id"]}) == before
    assert_refusal(*await api.post("rcm/update", {"id": study["id"], "mode": "replace"}), 422, "mode")

    # Owner only; listing.
    assert (await other_api.post("get/rcm_study", {"id": study["id"]}))[0] == 404
    assert (await other_api.post("rcm/update", {"id": study["id"], "mode": "merge", "name": "x"}))[0] == 404
    status, listing = await api.post("list/rcm_study")
    assert status == 200 and [i["id"] for i in listing["items"]] == [study["id"], copy["id"]]
    assert listing["items"][0]["mode_count"] == 3 and listing["items"][0]["scheduled_task_count"] == 1
    assert (await other_api.post("list/rcm_study"))[1]["items"] == []


def _strip_ids(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _strip_ids(v) for k, v in node.items() if k != "id"}
    if isinstance(node, list):
        return [_strip_ids(v) for v in node]
    return node


def _big(n: int) -> dict[str, Any]:
    functions = [{"text": f"function {k}", "failures": [{"text": f"failure {k}", "modes": []}]} for k in range(4)]
    for i in range(n):
        d = {"outcome": "fixed_interval", "interval": 1 + i % 7, "interval_unit": "months"} if i % 3 == 0 else None
        functions[i % 4]["failures"][0]["modes"].append(_mode(f"mode {i}", d))
    return {"name": "plant", "functions": functions}


async def test_outline_over_300_modes_and_one_function_in_full(api: Api) -> None:
    status, full = await api.post("rcm/create", _big(300))
    assert status == 200 and full["outline"] is False and full["mode_count"] == 300
    status, big = await api.post("rcm/create", _big(301))
    assert status == 200 and big["outline"] is True and big["mode_count"] == 301
    assert "scheduled_tasks" not in big and big["scheduled_task_count"] == math.ceil(301 / 3)
    assert [f["mode_count"] for f in big["functions"]] == [76, 75, 75, 75]
    mode = big["functions"][0]["failures"][0]["modes"][0]
    assert set(mode) == {"id", "text", "outcome"} and mode["outcome"] == "fixed_interval"
    assert (await api.post("get/rcm_study", {"id": big["id"]}))[1] == {**big, "created_at": big["created_at"]}
    fid = big["functions"][1]["id"]
    status, one = await api.post("get/rcm_study", {"id": big["id"], "function_id": fid})
    assert status == 200 and one["outline"] is False and [f["id"] for f in one["functions"]] == [fid]
    modes = one["functions"][0]["failures"][0]["modes"]
    assert len(modes) == 75 and modes[0]["text"] == "mode 1" and "decision" not in modes[0]
    assert modes[2]["text"] == "mode 9"
    assert modes[2]["decision"] == {"outcome": "fixed_interval", "interval": 3, "interval_unit": "months"}
    assert len(one["scheduled_tasks"]) == 25 and {t["function_id"] for t in one["scheduled_tasks"]} == {fid}
    assert_refusal(*await api.post("get/rcm_study", {"id": big["id"], "function_id": "fn_nope"}), 404, "function_id")
    assert_refusal(*await api.post("get/rcm_study", {"id": big["id"], "function_id": "f" * 65}), 422, "function_id")


M = "functions.0.failures.0.modes.0"


async def test_limits_at_their_edges(api: Api) -> None:
    edge = _study(_mode("m" * 2000, {"outcome": "fixed_interval", "interval": 1, "interval_unit": "u" * 40,
                                     "task": "t" * 2000, "notes": "n" * 2000,
                                     "evidence": {"type": "strategy_analysis", "id": "s" * 64}}))
    edge["functions"][0]["text"] = "f" * 2000
    edge["functions"][0]["standard"] = "s" * 2000
    edge["functions"][0]["failures"][0]["modes"][0].update(effects="e" * 2000, notes="n" * 2000)
    status, study = await api.post("rcm/create", edge)
    assert status == 200, study
    assert _modes(study)["m" * 2000]["decision"]["check"]["state"] == "missing"

    def over(path: list[Any], value: Any) -> dict[str, Any]:
        body = _study(_mode("m", {"outcome": "fixed_interval", "interval": 1, "interval_unit": "h",
                                  "evidence": {"type": "strategy_analysis", "id": "sa_x"}}))
        node: Any = body
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
        return body

    f, m = ["functions", 0], ["functions", 0, "failures", 0, "modes", 0]
    refusals = [
        (over([*f, "text"], "f" * 2001), "functions.0.text", "2000"),
        (over([*f, "standard"], "s" * 2001), "functions.0.standard", "2000"),
        (over([*f, "failures", 0, "text"], "x" * 2001), "functions.0.failures.0.text", "2000"),
        (over([*m, "text"], "m" * 2001), f"{M}.text", "2000"),
        (over([*m, "effects"], "e" * 2001), f"{M}.effects", "2000"),
        (over([*m, "notes"], "n" * 2001), f"{M}.notes", "2000"),
        (over([*m, "decision", "task"], "t" * 2001), f"{M}.decision.task", "2000"),
        (over([*m, "decision", "notes"], "n" * 2001), f"{M}.decision.notes", "2000"),
        (over([*m, "decision", "interval_unit"], "u" * 41), f"{M}.decision.interval_unit", "40"),
        (over([*m, "decision", "evidence", "id"], "s" * 65), f"{M}.decision.evidence.id", "64"),
        (over([*m, "decision", "interval"], 0), f"{M}.decision.interval", "> 0"),
        (over([*m, "decision", "outcome"], "maybe"), f"{M}.decision.outcome", ""),
        (over([*m, "consequence"], "cosmetic"), f"{M}.consequence", ""),
        (over([*m, "decision", "evidence", "type"], "model"), f"{M}.decision.evidence.type", "strategy_analysis"),
        (over([*m, "colour"], "red"), f"{M}.colour", "unknown field"),
        (over([*f, "id"], "fn_1"), "functions.0.id", "omit ids"),
        (over([*m, "id"], "i" * 65), f"{M}.id", "omit ids"),  # any id, at any depth: every node is new
        (_study(_mode("m", {"outcome": "rtf", "rtf_basis": "random"}, "safety")), f"{M}.decision.outcome",
         "not acceptable with safety"),
        (_study(_mode("m", {"outcome": "failure_finding", "interval": 1, "interval_unit": "h"})),
         f"{M}.decision.outcome", "hidden"),
        (_study(_mode("m", {"outcome": "accept", "interval": 1, "interval_unit": "h"})), f"{M}.decision.interval",
         "no task"),
        (_study(_mode("m", {"outcome": "fixed_interval", "interval": 1})), f"{M}.decision.interval_unit",
         "required"),
        ({"name": "n" * 201, "functions": []}, "name", "200"),
    ]
    for body, field, words in refusals:
        status, out = await api.post("rcm/create", body)
        assert_refusal(status, out, 422, field + ":", words)
    status, listing = await api.post("list/rcm_study")
    assert [i["id"] for i in listing["items"]] == [study["id"]]  # nothing stored by a refusal
    # Updates: node ids and removal ids at 65 characters.
    assert_refusal(*await api.post("rcm/update", {"id": study["id"], "mode": "merge", "remove": ["r" * 65]}), 422,
                   "remove.0:")
    assert_refusal(*await api.post("rcm/update", {"id": study["id"], "mode": "merge", "remove": ["r" * 64]}), 422,
                   "remove.0: no node")


async def test_guide_topic_rcm(api: Api) -> None:
    status, out = await api.post("/api/v1/guide", {"topic": "rcm"})
    assert status == 200
    text = str(out)
    assert "planned" not in text and "not yet available" not in text.lower()
    for word in ("rcm create", "rcm update", "get rcm_study", "function_id", "stale", "wrong_type", "remove"):
        assert word in text, word
