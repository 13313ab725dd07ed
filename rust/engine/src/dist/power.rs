//! A life whose hazard is a fixed fraction `p` of another's: S(t) = S0(t)^p. Used for the
//! independent part of a common-cause member (rate basis): it keeps (1 - beta) of its hazard.
use super::{Dist, Lifetime};

#[derive(Debug, Clone)]
pub struct PowerSf {
    base: Box<Dist>,
    p: f64,
    mean: f64,
}

impl PowerSf {
    /// `p` in [0, 1].
    pub fn new(base: Dist, p: f64) -> Self {
        let mut d = PowerSf {
            base: Box::new(base),
            p,
            mean: f64::NAN,
        };
        // Mean as the integral of the quantile function over (0, 1), midpoint rule on a
        // fine grid (used for reporting only, never on the simulation's hot path).
        if p <= 0.0 {
            d.mean = f64::INFINITY;
            return d;
        }
        let n = 8192;
        d.mean = (0..n)
            .map(|i| d.quantile((i as f64 + 0.5) / n as f64))
            .sum::<f64>()
            / n as f64;
        d
    }
}

impl PowerSf {
    pub fn base(&self) -> &Dist {
        &self.base
    }
}

impl Lifetime for PowerSf {
    fn sf(&self, t: f64) -> f64 {
        self.base.sf(t).powf(self.p)
    }
    fn pdf(&self, t: f64) -> f64 {
        let s = self.base.sf(t);
        if s <= 0.0 {
            return 0.0;
        }
        self.p * s.powf(self.p - 1.0) * self.base.pdf(t)
    }
    fn mean(&self) -> f64 {
        self.mean
    }
    fn quantile(&self, q: f64) -> f64 {
        self.isf(1.0 - q)
    }
    fn isf(&self, q: f64) -> f64 {
        // S0(t)^p = q  <=>  S0(t) = q^(1/p); a zero share never fails.
        if self.p <= 0.0 {
            return if q <= 0.0 { 0.0 } else { f64::INFINITY };
        }
        self.base.isf(q.powf(1.0 / self.p))
    }
    fn hazard(&self, t: f64) -> f64 {
        self.p * self.base.hazard(t)
    }
    fn cumulative_hazard(&self, t: f64) -> f64 {
        self.p * self.base.cumulative_hazard(t)
    }
}
