//! The regression estimator of mean unavailability from a run's sums, its honest interval,
//! and the variance reduction factor it achieved against the plain estimator of the same run.
use super::VarianceAcc;
use crate::stats::{Moments, unfx};
use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

/// The reduced-variance estimate of mean unavailability (when it is used).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    pub unavailability: f64,
    pub std_error: f64,
    pub degrees_of_freedom: f64,
    /// Student t quantile at 0.975 for those degrees of freedom.
    pub t: f64,
}

/// What the run record says about variance reduction.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VarianceSummary {
    /// Asked: none | control | auto | antithetic | stratified.
    pub requested: String,
    /// Used for the mean availability: none (plain) | control | conditional |
    /// conditional+control | antithetic | antithetic+plain | stratified | stratified+plain.
    pub method: String,
    /// Plain variance of the mean over the reduced one, both estimated from this run (the
    /// replications plain Monte Carlo would need for the same half-width, per replication
    /// here); None before enough replications.
    pub factor: Option<f64>,
    /// Why the plain estimator was kept, when it was.
    pub fallback: Option<String>,
    pub notes: Vec<String>,
    pub conditioned_on: Vec<String>,
    pub controls: Vec<String>,
    /// Controls the regression kept (linearly dependent or constant ones are left out).
    pub controls_used: usize,
    pub degrees_of_freedom: Option<f64>,
    /// The plain estimate from the same replications, for comparison.
    pub plain_mean_availability: f64,
    pub plain_std_error: f64,
    /// Antithetic runs: the complete pairs the estimate is the mean of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairs: Option<u64>,
    /// Stratified runs: the complete sets (of `rng::SET` replications) the estimate is the
    /// mean of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sets: Option<u64>,
    /// Antithetic and stratified runs: the sets' factor over their CPU cost per replication
    /// (`pairs::PAIR_CPU_COST`, `pairs::STRATIFIED_CPU_COST`); at or below 1 plain
    /// replications would have been as quick.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub efficiency: Option<f64>,
    /// Antithetic or stratified runs to a target precision whose pilot sets did not pay: the
    /// replication from which the run drew plain streams.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plain_from: Option<u64>,
}

/// Cholesky factor L of the centred cross sums S = LL', leaving out a control whose
/// remaining variance is below 1e-10 of its own (constant, or a combination of those before
/// it): its coefficient is then 0.
struct Factor {
    l: Vec<Vec<f64>>,
    kept: Vec<bool>,
}

impl Factor {
    fn new(s: &[Vec<f64>]) -> Factor {
        let k = s.len();
        let mut l = vec![vec![0.0; k]; k];
        let mut kept = vec![false; k];
        for j in 0..k {
            let r = s[j][j] - (0..j).map(|m| l[j][m] * l[j][m]).sum::<f64>();
            if !(s[j][j] > 0.0 && r > 1e-10 * s[j][j]) {
                continue;
            }
            kept[j] = true;
            l[j][j] = r.sqrt();
            for i in j + 1..k {
                l[i][j] = (s[i][j] - (0..j).map(|m| l[i][m] * l[j][m]).sum::<f64>()) / l[j][j];
            }
        }
        Factor { l, kept }
    }

    /// L⁻¹v on the kept controls: u'S⁻¹v = (L⁻¹u)·(L⁻¹v).
    fn forward(&self, v: &[f64]) -> Vec<f64> {
        let (l, k) = (&self.l, v.len());
        let mut y = vec![0.0; k];
        for i in 0..k {
            if self.kept[i] {
                y[i] = (v[i] - (0..i).map(|m| l[i][m] * y[m]).sum::<f64>()) / l[i][i];
            }
        }
        y
    }

    fn kept(&self) -> usize {
        self.kept.iter().filter(|&&x| x).count()
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

impl VarianceAcc {
    /// Means of z and x, centred sums of squares and cross products.
    fn centred(&self) -> (f64, Vec<f64>, f64, Vec<f64>, Vec<Vec<f64>>) {
        let n = self.n as f64;
        let k = self.controls.len();
        let zbar = unfx(self.sum_z) / n;
        let xbar: Vec<f64> = self.sum_x.iter().map(|&s| unfx(s) / n).collect();
        let szz = unfx(self.sum_zz) - n * zbar * zbar;
        let sxz: Vec<f64> = (0..k)
            .map(|i| unfx(self.sum_xz[i]) - n * xbar[i] * zbar)
            .collect();
        let mut sxx = vec![vec![0.0; k]; k];
        let mut at = 0;
        for i in 0..k {
            for j in i..k {
                let v = unfx(self.sum_xx[at]) - n * xbar[i] * xbar[j];
                sxx[i][j] = v;
                sxx[j][i] = v;
                at += 1;
            }
        }
        (zbar, xbar, szz, sxz, sxx)
    }

    /// The regression-adjusted mean z̄ - β'(x̄ - μ), β from the run's own centred sums, and
    /// its standard error s √(1/n + d'S⁻¹d), d = x̄ - μ, s² the residual mean square on
    /// n - k - 1 degrees of freedom (the textbook estimator of the intercept at x = μ;
    /// Lavenberg and Welch 1981). None when too few replications for the controls kept.
    fn regression(&self) -> Option<Estimate> {
        let n = self.n as f64;
        let (zbar, xbar, szz, sxz, sxx) = self.centred();
        let d: Vec<f64> = xbar
            .iter()
            .zip(&self.controls)
            .map(|(x, c)| x - c.mean)
            .collect();
        let f = Factor::new(&sxx);
        let (y, w) = (f.forward(&sxz), f.forward(&d));
        // b'S⁻¹b (the sum of squares the controls explain), d'S⁻¹d and β'd = b'S⁻¹d.
        let (explained, dsd, beta_d) = (dot(&y, &y), dot(&w, &w), dot(&y, &w));
        let df = n - f.kept() as f64 - 1.0;
        if df < 2.0 {
            return None;
        }
        let resid = (szz - explained).max(0.0);
        let s2 = resid / df;
        let se = (s2 * (1.0 / n + dsd)).sqrt();
        let t = StudentsT::new(0.0, 1.0, df).ok()?.inverse_cdf(0.975);
        Some(Estimate {
            unavailability: zbar - beta_d,
            std_error: se,
            degrees_of_freedom: df,
            t,
        })
    }

    /// The estimate the run reports, or why the plain one stands: `plain` holds the run's
    /// per-replication availability.
    pub fn estimate(&self, plain: &Moments) -> Result<(Estimate, f64), String> {
        if !self.active() {
            return Err("nothing to reduce with (see notes)".into());
        }
        if self.in_sets() {
            // The sets' estimate stands even where they did not help: the plain one's
            // interval would treat a set's correlated members as independent.
            let Some(e) = self.joined_estimate() else {
                return Err(if self.antithetic_pairs() {
                    "too few antithetic pairs (3 needed)".into()
                } else {
                    "too few complete stratified sets (3 of 16 replications needed)".into()
                });
            };
            return Ok((e, self.antithetic_factor(&e, plain)));
        }
        let Some(e) = self.regression() else {
            return Err("too few replications for the controls".into());
        };
        let plain_se = plain.std_error();
        let factor = if e.std_error > 0.0 {
            (plain_se / e.std_error).powi(2)
        } else {
            f64::INFINITY
        };
        if factor <= 1.0 {
            return Err(format!(
                "the reduced estimator's standard error ({:.3e}) is not below the plain one's \
                 ({plain_se:.3e}): the controls do not help on this diagram",
                e.std_error
            ));
        }
        Ok((e, factor))
    }

    pub fn summary(&self, plain: &Moments) -> VarianceSummary {
        let est = self.estimate(plain);
        // A run in sets that turned to plain streams (and has drawn some).
        let turned = self.in_sets() && self.after.n >= 2;
        let conditioned = self.condition.is_some();
        let method = match (&est, conditioned, self.controls.is_empty()) {
            (Err(_), _, _) => "none",
            (Ok(_), _, _) if self.antithetic_pairs() && turned => "antithetic+plain",
            (Ok(_), _, _) if self.antithetic_pairs() => "antithetic",
            (Ok(_), _, _) if self.in_sets() && turned => "stratified+plain",
            (Ok(_), _, _) if self.in_sets() => "stratified",
            (Ok(_), true, true) => "conditional",
            (Ok(_), true, false) => "conditional+control",
            (Ok(_), false, _) => "control",
        };
        let kept = self.regression_kept();
        // The sets' own factor and efficiency (the pilot's, once the run turned plain).
        let pair_factor = self
            .in_sets()
            .then(|| self.pair_estimate().map(|e| self.pair_factor(&e, plain)))
            .flatten();
        let cost = self.set_cpu_cost();
        let efficiency = pair_factor.map(|f| f / cost);
        let (sets, set) = if self.antithetic_pairs() {
            ("antithetic pairs", "pair")
        } else {
            ("stratified sets", "set")
        };
        VarianceSummary {
            requested: serde_json::to_value(self.requested)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            method: method.to_string(),
            factor: est.as_ref().ok().map(|e| e.1).filter(|f| f.is_finite()),
            fallback: match &est {
                Err(why) => Some(why.clone()),
                Ok(_) if turned => Some(format!(
                    "the pilot's {sets} did not pay for their CPU (efficiency {:.3} <= 1: \
                     factor over {cost} times a plain replication's CPU): replications from {} \
                     were drawn on plain streams, the estimate joins the pilot's {set} means \
                     and their mean",
                    efficiency.unwrap_or(f64::NAN),
                    self.plain_from.unwrap_or(0),
                )),
                Ok(_) if self.antithetic_pairs() && efficiency.is_some_and(|e| e <= 1.0) => {
                    Some(format!(
                        "the antithetic pairs did not pay for their CPU (factor {:.3}, \
                         efficiency {:.3} <= 1 at {cost} times a plain replication's CPU): \
                         the estimate is still the pairs' (unbiased, its interval honest), but \
                         plain replications would have reached this half-width as quickly or \
                         sooner; a run to a target precision turns to plain streams after its \
                         pilot",
                        pair_factor.unwrap_or(f64::NAN),
                        efficiency.unwrap_or(f64::NAN),
                    ))
                }
                // Sets said when they did not help at all: their CPU over a plain
                // replication's is small (`efficiency` on the record weighs it, and a run to
                // a target precision turns on it).
                Ok((_, f)) if self.in_sets() && *f <= 1.0 => Some(format!(
                    "the stratified sets did not help (factor {f:.3} <= 1, efficiency {:.3} at \
                     {cost} times a plain replication's CPU): the estimate is still the sets' \
                     (unbiased, its interval honest), but plain replications would have done as \
                     well on this diagram; a run to a target precision turns to plain streams \
                     after its pilot when the efficiency is not above 1",
                    efficiency.unwrap_or(f64::NAN),
                )),
                Ok(_) => None,
            },
            notes: self.notes.clone(),
            conditioned_on: self.condition.as_ref().map_or(vec![], |k| k.blocks.clone()),
            controls: self.controls.iter().map(|c| c.name.clone()).collect(),
            controls_used: kept,
            degrees_of_freedom: est.as_ref().ok().map(|e| e.0.degrees_of_freedom),
            plain_mean_availability: plain.mean(),
            plain_std_error: plain.std_error(),
            pairs: self.antithetic_pairs().then_some(self.pairs),
            sets: (self.in_sets() && !self.antithetic_pairs()).then_some(self.pairs),
            efficiency: efficiency.filter(|e| e.is_finite()),
            plain_from: self.plain_from,
        }
    }

    fn regression_kept(&self) -> usize {
        if self.n < 2 || self.in_sets() {
            return 0;
        }
        Factor::new(&self.centred().4).kept()
    }
}
