//! Safeguarded Newton inversion for families without a closed-form quantile.

/// The root of an increasing `g` inside `[lo, hi]` (with g(lo) <= 0 <= g(hi)), by Newton
/// steps with derivative `dg`, falling back to bisection when a step leaves the bracket.
pub fn increasing_root(
    g: impl Fn(f64) -> f64,
    dg: impl Fn(f64) -> f64,
    lo: f64,
    hi: f64,
    x0: f64,
) -> f64 {
    root_with_tol(g, dg, lo, hi, x0, 0.0)
}

/// As `increasing_root`, stopping when a step or the bracket is below `4 eps |x|` or
/// `abs_tol` (for roots near zero, e.g. on a log scale).
pub fn root_with_tol(
    g: impl Fn(f64) -> f64,
    dg: impl Fn(f64) -> f64,
    mut lo: f64,
    mut hi: f64,
    x0: f64,
    abs_tol: f64,
) -> f64 {
    let mut x = if x0 > lo && x0 < hi {
        x0
    } else {
        0.5 * (lo + hi)
    };
    for _ in 0..300 {
        let gx = g(x);
        if gx == 0.0 {
            return x;
        }
        if gx < 0.0 {
            lo = x;
        } else {
            hi = x;
        }
        let d = dg(x);
        let mut next = x - gx / d;
        if !(d > 0.0 && next > lo && next < hi) {
            next = 0.5 * (lo + hi);
        }
        let tol = (4.0 * f64::EPSILON * x.abs())
            .max(abs_tol)
            .max(f64::MIN_POSITIVE);
        if (next - x).abs() <= tol || hi - lo <= tol {
            return next;
        }
        x = next;
    }
    x
}
