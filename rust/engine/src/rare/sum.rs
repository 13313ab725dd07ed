//! An order-independent exact sum of f64 values at any scale.
//!
//! The engine's other accumulators round each value to a fixed point of a reference scale
//! (`stats::fx`), which a rare-event run cannot use: a cycle's weighted downtime is of the
//! order of the unavailability (1e-6 to 1e-12 and below), and its square falls under any
//! fixed grid that also holds the cycle lengths. Here every value is split into its integer
//! mantissa and binary exponent and added, exactly, into the integer bucket of its exponent
//! band; buckets add as integers, so a sum does not depend on the order or grouping of the
//! values (thread count) and is read out once, in a fixed order.

/// Exponent bands of 32 binary orders each (2048 exponents / 32).
const BANDS: usize = 64;
const BAND_BITS: u32 = 32;

/// Sum of f64 values, exact until read (`value`).
#[derive(Debug, Clone, PartialEq)]
pub struct ExactSum {
    /// Bucket b holds an integer in units of 2^(32 b - 1074).
    buckets: [i128; BANDS],
}

impl Default for ExactSum {
    fn default() -> Self {
        ExactSum {
            buckets: [0; BANDS],
        }
    }
}

impl ExactSum {
    /// Add a finite value (a non-finite one is a caller's bug: the run checks its inputs).
    #[inline]
    pub fn add(&mut self, x: f64) {
        debug_assert!(x.is_finite());
        if x == 0.0 {
            return;
        }
        let bits = x.to_bits();
        let exp = ((bits >> 52) & 0x7ff) as u32;
        let frac = bits & ((1u64 << 52) - 1);
        // x = mant * 2^(e - 1074) with e >= 0 (subnormals: e = 0, no hidden bit).
        let (mant, e) = if exp == 0 {
            (frac, 0)
        } else {
            (frac | (1u64 << 52), exp - 1)
        };
        let v = (mant as i128) << (e % BAND_BITS);
        // A mantissa of 53 bits shifted by at most 31 fits 84 bits: 2^43 additions per bucket.
        let b = (e / BAND_BITS) as usize;
        if bits >> 63 == 1 {
            self.buckets[b] -= v;
        } else {
            self.buckets[b] += v;
        }
    }

    pub fn merge(&mut self, o: &ExactSum) {
        for (a, b) in self.buckets.iter_mut().zip(&o.buckets) {
            *a += *b;
        }
    }

    /// The sum, rounded once per band from the top: within a unit in the last place or two.
    pub fn value(&self) -> f64 {
        // Carry each band's overflow up, so every band but the top holds 32 bits.
        let mut b = self.buckets;
        for i in 0..BANDS - 1 {
            let carry = b[i] >> BAND_BITS;
            b[i] -= carry << BAND_BITS;
            b[i + 1] += carry;
        }
        let mut total = 0.0f64;
        for i in (0..BANDS).rev() {
            if b[i] != 0 {
                total += scaled(b[i] as f64, BAND_BITS as i32 * i as i32 - 1074);
            }
        }
        total
    }
}

/// x * 2^k without overflow or premature underflow in the factor.
fn scaled(mut x: f64, mut k: i32) -> f64 {
    while k > 1000 {
        x *= 2f64.powi(1000);
        k -= 1000;
    }
    while k < -1000 {
        x *= 2f64.powi(-1000);
        k += 1000;
    }
    x * 2f64.powi(k)
}

/// Count, sum and sum of squares of per-cycle values, exact in any order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExactMoments {
    pub n: u64,
    pub sum: ExactSum,
    pub sum_sq: ExactSum,
}

impl ExactMoments {
    #[inline]
    pub fn add(&mut self, x: f64) {
        self.n += 1;
        self.sum.add(x);
        self.sum_sq.add(x * x);
    }

    pub fn merge(&mut self, o: &ExactMoments) {
        self.n += o.n;
        self.sum.merge(&o.sum);
        self.sum_sq.merge(&o.sum_sq);
    }

    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            f64::NAN
        } else {
            self.sum.value() / self.n as f64
        }
    }

    /// Sample variance of the values (0 with fewer than 2).
    pub fn variance(&self) -> f64 {
        if self.n < 2 {
            return 0.0;
        }
        let n = self.n as f64;
        let m = self.mean();
        ((self.sum_sq.value() - n * m * m) / (n - 1.0)).max(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_exactly_in_any_order_at_any_scale() {
        // Values over 40 orders of magnitude, both signs: the sum of the values and of their
        // negatives is exactly 0, and any grouping gives the same bits.
        let xs: Vec<f64> = (0..2000)
            .map(|i| ((i as f64) * 0.731).sin() * 10f64.powi((i % 41) - 20))
            .collect();
        let mut a = ExactSum::default();
        xs.iter().for_each(|&x| a.add(x));
        let mut b = ExactSum::default();
        let mut c = ExactSum::default();
        xs[..777].iter().rev().for_each(|&x| b.add(x));
        xs[777..].iter().for_each(|&x| c.add(x));
        c.merge(&b);
        assert_eq!(a, c);
        assert_eq!(a.value().to_bits(), c.value().to_bits());
        xs.iter().for_each(|&x| a.add(-x));
        assert_eq!(a.value(), 0.0);
        // A tiny value survives next to a large one (fixed point would lose it).
        let mut s = ExactSum::default();
        s.add(1e20);
        s.add(3e-20);
        s.add(-1e20);
        assert_eq!(s.value(), 3e-20);
        let mut m = ExactMoments::default();
        for x in [1e-9, 2e-9, 3e-9] {
            m.add(x);
        }
        assert!((m.mean() - 2e-9).abs() < 1e-24);
        assert!((m.variance() - 1e-18).abs() < 1e-30, "{}", m.variance());
    }
}
