//! Bootstrap replicates of an ALT fit. Replicate r draws from its own stream
//! `Stream::new(seed, r)` and is refitted on its own, so results do not depend on the thread
//! count, and replicates [a, b) and [b, c) put together are exactly [a, c).
//!
//! Parametric: each unit's time is drawn from the fitted life at its stresses and censored at
//! its censoring time: a censored unit keeps its own, a failed unit takes the longest
//! censoring time at its stress level (the level's test end), or none if nothing there was
//! censored. Non-parametric: units are resampled with replacement within each stress level,
//! so every level keeps its size.

// Small dense matrices read clearer indexed, as the formulas are written.
#![allow(clippy::needless_range_loop)]

use super::likelihood::{Life, MAX_K};
use super::{AltData, Fit, Model, Standardised, fit_from};
use crate::error::EngineError;
use crate::rng::Stream;
use rayon::prelude::*;
use statrs::function::erf::erfc_inv;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Parametric,
    Nonparametric,
}

impl Kind {
    pub fn parse(id: &str) -> Result<Self, EngineError> {
        match id {
            "parametric" => Ok(Kind::Parametric),
            "nonparametric" => Ok(Kind::Nonparametric),
            other => Err(EngineError::at(
                "kind",
                format!("unknown {other:?}; parametric or nonparametric"),
            )),
        }
    }
}

/// What every replicate shares: the data, the fit, and per unit its level, mean log life and
/// censoring time; per level its units.
pub struct Plan {
    model: Model,
    data: AltData,
    theta: [f64; MAX_K],
    kind: Kind,
    seed: u64,
    mu: Vec<f64>,
    sigma: f64,
    censor: Vec<f64>,
    members: Vec<Vec<usize>>,
}

/// Replicates [start, start + count): natural coefficients (k per replicate, NaN where the
/// refit found no finite maximum) and log-likelihoods.
#[derive(Clone, Debug, PartialEq)]
pub struct Replicates {
    pub start: u64,
    pub count: u64,
    pub k: usize,
    pub theta: Vec<f64>,
    pub loglik: Vec<f64>,
}

fn levels_of(data: &AltData) -> (Vec<usize>, Vec<Vec<usize>>) {
    let n = data.t.len();
    let key = |i: usize| -> Vec<u64> { data.stresses.iter().map(|s| s[i].to_bits()).collect() };
    let mut keys: Vec<Vec<u64>> = Vec::new();
    let mut level = vec![0; n];
    let mut members: Vec<Vec<usize>> = Vec::new();
    for (i, lv) in level.iter_mut().enumerate() {
        let k = key(i);
        let j = match keys.iter().position(|x| *x == k) {
            Some(j) => j,
            None => {
                keys.push(k);
                members.push(Vec::new());
                keys.len() - 1
            }
        };
        *lv = j;
        members[j].push(i);
    }
    (level, members)
}

impl Plan {
    /// Check the data and the fit's coefficients `theta` (natural, as `fit` returns).
    pub fn new(
        model: Model,
        data: AltData,
        theta: &[f64],
        kind: Kind,
        seed: u64,
    ) -> Result<Self, EngineError> {
        model.check(&data)?;
        let k = model.k();
        if theta.len() != k || theta.iter().any(|v| !v.is_finite()) {
            return Err(EngineError::at(
                "theta",
                format!("{k} finite coefficients are needed"),
            ));
        }
        let mut th = [0.0; MAX_K];
        th[..k].copy_from_slice(theta);
        let ns = model.relationship.stresses();
        let st = Standardised::new(&model, &data);
        // ln L at each unit from the standardised design: the same arithmetic as the fit
        let internal = st.to_internal(&th);
        let mu: Vec<f64> = (0..data.t.len())
            .map(|i| {
                st.shift + st.offset[i] + (0..=ns).map(|j| st.x[i][j] * internal[j]).sum::<f64>()
            })
            .collect();
        let sigma = if model.life == Life::Exponential {
            1.0
        } else {
            th[ns + 1].exp()
        };
        let (level, members) = levels_of(&data);
        let mut end = vec![f64::INFINITY; members.len()];
        let mut any = vec![false; members.len()];
        for i in 0..data.t.len() {
            if !data.failed[i] {
                let l = level[i];
                end[l] = if any[l] {
                    end[l].max(data.t[i])
                } else {
                    data.t[i]
                };
                any[l] = true;
            }
        }
        let censor = (0..data.t.len())
            .map(|i| {
                if data.failed[i] {
                    end[level[i]]
                } else {
                    data.t[i]
                }
            })
            .collect();
        Ok(Plan {
            model,
            data,
            theta: th,
            kind,
            seed,
            mu,
            sigma,
            censor,
            members,
        })
    }

    fn standard_quantile(&self, u: f64) -> f64 {
        match self.model.life {
            Life::Lognormal => -std::f64::consts::SQRT_2 * erfc_inv(2.0 * u),
            _ => (-(-u).ln_1p()).ln(),
        }
    }

    /// The data of replicate `r`.
    pub fn sample(&self, r: u64) -> AltData {
        let mut rng = Stream::new(self.seed, r);
        let n = self.data.t.len();
        match self.kind {
            Kind::Parametric => {
                let mut t = Vec::with_capacity(n);
                let mut failed = Vec::with_capacity(n);
                for i in 0..n {
                    let x = (self.mu[i] + self.sigma * self.standard_quantile(rng.uniform())).exp();
                    if x > self.censor[i] {
                        t.push(self.censor[i]);
                        failed.push(false);
                    } else {
                        t.push(x);
                        failed.push(true);
                    }
                }
                AltData {
                    t,
                    failed,
                    stresses: self.data.stresses.clone(),
                }
            }
            Kind::Nonparametric => {
                let mut out = AltData {
                    t: Vec::with_capacity(n),
                    failed: Vec::with_capacity(n),
                    stresses: vec![Vec::with_capacity(n); self.data.stresses.len()],
                };
                for m in &self.members {
                    for _ in 0..m.len() {
                        let pick = ((rng.uniform() * m.len() as f64) as usize).min(m.len() - 1);
                        let i = m[pick];
                        out.t.push(self.data.t[i]);
                        out.failed.push(self.data.failed[i]);
                        for (j, s) in self.data.stresses.iter().enumerate() {
                            out.stresses[j].push(s[i]);
                        }
                    }
                }
                out
            }
        }
    }

    fn refit(&self, data: &AltData) -> Option<Fit> {
        fit_from(&self.model, data, &self.theta)
    }

    /// Replicates [start, start + count) on `threads` (None: rayon's global pool).
    pub fn run(
        &self,
        start: u64,
        count: u64,
        threads: Option<usize>,
    ) -> Result<Replicates, EngineError> {
        let fits = in_pool(threads, || {
            (start as usize..(start + count) as usize)
                .into_par_iter()
                .with_min_len(8)
                .map(|r| self.refit(&self.sample(r as u64)))
                .collect()
        })?;
        Ok(self.pack(start, count, fits))
    }

    /// The n leave-one-out refits (BCa's acceleration), in unit order.
    pub fn jackknife(&self, threads: Option<usize>) -> Result<Replicates, EngineError> {
        let n = self.data.t.len();
        let fits = in_pool(threads, || {
            (0..n)
                .into_par_iter()
                .map(|drop| {
                    let keep = |v: &Vec<f64>| -> Vec<f64> {
                        v.iter()
                            .enumerate()
                            .filter(|(i, _)| *i != drop)
                            .map(|(_, x)| *x)
                            .collect()
                    };
                    let data = AltData {
                        t: keep(&self.data.t),
                        failed: self
                            .data
                            .failed
                            .iter()
                            .enumerate()
                            .filter(|(i, _)| *i != drop)
                            .map(|(_, f)| *f)
                            .collect(),
                        stresses: self.data.stresses.iter().map(keep).collect(),
                    };
                    self.refit(&data)
                })
                .collect()
        })?;
        Ok(self.pack(0, n as u64, fits))
    }

    fn pack(&self, start: u64, count: u64, fits: Vec<Option<Fit>>) -> Replicates {
        let k = self.model.k();
        let mut theta = Vec::with_capacity(fits.len() * k);
        let mut loglik = Vec::with_capacity(fits.len());
        for f in fits {
            match f {
                Some(f) => {
                    theta.extend_from_slice(&f.theta[..k]);
                    loglik.push(f.loglik);
                }
                None => {
                    theta.extend(std::iter::repeat_n(f64::NAN, k));
                    loglik.push(f64::NAN);
                }
            }
        }
        Replicates {
            start,
            count,
            k,
            theta,
            loglik,
        }
    }
}

fn in_pool<T: Send>(
    threads: Option<usize>,
    work: impl FnOnce() -> T + Send,
) -> Result<T, EngineError> {
    match threads {
        None => Ok(work()),
        Some(n) => {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(n.max(1))
                .build()
                .map_err(|e| EngineError::new(format!("cannot start {n} threads: {e}")))?;
            Ok(pool.install(work))
        }
    }
}

/// Replicate ranges put together: adjacent ranges of the same plan, in either order.
pub fn merge(x: &Replicates, y: &Replicates) -> Result<Replicates, EngineError> {
    let (a, b) = if x.start <= y.start { (x, y) } else { (y, x) };
    if a.k != b.k || a.start + a.count != b.start {
        return Err(EngineError::at(
            "merge",
            format!(
                "replicate ranges [{}, {}) and [{}, {}) are not adjacent",
                a.start,
                a.start + a.count,
                b.start,
                b.start + b.count
            ),
        ));
    }
    let mut out = a.clone();
    out.count += b.count;
    out.theta.extend_from_slice(&b.theta);
    out.loglik.extend_from_slice(&b.loglik);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::Relationship;
    use super::*;

    fn plan(kind: Kind) -> Plan {
        // a 3-level Weibull-Arrhenius test, 20 units a level, Type I censored at 3000
        let mut rng = Stream::new(11, 0);
        let (mut t, mut failed, mut s) = (vec![], vec![], vec![]);
        for &temp in &[350.0, 380.0, 410.0] {
            let alpha = (-8.0_f64 + 6000.0 / temp).exp();
            for _ in 0..20 {
                let x = alpha * (-(-rng.uniform()).ln_1p()).powf(1.0 / 2.0);
                t.push(x.min(3000.0));
                failed.push(x <= 3000.0);
                s.push(temp);
            }
        }
        let model = Model {
            life: Life::Weibull,
            relationship: Relationship::Arrhenius,
        };
        let data = AltData {
            t,
            failed,
            stresses: vec![s],
        };
        let fit = super::super::fit(&model, &data, &[-8.0, 6000.0, -0.7, 0.0]).unwrap();
        Plan::new(model, data, &fit.theta[..3], kind, 42).unwrap()
    }

    #[test]
    fn same_on_one_and_two_threads_and_merges() {
        for kind in [Kind::Parametric, Kind::Nonparametric] {
            let p = plan(kind);
            let one = p.run(0, 200, Some(1)).unwrap();
            let two = p.run(0, 200, Some(2)).unwrap();
            assert_eq!(
                one.theta.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                two.theta.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
            );
            let a = p.run(0, 70, Some(2)).unwrap();
            let b = p.run(70, 130, Some(1)).unwrap();
            let merged = merge(&b, &a).unwrap();
            assert_eq!(
                merged.theta.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                one.theta.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
            );
            assert!(merge(&a, &p.run(71, 5, None).unwrap()).is_err());
            assert!(one.theta.iter().all(|v| v.is_finite()));
        }
    }

    #[test]
    fn parametric_replicates_centre_on_the_fit() {
        // the mean of B replicate slopes is the fitted slope within 4 standard errors of the mean
        let p = plan(Kind::Parametric);
        let reps = p.run(0, 400, None).unwrap();
        let b: Vec<f64> = reps.theta.chunks(3).map(|c| c[1]).collect();
        let mean = b.iter().sum::<f64>() / b.len() as f64;
        let sd = (b.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (b.len() - 1) as f64).sqrt();
        assert!(
            (mean - p.theta[1]).abs() < 4.0 * sd / (b.len() as f64).sqrt() + 0.02 * sd,
            "{mean} {}",
            p.theta[1]
        );
    }

    #[test]
    fn nonparametric_keeps_level_sizes_and_censoring() {
        let p = plan(Kind::Nonparametric);
        let d = p.sample(3);
        for temp in [350.0, 380.0, 410.0] {
            assert_eq!(d.stresses[0].iter().filter(|&&v| v == temp).count(), 20);
        }
        let q = plan(Kind::Parametric);
        let d = q.sample(5);
        assert!(d.t.iter().all(|&x| x <= 3000.0));
        assert!(d.t.iter().zip(&d.failed).all(|(&x, &f)| f || x == 3000.0));
    }

    #[test]
    fn jackknife_drops_each_unit() {
        let p = plan(Kind::Parametric);
        let j = p.jackknife(Some(2)).unwrap();
        assert_eq!(j.count, 60);
        assert!(j.theta.iter().all(|v| v.is_finite()));
    }
}
