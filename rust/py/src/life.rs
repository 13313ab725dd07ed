//! Life data: accelerated-life-test fits and bootstraps, and the collapse of packed keys.
use crate::door::{Call, enter};
use bathtub_engine::alt::bootstrap::{Kind, Plan, Replicates};
use bathtub_engine::alt::{self as alt_engine, AltData, Model, Relationship, parse_life};
use bathtub_engine::error::EngineError as Refusal;
use pyo3::buffer::PyBuffer;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

fn alt_inputs(
    life: &str,
    relationship: &str,
    t: Vec<f64>,
    failed: Vec<bool>,
    stresses: Vec<Vec<f64>>,
) -> Result<(Model, AltData), Refusal> {
    let model = Model {
        life: parse_life(life)?,
        relationship: Relationship::parse(relationship)?,
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

/// (natural coefficients, log-likelihood, their covariance or None when the information is
/// not positive definite).
type AltFit = (Vec<f64>, f64, Option<Vec<Vec<f64>>>);

/// ALT maximum-likelihood fit from natural coefficients `start`; (theta, log-likelihood,
/// covariance of theta: the inverse observed information, None where it is singular).
#[pyfunction]
fn alt_fit(
    py: Python<'_>,
    life: &str,
    relationship: &str,
    t: Vec<f64>,
    failed: Vec<bool>,
    stresses: Vec<Vec<f64>>,
    start: Vec<f64>,
) -> PyResult<AltFit> {
    enter(py, Call::Quick, |_| {
        let (model, data) = alt_inputs(life, relationship, t, failed, stresses)?;
        let f = alt_engine::fit(&model, &data, &start)?;
        let cov = f.covariance(&model, &data);
        Ok((f.coefficients(&model).to_vec(), f.loglik, cov))
    })
}

/// Bootstrap replicates [start, start + count) of an ALT fit `theta` (`kind` parametric or
/// nonparametric); with `jackknife` the n leave-one-out refits instead. Returns
/// (coefficients, k per replicate, NaN where a refit failed; log-likelihoods).
#[pyfunction]
#[pyo3(signature = (life, relationship, data, theta, resample))]
fn alt_bootstrap(
    py: Python<'_>,
    life: &str,
    relationship: &str,
    data: AltUnits,
    theta: Vec<f64>,
    resample: Resample,
) -> PyResult<(Vec<f64>, Vec<f64>)> {
    enter(py, Call::Quick, |_| {
        let (model, data) = alt_inputs(life, relationship, data.t, data.failed, data.stresses)?;
        let kind = Kind::parse(&resample.kind)?;
        let plan = Plan::new(model, data, &theta, kind, resample.seed)?;
        let reps: Replicates = if resample.jackknife {
            plan.jackknife(resample.threads)
        } else {
            plan.run(resample.start, resample.count, resample.threads)
        }?;
        Ok((reps.theta, reps.loglik))
    })
}

/// An ALT's units as Python hands them over: a dict with `t`, `failed` and `stresses` (one
/// list per stress).
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
struct AltUnits {
    t: Vec<f64>,
    failed: Vec<bool>,
    stresses: Vec<Vec<f64>>,
}

/// Which refits a bootstrap makes: a dict with `kind` (parametric or nonparametric), `seed`,
/// replicates `start`..`start + count`, optional `threads`, and `jackknife` (the n
/// leave-one-out refits instead).
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
struct Resample {
    kind: String,
    seed: u64,
    start: u64,
    count: u64,
    #[pyo3(default)]
    threads: Option<usize>,
    #[pyo3(default)]
    jackknife: bool,
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
    // The buffers' own conditions (memory the slices below may alias and write) are the
    // binding's; the sizes the collapse needs are the engine's.
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
    enter(py, Call::Quick, |_| {
        bathtub_engine::sort::check_collapse(kn, failures, on)?;
        // SAFETY: each PyBuffer holds its exporter's memory (not freed or resized until the
        // view is released, after this closure); both are writable, C-contiguous, aligned,
        // of the counted items, and do not overlap; the caller owns them meanwhile.
        let keys = unsafe { std::slice::from_raw_parts_mut(k0 as *mut u64, kn) };
        let out = unsafe { std::slice::from_raw_parts_mut(o0 as *mut f64, on) };
        Ok(bathtub_engine::sort::collapse_keys(keys, failures, out))
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(alt_fit, m)?)?;
    m.add_function(wrap_pyfunction!(alt_bootstrap, m)?)?;
    m.add_function(wrap_pyfunction!(collapse_keys, m)?)?;
    Ok(())
}
