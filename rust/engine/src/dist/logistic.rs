//! Logistic life: location `mu` (the median), scale `sigma`.
use super::{DistError, Lifetime, finite, positive};

#[derive(Debug, Clone, Copy)]
pub struct Logistic {
    mu: f64,
    sigma: f64,
}

impl Logistic {
    pub fn new(mu: f64, sigma: f64) -> Result<Self, DistError> {
        Ok(Logistic {
            mu: finite("logistic", "mu", mu)?,
            sigma: positive("logistic", "sigma", sigma)?,
        })
    }
}

/// 1 / (1 + e^-z) without overflow.
fn expit(z: f64) -> f64 {
    if z >= 0.0 {
        1.0 / (1.0 + (-z).exp())
    } else {
        let e = z.exp();
        e / (1.0 + e)
    }
}

impl Lifetime for Logistic {
    fn sf(&self, t: f64) -> f64 {
        expit(-(t - self.mu) / self.sigma)
    }
    fn cdf(&self, t: f64) -> f64 {
        expit((t - self.mu) / self.sigma)
    }
    fn pdf(&self, t: f64) -> f64 {
        let e = (-((t - self.mu) / self.sigma).abs()).exp();
        e / (self.sigma * (1.0 + e) * (1.0 + e))
    }
    fn hazard(&self, t: f64) -> f64 {
        self.cdf(t) / self.sigma
    }
    fn cumulative_hazard(&self, t: f64) -> f64 {
        // ln(1 + e^z), the softplus, written to stay finite for large z.
        let z = (t - self.mu) / self.sigma;
        if z > 0.0 {
            z + (-z).exp().ln_1p()
        } else {
            z.exp().ln_1p()
        }
    }
    fn mean(&self) -> f64 {
        self.mu
    }
    fn quantile(&self, p: f64) -> f64 {
        self.mu + self.sigma * (p.ln() - (-p).ln_1p())
    }
    fn isf(&self, q: f64) -> f64 {
        self.mu + self.sigma * ((-q).ln_1p() - q.ln())
    }
}
