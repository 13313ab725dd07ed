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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newton_finds_the_root_to_a_few_ulps() {
        let r = increasing_root(|x| x * x * x - 2.0, |x| 3.0 * x * x, 0.0, 2.0, 1.0);
        assert!((r - 2f64.cbrt()).abs() <= 4.0 * f64::EPSILON * r, "{r}");
    }

    #[test]
    fn a_useless_derivative_falls_back_to_bisection() {
        // zero, negative and NaN slopes and a start outside the bracket: still the root
        for dg in [|_: f64| 0.0, |_: f64| -1.0, |_: f64| f64::NAN] {
            let r = increasing_root(|x| x - 0.3, dg, 0.0, 1.0, 5.0);
            assert!((r - 0.3).abs() <= 4.0 * f64::EPSILON, "{r}");
        }
    }

    #[test]
    fn an_absolute_tolerance_stops_near_zero() {
        // a root at 0 has no relative tolerance; the absolute one ends the search there
        let r = root_with_tol(|y: f64| y.powi(3), |y| 3.0 * y * y, -1.0, 1.0, 0.7, 1e-12);
        assert!(r.abs() <= 1e-4, "{r}");
    }
}
