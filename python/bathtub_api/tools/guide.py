"""guide: short how-tos. Each topic names the actions it concerns, and the service's registry
is refused at build time if a topic names an action it does not have (`check_pages`), so the
guide cannot describe what is not there."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, get_args

from pydantic import Field

from bathtub.regression import records as regression
from bathtub_api.config import Config
from bathtub_api.glossary import field_texts
from bathtub_api.openapi import definitions
from bathtub_api.plans import PlanLimits, all_limits
from bathtub_api.registry import Ctx, Registry
from bathtub_api.tools.common import Strict

Topic = Literal[
    "life_data", "regression", "units", "accelerated", "test_planning", "repairable", "rbds", "rbd_analysis",
    "strategy", "fleets", "uploads", "rcm", "sharing", "workspace", "plans",
]


@dataclass(frozen=True)
class Page:
    title: str
    summary: str
    text: str
    actions: tuple[str, ...]  # "tool/action" (tool protocol) or "METHOD /path" (REST-only routes)


# One line per regression model id, shown only when the library declares the id (regression.MODELS):
# the guide lists what POST /api/v1/fit accepts here and nothing else.
REGRESSION_MODELS = {
    "cox": "semi-parametric proportional hazards (hazard ratios, no baseline shape assumed; the Breslow baseline "
           "is a step function, so no hazard or density curve): the first model for covariate effects",
    "weibull_ph": "proportional hazards on a Weibull baseline (hazard ratios; alpha and beta at every covariate "
                  "0): smooth curves and extrapolation when the hazard only rises or only falls",
    "lognormal_aft": "accelerated failure time, lognormal (time ratios): a covariate stretches or shrinks the "
                     "life; hazards that rise then fall",
    "loglogistic_aft": "accelerated failure time, log-logistic (time ratios): as lognormal_aft with heavier tails",
    "royston_parmar": "proportional hazards with a natural cubic spline in log t for the log cumulative hazard "
                      "(Royston-Parmar): when a Weibull baseline is too rigid but smooth hazard curves are "
                      "wanted; knots at centiles of the log failure times, their number chosen by AIC over 1 to 4 "
                      "interior knots unless `options.knots` gives a count (0 is exactly weibull_ph) or the knot "
                      "times; the knots, the choice and the spline coefficients gamma0.. are in `spline`",
    "proportional_odds": "log-logistic proportional odds (odds ratios: a covariate multiplies the odds of having "
                         "failed by any age by the same factor, so its hazard ratio fades to 1 with age): effects "
                         "that wear off; `options.knots` (a count or knot times) gives it a spline baseline on "
                         "the log-odds scale; with no knots it is loglogistic_aft read as odds (coef = "
                         "-coef_AFT/sigma)",
    "additive_hazards": "Lin-Ying additive hazards: each covariate adds a constant to the hazard rate (an excess "
                        "rate per unit time, exp_coef null): absolute rather than relative effects",
    "buckley_james": "semi-parametric accelerated failure time (Buckley-James): time ratios without choosing a "
                     "distribution",
    "weibull_frailty": "Weibull PH with a gamma frailty shared by the units of one `group` (marginal likelihood): "
                       "units of one site, batch or system that fail together",
    "cox_frailty": "Cox with a gamma frailty per `group` (penalised, as R's coxph(... + frailty())): clustered "
                   "units without a baseline shape",
}
_GROUP = ("; `group` (a column of cluster labels) for the shared-frailty models" if "group" in regression.ROLES
          else "")
REGRESSION_TEXT = (
    "Fit with POST /api/v1/fit on a saved dataset: `distribution` a model id below (or `best`), `mapping` roles "
    "`x` time and `c` censoring code (0 or F failure, 1 or S right-censored); for time-varying covariates one row "
    "per interval with `i` (item) and `xl`/`xr` start/stop (or `i` with successive stop times in `x`), `c` saying "
    f"whether the interval ends in a failure; rows that start after 0 enter late (delayed entry){_GROUP}. "
    "Covariates: `covariates` (column names; a text column becomes treatment-coded dummies `col[T.level]` against "
    "its first level in sorted order, or the level in `options.reference`) or a `formula` right-hand side "
    "(`age + C(site) + age:load`, `np.log(load)`; transforms that need the whole column, such as centring or "
    "splines, are refused because a unit's row could not be rebuilt). `cox_options` (cox; `tie_method` also "
    "cox_frailty): `tie_method` efron (default), breslow, exact or kalbfleisch-prentice; `strata_column` (a "
    "baseline per level, no coefficient); `cluster_column` (robust standard errors clustered by it). `options`: "
    "`confidence` (0.95), `ph_transform` (km, identity, log, rank), `knots`, `bootstrap` (buckley_james). Models: "
    + "; ".join(f"`{k}` {v}" for k, v in REGRESSION_MODELS.items() if k in regression.MODELS)
    + ". `best` fits every model with a full likelihood of the times ("
    + ", ".join(f"`{k}`" for k in regression.RANKED)
    + ") and keeps the lowest AIC, listing them in `ranking` (AIC, log-likelihood, parameter count); `cox` and "
    "`additive_hazards` are not ranked: a partial likelihood or estimating equations have no AIC comparable "
    "with a full likelihood, so fit them by name and compare them by validation. "
    "Reading the record: each of `coefficients` has coef, exp_coef and `exp_coef_kind` (a hazard ratio above 1 "
    "fails sooner; a time ratio above 1 lives longer; an odds ratio above 1 is more likely to have failed by "
    "any age), se, robust_se (Cox), z, p and ci/exp_ci at `confidence`; `params` (parametric models) the baseline at "
    "every covariate 0. `gof`: the log-likelihood (partial for Cox), AIC, BIC and the likelihood-ratio, Wald (and for "
    "Cox score) tests that all coefficients are 0; compare AICs only between models fitted to the same rows. "
    "`validation`, in-sample: the concordance (share of comparable pairs the model orders right: 0.5 is chance, "
    "0.7 good, 0.8 strong, with a rating and a reading), the integrated Brier score against the covariate-free "
    "Kaplan-Meier (lower is better; `improvement` is the share saved) and time-dependent AUC at three times; "
    "with start/stop rows only the concordance; large data on a fixed-seed sample of units (`sampled`). "
    "`diagnostics.ph_test` (PH models; weibull_ph and royston_parmar are tested on the Cox fit of the same "
    "design): the scaled-Schoenfeld test of each covariate and overall, as R's cox.zph, with a verdict and a "
    "reading; 'violated' means an effect drifts with time: stratify on that covariate, split the time axis, or "
    "use an AFT or proportional-odds model. Cox also gives `diagnostics.robust` (sandwich SEs and their Wald "
    "test, clustered by `cluster_column`, else by the item, else by row), `ties` and `strata` (`column`, "
    "`levels` with each level's rows `n` and `events`, and `without_events`: the levels with no failure, "
    "fitted as R's coxph does: they add nothing to the partial likelihood and their baseline is 0, so a unit "
    "there has reliability 1 at every age, with a `reading` saying so). Evaluate one "
    "unit with POST /api/v1/models/{id}/reliability and `covariates` {column: value} (and the stratum for a "
    "stratified Cox): with `t` its reliability, failure, hazard, cumulative hazard and density at t, without "
    "it whole curves; a Cox or additive model's curves are steps with no hazard or density. "
    "Shared frailty (`weibull_frailty`, `cox_frailty`, mapping role `group`): units of one group (a plant, a "
    "batch) share an unobserved gamma multiplier of their hazard (mean 1, variance theta); `weibull_frailty` "
    "integrates it out of the likelihood in closed form, `cox_frailty` fits R's coxph(... + frailty(group)) "
    "(penalised partial likelihood, theta maximising R's integrated likelihood; se and R's se2; efron or breslow "
    "ties; start/stop rows allowed). Their coefficients are hazard ratios given the frailty; the `frailty` block "
    "gives theta, its likelihood-ratio test against no frailty (p halved: theta = 0 is a boundary) and, for "
    "cox_frailty, each group's estimated frailty; their reliability is the population-averaged (marginal) "
    "survival, with the frailty-1 unit's curve as `conditional`. `group` on any other model is refused. "
    "`buckley_james`: least squares on log time with censored times replaced by their Kaplan-Meier conditional "
    "expectation, iterated to a fixed point (or averaged over the cycle the iteration can fall into, said in "
    "`diagnostics.convergence`); exp_coef is a time ratio, se Buckley-James's approximate variance, and "
    "`options.bootstrap` (20..2000 resamples, fixed seed) adds bootstrap standard errors as robust_se; it has no "
    "likelihood, so no AIC."
)

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
        "Regression on covariates (Cox, parametric PH and AFT, spline and proportional-odds models): see the "
        "`regression` topic. "
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
    "regression": Page(
        "Regression", "Life models on covariates: Cox, parametric PH and AFT, spline and odds models; reading "
        "their coefficients, fit, validation and PH test.",
        REGRESSION_TEXT,
        ("POST /api/v1/fit", "get/model", "GET /api/v1/models/{model_id}",
         "POST /api/v1/models/{model_id}/reliability"),
    ),
    "units": Page(
        "Units", "Time units travel with data, models and diagrams; nothing is rescaled silently.",
        "Every model, dataset fit and diagram carries a `unit` label (hours, cycles, km, ...). Parameters are in "
        "that unit: a Weibull alpha of 1000 with unit hours is a characteristic life of 1000 h. Changing a "
        "diagram's unit with `rbd edit` op `set` relabels it without rescaling parameters. Where units are "
        "compared (a saved model as a block's life, a subsystem, a strategy calculation on a saved model) common "
        "spellings are one unit, in any case: h/hr/hrs/hour/hours, min/minutes, s/sec/seconds, d/day/days, "
        "wk/week/weeks, mo/month/months, y/yr/year/years, cycle/cycles, km/kilometres, mi/miles; other units "
        "must match as written (case aside). Discounting (`discount_rate`) needs a calendar unit (seconds to "
        "years). POST /api/import/models takes a Bathtub id in any case or another tool's name with that "
        "tool's parameters: reliability's Weibull_2P/3P, Lognormal_2P/3P, Exponential_1P/2P (Lambda), "
        "Normal_2P, Gamma_2P/3P (alpha the scale, beta the shape), Loglogistic_2P/3P, Gumbel_2P, Beta_2P, "
        "Weibull_ZI/DS/Mixture, and lifelines' WeibullFitter (lambda_, rho_), ExponentialFitter (lambda_, a "
        "mean life), LogNormalFitter, LogLogisticFitter; a 3P name carries the location `gamma` (fitted as an "
        "offset when importing data).",
        ("POST /api/v1/fit", "rbd/edit", "POST /api/import/models"),
    ),
    "accelerated": Page(
        "Accelerated life tests", "Life-stress models fitted across stress levels, with use-level life and "
        "bootstrap bounds.",
        "Upload the test as a dataset with a time column, a censoring column (0/F failure, 1/S right-censored) "
        "and a stress column (a second for two-stress models), then POST /api/v1/fit with `distribution` "
        "life_relationship and `mapping` {x, c, stress, stress2}. Lives: weibull (L = alpha), lognormal "
        "(L = median), exponential (L = mean). Relationships: arrhenius L = A exp(B/T) (T in kelvin; the record "
        "adds the activation energy B*k in eV), eyring L = (1/T) exp(-(A - B/T)), power (inverse power law) "
        "L = A S^-n, exponential L = A exp(B S); two stresses: dual_exponential (temperature-humidity) "
        "L = A exp(B/T + C/H), peck L = A exp(B/T) H^-n, temperature_nonthermal L = A exp(B/T) U^-n, dual_power "
        "L = A S1^-m S2^-n. E.g. weibull_arrhenius, lognormal_power, exponential_eyring, weibull_peck. The fit "
        "is maximum likelihood with right censoring at each level (a level may be all censored; some failure "
        "is needed, and at least two stress levels); `options` {confidence, use_stress, use_stress2, b_lives}. "
        "The model (kind alt; `get model` or GET /api/v1/models/{id}) has the parameters with Fisher bounds, "
        "each level's fitted life, the stress-life plot's data (`stress_life`: points per level, life and B10 "
        "lines with bounds) and, with a use stress, the use-level distribution, B-lives, MTTF and the "
        "acceleration factor of each level. POST /api/v1/models/{id}/reliability with `stress` (and `stress2`) "
        "evaluates the life at that use stress (`t` for one time, else whole curves). Bootstrap bounds: "
        "`alt bootstrap` {model_id, replicates (default 2000), kind parametric (simulate from the fit, each unit "
        "keeping its censoring time) or nonparametric (resample units within each level), seed, use_stress, "
        "confidence, b_lives} queues a job (poll `get job`) whose percentile and BCa intervals on the "
        "parameters, use-level life, B-lives and MTTF are stored on the model as `bootstrap`; the same seed "
        "gives the same numbers on any machine.",
        ("POST /api/v1/fit", "alt/bootstrap"),
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
        "Repairable systems", "Recurrent-event models: growth, ROCOF, MTBF, trend tests, MCF, repair effectiveness.",
        "Upload one row per failure (`datasets create`), then `fit recurrent` with `dataset_id`, `model` and "
        "`mapping` (or POST /api/v1/fit with the model id in `distribution`). Models: `crow_amsaa` (= `power_law`, "
        "power-law NHPP by maximum likelihood), `loglinear` (Cox-Lewis), `hpp`, `duane` (least-squares plot fit), "
        "`kijima1` / `kijima2` (generalised renewal with a Weibull baseline; q = 0 as good as new, q = 1 as bad as "
        "old, the engine's repair-quality q) and `mcf` (Nelson's non-parametric mean cumulative function). "
        "Mapping roles: `t` event time (system age), `system` (omit for one system), `end` each system's end of "
        "observation (time-terminated; a row with an empty `t` records a system without failures; omit `end` for "
        "failure-terminated data, each system ending at its last failure), `cause` (adds `by_cause`, one model per "
        "cause), `group` (mcf only: two populations compared, difference with bounds). Grouped data: `interval_end` "
        "and `count` (failures per interval from 0), with `options.systems` systems observed together. Options: "
        "`termination` (time or failure), `covariates` (columns constant per system: proportional-intensity "
        "`covariate_effects`, power law only), `confidence` (default 0.95). A model of kind `recurrent` (read it "
        "with `get model` or GET /api/v1/models/{id}) gives the parameters with intervals (beta's exact "
        "chi-squared interval and the MIL-HDBK-189C unbiased beta), the growth verdict on beta's interval, ROCOF "
        "and instantaneous and cumulative MTBF at the end of observation with bounds (Crow's exact ones where they "
        "exist, else Fisher), the demonstrated MTBF's one-sided lower bound, trend tests (Laplace, MIL-HDBK-189, "
        "Lewis-Robinson, reverse arrangements), Cramér-von Mises with Crow's critical values (chi-squared for "
        "grouped data), `systems_vs_model`, `next_failure_by_system` (median and 90% prediction interval), and for "
        "kijima models `repair_effectiveness` (q with its interval) and `repair_test` (renewal and minimal repair "
        "against the fit). A saved crow_amsaa, kijima1/kijima2 or hpp model can be a block's life in `rbd create` "
        "(`saved_model_id`): Weibull life with the model's Kijima repair quality.",
        ("fit/recurrent", "POST /api/v1/fit", "get/model", "GET /api/v1/models/{model_id}"),
    ),
    "rbds": Page(
        "Reliability block diagrams", "Build diagrams from nodes and edges or compact stages.",
        "`rbd create` takes `name`, `unit`, `repairable` and either nodes (input, output, component, series, "
        "parallel, knode, standby, subsystem) with edges, or compact `stages` (components in parallel, stages in "
        "series, `k_of_n`, `common_cause_beta`), and any diagram setting an edit `set` takes (`ccf`, "
        "`maintenance_groups`, `costs`, `production`, `phases`, `network`, `safety_function`, `target_sil`, "
        "`repair_crews`). Each block has a model: inline `distribution_id` + `params`, "
        "`mean` with `given` shape (stored as params), a mixture with weights, or a `saved_model_id` (a saved "
        "parametric model in the diagram's unit). Repairable diagrams take component, standby and knode blocks, "
        "each with a `repair` model or `instant_repair`. A `standby` group runs `k` units (default 1) with idle "
        "spares that take over when a running unit fails: identical ones (`model`, `repair`, `spares`, `cold` or "
        "`dormancy`), or non-identical `units` in order of preference, each {model, repair (repairable "
        "diagrams), dormancy?, capacity?} (a large pump backed by a smaller one): the first idle unit in the "
        "list takes over, a repaired unit goes back on the shelf while k others run (with `switch_back`, "
        "repairable, it takes over from a less preferred running unit, which goes back on the shelf keeping its "
        "age), and a running unit carries its own capacity (every unit one, or none). Refusals name the node "
        "and field. `rbd edit` applies a list of operations atomically (optionally against a `revision`); "
        "`get rbd` returns the compact node form with placeholder blocks marked; `list rbd` lists them.",
        ("rbd/create", "rbd/edit", "get/rbd"),
    ),
    "rbd_analysis": Page(
        "Diagram analysis", "Availability simulations as jobs; runs with curves; what to improve; interval search; "
        "cheapest design.",
        "`rbd_analysis analyze` with `id` and `horizon` (repairable) or `mission_time` (non-repairable), "
        "`replications` or `precision` (relative 95% half-width of mean unavailability), `seed`, and "
        "`initial_states` {block id: BlockState} to start from the plant as it is now: `age` (running, this old "
        "since new or last renewed: its first life is the residual life at that age), `failed` (non-repairable "
        "runs) or `down` with `since` (repairable runs: in repair for that long already, the rest of the repair "
        "drawn given that); for component, series and parallel blocks (`outer/inner` inside subsystems) without "
        "preventive, inspection or repair_quality; a run with states is simulated. A "
        "non-repairable diagram that reduces to series, parallel and k-of-n parts (bridges included) answers at "
        "once in closed form; otherwise it quotes the run time (CPU-seconds on one core) and queues a job (poll "
        "`get job`: `progress` 0..1 and `eta_s` while it runs; `jobs cancel` stops it within about a second) "
        "that stores an `rbd_run`; a run quoted over the per-job limit (10 CPU-minutes unless the operator set "
        "another) is refused with 422 naming `replications` (or `max_replications`) and `horizon` "
        "(`mission_time`) with the quote. An `rbd_run` holds "
        "figures with 95% intervals, per-block figures, inputs, engine versions, precision reached "
        "and the quote. `get rbd_run` with `include_curve` adds A(t) or R(t) with its band and says whether the "
        "diagram changed since; the same inputs answer from the stored run unless `recompute: true`. "
        "The simulation honours preventive maintenance, proof tests (PFD and SIL of a `safety_function`), "
        "repair quality, common-cause groups, maintenance groups, costs with discounting, phases, capacity and "
        "production, initial block states, non-identical standby units and network mode, and joint units (a "
        "component whose model is a "
        "random-effects degradation model's `saved_model_id` with `joint_unit` {age, readings}: the block's life "
        "is that running unit's remaining life given its readings, conditioned exactly on its age and handed to "
        "the engine as a table of its distribution function; non-repairable diagrams, one unit, no spares, "
        "state or preventive replacement). "
        "A block can live on a saved regression model (cox, weibull_ph, lognormal_aft, loglogistic_aft): "
        "`model` {saved_model_id, covariates: {name: value}} gives the model's life at those values (Weibull PH "
        "with its scale moved by the hazard ratio, the AFT family with its location moved, Cox the Breslow step "
        "survival of the unit's stratum scaled by exp(xb), simulated); on a non-repairable component, series or "
        "parallel block `covariate_schedules` {name: {expression} or {table, period?}} make a covariate follow "
        "the block's age t: an expression changes in steps (t only inside floor, ceil, // or a comparison, "
        "moving one way, e.g. `20 + 10*(t >= 500)`, `min(floor(t/8760), 5)`), a table holds each value from its "
        "start t (first 0; levels of a categorical covariate) and repeats every `period`. A change at age u "
        "applies to failures after u (the fits' (start, stop] convention). The engine samples the block's life "
        "by inverting its cumulative hazard Σ H0(segment)·exp(x_k b) (PH) or its clock Σ exp(-x_k γ)·segment "
        "(AFT). Every covariate needs a value (fixed or scheduled; a stratum is fixed); numeric values outside "
        "the fitted range are clipped to it and the run's `warnings` say so; a level the fit never saw, an "
        "additive-hazards model or a bad expression is refused naming the field. "
        "Rare events: `method: failure_biasing` (repairable diagrams whose every block has an exponential life "
        "and an exponential repair, with the diagram's repair crews) estimates the steady-state unavailability "
        "of a highly available system by regenerative simulation with balanced failure biasing (importance "
        "sampling, unbiased: cycles from the all-up state, failures made likely and each cycle weighted by its "
        "likelihood ratio), with its 95% delta-method interval, failure frequency, MTBF and mean down time; no "
        "horizon, grid or curve; `replications` counts cycle pairs (default 10000), or give `precision`. At an "
        "unavailability near 1e-6 it reaches a given precision far sooner than plain simulation "
        "(bench/rare_events.py). Proof tests, planned or imperfect repair, instant repair, initial states, "
        "common-cause or maintenance groups, costs, capacity or a safety function are refused with 422 naming "
        "`method` and the rule. "
        "`rbd create` and `rbd edit` run the analysis's own checks, so anything an analysis would refuse is "
        "refused there, with the same detail, and never stored. "
        "Failures are counted apart from planned events: `expected_failures`, `mtbf` and `mttr` "
        "(system and per block) are about failures only, and `expected_preventive_replacements`, "
        "`expected_proof_tests`, `expected_planned_outages` and planned vs unplanned downtime have their own "
        "fields; an `instant_repair` block's failures count (one that takes the system down is a system failure "
        "of no length). PFD(t) is read just before each proof test, so `pfd_max` is the saw-tooth peak. A "
        "phased mission's `mission_time` is the phases' total duration (omit it, or give that value). When the "
        "operator sets BATHTUB_DASK_SCHEDULER, simulation jobs run in chunks on that dask cluster and merge to "
        "exactly the numbers a local run gives at the same seed (progress counts finished chunks; cancel stops "
        "them). "
        "Decisions, each a job whose result (in `get job`) is the answer, not an `rbd_run`: every candidate "
        "design runs in one engine pass on common random numbers (each unit draws its lives and repairs from "
        "its own stream, so a change to one block leaves the others' draws alone) and differences are paired per "
        "replication, with `variance_ratio` (independent runs' variance over the paired one). "
        "`rbd_analysis what_to_improve` {id, horizon | mission_time, objective?, blocks?, replications (100+, "
        "default 2000), seed, initial_states?}: what-if changes for `blocks` (default all; at most 199 changes a run), "
        "importance for every block; `objective` availability, pfd_avg (default for a safety_function) or cost_rate "
        "(repairable), reliability (non-repairable, one phase); per block Birnbaum (as time average, or at the "
        "mission end), criticality and Fussell-Vesely (some failed minimal cut set holds the block, given the "
        "system is down) with standard errors, RAW, RRW, share of system downtime and of cost (or of mission "
        "failures caused), and `what_if`: the objective if the block's MTBF doubled (every life stretched by "
        "2) or its MTTR halved, as `difference` from the base with its 95% `interval`, and `gain` (the "
        "improvement, signed); blocks ranked by their best gain, `top` the three best changes in words. "
        "`rbd_analysis interval_search` {id, blocks or group (a maintenance group: all its blocks), knob "
        "preventive | proof_test, low, high, points (2-200, default 21), horizon, objective cost_rate (default) "
        "| availability | pfd_avg, target? or target_sil? (1-4 on a safety_function: the pfd_avg target at the "
        "upper bound of that SIL's band, SIL n while PFDavg < 10^-n), replications, seed, initial_states?} puts "
        "every named block (each must already have that policy or proof test) on one candidate interval at a "
        "time: `curve` (objective with its 95% interval, and cost rate when the diagram has costs); without "
        "`target`, `optimum` the best candidate with `indistinguishable_from` (candidates not significantly "
        "worse), `range` (that widened by one grid step: nothing between candidates is simulated) and "
        "`estimate` (parabola vertex); with `target` (availability at least, pfd_avg at most), the candidate of "
        "least cost rate meeting it (no costs: the longest), and `interval_at_target` where the mean curve "
        "crosses it with the range where its 95% band does. "
        "`rbd_analysis cheapest_design` {id, options: {block id: [option, ...]}, target {figure, value}, "
        "horizon | mission_time, top (1-20, default 5), replications, seed}: each named block takes one of its "
        "options: active redundancy {cost, units n, required k} (n copies `<id>#1`..`<id>#n` of the block, every "
        "field kept, feeding a k-of-n gate with the block's id; n = 1 is the block on other models), or standby "
        "{cost, spares, required (running), dormancy 0 cold .. 1 hot}; each may replace `model`, `repair` (inline "
        "or a saved model) and `inspection` (a proof test, active component units). List the block as it is, at "
        "its cost, if keeping it is an option. `target` figure availability (time average over the horizon, at "
        "least value), pfd_avg (below value) or sil (value 1-4: PFDavg below 10^-(value-1)) for a repairable "
        "diagram (pfd_avg, sil: a safety_function), reliability (at the mission time) for a non-repairable one. "
        "`cost` of a design: the sum of its chosen options' `cost` (capital, as installed); blocks without "
        "options and the diagram's running costs are not counted (with costs on the diagram each design "
        "reports its simulated `running_cost` beside). `method`: `exact` when every design has a closed form "
        "(independent blocks in series, parallel, k-of-n and bridges; repairable: exponential lives and "
        "repairs, unlimited crews, proof tests of full coverage and no duration, standby groups as Markov "
        "chains; non-repairable: any parametric life, exponential or hot standby) and the space fits the "
        "budget: every design evaluated in closed form, those missing the target pruned, the `top` cheapest "
        "meeting it simulated; `simulated` when there is no closed form (`closed_form.reason` says why) and "
        "at most 200 designs: all run on common random numbers; `heuristic` otherwise (greedy upgrade by gain "
        "per extra cost until the target is met, then each block lowered while it stays met: it meets the "
        "target but need not be the cheapest). `space` counts designs, enumerated, pruned and simulated; "
        "`designs` (the winner first) each give `cost`, `choices`, `closed_form` (where there is one), the "
        "simulated `value` with its 95% `interval`, `meets_target`, `meets_target_with_confidence` (95% "
        "one-sided), `versus_winner` (paired difference) and `running_cost`. A copy added to one block "
        "renumbers the units after it, so those draw from other streams than without it (still valid, less "
        "correlated). Refusals name the option (`options.pump[1].required`: ...); a space whose search "
        "would simulate more designs than the per-job limit allows is refused naming `options`. "
        "All three quote their cost (designs x one run; the cheapest-design search the most designs it may "
        "simulate, on its largest design) and refuse over the per-job limit.",
        ("rbd_analysis/analyze", "rbd_analysis/what_to_improve", "rbd_analysis/interval_search",
         "rbd_analysis/cheapest_design", "get/rbd_run", "get/job", "jobs/cancel"),
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
        "Fleets", "Failure forecasts per period, usage ingest with estimated rates, alert emails, per-item "
                  "covariates, and tracked fleets with each item's remaining life.",
        "FLEETS. `fleets create` {name, model_id, period_label (days, weeks, months = 30.44 days, quarters, years, "
        "or any other label, shown as is and giving no estimated rates), periods (horizon, default 12), "
        "default_rate (use per period), rate_source (manual, the default: each item's manual rate, else the fleet "
        "default; estimated: the rate estimated from meter readings first, then the manual rate, then the "
        "default), replace_failed (false: failed items leave; true: replaced by new ones), confidence of the count "
        "intervals (default 0.9), items [{name, current_use, rate?, covariates?}], default_covariates?, "
        "alert_rules [{kind, threshold, periods?, email, name?}]}. Item use is in the model's unit. `model_id` is a "
        "saved parametric life model, or a regression model (cox, weibull_ph, lognormal_aft, loglogistic_aft) "
        "whose covariates give each item its own curve: every covariate of the model must be in the item's "
        "`covariates` or in `default_covariates` (a missing or unknown one is a 422 naming the item and "
        "covariate); a Cox baseline ends at its last failure time and the forecast's `note` says when items are "
        "used past it. `fleets update` changes settings, adds or replaces items by name (`items`), removes them "
        "(`remove_items`) and replaces the rules; `get fleet` (a page of items and the forecast), `list fleet`, "
        "`fleets delete`. GET /api/v1/fleets/{id}/forecast answers {fleet, forecast: {status, method, periods, "
        "period_label, expected_failures per period, interval {lower, upper, confidence, method}, total_expected, "
        "renewal}, per_item} with per_item rows {name, current_use, rate_used, rate_basis, expected_failures, "
        "failure_probability_next_period} (?per_item=false leaves them out); an item with no rate at all is left "
        "out and counted in items_without_rate. Without replacement each item's chance in a period is conditioned "
        "on its survival so far and the count's interval is Poisson-binomial (exact, or its refined normal "
        "approximation for large fleets); with replace_failed the renewal equation (exponential lives: rate × λ "
        "exactly) and a Poisson interval. "
        "USAGE INGEST. POST /api/ingest/fleets/{id}/usage takes {readings: [{name or id, current_use, rate?, "
        "read_at?}]} (read_at ISO 8601, no offset = UTC, default now) or CSV with those columns, and answers "
        "{fleet, updated_items, forecast, alerts_fired}. All or nothing: an unknown or repeated item, a negative "
        "use or a non-ISO 8601 time refuses it naming the row. A reading at least a day after the item's baseline "
        "updates its estimated rate (use delta over elapsed periods, EWMA factor 0.3); a lower one restarts the "
        "baseline without an estimate; an older one is ignored. With an Idempotency-Key header a retry replays "
        "the first answer. "
        "ALERTS. After each usage ingest the rules are checked against the recomputed forecast: "
        "expected_failures_next_period, expected_failures_horizon, or item_failure_probability (any item's chance "
        "of failing within `periods`) above `threshold` sends one email to the rule's address per crossing (again "
        "only after the figure has cleared), through the SMTP server in BATHTUB_SMTP_URL from a durable outbox "
        "with retries, so a mail problem never fails the ingest. "
        "TRACKED FLEETS. `tracked_fleets create` {name, model_id (a saved degradation model: random_effects, the "
        "joint condition-based model, or pseudo_failure on a linear or exponential path), probability (of each "
        "item's interval, default 0.9), items [{name}]}; `tracked_fleets update` renames, rebinds, changes the "
        "probability (either re-predicts every item), adds items or removes them with their measurements; `get "
        "tracked_fleet` (or GET /api/v1/tracked_fleets/{id}), `list tracked_fleet`, `tracked_fleets delete`. POST "
        "/api/ingest/tracking/{id}/measurements takes {measurements: [{item, time, value}]} or CSV item,time,value "
        "(time in the model's unit) and answers {updated, appended, items}: all or nothing, an unknown item, a "
        "non-finite time or value, a time not after the item's previous measurement or a repeated (item, time) "
        "refuses it naming the row; Idempotency-Key as above. Each touched item's remaining_life is re-predicted "
        "from all its measurements, counted from its last measurement and conditioned on survival to it: "
        "{status, median, interval, probability, method, basis, as_of}. basis random_effects: the model's unit "
        "effects updated by the item's measurements; own_line (pseudo_failure): the item's own least-squares path "
        "with the model's pooled noise, median its crossing and interval Fieller's; population: with fewer than "
        "two measurement times, the model's fitted life distribution conditioned on the age. status "
        "past_threshold when the item's path has crossed. Tracked fleets have no alert rules.",
        ("fleets/create", "fleets/update", "get/fleet", "list/fleet", "GET /api/v1/fleets/{fleet_id}/forecast",
         "POST /api/ingest/fleets/{fleet_id}/usage", "tracked_fleets/create", "tracked_fleets/update",
         "get/tracked_fleet", "list/tracked_fleet", "POST /api/ingest/tracking/{fleet_id}/measurements"),
    ),
    "uploads": Page(
        "Uploads and photos", "Send files through single-use links, look inside, import; attach cleaned photos.",
        "1) `uploads create` {purpose: dataset_import | excel_import | rbd_import | outage_log, filename} answers "
        "`url`, `url_fallback` (the same link on the main host) and a ready `curl_fallback`. 2) PUT (or POST) the "
        "raw bytes to the url within 15 minutes, with no Authorization header: the link's `t` is its one-time "
        "credential. At most 30 MiB (31,457,280 bytes; 413 past it, and the link stays usable); a second send is "
        "409, an expired link 410, a wrong token 404, too many wrong tokens 429. A send that does not get through "
        "(cut off, a full disk: 507, the service stopped mid-send) leaves the link usable: send again. "
        "The answer has size, sha256 and the "
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
        "text chunks remain (HEIC is kept as JPEG). A photo is kept at most 3840 pixels on its longest side "
        "(BATHTUB_PHOTO_MAX_EDGE; a larger JPEG is decoded straight at 1/2, 1/4 or 1/8 scale) and more than 64 "
        "megapixels is refused with 422 (BATHTUB_PHOTO_MAX_PIXELS). The service decodes 2 photos at once "
        "(BATHTUB_PHOTO_DECODES), which bounds its memory; another waits up to 30 s "
        "(BATHTUB_PHOTO_DECODE_WAIT_SECONDS) and is then refused with 503 and Retry-After: send it again then. "
        "`list photo`, `get photo` and GET /api/v1/maintenance/photos/{id} read them back, owner only; photos "
        "and uploads are stored owner-only (files 0600, folders 0700).",
        ("uploads/create", "PUT /api/uploads/{upload_id}", "get/upload", "datasets/upload", "uploads/import_excel",
         "uploads/import_rbd", "rbd/upload_outage_log", "POST /api/v1/maintenance/photos", "list/photo"),
    ),
    "rcm": Page(
        "RCM studies", "Functions, failures, modes and decisions as a worksheet.",
        "`rcm create` {name, functions} stores a worksheet: functions {text, standard?, failures} → functional "
        "failures {text, modes} → failure modes {text, effects?, consequence (safety, environmental, operational, "
        "non_operational, hidden)?, notes?, decision?}; texts at most 2000 characters. A decision has `outcome` "
        "(on_condition, fixed_interval, rtf, failure_finding, redesign, accept), `rtf_basis` (random or "
        "uneconomic; required for rtf), `task`, `interval` with its `interval_unit` (on_condition, fixed_interval "
        "and failure_finding only; these are listed as `scheduled_tasks`), `notes` and `evidence` {type, id} "
        "citing your saved item. Rules from SAE JA1011 practice: failure_finding only for hidden consequences; "
        "no rtf with safety or environmental consequences; a decision with evidence on a task needs its interval. "
        "Evidence by outcome: rtf random cites a `model` (a Weibull or gamma life model whose shape interval "
        "reaches 1 or below, an exponential model, or a recurrent model whose growth verdict is not "
        "deteriorating); fixed_interval cites an optimal_replacement `strategy_analysis` (saved with save: true; "
        "supported when replacement pays and the cost rate at the decision's interval is within 5% of the "
        "optimum); failure_finding cites a failure_finding analysis (the interval must not exceed the one meeting "
        "its availability target); rtf uneconomic cites an optimal_replacement analysis that finds replacement "
        "does not pay; on_condition cites a `degradation_model` (its P–F interval must be longer than the "
        "inspection interval). Intervals convert between hours, days, weeks, months (30.44 days) and years "
        "(365.25 days); other units (cycles, km) compare only with themselves, and an analysis saved without a "
        "`unit` cannot be compared (wrong_type says so): save it with its unit. `get rcm_study` {id} returns the "
        "worksheet in the form create takes, with node ids and, on each decision, a read-only `check` {state, "
        "reason}: supported, contradicted, stale (the item was refitted or re-saved after the decision was "
        "written; the check's `current` says what it shows now), missing (no such item of yours) or wrong_type. "
        "A study over 300 failure modes comes back as an outline (functions and failures with counts, modes' ids, "
        "texts and outcomes, and per function how many checks are in each state); `function_id` returns one "
        "function in full. `rcm update` {id, mode: merge, name?, functions?, remove?}: nodes with an id update "
        "that node (fields given replace, null clears an optional field such as a decision), nodes without one "
        "are added, and `remove` lists node ids deleted with everything under them. Sending a decision again "
        "re-takes its evidence's current version, which clears stale. `list rcm_study` lists your studies. A "
        "worksheet can be shared as a page or put in a report (topic sharing).",
        ("rcm/create", "rcm/update", "get/rcm_study", "list/rcm_study"),
    ),
    "sharing": Page(
        "Sharing", "Read-only share links and reports with plots, as pages and PDF.",
        "`sharing create_link` {kind, id, expires_in?} answers {id, url}: a read-only page of one of your items "
        "that anyone with the URL can open, with no token. Kinds: model (life: probability plot with the fitted "
        "line and its 95% band, reliability and hazard curves, parameters and B-lives), recurrent_model (the "
        "data's mean cumulative function against the model's expected events, parameters, MTBF, trend tests), "
        "dataset (columns and the first 50 rows), rbd (the diagram drawn, its blocks), rbd_run (A(t) or R(t) "
        "with its band, headline figures with intervals, each block's share of downtime), strategy_analysis (the "
        "cost-rate curve with the optimum marked), degradation_model (readings, fitted paths and the threshold; "
        "the crossing-time life), rcm_study (the worksheet with each decision's evidence check and the scheduled "
        "tasks), fleet (forecast failures per period with their interval) and report. `expires_in` is in "
        "seconds (60 to 366 days); without it a link lasts until revoked. The URL holds a 256-bit secret shown "
        "only in this answer: the service keeps just its SHA-256, so a lost URL cannot be read back; make a new "
        "link. A page shows its own item only, as the API reads it when the page is opened (a refit shows "
        "there at once); it has no script and fetches nothing from elsewhere, and prints cleanly. The same page "
        "as PDF is at the URL + `/pdf`. `sharing revoke_link` {id} and expiry make the page answer 404, the same "
        "page as for a mistyped or deleted item's link, so it tells nothing. `sharing list_links` {kind?, "
        "item_id?, offset, limit} lists your links with their state (live, revoked, expired), never their URLs. "
        "Reports: `reports create` {name, note?, items: [{kind, id, note?}]} (1 to 50 items; kinds model, "
        "recurrent_model, dataset, rbd, degradation_model, strategy_analysis, rcm_study, fleet; notes plain "
        "text up to 3000 characters, shown above the item's section exactly as typed: markup is not "
        "interpreted). Every item must be yours, or nothing is stored (404 naming `items[i].id`). `get report` "
        "and `list report` read them back; `reports delete` removes one (its items stay). The owner reads a "
        "report with a token at GET /api/v1/reports/{id}/html or /pdf (printed by headless Chromium; 503 where "
        "the service has none); `sharing create_link` with kind report shares it. A report shows each item as "
        "it is when opened; an item deleted since is shown as no longer existing.",
        ("sharing/create_link", "sharing/revoke_link", "sharing/list_links", "reports/create", "get/report",
         "list/report", "reports/delete", "GET /api/v1/reports/{report_id}/html",
         "GET /api/v1/reports/{report_id}/pdf"),
    ),
    "workspace": Page(
        "Workspace", "Your items, ids, jobs and tokens.",
        "Every item belongs to the token's user; ids are strings with a kind prefix (ds_, mdl_, rbd_, run_, "
        "job_). Another user's id answers 404. List items with the `list` tool, every kind alike (dataset, "
        "model, rbd, rbd_run, job, strategy_analysis, upload, photo, fleet): `offset` and `limit` (1-500) page "
        "through them oldest first and the answer's `next_offset` is the next page's offset (null on the last); "
        "`name_contains` (ignoring case; a job's name is its kind) and `created_after` (ISO 8601, UTC without a "
        "zone) filter; an item's `url` answers a GET. Read items with `get` (`get dataset` pages rows the same "
        "way). Long calculations answer with a `job_id`: poll `get job`; `jobs cancel` stops your queued or "
        "running job. The operator makes a user's first token with "
        "`bathtub token create --user NAME --scopes read,write`; then the user manages their own under Settings > "
        "API access (the page /settings/api-access): sign in with a token, see each token's name, scopes, "
        "creation and last use, create one choosing its scopes (shown once; never more scopes than the token "
        "signed in with), revoke one. Signing in (POST /api/v1/session with {token}) sets a session cookie "
        "accepted wherever the token is, with its scopes; a request carried by the cookie that changes anything "
        "must come from this service's pages (its Origin, else 403); DELETE /api/v1/session signs out, and "
        "revoking the token ends its sessions. A `read` token reads and calculates; anything "
        "that stores (create, edit, fit, ingest, analyze, a calculator's `save: true`) needs `write` (403 naming "
        "the scope).",
        ("list/dataset", "list/job", "get/dataset", "get/job", "POST /api/v1/session", "DELETE /api/v1/session"),
    ),
    "plans": Page(
        "Plans and limits", "What the limits are and what to do when one stops a call.",
        "Every user is on a plan: `free` (every new user) or `pro`, which the operator sets with "
        "`bathtub user plan USER free|pro`. A plan limits stored items (everything you keep: datasets, models, "
        "diagrams, runs, analyses, fleets, studies, photos; uploads waiting for import do not count), "
        "replications per job (a simulation's, or a bootstrap's resamples), CPU-seconds per job (a simulation's "
        "quote on one core, shown in the analysis answer's `quote`), queued or running jobs at once, and whether "
        "pro-only tools may be called (an action's `pro_only` flag, in tools/list and the OpenAPI document). "
        "A call past a limit is answered 402 with a detail that names the limit and its value "
        "(`plan.stored_items`, `plan.replications_per_job`, `plan.job_cpu_seconds`, `plan.concurrent_jobs`, "
        "`plan.pro_tools`); nothing was stored or queued. What to do: for stored items, delete datasets "
        "(`datasets delete`) or fleets (`fleets delete`) you no longer need; for replications or CPU-seconds, ask "
        "fewer replications (or max_replications) or a shorter horizon or mission_time; for concurrent jobs, "
        "wait for one to finish (`get job`) or cancel one (`jobs cancel`); or ask the operator for the pro plan. "
        "Whatever the plan, the service enforces 120 requests a minute per token (429 with Retry-After: wait "
        "that many seconds) and 30 bad-token requests a minute per client address (then that address's bad "
        "tokens answer 429; a valid token is never refused for them), "
        "request bodies up to its configured size (413), 1-500 rows per dataset page, and a per-job limit on a "
        "simulation's quoted cost that no plan lifts (10 CPU-minutes by default; 422 naming the field to lower).",
        ("guide",),
    ),
}


# The tools of the tool protocol, whose fields `guide {tool}` explains (check_pages keeps the list
# equal to the registry's: a schema-valid name is always answered).
Tool = Literal["alt", "datasets", "degradation", "fit", "fleets", "get", "guide", "jobs", "list", "rbd",
               "rbd_analysis", "rcm", "reports", "sharing", "strategy", "tracked_fleets", "uploads"]


class GuideRequest(Strict):
    topic: Topic | None = None
    tool: Tool | None = Field(None, description="A tool's name: the answer's `fields` give every field of its "
                                                "actions with its meaning, unit and default.")


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
    tool: str | None = Field(None, description="The tool whose fields are given.")
    fields: dict[str, dict[str, str]] | None = Field(
        None, description="With `tool`: action (or the tool's name when it has no actions) -> field -> what it "
                          "means, its unit and default; nested fields by dotted path (nodes.model.mean).")


def tool_fields(reg: Registry, tool: str) -> dict[str, dict[str, str]]:
    """Every field of a tool's actions with its full description (the glossary's included)."""
    actions = [a for a in reg.tools()[tool] if not a.rest_only]
    defs = definitions([a.request for a in actions])
    return {a.action or tool: field_texts(defs, a.request.__name__) for a in actions}


def plans_text(config: Config, plan: str | None = None) -> str:
    """The plan figures this service is configured with (and the caller's plan, when known)."""

    def one(p: PlanLimits) -> str:
        return (f"{p.plan}: {p.stored_items:,} stored items, {p.replications_per_job:,} replications per job, "
                f"{p.job_cpu_seconds:g} CPU-seconds per job, {p.concurrent_jobs} queued or running jobs at once, "
                f"{'with' if p.pro_tools else 'no'} pro-only tools")

    text = " Here: " + "; ".join(one(p) for p in all_limits(config).values()) + "."
    return text + (f" Your plan: {plan}." if plan else "")


def topic_text(key: str, config: Config, plan: str | None = None) -> str:
    """A topic's text as the guide answers it; `plans` adds this service's configured figures."""
    text = PAGES[key].text
    return text + plans_text(config, plan) if key == "plans" else text


def available_names(reg: Registry) -> set[str]:
    names = {f"{a.tool}/{a.action}" if a.action else a.tool for a in reg.actions.values()}
    names |= {f"{r.method} {r.path}" for r in reg.routes}
    return names


def check_pages(reg: Registry) -> None:
    """Refuse a registry whose guide names an action it lacks (a removed or renamed action must
    take its guide text with it)."""
    live = available_names(reg)
    for key, page in PAGES.items():
        missing = [a for a in page.actions if a not in live]
        if missing:
            raise RuntimeError(f"guide topic {key!r} names actions this service lacks: {', '.join(missing)}")
    differ = {a.tool for a in reg.actions.values() if not a.rest_only} ^ set(get_args(Tool))
    if differ:
        raise RuntimeError(f"guide's Tool list differs from the registry's tools: {sorted(differ)}")


def register(reg: Registry) -> None:
    async def guide(ctx: Ctx, req: GuideRequest) -> dict[str, Any]:
        if req.tool is not None:
            fields = {"tool": req.tool, "fields": tool_fields(reg, req.tool)}
            return fields if req.topic is None else {**await guide(ctx, GuideRequest(topic=req.topic)), **fields}
        if req.topic is None:
            return {"topics": [{"id": k, "title": p.title, "summary": p.summary} for k, p in PAGES.items()]}
        page = PAGES[req.topic]
        live = available_names(reg)
        return {
            "topic": req.topic,
            "title": page.title,
            "text": topic_text(req.topic, ctx.config, ctx.user.plan),
            "actions": [{"name": a, "available": a in live} for a in page.actions],
        }

    reg.action("guide", None, request=GuideRequest, response=GuideAnswer,
               summary="With no topic, the list of topics; with a topic, a short how-to; with a tool, "
                       "what every field of its actions means")(guide)
