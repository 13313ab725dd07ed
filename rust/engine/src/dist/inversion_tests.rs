//! Antithetic runs draw every family by inversion (`Stream::inverts`): each member of a
//! pair, and each member's remaining lives, follow the family's own cdf (KS at a fixed
//! seed), and the pair's draws are the quantiles at U and 1 - U.
use super::testkit::{N, ks_critical, ks_statistic};
use super::{Dist, DistSpec, Lifetime};
use crate::rng::{Draws, Stream};

fn family(id: &str, p: &[(&str, f64)], base: Option<&str>) -> Dist {
    Dist::from_spec(&DistSpec {
        distribution_id: id.into(),
        params: p.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        base_distribution_id: base.map(str::to_string),
        table: None,
        path: None,
    })
    .unwrap()
}

/// One case per family, with a location where the family has one (the ziggurat, rejection
/// and mixture samplers are the ones inversion replaces).
fn cases() -> Vec<Dist> {
    vec![
        family(
            "exponential",
            &[("failure_rate", 0.01), ("gamma", 5.0)],
            None,
        ),
        family("weibull", &[("alpha", 100.0), ("beta", 2.5)], None),
        family("normal", &[("mu", 50.0), ("sigma", 8.0)], None),
        family(
            "lognormal",
            &[("mu", 1.0), ("sigma", 0.6), ("gamma", 2.0)],
            None,
        ),
        family("gamma", &[("alpha", 0.7), ("beta", 3.0)], None),
        family(
            "gamma",
            &[("alpha", 4.5), ("beta", 2.0), ("gamma", 1.0)],
            None,
        ),
        family("loglogistic", &[("alpha", 2.0), ("beta", 4.0)], None),
        family("gumbel", &[("mu", 30.0), ("sigma", 4.0)], None),
        family("logistic", &[("mu", 30.0), ("sigma", 4.0)], None),
        family("uniform", &[("a", 2.0), ("b", 9.0)], None),
        family(
            "mixture",
            &[
                ("alpha1", 10.0),
                ("beta1", 0.8),
                ("weight1", 0.3),
                ("alpha2", 200.0),
                ("beta2", 3.0),
                ("weight2", 0.7),
            ],
            Some("weibull"),
        ),
    ]
}

fn pair(d: &Dist, seed: u64, k: u64) -> (Vec<f64>, Vec<f64>) {
    let mut a = Stream::for_replication(seed, 2 * k, Draws::Antithetic);
    let mut b = Stream::for_replication(seed, 2 * k + 1, Draws::Antithetic);
    let xs = (0..N).map(|_| d.draw(&mut a)).collect();
    let ys = (0..N).map(|_| d.draw(&mut b)).collect();
    (xs, ys)
}

#[test]
fn each_member_of_a_pair_follows_the_familys_cdf() {
    for (i, d) in cases().iter().enumerate() {
        let (mut xs, mut ys) = pair(d, 100 + i as u64, 3);
        for (who, v) in [("U", &mut xs), ("1 - U", &mut ys)] {
            let stat = ks_statistic(v, |t| d.cdf(t));
            let crit = ks_critical(N);
            assert!(stat <= crit, "{d:?} at {who}: KS D = {stat:.5} > {crit:.5}");
        }
    }
}

#[test]
fn a_pairs_draws_are_the_quantiles_at_u_and_one_minus_u() {
    for d in cases() {
        let (mut a, mut b) = (
            Stream::for_replication(7, 10, Draws::Antithetic),
            Stream::for_replication(7, 11, Draws::Antithetic),
        );
        let (mut ua, mut ub) = (
            Stream::for_replication(7, 10, Draws::Antithetic),
            Stream::for_replication(7, 11, Draws::Antithetic),
        );
        for _ in 0..200 {
            let (x, y) = (d.sample(&mut a), d.sample(&mut b));
            let (u, v) = (ua.uniform(), ub.uniform());
            assert_eq!(x.to_bits(), d.isf(u).to_bits(), "{d:?}");
            assert_eq!(y.to_bits(), d.isf(v).to_bits(), "{d:?}");
            // Inversion is monotone: the larger uniform gives the shorter life.
            if u < v {
                assert!(x >= y, "{d:?}: isf({u}) = {x} < isf({v}) = {y}");
            } else {
                assert!(x <= y, "{d:?}: isf({u}) = {x} > isf({v}) = {y}");
            }
        }
    }
}

#[test]
fn remaining_lives_by_inversion_are_conditional() {
    // P(T - a <= x | T > a) = 1 - S(a + x) / S(a), at the median age, for both members.
    for (i, d) in cases().iter().enumerate() {
        let age = d.quantile(0.5);
        let s = d.sf(age);
        for rep in [0u64, 1] {
            let mut r = Stream::for_replication(200 + i as u64, rep, Draws::Antithetic);
            let mut xs: Vec<f64> = (0..N).map(|_| d.sample_residual(age, &mut r)).collect();
            assert!(xs.iter().all(|&x| x >= 0.0), "{d:?}");
            let stat = ks_statistic(&mut xs, |x| 1.0 - d.sf(age + x) / s);
            let crit = ks_critical(N);
            assert!(
                stat <= crit,
                "{d:?} rep {rep}: KS D = {stat:.5} > {crit:.5}"
            );
        }
    }
}

#[test]
fn inversion_is_refused_by_the_wrong_cdf() {
    // The KS check above can fail: draws of a Weibull by inversion against a 5% larger scale.
    let d = family("weibull", &[("alpha", 100.0), ("beta", 2.5)], None);
    let wrong = family("weibull", &[("alpha", 105.0), ("beta", 2.5)], None);
    let (mut xs, _) = pair(&d, 1, 0);
    assert!(ks_statistic(&mut xs, |t| wrong.cdf(t)) > ks_critical(N));
}

#[test]
fn plain_streams_keep_the_familys_own_sampler() {
    // Not inverting: the ziggurat's numbers, as every pinned result expects.
    let d = family("exponential", &[("failure_rate", 0.5)], None);
    let (mut a, mut b) = (Stream::new(1, 2), Stream::new(1, 2));
    assert_eq!(d.draw(&mut a), super::ziggurat::tables().exp1(&mut b) / 0.5);
    let (mut a, mut b) = (Stream::new(1, 2), Stream::new(1, 2));
    assert_ne!(d.draw(&mut a), d.isf(b.uniform()));
}
