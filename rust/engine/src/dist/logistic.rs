//! Logistic life: location `mu` (the median), scale `sigma`.
use super::{DistError, Lifetime, finite, positive};

#[derive(Debug, Clone, Copy)]
pub struct Logistic {
    mu: f64,
    sigma: f64,
}

impl Logistic {
    pub fn new(mu: f64, sigma: f64) -> Result<Self, DistError> {
        Ok(Logistic {
            mu: finite("logistic", "mu", mu)?,
            sigma: positive("logistic", "sigma", sigma)?,
        })
    }
}

/// 1 / (1 + e^-z) without overflow.
fn expit(z: f64) -> f64 {
    if z >= 0.0 {
        1.0 / (1.0 + (-z).exp())
    } else {
        let e = z.exp();
        e / (1.0 + e)
    }
}

impl Lifetime for Logistic {
    fn sf(&self, t: f64) -> f64 {
        expit(-(t - self.mu) / self.sigma)
    }
    fn cdf(&self, t: f64) -> f64 {
        expit((t - self.mu) / self.sigma)
    }
    fn pdf(&self, t: f64) -> f64 {
        let e = (-((t - self.mu) / self.sigma).abs()).exp();
        e / (self.sigma * (1.0 + e) * (1.0 + e))
    }
    fn hazard(&self, t: f64) -> f64 {
        self.cdf(t) / self.sigma
    }
    fn cumulative_hazard(&self, t: f64) -> f64 {
        // ln(1 + e^z), the softplus, written to stay finite for large z.
        let z = (t - self.mu) / self.sigma;
        if z > 0.0 {
            z + (-z).exp().ln_1p()
        } else {
            z.exp().ln_1p()
        }
    }
    fn mean(&self) -> f64 {
        self.mu
    }
    fn quantile(&self, p: f64) -> f64 {
        self.mu + self.sigma * (p.ln() - (-p).ln_1p())
    }
    fn isf(&self, q: f64) -> f64 {
        self.mu + self.sigma * ((-q).ln_1p() - q.ln())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::Dist;
    use crate::dist::testkit::*;

    fn lo(mu: f64, sigma: f64) -> Dist {
        Dist::Logistic(Logistic::new(mu, sigma).unwrap())
    }

    /// Ordinary, standard, narrow and negative, and wide.
    fn cases() -> Vec<Dist> {
        vec![lo(100.0, 10.0), lo(0.0, 1.0), lo(-3.0, 0.01), lo(1e5, 1e4)]
    }

    #[test]
    fn draws_are_pinned() {
        assert_pinned(
            &draws(&lo(100.0, 10.0), 42, 4),
            &[
                109.43622482453459,
                113.0838512768271,
                95.19351140513551,
                80.53939907646428,
            ],
        );
        assert_pinned(
            &first_residuals(&lo(100.0, 10.0), 110.0, 42, 3),
            &[15.072842423611846, 18.01943878006773, 6.1295182164354856],
        );
    }

    #[test]
    fn draws_fit_the_cdf() {
        for (i, d) in cases().iter().enumerate() {
            let xs = assert_fits(d, 100 + i as u64);
            assert_mean_of(d, &xs);
        }
        // a shift of 0.1 sigma, and a 10% wider sigma, are seen
        assert_misfits(&lo(100.0, 10.0), &lo(101.0, 10.0), 7);
        assert_misfits(&lo(100.0, 10.0), &lo(100.0, 11.0), 7);
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
            let Dist::Logistic(x) = &d else {
                unreachable!()
            };
            assert_sane(&d, true);
            assert_quantiles(&d, 1e-12, true);
            assert_inverts(&d, 1e-12);
            let ts = quantile_points(&d);
            assert_density(&d, &ts, f64::NEG_INFINITY, x.sigma, 1e-12);
        }
    }
}
