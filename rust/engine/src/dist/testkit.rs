//! Shared checks for the families' tests (test builds only): draws as the simulator makes
//! them, the one-sample Kolmogorov-Smirnov statistic, pinned draws, and the identities every
//! `Lifetime` must keep at ordinary and extreme arguments. Each family's file calls these
//! with its own parameter sets, so a check is written once and a family cannot skip one.

use super::{Dist, Lifetime};
use crate::rng::Stream;

/// Draws per goodness-of-fit check: D's critical value is then 0.0138, small enough that a
/// 5% shift of a scale or shape parameter is refused (each family shows it), and a check
/// costs a few milliseconds.
pub const N: usize = 20_000;

/// Probabilities for the quantile identities: both tails far out, and the median.
pub const PS: [f64; 5] = [1e-12, 1e-6, 0.5, 1.0 - 1e-6, 1.0 - 1e-12];

/// Arguments where nothing may be NaN: far below and above any support, at 0, tiny, huge.
pub const EXTREME_T: [f64; 11] = [
    f64::NEG_INFINITY,
    -1e300,
    -1.0,
    0.0,
    1e-300,
    1e-12,
    1.0,
    1e12,
    1e300,
    f64::MAX,
    f64::INFINITY,
];

const EPS: f64 = f64::EPSILON;

/// Critical value of D at alpha = 0.001 from Kolmogorov's limit law,
/// P(sqrt(n) D > c) ~ 2 exp(-2 c^2): c = sqrt(ln(2 / alpha) / 2) = 1.9495. At n = 20 000 the
/// finite-n correction is below 0.3%, so the test's level stays about 0.001.
pub fn ks_critical(n: usize) -> f64 {
    ((2.0f64 / 0.001).ln() / 2.0).sqrt() / (n as f64).sqrt()
}

/// `n` lives from replication stream (seed, 0), through `Dist::draw` as the simulator
/// draws them.
pub fn draws(d: &Dist, seed: u64, n: usize) -> Vec<f64> {
    let mut rng = Stream::new(seed, 0);
    (0..n).map(|_| d.draw(&mut rng)).collect()
}

/// D = sup |F_n - F| of a sample against a continuous `cdf` (sorts `xs`). Infinite draws
/// (mass that never fails) count in n but have no point: past the last finite draw the
/// empirical function stays put while F rises to its limit at f64::MAX.
pub fn ks_statistic(xs: &mut [f64], cdf: impl Fn(f64) -> f64) -> f64 {
    assert!(xs.iter().all(|x| !x.is_nan()), "a NaN draw");
    xs.sort_by(f64::total_cmp);
    let n = xs.len() as f64;
    let (mut d, mut k) = (0.0f64, 0usize);
    for (i, &x) in xs.iter().enumerate().take_while(|(_, x)| x.is_finite()) {
        let f = cdf(x);
        d = d.max((i + 1) as f64 / n - f).max(f - i as f64 / n);
        k = i + 1;
    }
    d.max((cdf(f64::MAX) - k as f64 / n).abs())
}

/// N draws at `seed` pass KS against the family's own cdf; returns them sorted.
pub fn assert_fits(d: &Dist, seed: u64) -> Vec<f64> {
    let mut xs = draws(d, seed, N);
    let stat = ks_statistic(&mut xs, |t| d.cdf(t));
    let crit = ks_critical(N);
    assert!(stat <= crit, "{d:?}: KS D = {stat:.5} > {crit:.5}");
    xs
}

/// The same check refuses draws of `sampled` against `wrong`'s cdf: proof that the fit
/// tests of this family can fail (the shift in `wrong` is the size they must detect).
pub fn assert_misfits(sampled: &Dist, wrong: &Dist, seed: u64) {
    let mut xs = draws(sampled, seed, N);
    let stat = ks_statistic(&mut xs, |t| wrong.cdf(t));
    let crit = ks_critical(N);
    assert!(
        stat > crit,
        "{sampled:?} vs {wrong:?}: D = {stat:.5} <= {crit:.5}"
    );
}

/// Remaining lives at `age` are >= 0 and pass KS against the conditional distribution
/// P(T - age <= x | T > age) = 1 - S(age + x) / S(age).
pub fn assert_residual_fits(d: &Dist, age: f64, seed: u64) {
    let mut rng = Stream::new(seed, 0);
    let mut xs: Vec<f64> = (0..N).map(|_| d.sample_residual(age, &mut rng)).collect();
    assert!(
        xs.iter().all(|&x| x >= 0.0),
        "{d:?}: a residual life < 0 at age {age}"
    );
    let s = d.sf(age);
    let stat = ks_statistic(&mut xs, |x| 1.0 - d.sf(age + x) / s);
    let crit = ks_critical(N);
    assert!(
        stat <= crit,
        "{d:?} at age {age}: KS D = {stat:.5} > {crit:.5}"
    );
}

/// Remaining lives of each case at the ages of its 0, 50 and 99% quantiles follow the
/// conditional cdf (seeds `seed`, `seed + 1`, ... per case).
pub fn assert_residuals_fit(cases: &[Dist], seed: u64) {
    for (i, d) in cases.iter().enumerate() {
        for p in [0.0, 0.5, 0.99] {
            assert_residual_fits(d, d.quantile(p), seed + i as u64);
        }
    }
}

/// The times at a law's 1, 30, 70 and 99.9% quantiles: where the density identities are read.
pub fn quantile_points(d: &Dist) -> Vec<f64> {
    [0.01, 0.3, 0.7, 0.999]
        .iter()
        .map(|&p| d.quantile(p))
        .collect()
}

/// `mean()` within 5 standard errors of the sample mean (families with a finite variance;
/// 5 SE: a correct mean fails one check in 1.7 million, a wrong formula by far more).
pub fn assert_mean_of(d: &Dist, xs: &[f64]) {
    let n = xs.len() as f64;
    let m = xs.iter().sum::<f64>() / n;
    let sd = (xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0)).sqrt();
    let want = d.mean();
    assert!(
        (m - want).abs() <= 5.0 * sd / n.sqrt(),
        "{d:?}: mean() = {want}, sample mean {m} (sd {sd})"
    );
}

/// Draws equal, bit for bit, to the ones pinned from the code when the pin was written (a
/// failure prints the new numbers). Bit equality because the simulator's results for a seed
/// are these numbers: a refactor that moves even a last bit changes published results and
/// must say so by changing the pin. (Pinned with glibc's libm on x86-64; a libm whose ln,
/// exp or powf round differently would move last bits too.)
#[track_caller]
pub fn assert_pinned(got: &[f64], want: &[f64]) {
    if got.len() != want.len()
        || got
            .iter()
            .zip(want)
            .any(|(a, b)| a.to_bits() != b.to_bits())
    {
        panic!("pinned draws changed:\n got  {got:?}\n want {want:?}");
    }
}

/// The first `n` remaining lives at `age`, at `seed` (stream index 0).
pub fn first_residuals(d: &Dist, age: f64, seed: u64, n: usize) -> Vec<f64> {
    let mut rng = Stream::new(seed, 0);
    (0..n).map(|_| d.sample_residual(age, &mut rng)).collect()
}

/// Points across the support: quantiles from 1e-12 to 1 - 1e-12, sorted, finite, distinct.
pub fn grid(d: &Dist) -> Vec<f64> {
    let mut ps: Vec<f64> = (1..=12).map(|k| 10f64.powi(-k)).collect();
    ps.extend((1..20).map(|i| i as f64 / 20.0));
    let mut ts: Vec<f64> = ps.iter().map(|&p| d.quantile(p)).collect();
    ts.extend(ps.iter().map(|&q| d.isf(q)));
    ts.retain(|t| t.is_finite());
    ts.sort_by(f64::total_cmp);
    ts.dedup();
    ts
}

/// Everywhere, including `EXTREME_T` and the grid: sf and cdf in [0, 1] adding to 1 (each is
/// a few ulps from its true value, so the sum is within 4 ulps of 1), pdf finite and >= 0
/// where the density is bounded (`bounded_pdf`), hazard and cumulative hazard >= 0 and not
/// NaN (+inf is the right answer where they overflow), and all of them monotone along the
/// sorted grid.
pub fn assert_sane(d: &Dist, bounded_pdf: bool) {
    let g = grid(d);
    for &t in EXTREME_T.iter().chain(&g) {
        let (s, c) = (d.sf(t), d.cdf(t));
        assert!(
            (0.0..=1.0).contains(&s) && (0.0..=1.0).contains(&c),
            "{d:?} at {t}: sf {s}, cdf {c}"
        );
        assert!(
            (s + c - 1.0).abs() <= 4.0 * EPS,
            "{d:?} at {t}: sf + cdf = {}",
            s + c
        );
        let (f, h, ch) = (d.pdf(t), d.hazard(t), d.cumulative_hazard(t));
        assert!(
            f >= 0.0 && (f.is_finite() || !bounded_pdf),
            "{d:?} at {t}: pdf {f}"
        );
        assert!(
            h >= 0.0 && ch >= 0.0,
            "{d:?} at {t}: hazard {h}, cumulative {ch}"
        );
    }
    // points closer than 1e-9 relative (quantile and isf met) would compare rounding only
    let mut g = g;
    g.dedup_by(|b, a| *b - *a <= 1e-9 * a.abs());
    for w in g.windows(2) {
        let (a, b) = (w[0], w[1]);
        assert!(
            d.cdf(a) <= d.cdf(b) && d.sf(a) >= d.sf(b),
            "{d:?}: not monotone on [{a}, {b}]"
        );
        assert!(
            d.cumulative_hazard(a) <= d.cumulative_hazard(b),
            "{d:?}: H falls on [{a}, {b}]"
        );
    }
    for p in [0.0, 1.0] {
        assert!(
            !d.quantile(p).is_nan() && !d.isf(p).is_nan(),
            "{d:?}: NaN quantile at {p}"
        );
    }
}

/// Below and at the start of the support `lo` (a location, a threshold, a table's first
/// knot): nothing has failed, no density, no hazard; the least quantile is `lo`.
pub fn assert_starts_at(d: &Dist, lo: f64) {
    for t in [lo - 1.0, lo] {
        assert_eq!(
            (d.sf(t), d.cdf(t), d.cumulative_hazard(t)),
            (1.0, 0.0, 0.0),
            "{d:?} at {t}"
        );
    }
    assert_eq!(
        (d.pdf(lo - 1.0), d.hazard(lo - 1.0)),
        (0.0, 0.0),
        "{d:?} below {lo}"
    );
    assert_eq!(d.quantile(0.0), lo, "{d:?}");
    assert_eq!(d.isf(1.0), lo, "{d:?}");
}

/// cdf(quantile(p)) = p and sf(isf(q)) = q at `PS`. Relative to the tail probability in the
/// tail each function serves (quantile low, isf high), to `rel` (the inversion's own
/// error) plus what rounding the answer x to its ulp must cost, pdf(x) * ulp(x). In the far
/// tail of the other function p is itself known only to an ulp of 1, so there the identity
/// holds to a few ulps of 1; so it does in the upper tail of a life given by F itself (a
/// table's knots hold F, whose ulp near 1 bounds S), `sf_relative` false.
pub fn assert_quantiles(d: &Dist, rel: f64, sf_relative: bool) {
    // Mass that never fails (a table short of F = 1) has an infinite quantile: then the
    // identity is that F never reaches p.
    let never = d.sf(f64::MAX);
    for p in PS {
        let x = d.quantile(p);
        if x == f64::INFINITY {
            assert!(
                1.0 - p < never,
                "{d:?}: quantile({p}) = inf, yet sf ends at {never}"
            );
            continue;
        }
        let slack = 8.0 * EPS * x.abs() * d.pdf(x);
        let err = if p <= 0.5 {
            (d.cdf(x) - p).abs() - rel * p
        } else {
            (d.cdf(x) - p).abs() - 8.0 * EPS
        };
        assert!(
            err <= slack,
            "{d:?}: cdf(quantile({p})) = {} (x = {x})",
            d.cdf(x)
        );
        let y = d.isf(p);
        if y == f64::INFINITY {
            assert!(p < never, "{d:?}: isf({p}) = inf, yet sf ends at {never}");
            continue;
        }
        let slack = 8.0 * EPS * y.abs() * d.pdf(y);
        let err = if p <= 0.5 && sf_relative {
            (d.sf(y) - p).abs() - rel * p
        } else {
            (d.sf(y) - p).abs() - 8.0 * EPS
        };
        assert!(err <= slack, "{d:?}: sf(isf({p})) = {} (y = {y})", d.sf(y));
    }
}

/// quantile(cdf(t)) = t (isf(sf(t)) in the upper half) on the grid: to a few ulps of t plus
/// the move that the probability's own relative error (`rel`, as in `assert_quantiles`, and a
/// few ulps) forces, (8 eps + rel) P / pdf(t), P the smaller tail.
pub fn assert_inverts(d: &Dist, rel: f64) {
    for t in grid(d) {
        let (c, s) = (d.cdf(t), d.sf(t));
        let back = if c <= 0.5 { d.quantile(c) } else { d.isf(s) };
        let tol = 8.0 * EPS * t.abs() + (8.0 * EPS + rel) * c.min(s) / d.pdf(t);
        // where F is flat just below t (a table without failures for a while) every point
        // of the flat has this F, and the quantile is the least of them
        let flat_below = d.cdf(t - 1e-6 * (t.abs() + 1.0)) == c;
        let ok = if flat_below {
            back <= t + tol
        } else {
            (back - t).abs() <= tol
        };
        assert!(ok, "{d:?}: {t} came back as {back}");
    }
}

/// At points `ts` where the life is smooth: pdf is the slope of cdf, hazard is pdf / sf and
/// the cumulative hazard -ln S (both ways of writing them agree to `rel`). The slope is a
/// central difference with step 1e-5 of the distance to the support's start `lo` (a
/// density varies on that scale, however heavy the tail), or of the scale `h` on the whole
/// line: truncation and rounding both stay under 1e-6 relative.
pub fn assert_density(d: &Dist, ts: &[f64], lo: f64, h: f64, rel: f64) {
    for &t in ts {
        let e = 1e-5 * if lo.is_finite() { t - lo } else { h };
        let (c, s) = (d.cdf(t), d.sf(t));
        // divide by the step as rounded, and difference the smaller tail (full precision)
        let (a, b) = (t - e, t + e);
        let slope = if c <= 0.5 {
            d.cdf(b) - d.cdf(a)
        } else {
            d.sf(a) - d.sf(b)
        } / (b - a);
        let f = d.pdf(t);
        assert!(
            (slope - f).abs() <= 1e-6 * f,
            "{d:?} at {t}: pdf {f}, slope of cdf {slope}"
        );
        if s > 0.0 {
            let hz = f / s;
            assert!(
                (d.hazard(t) - hz).abs() <= rel * hz,
                "{d:?} at {t}: hazard {} vs {hz}",
                d.hazard(t)
            );
            let ch = if c < 0.5 { -(-c).ln_1p() } else { -s.ln() };
            assert!(
                (d.cumulative_hazard(t) - ch).abs() <= rel * ch,
                "{d:?} at {t}: H {} vs {ch}",
                d.cumulative_hazard(t)
            );
        }
    }
}

/// Critical value of Pearson's chi-square with `df` degrees of freedom at alpha = 0.001, by
/// Wilson and Hilferty's cube-root normal approximation (z = 3.0902 is the normal's upper
/// 0.001 point). It errs high by 3% at df 1 and 0.1% at df 39, so the level stays between
/// 0.0008 and 0.001 (checked against scipy's chi2.isf).
pub fn chi2_critical(df: usize) -> f64 {
    let k = df as f64;
    let c = 2.0 / (9.0 * k);
    k * (1.0 - c + 3.090_232_306_167_813 * c.sqrt()).powi(3)
}

/// Pearson's statistic of `xs` against `atoms` (value, probability); the mass the atoms
/// leave over is the cell of infinite lives. Panics on a draw that is no atom.
pub fn chi2_statistic(xs: &[f64], atoms: &[(f64, f64)]) -> f64 {
    let mut counts = vec![0usize; atoms.len() + 1];
    for &x in xs {
        let cell = match atoms.iter().position(|&(a, _)| a == x) {
            Some(i) => i,
            None if x == f64::INFINITY => atoms.len(),
            None => panic!("draw {x} is none of the atoms {atoms:?}"),
        };
        counts[cell] += 1;
    }
    let rest = 1.0 - atoms.iter().map(|a| a.1).sum::<f64>();
    let probs = atoms.iter().map(|a| a.1).chain([rest]);
    let n = xs.len() as f64;
    counts
        .iter()
        .zip(probs)
        .filter(|(c, p)| *p > 1e-12 || **c > 0)
        .map(|(&c, p)| (c as f64 - n * p).powi(2) / (n * p))
        .sum()
}
