//! Distributions: evaluate, mean, sample.
use crate::door::{Call, Error, enter};
use bathtub_engine::dist::function::Function;
use bathtub_engine::dist::{Dist, DistSpec, Lifetime};
use bathtub_engine::error::EngineError as Refusal;
use bathtub_engine::rng::Stream;
use pyo3::prelude::*;
use std::collections::BTreeMap;

/// A family from its id and parameters (a mixture names its base family).
fn dist(
    distribution_id: &str,
    params: BTreeMap<String, f64>,
    base_distribution_id: Option<String>,
) -> Result<Dist, Refusal> {
    Ok(Dist::from_spec(&DistSpec {
        distribution_id: distribution_id.to_string(),
        params,
        base_distribution_id,
        table: None,
        path: None,
    })?)
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
    enter(py, Call::Quick, |_| {
        let d = dist(distribution_id, params, base_distribution_id)?;
        let f = Function::parse(function)?;
        Ok(t.iter().map(|&x| f.at(&d, x)).collect())
    })
}

/// Mean of a distribution.
#[pyfunction]
#[pyo3(signature = (distribution_id, params, base_distribution_id=None))]
fn dist_mean(
    distribution_id: &str,
    params: BTreeMap<String, f64>,
    base_distribution_id: Option<String>,
) -> Result<f64, Error> {
    Ok(dist(distribution_id, params, base_distribution_id)?.mean())
}

/// Which draws `dist_sample` makes, as Python hands them over: a dict with `n` and `seed`, and
/// optional `stream` (0) and `age` (remaining lives of units aged `age`).
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
struct Draws {
    n: usize,
    seed: u64,
    #[pyo3(default)]
    stream: u64,
    #[pyo3(default)]
    age: Option<f64>,
}

/// `draws.n` draws from stream (seed, stream); with `age`, remaining lives of units that age.
#[pyfunction]
#[pyo3(signature = (distribution_id, params, draws, base_distribution_id=None))]
fn dist_sample(
    py: Python<'_>,
    distribution_id: &str,
    params: BTreeMap<String, f64>,
    draws: Draws,
    base_distribution_id: Option<String>,
) -> PyResult<Vec<f64>> {
    enter(py, Call::Quick, |_| {
        let d = dist(distribution_id, params, base_distribution_id)?;
        let mut r = Stream::new(draws.seed, draws.stream);
        let n = draws.n;
        Ok(match draws.age {
            None => (0..n).map(|_| d.sample(&mut r)).collect(),
            Some(a) => (0..n).map(|_| d.sample_residual(a, &mut r)).collect(),
        })
    })
}

/// Expected downtime fraction over [0, horizon] of one unit with this life and repair,
/// repaired as new, replaced at age `replace = (age, duration)` if given (the numeric
/// renewal solution variance reduction uses as a known mean), and its estimated error.
#[pyfunction]
#[pyo3(signature = (life, repair, horizon, replace=None))]
fn renewal_downtime(
    py: Python<'_>,
    life: (String, BTreeMap<String, f64>),
    repair: (String, BTreeMap<String, f64>),
    horizon: f64,
    replace: Option<(f64, f64)>,
) -> PyResult<(f64, f64)> {
    enter(py, Call::Quick, |_| {
        let l = dist(&life.0, life.1, None)?;
        let r = dist(&repair.0, repair.1, None)?;
        let s = bathtub_engine::variance::renewal::downtime(&l, &r, replace, horizon)?;
        Ok((s.down, s.error))
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(renewal_downtime, m)?)?;
    m.add_function(wrap_pyfunction!(dist_eval, m)?)?;
    m.add_function(wrap_pyfunction!(dist_mean, m)?)?;
    m.add_function(wrap_pyfunction!(dist_sample, m)?)?;
    Ok(())
}
