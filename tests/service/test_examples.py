"""Every operation's published example is a request the service accepts (issue 29): each is
posted as the docs page would send it, its `{placeholder}` ids filled from the answers of the
examples that make such items, or of the set-up steps a user takes first (a sent upload, a
photo, an accelerated life model: bathtub_api.tools.examples.SETUP), and must be answered 2xx."""

from __future__ import annotations

import io
import re
from typing import Any
from urllib.parse import urlsplit

import jsonschema
import pytest

from bathtub_api.registry import Registry
from bathtub_api.tools.examples import EXAMPLES, MADE_BY, SETUP, Step, placeholders
from tests.conftest import Api

# The published examples answer as shown: mapping, no store-specific behaviour (see tests/conftest.py).
pytestmark = pytest.mark.one_store

PLACEHOLDER = re.compile(r"^\{(\w+)\}$")
# Run after every other example: they end what the others use.
LAST = ("sharing/revoke_link", "reports/delete", "fleets/delete", "tracked_fleets/delete", "datasets/delete_rows",
        "datasets/delete")


def _needs(node: Any) -> set[str]:
    if isinstance(node, str):
        m = PLACEHOLDER.match(node)
        return {m.group(1)} if m else set()
    if isinstance(node, dict):
        return set().union(*(_needs(v) for v in node.values())) if node else set()
    if isinstance(node, list):
        return set().union(*(_needs(v) for v in node)) if node else set()
    return set()


def _fill(node: Any, ids: dict[str, str]) -> Any:
    if isinstance(node, str):
        m = PLACEHOLDER.match(node)
        return ids[m.group(1)] if m else node
    if isinstance(node, dict):
        return {k: _fill(v, ids) for k, v in node.items()}
    if isinstance(node, list):
        return [_fill(v, ids) for v in node]
    return node


def test_every_action_has_an_example(registry: Registry) -> None:
    names = {f"{a.tool}/{a.action}" if a.action else a.tool for a in registry.actions.values()}
    assert set(EXAMPLES) == names
    made = list(MADE_BY) + [s.placeholder for s in SETUP]
    assert len(made) == len(set(made)), "a placeholder made twice"
    for placeholder, (maker, _) in MADE_BY.items():
        assert maker in EXAMPLES and placeholder not in _needs(EXAMPLES[maker]), placeholder
    used = set().union(*(_needs(e) for e in EXAMPLES.values()), *(_needs(s.body) for s in SETUP))
    assert used == set(made) == set(placeholders()), "every placeholder is made, said, and used"


def test_examples_are_valid_against_the_published_request_schemas(registry: Registry) -> None:
    """What Swagger UI and an agent read: each example conforms to its operation's schema, so a
    schema-driven client accepts it as written (placeholders are strings where ids are)."""
    from bathtub_api import openapi

    doc = openapi.build(registry)
    schemas = {"components": doc["components"]}
    for ops in doc["paths"].values():
        for op in ops.values():
            body = op.get("requestBody", {}).get("content", {}).get("application/json", {})
            if "example" in body:
                validator = jsonschema.Draft202012Validator({**body["schema"], **schemas})
                errors = [e.message for e in validator.iter_errors(body["example"])]
                assert not errors, (op["operationId"], errors[:3])


def test_the_schema_check_refuses_a_wrong_example(registry: Registry) -> None:
    from bathtub_api import openapi

    doc = openapi.build(registry)
    schema = {**doc["paths"]["/api/v1/fit/life"]["post"]["requestBody"]["content"]["application/json"]["schema"],
              "components": doc["components"]}
    validator = jsonschema.Draft202012Validator(schema)
    assert validator.is_valid(EXAMPLES["fit/life"])
    assert not validator.is_valid({**EXAMPLES["fit/life"], "dataset_id": 5})
    assert not validator.is_valid({k: v for k, v in EXAMPLES["fit/life"].items() if k != "mapping"})


async def _set_up(api: Api, step: Step, ids: dict[str, str]) -> str:
    """Take one set-up step as a user would; answers the id it makes."""
    body = _fill(step.body, ids)
    if step.call.startswith(("POST ", "GET ")):
        method, path = step.call.split(" ", 1)
        if step.file is None:
            status, out = await api.call(method, path, json=body)
        else:  # a route that takes a file: the JSON names its query parameters
            status, out = await api.call(method, path, params=body, data=io.BytesIO(step.file()),
                                         headers={"Content-Type": step.content_type})
    else:
        status, out = await api.post(step.call, body)
        if status == 200 and step.file is not None:  # an upload link: PUT the bytes, no token
            url = urlsplit(out["url"])
            async with api.client.put(f"{url.path}?{url.query}", data=step.file()) as resp:
                assert resp.status == 200, (step.placeholder, await resp.text())
    assert status == 200, (step.placeholder, status, out)
    return str(out[step.read])


async def test_every_example_is_accepted(api: Api, registry: Registry) -> None:
    status, doc = await api.get("/api/v1/openapi.json")
    published = {op["operationId"]: op["requestBody"]["content"]["application/json"].get("example")
                 for ops in doc["paths"].values() for op in ops.values() if "x-bathtub" in op
                 and not op["x-bathtub"].get("rest_only") and "requestBody" in op}
    actions = {f"{a.tool}/{a.action}" if a.action else a.tool: a for a in registry.actions.values()}
    for name, example in EXAMPLES.items():
        assert published[actions[name].operation_id] == example, name  # the one declaration is what is served
    ids: dict[str, str] = {}
    steps = list(SETUP)
    pending = [n for n in EXAMPLES if n not in (*LAST, "jobs/cancel")]
    while pending or steps:
        ready_steps = [s for s in steps if _needs(s.body) <= set(ids)]
        ready = [n for n in pending if _needs(EXAMPLES[n]) <= set(ids)]
        assert ready or ready_steps, f"examples waiting for ids nothing makes: {pending}"
        for step in ready_steps:
            steps.remove(step)
            ids[step.placeholder] = await _set_up(api, step, ids)
        for name in ready:
            pending.remove(name)
            status, body = await api.post(actions[name].path, _fill(EXAMPLES[name], ids))
            assert 200 <= status < 300, (name, status, body)
            for placeholder, (maker, field) in MADE_BY.items():
                if maker == name:
                    ids[placeholder] = body[field]
            if name == MADE_BY["job_id"][0]:  # cancelled at once, while it still runs
                status, body = await api.post(actions["jobs/cancel"].path, _fill(EXAMPLES["jobs/cancel"], ids))
                assert 200 <= status < 300, ("jobs/cancel", status, body)
    for name in LAST:
        status, body = await api.post(actions[name].path, _fill(EXAMPLES[name], ids))
        assert 200 <= status < 300, (name, status, body)
