//! Standard exponential draws by the ziggurat method (Marsaglia and Tsang, 2000; the
//! layout rand_distr uses): 256 layers, so ~98.9% of draws cost one random word, one
//! multiply and one compare, with no logarithm. Exact in distribution.
use crate::rng::Stream;
use std::sync::OnceLock;

const LAYERS: usize = 256;
/// Start of the tail and area of each layer, for f(x) = exp(-x) with 256 layers.
const R: f64 = 7.697_117_470_131_05;
const V: f64 = 0.003_949_659_822_581_557;

pub struct Tables {
    x: [f64; LAYERS + 1],
    f: [f64; LAYERS + 1],
}

/// The layer tables, built once per process.
pub fn tables() -> &'static Tables {
    static T: OnceLock<Tables> = OnceLock::new();
    T.get_or_init(|| {
        let mut x = [0.0; LAYERS + 1];
        x[0] = V / (-R).exp();
        x[1] = R;
        for i in 2..LAYERS {
            x[i] = -(V / x[i - 1] + (-x[i - 1]).exp()).ln();
        }
        x[LAYERS] = 0.0;
        let mut f = [0.0; LAYERS + 1];
        for i in 0..=LAYERS {
            f[i] = (-x[i]).exp();
        }
        Tables { x, f }
    })
}

impl Tables {
    /// One Exp(1) draw. Only the first try is inlined into callers: it ends the draw
    /// ~98.9% of the time, and keeping the rest out of line leaves the caller's hot loop
    /// small (same draws, same random words, as one loop).
    #[inline(always)]
    pub fn exp1(&self, rng: &mut Stream) -> f64 {
        let bits = rng.next_u64();
        let i = (bits & 0xff) as usize;
        // Uniform on [0, 1) from the top 52 bits, disjoint from the layer bits.
        let u = (bits >> 12) as f64 * (1.0 / (1u64 << 52) as f64);
        let x = u * self.x[i];
        if x < self.x[i + 1] {
            return x;
        }
        self.exp1_rest(i, x, rng)
    }

    /// The tail or wedge test of a first try that missed its layer's box, then any retries.
    #[cold]
    #[inline(never)]
    fn exp1_rest(&self, mut i: usize, mut x: f64, rng: &mut Stream) -> f64 {
        loop {
            if i == 0 {
                return R - rng.uniform().ln(); // the tail beyond R, memoryless
            }
            if self.f[i + 1] + (self.f[i] - self.f[i + 1]) * rng.uniform() < (-x).exp() {
                return x;
            }
            let bits = rng.next_u64();
            i = (bits & 0xff) as usize;
            let u = (bits >> 12) as f64 * (1.0 / (1u64 << 52) as f64);
            x = u * self.x[i];
            if x < self.x[i + 1] {
                return x;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_have_equal_area_and_close_at_the_top() {
        // Each box x_i (f_{i+1} - f_i) and the base strip with its tail, x_0 f(R), hold V;
        // the recursion from R must end at the density's top (x_256 = 0, f = 1) with the
        // last box holding V too, which is what pins R and V to each other.
        let t = tables();
        assert_eq!(t.x[1], R);
        assert!((t.x[0] * (-R).exp() - V).abs() < 1e-15);
        for i in 1..LAYERS {
            let area = t.x[i] * (t.f[i + 1] - t.f[i]);
            assert!((area / V - 1.0).abs() < 1e-9, "layer {i}: {area}");
            assert!(t.x[i + 1] < t.x[i]);
        }
    }

    #[test]
    fn draws_are_pinned() {
        let mut r = Stream::new(3, 4);
        let got: Vec<f64> = (0..5).map(|_| tables().exp1(&mut r)).collect();
        crate::dist::testkit::assert_pinned(
            &got,
            &[
                0.4381600172732493,
                1.830888251807988,
                0.5796031692721854,
                1.4745299436088084,
                0.7830009943003333,
            ],
        );
    }
}
