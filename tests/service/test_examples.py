"""Every operation's published example is a request the service accepts (issue 29): each is
posted as the docs page would send it, its `{placeholder}` ids filled from the answers of the
examples that make such items (bathtub_api.tools.examples), and must be answered 2xx."""

from __future__ import annotations

import re
from typing import Any

import pytest

from bathtub_api.registry import Registry
from bathtub_api.tools.examples import EXAMPLES, MISSING
from tests.conftest import Api

# The published examples answer as shown: mapping, no store-specific behaviour (see tests/conftest.py).
pytestmark = pytest.mark.one_store

# placeholder -> (the example whose answer holds it, how to read it from that answer)
MAKES: dict[str, tuple[str, Any]] = {
    "dataset_id": ("datasets/create", lambda r: r["id"]),
    "model_id": ("fit/life", lambda r: r["id"]),
    "analysis_id": ("strategy/optimal_replacement", lambda r: r["analysis_id"]),
    "rbd_id": ("rbd/create", lambda r: r["id"]),
    "run_id": ("rbd_analysis/analyze", lambda r: r["run_id"]),
    "job_id": ("rbd_analysis/what_to_improve", lambda r: r["job_id"]),
    "fleet_id": ("fleets/create", lambda r: r["id"]),
    "study_id": ("rcm/create", lambda r: r["id"]),
    "report_id": ("reports/create", lambda r: r["id"]),
    "link_id": ("sharing/create_link", lambda r: r["id"]),
    "upload_id": ("uploads/create", lambda r: r["upload_id"]),
}
PLACEHOLDER = re.compile(r"^\{(\w+)\}$")
# Run after every other example: they end what the others use.
LAST = ("sharing/revoke_link", "reports/delete", "fleets/delete", "datasets/delete_rows",
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


def test_every_action_has_an_example_or_says_why_not(registry: Registry) -> None:
    names = {f"{a.tool}/{a.action}" if a.action else a.tool for a in registry.actions.values()}
    assert set(EXAMPLES) | MISSING == names and not set(EXAMPLES) & MISSING
    for placeholder, (maker, _) in MAKES.items():
        assert maker in EXAMPLES and not _needs(EXAMPLES[maker]) >= {placeholder}, placeholder


async def test_every_example_is_accepted(api: Api, registry: Registry) -> None:
    status, doc = await api.get("/api/v1/openapi.json")
    published = {op["operationId"]: op["requestBody"]["content"]["application/json"].get("example")
                 for ops in doc["paths"].values() for op in ops.values() if "x-bathtub" in op
                 and not op["x-bathtub"].get("rest_only") and "requestBody" in op}
    actions = {f"{a.tool}/{a.action}" if a.action else a.tool: a for a in registry.actions.values()}
    for name, example in EXAMPLES.items():
        assert published[actions[name].operation_id] == example, name  # the one declaration is what is served
    ids: dict[str, str] = {}
    pending = [n for n in EXAMPLES if n not in (*LAST, "jobs/cancel")]
    while pending:
        ready = [n for n in pending if _needs(EXAMPLES[n]) <= set(ids)]
        assert ready, f"examples waiting for ids nothing makes: {pending}"
        for name in ready:
            pending.remove(name)
            status, body = await api.post(actions[name].path, _fill(EXAMPLES[name], ids))
            assert 200 <= status < 300, (name, status, body)
            for placeholder, (maker, read) in MAKES.items():
                if maker == name:
                    ids[placeholder] = read(body)
            if name == MAKES["job_id"][0]:  # cancelled at once, while it still runs
                status, body = await api.post(actions["jobs/cancel"].path, _fill(EXAMPLES["jobs/cancel"], ids))
                assert 200 <= status < 300, ("jobs/cancel", status, body)
    for name in LAST:
        status, body = await api.post(actions[name].path, _fill(EXAMPLES[name], ids))
        assert 200 <= status < 300, (name, status, body)
