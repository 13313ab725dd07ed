//! Normal life: mean `mu`, standard deviation `sigma` (negative draws are a zero life in
//! the simulator, which clamps times at zero).
use super::{DistError, Lifetime, finite, positive};
use statrs::function::erf::{erfc, erfc_inv};
use std::f64::consts::{FRAC_1_SQRT_2, SQRT_2};

pub(crate) const INV_SQRT_2PI: f64 = 0.398_942_280_401_432_7;

/// Standard normal survival, 0.5 erfc(z / sqrt 2): accurate in the upper tail.
#[inline]
pub(crate) fn phi_c(z: f64) -> f64 {
    0.5 * erfc(z * FRAC_1_SQRT_2)
}

/// Standard normal quantile at upper-tail probability q.
#[inline]
pub(crate) fn phi_c_inv(q: f64) -> f64 {
    SQRT_2 * erfc_inv(2.0 * q)
}

#[derive(Debug, Clone, Copy)]
pub struct Normal {
    mu: f64,
    sigma: f64,
}

impl Normal {
    pub fn new(mu: f64, sigma: f64) -> Result<Self, DistError> {
        Ok(Normal {
            mu: finite("normal", "mu", mu)?,
            sigma: positive("normal", "sigma", sigma)?,
        })
    }
}

impl Lifetime for Normal {
    fn sf(&self, t: f64) -> f64 {
        phi_c((t - self.mu) / self.sigma)
    }
    fn cdf(&self, t: f64) -> f64 {
        phi_c((self.mu - t) / self.sigma)
    }
    fn pdf(&self, t: f64) -> f64 {
        let z = (t - self.mu) / self.sigma;
        INV_SQRT_2PI / self.sigma * (-0.5 * z * z).exp()
    }
    fn mean(&self) -> f64 {
        self.mu
    }
    fn quantile(&self, p: f64) -> f64 {
        self.mu - self.sigma * phi_c_inv(p)
    }
    fn isf(&self, q: f64) -> f64 {
        self.mu + self.sigma * phi_c_inv(q)
    }
}
