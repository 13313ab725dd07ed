//! `bathtub._engine`: the PyO3 face of bathtub-engine. No logic lives here: each function
//! extracts owned Rust data, calls the engine with the GIL released, and wraps the result
//! (JSON text for structured results, lists of floats for curves).
use bathtub_engine::alt::bootstrap::{Kind, Plan, Replicates};
use bathtub_engine::alt::{self as alt_engine, AltData, Model, Relationship, parse_life};
use bathtub_engine::availability::{self, AvailabilityAcc, AvailabilityOptions, Precision};
use bathtub_engine::decisions::{self, variants::Knob};
use bathtub_engine::diagram::{Compiled, DiagramSpec};
use bathtub_engine::dist::{Dist, DistSpec, Lifetime};
use bathtub_engine::mission::{self, MissionAcc, MissionOptions};
use bathtub_engine::parallel::Control;
use bathtub_engine::rare::{self, RareOptions};
use bathtub_engine::rng::Stream;
use pyo3::buffer::PyBuffer;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::{create_exception, import_exception};
use std::collections::BTreeMap;
use std::sync::Arc;

// The engine's refusal is the library's `bathtub.errors.EngineError` (a `BathtubError` and a
// `ValueError`), so a Python user catches one base for the library, the engine and the client.
import_exception!(bathtub.errors, EngineError);
create_exception!(
    bathtub._engine,
    Cancelled,
    PyException,
    "The run was stopped through its RunControl before it finished."
);

fn err(e: impl std::fmt::Display) -> PyErr {
    EngineError::new_err(e.to_string())
}

/// A run's cancel flag and progress counters, shared with the engine's worker threads: any
/// Python thread may cancel or read it while the run goes on without the GIL.
#[pyclass(frozen, module = "bathtub._engine")]
struct RunControl {
    inner: Arc<Control>,
}

#[pymethods]
impl RunControl {
    #[new]
    fn new() -> Self {
        RunControl {
            inner: Arc::new(Control::new()),
        }
    }

    /// Stop the run: it raises Cancelled within one replication per thread.
    fn cancel(&self) {
        self.inner.cancel();
    }

    #[getter]
    fn cancelled(&self) -> bool {
        self.inner.is_cancelled()
    }

    /// Replications finished so far.
    #[getter]
    fn done(&self) -> u64 {
        self.inner.done()
    }

    /// Replications the run expects to do (revised by precision runs).
    #[getter]
    fn planned(&self) -> u64 {
        self.inner.planned()
    }

    /// Set the progress of a run made of engine calls elsewhere (chunks on a cluster).
    fn report(&self, done: u64, planned: u64) {
        self.inner.report(done, planned);
    }
}

/// The engine's control for a call: the caller's, or a private one.
fn control(c: Option<&Bound<'_, RunControl>>) -> Arc<Control> {
    c.map_or_else(|| Arc::new(Control::new()), |c| c.get().inner.clone())
}

/// An engine error, or Cancelled when the run stopped because its control was cancelled.
fn run_err(ctl: &Control) -> impl Fn(bathtub_engine::error::EngineError) -> PyErr + '_ {
    move |e| {
        if ctl.is_cancelled() {
            Cancelled::new_err(e.to_string())
        } else {
            err(e)
        }
    }
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
        path: None,
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
#[pyo3(signature = (diagram_json, horizon, grid, crews, seed, replication_start, replications=None, target_half_width=None, max_replications=100_000, threads=None, control=None))]
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
    control: Option<&Bound<'_, RunControl>>,
) -> PyResult<(String, String)> {
    let owned = diagram_json.to_string();
    let ctl = self::control(control);
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
        let acc = availability::run_to_precision_with(
            &c,
            &o,
            replication_start,
            precision,
            threads,
            &ctl,
        )
        .map_err(run_err(&ctl))?;
        Ok((to_json(&acc)?, to_json(&acc.summary())?))
    })
}

/// Whether `failure_biasing` can run a diagram with `crews`: None, or the rule it breaks.
#[pyfunction]
fn rare_check(py: Python<'_>, diagram_json: &str, crews: u32) -> PyResult<Option<String>> {
    let owned = diagram_json.to_string();
    py.detach(|| {
        let c = diagram(&owned)?;
        Ok(rare::check(&c, crews).err().map(|e| e.0))
    })
}

/// Steady-state unavailability by failure biasing (`bathtub_engine::rare`); summary JSON.
#[pyfunction]
#[pyo3(signature = (diagram_json, crews, seed, replication_start, replications=None, target_half_width=None, max_replications=1_000_000, threads=None, control=None))]
#[allow(clippy::too_many_arguments)]
fn simulate_rare(
    py: Python<'_>,
    diagram_json: &str,
    crews: u32,
    seed: u64,
    replication_start: u64,
    replications: Option<u64>,
    target_half_width: Option<f64>,
    max_replications: u64,
    threads: Option<usize>,
    control: Option<&Bound<'_, RunControl>>,
) -> PyResult<String> {
    let owned = diagram_json.to_string();
    let ctl = self::control(control);
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
        let o = RareOptions { crews, seed };
        let acc = rare::run_to_precision_with(&c, &o, replication_start, precision, threads, &ctl)
            .map_err(run_err(&ctl))?;
        to_json(&acc.summary())
    })
}

/// Non-repairable mission run; returns (accumulator JSON, summary JSON).
#[pyfunction]
#[pyo3(signature = (diagram_json, mission_time, grid, seed, replication_start, replications, threads=None, control=None))]
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
    control: Option<&Bound<'_, RunControl>>,
) -> PyResult<(String, String)> {
    let owned = diagram_json.to_string();
    let ctl = self::control(control);
    py.detach(|| {
        let c = diagram(&owned)?;
        let o = MissionOptions {
            mission_time,
            grid,
            seed,
        };
        let acc = mission::run_with(&c, &o, replication_start, replications, threads, &ctl)
            .map_err(run_err(&ctl))?;
        Ok((to_json(&acc)?, to_json(&acc.summary())?))
    })
}

/// Merge two availability accumulators over adjacent replication ranges.
/// What to improve (`bathtub_engine::decisions::what_to_improve`): JSON
/// {changes, summary} (summary: the common-random-numbers run, lane 0 the base design).
#[pyfunction]
#[pyo3(signature = (diagram_json, kind, time, crews, compared, seed, replication_start, replications, blocks=None, threads=None, control=None))]
#[allow(clippy::too_many_arguments)]
fn what_to_improve(
    py: Python<'_>,
    diagram_json: &str,
    kind: &str,
    time: f64,
    crews: u32,
    compared: &str,
    seed: u64,
    replication_start: u64,
    replications: u64,
    blocks: Option<Vec<String>>,
    threads: Option<usize>,
    control: Option<&Bound<'_, RunControl>>,
) -> PyResult<String> {
    let owned = diagram_json.to_string();
    let ctl = self::control(control);
    let plan = decisions::Plan::new(
        kind,
        time,
        crews,
        compared,
        seed,
        replication_start,
        replications,
    )
    .map_err(err)?;
    py.detach(|| {
        let spec: DiagramSpec =
            serde_json::from_str(&owned).map_err(|e| err(format!("diagram: {e}")))?;
        let (changes, acc) =
            decisions::what_to_improve(&spec, blocks.as_deref(), plan, threads, &ctl)
                .map_err(run_err(&ctl))?;
        to_json(&serde_json::json!({"changes": changes, "summary": acc.summary()}))
    })
}

/// Interval search (`bathtub_engine::decisions::interval_search`): JSON summary of the
/// common-random-numbers run, one lane per candidate interval.
#[pyfunction]
#[pyo3(signature = (diagram_json, blocks, knob, intervals, kind, time, crews, compared, seed, replication_start, replications, threads=None, control=None))]
#[allow(clippy::too_many_arguments)]
fn interval_search(
    py: Python<'_>,
    diagram_json: &str,
    blocks: Vec<String>,
    knob: &str,
    intervals: Vec<f64>,
    kind: &str,
    time: f64,
    crews: u32,
    compared: &str,
    seed: u64,
    replication_start: u64,
    replications: u64,
    threads: Option<usize>,
    control: Option<&Bound<'_, RunControl>>,
) -> PyResult<String> {
    let owned = diagram_json.to_string();
    let ctl = self::control(control);
    let plan = decisions::Plan::new(
        kind,
        time,
        crews,
        compared,
        seed,
        replication_start,
        replications,
    )
    .map_err(err)?;
    let knob = Knob::parse(knob).map_err(err)?;
    py.detach(|| {
        let spec: DiagramSpec =
            serde_json::from_str(&owned).map_err(|e| err(format!("diagram: {e}")))?;
        let acc = decisions::interval_search(&spec, &blocks, knob, &intervals, plan, threads, &ctl)
            .map_err(run_err(&ctl))?;
        to_json(&acc.summary())
    })
}

/// Cheapest design (`bathtub_engine::decisions::cheapest::compare_designs`): JSON summary of
/// the common-random-numbers run, lane i the design `diagrams_json[i]`.
#[pyfunction]
#[pyo3(signature = (diagrams_json, kind, time, crews, compared, seed, replication_start, replications, threads=None, control=None))]
#[allow(clippy::too_many_arguments)]
fn compare_designs(
    py: Python<'_>,
    diagrams_json: Vec<String>,
    kind: &str,
    time: f64,
    crews: u32,
    compared: &str,
    seed: u64,
    replication_start: u64,
    replications: u64,
    threads: Option<usize>,
    control: Option<&Bound<'_, RunControl>>,
) -> PyResult<String> {
    let ctl = self::control(control);
    let plan = decisions::Plan::new(
        kind,
        time,
        crews,
        compared,
        seed,
        replication_start,
        replications,
    )
    .map_err(err)?;
    py.detach(|| {
        let specs = diagrams_json
            .iter()
            .enumerate()
            .map(|(i, d)| {
                serde_json::from_str::<DiagramSpec>(d)
                    .map_err(|e| err(format!("designs[{i}]: {e}")))
            })
            .collect::<PyResult<Vec<_>>>()?;
        let acc = decisions::cheapest::compare_designs(&specs, plan, threads, &ctl)
            .map_err(run_err(&ctl))?;
        to_json(&acc.summary())
    })
}

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

fn alt_inputs(
    life: &str,
    relationship: &str,
    t: Vec<f64>,
    failed: Vec<bool>,
    stresses: Vec<Vec<f64>>,
) -> PyResult<(Model, AltData)> {
    let model = Model {
        life: parse_life(life).map_err(err)?,
        relationship: Relationship::parse(relationship).map_err(err)?,
    };
    Ok((
        model,
        AltData {
            t,
            failed,
            stresses,
        },
    ))
}

/// ALT maximum-likelihood fit from natural coefficients `start`; (theta, log-likelihood).
#[pyfunction]
fn alt_fit(
    py: Python<'_>,
    life: &str,
    relationship: &str,
    t: Vec<f64>,
    failed: Vec<bool>,
    stresses: Vec<Vec<f64>>,
    start: Vec<f64>,
) -> PyResult<(Vec<f64>, f64)> {
    let (model, data) = alt_inputs(life, relationship, t, failed, stresses)?;
    py.detach(|| {
        let mut s = [0.0; 4];
        let k = model.k().min(start.len());
        s[..k].copy_from_slice(&start[..k]);
        let f = alt_engine::fit(&model, &data, &s).map_err(err)?;
        Ok((f.theta[..model.k()].to_vec(), f.loglik))
    })
}

/// Bootstrap replicates [start, start + count) of an ALT fit `theta` (`kind` parametric or
/// nonparametric); with `jackknife` the n leave-one-out refits instead. Returns
/// (coefficients, k per replicate, NaN where a refit failed; log-likelihoods).
#[pyfunction]
#[pyo3(signature = (life, relationship, t, failed, stresses, theta, kind, seed, start, count, threads=None, jackknife=false))]
#[allow(clippy::too_many_arguments)]
fn alt_bootstrap(
    py: Python<'_>,
    life: &str,
    relationship: &str,
    t: Vec<f64>,
    failed: Vec<bool>,
    stresses: Vec<Vec<f64>>,
    theta: Vec<f64>,
    kind: &str,
    seed: u64,
    start: u64,
    count: u64,
    threads: Option<usize>,
    jackknife: bool,
) -> PyResult<(Vec<f64>, Vec<f64>)> {
    let (model, data) = alt_inputs(life, relationship, t, failed, stresses)?;
    let kind = Kind::parse(kind).map_err(err)?;
    py.detach(|| {
        let plan = Plan::new(model, data, &theta, kind, seed).map_err(err)?;
        let reps: Replicates = if jackknife {
            plan.jackknife(threads)
        } else {
            plan.run(start, count, threads)
        }
        .map_err(err)?;
        Ok((reps.theta, reps.loglik))
    })
}

/// Life data's packed keys collapsed to distinct times with counts
/// (`bathtub_engine::sort::collapse_keys`): `keys` (uint64) is sorted in place and `out`
/// (float64) filled in place, the GIL released. In place, not through copies: at 10^6 rows a
/// fresh buffer costs its page faults and two copies, a third of the sort itself.
#[pyfunction]
fn collapse_keys(
    py: Python<'_>,
    keys: PyBuffer<u64>,
    failures: usize,
    out: PyBuffer<f64>,
) -> PyResult<(usize, usize)> {
    if keys.readonly() || out.readonly() || !keys.is_c_contiguous() || !out.is_c_contiguous() {
        return Err(PyValueError::new_err(
            "collapse_keys needs writable C-contiguous arrays",
        ));
    }
    let (k0, kn) = (keys.buf_ptr() as usize, keys.item_count());
    let (o0, on) = (out.buf_ptr() as usize, out.item_count());
    if k0 < o0 + 8 * on && o0 < k0 + 8 * kn {
        return Err(PyValueError::new_err("collapse_keys: keys and out overlap"));
    }
    if failures > kn || on != 3 * failures + 2 * (kn - failures) {
        return Err(PyValueError::new_err(
            "collapse_keys: out needs 3 slots per failure row and 2 per suspension row",
        ));
    }
    Ok(py.detach(|| {
        // SAFETY: each PyBuffer holds its exporter's memory (not freed or resized until the
        // view is released, after this closure); both are writable, C-contiguous, aligned,
        // of the counted items, and do not overlap; the caller owns them meanwhile.
        let keys = unsafe { std::slice::from_raw_parts_mut(k0 as *mut u64, kn) };
        let out = unsafe { std::slice::from_raw_parts_mut(o0 as *mut f64, on) };
        bathtub_engine::sort::collapse_keys(keys, failures, out)
    }))
}

#[pymodule]
fn _engine(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", bathtub_engine::VERSION)?;
    m.add("EngineError", m.py().get_type::<EngineError>())?;
    m.add("Cancelled", m.py().get_type::<Cancelled>())?;
    m.add_class::<RunControl>()?;
    m.add_function(wrap_pyfunction!(dist_eval, m)?)?;
    m.add_function(wrap_pyfunction!(dist_mean, m)?)?;
    m.add_function(wrap_pyfunction!(dist_sample, m)?)?;
    m.add_function(wrap_pyfunction!(compile_diagram, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_availability, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_mission, m)?)?;
    m.add_function(wrap_pyfunction!(merge_availability, m)?)?;
    m.add_function(wrap_pyfunction!(what_to_improve, m)?)?;
    m.add_function(wrap_pyfunction!(interval_search, m)?)?;
    m.add_function(wrap_pyfunction!(compare_designs, m)?)?;
    m.add_function(wrap_pyfunction!(merge_mission, m)?)?;
    m.add_function(wrap_pyfunction!(rare_check, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_rare, m)?)?;
    m.add_function(wrap_pyfunction!(alt_fit, m)?)?;
    m.add_function(wrap_pyfunction!(alt_bootstrap, m)?)?;
    m.add_function(wrap_pyfunction!(collapse_keys, m)?)?;
    Ok(())
}
