"""Every share-page kind and a report, loaded from the real running service (`bathtub serve`) in
headless Chromium: the key numbers are on the page, every figure rendered as an SVG with a size,
nothing was logged to the console, and the report's notes are text, not markup. Screenshots are
saved under the test's tmp_path/screens.

The numbers' references are independent of the service: the Weibull fit from the `reliability`
package, Crow-AMSAA's published MIL-HDBK-189C example, closed forms for the fleet (exponential
items are memoryless) and the age-replacement optimum (scipy's minimiser on the textbook cost
rate), a least-squares line (numpy) for the crack path."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp
import numpy as np
import pytest
from scipy import integrate, optimize

from bathtub_api.cli import token_create
from bathtub_api.config import Config
from bathtub_api.pages import number, percent
from tests.pages import seed as s
from tests.service.serving import Client, Server

FIGURES = {"model": 4, "recurrent_model": 3, "dataset": 0, "rbd": 1, "rbd_run": 2, "strategy_analysis": 1,
           "degradation_model": 1, "rcm_study": 0, "fleet": 1, "tracked_fleet": 1}
# seeds that are not a share kind of their own: a second life model (a complete sample, whose fit
# carries the Anderson–Darling p), read by tests/pages/test_every_kind_browser.py
OTHER_SEEDS = {"model_exact"}


def weibull_reference() -> tuple[float, float]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from reliability.Fitters import Fit_Weibull_2P

        failures = [x for x, c in zip(s.LIVES, s.CENSORED) if c == 0]
        suspended = [x for x, c in zip(s.LIVES, s.CENSORED) if c == 1]
        fit = Fit_Weibull_2P(failures=failures, right_censored=suspended, show_probability_plot=False,
                             print_results=False)
    return float(fit.alpha), float(fit.beta)


def age_replacement_optimum(alpha: float, beta: float, cp: float, cu: float) -> float:
    """argmin over T of (cp R(T) + cu F(T)) / ∫0^T R(t) dt (Barlow and Proschan)."""
    def rate(T: float) -> float:
        R = math.exp(-((T / alpha) ** beta))
        return (cp * R + cu * (1 - R)) / integrate.quad(lambda t: math.exp(-((t / alpha) ** beta)), 0, T)[0]

    return float(optimize.minimize_scalar(rate, bounds=(10, 3000), method="bounded",
                                          options={"xatol": 1e-6}).x)


def expected_text(kind: str, record: dict[str, Any]) -> list[str]:
    """What the page must show, from the references."""
    if kind == "model":
        alpha, beta = weibull_reference()
        return [number(alpha), number(beta), "Weibull probability plot", "hours"]
    if kind == "recurrent_model":
        return ["0.6142", "0.4239", "Improving"]  # MIL-HDBK-189C: beta 0.6142, lambda 0.4239
    if kind == "dataset":
        return ["10 rows in 2 columns", "test rig B, 2026", "16", "339.25"]  # stored values, whole
    if kind == "degradation_model":
        t = np.asarray(s.CRACK_TIMES)
        y = 1.0 + s.CRACK_SLOPES[0] * t + 0.2 * np.array([(j * 7) % 5 - 2 for j in range(len(t))])
        slope, intercept = np.polyfit(t, y, 1)
        return [number(float((50.0 - intercept) / slope)), "50"]
    if kind == "strategy_analysis":
        return [number(age_replacement_optimum(1000.0, 2.5, 1.0, 10.0)), "preventive replacement pays"]
    if kind == "rbd":
        return ["Pump 1", "Pump 2", "Pump 3", "3 blocks"]
    if kind == "rbd_run":
        lo, hi = record["results"]["mean_availability_interval"]
        # The closed form's time average lies in the run's own interval (both store and page show it).
        lam, mu, horizon = s.LAM, s.MU, 200.0

        def a(x: float) -> float:
            u = mu / (lam + mu) + lam / (lam + mu) * math.exp(-(lam + mu) * x)
            return 3 * u**2 - 2 * u**3

        exact = integrate.quad(a, 0, horizon)[0] / horizon
        assert lo <= exact <= hi, (lo, exact, hi)
        return [percent(lo, 6), percent(hi, 6), "Mean availability"]
    if kind == "fleet":
        # Exponential items are memoryless: each of the 10 fails in month k with e^{-0.1(k-1)}(1 - e^{-0.1}).
        total = 10 * (1 - math.exp(-1e-3 * 100 * 6))
        first = 10 * (1 - math.exp(-0.1))
        return [number(total), number(first), "months"]
    if kind == "rcm_study":
        return ["Impeller <cracks>", "SUPPORTED", "replace bearing", "360 hours", "Bearing seizes"]
    if kind == "tracked_fleet":
        # An item with measurements of its own crosses the threshold where its own least-squares
        # line does (numpy's), soonest first.
        out = ["crack watch", "T4"]
        for item in ("T2", "T1"):
            t, y = zip(*[(t, v) for i, t, v in s.TRACKED if i == item])
            slope, intercept = np.polyfit(t, y, 1)
            out.append(number(float((50.0 - intercept) / slope)))
        return out
    raise AssertionError(kind)


@pytest.mark.one_store  # rendering and numbers against references; sharing's storage: tests/service/test_sharing.py
@pytest.mark.slow  # ~18 s: a real `bathtub serve` and Chromium
async def test_every_share_page_and_a_report_in_chromium(database_url: str, tmp_path: Path,
                                                         open_page: Callable[[str, str], list[Any]],
                                                         browser: Any) -> None:
    from selenium.webdriver.common.by import By

    token = await token_create(Config(database_url=database_url), "alice", ["read", "write"])
    server = Server(database_url, tmp_path / "serve.log")
    try:
        async with aiohttp.ClientSession() as http:
            await server.ready(http)
            c = Client(http, server, token)
            ids = await s.seed(c.post)
            for kind, item_id in ids.items():
                if kind in OTHER_SEEDS:
                    continue
                status, link = await c.post("/api/v1/sharing/create_link", {"kind": kind, "id": item_id})
                assert status == 200, link
                record_kind = "model" if kind == "recurrent_model" else kind
                extra = {"include_curve": True} if kind == "rbd_run" else {}
                status, record = await c.post(f"/api/v1/get/{record_kind}", {"id": item_id, **extra})
                assert status == 200, record
                errors = open_page(link["url"], kind)
                assert errors == [], (kind, errors)
                body = browser.find_element(By.TAG_NAME, "body").text
                assert "Made with Bathtub" in body
                # nothing wider than the window on a desktop (a long sentence in a figures table once
                # made a page 1,833 px wide)
                wide = browser.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
                assert wide <= 0, (kind, wide)
                assert (record.get("name") or record["rbd_name"]) in browser.find_element(By.TAG_NAME, "h1").text
                for text in expected_text(kind, record):
                    assert text in body, (kind, text)
                svgs = browser.find_elements(By.CSS_SELECTOR, "figure.plot svg")
                assert len(svgs) == FIGURES[kind], (kind, len(svgs))
                for svg in svgs:
                    size = svg.size
                    assert size["width"] > 300 and size["height"] > 100, (kind, size)
                    assert svg.find_elements(By.CSS_SELECTOR, "path, use"), kind  # something was drawn

            note = "<script>document.title = 'pwned'</script><b>bold?</b>"
            status, report = await c.post("/api/v1/reports/create", {
                "name": "Pump review", "note": "Quarterly review\nfor the board",
                "items": [{"kind": "model", "id": ids["model"], "note": note},
                          {"kind": "fleet", "id": ids["fleet"], "note": "Fleet of ten pumps"}]})
            assert status == 200, report
            status, link = await c.post("/api/v1/sharing/create_link", {"kind": "report", "id": report["id"]})
            assert status == 200, link
            assert open_page(link["url"], "report") == []
            assert browser.title.startswith("Pump review")  # the note's script never ran
            notes = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "p.note")]
            assert notes == ["Quarterly review\nfor the board", note, "Fleet of ten pumps"]
            assert not browser.find_elements(By.CSS_SELECTOR, "section script, section b")
            assert len(browser.find_elements(By.CSS_SELECTOR, "figure.plot svg")) == 5  # the model's 4, the fleet's
    finally:
        server.stop()
