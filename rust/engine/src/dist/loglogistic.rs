//! Log-logistic life (scipy `fisk`): scale `alpha` (the median), shape `beta`, optional
//! location `gamma`.
use super::{DistError, Lifetime, location, positive};
use crate::rng::Stream;

/// Odds beyond which (1 + y)^2 overflows: pdf and hazard then divide through by y.
const HUGE_ODDS: f64 = 1e150;

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
        if y == f64::INFINITY {
            return 1.0; // inf / inf
        }
        y / (1.0 + y)
    }
    fn pdf(&self, t: f64) -> f64 {
        if t <= self.loc {
            return 0.0;
        }
        let z = (t - self.loc) / self.alpha;
        let y = z.powf(self.beta);
        if y > HUGE_ODDS {
            // (1 + y)^2 and z^(beta - 1) overflow (inf / inf); the same ratio over 1 / y
            let w = 1.0 / y;
            return self.beta / (self.alpha * z) * w / ((1.0 + w) * (1.0 + w));
        }
        self.beta / self.alpha * z.powf(self.beta - 1.0) / ((1.0 + y) * (1.0 + y))
    }
    fn hazard(&self, t: f64) -> f64 {
        if t <= self.loc {
            return 0.0;
        }
        let z = (t - self.loc) / self.alpha;
        let y = z.powf(self.beta);
        if y > HUGE_ODDS {
            return self.beta / (self.alpha * z) / (1.0 + 1.0 / y); // as in pdf
        }
        self.beta / self.alpha * z.powf(self.beta - 1.0) / (1.0 + y)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::Dist;
    use crate::dist::testkit::*;

    fn ll(alpha: f64, beta: f64, gamma: f64) -> Dist {
        Dist::LogLogistic(LogLogistic::new(alpha, beta, gamma).unwrap())
    }

    /// A tail so heavy the mean is infinite (beta 0.5), ordinary, steep (beta 15), and a
    /// location shift.
    fn cases() -> Vec<Dist> {
        vec![
            ll(100.0, 0.5, 0.0),
            ll(2.0, 4.0, 0.0),
            ll(100.0, 15.0, 0.0),
            ll(50.0, 3.0, 20.0),
        ]
    }

    #[test]
    fn draws_are_pinned() {
        assert_pinned(
            &draws(&ll(2.0, 4.0, 0.0), 42, 4),
            &[
                2.5321096301022794,
                2.7738700150365987,
                1.7735531534016353,
                1.2295302150847183,
            ],
        );
        assert_pinned(
            &draws(&ll(50.0, 3.0, 20.0), 7, 3),
            &[67.02775868615369, 139.74948745397552, 62.095712866340385],
        );
        assert_pinned(
            &first_residuals(&ll(2.0, 4.0, 0.0), 2.0, 42, 3),
            &[1.1480841237367478, 1.40490359790864, 0.44587939578022784],
        );
    }

    #[test]
    fn draws_fit_the_cdf() {
        for (i, d) in cases().iter().enumerate() {
            let xs = assert_fits(d, 100 + i as u64);
            let Dist::LogLogistic(x) = d else {
                unreachable!()
            };
            // the variance is finite only for beta > 2
            if x.beta > 2.0 {
                assert_mean_of(d, &xs);
            }
        }
        assert_eq!(ll(100.0, 1.0, 0.0).mean(), f64::INFINITY);
        // a 5% scale and a 10% shape change are seen
        assert_misfits(&ll(2.0, 4.0, 0.0), &ll(2.1, 4.0, 0.0), 7);
        assert_misfits(&ll(2.0, 4.0, 0.0), &ll(2.0, 4.4, 0.0), 7);
    }

    #[test]
    fn residual_lives_follow_the_conditional_cdf() {
        assert_residuals_fit(&cases(), 200);
    }

    #[test]
    fn identities_hold_at_extreme_arguments() {
        for d in cases() {
            let Dist::LogLogistic(x) = &d else {
                unreachable!()
            };
            // beta < 1: the density is unbounded at the location
            assert_sane(&d, x.beta >= 1.0);
            assert_starts_at(&d, x.loc);
            assert_quantiles(&d, 1e-12, true);
            assert_inverts(&d, 1e-12);
            let ts = quantile_points(&d);
            assert_density(&d, &ts, x.loc, x.alpha, 1e-12);
        }
    }
}
