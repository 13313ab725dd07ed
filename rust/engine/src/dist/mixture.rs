//! Mixture of modes: with probability w_i the life follows mode i.
use super::solve::increasing_root;
use super::{Dist, DistError, Lifetime};
use crate::rng::Stream;

#[derive(Debug, Clone)]
pub struct Mixture {
    weights: Vec<f64>,
    modes: Vec<Dist>,
}

impl Mixture {
    /// Modes as (weight, distribution); weights in (0, 1] adding to 1 within 1e-9.
    pub fn new(parts: Vec<(f64, Dist)>) -> Result<Self, DistError> {
        if parts.len() < 2 {
            return Err(DistError("mixture: needs at least 2 modes".into()));
        }
        let mut total = 0.0;
        for (i, (w, _)) in parts.iter().enumerate() {
            if !(w.is_finite() && *w > 0.0 && *w <= 1.0) {
                return Err(DistError(format!(
                    "mixture: weight{} must be in (0, 1] (got {w})",
                    i + 1
                )));
            }
            total += w;
        }
        if (total - 1.0).abs() > 1e-9 {
            return Err(DistError(format!(
                "mixture: weights must add to 1 (they add to {total})"
            )));
        }
        let (weights, modes) = parts.into_iter().unzip();
        Ok(Mixture { weights, modes })
    }

    fn pick(&self, u: f64) -> &Dist {
        let mut acc = 0.0;
        for (w, d) in self.weights.iter().zip(&self.modes) {
            acc += w;
            if u < acc {
                return d;
            }
        }
        self.modes.last().expect("at least two modes")
    }

    fn bracket(&self, f: impl Fn(&Dist) -> f64) -> (f64, f64) {
        let xs = self.modes.iter().map(f);
        xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
            (lo.min(x), hi.max(x))
        })
    }
}

impl Lifetime for Mixture {
    fn sf(&self, t: f64) -> f64 {
        self.weights
            .iter()
            .zip(&self.modes)
            .map(|(w, d)| w * d.sf(t))
            .sum()
    }
    fn cdf(&self, t: f64) -> f64 {
        self.weights
            .iter()
            .zip(&self.modes)
            .map(|(w, d)| w * d.cdf(t))
            .sum()
    }
    fn pdf(&self, t: f64) -> f64 {
        self.weights
            .iter()
            .zip(&self.modes)
            .map(|(w, d)| w * d.pdf(t))
            .sum()
    }
    fn mean(&self) -> f64 {
        self.weights
            .iter()
            .zip(&self.modes)
            .map(|(w, d)| w * d.mean())
            .sum()
    }
    fn quantile(&self, p: f64) -> f64 {
        if p > 0.5 {
            return self.isf(1.0 - p);
        }
        // The mixture's quantile lies between its modes' quantiles at the same p.
        let (lo, hi) = self.bracket(|d| d.quantile(p));
        if lo == hi || p <= 0.0 {
            return lo;
        }
        increasing_root(
            |t| self.cdf(t) - p,
            |t| self.pdf(t),
            lo,
            hi,
            0.5 * (lo + hi),
        )
    }
    fn isf(&self, q: f64) -> f64 {
        if q > 0.5 {
            return self.quantile(1.0 - q);
        }
        let (lo, hi) = self.bracket(|d| d.isf(q));
        if lo == hi || q <= 0.0 {
            return hi;
        }
        increasing_root(|t| q - self.sf(t), |t| self.pdf(t), lo, hi, 0.5 * (lo + hi))
    }
    fn sample(&self, rng: &mut Stream) -> f64 {
        let u = rng.uniform();
        self.pick(u).sample(rng)
    }
    fn sample_residual(&self, age: f64, rng: &mut Stream) -> f64 {
        // Survivors to `age` follow each mode with weight w_i S_i(age) / S(age).
        let s = self.sf(age);
        if s <= 0.0 {
            return 0.0;
        }
        let u = rng.uniform() * s;
        let mut acc = 0.0;
        for (w, d) in self.weights.iter().zip(&self.modes) {
            acc += w * d.sf(age);
            if u < acc {
                return d.sample_residual(age, rng);
            }
        }
        self.modes
            .last()
            .expect("at least two modes")
            .sample_residual(age, rng)
    }
}
