//! `bathtub._engine`: the PyO3 face of bathtub-engine. No logic lives here: each function
//! extracts owned Rust data, calls the engine with the GIL released, and wraps the result
//! (JSON text for structured results, lists of floats for curves).
use bathtub_engine::availability::{self, AvailabilityAcc, AvailabilityOptions, Precision};
use bathtub_engine::diagram::{Compiled, DiagramSpec};
use bathtub_engine::dist::{Dist, DistSpec, Lifetime};
use bathtub_engine::mission::{self, MissionAcc, MissionOptions};
use bathtub_engine::rng::Stream;
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::collections::BTreeMap;

create_exception!(
    bathtub._engine,
    EngineError,
    PyValueError,
    "The engine refused its input (a ValueError)."
);

fn err(e: impl std::fmt::Display) -> PyErr {
    EngineError::new_err(e.to_string())
}

fn dist(
    distribution_id: &str,
    params: BTreeMap<String, f64>,
    base_distribution_id: Option<String>,
) -> PyResult<Dist> {
    Dist::from_spec(&DistSpec {
        distribution_id: distribution_id.to_string(),
        params,
        base_distribution_id,
        table: None,
    })
    .map_err(err)
}

fn diagram(json: &str) -> PyResult<Compiled> {
    let spec: DiagramSpec = serde_json::from_str(json).map_err(|e| err(format!("diagram: {e}")))?;
    Compiled::new(&spec).map_err(err)
}

fn to_json<T: serde::Serialize>(x: &T) -> PyResult<String> {
    serde_json::to_string(x).map_err(err)
}

/// Evaluate one function of a distribution at each t: sf, cdf, pdf, hazard,
/// cumulative_hazard, quantile (t = probabilities) or isf.
#[pyfunction]
#[pyo3(signature = (distribution_id, params, function, t, base_distribution_id=None))]
fn dist_eval(
    py: Python<'_>,
    distribution_id: &str,
    params: BTreeMap<String, f64>,
    function: &str,
    t: Vec<f64>,
    base_distribution_id: Option<String>,
) -> PyResult<Vec<f64>> {
    let d = dist(distribution_id, params, base_distribution_id)?;
    let f: fn(&Dist, f64) -> f64 = match function {
        "sf" => |d, x| d.sf(x),
        "cdf" => |d, x| d.cdf(x),
        "pdf" => |d, x| d.pdf(x),
        "hazard" => |d, x| d.hazard(x),
        "cumulative_hazard" => |d, x| d.cumulative_hazard(x),
        "quantile" => |d, x| d.quantile(x),
        "isf" => |d, x| d.isf(x),
        other => return Err(err(format!("unknown function {other:?}"))),
    };
    Ok(py.detach(|| t.iter().map(|&x| f(&d, x)).collect()))
}

/// Mean of a distribution.
#[pyfunction]
#[pyo3(signature = (distribution_id, params, base_distribution_id=None))]
fn dist_mean(
    distribution_id: &str,
    params: BTreeMap<String, f64>,
    base_distribution_id: Option<String>,
) -> PyResult<f64> {
    Ok(dist(distribution_id, params, base_distribution_id)?.mean())
}

/// n draws from stream (seed, stream); with `age`, remaining lives of units aged `age`.
#[pyfunction]
#[pyo3(signature = (distribution_id, params, n, seed, stream=0, age=None, base_distribution_id=None))]
#[allow(clippy::too_many_arguments)]
fn dist_sample(
    py: Python<'_>,
    distribution_id: &str,
    params: BTreeMap<String, f64>,
    n: usize,
    seed: u64,
    stream: u64,
    age: Option<f64>,
    base_distribution_id: Option<String>,
) -> PyResult<Vec<f64>> {
    let d = dist(distribution_id, params, base_distribution_id)?;
    Ok(py.detach(|| {
        let mut r = Stream::new(seed, stream);
        match age {
            None => (0..n).map(|_| d.sample(&mut r)).collect(),
            Some(a) => (0..n).map(|_| d.sample_residual(a, &mut r)).collect(),
        }
    }))
}

/// Validate and compile a diagram (JSON); returns its block ids.
#[pyfunction]
fn compile_diagram(py: Python<'_>, diagram_json: &str) -> PyResult<Vec<String>> {
    let owned = diagram_json.to_string();
    py.detach(|| diagram(&owned).map(|c| c.block_ids()))
}

/// Repairable run; returns (accumulator JSON, summary JSON).
#[pyfunction]
#[pyo3(signature = (diagram_json, horizon, grid, crews, seed, replication_start, replications=None, target_half_width=None, max_replications=100_000, threads=None))]
#[allow(clippy::too_many_arguments)]
fn simulate_availability(
    py: Python<'_>,
    diagram_json: &str,
    horizon: f64,
    grid: usize,
    crews: u32,
    seed: u64,
    replication_start: u64,
    replications: Option<u64>,
    target_half_width: Option<f64>,
    max_replications: u64,
    threads: Option<usize>,
) -> PyResult<(String, String)> {
    let owned = diagram_json.to_string();
    let precision = match (replications, target_half_width) {
        (Some(n), None) => Precision::Replications(n),
        (None, Some(t)) => Precision::Target {
            relative_half_width: t,
            max_replications,
        },
        _ => return Err(err("give replications or target_half_width, not both")),
    };
    py.detach(|| {
        let c = diagram(&owned)?;
        let o = AvailabilityOptions {
            horizon,
            grid,
            crews,
            seed,
        };
        let acc = availability::run_to_precision(&c, &o, replication_start, precision, threads)
            .map_err(err)?;
        Ok((to_json(&acc)?, to_json(&acc.summary())?))
    })
}

/// Non-repairable mission run; returns (accumulator JSON, summary JSON).
#[pyfunction]
#[pyo3(signature = (diagram_json, mission_time, grid, seed, replication_start, replications, threads=None))]
#[allow(clippy::too_many_arguments)]
fn simulate_mission(
    py: Python<'_>,
    diagram_json: &str,
    mission_time: f64,
    grid: usize,
    seed: u64,
    replication_start: u64,
    replications: u64,
    threads: Option<usize>,
) -> PyResult<(String, String)> {
    let owned = diagram_json.to_string();
    py.detach(|| {
        let c = diagram(&owned)?;
        let o = MissionOptions {
            mission_time,
            grid,
            seed,
        };
        let acc = mission::run(&c, &o, replication_start, replications, threads).map_err(err)?;
        Ok((to_json(&acc)?, to_json(&acc.summary())?))
    })
}

/// Merge two availability accumulators over adjacent replication ranges.
#[pyfunction]
fn merge_availability(a: &str, b: &str) -> PyResult<(String, String)> {
    let a: AvailabilityAcc = serde_json::from_str(a).map_err(err)?;
    let b: AvailabilityAcc = serde_json::from_str(b).map_err(err)?;
    let m = a.merge(&b).map_err(err)?;
    Ok((to_json(&m)?, to_json(&m.summary())?))
}

/// Merge two mission accumulators over adjacent replication ranges.
#[pyfunction]
fn merge_mission(a: &str, b: &str) -> PyResult<(String, String)> {
    let a: MissionAcc = serde_json::from_str(a).map_err(err)?;
    let b: MissionAcc = serde_json::from_str(b).map_err(err)?;
    let m = a.merge(&b).map_err(err)?;
    Ok((to_json(&m)?, to_json(&m.summary())?))
}

#[pymodule]
fn _engine(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", bathtub_engine::VERSION)?;
    m.add("EngineError", m.py().get_type::<EngineError>())?;
    m.add_function(wrap_pyfunction!(dist_eval, m)?)?;
    m.add_function(wrap_pyfunction!(dist_mean, m)?)?;
    m.add_function(wrap_pyfunction!(dist_sample, m)?)?;
    m.add_function(wrap_pyfunction!(compile_diagram, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_availability, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_mission, m)?)?;
    m.add_function(wrap_pyfunction!(merge_availability, m)?)?;
    m.add_function(wrap_pyfunction!(merge_mission, m)?)?;
    Ok(())
}
