//! A life under a known, piecewise-constant covariate path (a saved regression model's
//! block with `covariate_schedules`): the covariates change at fixed ages, so the life is
//! one distribution, sampled by inverting its cumulative hazard exactly.
//!
//! Segments are (u_k, u_{k+1}] with factor m_k (u_0 = 0; the last one open-ended, or the
//! phases repeat every `period`). A change at age u applies to failures after u: the
//! counting-process convention of the fits, (start, stop] rows.
//!
//! - `hazard` scale (proportional hazards): dH = m(t) dH0(t), so
//!   H(t) = sum over segments of m_k (H0(min(t, u_{k+1})) - H0(u_k)), S = exp(-H).
//! - `time` scale (accelerated failure time): the age runs m(t) times as fast,
//!   psi(t) = sum of m_k (min(t, u_{k+1}) - u_k), S(t) = S0(psi(t)).
//!
//! The cumulative (H or psi) at each segment start is tabulated once (for a period: at each
//! period start, up to where the survival is 0 in double precision); a draw is a binary
//! search there and one inversion of the base life inside its segment.
use super::{Dist, DistError, Lifetime};
use std::sync::OnceLock;

/// Segments and periods tabulated at most (past them the path is walked: rare, since the
/// table reaches survival 0 first for any life that is not extremely long against its period).
const MAX_TABLE: usize = 1 << 18;
pub const MAX_SEGMENTS: usize = 100_000;
/// A cumulative hazard where the survival is 0 in double precision (exp(-746) underflows).
const H_END: f64 = 746.0;

/// A covariate path as data: segment starts (first 0, increasing), one factor per segment
/// (> 0; exp(x_k b) relative to the base life), an optional period (> the last start) and
/// the scale the factors act on.
#[derive(Debug, Clone, PartialEq, serde::Deserialize, serde::Serialize)]
pub struct PathSpec {
    pub starts: Vec<f64>,
    pub factors: Vec<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period: Option<f64>,
    /// `hazard` (proportional hazards) or `time` (accelerated failure time).
    pub scale: String,
}

#[derive(Debug, Clone)]
pub struct PathLife {
    base: Dist,
    time_scale: bool,
    starts: Vec<f64>,
    factors: Vec<f64>,
    period: Option<f64>,
    /// Tabulated points (segment starts, or period starts with a period): age, cumulative
    /// (H or psi) and the base's cumulative hazard there.
    u: Vec<f64>,
    c: Vec<f64>,
    g: Vec<f64>,
    /// The table stopped where the survival is 0 (nothing beyond is ever needed).
    complete: bool,
    /// Past this age the base life has no hazard left (a table's last knot): H is flat.
    flat_after: f64,
    mean: OnceLock<f64>,
}

impl PathLife {
    pub fn new(base: Dist, spec: &PathSpec) -> Result<Self, DistError> {
        let bad = |why: String| Err(DistError(format!("covariate path: {why}")));
        let time_scale = match spec.scale.as_str() {
            "hazard" => false,
            "time" => true,
            other => return bad(format!("scale must be hazard or time (got {other:?})")),
        };
        let (s, f) = (&spec.starts, &spec.factors);
        if s.is_empty() || s.len() > MAX_SEGMENTS || s.len() != f.len() {
            return bad(format!(
                "1 to {MAX_SEGMENTS} segments, one factor per start (got {} starts, {} factors)",
                s.len(),
                f.len()
            ));
        }
        if s[0] != 0.0 {
            return bad("the first segment starts at 0".into());
        }
        for i in 1..s.len() {
            if !(s[i].is_finite() && s[i] > s[i - 1]) {
                return bad(format!("segment {i}: starts must be finite and increase"));
            }
        }
        if let Some(k) = f.iter().position(|m| !(m.is_finite() && *m > 0.0)) {
            return bad(format!("segment {k}: the factor must be a finite number > 0"));
        }
        if let Some(p) = spec.period
            && !(p.is_finite() && p > s[s.len() - 1])
        {
            return bad("the period must be finite and beyond the last segment start".into());
        }
        if matches!(base, Dist::Path(_)) {
            return bad("a path cannot wrap another path".into());
        }
        let flat_after = match &base {
            Dist::Table(t) => t.last_time(),
            _ => f64::INFINITY,
        };
        let mut life = PathLife {
            base,
            time_scale,
            starts: s.clone(),
            factors: f.clone(),
            period: spec.period,
            u: Vec::new(),
            c: Vec::new(),
            g: Vec::new(),
            complete: false,
            flat_after,
            mean: OnceLock::new(),
        };
        life.tabulate();
        Ok(life)
    }

    fn h0(&self, t: f64) -> f64 {
        self.base.cumulative_hazard(t)
    }

    /// Base cumulative hazard inverted: the least t with H0(t) >= h.
    fn h0_inv(&self, h: f64) -> f64 {
        if h <= 0.0 {
            return 0.0;
        }
        if h < 0.5 {
            self.base.quantile(-(-h).exp_m1())
        } else {
            self.base.isf((-h).exp())
        }
    }

    /// The survival is 0 once the cumulative reaches `c` (tabulating further is useless).
    fn spent(&self, c: f64) -> bool {
        if self.time_scale {
            self.h0(c) >= H_END
        } else {
            c >= H_END
        }
    }

    /// Add one segment (from age a with base cumulative g_a, factor m) up to age b.
    fn step(&self, c: f64, a: f64, g_a: f64, m: f64, b: f64) -> (f64, f64) {
        if self.time_scale {
            (c + m * (b - a), 0.0)
        } else {
            let g_b = self.h0(b);
            (c + m * (g_b - g_a), g_b)
        }
    }

    /// Walk one period's phases from its start (age p0, cumulative c, base g): the cumulative
    /// and base cumulative at the next period's start.
    fn walk_period(&self, p0: f64, mut c: f64, mut g: f64) -> (f64, f64) {
        let period = self.period.expect("periodic");
        let m = self.starts.len();
        for k in 0..m {
            let a = p0 + self.starts[k];
            let b = if k + 1 < m {
                p0 + self.starts[k + 1]
            } else {
                p0 + period
            };
            (c, g) = self.step(c, a, g, self.factors[k], b);
        }
        (c, g)
    }

    fn tabulate(&mut self) {
        let g0 = if self.time_scale { 0.0 } else { self.h0(0.0) };
        // A jump of the base at age 0 counts with the first factor.
        let c0 = if self.time_scale {
            0.0
        } else {
            self.factors[0] * g0
        };
        let (mut u, mut c, mut g) = (vec![0.0], vec![c0], vec![g0]);
        match self.period {
            None => {
                for k in 1..self.starts.len() {
                    let (ck, gk) = self.step(c[k - 1], u[k - 1], g[k - 1], self.factors[k - 1], self.starts[k]);
                    u.push(self.starts[k]);
                    c.push(ck);
                    g.push(gk);
                }
                self.complete = true;
            }
            Some(p) => loop {
                let i = u.len() - 1;
                if self.spent(c[i]) || u[i] >= self.flat_after && !self.time_scale {
                    self.complete = true;
                    break;
                }
                if u.len() >= MAX_TABLE {
                    break;
                }
                let (cn, gn) = self.walk_period(u[i], c[i], g[i]);
                u.push((i + 1) as f64 * p);
                c.push(cn);
                g.push(gn);
            },
        }
        (self.u, self.c, self.g) = (u, c, g);
    }

    /// The cumulative (H or psi) at age t, and the factor in force there.
    fn at(&self, t: f64) -> (f64, f64) {
        let t = t.max(0.0);
        let n = self.u.len();
        // last tabulated point strictly before t (index 0 for t = 0)
        let i = self.u.partition_point(|&x| x < t).saturating_sub(1);
        let (mut a, mut c, mut g) = (self.u[i], self.c[i], self.g[i]);
        let Some(period) = self.period else {
            let m = self.factors[i];
            return (self.step(c, a, g, m, t).0, m);
        };
        if i == n - 1 && self.complete && !self.time_scale && a >= self.flat_after {
            return (c, self.phase_at(t - a).1); // the base has no hazard left: H is flat
        }
        // walk whole periods past the table (rare: the survival is 0 there, or the table
        // hit its size), then the phases of t's period
        let mut walked = 0;
        while t > a + period {
            if walked > 1_000_000 {
                return (f64::INFINITY, self.phase_at((t - a) % period).1);
            }
            (c, g) = self.walk_period(a, c, g);
            a += period;
            walked += 1;
        }
        self.step_from_period(a, c, g, t)
    }

    /// The phase index and factor in force at `offset` into a period ((start, next] rule).
    fn phase_at(&self, offset: f64) -> (usize, f64) {
        let k = self.starts.partition_point(|&s| s < offset).saturating_sub(1);
        (k, self.factors[k])
    }

    /// From a period start (age p0, cumulative c, base g) through its phases up to age t
    /// (p0 <= t <= p0 + period): the cumulative at t and the factor in force there.
    fn step_from_period(&self, p0: f64, mut c: f64, mut g: f64, t: f64) -> (f64, f64) {
        let (k_t, m_t) = self.phase_at(t - p0);
        for k in 0..k_t {
            (c, g) = self.step(c, p0 + self.starts[k], g, self.factors[k], p0 + self.starts[k + 1]);
        }
        (self.step(c, p0 + self.starts[k_t], g, m_t, t).0, m_t)
    }

    /// Inside one segment from age a (cumulative c, base g, factor m, ending at b): the age
    /// where the cumulative reaches `target` (capped at b).
    fn solve(&self, a: f64, c: f64, g: f64, m: f64, b: f64, target: f64) -> f64 {
        let t = if self.time_scale {
            a + (target - c) / m
        } else {
            self.h0_inv(g + (target - c) / m)
        };
        t.max(a).min(b)
    }

    /// The least age whose cumulative reaches `target` (inf if it never does).
    fn invert(&self, target: f64) -> f64 {
        if target.is_nan() {
            return f64::NAN;
        }
        if target == f64::INFINITY {
            return f64::INFINITY;
        }
        if target <= self.c[0] {
            return 0.0;
        }
        let n = self.u.len();
        let j = self.c.partition_point(|&x| x < target); // first tabulated point reaching it
        let Some(period) = self.period else {
            let k = j - 1;
            let b = if k + 1 < n { self.u[k + 1] } else { f64::INFINITY };
            return self.solve(self.u[k], self.c[k], self.g[k], self.factors[k], b, target);
        };
        let (a, mut c, mut g) = if j < n {
            (self.u[j - 1], self.c[j - 1], self.g[j - 1])
        } else {
            if self.complete {
                return f64::INFINITY; // the table ended where nothing more accrues
            }
            // walk past the table, period by period, until the target falls in one
            let (mut a, mut c, mut g) = (self.u[n - 1], self.c[n - 1], self.g[n - 1]);
            loop {
                if !self.time_scale && a >= self.flat_after {
                    return f64::INFINITY;
                }
                let (cn, gn) = self.walk_period(a, c, g);
                if cn >= target {
                    break (a, c, g);
                }
                (a, c, g) = (a + period, cn, gn);
            }
        };
        // the phases of the period holding the target
        let m = self.starts.len();
        for k in 0..m {
            let lo = a + self.starts[k];
            let hi = if k + 1 < m {
                a + self.starts[k + 1]
            } else {
                a + period
            };
            let (cn, gn) = self.step(c, lo, g, self.factors[k], hi);
            if cn >= target || k + 1 == m {
                return self.solve(lo, c, g, self.factors[k], hi, target);
            }
            (c, g) = (cn, gn);
        }
        unreachable!("a period has at least one phase")
    }

    fn cumulative(&self, t: f64) -> f64 {
        self.at(t).0
    }

    /// Mean life: the integral of S over [0, inf), by 8-point Gauss-Legendre on pieces
    /// between the path's changes and the base's knots (where S has kinks or steps).
    fn integrate_sf(&self) -> f64 {
        let end = self.isf(1e-16);
        if !end.is_finite() {
            return f64::INFINITY;
        }
        let mut cuts: Vec<f64> = vec![0.0, end];
        match self.period {
            None => cuts.extend(self.starts.iter().copied()),
            Some(p) => {
                let mut p0 = 0.0;
                while p0 < end && cuts.len() < 4 * MAX_TABLE {
                    cuts.extend(self.starts.iter().map(|&s| p0 + s));
                    p0 += p;
                }
            }
        }
        if let Dist::Table(t) = &self.base {
            cuts.extend_from_slice(t.knot_times());
        }
        // geometric cuts towards 0, where a shape below 2 has an unbounded derivative
        cuts.extend((8..60).map(|k| end * 0.5f64.powi(k)));
        cuts.retain(|&t| (0.0..=end).contains(&t));
        cuts.sort_by(f64::total_cmp);
        cuts.dedup();
        let piece = end / 256.0;
        let mut total = 0.0;
        for w in cuts.windows(2) {
            let pieces = ((w[1] - w[0]) / piece).ceil().clamp(1.0, 256.0) as usize;
            let h = (w[1] - w[0]) / pieces as f64;
            for i in 0..pieces {
                total += gauss8(|t| self.sf(t), w[0] + i as f64 * h, w[0] + (i + 1) as f64 * h);
            }
        }
        total
    }
}

/// 8-point Gauss-Legendre over [a, b].
fn gauss8(f: impl Fn(f64) -> f64, a: f64, b: f64) -> f64 {
    const X: [f64; 4] = [
        0.183_434_642_495_649_8,
        0.525_532_409_916_329,
        0.796_666_477_413_626_7,
        0.960_289_856_497_536_3,
    ];
    const W: [f64; 4] = [
        0.362_683_783_378_362,
        0.313_706_645_877_887_3,
        0.222_381_034_453_374_5,
        0.101_228_536_290_376_3,
    ];
    let (mid, half) = (0.5 * (a + b), 0.5 * (b - a));
    let mut s = 0.0;
    for i in 0..4 {
        s += W[i] * (f(mid - half * X[i]) + f(mid + half * X[i]));
    }
    s * half
}

impl Lifetime for PathLife {
    fn sf(&self, t: f64) -> f64 {
        if self.time_scale {
            self.base.sf(self.cumulative(t))
        } else {
            (-self.cumulative(t)).exp()
        }
    }
    fn cdf(&self, t: f64) -> f64 {
        if self.time_scale {
            self.base.cdf(self.cumulative(t))
        } else {
            -(-self.cumulative(t)).exp_m1()
        }
    }
    fn pdf(&self, t: f64) -> f64 {
        if t < 0.0 {
            return 0.0;
        }
        let (c, m) = self.at(t);
        if self.time_scale {
            m * self.base.pdf(c)
        } else {
            let s = (-c).exp();
            if s == 0.0 {
                return 0.0; // no survivors: the base hazard may be inf there, inf * 0
            }
            m * self.base.hazard(t) * s
        }
    }
    fn hazard(&self, t: f64) -> f64 {
        if t < 0.0 {
            return 0.0;
        }
        let (c, m) = self.at(t);
        if self.time_scale {
            m * self.base.hazard(c)
        } else {
            m * self.base.hazard(t)
        }
    }
    fn cumulative_hazard(&self, t: f64) -> f64 {
        if self.time_scale {
            self.base.cumulative_hazard(self.cumulative(t))
        } else {
            self.cumulative(t)
        }
    }
    fn mean(&self) -> f64 {
        *self.mean.get_or_init(|| self.integrate_sf())
    }
    fn quantile(&self, p: f64) -> f64 {
        if self.time_scale {
            self.invert(self.base.quantile(p))
        } else {
            self.invert(-(-p).ln_1p())
        }
    }
    fn isf(&self, q: f64) -> f64 {
        if self.time_scale {
            self.invert(self.base.isf(q))
        } else {
            self.invert(-q.ln())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::{Table, Weibull};
    use crate::rng::Stream;

    fn weibull(alpha: f64, beta: f64) -> Dist {
        Dist::Weibull(Weibull::new(alpha, beta, 0.0).unwrap())
    }

    fn spec(starts: &[f64], factors: &[f64], period: Option<f64>, scale: &str) -> PathSpec {
        PathSpec {
            starts: starts.to_vec(),
            factors: factors.to_vec(),
            period,
            scale: scale.into(),
        }
    }

    /// H(t) = sum of m_k (H0(min(t, b_k)) - H0(a_k)) written out for a Weibull(alpha, beta).
    fn closed_h(alpha: f64, beta: f64, cuts: &[(f64, f64, f64)], t: f64) -> f64 {
        let h0 = |x: f64| (x / alpha).powf(beta);
        cuts.iter()
            .filter(|(a, _, _)| t > *a)
            .map(|(a, b, m)| m * (h0(t.min(*b)) - h0(*a)))
            .sum()
    }

    #[test]
    fn hazard_path_is_the_sum_over_segments_and_inverts_exactly() {
        let (alpha, beta) = (100.0, 1.7);
        let life = PathLife::new(weibull(alpha, beta), &spec(&[0.0, 40.0, 90.0], &[1.0, 2.5, 0.4], None, "hazard"))
            .unwrap();
        let cuts = [(0.0, 40.0, 1.0), (40.0, 90.0, 2.5), (90.0, f64::INFINITY, 0.4)];
        for t in [0.0, 10.0, 40.0, 41.0, 90.0, 150.0, 400.0] {
            let h = closed_h(alpha, beta, &cuts, t);
            assert!((life.cumulative_hazard(t) - h).abs() <= 1e-12 * (1.0 + h), "{t}");
            assert!((life.sf(t) - (-h).exp()).abs() < 1e-14, "{t}");
            if t > 0.0 {
                let back = life.isf(life.sf(t));
                assert!((back - t).abs() < 1e-9 * t, "{t}: {back}");
                let q = life.quantile(life.cdf(t));
                assert!((q - t).abs() < 1e-9 * t, "{t}: {q}");
            }
        }
        // hazard: factor times the base hazard in each segment
        let h50 = beta / alpha * (50.0f64 / alpha).powf(beta - 1.0);
        assert!((life.hazard(50.0) - 2.5 * h50).abs() < 1e-15);
    }

    #[test]
    fn a_change_applies_after_its_time_for_a_step_base() {
        // Breslow-like steps at 40 (H0 0.1) and 90 (H0 0.3): the jump at 40 keeps factor 1,
        // the jump at 90 takes factor 3 (the segment (40, 90] holds it).
        let base = Dist::Table(Table::steps(&[[40.0, -(-0.1f64).exp_m1()], [90.0, -(-0.3f64).exp_m1()]]).unwrap());
        let life = PathLife::new(base, &spec(&[0.0, 40.0], &[1.0, 3.0], None, "hazard")).unwrap();
        assert!((life.cumulative_hazard(40.0) - 0.1).abs() < 1e-12);
        assert!((life.cumulative_hazard(89.0) - 0.1).abs() < 1e-12);
        assert!((life.cumulative_hazard(90.0) - (0.1 + 3.0 * 0.2)).abs() < 1e-12);
        // beyond the last step nothing accrues: the rest of the mass never fails
        assert!(life.isf(0.3).is_infinite());
        assert_eq!(life.isf(0.95), 40.0);
        assert_eq!(life.isf(0.6), 90.0);
        assert_eq!(life.mean(), f64::INFINITY);
    }

    #[test]
    fn periodic_phases_repeat() {
        let (alpha, beta) = (50.0, 2.0);
        let life =
            PathLife::new(weibull(alpha, beta), &spec(&[0.0, 3.0], &[0.5, 4.0], Some(10.0), "hazard")).unwrap();
        let mut cuts = Vec::new();
        for j in 0..40 {
            let p0 = 10.0 * j as f64;
            cuts.push((p0, p0 + 3.0, 0.5));
            cuts.push((p0 + 3.0, p0 + 10.0, 4.0));
        }
        for t in [1.0, 3.0, 7.5, 10.0, 13.2, 55.0, 99.9] {
            let h = closed_h(alpha, beta, &cuts, t);
            assert!((life.cumulative_hazard(t) - h).abs() <= 1e-11 * (1.0 + h), "{t}");
            let back = life.isf(life.sf(t));
            assert!((back - t).abs() < 1e-9 * t, "{t}: {back}");
        }
        // sampled lives follow the closed-form survival (fixed seed, 4.5 standard errors)
        let n = 200_000;
        for (i, t) in [10.0, 25.0, 40.0].into_iter().enumerate() {
            let mut r = Stream::new(11, i as u64);
            let hits = (0..n).filter(|_| life.sample(&mut r) > t).count() as f64 / n as f64;
            let s = (-closed_h(alpha, beta, &cuts, t)).exp();
            assert!((hits - s).abs() < 4.5 * (s * (1.0 - s) / n as f64).sqrt(), "{t}: {hits} vs {s}");
        }
    }

    #[test]
    fn time_scale_runs_the_clock_faster() {
        // AFT: psi(t) = 0.5 t up to 20, then 20 * 0.5 + 2 (t - 20); S(t) = S0(psi(t)).
        let base = weibull(30.0, 1.3);
        let life = PathLife::new(base.clone(), &spec(&[0.0, 20.0], &[0.5, 2.0], None, "time")).unwrap();
        for t in [5.0, 20.0, 31.0, 80.0] {
            let psi = if t <= 20.0 { 0.5 * t } else { 10.0 + 2.0 * (t - 20.0) };
            assert!((life.sf(t) - base.sf(psi)).abs() < 1e-15, "{t}");
            let back = life.isf(life.sf(t));
            assert!((back - t).abs() < 1e-9 * t, "{t}: {back}");
        }
        // one constant factor is a scaled life: mean = mean0 / m
        let scaled = PathLife::new(base.clone(), &spec(&[0.0], &[2.0], None, "time")).unwrap();
        assert!((scaled.mean() - base.mean() / 2.0).abs() < 1e-9 * base.mean());
    }

    #[test]
    fn mean_of_a_constant_hazard_factor_is_the_scaled_weibull() {
        // PH factor m on a Weibull(alpha, beta) is a Weibull with scale alpha m^(-1/beta).
        let life = PathLife::new(weibull(100.0, 2.0), &spec(&[0.0], &[4.0], None, "hazard")).unwrap();
        let exact = Weibull::new(100.0 * 4f64.powf(-0.5), 2.0, 0.0).unwrap();
        assert!((life.mean() - exact.mean()).abs() < 1e-9 * exact.mean(), "{}", life.mean());
        // and residual lives condition on the age
        let mut rng = Stream::new(5, 5);
        let n = 200_000;
        let (a, x) = (30.0, 20.0);
        let hits = (0..n).filter(|_| life.sample_residual(a, &mut rng) > x).count() as f64 / n as f64;
        let s = exact.sf(a + x) / exact.sf(a);
        assert!((hits - s).abs() < 4.5 * (s * (1.0 - s) / n as f64).sqrt());
    }

    #[test]
    fn refuses_bad_paths() {
        let w = || weibull(1.0, 1.0);
        assert!(PathLife::new(w(), &spec(&[1.0], &[1.0], None, "hazard")).is_err());
        assert!(PathLife::new(w(), &spec(&[0.0, 2.0, 2.0], &[1.0, 1.0, 1.0], None, "hazard")).is_err());
        assert!(PathLife::new(w(), &spec(&[0.0, 2.0], &[1.0, 0.0], None, "hazard")).is_err());
        assert!(PathLife::new(w(), &spec(&[0.0, 2.0], &[1.0], None, "hazard")).is_err());
        assert!(PathLife::new(w(), &spec(&[0.0, 2.0], &[1.0, 1.0], Some(2.0), "hazard")).is_err());
        assert!(PathLife::new(w(), &spec(&[0.0], &[1.0], None, "speed")).is_err());
    }
}
