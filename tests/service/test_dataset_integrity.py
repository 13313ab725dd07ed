"""Dataset integrity on both stores: ingest is all-or-nothing across validation, append and
refit; concurrent writers never leave a model fitted on old rows; idempotency keys are kept
for a stated time and never silently ignore a different body; rows and datasets can be
deleted to repair a dataset.

Model parameters are checked against lifelines fitted on the same rows in the test.
"""

from __future__ import annotations

import asyncio
import math
from typing import Any

import numpy as np
import pytest
from lifelines import WeibullFitter
from scipy import stats

from bathtub_api.cli import token_create
from bathtub_api.config import Config
from bathtub_api.jobs import JobRunner
from bathtub_api.keys import STORE
from tests.conftest import Api
from tests.service.test_errors import assert_refusal

RNG = np.random.default_rng(11)
TIMES = [float(t) for t in np.round(stats.weibull_min(1.6, scale=500.0).rvs(40, random_state=RNG), 2)]
STATES = ["S" if u < 0.2 else "F" for u in RNG.random(40)]


async def _dataset(api: Api, n: int = 40) -> str:
    status, created = await api.post("datasets/create", {"name": "pumps",
                                                         "data": {"time": TIMES[:n], "state": STATES[:n]}})
    assert status == 200, created
    return str(created["id"])


async def _fit(api: Api, dataset_id: str, distribution: str = "weibull", **mapping: str) -> dict[str, Any]:
    status, fitted = await api.post("fit/life", {"name": f"m {distribution}", "dataset_id": dataset_id,
                                                 "distribution": distribution,
                                                 "mapping": mapping or {"x": "time", "c": "state"}})
    assert status == 200, fitted
    return dict(fitted)


async def _rows(api: Api, dataset_id: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    offset: int | None = 0
    while offset is not None:
        status, page = await api.post("get/dataset", {"id": dataset_id, "offset": offset, "limit": 500})
        assert status == 200, page
        out.extend(page["rows"])
        offset = page["next_offset"]
    return out


async def _n(api: Api, model_id: str) -> int:
    status, record = await api.post("get/model", {"id": model_id})
    assert status == 200, record
    return int(record["n"])


def _ingest(dataset_id: str, query: str = "") -> str:
    return f"/api/ingest/datasets/{dataset_id}/lives{query}"


# -- 1. validation before anything is written; a failed refit rolls the append back ----------

async def test_rows_the_models_cannot_read_are_refused_and_change_nothing(api: Api) -> None:
    dataset_id = await _dataset(api)
    model = await _fit(api, dataset_id)
    await _fit(api, dataset_id, "exponential", x="time")  # reads no censoring column
    path = _ingest(dataset_id)
    assert_refusal(*await api.post(path, {"rows": [{"time": 5.0, "state": "F"}, {"time": -5.0, "state": "F"}]}),
                   422, "rows[1].time", ">= 0")
    assert_refusal(*await api.post(path, {"rows": [{"time": 5.0, "state": "Z"}]}), 422, "rows[0].state",
                   "censoring code")
    assert_refusal(*await api.post(path, {"rows": [{"time": 5.0, "state": "F"}, {"state": "F"}]}), 422,
                   "rows[1].time", "missing")
    assert_refusal(*await api.post(path, {"data": {"time": [1.0, 2.0], "state": ["F", None]}}), 422,
                   "data[1].state", "missing")
    assert_refusal(*await api.call("POST", path, data="time,state\n3,F\n-1,S\n",
                                   headers={"Content-Type": "text/csv"}), 422, "body[1].time", ">= 0")
    assert_refusal(*await api.call("POST", path, data="time,state\n3,F\ninf,S\n",
                                   headers={"Content-Type": "text/csv"}), 422, "body[1].time", "number")
    assert len(await _rows(api, dataset_id)) == 40 and await _n(api, model["id"]) == 40
    # Not poisoned: the next good ingest appends and refits.
    status, out = await api.post(path, {"rows": [{"time": 600.0, "state": "F"}]})
    assert status == 200 and out["n_rows"] == 41 and len(out["refit"]) == 2, out
    assert await _n(api, model["id"]) == 41
    # With refit=false the rows are still checked against the models' roles.
    assert_refusal(*await api.post(_ingest(dataset_id, "?refit=false"), {"rows": [{"time": -1.0, "state": "F"}]}),
                   422, "rows[0].time")
    assert len(await _rows(api, dataset_id)) == 41


async def test_a_refit_that_fails_rolls_the_append_back(api: Api) -> None:
    dataset_id = await _dataset(api)
    km = await _fit(api, dataset_id, "kaplan_meier")
    # A left-censored code is valid life data, but a Kaplan-Meier model cannot take it.
    status, out = await api.post(_ingest(dataset_id), {"rows": [{"time": 70.0, "state": "F"},
                                                                {"time": 80.0, "state": "L"}]})
    assert_refusal(status, out, 422, km["id"], "kaplan_meier", "nothing was applied")
    assert len(await _rows(api, dataset_id)) == 40 and await _n(api, km["id"]) == 40
    status, out = await api.post(_ingest(dataset_id), {"rows": [{"time": 70.0, "state": "F"}]})
    assert status == 200 and out["n_rows"] == 41 and await _n(api, km["id"]) == 41


async def test_a_numerical_failure_in_a_refit_is_a_422_and_rolls_back(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    dataset_id = await _dataset(api)
    model = await _fit(api, dataset_id)
    from bathtub.life import saved

    real_fit = saved.fit_columns

    def overflowing(columns: dict[str, list[Any]], *args: Any) -> dict[str, Any]:
        if len(next(iter(columns.values()))) > 40:
            raise OverflowError("math range error")  # what an overflowing bound in a fit raises
        return real_fit(columns, *args)

    async def in_thread(self: JobRunner, fn: Any, *args: Any) -> Any:
        return await asyncio.to_thread(fn, *args)  # so the patched fit is the one that runs

    monkeypatch.setattr(saved, "fit_columns", overflowing)
    monkeypatch.setattr(JobRunner, "run_cpu", in_thread)
    status, out = await api.post(_ingest(dataset_id), {"rows": [{"time": 1e6, "state": "F"}]})
    assert_refusal(status, out, 422, model["id"], "OverflowError", "nothing was applied")
    assert len(await _rows(api, dataset_id)) == 40 and await _n(api, model["id"]) == 40


# -- 2. concurrent writers never leave a model fitted on old rows ------------------------------

@pytest.mark.slow  # ~6 s: concurrent ingests and refits
async def test_concurrent_ingests_leave_every_model_fitted_on_every_row(api: Api) -> None:
    dataset_id = await _dataset(api, 20)
    models = [await _fit(api, dataset_id), await _fit(api, dataset_id, "exponential", x="time")]
    for burst in range(3):
        calls = [api.post(_ingest(dataset_id), {"rows": [{"time": 100.0 + i + burst, "state": "F"}]})
                 for i in range(25)]
        late = api.post("fit/life", {"name": f"late {burst}", "dataset_id": dataset_id, "distribution": "weibull",
                                     "mapping": {"x": "time", "c": "state"}})
        *results, (status, fitted) = await asyncio.gather(*calls, late)
        assert all(s == 200 for s, _ in results), results
        assert status == 200, fitted
        models.append(fitted)
        count = len(await _rows(api, dataset_id))
        assert count == 20 + 25 * (burst + 1)
        assert [await _n(api, m["id"]) for m in models] == [count] * len(models)
    # The last refit is the fit of the final rows (lifelines on the same data).
    rows = await _rows(api, dataset_id)
    ref = WeibullFitter().fit([r["time"] for r in rows], event_observed=[r["state"] == "F" for r in rows])
    status, record = await api.post("get/model", {"id": models[0]["id"]})
    beta = {p["name"]: p["value"] for p in record["params"]}["beta"]
    assert math.isclose(beta, ref.rho_, rel_tol=1e-4)


async def test_writers_in_other_processes_are_kept_current_by_the_version_check(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the in-process lock (as between service processes on one PostgreSQL), a change
    planned on rows another writer has since changed is planned again, never committed."""
    from bathtub_api.tools import datasets

    monkeypatch.setattr(datasets, "dataset_lock", lambda dataset_id: asyncio.Lock())
    dataset_id = await _dataset(api, 20)
    model = await _fit(api, dataset_id)
    calls = [api.post(_ingest(dataset_id), {"rows": [{"time": 300.0 + i, "state": "F"}]}) for i in range(4)]
    late = api.post("fit/life", {"name": "late", "dataset_id": dataset_id, "distribution": "weibull",
                                 "mapping": {"x": "time", "c": "state"}})
    *results, (status, fitted) = await asyncio.gather(*calls, late)
    assert all(s == 200 for s, _ in results) and status == 200, (results, fitted)
    assert [await _n(api, model["id"]), await _n(api, fitted["id"])] == [24, 24]


# -- 3. idempotency keys ------------------------------------------------------------------------

async def test_a_key_is_kept_past_many_later_keys_and_for_its_stated_time(
    api: Api, monkeypatch: pytest.MonkeyPatch, config: Config
) -> None:
    dataset_id = await _dataset(api, 5)
    path = _ingest(dataset_id, "?refit=false")
    first = await api.post(path, {"rows": [{"time": 1.0, "state": "F"}]}, headers={"Idempotency-Key": "k-0"})
    assert first[0] == 200 and first[1]["n_rows"] == 6
    for i in range(1, 206):  # more keys than the old "last 200" window
        status, _ = await api.post(path, {"rows": [{"time": 1.0 + i, "state": "F"}]},
                                   headers={"Idempotency-Key": f"k-{i}"})
        assert status == 200
    status, again = await api.post(path, {"rows": [{"time": 1.0, "state": "F"}]}, headers={"Idempotency-Key": "k-0"})
    assert status == 200 and again == {**first[1], "replayed": True}
    assert len(await _rows(api, dataset_id)) == 5 + 206
    # After the stated time the key is forgotten (and purged): the same request appends again.
    from bathtub_api.store import base, common

    later = base.now() + config.idempotency_key_hours * 3600.0 + 1.0
    monkeypatch.setattr(base, "now", lambda: later)  # key lookups
    monkeypatch.setattr(common, "now", lambda: later)  # key claims and their purge
    status, out = await api.post(path, {"rows": [{"time": 1.0, "state": "F"}]}, headers={"Idempotency-Key": "k-0"})
    assert status == 200 and out["replayed"] is False and out["n_rows"] == 5 + 207
    status, again = await api.post(path, {"rows": [{"time": 1.0, "state": "F"}]}, headers={"Idempotency-Key": "k-0"})
    assert again["replayed"] is True  # the new answer is remembered in its turn
    # Every expired key was purged on the way: only the renewed one is left.
    left = await api.client.app[STORE].db.fetch("SELECT key FROM idempotency_keys")
    assert [r["key"] for r in left] == ["k-0"]


async def test_a_key_reused_with_a_different_body_is_refused(api: Api, other_api: Api) -> None:
    dataset_id = await _dataset(api, 5)
    path = _ingest(dataset_id)
    key = {"Idempotency-Key": "batch-1"}
    assert (await api.post(path, {"rows": [{"time": 1.0, "state": "F"}]}, headers=key))[0] == 200
    assert_refusal(*await api.post(path, {"rows": [{"time": 2.0, "state": "F"}]}, headers=key), 409,
                   "Idempotency-Key", "different")
    assert_refusal(*await api.post(_ingest(dataset_id, "?refit=false"), {"rows": [{"time": 1.0, "state": "F"}]},
                                   headers=key), 409, "Idempotency-Key")
    assert len(await _rows(api, dataset_id)) == 6
    # Keys belong to their user: another user's key of the same name is unrelated.
    other = await _dataset(other_api, 5)
    status, out = await other_api.post(_ingest(other), {"rows": [{"time": 9.0, "state": "F"}]}, headers=key)
    assert status == 200 and out["replayed"] is False


async def test_dataset_create_honours_an_idempotency_key(api: Api) -> None:
    body = {"name": "once", "csv": "t\n1\n2\n"}
    key = {"Idempotency-Key": "create-1"}
    status, first = await api.post("/api/v1/datasets", body, headers=key)
    assert status == 200
    assert await api.post("/api/v1/datasets", body, headers=key) == (200, first)
    assert await api.post("datasets/create", body, headers=key) == (200, first)  # one key, either route
    assert_refusal(*await api.post("datasets/create", {**body, "name": "other"}, headers=key), 409,
                   "Idempotency-Key")
    # Concurrent retries of one request create one dataset.
    retries = await asyncio.gather(*(api.post("datasets/create", {"name": "burst", "data": {"t": [1]}},
                                              headers={"Idempotency-Key": "create-2"}) for _ in range(8)))
    assert {s for s, _ in retries} == {200} and len({r["id"] for _, r in retries}) == 1
    status, listing = await api.post("list/dataset", {"limit": 500})
    assert sorted(i["name"] for i in listing["items"]) == ["burst", "once"]
    assert_refusal(*await api.post("datasets/create", body, headers={"Idempotency-Key": ""}), 422,
                   "Idempotency-Key")


# -- 4. repair: delete rows, delete the dataset -------------------------------------------------

@pytest.mark.slow  # ~7 s: refits across many chunks
async def test_delete_rows_refits_and_keeps_order_across_chunks(api: Api, other_api: Api, config: Config) -> None:
    times = [float(t) for t in np.round(stats.weibull_min(1.3, scale=200.0).rvs(350, random_state=RNG), 2) + 1]
    status, created = await api.post("datasets/create", {"name": "big", "data": {"time": times}})
    dataset_id = created["id"]
    model = await _fit(api, dataset_id, "weibull", x="time")
    gone = [0, 99, 100, 150, 349]
    status, out = await api.post("datasets/delete_rows", {"id": dataset_id, "rows": [150, 0, 349, 99, 100]})
    assert status == 200, out
    assert out["deleted"] == 5 and out["n_rows"] == 345 and out["refit"] == [{"id": model["id"],
                                                                             "name": model["name"]}]
    kept = [t for i, t in enumerate(times) if i not in gone]
    assert [r["time"] for r in await _rows(api, dataset_id)] == kept
    status, record = await api.post("get/model", {"id": model["id"]})
    assert record["n"] == 345
    ref = WeibullFitter().fit(kept)
    assert math.isclose({p["name"]: p["value"] for p in record["params"]}["beta"], ref.rho_, rel_tol=1e-4)
    # Appends after a delete continue the compacted rows.
    status, out = await api.post(_ingest(dataset_id), {"rows": [{"time": 5.0}]})
    assert status == 200 and out["n_rows"] == 346
    assert (await _rows(api, dataset_id))[-2:] == [{"time": kept[-1]}, {"time": 5.0}]
    # Refusals change nothing: bad indices, someone else's dataset, a read-only token.
    assert_refusal(*await api.post("datasets/delete_rows", {"id": dataset_id, "rows": [3, 346]}), 422,
                   "rows[1]", "346")
    assert_refusal(*await api.post("datasets/delete_rows", {"id": dataset_id, "rows": []}), 422, "rows")
    assert_refusal(*await api.post("datasets/delete_rows", {"id": dataset_id, "rows": [-1]}), 422, "rows")
    assert_refusal(*await other_api.post("datasets/delete_rows", {"id": dataset_id, "rows": [0]}), 404)
    reader = Api(api.client, await token_create(config, "alice", ["read"]))
    assert_refusal(*await reader.post("datasets/delete_rows", {"id": dataset_id, "rows": [0]}), 403, "write")
    assert len(await _rows(api, dataset_id)) == 346


async def test_delete_rows_repairs_a_dataset_a_model_cannot_refit(api: Api) -> None:
    dataset_id = await _dataset(api)
    km = await _fit(api, dataset_id, "kaplan_meier")
    # Rows stored without a refit can still leave a model unable to refit: repair by deleting them.
    status, out = await api.post(_ingest(dataset_id, "?refit=false"), {"rows": [{"time": 80.0, "state": "L"}]})
    assert status == 200 and out["n_rows"] == 41
    assert_refusal(*await api.post(_ingest(dataset_id), {"rows": [{"time": 1.0, "state": "F"}]}), 422,
                   "kaplan_meier")
    # A delete whose refit fails is refused too, and deletes nothing.
    assert_refusal(*await api.post("datasets/delete_rows", {"id": dataset_id, "rows": [0]}), 422, "kaplan_meier")
    assert len(await _rows(api, dataset_id)) == 41
    status, out = await api.post("datasets/delete_rows", {"id": dataset_id, "rows": [40]})
    assert status == 200 and out["n_rows"] == 40 and await _n(api, km["id"]) == 40
    status, out = await api.post(_ingest(dataset_id), {"rows": [{"time": 1.0, "state": "F"}]})
    assert status == 200 and await _n(api, km["id"]) == 41


async def test_delete_a_dataset(api: Api, other_api: Api) -> None:
    dataset_id = await _dataset(api, 10)
    model = await _fit(api, dataset_id)
    await api.post(_ingest(dataset_id), {"rows": [{"time": 3.0, "state": "F"}]}, headers={"Idempotency-Key": "a"})
    assert_refusal(*await other_api.post("datasets/delete", {"id": dataset_id}), 404)
    status, out = await api.post("datasets/delete", {"id": dataset_id})
    assert status == 200 and out == {"id": dataset_id, "deleted": True}
    assert_refusal(*await api.post("get/dataset", {"id": dataset_id}), 404)
    assert_refusal(*await api.get(f"/api/v1/datasets/{dataset_id}"), 404)
    assert_refusal(*await api.post(_ingest(dataset_id), {"rows": [{"time": 3.0, "state": "F"}]},
                                   headers={"Idempotency-Key": "a"}), 404)
    assert_refusal(*await api.post("datasets/delete", {"id": dataset_id}), 404)
    # The models fitted on it stay, naming the dataset they came from.
    status, record = await api.post("get/model", {"id": model["id"]})
    assert status == 200 and record["dataset_id"] == dataset_id and record["n"] == 11
    status, listing = await api.post("list/dataset")
    assert listing["items"] == []
    # The REST route does the same.
    other = await _dataset(api, 3)
    assert_refusal(*await other_api.call("DELETE", f"/api/v1/datasets/{other}"), 404)
    assert await api.call("DELETE", f"/api/v1/datasets/{other}") == (200, {"id": other, "deleted": True})
    assert_refusal(*await api.get(f"/api/v1/datasets/{other}"), 404)
