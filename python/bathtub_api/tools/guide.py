"""guide: short how-tos. Each topic names the actions it concerns; the answer is built from
what this service has now (read from the registry), so the guide cannot overstate: a topic
with none of its actions live says it is planned, one with some says which are missing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from bathtub_api.registry import Ctx, Registry
from bathtub_api.tools.common import Strict

Topic = Literal[
    "life_data", "units", "accelerated", "test_planning", "repairable", "rbds", "rbd_analysis", "strategy",
    "fleets", "uploads", "rcm", "sharing", "workspace", "plans",
]


@dataclass(frozen=True)
class Page:
    title: str
    summary: str
    text: str
    actions: tuple[str, ...]  # "tool/action" (tool protocol) or "METHOD /path" (REST-only routes)

    def answer(self, live: set[str]) -> str:
        missing = [a for a in self.actions if a not in live]
        if len(missing) == len(self.actions):
            return f"{self.title}: {self.summary} This is planned and not yet available in this service."
        if missing:
            return f"{self.text} Not yet available in this service: {', '.join(missing)}."
        return self.text


PAGES: dict[str, Page] = {
    "life_data": Page(
        "Life data", "Fit distributions to failure and suspension times; B-lives and bounds.",
        "Upload times with `datasets create` (or POST /api/v1/datasets with `csv` text or `data` column arrays), "
        "then fit with POST /api/v1/fit: `dataset_id`, `distribution` (an id such as weibull, or `best`) and "
        "`mapping` from roles to columns: `x` time, `c` censoring code (0 or F = failure, 1 or S = right-"
        "censored suspension), `n` count, `xl`/`xr` for interval data. A model gives each parameter with its "
        "standard error and 95% interval, goodness of fit, and B1-B50 and MTTF with one-sided 90% lower bounds "
        "(the same in any time unit). A B-life or bound below t = 0 (a normal, Gumbel or logistic model with mass "
        "before 0) keeps its number and carries a `warning`, also listed in the model's `warnings`; a "
        "discrete_weibull model gives whole cycles and `metrics` {median, mttf, b10}. "
        "Read a model with `get model` or GET /api/v1/models/{id}, and evaluate it with "
        "POST /api/v1/models/{id}/reliability. Append new lives with POST /api/ingest/datasets/{id}/lives.",
        ("datasets/create", "get/dataset", "list/dataset", "POST /api/v1/fit", "get/model", "GET /api/v1/models",
         "POST /api/v1/models/{model_id}/reliability", "POST /api/ingest/datasets/{dataset_id}/lives"),
    ),
    "units": Page(
        "Units", "Time units travel with data, models and diagrams; nothing is rescaled silently.",
        "Every model, dataset fit and diagram carries a `unit` label (hours, cycles, km, ...). Parameters are in "
        "that unit: a Weibull alpha of 1000 with unit hours is a characteristic life of 1000 h. Changing a "
        "diagram's unit with `rbd edit` op `set` relabels it without rescaling parameters. Discounting "
        "(`discount_rate`) needs a calendar unit (hours, days, weeks, months, years).",
        ("POST /api/v1/fit", "rbd/edit"),
    ),
    "accelerated": Page(
        "Accelerated life tests", "Life-stress models fitted across stress levels.",
        "Fit a life-stress relationship across stress levels with `fit accelerated`; bootstrap bounds are "
        "queued as jobs (poll `get job`).",
        ("fit/accelerated",),
    ),
    "test_planning": Page(
        "Demonstration-test planning", "How many units, for how long, with how many failures allowed.",
        "POST /api/v1/strategy/demonstration-test with `reliability` (to show over one mission), `confidence` "
        "(default 0.95), `failures` allowed (default 0), and `mission_time` with a known Weibull `shape` and "
        "`test_multiple`, or `units` to solve for test time per unit; `method` `mtbf` with an `mtbf` plans a "
        "constant-rate chi-squared test. The answer has the plan, the consumer's risk, a plain summary, its "
        "assumptions and a trade-off table.",
        ("POST /api/v1/strategy/demonstration-test",),
    ),
    "repairable": Page(
        "Repairable systems", "Recurrent-event models: growth, ROCOF, MTBF.",
        "Fit recurrent-event histories with `fit recurrent`: a growth verdict on the 95% interval of beta, "
        "ROCOF and MTBF with bounds, trend and goodness-of-fit tests.",
        ("fit/recurrent",),
    ),
    "rbds": Page(
        "Reliability block diagrams", "Build diagrams from nodes and edges or compact stages.",
        "`rbd create` takes `name`, `unit`, `repairable` and either nodes (input, output, component, series, "
        "parallel, knode, standby, subsystem) with edges, or compact `stages` (components in parallel, stages in "
        "series, `k_of_n`, `common_cause_beta`). Each block has a model: inline `distribution_id` + `params`, "
        "`mean` with `given` shape (stored as params), a mixture with weights, or a `saved_model_id` (a saved "
        "parametric model in the diagram's unit). Repairable diagrams take component, standby and knode blocks, "
        "each with a `repair` model or `instant_repair`. Refusals name the node and field. `rbd edit` applies a "
        "list of operations atomically (optionally against a `revision`); `get rbd` returns the compact node "
        "form with placeholder blocks marked; `list rbd` lists them.",
        ("rbd/create", "rbd/edit", "get/rbd"),
    ),
    "rbd_analysis": Page(
        "Diagram analysis", "Availability simulations as jobs; runs with curves.",
        "`rbd_analysis analyze` with `id` and `horizon` (repairable) or `mission_time` (non-repairable), "
        "`replications` or `precision` (relative 95% half-width of mean unavailability), `seed`. A "
        "non-repairable diagram that reduces to series, parallel and k-of-n parts (bridges included) answers at "
        "once in closed form; otherwise it quotes the run time and queues a job (poll `get job`) that stores an "
        "`rbd_run`: figures with 95% intervals, per-block figures, inputs, engine versions, precision reached "
        "and the quote. `get rbd_run` with `include_curve` adds A(t) or R(t) with its band and says whether the "
        "diagram changed since; the same inputs answer from the stored run unless `recompute: true`. "
        "The simulation honours preventive maintenance, proof tests (PFD and SIL of a `safety_function`), "
        "repair quality, common-cause groups, maintenance groups, costs with discounting, phases, capacity and "
        "production, initial block states and network mode; covariate schedules are stored but refused by "
        "analysis.",
        ("rbd_analysis/analyze", "get/rbd_run", "get/job"),
    ),
    "strategy": Page(
        "Maintenance strategy", "Optimal replacement, failure-finding intervals, shut plans.",
        "POST /api/v1/strategy/optimal-replacement with `distribution_id`, `params`, `planned_cost` and "
        "`unplanned_cost` gives the age-replacement interval minimising cost per unit time (or says why "
        "replacement cannot pay). POST /api/v1/strategy/failure-finding gives the proof-test interval of a "
        "hidden function that meets `target_availability`.",
        ("POST /api/v1/strategy/optimal-replacement", "POST /api/v1/strategy/failure-finding"),
    ),
    "fleets": Page(
        "Fleets", "Failure forecasts and usage ingest.",
        "GET /api/v1/fleets/{id}/forecast gives expected failures per period; POST "
        "/api/ingest/fleets/{id}/usage updates meter readings, recomputes the forecast and checks alert rules.",
        ("GET /api/v1/fleets/{fleet_id}/forecast", "POST /api/ingest/fleets/{fleet_id}/usage"),
    ),
    "uploads": Page(
        "Uploads", "Send files for import through single-use links.",
        "`uploads create` returns a single-use link: PUT the bytes to it within 15 minutes, then import by "
        "`upload_id`. CSV text can also be sent directly: `datasets create` takes `csv`, and "
        "POST /api/ingest/datasets/{id}/lives takes raw text/csv.",
        ("uploads/create", "get/upload", "datasets/create"),
    ),
    "rcm": Page(
        "RCM studies", "Functions, failures, modes and decisions as a worksheet.",
        "`rcm create` stores a worksheet of functions, functional failures, failure modes and decisions; "
        "`get rcm_study` returns it with node ids and each decision's evidence check.",
        ("rcm/create", "get/rcm_study"),
    ),
    "sharing": Page(
        "Sharing", "Read-only share links and reports.",
        "`sharing create_link` makes a read-only page that anyone with the URL can open.",
        ("sharing/create_link",),
    ),
    "workspace": Page(
        "Workspace", "Your items, ids, jobs and tokens.",
        "Every item belongs to the token's user; ids are strings with a kind prefix (ds_, mdl_, rbd_, run_, "
        "job_). Another user's id answers 404. List items with the `list` tool (e.g. `list dataset`), read them "
        "with `get` (`get dataset` pages rows with `offset` and `limit` 1-500). Long calculations answer with a "
        "`job_id`: poll `get job`. Tokens are created and revoked by the operator with "
        "`bathtub token create --user NAME --scopes read,write`.",
        ("list/dataset", "get/dataset", "get/job"),
    ),
    "plans": Page(
        "Plans and limits", "What the limits are and what to do when one stops a call.",
        "This service enforces 120 requests a minute per token (429 with Retry-After: wait that many seconds), "
        "request bodies up to its configured size (413), and 1-500 rows per dataset page. It has no paid plans: "
        "402 is never returned by a self-hosted Bathtub.",
        ("guide",),
    ),
}


class GuideRequest(Strict):
    topic: Topic | None = None


class GuideAction(Strict):
    name: str
    available: bool


class GuideTopic(Strict):
    id: str
    title: str
    summary: str


class GuideAnswer(Strict):
    topics: list[GuideTopic] | None = None
    topic: str | None = None
    title: str | None = None
    text: str | None = None
    actions: list[GuideAction] | None = None


def available_names(reg: Registry) -> set[str]:
    names = {f"{a.tool}/{a.action}" if a.action else a.tool for a in reg.actions.values()}
    names |= {f"{r.method} {r.path}" for r in reg.routes}
    return names


def register(reg: Registry) -> None:
    async def guide(ctx: Ctx, req: GuideRequest) -> dict[str, Any]:
        if req.topic is None:
            return {"topics": [{"id": k, "title": p.title, "summary": p.summary} for k, p in PAGES.items()]}
        page = PAGES[req.topic]
        live = available_names(reg)
        return {
            "topic": req.topic,
            "title": page.title,
            "text": page.answer(live),
            "actions": [{"name": a, "available": a in live} for a in page.actions],
        }

    reg.action("guide", None, request=GuideRequest, response=GuideAnswer,
               summary="With no topic, the list of topics; with a topic, a short how-to")(guide)
