//! Safeguarded Newton inversion for families without a closed-form quantile.

/// The root of an increasing `g` inside `[lo, hi]` (with g(lo) <= 0 <= g(hi)), by Newton
/// steps with derivative `dg`, falling back to bisection when a step leaves the bracket.
pub fn increasing_root(
    g: impl Fn(f64) -> f64,
    dg: impl Fn(f64) -> f64,
    mut lo: f64,
    mut hi: f64,
    x0: f64,
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
            next = if hi.is_finite() {
                0.5 * (lo + hi)
            } else {
                2.0 * x.abs().max(1.0) + x
            };
        }
        if (next - x).abs() <= 4.0 * f64::EPSILON * x.abs().max(f64::MIN_POSITIVE)
            || hi - lo <= 4.0 * f64::EPSILON * hi.abs()
        {
            return next;
        }
        x = next;
    }
    x
}
