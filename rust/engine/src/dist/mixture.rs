//! Mixture of modes: with probability w_i the life follows mode i.
use super::solve::increasing_root;
use super::{Dist, DistError, Lifetime};
use crate::rng::Stream;

#[derive(Debug, Clone)]
pub struct Mixture {
    weights: Vec<f64>,
    modes: Vec<Dist>,
}

impl Mixture {
    /// Modes as (weight, distribution); weights in (0, 1] adding to 1 within 1e-9.
    pub fn new(parts: Vec<(f64, Dist)>) -> Result<Self, DistError> {
        if parts.len() < 2 {
            return Err(DistError("mixture: needs at least 2 modes".into()));
        }
        let mut total = 0.0;
        for (i, (w, _)) in parts.iter().enumerate() {
            if !(w.is_finite() && *w > 0.0 && *w <= 1.0) {
                return Err(DistError(format!(
                    "mixture: weight{} must be in (0, 1] (got {w})",
                    i + 1
                )));
            }
            total += w;
        }
        if (total - 1.0).abs() > 1e-9 {
            return Err(DistError(format!(
                "mixture: weights must add to 1 (they add to {total})"
            )));
        }
        let (weights, modes) = parts.into_iter().unzip();
        Ok(Mixture { weights, modes })
    }

    fn pick(&self, u: f64) -> &Dist {
        let mut acc = 0.0;
        for (w, d) in self.weights.iter().zip(&self.modes) {
            acc += w;
            if u < acc {
                return d;
            }
        }
        self.modes.last().expect("at least two modes")
    }

    fn bracket(&self, f: impl Fn(&Dist) -> f64) -> (f64, f64) {
        let xs = self.modes.iter().map(f);
        xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
            (lo.min(x), hi.max(x))
        })
    }
}

impl Lifetime for Mixture {
    fn sf(&self, t: f64) -> f64 {
        self.weights
            .iter()
            .zip(&self.modes)
            .map(|(w, d)| w * d.sf(t))
            .sum()
    }
    fn cdf(&self, t: f64) -> f64 {
        self.weights
            .iter()
            .zip(&self.modes)
            .map(|(w, d)| w * d.cdf(t))
            .sum()
    }
    fn pdf(&self, t: f64) -> f64 {
        self.weights
            .iter()
            .zip(&self.modes)
            .map(|(w, d)| w * d.pdf(t))
            .sum()
    }
    fn mean(&self) -> f64 {
        self.weights
            .iter()
            .zip(&self.modes)
            .map(|(w, d)| w * d.mean())
            .sum()
    }
    fn quantile(&self, p: f64) -> f64 {
        if p > 0.5 {
            return self.isf(1.0 - p);
        }
        // The mixture's quantile lies between its modes' quantiles at the same p.
        let (lo, hi) = self.bracket(|d| d.quantile(p));
        if lo == hi || p <= 0.0 {
            return lo;
        }
        increasing_root(
            |t| self.cdf(t) - p,
            |t| self.pdf(t),
            lo,
            hi,
            0.5 * (lo + hi),
        )
    }
    fn isf(&self, q: f64) -> f64 {
        if q > 0.5 {
            return self.quantile(1.0 - q);
        }
        let (lo, hi) = self.bracket(|d| d.isf(q));
        if lo == hi || q <= 0.0 {
            return hi;
        }
        increasing_root(|t| q - self.sf(t), |t| self.pdf(t), lo, hi, 0.5 * (lo + hi))
    }
    fn sample(&self, rng: &mut Stream) -> f64 {
        let u = rng.uniform();
        self.pick(u).sample(rng)
    }
    fn sample_residual(&self, age: f64, rng: &mut Stream) -> f64 {
        // Survivors to `age` follow each mode with weight w_i S_i(age) / S(age).
        let s = self.sf(age);
        if s <= 0.0 {
            return 0.0;
        }
        let u = rng.uniform() * s;
        let mut acc = 0.0;
        for (w, d) in self.weights.iter().zip(&self.modes) {
            acc += w * d.sf(age);
            if u < acc {
                return d.sample_residual(age, rng);
            }
        }
        self.modes
            .last()
            .expect("at least two modes")
            .sample_residual(age, rng)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::testkit::*;
    use crate::dist::{Exponential, Gamma, LogNormal, Weibull};

    fn wb(alpha: f64, beta: f64, gamma: f64) -> Dist {
        Dist::Weibull(Weibull::new(alpha, beta, gamma).unwrap())
    }

    fn mix(parts: Vec<(f64, Dist)>) -> Dist {
        Dist::Mixture(Mixture::new(parts).unwrap())
    }

    /// A bathtub (infant mortality beside wear-out), a located mode beside one from 0, three
    /// families at once, and a mode with weight 0.001.
    fn cases() -> Vec<Dist> {
        vec![
            mix(vec![(0.3, wb(10.0, 0.5, 0.0)), (0.7, wb(1000.0, 4.0, 0.0))]),
            mix(vec![(0.5, wb(100.0, 2.0, 50.0)), (0.5, wb(30.0, 1.0, 0.0))]),
            mix(vec![
                (0.2, Dist::Exponential(Exponential::new(0.01, 0.0).unwrap())),
                (0.5, Dist::LogNormal(LogNormal::new(3.0, 0.4, 0.0).unwrap())),
                (0.3, Dist::Gamma(Gamma::new(2.0, 10.0, 0.0).unwrap())),
            ]),
            mix(vec![
                (0.999, wb(100.0, 3.0, 0.0)),
                (0.001, wb(1.0, 0.7, 0.0)),
            ]),
        ]
    }

    #[test]
    fn draws_are_pinned() {
        // one uniform picks the mode, then the mode draws
        assert_pinned(
            &draws(&cases()[0], 42, 4),
            &[
                23.950771739011778,
                604.4781467658173,
                224.97776571451286,
                932.9049631897941,
            ],
        );
        assert_pinned(
            &draws(&cases()[2], 7, 4),
            &[
                36.48085479080575,
                14.33656429262697,
                145.61973807080884,
                22.008796682608857,
            ],
        );
        assert_pinned(
            &first_residuals(&cases()[0], 20.0, 42, 3),
            &[1095.359704149494, 584.478327865622, 204.98127833331762],
        );
    }

    #[test]
    fn draws_fit_the_cdf() {
        for (i, d) in cases().iter().enumerate() {
            let xs = assert_fits(d, 100 + i as u64);
            assert_mean_of(d, &xs);
        }
        // weights moved by 0.05 are seen
        let moved = mix(vec![
            (0.35, wb(10.0, 0.5, 0.0)),
            (0.65, wb(1000.0, 4.0, 0.0)),
        ]);
        assert_misfits(&cases()[0], &moved, 7);
    }

    #[test]
    fn residual_lives_follow_the_conditional_cdf() {
        // survivors reweigh the modes by w_i S_i(age) / S(age): the infant mode fades
        assert_residuals_fit(&cases(), 200);
        // an age inside one mode's failure-free time
        assert_residual_fits(&cases()[1], 20.0, 9);
    }

    #[test]
    fn identities_hold_at_extreme_arguments() {
        for (i, d) in cases().iter().enumerate() {
            // modes with shape < 1 have an unbounded density at 0
            assert_sane(d, i == 1 || i == 2);
            assert_starts_at(d, 0.0);
            // safeguarded Newton to 4 ulps of t on sums of the modes' closed forms
            assert_quantiles(d, 1e-10, true);
            assert_inverts(d, 1e-10);
            let ts = quantile_points(d);
            assert_density(d, &ts, 0.0, 1.0, 1e-12);
        }
        // the mean is the weighted means': Weibull(100, 2, 50) has 50 + 100 Gamma(1.5), and
        // Gamma(1.5) = sqrt(pi) / 2 = 0.886226925452758
        let Dist::Mixture(m) = &cases()[1] else {
            unreachable!()
        };
        assert!(
            (m.mean() - (0.5 * (50.0 + 100.0 * 0.886_226_925_452_758) + 0.5 * 30.0)).abs()
                < 1e-12 * m.mean()
        );
    }
}
