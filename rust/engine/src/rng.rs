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
    /// Stratified runs: uniforms still to draw from the set's Latin hypercube (see
    /// `Draws::Stratified`), the set's key and this replication's place in it.
    left: u32,
    set_key: u64,
    member: u64,
}

/// How a replication draws: its own stream (plain), or a member of an antithetic pair or
/// of a stratified set (variance reduction's streams; see `Stream::for_replication`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Draws {
    Plain,
    Antithetic,
    /// A member of a stratified set whose first this many uniforms are stratified.
    Stratified(u32),
}

/// Replications of a stratified set: a power of two, so an affine map mod `SET` with an odd
/// slope permutes its strata.
pub const SET: u64 = 16;

/// Most uniforms of a replication drawn from its set's Latin hypercube: a run stratifies
/// its first n, n the diagram's units, where every unit's first life is drawn (in unit
/// order; a diagram of more units has the rest plain).
pub const STRATIFIED_DRAWS: u32 = 64;

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
        Stream::from_state(s)
    }

    /// The stream of replication `rep`: `Stream::new(seed, rep)` for a plain run; for an
    /// antithetic one, replications 2k and 2k + 1 share pair k's stream (of a seed of its
    /// own, so no pair repeats a plain replication), the odd one reading every uniform as
    /// 1 - U, and both draw lives by inversion. Keyed by the replication's index alone, so
    /// any split over threads, chunks or a cluster draws the same numbers.
    ///
    /// A stratified one's replications form sets of `SET` (replications SET·k to
    /// SET·k + SET - 1), each drawing from a stream of its own seed (no plain replication's):
    /// its first n uniforms (`Draws::Stratified(n)`, at most `STRATIFIED_DRAWS`) are a Latin
    /// hypercube over the set, coordinate i
    /// of member j in stratum (a·j + b) mod SET (a odd and b from a hash of the set and i:
    /// a permutation of the strata, each stratum uniform for a given member) plus a uniform
    /// offset within it from the member's stream, and drawn lives invert them. Each
    /// replication alone is then a plain replication in law (its uniforms independent and
    /// uniform), the members of a set are not independent, and sets are.
    pub fn for_replication(seed: u64, rep: u64, draws: Draws) -> Self {
        match draws {
            Draws::Plain => Stream::new(seed, rep),
            Draws::Antithetic => {
                let mut s = Stream::new(substream_seed(seed, ANTITHETIC), rep / 2);
                s.flip = if rep % 2 == 1 { (1u64 << 53) - 1 } else { 0 };
                s.invert = true;
                s
            }
            Draws::Stratified(n) => {
                let own = substream_seed(seed, STRATIFIED);
                let mut s = Stream::new(own, rep);
                s.left = n.min(STRATIFIED_DRAWS);
                s.set_key = mix64(own ^ mix64((rep / SET).wrapping_add(GOLDEN)));
                s.member = rep % SET;
                s.invert = s.left > 0;
                s
            }
        }
    }

    /// A stream with an explicit state (for reference-vector tests).
    pub fn from_state(s: [u64; 4]) -> Self {
        Stream {
            s,
            flip: 0,
            invert: false,
            left: 0,
            set_key: 0,
            member: 0,
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
        if self.left > 0 {
            return self.stratified();
        }
        (((self.next_u64() >> 11) ^ self.flip) as f64 + 0.5) * (1.0 / (1u64 << 53) as f64)
    }

    /// The next coordinate of the set's Latin hypercube (`for_replication`), in (0, 1).
    #[cold]
    #[inline(never)]
    fn stratified(&mut self) -> f64 {
        // Coordinates counted down from the last: a key of its own for each, in any order.
        let i = self.left as u64;
        self.left -= 1;
        if self.left == 0 {
            self.invert = false; // the rest of the replication draws as a plain one
        }
        let h = mix64(self.set_key ^ (i + 1).wrapping_mul(0xD1B5_4A32_D192_ED03));
        let mask = SET - 1;
        let (a, b) = ((h | 1) & mask, (h >> 32) & mask);
        let stratum = a.wrapping_mul(self.member).wrapping_add(b) & mask;
        let v = ((self.next_u64() >> 11) as f64 + 0.5) * (1.0 / (1u64 << 53) as f64);
        // The sum may round up to SET in the top stratum: kept below 1.
        ((stratum as f64 + v) / SET as f64).min(1.0 - f64::EPSILON / 2.0)
    }
}

/// The unit index no block reaches, whose substream seeds antithetic pairs' streams.
const ANTITHETIC: u64 = u64::MAX - 1;
/// Likewise for stratified sets' streams.
const STRATIFIED: u64 = u64::MAX - 2;

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
        let (mut a, mut b) = (
            Stream::new(9, 5),
            Stream::for_replication(9, 5, Draws::Plain),
        );
        for _ in 0..100 {
            assert_eq!(a.uniform().to_bits(), b.uniform().to_bits());
        }
        assert!(!b.inverts());
    }

    #[test]
    fn antithetic_pairs_read_u_and_one_minus_u() {
        for k in [0u64, 1, 17, 1 << 40] {
            let mut a = Stream::for_replication(3, 2 * k, Draws::Antithetic);
            let mut b = Stream::for_replication(3, 2 * k + 1, Draws::Antithetic);
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
        let x = Stream::for_replication(3, 0, Draws::Antithetic).uniform();
        assert_ne!(
            x,
            Stream::for_replication(3, 2, Draws::Antithetic).uniform()
        );
        assert_ne!(x, Stream::new(3, 0).uniform());
    }

    #[test]
    fn mirrored_uniforms_are_uniform() {
        // Mean and the fraction below 0.1 of the odd member of pairs, over many pairs:
        // 1 - U is uniform when U is.
        let n = 200_000;
        let (mut sum, mut low) = (0.0, 0u32);
        for k in 0..n {
            let u = Stream::for_replication(11, 2 * k + 1, Draws::Antithetic).uniform();
            sum += u;
            low += u32::from(u < 0.1);
        }
        let mean = sum / n as f64;
        // sd of the mean sqrt(1/12/n) = 6.5e-4; of the fraction sqrt(.09/n) = 6.7e-4.
        assert!((mean - 0.5).abs() < 4.0 * 6.5e-4, "{mean}");
        assert!((low as f64 / n as f64 - 0.1).abs() < 4.0 * 6.7e-4);
    }

    #[test]
    fn a_stratified_set_takes_each_stratum_once_per_coordinate() {
        for (seed, k) in [(3u64, 0u64), (3, 5), (99, 1 << 30)] {
            let mut members: Vec<Stream> = (0..SET)
                .map(|j| {
                    Stream::for_replication(seed, SET * k + j, Draws::Stratified(STRATIFIED_DRAWS))
                })
                .collect();
            assert!(members.iter().all(|s| s.inverts()));
            for _ in 0..STRATIFIED_DRAWS {
                let mut strata: Vec<u64> = members
                    .iter_mut()
                    .map(|m| {
                        let u = m.uniform();
                        assert!(u > 0.0 && u < 1.0);
                        (u * SET as f64) as u64
                    })
                    .collect();
                strata.sort_unstable();
                assert_eq!(strata, (0..SET).collect::<Vec<_>>());
            }
            // Past the hypercube a member draws as a plain replication (ziggurat and all).
            assert!(members.iter().all(|s| !s.inverts()));
        }
        // Sets differ from each other and from the plain and antithetic replications.
        let x = Stream::for_replication(3, 0, Draws::Stratified(STRATIFIED_DRAWS)).uniform();
        assert_ne!(
            x,
            Stream::for_replication(3, SET, Draws::Stratified(STRATIFIED_DRAWS)).uniform()
        );
        assert_ne!(x, Stream::new(3, 0).uniform());
    }

    #[test]
    fn a_stratified_members_uniforms_are_uniform_and_independent() {
        // Member 3 of many sets, its coordinates 0 and 1: each uniform (mean, fraction below
        // 0.1), and their product's mean 1/4 (independence of coordinates in a member).
        let n = 100_000u64;
        let (mut sum, mut low, mut prod) = (0.0, 0u32, 0.0);
        for k in 0..n {
            let mut s =
                Stream::for_replication(17, SET * k + 3, Draws::Stratified(STRATIFIED_DRAWS));
            let (u, v) = (s.uniform(), s.uniform());
            sum += u;
            low += u32::from(u < 0.1);
            prod += u * v;
        }
        let nf = n as f64;
        // sds: mean sqrt(1/12/n) = 9.1e-4; fraction sqrt(.09/n) = 9.5e-4; product
        // sqrt((1/9 - 1/16)/n) = 7.0e-4.
        assert!((sum / nf - 0.5).abs() < 4.0 * 9.1e-4, "{}", sum / nf);
        assert!((low as f64 / nf - 0.1).abs() < 4.0 * 9.5e-4);
        assert!((prod / nf - 0.25).abs() < 4.0 * 7.0e-4, "{}", prod / nf);
    }

    #[test]
    fn a_run_stratifies_as_many_uniforms_as_it_asks() {
        // A diagram of 3 units: 3 stratified draws by inversion, then a plain replication's.
        let mut s = Stream::for_replication(5, 7, Draws::Stratified(3));
        for _ in 0..3 {
            assert!(s.inverts());
            s.uniform();
        }
        assert!(!s.inverts());
        // None asked: a plain draw from the start (of the stratified run's own stream).
        assert!(!Stream::for_replication(5, 7, Draws::Stratified(0)).inverts());
    }
}
