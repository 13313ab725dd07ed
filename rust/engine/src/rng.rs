//! Per-replication random streams: xoshiro256++ seeded through SplitMix64 from
//! (seed, replication index), so every replication owns its stream and results do not
//! depend on how replications are spread over threads. No RNG is ever shared or cloned.

/// SplitMix64 finaliser (Steele, Lea, Flood 2014): a bijective 64-bit mix.
#[inline]
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// xoshiro256++ 1.0 (Blackman and Vigna), the generator behind rand_xoshiro's
/// `Xoshiro256PlusPlus`: fast, 256 bits of state, passes BigCrush.
#[derive(Debug)]
pub struct Stream {
    s: [u64; 4],
    /// XOR-ed into a uniform's 53 bits: 0, or 2^53 - 1 to turn k into 2^53 - 1 - k, so the
    /// uniform is exactly 1 - U (antithetic replications; see `for_replication`).
    flip: u64,
    /// Whether lives are drawn by inversion of the quantile (antithetic runs: monotone in
    /// U, which the ziggurat and rejection samplers are not).
    invert: bool,
}

impl Stream {
    /// The stream of replication `index` of a run seeded with `seed`.
    pub fn new(seed: u64, index: u64) -> Self {
        // Two mixing rounds decorrelate neighbouring (seed, index) pairs; SplitMix64
        // then fills the state as the xoshiro authors recommend.
        let mut x = mix64(seed.wrapping_add(GOLDEN))
            ^ mix64(
                index
                    .wrapping_mul(GOLDEN)
                    .wrapping_add(0x6A09_E667_F3BC_C909),
            );
        let mut s = [0u64; 4];
        for v in &mut s {
            x = x.wrapping_add(GOLDEN);
            *v = mix64(x);
        }
        if s == [0; 4] {
            s[0] = GOLDEN; // the all-zero state is the one fixed point
        }
        Stream {
            s,
            flip: 0,
            invert: false,
        }
    }

    /// The stream of replication `rep`: `Stream::new(seed, rep)` for a plain run; for an
    /// antithetic one, replications 2k and 2k + 1 share pair k's stream (of a seed of its
    /// own, so no pair repeats a plain replication), the odd one reading every uniform as
    /// 1 - U, and both draw lives by inversion. Keyed by the replication's index alone, so
    /// any split over threads, chunks or a cluster draws the same numbers.
    pub fn for_replication(seed: u64, rep: u64, antithetic: bool) -> Self {
        if !antithetic {
            return Stream::new(seed, rep);
        }
        let mut s = Stream::new(substream_seed(seed, ANTITHETIC), rep / 2);
        s.flip = if rep % 2 == 1 { (1u64 << 53) - 1 } else { 0 };
        s.invert = true;
        s
    }

    /// A stream with an explicit state (for reference-vector tests).
    pub fn from_state(s: [u64; 4]) -> Self {
        Stream {
            s,
            flip: 0,
            invert: false,
        }
    }

    /// Whether lives are drawn by inversion (antithetic runs).
    #[inline(always)]
    pub fn inverts(&self) -> bool {
        self.invert
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform on the open interval (0, 1): 53 random bits, centred, never 0 or 1, so
    /// `ln(u)` and quantiles at `u` are always finite.
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        (((self.next_u64() >> 11) ^ self.flip) as f64 + 0.5) * (1.0 / (1u64 << 53) as f64)
    }
}

/// The unit index no block reaches, whose substream seeds antithetic pairs' streams.
const ANTITHETIC: u64 = u64::MAX - 1;

/// The seed of unit `unit`'s own streams in a run seeded `seed` (common-random-numbers
/// runs): a bijective mix, so units' streams differ from each other and from the run's.
pub fn substream_seed(seed: u64, unit: u64) -> u64 {
    mix64(seed ^ mix64(unit.wrapping_add(1).wrapping_mul(0xD1B5_4A32_D192_ED03)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xoshiro256pp_reference_vector() {
        // First outputs for state [1, 2, 3, 4], from the reference C implementation
        // (also rand_xoshiro's test vector).
        let mut r = Stream::from_state([1, 2, 3, 4]);
        let expected: [u64; 10] = [
            41943041,
            58720359,
            3588806011781223,
            3591011842654386,
            9228616714210784205,
            9973669472204895162,
            14011001112246962877,
            12406186145184390807,
            15849039046786891736,
            10450023813501588000,
        ];
        for e in expected {
            assert_eq!(r.next_u64(), e);
        }
    }

    #[test]
    fn streams_differ_and_are_stable() {
        let mut a = Stream::new(7, 0);
        let mut b = Stream::new(7, 1);
        let mut c = Stream::new(7, 0);
        let (x, y, z) = (a.next_u64(), b.next_u64(), c.next_u64());
        assert_ne!(x, y);
        assert_eq!(x, z);
        let u = Stream::new(0, 0).uniform();
        assert!(u > 0.0 && u < 1.0);
    }

    #[test]
    fn a_plain_replications_stream_is_unchanged() {
        let (mut a, mut b) = (Stream::new(9, 5), Stream::for_replication(9, 5, false));
        for _ in 0..100 {
            assert_eq!(a.uniform().to_bits(), b.uniform().to_bits());
        }
        assert!(!b.inverts());
    }

    #[test]
    fn antithetic_pairs_read_u_and_one_minus_u() {
        for k in [0u64, 1, 17, 1 << 40] {
            let mut a = Stream::for_replication(3, 2 * k, true);
            let mut b = Stream::for_replication(3, 2 * k + 1, true);
            assert!(a.inverts() && b.inverts());
            for _ in 0..1000 {
                let (u, v) = (a.uniform(), b.uniform());
                // k + 0.5 and (2^53 - 1 - k) + 0.5 scaled by 2^-53: exactly 1 apart in
                // reals, each rounded once.
                assert!((u + v - 1.0).abs() <= f64::EPSILON, "{u} + {v}");
                assert!(u > 0.0 && u < 1.0 && v > 0.0 && v < 1.0);
            }
        }
        // Pairs differ from each other and from the plain replications of the seed.
        let x = Stream::for_replication(3, 0, true).uniform();
        assert_ne!(x, Stream::for_replication(3, 2, true).uniform());
        assert_ne!(x, Stream::new(3, 0).uniform());
    }

    #[test]
    fn mirrored_uniforms_are_uniform() {
        // Mean and the fraction below 0.1 of the odd member of pairs, over many pairs:
        // 1 - U is uniform when U is.
        let n = 200_000;
        let (mut sum, mut low) = (0.0, 0u32);
        for k in 0..n {
            let u = Stream::for_replication(11, 2 * k + 1, true).uniform();
            sum += u;
            low += u32::from(u < 0.1);
        }
        let mean = sum / n as f64;
        // sd of the mean sqrt(1/12/n) = 6.5e-4; of the fraction sqrt(.09/n) = 6.7e-4.
        assert!((mean - 0.5).abs() < 4.0 * 6.5e-4, "{mean}");
        assert!((low as f64 / n as f64 - 0.1).abs() < 4.0 * 6.7e-4);
    }
}
