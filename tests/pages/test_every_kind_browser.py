"""Every share-page kind as an engineer makes it (a Weibull fit, a Cox model on Rossi, Crow-AMSAA on
one and on three systems, ALT, degradation, a 2-of-3 diagram with and without PM and costs and
their runs, an optimal replacement, failure finding, RCM, a fleet, a dataset, a report), loaded in
headless Chromium at a phone's and a desktop's width (issue 28, "Must hold"):
- nothing wider than the window (`scrollWidth <= innerWidth`): tables scroll in their card;
- no Python reprs (`object at 0x`, `built-in method`) and no `NaN`, `None` or `null` shown;
- the record's key figures, read from the API and formatted by the page's own functions, on the page;
- every plot drawn (an SVG with marks) with its smallest text at 10 px or more;
- nothing logged to the console.
Whether the figures are right is the library's tests' business; here they must be shown."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bathtub_api.cli import token_create
from bathtub_api.config import Config
from bathtub_api.pages import cell, number, percent
from bathtub_api.pages.readings import interval
from tests.pages import seed as s
from tests.pages.seed_uncertain import seed_uncertain
from tests.session_browser import ServedApp

pytestmark = [pytest.mark.slow, pytest.mark.one_store]  # ~60 s: two runs, 17 pages at two widths
WIDTHS = (400, 1300)
SHOTS = Path(__file__).resolve().parents[2] / "test-output" / "pages"
# (name, share kind): every page kind, some in more than one shape
PAGES = [("model", "model"), ("model_exact", "model"), ("cox", "model"), ("alt", "model"),
         ("recurrent_model", "recurrent_model"),
         ("growth3", "recurrent_model"), ("degradation_model", "degradation_model"), ("dataset", "dataset"),
         ("rbd", "rbd"), ("rbd_pm", "rbd"), ("rbd_run", "rbd_run"), ("rbd_pm_run", "rbd_run"),
         ("rbd_unc_run", "rbd_run"),
         ("strategy_analysis", "strategy_analysis"), ("failure_finding", "strategy_analysis"),
         ("rcm_study", "rcm_study"), ("fleet", "fleet"), ("tracked_fleet", "tracked_fleet"),
         ("report", "report"),
         # with the fitted model's parameter uncertainty: both intervals, plainly named
         ("fleet_uncertain", "fleet"), ("replacement_uncertain", "strategy_analysis"),
         ("ff_uncertain", "strategy_analysis")]
BAD = re.compile(r"object at 0x|built-in method|\bNaN\b|\bNone\b|\bnull\b")
SMALLEST_TEXT = """
let least = Infinity;
for (const svg of document.querySelectorAll('figure.plot svg')) {
  const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  for (const t of svg.querySelectorAll('text')) {
    const size = parseFloat(getComputedStyle(t).fontSize);
    if (size) least = Math.min(least, size * scale);
  }
}
return least;
"""


class Site:
    def __init__(self, app: ServedApp, links: dict[str, str], records: dict[str, dict[str, Any]]) -> None:
        self.app, self.links, self.records = app, links, records


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    config = Config(database_url=f"sqlite:///{tmp_path_factory.mktemp('pages') / 'b.sqlite3'}")
    token = asyncio.run(token_create(config, "alice", ["read", "write"]))
    app = ServedApp.bathtub(config)
    try:
        links, records = asyncio.run(_seed(app.url, token))
        yield Site(app, links, records)
    finally:
        app.close()


async def _seed(url: str, token: str) -> tuple[dict[str, str], dict[str, dict[str, Any]]]:
    async with aiohttp.ClientSession() as http:
        async def post(path: str, body: Any) -> tuple[int, Any]:
            async with http.post(url + path, json=body, headers={"Authorization": f"Bearer {token}"}) as r:
                return r.status, await r.json()

        ids = {**await s.seed(post), **await s.seed_more(post)}
        ids |= await seed_uncertain(post, ids["model"])
        kinds = dict(PAGES)
        report = await s.ok(post, "/api/v1/reports/create", {"name": "Pump review", "items": [
            {"kind": "model", "id": ids["model"]}, {"kind": "fleet", "id": ids["fleet"]},
            {"kind": "rbd", "id": ids["rbd_pm"]}, {"kind": "tracked_fleet", "id": ids["tracked_fleet"]}]})
        ids["report"] = report["id"]
        links, records = {}, {}
        for name, kind in PAGES:
            links[name] = (await s.ok(post, "/api/v1/sharing/create_link", {"kind": kind, "id": ids[name]}))["url"]
            if kind == "report":
                continue
            stored = "model" if kind == "recurrent_model" else kind
            extra = {"include_curve": True} if kind == "rbd_run" else {"per_item": True} if kind == "fleet" else {}
            records[name] = await s.ok(post, f"/api/v1/get/{stored}", {"id": ids[name], **extra})
        records["report"] = records["model"]  # the report's first item
        assert set(links) == set(kinds)
        return links, records


def _ci(row: dict[str, Any]) -> list[str]:
    pair = interval(row)
    assert pair is not None, row  # a key figure's interval must be in the record
    return [number(pair[0]), number(pair[1])]


def key_figures(name: str, r: dict[str, Any]) -> list[str]:
    """What an engineer reads on each page, formatted as the page formats it."""
    if name in ("model", "report", "model_exact"):
        out = [t for p in r["params"] for t in (number(p["value"]), number(p["se"]), *_ci(p))] + \
              [t for m in r["life"] for t in (number(m["value"]), number(m["lower"]))]
        if name == "model_exact":  # the Anderson–Darling test: statistic, A*, p and verdict
            ad = next(g for g in r["gof"] if g["id"] == "ad_test")
            out += [number(ad["value"]), number(ad["modified"]), number(ad["p"]), ad["verdict"]]
        return out
    if name == "cox":
        ph = r["diagnostics"]["ph_test"]
        return [number(r["n_events"]), number(r["validation"]["concordance"]["value"]), number(ph["global"]["p"]),
                *[number(row["p"]) for row in ph["rows"]],
                *[t for g in r["gof"] if "df" in g for t in (number(g["value"]), number(g["p"]))],
                *[t for c in r["coefficients"] for t in (number(c["exp_coef"]), number(c["exp_ci"][0]))]]
    if name == "alt":
        use = r["use"]
        return [number(use["life"]["value"]), *_ci(use["life"]), number(use["mttf"]["value"]),
                number(r["activation_energy_ev"]["value"]), *_ci(r["activation_energy_ev"]),
                *[t for a in use["acceleration_factors"] for t in (number(a["value"]), *_ci(a))],
                *[t for p in r["params"] for t in (number(p["value"]), number(p["se"]), *_ci(p))]]
    if name in ("recurrent_model", "growth3"):
        out = [number(p["value"]) for p in r["params"]] + [number(r["rocof"]["value"]), *_ci(r["rocof"]),
                                                           number(r["demonstrated_mtbf"]["lower"])]
        out += [number(m["value"]) for m in r["mtbf"].values() if isinstance(m, dict)]
        return out + [number(n["median"]) for n in r.get("next_failure_by_system") or []]
    if name == "degradation_model":
        return [number(u["crossing_time"]) for u in r["units"] if u.get("crossing_time") is not None]
    if name == "dataset":
        return [cell(v) for row in r["rows"] for v in row.values()]
    if name in ("rbd", "rbd_pm"):
        out = [n["label"] for n in r["nodes"] if n.get("label")] + ["20 hours"]  # MTTR = 1 / 0.05 per hour
        return out + (["pump 1 life (vendor data)", "cost 50 EUR", "repair 200 EUR"] if name == "rbd_pm" else [])
    if name in ("rbd_run", "rbd_pm_run"):
        res = r["results"]
        out = [percent(res["mean_availability"], 6), *[percent(v, 6) for v in res["mean_availability_interval"]],
               *[percent(b["share_of_system_downtime"]) for b in res["blocks"]],
               *[number(b["downtime"]) for b in res["blocks"]]]
        means = r["curve"]["interval_mean"]
        # the figure means what its name says: its time-average is the run's mean availability
        spans = [b - a for a, b in zip(means["start"], means["end"], strict=True)]
        average = sum(a * w for a, w in zip(means["availability"], spans, strict=True)) / sum(spans)
        lo, hi = res["mean_availability_interval"]
        assert lo <= average <= hi and abs(average - res["mean_availability"]) < 1e-9
        out.append("Mean availability over each interval")
        if name == "rbd_pm_run":
            assert r["currency"] == "EUR"
            out += [number(res["planned_downtime"]), number(res["unplanned_downtime"]),
                    number(res["expected_preventive_replacements"]), number(res["expected_planned_outages"]),
                    f"{number(res['costs']['total'])} EUR",
                    *[number(c["total"]) for c in res["costs"]["by_block"].values()]]
        return out
    if name == "rbd_unc_run":
        u = r["uncertainty"]["figures"]
        a, f = u["mean_availability"], u["expected_failures"]
        return ["Monte Carlo interval (95%)", "parameter-uncertainty interval (90%", "pump life (eight failures)",
                *[percent(v, 4) for v in (a["point"], *a["monte_carlo_interval"], *a["interval"])],
                *[number(v) for v in f["interval"]], percent(a["parameter_share"]),
                percent(r["uncertainty"]["sources"][0]["share_of_parameter_variance"]), "MTBF"]
    if name == "strategy_analysis":
        res = r["result"]
        return [number(res["optimal_time"]), f"{number(res['optimal_cost_rate'])} EUR per hour",
                f"{number(res['planned_cost'])} EUR", f"{number(res['unplanned_cost'])} EUR"]
    if name == "failure_finding":
        return [number(r["result"]["interval"]), number(r["result"]["approximate_interval"])]
    if name == "rcm_study":
        return [m["text"] for f in r["functions"] for ff in f["failures"] for m in ff["modes"]]
    if name == "fleet_uncertain":
        pu = r["forecast"]["parameter_uncertainty"]
        return ["interval, point model", "interval with parameter uncertainty", number(pu["total_expected"]),
                number(pu["total_expected_range"]["lower"]), number(pu["total_expected_range"]["upper"]),
                *[number(v) for v in pu["expected_failures"]]]
    if name == "replacement_uncertain":
        pu = r["result"]["parameter_uncertainty"]
        return ["With parameter uncertainty", number(r["result"]["optimal_time"]),
                # a draw in which replacement does not pay reads "run to failure"
                *[number(v) if v is not None else "run to failure" for v in pu["optimal_time"].values()],
                number(pu["expected_regret"]), percent(pu["expected_regret_share"])]
    if name == "ff_uncertain":
        pu = r["result"]["parameter_uncertainty"]
        return ["With parameter uncertainty", number(r["result"]["interval"]),
                *[number(pu["interval"][k]) for k in ("lower", "median", "upper")],
                percent(pu["chance_target_missed"]), percent(pu["expected_shortfall"])]
    if name == "fleet":
        fc = r["forecast"]
        return [number(fc["total_expected"]), *[number(v) for v in fc["expected_failures"]],
                *[number(i["expected_failures"]) for i in r["per_item"]]]
    if name == "tracked_fleet":
        out = []
        for i in r["items"]:
            life = i["remaining_life"]
            if i["measurements"]:
                out += [number(i["last_time"]), number(i["last_value"]), number(life["median"]),
                        number(life["interval"][0]), number(life["interval"][1]),
                        number(life["as_of"] + life["median"])]
        return out + [i["name"] for i in r["items"]]
    raise AssertionError(name)


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", [n for n, _ in PAGES])
def test_page_holds_at_width(site: Site, browser: Any, name: str, width: int) -> None:
    from selenium.webdriver.common.by import By

    browser.get_log("browser")  # drop what earlier pages logged
    browser.set_window_size(width, 900)
    browser.get(site.links[name])
    height = browser.execute_script("return document.documentElement.scrollHeight")
    browser.set_window_size(width, min(max(int(height), 800), 9000))
    SHOTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(SHOTS / f"{name}-{width}.png"))
    errors = [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
    assert errors == [], errors
    inner = browser.execute_script("return window.innerWidth")
    assert browser.execute_script("return document.documentElement.scrollWidth") <= inner
    text = browser.find_element(By.TAG_NAME, "body").text
    assert not BAD.findall(text), BAD.findall(text)
    missing = [f for f in key_figures(name, site.records[name]) if f not in text]
    assert not missing, missing
    assert not re.search(r"\bmdl_\w+", text), "a raw model id shown"
    svgs = browser.find_elements(By.CSS_SELECTOR, "figure.plot svg")
    if name not in ("dataset", "rcm_study"):
        assert svgs, "no plot"
    for svg in svgs:
        assert svg.size["width"] > 200 and svg.size["height"] > 80, svg.size
        assert svg.find_elements(By.CSS_SELECTOR, "path, use"), "an empty plot"
    if svgs:
        assert browser.execute_script(SMALLEST_TEXT) >= 10.0
