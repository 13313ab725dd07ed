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

/// A life keeping a share `p` of `base`'s hazard: in closed form for exponential and
/// Weibull lives (their own fast samplers), else as S^p.
pub fn hazard_share(base: Dist, p: f64) -> Dist {
    if p > 0.0 {
        match &base {
            Dist::Exponential(e) => {
                if let Ok(x) = e.hazard_share(p) {
                    return Dist::Exponential(x);
                }
            }
            Dist::Weibull(w) => {
                if let Ok(x) = w.hazard_share(p) {
                    return Dist::Weibull(x);
                }
            }
            _ => {}
        }
    }
    Dist::PowerSf(PowerSf::new(base, p))
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
        if self.p <= 0.0 {
            return f64::INFINITY;
        }
        // The integral of the quantile function over (0, 1), midpoint rule on a fine grid
        // (computed when asked: the simulator never needs it).
        let n = 8192;
        (0..n)
            .map(|i| self.quantile((i as f64 + 0.5) / n as f64))
            .sum::<f64>()
            / n as f64
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::{Exponential, Weibull};

    #[test]
    fn keeps_a_share_of_the_hazard() {
        // Weibull(100, 2) with half its hazard: S = S0^0.5, i.e. Weibull(100 * sqrt(2), 2).
        let base = Dist::Weibull(Weibull::new(100.0, 2.0, 0.0).unwrap());
        let half = PowerSf::new(base.clone(), 0.5);
        let same = Weibull::new(100.0 * 2f64.sqrt(), 2.0, 0.0).unwrap();
        for t in [1.0, 30.0, 100.0, 250.0] {
            assert!((half.sf(t) - same.sf(t)).abs() < 1e-12, "{t}");
            assert!((half.pdf(t) - same.pdf(t)).abs() < 1e-12, "{t}");
            assert!((half.isf(half.sf(t)) - t).abs() < 1e-9 * t.max(1.0), "{t}");
            assert!((half.hazard(t) - 0.5 * base.hazard(t)).abs() < 1e-12, "{t}");
        }
        assert!((half.mean() - same.mean()).abs() < 1e-3 * same.mean());
        // An exponential keeps its form: rate times the share; a zero share never fails.
        let e = PowerSf::new(Dist::Exponential(Exponential::new(0.2, 0.0).unwrap()), 0.25);
        assert!((e.sf(3.0) - (-0.05f64 * 3.0).exp()).abs() < 1e-15);
        let none = PowerSf::new(Dist::Exponential(Exponential::new(0.2, 0.0).unwrap()), 0.0);
        assert_eq!(none.isf(0.3), f64::INFINITY);
    }
}
