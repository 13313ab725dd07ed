//! Life and repair distributions: one trait, one file per family.
//!
//! Parameterisation follows `python/bathtub/distributions.py` (the service's ids and
//! parameter names): `gamma` as a parameter is always a location, the gamma family's
//! `alpha` is its shape and `beta` its scale. Each family is an immutable struct with
//! precomputed constants whose `new` refuses NaN and out-of-domain values.

mod exponential;
pub mod function;
mod gamma;
mod gumbel;
#[cfg(test)]
mod inversion_tests;
mod logistic;
mod loglogistic;
mod lognormal;
mod mixture;
mod normal;
mod path;
#[cfg(test)]
mod path_tests;
mod power;
mod solve;
mod table;
#[cfg(test)]
mod testkit;
mod uniform;
mod weibull;
pub mod ziggurat;

pub use exponential::Exponential;
pub use gamma::Gamma;
pub use gumbel::Gumbel;
pub use logistic::Logistic;
pub use loglogistic::LogLogistic;
pub use lognormal::LogNormal;
pub use mixture::Mixture;
pub use normal::Normal;
pub use path::{PathLife, PathSpec};
pub use power::{PowerSf, hazard_share};
pub use table::Table;
pub use uniform::Uniform;
pub use weibull::Weibull;

use crate::rng::Stream;
use std::collections::BTreeMap;
use std::fmt;

/// A refused parameter set: which family, which rule.
#[derive(Debug, Clone, PartialEq)]
pub struct DistError(pub String);

impl fmt::Display for DistError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DistError {}

pub(crate) fn positive(family: &str, name: &str, v: f64) -> Result<f64, DistError> {
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(DistError(format!(
            "{family}: {name} must be a finite number > 0 (got {v})"
        )))
    }
}

pub(crate) fn finite(family: &str, name: &str, v: f64) -> Result<f64, DistError> {
    if v.is_finite() {
        Ok(v)
    } else {
        Err(DistError(format!(
            "{family}: {name} must be a finite number (got {v})"
        )))
    }
}

pub(crate) fn location(family: &str, v: f64) -> Result<f64, DistError> {
    if v.is_finite() && v >= 0.0 {
        Ok(v)
    } else {
        Err(DistError(format!(
            "{family}: gamma (location) must be a finite number >= 0 (got {v})"
        )))
    }
}

/// The reliability engineer's functions of a life distribution (times in the diagram unit).
///
/// Defaults derive the rest from `sf`, `pdf` and `isf`; families override where a closed
/// form is more accurate (expm1/log1p in the tails, as scipy does).
pub trait Lifetime {
    /// Survival function S(t) = P(T > t).
    fn sf(&self, t: f64) -> f64;
    /// Density f(t).
    fn pdf(&self, t: f64) -> f64;
    /// Mean life (may be +inf).
    fn mean(&self) -> f64;
    /// Quantile: the t with F(t) = p, p in [0, 1].
    fn quantile(&self, p: f64) -> f64;

    /// Distribution function F(t) = P(T <= t).
    fn cdf(&self, t: f64) -> f64 {
        1.0 - self.sf(t)
    }
    /// Inverse survival: the t with S(t) = q. Accurate for small q where 1 - q rounds.
    fn isf(&self, q: f64) -> f64 {
        self.quantile(1.0 - q)
    }
    /// Hazard rate h(t) = f(t) / S(t), per unit time.
    fn hazard(&self, t: f64) -> f64 {
        let s = self.sf(t);
        if s > 0.0 {
            self.pdf(t) / s
        } else {
            f64::INFINITY
        }
    }
    /// Cumulative hazard H(t) = -ln S(t), through log1p where S is close to 1.
    fn cumulative_hazard(&self, t: f64) -> f64 {
        let c = self.cdf(t);
        if c < 0.5 {
            -(-c).ln_1p()
        } else {
            -self.sf(t).ln()
        }
    }
    /// One life drawn by inverse transform.
    fn sample(&self, rng: &mut Stream) -> f64 {
        self.isf(rng.uniform())
    }
    /// Remaining life of a unit that has survived to `age`: S(age + x) / S(age) = U.
    fn sample_residual(&self, age: f64, rng: &mut Stream) -> f64 {
        let s = self.sf(age);
        if s <= 0.0 {
            return 0.0;
        }
        (self.isf(rng.uniform() * s) - age).max(0.0)
    }
}

/// Any family, as one enum so the simulator's hot loop dispatches without a vtable.
#[derive(Debug, Clone)]
pub enum Dist {
    Exponential(Exponential),
    Weibull(Weibull),
    Normal(Normal),
    LogNormal(LogNormal),
    Gamma(Gamma),
    LogLogistic(LogLogistic),
    Gumbel(Gumbel),
    Logistic(Logistic),
    Uniform(Uniform),
    Mixture(Mixture),
    PowerSf(PowerSf),
    Table(Table),
    /// A life under a covariate path (boxed: it holds a base life and its tables).
    Path(Box<PathLife>),
}

macro_rules! each {
    ($self:ident, $d:ident => $e:expr) => {
        match $self {
            Dist::Exponential($d) => $e,
            Dist::Weibull($d) => $e,
            Dist::Normal($d) => $e,
            Dist::LogNormal($d) => $e,
            Dist::Gamma($d) => $e,
            Dist::LogLogistic($d) => $e,
            Dist::Gumbel($d) => $e,
            Dist::Logistic($d) => $e,
            Dist::Uniform($d) => $e,
            Dist::Mixture($d) => $e,
            Dist::PowerSf($d) => $e,
            Dist::Table($d) => $e,
            Dist::Path($d) => $e,
        }
    };
}

impl Lifetime for Dist {
    fn sf(&self, t: f64) -> f64 {
        each!(self, d => d.sf(t))
    }
    fn pdf(&self, t: f64) -> f64 {
        each!(self, d => d.pdf(t))
    }
    fn mean(&self) -> f64 {
        each!(self, d => d.mean())
    }
    fn quantile(&self, p: f64) -> f64 {
        each!(self, d => d.quantile(p))
    }
    fn cdf(&self, t: f64) -> f64 {
        each!(self, d => d.cdf(t))
    }
    fn isf(&self, q: f64) -> f64 {
        each!(self, d => d.isf(q))
    }
    fn hazard(&self, t: f64) -> f64 {
        each!(self, d => d.hazard(t))
    }
    fn cumulative_hazard(&self, t: f64) -> f64 {
        each!(self, d => d.cumulative_hazard(t))
    }
    #[inline]
    fn sample(&self, rng: &mut Stream) -> f64 {
        // Antithetic runs draw every family by inversion, monotone in U (the families'
        // own samplers, ziggurat or rejection, are not); `isf` as the trait's default.
        if rng.inverts() {
            return self.isf(rng.uniform());
        }
        each!(self, d => d.sample(rng))
    }
    #[inline]
    fn sample_residual(&self, age: f64, rng: &mut Stream) -> f64 {
        if rng.inverts() {
            let s = self.sf(age);
            if s <= 0.0 {
                return 0.0;
            }
            return (self.isf(rng.uniform() * s) - age).max(0.0);
        }
        each!(self, d => d.sample_residual(age, rng))
    }
}

impl Dist {
    /// One life, as `sample`, with exponential draws inlined into the caller: the
    /// simulator's hot path draws mostly exponential lives and repairs, and the generic
    /// dispatch cost a call and a register spill per draw. Same numbers as `sample`.
    #[inline(always)]
    pub fn draw(&self, rng: &mut Stream) -> f64 {
        if let Dist::Exponential(e) = self {
            e.sample(rng)
        } else {
            self.sample_other(rng)
        }
    }

    #[inline(never)]
    fn sample_other(&self, rng: &mut Stream) -> f64 {
        self.sample(rng)
    }
}

/// A distribution as data: the service's id, named parameters and, for a mixture, the
/// base family of its numbered modes (`alpha1, beta1, weight1, alpha2, ...`).
#[derive(Debug, Clone, PartialEq, serde::Deserialize, serde::Serialize)]
pub struct DistSpec {
    pub distribution_id: String,
    pub params: BTreeMap<String, f64>,
    #[serde(default)]
    pub base_distribution_id: Option<String>,
    /// `table` and `steps` only: its [t, F] knots (see `Table`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table: Option<Vec<[f64; 2]>>,
    /// A covariate path the life runs under (see `PathLife`); the rest is its base life.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<PathSpec>,
}

fn take(
    fam: &str,
    p: &BTreeMap<String, f64>,
    allowed: &[&str],
    required: &[&str],
) -> Result<(), DistError> {
    for k in p.keys() {
        if !allowed.contains(&k.as_str()) {
            return Err(DistError(format!(
                "{fam}: unknown parameter {k:?}; expected {}",
                allowed.join(", ")
            )));
        }
    }
    for r in required {
        if !p.contains_key(*r) {
            return Err(DistError(format!("{fam}: parameter {r} is required")));
        }
    }
    Ok(())
}

impl Dist {
    /// Build a family from the service's id and parameter names.
    pub fn from_params(id: &str, p: &BTreeMap<String, f64>) -> Result<Dist, DistError> {
        let g = |k: &str| p.get(k).copied().unwrap_or(f64::NAN);
        let loc = || p.get("gamma").copied().unwrap_or(0.0);
        Ok(match id {
            "exponential" => {
                take(id, p, &["failure_rate", "gamma"], &["failure_rate"])?;
                Dist::Exponential(Exponential::new(g("failure_rate"), loc())?)
            }
            "weibull" => {
                take(id, p, &["alpha", "beta", "gamma"], &["alpha", "beta"])?;
                Dist::Weibull(Weibull::new(g("alpha"), g("beta"), loc())?)
            }
            "normal" => {
                take(id, p, &["mu", "sigma"], &["mu", "sigma"])?;
                Dist::Normal(Normal::new(g("mu"), g("sigma"))?)
            }
            "lognormal" => {
                take(id, p, &["mu", "sigma", "gamma"], &["mu", "sigma"])?;
                Dist::LogNormal(LogNormal::new(g("mu"), g("sigma"), loc())?)
            }
            "gamma" => {
                take(id, p, &["alpha", "beta", "gamma"], &["alpha", "beta"])?;
                Dist::Gamma(Gamma::new(g("alpha"), g("beta"), loc())?)
            }
            "loglogistic" => {
                take(id, p, &["alpha", "beta", "gamma"], &["alpha", "beta"])?;
                Dist::LogLogistic(LogLogistic::new(g("alpha"), g("beta"), loc())?)
            }
            "gumbel" => {
                take(id, p, &["mu", "sigma"], &["mu", "sigma"])?;
                Dist::Gumbel(Gumbel::new(g("mu"), g("sigma"))?)
            }
            "logistic" => {
                take(id, p, &["mu", "sigma"], &["mu", "sigma"])?;
                Dist::Logistic(Logistic::new(g("mu"), g("sigma"))?)
            }
            "uniform" => {
                take(id, p, &["a", "b"], &["a", "b"])?;
                Dist::Uniform(Uniform::new(g("a"), g("b"))?)
            }
            "mixture" => {
                return Err(DistError(
                    "mixture: base_distribution_id is required".into(),
                ));
            }
            other => return Err(DistError(format!("unknown distribution {other:?}"))),
        })
    }

    /// Build from a spec; a mixture splits its numbered parameters into modes.
    pub fn from_spec(spec: &DistSpec) -> Result<Dist, DistError> {
        if let Some(path) = &spec.path {
            let base = Dist::from_spec(&DistSpec {
                path: None,
                ..spec.clone()
            })?;
            return Ok(Dist::Path(Box::new(PathLife::new(base, path)?)));
        }
        if spec.distribution_id == "table" || spec.distribution_id == "steps" {
            if !spec.params.is_empty() {
                return Err(DistError("table: takes knots in table, no params".into()));
            }
            let knots = spec
                .table
                .as_deref()
                .ok_or_else(|| DistError("table: knots [[t, F], ...] are required".into()))?;
            return Ok(Dist::Table(if spec.distribution_id == "steps" {
                Table::steps(knots)?
            } else {
                Table::new(knots)?
            }));
        }
        if spec.table.is_some() {
            return Err(DistError(format!(
                "{}: table knots are for the table distribution only",
                spec.distribution_id
            )));
        }
        if spec.distribution_id != "mixture" {
            return Dist::from_params(&spec.distribution_id, &spec.params);
        }
        let base = spec
            .base_distribution_id
            .as_deref()
            .ok_or_else(|| DistError("mixture: base_distribution_id is required".into()))?;
        let mut modes: BTreeMap<usize, BTreeMap<String, f64>> = BTreeMap::new();
        for (k, v) in &spec.params {
            let split = k.find(|c: char| c.is_ascii_digit()).ok_or_else(|| {
                DistError(format!(
                    "mixture: parameter {k:?} has no mode number (e.g. alpha1)"
                ))
            })?;
            let (name, num) = k.split_at(split);
            let i: usize = num
                .parse()
                .map_err(|_| DistError(format!("mixture: bad mode number in {k:?}")))?;
            modes.entry(i).or_default().insert(name.to_string(), *v);
        }
        if modes.len() < 2 {
            return Err(DistError("mixture: needs at least 2 modes".into()));
        }
        let mut parts = Vec::with_capacity(modes.len());
        for (i, (num, mut p)) in modes.into_iter().enumerate() {
            if num != i + 1 {
                return Err(DistError(format!(
                    "mixture: modes must be numbered 1, 2, ...; mode {} missing",
                    i + 1
                )));
            }
            let w = p
                .remove("weight")
                .ok_or_else(|| DistError(format!("mixture: weight{num} is required")))?;
            let d = Dist::from_params(base, &p)
                .map_err(|e| DistError(format!("mixture mode {num}: {e}")))?;
            parts.push((w, d));
        }
        Ok(Dist::Mixture(Mixture::new(parts)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(id: &str, p: &[(&str, f64)]) -> DistSpec {
        DistSpec {
            distribution_id: id.into(),
            params: p.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            base_distribution_id: None,
            table: None,
            path: None,
        }
    }

    #[test]
    fn refuses_bad_params() {
        assert!(Dist::from_spec(&spec("weibull", &[("alpha", f64::NAN), ("beta", 1.0)])).is_err());
        assert!(Dist::from_spec(&spec("weibull", &[("alpha", 1.0)])).is_err());
        assert!(Dist::from_spec(&spec("exponential", &[("failure_rate", -1.0)])).is_err());
        assert!(Dist::from_spec(&spec("uniform", &[("a", 2.0), ("b", 1.0)])).is_err());
        assert!(Dist::from_spec(&spec("nope", &[])).is_err());
        let mut m = spec(
            "mixture",
            &[
                ("alpha1", 1.0),
                ("beta1", 2.0),
                ("weight1", 0.5),
                ("alpha2", 3.0),
                ("beta2", 1.0),
                ("weight2", 0.6),
            ],
        );
        m.base_distribution_id = Some("weibull".into());
        assert!(Dist::from_spec(&m).is_err(), "weights add to 1.1");
    }

    #[test]
    fn value_stability() {
        // Fixed seed, fixed draws: a change here changes every published result.
        let d = Dist::from_spec(&spec("weibull", &[("alpha", 100.0), ("beta", 2.0)])).unwrap();
        let mut r = Stream::new(42, 0);
        let x: Vec<f64> = (0..3).map(|_| d.sample(&mut r)).collect();
        let mut r2 = Stream::new(42, 0);
        let y: Vec<f64> = (0..3).map(|_| d.sample(&mut r2)).collect();
        assert_eq!(x, y);
        let e = Exponential::new(0.5, 0.0).unwrap();
        let mut r3 = Stream::new(1, 2);
        let mut r4 = Stream::new(1, 2);
        assert_eq!(e.sample(&mut r3), ziggurat::tables().exp1(&mut r4) / 0.5);
    }

    #[test]
    fn sample_mean_matches() {
        let dists = [
            spec("gamma", &[("alpha", 0.7), ("beta", 3.0)]),
            spec("gamma", &[("alpha", 4.5), ("beta", 2.0)]),
            spec("gamma", &[("alpha", 2.5), ("beta", 2.0), ("gamma", 30.0)]),
            spec("lognormal", &[("mu", 1.0), ("sigma", 0.5)]),
            spec("loglogistic", &[("alpha", 2.0), ("beta", 4.0)]),
        ];
        for s in &dists {
            let d = Dist::from_spec(s).unwrap();
            let mut r = Stream::new(3, 9);
            let n = 200_000;
            let m: f64 = (0..n).map(|_| d.sample(&mut r)).sum::<f64>() / n as f64;
            assert!(
                (m / d.mean() - 1.0).abs() < 0.01,
                "{s:?}: {m} vs {}",
                d.mean()
            );
        }
    }

    #[test]
    fn ziggurat_exponential_moments_and_tail() {
        let z = ziggurat::tables();
        let mut r = Stream::new(8, 8);
        let n = 1_000_000;
        let xs: Vec<f64> = (0..n).map(|_| z.exp1(&mut r)).collect();
        let m = xs.iter().sum::<f64>() / n as f64;
        let v = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / n as f64;
        assert!((m - 1.0).abs() < 0.005 && (v - 1.0).abs() < 0.01, "{m} {v}");
        for t in [0.1, 1.0, 3.0, 8.0] {
            let p = xs.iter().filter(|&&x| x > t).count() as f64 / n as f64;
            let e = (-t).exp();
            assert!(
                (p - e).abs() < 5.0 * (e * (1.0 - e) / n as f64).sqrt() + 1e-6,
                "{t}: {p} vs {e}"
            );
        }
    }

    #[test]
    fn residual_life_is_conditional() {
        // P(T > a + x | T > a) = S(a + x) / S(a) for a Weibull with wear-out.
        let d = Weibull::new(10.0, 3.0, 0.0).unwrap();
        let (a, x) = (8.0, 3.0);
        let mut r = Stream::new(5, 5);
        let n = 200_000;
        let hits = (0..n).filter(|_| d.sample_residual(a, &mut r) > x).count() as f64 / n as f64;
        let exact = d.sf(a + x) / d.sf(a);
        assert!((hits - exact).abs() < 4.0 * (exact * (1.0 - exact) / n as f64).sqrt());
    }
}
