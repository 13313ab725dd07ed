//! Weibull life: scale `alpha`, shape `beta`, optional location `gamma`.
use super::{DistError, Lifetime, location, positive};
use crate::rng::Stream;

#[derive(Debug, Clone, Copy)]
pub struct Weibull {
    alpha: f64,
    beta: f64,
    loc: f64,
    inv_beta: f64,
}

impl Weibull {
    /// The same life keeping a share `p` > 0 of its hazard (S^p): scale times p^(-1/beta).
    pub(crate) fn hazard_share(&self, p: f64) -> Result<Self, DistError> {
        Weibull::new(self.alpha * p.powf(-self.inv_beta), self.beta, self.loc)
    }

    pub fn new(alpha: f64, beta: f64, gamma: f64) -> Result<Self, DistError> {
        let beta = positive("weibull", "beta", beta)?;
        Ok(Weibull {
            alpha: positive("weibull", "alpha", alpha)?,
            beta,
            loc: location("weibull", gamma)?,
            inv_beta: 1.0 / beta,
        })
    }
    #[inline]
    fn h(&self, t: f64) -> f64 {
        if t <= self.loc {
            0.0
        } else {
            ((t - self.loc) / self.alpha).powf(self.beta)
        }
    }
}

impl Lifetime for Weibull {
    fn sf(&self, t: f64) -> f64 {
        (-self.h(t)).exp()
    }
    fn cdf(&self, t: f64) -> f64 {
        -(-self.h(t)).exp_m1()
    }
    fn pdf(&self, t: f64) -> f64 {
        if t < self.loc {
            return 0.0;
        }
        let z = (t - self.loc) / self.alpha;
        self.beta / self.alpha * z.powf(self.beta - 1.0) * (-z.powf(self.beta)).exp()
    }
    fn hazard(&self, t: f64) -> f64 {
        if t < self.loc {
            return 0.0;
        }
        self.beta / self.alpha * ((t - self.loc) / self.alpha).powf(self.beta - 1.0)
    }
    fn cumulative_hazard(&self, t: f64) -> f64 {
        self.h(t)
    }
    fn mean(&self) -> f64 {
        self.loc + self.alpha * statrs::function::gamma::gamma(1.0 + self.inv_beta)
    }
    fn quantile(&self, p: f64) -> f64 {
        self.loc + self.alpha * (-(-p).ln_1p()).powf(self.inv_beta)
    }
    fn isf(&self, q: f64) -> f64 {
        self.loc + self.alpha * (-q.ln()).powf(self.inv_beta)
    }
    #[inline]
    fn sample(&self, rng: &mut Stream) -> f64 {
        self.loc + self.alpha * (-rng.uniform().ln()).powf(self.inv_beta)
    }
    #[inline]
    fn sample_residual(&self, age: f64, rng: &mut Stream) -> f64 {
        // Invert H(age + x) = H(age) - ln U in closed form.
        let total = self.h(age) - rng.uniform().ln();
        (self.loc + self.alpha * total.powf(self.inv_beta) - age).max(0.0)
    }
}
