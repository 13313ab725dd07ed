//! Exactly mergeable statistics. Every per-replication value is rounded once to a fixed
//! point (2^-52 of a reference scale) and summed as an integer, so sums do not depend on
//! the order or grouping of replications: 1 thread or 32, one machine or ten, a run over
//! [a, b) merged with [b, c) equals the run over [a, c) bit for bit.
use serde::{Deserialize, Serialize};

const SCALE: f64 = (1u64 << 52) as f64;
/// fx(1.0): SCALE is a power of two, so 1 lands on the grid exactly.
const FX_ONE: i128 = 1 << 52;

/// A value on the fixed-point grid (x in units of the reference scale).
#[inline]
pub fn fx(x: f64) -> i128 {
    let y = (x * SCALE).round();
    // Per-replication values fit an i64, whose conversion is one instruction (an i128's is
    // a library call); the same integer either way.
    if y.abs() < 9.2e18 {
        y as i64 as i128
    } else {
        y as i128
    }
}

#[inline]
pub fn unfx(s: i128) -> f64 {
    s as f64 / SCALE
}

/// Count, sum and sum of squares of per-replication values (fixed point).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Moments {
    pub n: u64,
    pub sum: i128,
    pub sum_sq: i128,
}

impl Moments {
    /// No values yet (a state leaves such sums out).
    pub fn is_empty(&self) -> bool {
        *self == Moments::default()
    }

    #[inline]
    pub fn add(&mut self, x: f64) {
        self.n += 1;
        self.sum += fx(x);
        self.sum_sq += fx(x * x);
    }

    /// `add(1.0)` without rounding two products: 1² = 1, and 1 is exactly `FX_ONE` on the
    /// grid (the interval curve books mostly intervals up throughout).
    #[inline]
    pub fn add_one(&mut self) {
        self.n += 1;
        self.sum += FX_ONE;
        self.sum_sq += FX_ONE;
    }
    pub fn merge(&mut self, o: &Moments) {
        self.n += o.n;
        self.sum += o.sum;
        self.sum_sq += o.sum_sq;
    }
    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            f64::NAN
        } else {
            unfx(self.sum) / self.n as f64
        }
    }
    /// Standard error of the mean (0 with fewer than 2 values).
    pub fn std_error(&self) -> f64 {
        if self.n < 2 {
            return 0.0;
        }
        let n = self.n as f64;
        let m = self.mean();
        let var = ((unfx(self.sum_sq) - n * m * m) / (n - 1.0)).max(0.0);
        (var / n).sqrt()
    }
}

/// Wilson score interval for a proportion k/n at normal quantile z.
pub fn wilson(k: u64, n: u64, z: f64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let (k, n) = (k as f64, n as f64);
    let p = k / n;
    let z2 = z * z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = z / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

pub fn add_vec<T: Copy + std::ops::AddAssign>(a: &mut [T], b: &[T]) {
    for (x, y) in a.iter_mut().zip(b) {
        *x += *y;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_one_books_what_add_of_one_books() {
        assert_eq!(FX_ONE, fx(1.0));
        let (mut a, mut b) = (Moments::default(), Moments::default());
        a.add(1.0);
        b.add_one();
        assert_eq!(a, b);
    }

    #[test]
    fn fixed_point_matches_the_i128_conversion_everywhere() {
        let scale = (1u64 << 52) as f64;
        for x in [
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.0,
            1e-300,
            0.999_999_9,
            2040.0,
            -2040.0,
            2047.9,
            2048.0,
            -2048.0,
            3e6,
            -7e9,
            1e300,
            -1e300,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ] {
            assert_eq!(fx(x), (x * scale).round() as i128, "{x}");
        }
    }

    #[test]
    fn merge_is_exact_in_any_order() {
        let xs: Vec<f64> = (0..1000).map(|i| ((i as f64) * 0.37).sin().abs()).collect();
        let mut whole = Moments::default();
        xs.iter().for_each(|&x| whole.add(x));
        let mut a = Moments::default();
        let mut b = Moments::default();
        xs[..333].iter().for_each(|&x| a.add(x));
        xs[333..].iter().rev().for_each(|&x| b.add(x));
        b.merge(&a);
        assert_eq!(whole, b);
    }

    #[test]
    fn wilson_matches_textbook() {
        // Newcombe (1998) example: 81/263, 95% -> 0.2553 to 0.3662.
        let (lo, hi) = wilson(81, 263, 1.959963984540054);
        assert!(
            (lo - 0.2553).abs() < 1e-4 && (hi - 0.3662).abs() < 1e-4,
            "{lo} {hi}"
        );
    }
}
