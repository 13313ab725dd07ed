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
        let survival = (-z.powf(self.beta)).exp();
        if survival == 0.0 {
            // far out z^(beta - 1) overflows too, and inf * 0 would be NaN
            return 0.0;
        }
        self.beta / self.alpha * z.powf(self.beta - 1.0) * survival
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::Dist;
    use crate::dist::testkit::*;

    fn w(alpha: f64, beta: f64, gamma: f64) -> Dist {
        Dist::Weibull(Weibull::new(alpha, beta, gamma).unwrap())
    }

    /// Infant mortality (beta << 1), random, wear-out, a very steep wear-out (beta >> 1) and
    /// a failure-free time (location 200).
    fn shapes() -> Vec<Dist> {
        vec![
            w(100.0, 0.3, 0.0),
            w(2.0, 1.0, 0.0),
            w(1000.0, 3.5, 0.0),
            w(50.0, 20.0, 0.0),
            w(100.0, 1.5, 200.0),
        ]
    }

    #[test]
    fn draws_are_pinned() {
        assert_pinned(
            &draws(&w(100.0, 2.0, 0.0), 42, 4),
            &[
                112.79900601509374,
                124.40272053331734,
                69.38493324809423,
                36.53938299174369,
            ],
        );
        assert_pinned(
            &draws(&w(100.0, 0.5, 30.0), 7, 3),
            &[66.65565273073808, 753.8264466911227, 51.90052066059823],
        );
        assert_pinned(
            &first_residuals(&w(100.0, 2.0, 0.0), 80.0, 42, 3),
            &[58.28816203129304, 67.90549981691231, 25.89744549252589],
        );
    }

    #[test]
    fn draws_fit_the_cdf() {
        for (i, d) in shapes().iter().enumerate() {
            let xs = assert_fits(d, 100 + i as u64);
            assert_mean_of(d, &xs);
        }
        // what the checks must be able to see: a 5% scale and a 10% shape change
        assert_misfits(&w(100.0, 2.0, 0.0), &w(105.0, 2.0, 0.0), 7);
        assert_misfits(&w(100.0, 2.0, 0.0), &w(100.0, 2.2, 0.0), 7);
    }

    #[test]
    fn residual_lives_follow_the_conditional_cdf() {
        assert_residuals_fit(&shapes(), 200);
        // an age still inside the failure-free time
        assert_residual_fits(&w(100.0, 1.5, 200.0), 50.0, 9);
    }

    #[test]
    fn identities_hold_at_extreme_arguments() {
        for d in shapes() {
            let Dist::Weibull(x) = &d else { unreachable!() };
            // beta < 1: the density is unbounded at the location, rightly +inf there
            assert_sane(&d, x.beta >= 1.0);
            assert_starts_at(&d, x.loc);
            // closed forms: a few ulps, the rest is the ulp of x (in the kit's slack)
            assert_quantiles(&d, 1e-12, true);
            assert_inverts(&d, 1e-12);
            let ts = quantile_points(&d);
            assert_density(&d, &ts, x.loc, x.alpha, 1e-12);
        }
    }
}
