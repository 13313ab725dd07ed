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
        "standard error and 95% interval, goodness of fit, and B1-B50 and MTTF with one-sided 90% lower bounds. "
        "Read a model with `get model` or GET /api/v1/models/{id}, and evaluate it with "
        "POST /api/v1/models/{id}/reliability. Append new lives with POST /api/ingest/datasets/{id}/lives "
        "(JSON `rows`, `data` or `csv`, or raw text/csv): every row is checked against the dataset's columns and "
        "against the roles its models read (times present, finite and >= 0, known censoring codes, whole counts), "
        "and a bad row is a 422 naming it (`rows[3].time`) with nothing appended. The rows are appended and "
        "every model fitted on the dataset is refitted in place together, or not at all: a refit the new rows "
        "make impossible is a 422 naming the model (`?refit=false` appends without refitting). Send an "
        "`Idempotency-Key` header with an ingest or `datasets create` to make retries safe: a repeat within the "
        "service's key time (24 h by default) answers the first result and changes nothing, and the same key with "
        "a different body is a 409. To repair a dataset, `datasets delete_rows` with `id` and `rows` (0-based "
        "indices, as `get dataset` numbers them; later rows move up) deletes rows and refits its models under the "
        "same all-or-nothing rule; `datasets delete` (or DELETE /api/v1/datasets/{id}) deletes the dataset and "
        "its rows, while models fitted on it stay. Only the owner can change a dataset (anyone else gets 404). "
        "Degradation readings (a dataset with unit, time and value columns) fit with `degradation create`: "
        "`mapping` roles `i` unit, `x` time, `y` value; `path` linear, exponential, power or logarithmic (or "
        "`{t, y}` transforms identity, log, sqrt); `threshold` and `direction` (up or down); `model` "
        "pseudo_failure (each unit's fitted path extrapolated to the threshold, then `life_distribution` fitted "
        "with bounds; a unit whose path heads away, or reaches the threshold only beyond `options.extrapolation` "
        "times its last reading, default 3, is right-censored at its last reading and listed so) or "
        "random_effects (linear or exponential paths; a random slope per unit, `options.random_intercept` adds a "
        "correlated random intercept; ML or REML, `options.method`; parameters with 95% intervals; the life is "
        "the first crossing of the random line, so a share of units, `p_never`, never fails and the mean life is "
        "infinite). A unit with fewer than 2 readings, times not increasing within a unit, or a threshold no "
        "unit's path reaches is a 422 naming the field. Read them with `get degradation_model` and "
        "`list degradation_model`; GET /api/v1/models lists them beside life models. `degradation "
        "remaining_life` with `id`, `age` and the unit's own `readings` ([age, value] pairs, at most 2000) "
        "updates the unit's random effects from its readings (closed-form Gaussian update) and gives its "
        "remaining-life median and central interval (`probability`, default 0.9), conditioned on its survival "
        "to `age`; with no readings it is the population life conditioned on the age. Degradation models are "
        "fitted on the dataset's rows at creation and not refitted by later ingests.",
        ("datasets/create", "get/dataset", "list/dataset", "POST /api/v1/fit", "get/model", "GET /api/v1/models",
         "POST /api/v1/models/{model_id}/reliability", "POST /api/ingest/datasets/{dataset_id}/lives",
         "datasets/delete_rows", "datasets/delete", "DELETE /api/v1/datasets/{dataset_id}", "degradation/create",
         "get/degradation_model", "list/degradation_model", "degradation/remaining_life"),
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
        "Demonstration-test planning", "Plan or read a test any way round: units, test time, MTBF or reliability "
        "shown, confidence, failures allowed, both risks, sequential.",
        "POST /api/v1/strategy/demonstration-test (or `strategy demonstration_test`). Give what you know; "
        "`solve_for` names the one unknown and is read from what is missing when left out. "
        "Attribute (pass/fail) tests: `reliability` per mission, `confidence` (default 0.95) or `consumer_risk`, "
        "`failures` allowed (default 0) → `units`; with `units` and a known Weibull `shape` → test time per unit "
        "(Weibayes; `mission_time`, `test_multiple`); with `units` and the test length given → `reliability` shown, "
        "or say `solve_for` `confidence` or `failures`. Constant-rate tests (`method` mtbf, or any of `mtbf`, "
        "`design_mtbf`, `total_test_time`): `mtbf` → `total_test_time`; `total_test_time` and `failures` → the "
        "MTBF shown (`demonstrated_mtbf`, two-sided adds `mtbf_upper`); both with `solve_for` `confidence` or "
        "`failures`; `sided` one or two; `termination` time or failure (a failure-terminated test stops at the "
        "given failure). Both risks: add a design value (`design_mtbf`, `discrimination_ratio` or "
        "`design_reliability`) and `producer_risk` → the smallest plan meeting both (`solve_for` plan: fewest "
        "failures allowed, then shortest time or fewest units), with its exact risks and the operating "
        "characteristic (`operating_characteristic`: chance of passing against the true MTBF or reliability). "
        "Sequential (`method` sequential, with mtbf, a design value, consumer and producer risks): Wald's accept "
        "and reject lines, truncation at the fixed-length plan of the same risks (MIL-HDBK-781), and the exact "
        "risks and expected test time at the required and design MTBF. Every answer has `summary`, "
        "`assumptions` and a `tradeoff` table by failures allowed; a question that cannot be met (a risk of 0, a "
        "discrimination ratio at or below 1, a test too short for any plan) is refused with 422 naming the field.",
        ("POST /api/v1/strategy/demonstration-test", "strategy/demonstration_test"),
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
        "production, initial block states and network mode, and joint units (a component whose model is a "
        "random-effects degradation model's `saved_model_id` with `joint_unit` {age, readings}: the block's life "
        "is that running unit's remaining life given its readings, conditioned exactly on its age and handed to "
        "the engine as a table of its distribution function; non-repairable diagrams, one unit, no spares, "
        "state or preventive replacement); covariate schedules are stored but refused by analysis. "
        "Failures are counted apart from planned events: `expected_failures`, `mtbf` and `mttr` "
        "(system and per block) are about failures only, and `expected_preventive_replacements`, "
        "`expected_proof_tests`, `expected_planned_outages` and planned vs unplanned downtime have their own "
        "fields; an `instant_repair` block's failures count (one that takes the system down is a system failure "
        "of no length). PFD(t) is read just before each proof test, so `pfd_max` is the saw-tooth peak. A "
        "phased mission's `mission_time` is the phases' total duration (omit it, or give that value).",
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
        "Fleets", "Failure forecasts per period, usage ingest with estimated rates, alert emails.",
        "`fleets create` {name, model_id (a saved parametric life model; item use is in its unit), period_label "
        "(days, weeks, months = 30.44 days, quarters, years, or any label), periods (horizon), default_rate, "
        "rate_source (manual | estimated), replace_failed, confidence, items [{name, current_use, rate?}], "
        "alert_rules [{kind, threshold, periods?, email, name?}]}; `fleets update` changes settings, adds or "
        "replaces items by name (`items`), removes them (`remove_items`) and replaces the rules; `get fleet`, "
        "`list fleet`, `fleets delete`. GET /api/v1/fleets/{id}/forecast gives expected failures per period with an "
        "interval on each period's count (Poisson-binomial: exact, or its refined normal approximation for large "
        "fleets; Poisson with replacement), the total, and per_item rows with rate_used and rate_basis "
        "(?per_item=false leaves them out). Without replacement each item's chance uses its survival so far; with "
        "replace_failed the renewal equation (exponential lives: rate × λ exactly). POST "
        "/api/ingest/fleets/{id}/usage takes {readings: [{name or id, current_use, rate?, read_at?}]} or CSV: all "
        "or nothing (an unknown or repeated item, a negative use or a non-ISO 8601 time refuses it naming the "
        "row); a reading at least a day after the last baseline updates the item's estimated rate (use per "
        "period, EWMA 0.3), a lower one restarts the baseline, an older one is ignored; then the forecast is "
        "recomputed and the alert rules checked: expected_failures_next_period, expected_failures_horizon or "
        "item_failure_probability (any item's chance of failing within `periods`) above its threshold sends one "
        "email per crossing (again only after it clears), through the SMTP server in BATHTUB_SMTP_URL from a "
        "durable outbox, so a mail problem never fails the ingest.",
        ("fleets/create", "fleets/update", "get/fleet", "list/fleet", "GET /api/v1/fleets/{fleet_id}/forecast",
         "POST /api/ingest/fleets/{fleet_id}/usage"),
    ),
    "uploads": Page(
        "Uploads and photos", "Send files through single-use links, look inside, import; attach cleaned photos.",
        "1) `uploads create` {purpose: dataset_import | excel_import | rbd_import | outage_log, filename} answers "
        "`url`, `url_fallback` (the same link on the main host) and a ready `curl_fallback`. 2) PUT (or POST) the "
        "raw bytes to the url within 15 minutes, with no Authorization header: the link's `t` is its one-time "
        "credential. At most 30 MiB (31,457,280 bytes; 413 past it, and the link stays usable); a second send is "
        "409, an expired link 410, a wrong token 404, too many wrong tokens 429. The answer has size, sha256 and the "
        "format read from the content (xlsx, xls, ods, csv, json, images). 3) `get upload` shows what the file "
        "holds: sheets with their header row, columns, row counts, sample rows and `looks_like` guesses "
        "(life_data, interval_data, outage_log, fleet_items, diagram_block_list, recurrent_events) with the "
        "column mapping each implies. 4) Import: `datasets upload` {upload_id, name, sheet?, columns?: {new name: "
        "sheet column}} makes one dataset; `uploads import_excel` {upload_id, sheets: [{sheet, name, columns?}]} "
        "makes several in one step (any refusal: none made); `uploads import_rbd` {upload_id, name?, unit?} "
        "turns a diagram file into diagrams: this service's JSON, a block-list sheet (id, type, after, life, mtbf, "
        "shape, mttr, ...) or an AvailSim4 system workbook (AND, XooY, XRC, XTF and exp/normal/weibull laws "
        "mapped; what has no counterpart listed in `unmapped`); `rbd upload_outage_log` {id (rbd), upload_id, "
        "columns: {asset, start, end or duration, reason?, planned?}, apply?} fits each block's time between "
        "failures and time to repair from an outage log (assets by node id or label; planned outages left out; "
        "ongoing ones censored), with intervals, and proposes the block models or, with apply true, sets them in "
        "one edit. The bytes are deleted once imported, and after an "
        "hour in any case; uploads are private and never served back. Photos: POST /api/v1/maintenance/photos?"
        "target_id=<your item id, or rbd id/node id>&caption=... with the image (JPEG, PNG, WebP or HEIC, at most "
        "20 MiB) or multipart `file`; it is turned upright and re-encoded from its pixels, so no EXIF, GPS, XMP or "
        "text chunks remain (HEIC is kept as JPEG). `list photo`, `get photo` and GET "
        "/api/v1/maintenance/photos/{id} read them back, owner only.",
        ("uploads/create", "PUT /api/uploads/{upload_id}", "get/upload", "datasets/upload", "uploads/import_excel",
         "uploads/import_rbd", "rbd/upload_outage_log", "POST /api/v1/maintenance/photos", "list/photo"),
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
