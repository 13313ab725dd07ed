//! Gamma life: shape `alpha`, scale `beta` (mean gamma + alpha * beta), as the service names
//! them, with an optional location `gamma` (reliability's Gamma_3P).
use super::normal::phi_c_inv;
use super::solve::root_with_tol;
use super::{DistError, Lifetime, location, positive};
use crate::rng::Stream;
use statrs::function::gamma::{gamma_lr, gamma_ur, ln_gamma};
use statrs::prec::DEFAULT_F64_ACC;

/// Regularised lower incomplete gamma P(a, x) for x > 0. statrs' `gamma_lr` answers 0 for
/// every x <= 1.1e-15 (its test for x = 0), yet below shape 1 much of the mass lies there
/// (shape 0.05: 18%), and panics at x = inf. There the series
/// P = x^a e^-x / Gamma(a + 1) (1 + x / (a + 1) + O(x^2)) is exact to double precision.
fn reg_lower(a: f64, x: f64) -> f64 {
    if x == f64::INFINITY {
        1.0
    } else if x <= DEFAULT_F64_ACC {
        ln_lower_small(a, x).exp()
    } else {
        gamma_lr(a, x)
    }
}

/// Regularised upper incomplete gamma Q(a, x) = 1 - P(a, x) for x > 0 (see `reg_lower`).
fn reg_upper(a: f64, x: f64) -> f64 {
    if x == f64::INFINITY {
        0.0
    } else if x <= DEFAULT_F64_ACC {
        // through expm1: for a tiny shape P is close to 1 and Q small
        -ln_lower_small(a, x).exp_m1()
    } else {
        gamma_ur(a, x)
    }
}

/// ln P(a, x) from the series for x <= 1.1e-15 (the O(x^2) term is below 1e-30).
fn ln_lower_small(a: f64, x: f64) -> f64 {
    a * x.ln() - x - ln_gamma(a + 1.0) + (x / (a + 1.0)).ln_1p()
}

#[derive(Debug, Clone, Copy)]
pub struct Gamma {
    shape: f64,
    scale: f64,
    ln_gamma_shape: f64,
    loc: f64,
    // Marsaglia-Tsang constants for shape max(alpha, alpha + 1).
    d: f64,
    c: f64,
}

impl Gamma {
    pub fn new(alpha: f64, beta: f64, gamma: f64) -> Result<Self, DistError> {
        let shape = positive("gamma", "alpha", alpha)?;
        let scale = positive("gamma", "beta", beta)?;
        let a = if shape < 1.0 { shape + 1.0 } else { shape };
        let d = a - 1.0 / 3.0;
        Ok(Gamma {
            shape,
            scale,
            ln_gamma_shape: ln_gamma(shape),
            loc: location("gamma", gamma)?,
            d,
            c: 1.0 / (9.0 * d).sqrt(),
        })
    }

    /// Start for the standardised quantile: the small-x series P(a, x) ~ x^a / Gamma(a + 1)
    /// low down, Wilson-Hilferty elsewhere.
    fn start(&self, p: f64, q: f64) -> f64 {
        let a = self.shape;
        let small = ((p.ln() + ln_gamma(a + 1.0)) / a).exp();
        if small < 0.5 * a.max(1.0) {
            return small.max(1e-300);
        }
        let z = phi_c_inv(q);
        let w = 1.0 - 1.0 / (9.0 * a) + z / (3.0 * a.sqrt());
        (a * w * w * w).max(1e-300)
    }

    /// Standardised quantile with lower tail p (upper false) or upper tail p (upper true),
    /// found by Newton on y = ln x: well conditioned for every shape, relative accuracy in x.
    fn invert(&self, p: f64, upper: bool) -> f64 {
        let a = self.shape;
        let (pl, pu) = if upper { (1.0 - p, p) } else { (p, 1.0 - p) };
        let y0 = self.start(pl, pu).ln();
        let f = |y: f64| {
            let x = y.exp();
            if upper {
                p - reg_upper(a, x)
            } else {
                reg_lower(a, x) - p
            }
        };
        let df = |y: f64| {
            let x = y.exp();
            (a * y - x - self.ln_gamma_shape).exp()
        };
        let (mut lo, mut hi) = (y0, y0);
        let mut step = 0.5;
        if f(y0) < 0.0 {
            while f(hi) < 0.0 && step < 1e4 {
                lo = hi;
                hi += step;
                step *= 2.0;
            }
        } else {
            while f(lo) > 0.0 && step < 1e4 {
                hi = lo;
                lo -= step;
                step *= 2.0;
            }
        }
        self.loc + root_with_tol(f, df, lo, hi, y0, 4.0 * f64::EPSILON).exp() * self.scale
    }
}

impl Lifetime for Gamma {
    fn sf(&self, t: f64) -> f64 {
        if t <= self.loc {
            1.0
        } else {
            reg_upper(self.shape, (t - self.loc) / self.scale)
        }
    }
    fn cdf(&self, t: f64) -> f64 {
        if t <= self.loc {
            0.0
        } else {
            reg_lower(self.shape, (t - self.loc) / self.scale)
        }
    }
    fn pdf(&self, t: f64) -> f64 {
        if t < self.loc {
            return 0.0;
        }
        let y = (t - self.loc) / self.scale;
        if y == 0.0 || y == f64::INFINITY {
            // the formula would take 0 * ln 0 (shape 1) or inf - inf: NaN; the limits are
            // +inf below shape 1, 1 / scale at shape 1, else 0 (and 0 as t grows without end)
            return match (y == 0.0, self.shape.total_cmp(&1.0)) {
                (true, std::cmp::Ordering::Less) => f64::INFINITY,
                (true, std::cmp::Ordering::Equal) => 1.0 / self.scale,
                _ => 0.0,
            };
        }
        ((self.shape - 1.0) * y.ln() - y - self.ln_gamma_shape).exp() / self.scale
    }
    fn mean(&self) -> f64 {
        self.loc + self.shape * self.scale
    }
    fn quantile(&self, p: f64) -> f64 {
        if p <= 0.0 {
            return self.loc;
        }
        if p >= 1.0 {
            return f64::INFINITY;
        }
        if p <= 0.5 {
            self.invert(p, false)
        } else {
            self.invert(1.0 - p, true)
        }
    }
    fn isf(&self, q: f64) -> f64 {
        if q >= 1.0 {
            return self.loc;
        }
        if q <= 0.0 {
            return f64::INFINITY;
        }
        if q <= 0.5 {
            self.invert(q, true)
        } else {
            self.invert(1.0 - q, false)
        }
    }
    /// Marsaglia and Tsang (2000), with Box-Muller normals; shape < 1 boosted by U^(1/a).
    fn sample(&self, rng: &mut Stream) -> f64 {
        let x = loop {
            let z =
                (-2.0 * rng.uniform().ln()).sqrt() * (std::f64::consts::TAU * rng.uniform()).cos();
            let v = 1.0 + self.c * z;
            if v <= 0.0 {
                continue;
            }
            let v = v * v * v;
            let u = rng.uniform();
            if u.ln() < 0.5 * z * z + self.d - self.d * v + self.d * v.ln() {
                break self.d * v;
            }
        };
        let x = if self.shape < 1.0 {
            x * rng.uniform().powf(1.0 / self.shape)
        } else {
            x
        };
        self.loc + x * self.scale
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::Dist;
    use crate::dist::testkit::*;

    fn g(alpha: f64, beta: f64, gamma: f64) -> Dist {
        Dist::Gamma(Gamma::new(alpha, beta, gamma).unwrap())
    }

    /// Shapes far below 1 (the U^(1/a) boost), exactly 1, ordinary, large (nearly normal),
    /// and a location shift.
    fn cases() -> Vec<Dist> {
        vec![
            g(0.05, 1.0, 0.0),
            g(0.3, 2.0, 0.0),
            g(1.0, 5.0, 0.0),
            g(4.5, 2.0, 0.0),
            g(60.0, 0.5, 0.0),
            g(2.5, 2.0, 30.0),
        ]
    }

    #[test]
    fn draws_are_pinned() {
        // Marsaglia-Tsang with Box-Muller normals, boosted below shape 1
        assert_pinned(
            &draws(&g(4.5, 2.0, 0.0), 42, 4),
            &[
                9.93644859469041,
                7.295347271797988,
                5.076372268791047,
                28.853430107438072,
            ],
        );
        assert_pinned(
            &draws(&g(0.3, 2.0, 30.0), 7, 3),
            &[32.21285722590129, 30.004019227389662, 30.016033776529895],
        );
        assert_pinned(
            &first_residuals(&g(4.5, 2.0, 0.0), 8.0, 42, 3),
            &[5.296290596669683, 6.251873656590428, 2.2574323714293527],
        );
    }

    #[test]
    fn draws_fit_the_cdf() {
        for (i, d) in cases().iter().enumerate() {
            let xs = assert_fits(d, 100 + i as u64);
            assert_mean_of(d, &xs);
        }
        // a 5% change of the scale, and of the shape, is seen
        assert_misfits(&g(4.5, 2.0, 0.0), &g(4.5, 2.1, 0.0), 7);
        assert_misfits(&g(4.5, 2.0, 0.0), &g(4.725, 2.0, 0.0), 7);
    }

    #[test]
    fn residual_lives_follow_the_conditional_cdf() {
        assert_residuals_fit(&cases(), 200);
    }

    #[test]
    fn identities_hold_at_extreme_arguments() {
        for d in cases() {
            let Dist::Gamma(x) = &d else { unreachable!() };
            // below shape 1 the density is unbounded at the location
            assert_sane(&d, x.shape >= 1.0);
            assert_starts_at(&d, x.loc);
            // Newton to 4 ulps on ln x, and statrs' incomplete gamma to ~1e-14 relative
            assert_quantiles(&d, 1e-10, true);
            assert_inverts(&d, 1e-10);
            let ts = quantile_points(&d);
            assert_density(&d, &ts, x.loc, x.scale, 1e-12);
        }
        // shape 1 is the exponential: its density at the location is 1 / scale
        assert_eq!(g(1.0, 5.0, 0.0).pdf(0.0), 0.2);
    }
}
