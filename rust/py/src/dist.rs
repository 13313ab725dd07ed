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

/// n draws from stream (seed, stream); with `age`, remaining lives of units aged `age`.
// The positional signature is the one `bathtub.engine` calls (being reorganised into a
// package now), so it stays until that lands.
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
    enter(py, Call::Quick, |_| {
        let d = dist(distribution_id, params, base_distribution_id)?;
        let mut r = Stream::new(seed, stream);
        Ok(match age {
            None => (0..n).map(|_| d.sample(&mut r)).collect(),
            Some(a) => (0..n).map(|_| d.sample_residual(a, &mut r)).collect(),
        })
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(dist_eval, m)?)?;
    m.add_function(wrap_pyfunction!(dist_mean, m)?)?;
    m.add_function(wrap_pyfunction!(dist_sample, m)?)?;
    Ok(())
}
