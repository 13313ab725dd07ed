//! Lognormal life: `mu`, `sigma` of ln(t - gamma), optional location `gamma`.
use super::normal::{INV_SQRT_2PI, phi_c, phi_c_inv};
use super::{DistError, Lifetime, finite, location, positive};

#[derive(Debug, Clone, Copy)]
pub struct LogNormal {
    mu: f64,
    sigma: f64,
    loc: f64,
}

impl LogNormal {
    pub fn new(mu: f64, sigma: f64, gamma: f64) -> Result<Self, DistError> {
        Ok(LogNormal {
            mu: finite("lognormal", "mu", mu)?,
            sigma: positive("lognormal", "sigma", sigma)?,
            loc: location("lognormal", gamma)?,
        })
    }
    fn z(&self, t: f64) -> f64 {
        ((t - self.loc).ln() - self.mu) / self.sigma
    }
}

impl Lifetime for LogNormal {
    fn sf(&self, t: f64) -> f64 {
        if t <= self.loc { 1.0 } else { phi_c(self.z(t)) }
    }
    fn cdf(&self, t: f64) -> f64 {
        if t <= self.loc {
            0.0
        } else {
            phi_c(-self.z(t))
        }
    }
    fn pdf(&self, t: f64) -> f64 {
        if t <= self.loc {
            return 0.0;
        }
        let z = self.z(t);
        INV_SQRT_2PI / (self.sigma * (t - self.loc)) * (-0.5 * z * z).exp()
    }
    fn mean(&self) -> f64 {
        self.loc + (self.mu + 0.5 * self.sigma * self.sigma).exp()
    }
    fn quantile(&self, p: f64) -> f64 {
        self.loc + (self.mu - self.sigma * phi_c_inv(p)).exp()
    }
    fn isf(&self, q: f64) -> f64 {
        self.loc + (self.mu + self.sigma * phi_c_inv(q)).exp()
    }
}
