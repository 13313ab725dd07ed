//! Exponential life: constant hazard `failure_rate`, optional location `gamma`.
use super::ziggurat::{Tables, tables};
use super::{DistError, Lifetime, location, positive};
use crate::rng::Stream;

#[derive(Clone, Copy)]
pub struct Exponential {
    rate: f64,
    loc: f64,
    mean_life: f64,
    zig: &'static Tables,
}

impl std::fmt::Debug for Exponential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exponential")
            .field("rate", &self.rate)
            .field("loc", &self.loc)
            .finish()
    }
}

impl Exponential {
    /// The same life keeping a share `p` > 0 of its hazard (S^p): rate times p.
    pub(crate) fn hazard_share(&self, p: f64) -> Result<Self, DistError> {
        Exponential::new(self.rate * p, self.loc)
    }

    pub fn new(failure_rate: f64, gamma: f64) -> Result<Self, DistError> {
        let rate = positive("exponential", "failure_rate", failure_rate)?;
        Ok(Exponential {
            rate,
            loc: location("exponential", gamma)?,
            mean_life: 1.0 / rate,
            zig: tables(),
        })
    }

    pub fn rate(&self) -> f64 {
        self.rate
    }

    pub fn location(&self) -> f64 {
        self.loc
    }
}

impl Lifetime for Exponential {
    fn sf(&self, t: f64) -> f64 {
        if t <= self.loc {
            1.0
        } else {
            (-self.rate * (t - self.loc)).exp()
        }
    }
    fn cdf(&self, t: f64) -> f64 {
        if t <= self.loc {
            0.0
        } else {
            -(-self.rate * (t - self.loc)).exp_m1()
        }
    }
    fn pdf(&self, t: f64) -> f64 {
        if t < self.loc {
            0.0
        } else {
            self.rate * (-self.rate * (t - self.loc)).exp()
        }
    }
    fn hazard(&self, t: f64) -> f64 {
        if t < self.loc { 0.0 } else { self.rate }
    }
    fn cumulative_hazard(&self, t: f64) -> f64 {
        self.rate * (t - self.loc).max(0.0)
    }
    fn mean(&self) -> f64 {
        self.loc + 1.0 / self.rate
    }
    fn quantile(&self, p: f64) -> f64 {
        self.loc - (-p).ln_1p() / self.rate
    }
    fn isf(&self, q: f64) -> f64 {
        self.loc - q.ln() / self.rate
    }
    #[inline(always)]
    fn sample(&self, rng: &mut Stream) -> f64 {
        // Antithetic runs invert (monotone in U); the ziggurat is not.
        let e = if rng.inverts() {
            -rng.uniform().ln()
        } else {
            self.zig.exp1(rng)
        };
        self.loc + e * self.mean_life
    }
    #[inline]
    fn sample_residual(&self, age: f64, rng: &mut Stream) -> f64 {
        // Memoryless past the failure-free time.
        let e = if rng.inverts() {
            -rng.uniform().ln()
        } else {
            self.zig.exp1(rng)
        };
        (self.loc - age).max(0.0) + e * self.mean_life
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::Dist;
    use crate::dist::testkit::*;

    fn e(rate: f64, gamma: f64) -> Dist {
        Dist::Exponential(Exponential::new(rate, gamma).unwrap())
    }

    /// Ordinary, very long and very short mean lives, and a failure-free time.
    fn cases() -> Vec<Dist> {
        vec![e(0.5, 0.0), e(1e-4, 0.0), e(1e3, 0.0), e(3.0, 10.0)]
    }

    #[test]
    fn draws_are_pinned() {
        // the ziggurat path: the simulator's most frequent draw
        assert_pinned(
            &draws(&e(0.5, 0.0), 42, 4),
            &[
                0.508281886688717,
                2.014914046192139,
                5.851823540160073,
                4.860726853616731,
            ],
        );
        assert_pinned(
            &draws(&e(3.0, 10.0), 7, 3),
            &[10.597996864691181, 10.02221001206444, 10.279763625036322],
        );
        // memoryless: past the location a remaining life is a fresh draw, the same numbers
        assert_pinned(
            &first_residuals(&e(0.5, 0.0), 3.0, 42, 3),
            &[0.508281886688717, 2.014914046192139, 5.851823540160073],
        );
    }

    #[test]
    fn draws_fit_the_cdf() {
        for (i, d) in cases().iter().enumerate() {
            let xs = assert_fits(d, 100 + i as u64);
            assert_mean_of(d, &xs);
        }
        // a 5% change of the rate is seen
        assert_misfits(&e(0.5, 0.0), &e(0.525, 0.0), 7);
    }

    #[test]
    fn residual_lives_follow_the_conditional_cdf() {
        assert_residuals_fit(&cases(), 200);
        // inside the failure-free time the rest of it is still to run
        assert_residual_fits(&e(3.0, 10.0), 4.0, 9);
    }

    #[test]
    fn identities_hold_at_extreme_arguments() {
        for d in cases() {
            let Dist::Exponential(x) = &d else {
                unreachable!()
            };
            assert_sane(&d, true);
            assert_starts_at(&d, x.loc);
            // closed forms through log1p/expm1: a few ulps, plus the ulp of x (kit's slack)
            assert_quantiles(&d, 1e-12, true);
            assert_inverts(&d, 1e-12);
            let ts = quantile_points(&d);
            assert_density(&d, &ts, x.loc, x.mean_life, 1e-12);
        }
    }
}
