//! Gumbel of the smallest extreme value (scipy `gumbel_l`): location `mu`, scale `sigma`.
use super::{DistError, Lifetime, finite, positive};

const EULER_GAMMA: f64 = 0.577_215_664_901_532_9;

#[derive(Debug, Clone, Copy)]
pub struct Gumbel {
    mu: f64,
    sigma: f64,
}

impl Gumbel {
    pub fn new(mu: f64, sigma: f64) -> Result<Self, DistError> {
        Ok(Gumbel {
            mu: finite("gumbel", "mu", mu)?,
            sigma: positive("gumbel", "sigma", sigma)?,
        })
    }
    fn ez(&self, t: f64) -> f64 {
        ((t - self.mu) / self.sigma).exp()
    }
}

impl Lifetime for Gumbel {
    fn sf(&self, t: f64) -> f64 {
        (-self.ez(t)).exp()
    }
    fn cdf(&self, t: f64) -> f64 {
        -(-self.ez(t)).exp_m1()
    }
    fn pdf(&self, t: f64) -> f64 {
        let z = (t - self.mu) / self.sigma;
        (z - z.exp()).exp() / self.sigma
    }
    fn hazard(&self, t: f64) -> f64 {
        self.ez(t) / self.sigma
    }
    fn cumulative_hazard(&self, t: f64) -> f64 {
        self.ez(t)
    }
    fn mean(&self) -> f64 {
        self.mu - self.sigma * EULER_GAMMA
    }
    fn quantile(&self, p: f64) -> f64 {
        self.mu + self.sigma * (-(-p).ln_1p()).ln()
    }
    fn isf(&self, q: f64) -> f64 {
        self.mu + self.sigma * (-q.ln()).ln()
    }
}
