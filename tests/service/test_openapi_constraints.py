"""The published schemas carry the limits the service enforces (issue 11, item 15): every
integer is bounded inside SQL's 64 bits, the NUL rule is stated once for every string (issue 29:
not as a pattern on each), exactly-one fields are a oneOf, and a body that must not be empty is
required. The tool protocol shows the same."""

from __future__ import annotations

from typing import Any

import pytest

from bathtub_api.fields import NO_NUL_PATTERN, NUL_RULE, NUL_STATEMENT
from tests.conftest import Api

# The published schema against the validators: no store is involved (see tests/conftest.py).
pytestmark = pytest.mark.one_store

INT64 = 2**63 - 1


def _request_schemas(doc: dict[str, Any]) -> dict[str, Any]:
    names = set()
    for ops in doc["paths"].values():
        for op in ops.values():
            for media in op.get("requestBody", {}).get("content", {}).values():
                ref = media["schema"].get("$ref")
                if ref:
                    names.add(ref.rsplit("/", 1)[1])
    schemas = doc["components"]["schemas"]
    pending, seen = list(names), set()
    while pending:  # with the models they refer to
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        pending += [r.rsplit("/", 1)[1] for r in refs(schemas[name])]
    return {n: schemas[n] for n in seen}


def refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        return ([node["$ref"]] if "$ref" in node else []) + [r for v in node.values() for r in refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in refs(v)]
    return []


def _leaves(node: Any, path: str) -> list[tuple[str, dict[str, Any]]]:
    """Every typed sub-schema with its path."""
    out = []
    if isinstance(node, dict):
        if "type" in node:
            out.append((path, node))
        for k, v in node.items():
            out += _leaves(v, f"{path}.{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _leaves(v, f"{path}[{i}]")
    return out


async def test_request_schemas_bound_integers_and_state_the_nul_rule_once(api: Api) -> None:
    status, doc = await api.get("/api/v1/openapi.json")
    schemas = _request_schemas(doc)
    assert {"DatasetCreate", "ListRequest", "FitIn", "ShutPlanIn", "RbdCreate"} <= set(schemas)
    for name, schema in schemas.items():
        for path, leaf in _leaves(schema, name):
            if leaf["type"] == "integer":
                assert -INT64 <= leaf.get("minimum", -INT64 - 1) and leaf.get("maximum", INT64 + 1) <= INT64, path
            # the NUL rule is said once, not on each string (a field's own pattern may still exclude it)
            assert leaf.get("pattern") != NO_NUL_PATTERN, path
    assert doc["info"]["x-every-field"] == [NUL_STATEMENT] and NUL_RULE in doc["info"]["description"]
    refused = doc["paths"]["/api/v1/fit/life"]["post"]["responses"]["422"]["$ref"].rsplit("/", 1)[1]
    assert NUL_RULE in doc["components"]["responses"][refused]["description"]
    status, body = await api.post("/api/v1/datasets/create", {"name": "a\x00b", "data": {"x": [1]}})
    assert (status, body["detail"]) == (422, f"name: {NUL_RULE}")
    assert schemas["ListRequest"]["properties"]["offset"]["maximum"] == 2**53 - 1
    for name, fields in (("DatasetCreate", {"csv", "data"}), ("LivesIngest", {"rows", "data", "csv"}),
                         ("RbdCreate", {"nodes", "stages"}), ("ImportIn", {"data", "params"})):
        assert {b["required"][0] for b in schemas[name]["oneOf"]} == fields, name
    assert "weibull" in schemas["FitIn"]["properties"]["distribution"]["enum"]
    ff = schemas["FailureFindingIn"]["properties"]["target_availability"]
    assert ff["exclusiveMinimum"] == 0 and ff["exclusiveMaximum"] == 1


async def test_bodies_that_cannot_be_empty_are_required(api: Api) -> None:
    status, doc = await api.get("/api/v1/openapi.json")
    assert doc["paths"]["/api/v1/get/dataset"]["post"]["requestBody"]["required"] is True
    assert doc["paths"]["/api/v1/datasets/create"]["post"]["requestBody"]["required"] is True
    assert doc["paths"]["/api/v1/list/dataset"]["post"]["requestBody"]["required"] is False
    assert doc["paths"]["/api/v1/guide"]["post"]["requestBody"]["required"] is False
    param = doc["paths"]["/api/v1/datasets/{dataset_id}"]["get"]["parameters"][0]
    assert "pattern" not in param["schema"] and param["schema"]["maxLength"] == 200


async def test_query_parameters_state_what_their_handler_checks(api: Api) -> None:
    """The photo route refused a schema-valid empty or 201-character target_id: its query
    parameters now publish the lengths and the NUL rule the handler applies."""
    status, doc = await api.get("/api/v1/openapi.json")
    params = {p["name"]: p for p in doc["paths"]["/api/v1/maintenance/photos"]["post"]["parameters"]}
    target = params["target_id"]["schema"]
    assert params["target_id"]["required"] is True
    assert (target["minLength"], target["maxLength"], target["pattern"]) == (1, 200, "^[^\\u0000]*$")
    assert params["caption"]["schema"]["maxLength"] == 500
    status, body = await api.call("POST", "/api/v1/maintenance/photos?target_id=" + "a" * 201, data=b"x",
                                  headers={"Content-Type": "image/png"})
    assert status == 422 and body["detail"].startswith("target_id: ")


async def test_tool_protocol_schemas_carry_the_same_constraints(api: Api) -> None:
    status, body = await api.post("/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    tools = {t["name"]: t["inputSchema"] for t in body["result"]["tools"]}
    variants = {v["properties"]["action"]["const"]: v for v in tools["datasets"]["oneOf"]}
    create = variants["create"]
    assert {b["required"][0] for b in create["oneOf"]} == {"csv", "data"}
    assert "pattern" not in create["properties"]["name"] and create["properties"]["name"]["maxLength"] == 200
    guide = next(t for t in body["result"]["tools"] if t["name"] == "guide")  # said once, where the how-to is
    assert NUL_RULE in guide["description"]


def _deref(doc: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """A schema, or the one its `$ref` names (a part used in several places is published once)."""
    while "$ref" in node:
        node = doc["components"]["schemas"][node["$ref"].rsplit("/", 1)[1]]
    return node


def _validator(doc: dict[str, Any], name: str) -> Any:
    import jsonschema_rs

    schema = {**doc["components"]["schemas"][name], "components": doc["components"]}
    return jsonschema_rs.Draft202012Validator(schema)  # its refs point into the document's components


async def test_published_rules_come_from_the_checks(api: Api) -> None:
    """Item 15: names are enums, node kinds are variants, filters carry their format; and what
    the service accepts, its published schema accepts (the schema tightens, never refuses more)."""
    status, doc = await api.get("/api/v1/openapi.json")
    schemas = doc["components"]["schemas"]
    assert {"Weibull_2P", "Lognormal_3P", "weibull"} <= set(schemas["ImportIn"]["properties"]["distribution"]["enum"])
    assert "pattern" in _deref(doc, _deref(doc, schemas["ListRequest"]["properties"]["created_after"])["anyOf"][0])
    assert "t" in schemas["RecurrentFitIn"]["properties"]["mapping"]["propertyNames"]["enum"]
    rbd_create = _validator(doc, "RbdCreate")
    good = {"name": "pumps", "unit": "h", "repairable": True, "stages": [{"k_of_n": 2, "components": [
        {"label": f"P{i}", "distribution": "weibull", "params": [{"name": "alpha", "value": 800.0},
                                                                 {"name": "beta", "value": 1.5}],
         "repair_distribution": "exponential", "repair_params": [0.1]} for i in range(3)]}]}
    assert rbd_create.is_valid(good)
    assert (await api.post("/api/v1/rbd/create", good))[0] == 200
    nodes = {"name": "line", "nodes": [
        {"id": "in", "type": "input"}, {"id": "out", "type": "output"},
        {"id": "a", "type": "component", "model": {"distribution_id": "exponential", "params": [1e-3]}},
        {"id": "g", "type": "knode", "n": 1, "k": 1}],
        "edges": [{"source": "in", "target": "a"}, {"source": "a", "target": "g"}, {"source": "g", "target": "out"}]}
    assert rbd_create.is_valid(nodes)
    assert (await api.post("/api/v1/rbd/create", nodes))[0] == 200
    # what the schema refuses, the service refuses too, naming the field
    bad = {**nodes, "nodes": [*nodes["nodes"][:2], {"id": "a", "type": "component", "spares": 1,
                                                    "model": {"distribution_id": "exponential", "params": [1e-3]}},
                              nodes["nodes"][3]]}
    assert not rbd_create.is_valid(bad)
    status, body = await api.post("/api/v1/rbd/create", bad)
    assert status == 422 and body["detail"].startswith("nodes.a.spares"), body


def test_demonstration_rules_never_refuse_what_the_calculator_takes() -> None:
    """Item 15: the demonstration test's published paths (constant rate, sequential, attribute)
    state which fields each requires. Over a fixed sample of requests built from the fields'
    combinations: every request the calculator answers is schema-valid (the schema tightens,
    never refuses more), and an attribute test with neither reliability nor b_life, nothing
    implying it is solved, is schema-invalid (the refusal the fuzz found most often)."""
    import random

    import jsonschema_rs

    from bathtub import strategy
    from bathtub.errors import InputError
    from bathtub_api.tools.strategy import DemonstrationIn

    validator = jsonschema_rs.Draft202012Validator(DemonstrationIn.model_json_schema())
    pool = {"reliability": 0.9, "b_life": 10.0, "mission_time": 100.0, "mtbf": 500.0, "design_mtbf": 1000.0,
            "total_test_time": 5000.0, "units": 10, "test_multiple": 2.0, "shape": 2.0, "producer_risk": 0.1,
            "design_reliability": 0.97, "discrimination_ratio": 2.0, "failures": 1, "confidence": 0.9}
    rng = random.Random(15)
    answered = refused_by_schema = 0
    for _ in range(1500):
        body: dict[str, Any] = {k: v for k, v in pool.items() if rng.random() < 0.3}
        if method := rng.choice([None, "binomial", "weibayes", "mtbf", "sequential"]):
            body["method"] = method
        if solve := rng.choice([None, None, "reliability", "mtbf", "plan", "units", "confidence", "failures"]):
            body["solve_for"] = solve
        try:
            strategy.demonstration_test(**body)
        except InputError:
            valid = validator.is_valid(body)
            refused_by_schema += not valid
            continue
        answered += 1
        assert validator.is_valid(body), repr(body)
    assert answered > 100 and refused_by_schema > 100, (answered, refused_by_schema)
    assert not validator.is_valid({"confidence": 0.9})
    assert not validator.is_valid({"method": "binomial", "units": 10})
    assert validator.is_valid({"units": 10, "test_multiple": 2.0, "shape": 2.0})  # solves reliability
    assert not validator.is_valid({"method": "mtbf", "units": 10})  # no required MTBF
    assert validator.is_valid({"method": "mtbf", "reliability": 0.9, "mission_time": 10.0, "units": 8})
