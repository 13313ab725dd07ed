"""The share page of every model kind the registry knows shows its numbers as numbers: no
Python repr (`object at 0x`, `built-in method`), no `None`, no `NaN` anywhere in the page's
text. One model of each kind is fitted through the API on tests/models' reference data (so a
kind added to the registry without a case here fails), plus an ALT record as the previous
release stored it (its rows once printed `<built-in method lower of str object at 0x…>`)."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from bathtub.models import KINDS
from bathtub_api.auth import hash_token
from bathtub_api.keys import STORE
from tests.conftest import Api
from tests.models.reference import ALT, CRACKS, GROWTH, LIFE

OLD = json.loads((Path(__file__).parents[1] / "service" / "data" / "old_model_records.json").read_text())
OLD_ALT = OLD["alt"]
BAD = re.compile(r"object at 0x|built-in method|bound method|\bNone\b|\bNaN\b|\bnan\b|Traceback")

# kind -> (share kind, dataset columns, the fit's POST path, its body without dataset_id)
FIT = "/api/v1/fit"
CASES: dict[str, list[tuple[str, dict[str, Any] | None, str, dict[str, Any]]]] = {
    "distribution": [("model", LIFE, FIT, {"distribution": "weibull", "mapping": {"x": "x", "c": "c"}})],
    "nonparametric": [("model", LIFE, FIT, {"distribution": "kaplan_meier", "mapping": {"x": "x", "c": "c"}})],
    "competing_risks": [("model", LIFE, FIT, {"distribution": "weibull",
                                              "mapping": {"x": "x", "c": "c", "mode": "mode"}})],
    "regression": [("model", LIFE, FIT, {"distribution": d, "mapping": {"x": "x", "c": "c"}, "covariates": ["z"]})
                   for d in ("cox", "weibull_ph")]
    # Fine–Gray: its record carries the incidence block and mode_names (a page once failed on a modes clash)
    + [("model", LIFE, FIT, {"distribution": "fine_gray", "mapping": {"x": "x", "c": "c", "mode": "mode"},
                             "covariates": ["z"], "options": {"failure_mode": "wear"}})],
    "alt": [("model", ALT, FIT, {"distribution": "weibull_arrhenius",
                                 "mapping": {"x": "x", "c": "c", "stress": "temp"}})],
    "recurrent": [("recurrent_model", GROWTH, FIT, {"distribution": d, "mapping": {"t": "t"}})
                  for d in ("crow_amsaa", "mcf")],
    "degradation": [("degradation_model", CRACKS, "/api/v1/degradation/create", {
        "mapping": {"i": "i", "x": "x", "y": "y"}, "path": "linear", "threshold": 5.0, "direction": "up",
        "model": m, "life_distribution": "lognormal"}) for m in ("pseudo_failure", "random_effects")],
    "demand": [("model", None, "/api/v1/fit/demand", {"batches": [{"demands": 100, "failures": 2},
                                                                  {"demands": 80, "failures": 1}]})],
}


def page_text(page: str) -> str:
    """What a reader sees: the markup's text, without style or script bodies."""
    page = re.sub(r"<(style|script)\b.*?</\1>", " ", page, flags=re.S | re.I)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


async def _shared_page(api: Api, share_kind: str, item_id: str) -> str:
    status, link = await api.post("sharing/create_link", {"kind": share_kind, "id": item_id})
    assert status == 200, link
    async with api.client.get(urlsplit(link["url"]).path) as resp:
        assert resp.status == 200
        return await resp.text()


def test_every_kind_has_a_page_case() -> None:
    assert set(CASES) == set(KINDS), "a kind in the registry needs a share-page case here"


@pytest.mark.one_store  # rendering: no store-specific behaviour
@pytest.mark.slow  # ~12 fits and pages through the service
async def test_no_model_kind_page_shows_a_repr_none_or_nan(api: Api, client: Any) -> None:
    for kind, cases in CASES.items():
        for share_kind, columns, path, body in cases:
            name = f"{kind} {body.get('distribution') or body.get('model') or 'model'}"
            request = {"name": name, **body}
            if columns is not None:
                status, ds = await api.post("/api/v1/datasets/create", {"name": f"{name} data", "data": columns})
                assert status == 200, ds
                request["dataset_id"] = ds["id"]
            status, made = await api.post(path, request)
            assert status == 200, (kind, made)
            page = await _shared_page(api, share_kind, made["id"])
            text = page_text(page)
            assert name in text
            seen = [text[max(m.start() - 80, 0):m.end() + 20] for m in BAD.finditer(text)]
            assert not seen, (kind, name, seen[:3])

    store = client.app[STORE]
    owner = (await store.token_owner(hash_token(api.token)))["user_id"]
    await store.insert_item(owner, "model", "model_old_alt", "old alt model", {**OLD_ALT, "unit": "h"})
    text = page_text(await _shared_page(api, "model", "model_old_alt"))
    assert not BAD.findall(text), sorted(set(BAD.findall(text)))
    beta = next(p for p in OLD_ALT["params"] if p["name"] == "beta")
    assert "–" in text and "old alt model" in text and f"{beta['value']:.4g}"[:4] in text
    # a by-mode fit stored when its all-modes fit was `pooled` (a demand record's name): its page shows
    # that fit as the all-modes row, and no demand table
    await store.insert_item(owner, "model", "model_old_cr", "old by-mode model",
                            {**OLD["competing_risks"], "unit": "h"})
    text = page_text(await _shared_page(api, "model", "model_old_cr"))
    assert "all modes as one" in text and "Probability of failure on demand" not in text
    assert not BAD.findall(text), sorted(set(BAD.findall(text)))


@pytest.mark.one_store  # rendering: no store-specific behaviour
async def test_old_records_pages_show_their_rows(api: Api, client: Any) -> None:
    """Records stored before the one row shape render from the upgraded record: a Cox model's
    coefficient (once keyed `coef`) and its hazard ratio with interval, an ALT model's use-level
    B-life interval (once {lower, upper}) and its bootstrap rows (once {percentile, bca}), a power
    law's ROCOF interval."""
    store = client.app[STORE]
    owner = (await store.token_owner(hash_token(api.token)))["user_id"]

    def fmt(v: float) -> str:
        return f"{v:.4g}"

    cox = OLD["cox"]
    await store.insert_item(owner, "model", "model_old_cox", "old cox model", {**cox, "unit": "h"})
    text = page_text(await _shared_page(api, "model", "model_old_cox"))
    assert not BAD.findall(text), sorted(set(BAD.findall(text)))
    row = cox["coefficients"][0]
    for v in (row["coef"], *row["ci"], row["exp_coef"], *row["exp_ci"]):
        assert fmt(v) in text, (v, text[:2000])
    assert "hazard ratio" in text

    alt = OLD["alt_use_bootstrap"]
    await store.insert_item(owner, "model", "model_old_altb", "old alt bootstrapped", {**alt, "unit": "h"})
    text = page_text(await _shared_page(api, "model", "model_old_altb"))
    assert not BAD.findall(text), sorted(set(BAD.findall(text)))
    b10 = alt["use"]["b_lives"][0]
    assert fmt(b10["lower"]) in text and fmt(b10["upper"]) in text
    assert "Bootstrap intervals" in text
    boot = next(r for r in alt["bootstrap"]["intervals"] if r["name"] == "b10")
    for v in (boot["percentile"]["lower"], boot["percentile"]["upper"], boot["bca"]["lower"], boot["bca"]["upper"]):
        assert fmt(v) in text, v

    growth = OLD["crow_amsaa"]
    await store.insert_item(owner, "model", "model_old_growth", "old growth model", {**growth, "unit": "h"})
    text = page_text(await _shared_page(api, "recurrent_model", "model_old_growth"))
    assert not BAD.findall(text), sorted(set(BAD.findall(text)))
    assert fmt(growth["rocof"]["lower"]) in text and fmt(growth["rocof"]["upper"]) in text
