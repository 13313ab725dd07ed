//! Log-logistic life (scipy `fisk`): scale `alpha` (the median), shape `beta`, optional
//! location `gamma`.
use super::{DistError, Lifetime, location, positive};
use crate::rng::Stream;

#[derive(Debug, Clone, Copy)]
pub struct LogLogistic {
    alpha: f64,
    beta: f64,
    loc: f64,
}

impl LogLogistic {
    pub fn new(alpha: f64, beta: f64, gamma: f64) -> Result<Self, DistError> {
        Ok(LogLogistic {
            alpha: positive("loglogistic", "alpha", alpha)?,
            beta: positive("loglogistic", "beta", beta)?,
            loc: location("loglogistic", gamma)?,
        })
    }
    /// (t - gamma)^beta / alpha^beta, the odds of failure by t.
    fn odds(&self, t: f64) -> f64 {
        if t <= self.loc {
            0.0
        } else {
            ((t - self.loc) / self.alpha).powf(self.beta)
        }
    }
}

impl Lifetime for LogLogistic {
    fn sf(&self, t: f64) -> f64 {
        1.0 / (1.0 + self.odds(t))
    }
    fn cdf(&self, t: f64) -> f64 {
        let y = self.odds(t);
        y / (1.0 + y)
    }
    fn pdf(&self, t: f64) -> f64 {
        if t <= self.loc {
            return 0.0;
        }
        let z = (t - self.loc) / self.alpha;
        let y = z.powf(self.beta);
        self.beta / self.alpha * z.powf(self.beta - 1.0) / ((1.0 + y) * (1.0 + y))
    }
    fn hazard(&self, t: f64) -> f64 {
        if t <= self.loc {
            return 0.0;
        }
        let z = (t - self.loc) / self.alpha;
        self.beta / self.alpha * z.powf(self.beta - 1.0) / (1.0 + z.powf(self.beta))
    }
    fn cumulative_hazard(&self, t: f64) -> f64 {
        self.odds(t).ln_1p()
    }
    fn mean(&self) -> f64 {
        if self.beta <= 1.0 {
            return f64::INFINITY;
        }
        let b = std::f64::consts::PI / self.beta;
        self.loc + self.alpha * b / b.sin()
    }
    fn quantile(&self, p: f64) -> f64 {
        self.loc + self.alpha * (p / (1.0 - p)).powf(1.0 / self.beta)
    }
    fn isf(&self, q: f64) -> f64 {
        self.loc + self.alpha * ((1.0 - q) / q).powf(1.0 / self.beta)
    }
    fn sample(&self, rng: &mut Stream) -> f64 {
        self.isf(rng.uniform())
    }
}
