//! A life given as a table of its distribution function: knots (t_i, F_i), F linear between
//! knots (so the density is constant on each interval) and sampled by inverting that
//! piecewise-linear F exactly. Mass not reached by the last knot (F_n < 1) never fails: its
//! lives are infinite. Used for lives known only numerically (a condition-based unit's
//! conditional remaining life from its degradation readings).
//!
//! `steps` reads the same knots as a right-continuous step function instead: F(t) = F_i on
//! [t_i, t_{i+1}), 0 before t_0 (a Cox model's Breslow survival, which drops only at event
//! times); a draw is the first knot whose F reaches the uniform.
use super::{DistError, Lifetime};

#[derive(Debug, Clone)]
pub struct Table {
    t: Vec<f64>,
    f: Vec<f64>,
    mean: f64,
    step: bool,
}

pub const MAX_KNOTS: usize = 100_000;

impl Table {
    /// Knots with t strictly increasing from t_0 >= 0, F non-decreasing in [0, 1].
    pub fn new(knots: &[[f64; 2]]) -> Result<Self, DistError> {
        Self::build(knots, false)
    }

    /// The knots as a step distribution function (1 to MAX_KNOTS knots).
    pub fn steps(knots: &[[f64; 2]]) -> Result<Self, DistError> {
        Self::build(knots, true)
    }

    /// Time of the last knot: past it no more mass fails.
    pub fn last_time(&self) -> f64 {
        self.t[self.t.len() - 1]
    }

    pub fn knot_times(&self) -> &[f64] {
        &self.t
    }

    fn build(knots: &[[f64; 2]], step: bool) -> Result<Self, DistError> {
        let bad = |why: String| Err(DistError(format!("table: {why}")));
        let least = if step { 1 } else { 2 };
        if knots.len() < least || knots.len() > MAX_KNOTS {
            return bad(format!(
                "needs {least} to {MAX_KNOTS} [t, F] knots (got {})",
                knots.len()
            ));
        }
        for (i, k) in knots.iter().enumerate() {
            let [t, f] = *k;
            if !(t.is_finite() && t >= 0.0 && (0.0..=1.0).contains(&f)) {
                return bad(format!(
                    "knot {i}: t must be finite >= 0 and F in [0, 1] (got [{t}, {f}])"
                ));
            }
            if i > 0 && !(t > knots[i - 1][0] && f >= knots[i - 1][1]) {
                return bad(format!("knot {i}: t must increase and F must not decrease"));
            }
        }
        let t: Vec<f64> = knots.iter().map(|k| k[0]).collect();
        let f: Vec<f64> = knots.iter().map(|k| k[1]).collect();
        let last = f[f.len() - 1];
        let mean = if last < 1.0 {
            f64::INFINITY
        } else if step {
            // each knot carries its jump of F
            t[0] * f[0] + t[1..].iter().zip(f.windows(2)).map(|(ti, fw)| ti * (fw[1] - fw[0])).sum::<f64>()
        } else {
            // E[T] = t_0 F_0 + sum over intervals of the midpoint times the interval's mass
            t[0] * f[0]
                + t.windows(2)
                    .zip(f.windows(2))
                    .map(|(tw, fw)| 0.5 * (tw[0] + tw[1]) * (fw[1] - fw[0]))
                    .sum::<f64>()
        };
        Ok(Table { t, f, mean, step })
    }

    /// Index i of the interval [t_i, t_{i+1}] holding t (t within the table).
    fn interval(&self, t: f64) -> usize {
        self.t
            .partition_point(|&x| x <= t)
            .saturating_sub(1)
            .min(self.t.len() - 2)
    }
}

impl Lifetime for Table {
    fn cdf(&self, t: f64) -> f64 {
        let n = self.t.len();
        if t < self.t[0] {
            return 0.0;
        }
        if t >= self.t[n - 1] {
            return self.f[n - 1];
        }
        let i = self.interval(t);
        if self.step {
            return self.f[i];
        }
        let w = (t - self.t[i]) / (self.t[i + 1] - self.t[i]);
        self.f[i] + w * (self.f[i + 1] - self.f[i])
    }
    fn sf(&self, t: f64) -> f64 {
        1.0 - self.cdf(t)
    }
    fn pdf(&self, t: f64) -> f64 {
        let n = self.t.len();
        if self.step || t < self.t[0] || t >= self.t[n - 1] {
            return 0.0; // a step function has no density (its mass sits on the knots)
        }
        let i = self.interval(t);
        (self.f[i + 1] - self.f[i]) / (self.t[i + 1] - self.t[i])
    }
    fn mean(&self) -> f64 {
        self.mean
    }
    fn quantile(&self, p: f64) -> f64 {
        let n = self.t.len();
        if self.step && p <= 0.0 {
            return 0.0;
        }
        if p <= self.f[0] {
            return self.t[0];
        }
        if p > self.f[n - 1] {
            return f64::INFINITY;
        }
        if self.step {
            return self.t[self.f.partition_point(|&x| x < p)];
        }
        // first knot with F >= p: the root lies in the interval ending there
        let j = self.f.partition_point(|&x| x < p).max(1);
        let (f0, f1) = (self.f[j - 1], self.f[j]);
        let w = if f1 > f0 { (p - f0) / (f1 - f0) } else { 1.0 };
        self.t[j - 1] + w * (self.t[j] - self.t[j - 1])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Stream;

    #[test]
    fn inverts_its_piecewise_linear_cdf() {
        let d = Table::new(&[[0.0, 0.0], [1.0, 0.5], [3.0, 0.9], [4.0, 1.0]]).unwrap();
        assert_eq!(d.cdf(0.5), 0.25);
        assert_eq!(d.cdf(2.0), 0.7);
        assert!((d.quantile(0.7) - 2.0).abs() < 1e-15);
        assert!((d.quantile(0.95) - 3.5).abs() < 1e-15);
        assert_eq!(d.quantile(0.0), 0.0);
        // mean: 0.5 * 0.5 + 2 * 0.4 + 3.5 * 0.1
        assert!((d.mean() - 1.4).abs() < 1e-15);
        assert_eq!(d.pdf(2.0), 0.2);
    }

    #[test]
    fn mass_beyond_the_last_knot_never_fails() {
        let d = Table::new(&[[0.0, 0.0], [10.0, 0.6]]).unwrap();
        assert_eq!(d.quantile(0.7), f64::INFINITY);
        assert_eq!(d.mean(), f64::INFINITY);
        assert!((d.sf(20.0) - 0.4).abs() < 1e-15);
        let mut rng = Stream::new(7, 0);
        let n = 200_000;
        let inf = (0..n).filter(|_| d.sample(&mut rng).is_infinite()).count() as f64 / n as f64;
        // within 4 standard errors of 0.4
        assert!(
            (inf - 0.4).abs() < 4.0 * (0.24f64 / n as f64).sqrt(),
            "{inf}"
        );
    }

    #[test]
    fn residual_sampling_conditions_on_the_age() {
        // uniform on [0, 10] as a table; remaining life at age 4 is uniform on [0, 6]
        let d = Table::new(&[[0.0, 0.0], [10.0, 1.0]]).unwrap();
        let mut rng = Stream::new(3, 1);
        let n = 100_000;
        let below3 = (0..n)
            .filter(|_| d.sample_residual(4.0, &mut rng) <= 3.0)
            .count() as f64
            / n as f64;
        assert!(
            (below3 - 0.5).abs() < 4.0 * (0.25f64 / n as f64).sqrt(),
            "{below3}"
        );
    }

    #[test]
    fn steps_jump_at_the_knots() {
        // S drops 0.8 -> 0.5 -> 0.2 at 2, 5, 9 (a Breslow survival), 0.2 never fails
        let d = Table::steps(&[[2.0, 0.2], [5.0, 0.5], [9.0, 0.8]]).unwrap();
        assert_eq!(d.cdf(1.9), 0.0);
        assert_eq!(d.cdf(2.0), 0.2);
        assert_eq!(d.cdf(4.99), 0.2);
        assert_eq!(d.cdf(5.0), 0.5);
        assert_eq!(d.cdf(100.0), 0.8);
        assert_eq!(d.pdf(3.0), 0.0);
        assert_eq!(d.quantile(0.2), 2.0);
        assert_eq!(d.quantile(0.21), 5.0);
        assert_eq!(d.quantile(0.8), 9.0);
        assert_eq!(d.quantile(0.81), f64::INFINITY);
        assert_eq!(d.mean(), f64::INFINITY);
        let full = Table::steps(&[[2.0, 0.25], [4.0, 1.0]]).unwrap();
        assert_eq!(full.mean(), 2.0 * 0.25 + 4.0 * 0.75);
        // draws land on the knots with their jumps' probabilities
        let mut rng = Stream::new(4, 2);
        let n = 100_000;
        let at5 = (0..n).filter(|_| d.sample(&mut rng) == 5.0).count() as f64 / n as f64;
        assert!((at5 - 0.3).abs() < 4.0 * (0.21f64 / n as f64).sqrt(), "{at5}");
        assert!(Table::steps(&[[1.0, 0.5]]).is_ok());
        assert!(Table::steps(&[[1.0, 0.5], [1.0, 0.6]]).is_err());
    }

    #[test]
    fn refuses_bad_knots() {
        assert!(Table::new(&[[0.0, 0.0]]).is_err());
        assert!(Table::new(&[[0.0, 0.0], [0.0, 0.5]]).is_err());
        assert!(Table::new(&[[0.0, 0.6], [1.0, 0.5]]).is_err());
        assert!(Table::new(&[[-1.0, 0.0], [1.0, 0.5]]).is_err());
        assert!(Table::new(&[[0.0, 0.0], [f64::NAN, 0.5]]).is_err());
        assert!(Table::new(&[[0.0, 0.0], [1.0, 1.5]]).is_err());
    }
}

#[cfg(test)]
mod family_tests {
    //! The checks every family passes, on tables (the tests above pin the table's rules).
    use super::*;
    use crate::dist::Dist;
    use crate::dist::testkit::*;

    fn lin(knots: &[[f64; 2]]) -> Dist {
        Dist::Table(Table::new(knots).unwrap())
    }

    fn steps(knots: &[[f64; 2]]) -> Dist {
        Dist::Table(Table::steps(knots).unwrap())
    }

    /// Weibull(100, 2) tabulated at 201 knots on [0, 400] (F(400) = 1 - 1.1e-7: a sliver of
    /// lives never fails).
    fn weibull_table() -> Dist {
        let k: Vec<[f64; 2]> =
            (0..=200).map(|i| 2.0 * i as f64).map(|t| [t, -(-(t / 100.0f64).powi(2)).exp_m1()]).collect();
        lin(&k)
    }

    /// Piecewise linear F: knots of unequal mass, mass that never fails, a fine table, a
    /// start past 0, and a flat stretch (no failures between 1 and 2).
    fn cases() -> Vec<Dist> {
        vec![
            lin(&[[0.0, 0.0], [1.0, 0.5], [3.0, 0.9], [4.0, 1.0]]),
            lin(&[[0.0, 0.0], [10.0, 0.6]]),
            weibull_table(),
            lin(&[[5.0, 0.0], [6.0, 0.2], [20.0, 1.0]]),
            lin(&[[0.0, 0.0], [1.0, 0.3], [2.0, 0.3], [3.0, 1.0]]),
        ]
    }

    #[test]
    fn draws_are_pinned() {
        assert_pinned(&draws(&cases()[0], 42, 4), &[2.0991540044737724, 2.436214019197035, 0.7641978364447932, 0.24996720174777165]);
        assert_pinned(&draws(&cases()[1], 7, 4), &[7.569421876622355, f64::INFINITY, 6.228898362832277, 3.3270577033613913]);
        assert_pinned(&draws(&steps(&[[2.0, 0.2], [5.0, 0.5], [9.0, 0.8]]), 7, 6), &[5.0, f64::INFINITY, 5.0, 2.0, f64::INFINITY, 9.0]);
        assert_pinned(&first_residuals(&cases()[0], 2.0, 42, 3), &[1.159492402684264, 1.3617284115182207, 0.5731483773335944]);
    }

    #[test]
    fn draws_fit_the_cdf() {
        for (i, d) in cases().iter().enumerate() {
            let xs = assert_fits(d, 100 + i as u64);
            if d.mean().is_finite() {
                assert_mean_of(d, &xs);
            }
        }
        // a knot's F moved by 0.05 is seen
        assert_misfits(&cases()[0], &lin(&[[0.0, 0.0], [1.0, 0.5], [3.0, 0.85], [4.0, 1.0]]), 7);
        // the tabulated Weibull is the Weibull, to the table's interpolation error (1.2e-4)
        let w = Dist::Weibull(crate::dist::Weibull::new(100.0, 2.0, 0.0).unwrap());
        let t = weibull_table();
        let gap = (0..4000).map(|i| 0.1 * i as f64).map(|x| (t.cdf(x) - w.cdf(x)).abs()).fold(0.0, f64::max);
        assert!(gap < 1.3e-4, "{gap}");
    }

    #[test]
    fn step_draws_land_on_the_knots_with_their_jumps() {
        // Pearson's chi-square over the knots and the cell of lives that never fail
        let d = steps(&[[2.0, 0.2], [5.0, 0.5], [9.0, 0.8]]);
        let atoms = [(2.0, 0.2), (5.0, 0.3), (9.0, 0.3)];
        let xs = draws(&d, 11, N);
        let (stat, crit) = (chi2_statistic(&xs, &atoms), chi2_critical(atoms.len()));
        assert!(stat <= crit, "chi-square {stat} > {crit}");
        // jumps moved by 0.02 are refused
        let stat = chi2_statistic(&xs, &[(2.0, 0.22), (5.0, 0.28), (9.0, 0.3)]);
        assert!(stat > crit, "chi-square {stat} <= {crit}");
        // a Breslow-like survival with 40 small drops and full mass
        let k: Vec<[f64; 2]> = (1..=40).map(|i| [i as f64 * 3.0, i as f64 / 40.0]).collect();
        let d = steps(&k);
        let atoms: Vec<(f64, f64)> = (1..=40).map(|i| (i as f64 * 3.0, 1.0 / 40.0)).collect();
        let xs = draws(&d, 12, N);
        let (stat, crit) = (chi2_statistic(&xs, &atoms), chi2_critical(atoms.len() - 1));
        assert!(stat <= crit, "chi-square {stat} > {crit}");
        assert_mean_of(&d, &xs);
    }

    #[test]
    fn step_residuals_are_the_later_knots() {
        // at age 3 the survivors (S = 0.8) fail at 5 or 9 (0.3 / 0.8 each) or never
        let d = steps(&[[2.0, 0.2], [5.0, 0.5], [9.0, 0.8]]);
        for (age, atoms) in [(3.0, vec![(2.0, 0.375), (6.0, 0.375)]), (5.0, vec![(4.0, 0.6)])] {
            let mut xs = first_residuals(&d, age, 13, N);
            xs.iter_mut().for_each(|x| *x = (*x * 1e9).round() / 1e9); // knot - age, rounded
            let (stat, crit) = (chi2_statistic(&xs, &atoms), chi2_critical(atoms.len()));
            assert!(stat <= crit, "age {age}: chi-square {stat} > {crit}");
        }
    }

    #[test]
    fn residual_lives_follow_the_conditional_cdf() {
        for (i, d) in cases().iter().enumerate() {
            for p in [0.0, 0.3, 0.55] {
                assert_residual_fits(d, d.quantile(p), 200 + i as u64);
            }
        }
        // an age before the first knot
        assert_residual_fits(&cases()[3], 2.0, 9);
    }

    #[test]
    fn identities_hold_at_extreme_arguments() {
        for d in cases() {
            let Dist::Table(x) = &d else { unreachable!() };
            assert_sane(&d, true);
            assert_starts_at(&d, x.t[0]);
            // linear interpolation: a few ulps; S = 1 - F is only as good as F's ulp near 1
            assert_quantiles(&d, 1e-12, false);
            assert_inverts(&d, 1e-12);
            // mid-interval points (F has kinks at the knots), where S > 1e-3: S = 1 - F has
            // only F's absolute precision, too little for a difference quotient further out
            let ts: Vec<f64> =
                x.t.windows(2).map(|w| 0.5 * (w[0] + w[1])).filter(|&t| d.sf(t) > 1e-3).collect();
            assert_density(&d, &ts, x.t[0], 1.0, 1e-12);
        }
        let d = steps(&[[2.0, 0.2], [5.0, 0.5], [9.0, 0.8]]);
        assert_sane(&d, true);
        for (t, f) in [(2.0, 0.2), (5.0, 0.5), (9.0, 0.8)] {
            assert_eq!((d.cdf(t), d.quantile(f)), (f, t));
            assert_eq!(d.cdf(t - 1e-9), f - if t == 2.0 { 0.2 } else { 0.3 });
        }
    }
}
