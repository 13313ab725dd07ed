//! A life whose hazard is a fixed fraction `p` of another's: S(t) = S0(t)^p. Used for the
//! independent part of a common-cause member (rate basis): it keeps (1 - beta) of its hazard.
use super::{Dist, Lifetime};

#[derive(Debug, Clone)]
pub struct PowerSf {
    base: Box<Dist>,
    p: f64,
}

impl PowerSf {
    /// `p` in [0, 1].
    pub fn new(base: Dist, p: f64) -> Self {
        PowerSf {
            base: Box::new(base),
            p,
        }
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
    fn cdf(&self, t: f64) -> f64 {
        // 1 - S0^p as -expm1(-p H0): 1 - sf cancels where S0 is close to 1
        if self.p <= 0.0 {
            return 0.0;
        }
        -(-self.p * self.base.cumulative_hazard(t)).exp_m1()
    }
    fn quantile(&self, q: f64) -> f64 {
        // F = q  <=>  F0 = 1 - (1 - q)^(1/p), through log1p/expm1: isf(1 - q) loses the
        // low tail (1 - q rounds), and quantile(1e-12) came back 2e-5 off
        if self.p <= 0.0 {
            return if q <= 0.0 {
                self.base.quantile(0.0)
            } else {
                f64::INFINITY
            };
        }
        if q > 0.5 {
            return self.isf(1.0 - q); // 1 - q is exact here, and F0 would round to 1
        }
        self.base.quantile(-((-q).ln_1p() / self.p).exp_m1())
    }
    fn isf(&self, q: f64) -> f64 {
        // S0(t)^p = q  <=>  S0(t) = q^(1/p); a zero share never fails: S = 1 everywhere, so
        // only q = 1 is reached (at the base's start)
        if self.p <= 0.0 {
            return if q >= 1.0 {
                self.base.isf(1.0)
            } else {
                f64::INFINITY
            };
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
    use crate::dist::testkit::*;
    use crate::dist::{Exponential, Gamma, LogNormal, Normal, Weibull};

    fn share(base: Dist, p: f64) -> Dist {
        Dist::PowerSf(PowerSf::new(base, p))
    }

    /// Shares of lives with no closed form for S^p: a gamma, a lognormal, a Weibull with
    /// a failure-free time (as S^p, not through `hazard_share`), and a small share of a
    /// normal.
    fn cases() -> Vec<Dist> {
        vec![
            share(Dist::Gamma(Gamma::new(2.5, 2.0, 0.0).unwrap()), 0.3),
            share(Dist::LogNormal(LogNormal::new(1.0, 0.5, 0.0).unwrap()), 0.9),
            share(Dist::Weibull(Weibull::new(100.0, 0.5, 20.0).unwrap()), 0.5),
            share(Dist::Normal(Normal::new(100.0, 10.0).unwrap()), 0.05),
        ]
    }

    #[test]
    fn draws_are_pinned() {
        assert_pinned(
            &draws(&cases()[0], 42, 4),
            &[
                14.199564127154218,
                16.41691228541756,
                7.275580043520956,
                3.3853818206297643,
            ],
        );
        assert_pinned(
            &draws(&cases()[3], 7, 3),
            &[143.9609044315443, 200.56956676310728, 137.56553636264186],
        );
        assert_pinned(
            &first_residuals(&cases()[0], 3.0, 42, 3),
            &[12.068658907139259, 14.264572572001093, 5.296104318262975],
        );
    }

    #[test]
    fn draws_fit_the_cdf() {
        for (i, d) in cases().iter().enumerate() {
            let xs = assert_fits(d, 100 + i as u64);
            assert_mean_of(d, &xs);
        }
        // a share 10% larger is seen
        let base = Dist::Gamma(Gamma::new(2.5, 2.0, 0.0).unwrap());
        assert_misfits(&cases()[0], &share(base, 0.33), 7);
    }

    #[test]
    fn residual_lives_follow_the_conditional_cdf() {
        for (i, d) in cases().iter().enumerate() {
            for p in [0.01, 0.5, 0.99] {
                assert_residual_fits(d, d.quantile(p), 200 + i as u64);
            }
        }
    }

    #[test]
    fn identities_hold_at_extreme_arguments() {
        for (i, d) in cases().iter().enumerate() {
            // the Weibull base has shape 0.5: an unbounded density at its location
            assert_sane(d, i != 2);
            // through the base's quantile and isf: its accuracy (the normal's erfc: 1e-10)
            assert_quantiles(d, 1e-10, true);
            assert_inverts(d, 1e-10);
            let ts = quantile_points(d);
            let lo = if i == 3 {
                f64::NEG_INFINITY
            } else {
                d.quantile(0.0)
            };
            assert_density(d, &ts, lo, 10.0, 1e-12);
        }
        assert_starts_at(&cases()[0], 0.0);
        assert_starts_at(&cases()[2], 20.0);
    }

    #[test]
    fn shares_of_exponential_and_weibull_lives_keep_their_family() {
        let e = Exponential::new(0.2, 0.0).unwrap();
        let w = Weibull::new(100.0, 2.0, 10.0).unwrap();
        for p in [0.05, 0.5, 1.0] {
            let (de, dw) = (
                hazard_share(Dist::Exponential(e), p),
                hazard_share(Dist::Weibull(w), p),
            );
            assert!(matches!(de, Dist::Exponential(_)) && matches!(dw, Dist::Weibull(_)));
            for t in [0.5, 15.0, 80.0, 300.0] {
                // S^p, against the base written out
                assert!(
                    (de.sf(t) - e.sf(t).powf(p)).abs() <= 1e-14 * de.sf(t),
                    "{p} {t}"
                );
                assert!(
                    (dw.sf(t) - w.sf(t).powf(p)).abs() <= 1e-14 * dw.sf(t),
                    "{p} {t}"
                );
            }
        }
        // a zero share never fails: every draw is infinite, S = 1, F = 0
        let never = share(Dist::Gamma(Gamma::new(2.5, 2.0, 3.0).unwrap()), 0.0);
        assert!(draws(&never, 5, 100).iter().all(|x| x.is_infinite()));
        assert_eq!(
            (never.sf(1e9), never.cdf(1e9), never.mean()),
            (1.0, 0.0, f64::INFINITY)
        );
        assert_eq!(
            (
                never.quantile(0.0),
                never.quantile(0.5),
                never.isf(1.0),
                never.isf(0.0)
            ),
            (3.0, f64::INFINITY, 3.0, f64::INFINITY)
        );
        // other families and a zero share stay as S^p
        assert!(matches!(
            hazard_share(Dist::Exponential(e), 0.0),
            Dist::PowerSf(_)
        ));
        assert!(matches!(
            hazard_share(cases()[0].clone(), 0.5),
            Dist::PowerSf(_)
        ));
    }

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
