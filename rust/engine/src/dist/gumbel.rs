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
        if z == f64::INFINITY {
            return 0.0; // z - e^z would be inf - inf
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::Dist;
    use crate::dist::testkit::*;

    fn gu(mu: f64, sigma: f64) -> Dist {
        Dist::Gumbel(Gumbel::new(mu, sigma).unwrap())
    }

    /// Ordinary, standard, narrow and negative, and far from 0.
    fn cases() -> Vec<Dist> {
        vec![
            gu(100.0, 10.0),
            gu(0.0, 1.0),
            gu(-50.0, 0.2),
            gu(1e4, 500.0),
        ]
    }

    #[test]
    fn draws_are_pinned() {
        assert_pinned(
            &draws(&gu(100.0, 10.0), 42, 4),
            &[
                102.40874682228228,
                104.36707726633489,
                92.68999115566922,
                79.86440957976866,
            ],
        );
        assert_pinned(
            &first_residuals(&gu(100.0, 10.0), 90.0, 42, 3),
            &[14.94843192605849, 16.499698773831597, 8.366646636336242],
        );
    }

    #[test]
    fn draws_fit_the_cdf() {
        for (i, d) in cases().iter().enumerate() {
            let xs = assert_fits(d, 100 + i as u64);
            assert_mean_of(d, &xs);
        }
        // a shift of 0.05 sigma, and a 10% wider sigma, are seen
        assert_misfits(&gu(100.0, 10.0), &gu(100.5, 10.0), 7);
        assert_misfits(&gu(100.0, 10.0), &gu(100.0, 11.0), 7);
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
        for d in cases() {
            let Dist::Gumbel(x) = &d else { unreachable!() };
            assert_sane(&d, true);
            assert_quantiles(&d, 1e-12, true);
            assert_inverts(&d, 1e-12);
            let ts = quantile_points(&d);
            // exp(z - e^z) carries e^z ulps of error in its exponent: 1e-11 up to p = 0.999
            assert_density(&d, &ts, f64::NEG_INFINITY, x.sigma, 1e-11);
        }
    }
}
