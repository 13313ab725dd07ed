//! Uniform life on [a, b].
use super::{DistError, Lifetime, finite};

#[derive(Debug, Clone, Copy)]
pub struct Uniform {
    a: f64,
    b: f64,
    width: f64,
}

impl Uniform {
    pub fn new(a: f64, b: f64) -> Result<Self, DistError> {
        let (a, b) = (finite("uniform", "a", a)?, finite("uniform", "b", b)?);
        if a >= b {
            return Err(DistError(format!(
                "uniform: b must be greater than a (got a={a}, b={b})"
            )));
        }
        Ok(Uniform { a, b, width: b - a })
    }
}

impl Lifetime for Uniform {
    fn sf(&self, t: f64) -> f64 {
        ((self.b - t) / self.width).clamp(0.0, 1.0)
    }
    fn cdf(&self, t: f64) -> f64 {
        ((t - self.a) / self.width).clamp(0.0, 1.0)
    }
    fn pdf(&self, t: f64) -> f64 {
        if t < self.a || t > self.b {
            0.0
        } else {
            1.0 / self.width
        }
    }
    fn hazard(&self, t: f64) -> f64 {
        if t < self.a {
            0.0
        } else if t >= self.b {
            f64::INFINITY
        } else {
            1.0 / (self.b - t)
        }
    }
    fn mean(&self) -> f64 {
        0.5 * (self.a + self.b)
    }
    fn quantile(&self, p: f64) -> f64 {
        self.a + p * self.width
    }
    fn isf(&self, q: f64) -> f64 {
        self.b - q * self.width
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::Dist;
    use crate::dist::testkit::*;

    fn u(a: f64, b: f64) -> Dist {
        Dist::Uniform(Uniform::new(a, b).unwrap())
    }

    /// The unit interval, a shifted one, one below 0, and a narrow one far from 0.
    fn cases() -> Vec<Dist> {
        vec![u(0.0, 1.0), u(2.0, 5.0), u(-10.0, -1.0), u(1e6, 1e6 + 1.0)]
    }

    #[test]
    fn draws_are_pinned() {
        assert_pinned(
            &draws(&u(2.0, 5.0), 42, 4),
            &[
                4.159492402684264,
                4.3617284115182215,
                3.1462967546671896,
                2.3749508026216573,
            ],
        );
        assert_pinned(
            &first_residuals(&u(2.0, 5.0), 3.0, 42, 3),
            &[1.439661601789509, 1.574485607678814, 0.7641978364447932],
        );
    }

    #[test]
    fn draws_fit_the_cdf() {
        for (i, d) in cases().iter().enumerate() {
            let xs = assert_fits(d, 100 + i as u64);
            assert_mean_of(d, &xs);
        }
        // an end moved by 5% of the width is seen
        assert_misfits(&u(2.0, 5.0), &u(2.0, 5.15), 7);
    }

    #[test]
    fn residual_lives_follow_the_conditional_cdf() {
        assert_residuals_fit(&cases(), 200);
    }

    #[test]
    fn identities_hold_at_extreme_arguments() {
        for d in cases() {
            let Dist::Uniform(x) = &d else { unreachable!() };
            assert_sane(&d, true);
            assert_starts_at(&d, x.a);
            assert_eq!(
                (d.sf(x.b), d.cdf(x.b), d.quantile(1.0), d.isf(0.0)),
                (0.0, 1.0, x.b, x.b)
            );
            assert_quantiles(&d, 1e-12, true);
            assert_inverts(&d, 1e-12);
            let ts: Vec<f64> = [0.01, 0.3, 0.7, 0.99]
                .iter()
                .map(|&p| d.quantile(p))
                .collect();
            assert_density(&d, &ts, x.a, x.width, 1e-12);
        }
    }
}
