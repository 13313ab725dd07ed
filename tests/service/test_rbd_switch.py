"""A standby group's `switch` over HTTP (SQLite only): stored and run by rbd/create and
rbd_analysis (never by the closed form, which does not model the switch: the run says it
simulated), the run against the closed form R(t) = e^{-λt}(1 + pλt) within its own
interval, and bad values refused at the door naming the field, nothing saved."""

from __future__ import annotations

import math

import pytest

from tests.conftest import Api
from tests.service.test_rbd_decisions import created, exp_model
from tests.service.test_rbd_states_units import one_block, run

pytestmark = pytest.mark.one_store


async def test_a_switch_is_stored_and_simulated(api: Api) -> None:
    lam, p, t = 1e-3, 0.8, 1500.0
    node = {"id": "S", "type": "standby", "spares": 1, "cold": True, "model": exp_model(lam),
            "switch": {"p_fail": 1 - p, "life": {"distribution_id": "exponential", "mean": 1e6}}}
    rbd_id = await created(api, one_block(node, False))
    status, got = await api.post("get/rbd", {"id": rbd_id})
    assert status == 200, got
    stored = next(n for n in got["nodes"] if n["id"] == "S")["switch"]
    assert stored["p_fail"] == pytest.approx(0.2) and stored["life"]["distribution_id"] == "exponential"
    out = await run(api, rbd_id, mission_time=t, replications=40_000, seed=11)
    assert out["method"] == "simulation", out["method"]
    # a switch failing while waiting at rate 1e-6 moves R(t) by < 1e-3 · λt: within the band
    exact = math.exp(-lam * t) * (1 + p * lam * t)
    lo, hi = out["results"]["reliability_interval"]
    assert lo <= exact <= hi, (lo, hi, exact)


async def test_bad_switch_refused_at_the_door(api: Api) -> None:
    base = {"id": "S", "type": "standby", "spares": 1, "cold": True, "model": exp_model(0.01),
            "repair": exp_model(0.1)}
    cases = [
        ({"switch": {"p_fail": 1.5}}, "nodes.S.switch.p_fail:"),
        ({"switch": {"p_fail": -0.5}}, "nodes.S.switch.p_fail:"),
        ({"switch": {"switchover": 2.0}}, "nodes.S.switch.p_fail:"),
        ({"switch": {"p_fail": 0.1, "switchover": -1.0}}, "nodes.S.switch.switchover:"),
        ({"switch": {"p_fail": 0.1, "life": {"distribution_id": "exponential"}}}, "nodes.S.switch.life"),
    ]
    status, before = await api.post("list/rbd", {})
    for extra, field in cases:
        status, refused = await api.post("rbd/create", one_block({**base, **extra}, True))
        assert status == 422 and refused["detail"].startswith(field), (extra, refused)
        assert "p_fail" not in field or "[0, 1]" in refused["detail"] or "required" in refused["detail"], refused
    comp = {"id": "S", "type": "component", "model": exp_model(0.01), "repair": exp_model(0.1),
            "switch": {"p_fail": 0.1}}
    status, refused = await api.post("rbd/create", one_block(comp, True))
    assert status == 422 and refused["detail"].startswith("nodes.S.switch:"), refused
    status, after = await api.post("list/rbd", {})
    assert after["items"] == before["items"]
