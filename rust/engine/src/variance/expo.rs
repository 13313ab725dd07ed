//! Sums of exponentials in time, Σ c_m exp(-r_m t): the point availability of an
//! exponential unit that starts new (alternating renewal, Barlow and Proschan:
//! A(t) = μ/(λ+μ) + λ/(λ+μ) exp(-(λ+μ) t)) is one, and sums and products of them are
//! again such sums. So a k-of-n block of such units, and a tree of independent blocks
//! joined by k-of-n votes, has its probability of working at t in this form, and its
//! integral over any interval is exact: the known means the variance reduction uses.

/// Most terms a sum may hold; a larger one is not used (its known mean would cost more
/// than a run).
const MAX_TERMS: usize = 4096;

/// Σ c_m exp(-r_m t), rates ascending, each once (rate 0 is the constant term).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ExpSum {
    #[serde(with = "bits")]
    pub terms: Vec<(f64, f64)>,
}

/// f64s kept in a run's state as their bit patterns: serde_json's default parsing may
/// land one ulp off a printed value, and a merge compares plans exactly (a state crosses
/// JSON between chunks of a cluster run).
pub(crate) mod bits {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(v: &[(f64, f64)], s: S) -> Result<S::Ok, S::Error> {
        let b: Vec<(u64, u64)> = v.iter().map(|&(a, c)| (a.to_bits(), c.to_bits())).collect();
        b.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(f64, f64)>, D::Error> {
        let b = Vec::<(u64, u64)>::deserialize(d)?;
        Ok(b.into_iter()
            .map(|(a, c)| (f64::from_bits(a), f64::from_bits(c)))
            .collect())
    }

    /// One f64 as its bits.
    pub mod one {
        use serde::{Deserialize, Deserializer, Serialize, Serializer};

        pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
            v.to_bits().serialize(s)
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
            Ok(f64::from_bits(u64::deserialize(d)?))
        }
    }
}

impl ExpSum {
    pub fn constant(c: f64) -> Self {
        ExpSum {
            terms: vec![(0.0, c)],
        }
    }

    /// Terms sorted by rate, equal rates (to 1e-12 relative: the same λ+μ reached by
    /// different sums of the same rates) merged.
    fn normal(mut terms: Vec<(f64, f64)>) -> Option<Self> {
        terms.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut out: Vec<(f64, f64)> = Vec::with_capacity(terms.len());
        for (r, c) in terms {
            match out.last_mut() {
                Some(last) if (r - last.0).abs() <= 1e-12 * r.max(last.0) => last.1 += c,
                _ => out.push((r, c)),
            }
        }
        out.retain(|t| t.1 != 0.0);
        (out.len() <= MAX_TERMS).then_some(ExpSum { terms: out })
    }

    pub fn add(&self, o: &ExpSum, sign: f64) -> Option<ExpSum> {
        let mut t = self.terms.clone();
        t.extend(o.terms.iter().map(|&(r, c)| (r, sign * c)));
        Self::normal(t)
    }

    pub fn mul(&self, o: &ExpSum) -> Option<ExpSum> {
        if self.terms.len() * o.terms.len() > 4 * MAX_TERMS {
            return None;
        }
        let mut t = Vec::with_capacity(self.terms.len() * o.terms.len());
        for &(r1, c1) in &self.terms {
            for &(r2, c2) in &o.terms {
                t.push((r1 + r2, c1 * c2));
            }
        }
        Self::normal(t)
    }

    /// 1 - self.
    pub fn complement(&self) -> Option<ExpSum> {
        ExpSum::constant(1.0).add(self, -1.0)
    }

    pub fn at(&self, t: f64) -> f64 {
        self.terms.iter().map(|&(r, c)| c * (-r * t).exp()).sum()
    }

    /// ∫_a^b, exactly: c (b - a) for the constant, c/r e^{-r a} (1 - e^{-r (b-a)})
    /// otherwise (expm1 keeps short intervals precise). A term past r a = 60 is below
    /// e^-60 of its size and left out: most intervals of a long run read the constant alone.
    pub fn integral(&self, a: f64, b: f64) -> f64 {
        let mut s = 0.0;
        for &(r, c) in &self.terms {
            if r == 0.0 {
                s += c * (b - a);
            } else if r * a < 60.0 {
                s += c / r * (-r * a).exp() * -(-r * (b - a)).exp_m1();
            }
        }
        s
    }
}

/// The point availability of one exponential unit (failure rate `lam`, repair rate `mu`)
/// that starts new.
pub fn unit_availability(lam: f64, mu: f64) -> ExpSum {
    let s = lam + mu;
    ExpSum {
        terms: vec![(0.0, mu / s), (s, lam / s)],
    }
}

/// P(at least `k` of `n` independent units with point availability `a` work), the sum
/// over j >= k of C(n, j) a^j (1 - a)^(n - j). Up to 16 units (the binomial expansion's
/// cancellation stays below 1e-11 of the result there).
pub fn k_of_n(a: &ExpSum, n: u32, k: u32) -> Option<ExpSum> {
    if k == 0 {
        return Some(ExpSum::constant(1.0));
    }
    if k > n {
        return Some(ExpSum::constant(0.0));
    }
    if n > 16 {
        return None;
    }
    let q = a.complement()?;
    let mut pa = vec![ExpSum::constant(1.0)];
    let mut pq = vec![ExpSum::constant(1.0)];
    for i in 1..=n as usize {
        pa.push(pa[i - 1].mul(a)?);
        pq.push(pq[i - 1].mul(&q)?);
    }
    let mut out = ExpSum::constant(0.0);
    let mut binom = 1.0; // C(n, j), built up from C(n, 0)
    for j in 0..=n {
        if j >= k {
            let term = pa[j as usize].mul(&pq[(n - j) as usize])?;
            out = out.add(&term, binom)?;
        }
        binom = binom * (n - j) as f64 / (j + 1) as f64;
    }
    Some(out)
}

/// P(at least `k` of independent events with probabilities `p` happen): the
/// Poisson-binomial tail, by the textbook recursion over the events.
pub fn at_least<T: Ring>(p: &[T], k: u32) -> Option<T> {
    // dist[j] = P(exactly j of the first i happen), j < k; the last slot holds ">= k".
    let k = k as usize;
    if k == 0 {
        return Some(T::one());
    }
    let mut dist = vec![T::zero(); k + 1];
    dist[0] = T::one();
    for pi in p {
        let qi = T::one().sub(pi)?;
        let mut next = vec![T::zero(); k + 1];
        for j in 0..=k {
            if dist[j].is_zero() {
                continue;
            }
            let stay = if j == k {
                dist[j].clone()
            } else {
                dist[j].mul(&qi)?
            };
            next[j] = next[j].plus(&stay)?;
            if j < k {
                let up = dist[j].mul(pi)?;
                next[j + 1] = next[j + 1].plus(&up)?;
            }
        }
        dist = next;
    }
    Some(dist[k].clone())
}

/// What `at_least` needs of a probability: plain numbers (one replication's) and sums of
/// exponentials (their expectations over time).
pub trait Ring: Clone {
    fn zero() -> Self;
    fn one() -> Self;
    fn is_zero(&self) -> bool;
    fn plus(&self, o: &Self) -> Option<Self>;
    fn sub(&self, o: &Self) -> Option<Self>;
    fn mul(&self, o: &Self) -> Option<Self>;
}

impl Ring for f64 {
    fn zero() -> Self {
        0.0
    }
    fn one() -> Self {
        1.0
    }
    fn is_zero(&self) -> bool {
        *self == 0.0
    }
    fn plus(&self, o: &Self) -> Option<Self> {
        Some(self + o)
    }
    fn sub(&self, o: &Self) -> Option<Self> {
        Some(self - o)
    }
    fn mul(&self, o: &Self) -> Option<Self> {
        Some(self * o)
    }
}

impl Ring for ExpSum {
    fn zero() -> Self {
        ExpSum::constant(0.0)
    }
    fn one() -> Self {
        ExpSum::constant(1.0)
    }
    fn is_zero(&self) -> bool {
        self.terms.is_empty()
    }
    fn plus(&self, o: &Self) -> Option<Self> {
        self.add(o, 1.0)
    }
    fn sub(&self, o: &Self) -> Option<Self> {
        self.add(o, -1.0)
    }
    fn mul(&self, o: &Self) -> Option<Self> {
        ExpSum::mul(self, o)
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// Composite Simpson on 2^16 panels: an independent reference for the integrals.
    pub(in crate::variance) fn simpson(f: impl Fn(f64) -> f64, a: f64, b: f64) -> f64 {
        let n = 1 << 16;
        let h = (b - a) / n as f64;
        let mut s = f(a) + f(b);
        for i in 1..n {
            s += f(a + i as f64 * h) * if i % 2 == 1 { 4.0 } else { 2.0 };
        }
        s * h / 3.0
    }

    #[test]
    fn a_units_availability_is_the_alternating_renewal_closed_form() {
        let (lam, mu) = (1e-3, 0.1);
        let a = unit_availability(lam, mu);
        for t in [0.0, 1.0, 10.0, 100.0, 1e4] {
            let exact = mu / (lam + mu) + lam / (lam + mu) * (-(lam + mu) * t).exp();
            assert!((a.at(t) - exact).abs() < 1e-15, "{t}");
        }
        // Mean unavailability over [0, T]: λ/s (1 - (1 - e^{-sT})/(sT)), s = λ + μ.
        let (s, t) = (lam + mu, 1e4);
        let exact = lam / s * (1.0 - (1.0 - (-s * t).exp()) / (s * t));
        let got = a.complement().unwrap().integral(0.0, t) / t;
        assert!((got / exact - 1.0).abs() < 1e-12, "{got} {exact}");
    }

    #[test]
    fn k_of_n_blocks_and_votes_integrate_as_simpson_does() {
        let a = unit_availability(0.02, 0.3);
        let b = unit_availability(0.005, 0.05);
        for (n, k) in [(1, 1), (3, 2), (4, 1), (5, 5), (8, 3)] {
            let p = k_of_n(&a, n, k).unwrap();
            let at = |t: f64| {
                let x = a.at(t);
                (k..=n)
                    .map(|j| {
                        let c = (0..j).fold(1.0, |c, i| c * (n - i) as f64 / (i + 1) as f64);
                        c * x.powi(j as i32) * (1.0 - x).powi((n - j) as i32)
                    })
                    .sum::<f64>()
            };
            for t in [0.0, 3.0, 50.0] {
                assert!((p.at(t) - at(t)).abs() < 1e-13, "{n} {k} {t}");
            }
            let (lo, hi) = (7.5, 400.0);
            let want = simpson(|t| 1.0 - at(t), lo, hi);
            let got = p.complement().unwrap().integral(lo, hi);
            assert!((got / want - 1.0).abs() < 1e-10, "{n}-of-{k}: {got} {want}");
        }
        // A 2-of-3 vote of three different blocks (Poisson-binomial over sums).
        let c = k_of_n(&b, 2, 1).unwrap();
        let vote = at_least(&[a.clone(), b.clone(), c.clone()], 2).unwrap();
        let num = |t: f64| at_least(&[a.at(t), b.at(t), c.at(t)], 2).unwrap();
        for t in [0.0, 20.0, 700.0] {
            assert!((vote.at(t) - num(t)).abs() < 1e-14, "{t}");
        }
        let p = [0.9, 0.8, 0.7];
        let exact = 0.9 * 0.8 + 0.9 * 0.7 + 0.8 * 0.7 - 2.0 * 0.9 * 0.8 * 0.7;
        assert!((at_least(&p, 2).unwrap() - exact).abs() < 1e-15);
        let want = simpson(|t| 1.0 - num(t), 0.0, 900.0);
        let got = vote.complement().unwrap().integral(0.0, 900.0);
        assert!((got / want - 1.0).abs() < 1e-10, "{got} {want}");
    }
}
