//! Exponential life: constant hazard `failure_rate`, optional location `gamma`.
use super::ziggurat::{Tables, tables};
use super::{DistError, Lifetime, location, positive};
use crate::rng::Stream;

#[derive(Clone, Copy)]
pub struct Exponential {
    rate: f64,
    loc: f64,
    mean_life: f64,
    zig: &'static Tables,
}

impl std::fmt::Debug for Exponential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exponential")
            .field("rate", &self.rate)
            .field("loc", &self.loc)
            .finish()
    }
}

impl Exponential {
    /// The same life keeping a share `p` > 0 of its hazard (S^p): rate times p.
    pub(crate) fn hazard_share(&self, p: f64) -> Result<Self, DistError> {
        Exponential::new(self.rate * p, self.loc)
    }

    pub fn new(failure_rate: f64, gamma: f64) -> Result<Self, DistError> {
        let rate = positive("exponential", "failure_rate", failure_rate)?;
        Ok(Exponential {
            rate,
            loc: location("exponential", gamma)?,
            mean_life: 1.0 / rate,
            zig: tables(),
        })
    }
}

impl Lifetime for Exponential {
    fn sf(&self, t: f64) -> f64 {
        if t <= self.loc {
            1.0
        } else {
            (-self.rate * (t - self.loc)).exp()
        }
    }
    fn cdf(&self, t: f64) -> f64 {
        if t <= self.loc {
            0.0
        } else {
            -(-self.rate * (t - self.loc)).exp_m1()
        }
    }
    fn pdf(&self, t: f64) -> f64 {
        if t < self.loc {
            0.0
        } else {
            self.rate * (-self.rate * (t - self.loc)).exp()
        }
    }
    fn hazard(&self, t: f64) -> f64 {
        if t < self.loc { 0.0 } else { self.rate }
    }
    fn cumulative_hazard(&self, t: f64) -> f64 {
        self.rate * (t - self.loc).max(0.0)
    }
    fn mean(&self) -> f64 {
        self.loc + 1.0 / self.rate
    }
    fn quantile(&self, p: f64) -> f64 {
        self.loc - (-p).ln_1p() / self.rate
    }
    fn isf(&self, q: f64) -> f64 {
        self.loc - q.ln() / self.rate
    }
    #[inline(always)]
    fn sample(&self, rng: &mut Stream) -> f64 {
        self.loc + self.zig.exp1(rng) * self.mean_life
    }
    #[inline]
    fn sample_residual(&self, age: f64, rng: &mut Stream) -> f64 {
        // Memoryless past the failure-free time.
        (self.loc - age).max(0.0) + self.zig.exp1(rng) * self.mean_life
    }
}
