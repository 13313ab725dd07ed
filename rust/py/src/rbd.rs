//! Diagram runs: compile, simulate (availability, mission, failure biasing), merge, and the
//! decision runs (what to improve, interval search, cheapest design).
use crate::door::{Call, Error, RunControl, diagram, enter, from_json, spec, to_json};
use bathtub_engine::availability::{self, AvailabilityAcc, AvailabilityOptions, Precision};
use bathtub_engine::decisions::{self, Plan, PlanSpec, variants::Knob};
use bathtub_engine::error::{EngineError as Refusal, Key};
use bathtub_engine::mission::{self, MissionAcc, MissionOptions};
use bathtub_engine::rare::{self, RareOptions};
use bathtub_engine::variance::Method;
use pyo3::prelude::*;

/// Validate and compile a diagram (JSON); returns its block ids.
#[pyfunction]
fn compile_diagram(py: Python<'_>, diagram_json: String) -> PyResult<Vec<String>> {
    enter(py, Call::Quick, |_| Ok(diagram(&diagram_json)?.block_ids()))
}

/// Repairable run; returns (accumulator JSON, summary JSON). `run`: see [`Replications`]
/// (`max_replications` defaults to 100 000).
#[pyfunction]
#[pyo3(signature = (diagram_json, horizon, grid, crews, run, control=None))]
fn simulate_availability(
    py: Python<'_>,
    diagram_json: String,
    horizon: f64,
    grid: usize,
    crews: u32,
    run: Replications,
    control: Option<&Bound<'_, RunControl>>,
) -> PyResult<(String, String)> {
    let o = AvailabilityOptions {
        horizon,
        grid,
        crews,
        seed: run.seed,
    };
    enter(py, Call::Run(control), |ctl| {
        let precision = run.precision(100_000)?;
        let c = diagram(&diagram_json)?;
        let method = Method::parse(run.variance_reduction.as_deref().unwrap_or("none"))?;
        let acc = availability::run_reduced_from(
            &c,
            &o,
            method,
            run.plain_from,
            run.replication_start,
            precision,
            run.threads,
            ctl,
        )?;
        Ok((to_json(&acc)?, to_json(&acc.summary())?))
    })
}

/// Where an antithetic or stratified run to a target precision, with `state` run so far,
/// draws plain streams from (None while its sets pay): a cluster's driver passes it to later
/// chunks.
#[pyfunction]
fn availability_plain_from(state: &str) -> Result<Option<u64>, Error> {
    let acc: AvailabilityAcc = from_json(state)?;
    Ok(acc.plain_from())
}

/// Whether `failure_biasing` can run a diagram with `crews`: None, or the rule it breaks.
#[pyfunction]
fn rare_check(py: Python<'_>, diagram_json: String, crews: u32) -> PyResult<Option<String>> {
    enter(py, Call::Quick, |_| {
        Ok(rare::check(&diagram(&diagram_json)?, crews)
            .err()
            .map(|e| e.to_string()))
    })
}

/// Which replications a run makes, as Python hands them over: a dict with `seed`,
/// `replication_start`, `replications` or `target_half_width` (with `max_replications`, else
/// the run's own cap), optional `threads` and (availability runs) `variance_reduction`.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
struct Replications {
    seed: u64,
    replication_start: u64,
    #[pyo3(default)]
    replications: Option<u64>,
    #[pyo3(default)]
    target_half_width: Option<f64>,
    #[pyo3(default)]
    max_replications: Option<u64>,
    #[pyo3(default)]
    threads: Option<usize>,
    #[pyo3(default)]
    variance_reduction: Option<String>,
    /// An antithetic or stratified run's chunk past its turn to plain streams (a cluster's).
    #[pyo3(default)]
    plain_from: Option<u64>,
}

impl Replications {
    /// The precision asked, `cap` the replications' cap when none is given.
    fn precision(&self, cap: u64) -> Result<Precision, Refusal> {
        Precision::new(
            self.replications,
            self.target_half_width,
            self.max_replications.unwrap_or(cap),
        )
    }
}

/// Steady-state unavailability by failure biasing (`bathtub_engine::rare`); summary JSON.
#[pyfunction]
#[pyo3(signature = (diagram_json, crews, run, control=None))]
fn simulate_rare(
    py: Python<'_>,
    diagram_json: String,
    crews: u32,
    run: Replications,
    control: Option<&Bound<'_, RunControl>>,
) -> PyResult<String> {
    let o = RareOptions {
        crews,
        seed: run.seed,
    };
    enter(py, Call::Run(control), |ctl| {
        let precision = run.precision(1_000_000)?;
        let c = diagram(&diagram_json)?;
        let acc = rare::run_to_precision_with(
            &c,
            &o,
            run.replication_start,
            precision,
            run.threads,
            ctl,
        )?;
        to_json(&acc.summary())
    })
}

/// Non-repairable mission run; returns (accumulator JSON, summary JSON). `run`: see
/// [`Replications`]; a mission run makes a fixed number of `replications`.
#[pyfunction]
#[pyo3(signature = (diagram_json, mission_time, grid, run, control=None))]
fn simulate_mission(
    py: Python<'_>,
    diagram_json: String,
    mission_time: f64,
    grid: usize,
    run: Replications,
    control: Option<&Bound<'_, RunControl>>,
) -> PyResult<(String, String)> {
    let o = MissionOptions {
        mission_time,
        grid,
        seed: run.seed,
    };
    enter(py, Call::Run(control), |ctl| {
        let replications = run
            .replications
            .ok_or_else(|| Refusal::at("replications", "required for a mission run"))?;
        let c = diagram(&diagram_json)?;
        let acc = mission::run_with(
            &c,
            &o,
            run.replication_start,
            replications,
            run.threads,
            ctl,
        )?;
        Ok((to_json(&acc)?, to_json(&acc.summary())?))
    })
}

/// Merge two availability accumulators over adjacent replication ranges.
#[pyfunction]
fn merge_availability(a: &str, b: &str) -> Result<(String, String), Error> {
    let (a, b): (AvailabilityAcc, AvailabilityAcc) = (from_json(a)?, from_json(b)?);
    let m = a.merge(&b)?;
    Ok((to_json(&m)?, to_json(&m.summary())?))
}

/// Merge two mission accumulators over adjacent replication ranges.
#[pyfunction]
fn merge_mission(a: &str, b: &str) -> Result<(String, String), Error> {
    let (a, b): (MissionAcc, MissionAcc) = (from_json(a)?, from_json(b)?);
    let m = a.merge(&b)?;
    Ok((to_json(&m)?, to_json(&m.summary())?))
}

/// A decision run as Python hands it over: a dict with the [`PlanSpec`] keys (kind, time,
/// crews, compared, seed, replication_start, replications) and optional `threads`.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
struct PlanArgs {
    kind: String,
    time: f64,
    crews: u32,
    compared: String,
    seed: u64,
    replication_start: u64,
    replications: u64,
    #[pyo3(default)]
    threads: Option<usize>,
}

impl PlanArgs {
    fn plan(&self) -> Result<Plan, Refusal> {
        Plan::new(&PlanSpec {
            kind: self.kind.clone(),
            time: self.time,
            crews: self.crews,
            compared: self.compared.clone(),
            seed: self.seed,
            replication_start: self.replication_start,
            replications: self.replications,
        })
    }
}

/// What to improve (`bathtub_engine::decisions::what_to_improve`): JSON
/// {changes, summary} (summary: the common-random-numbers run, lane 0 the base design).
#[pyfunction]
#[pyo3(signature = (diagram_json, plan, blocks=None, control=None))]
fn what_to_improve(
    py: Python<'_>,
    diagram_json: String,
    plan: PlanArgs,
    blocks: Option<Vec<String>>,
    control: Option<&Bound<'_, RunControl>>,
) -> PyResult<String> {
    enter(py, Call::Run(control), |ctl| {
        let (p, threads) = (plan.plan()?, plan.threads);
        let s = spec(&diagram_json)?;
        let (changes, acc) = decisions::what_to_improve(&s, blocks.as_deref(), p, threads, ctl)?;
        to_json(&serde_json::json!({"changes": changes, "summary": acc.summary()}))
    })
}

/// Interval search (`bathtub_engine::decisions::interval_search`): JSON summary of the
/// common-random-numbers run, one lane per candidate interval.
#[pyfunction]
#[pyo3(signature = (diagram_json, blocks, knob, intervals, plan, control=None))]
fn interval_search(
    py: Python<'_>,
    diagram_json: String,
    blocks: Vec<String>,
    knob: &str,
    intervals: Vec<f64>,
    plan: PlanArgs,
    control: Option<&Bound<'_, RunControl>>,
) -> PyResult<String> {
    enter(py, Call::Run(control), |ctl| {
        let (p, threads) = (plan.plan()?, plan.threads);
        let knob = Knob::parse(knob)?;
        let s = spec(&diagram_json)?;
        let acc = decisions::interval_search(&s, &blocks, knob, &intervals, p, threads, ctl)?;
        to_json(&acc.summary())
    })
}

/// Cheapest design (`bathtub_engine::decisions::cheapest::compare_designs`): JSON summary of
/// the common-random-numbers run, lane i the design `diagrams_json[i]`.
#[pyfunction]
#[pyo3(signature = (diagrams_json, plan, control=None))]
fn compare_designs(
    py: Python<'_>,
    diagrams_json: Vec<String>,
    plan: PlanArgs,
    control: Option<&Bound<'_, RunControl>>,
) -> PyResult<String> {
    enter(py, Call::Run(control), |ctl| {
        let (p, threads) = (plan.plan()?, plan.threads);
        let specs = diagrams_json
            .iter()
            .enumerate()
            .map(|(i, d)| {
                serde_json::from_str(d).map_err(|e| {
                    Refusal::new(e.to_string()).within([Key::from("designs"), Key::Index(i)])
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let acc = decisions::cheapest::compare_designs(&specs, p, threads, ctl)?;
        to_json(&acc.summary())
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(compile_diagram, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_availability, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_mission, m)?)?;
    m.add_function(wrap_pyfunction!(merge_availability, m)?)?;
    m.add_function(wrap_pyfunction!(availability_plain_from, m)?)?;
    m.add_function(wrap_pyfunction!(merge_mission, m)?)?;
    m.add_function(wrap_pyfunction!(what_to_improve, m)?)?;
    m.add_function(wrap_pyfunction!(interval_search, m)?)?;
    m.add_function(wrap_pyfunction!(compare_designs, m)?)?;
    m.add_function(wrap_pyfunction!(rare_check, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_rare, m)?)?;
    Ok(())
}
