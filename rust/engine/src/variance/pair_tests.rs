//! Antithetic pairs against the closed form, thread counts, merges at any split (odd ones
//! too: a pair's members in different pieces), the estimator by hand, and the fallback.
use super::tests::{exact, options};
use super::turn_tests::booked;
use super::*;
use crate::availability::{AvailabilityAcc, Precision, run_reduced, run_with};
use crate::fixtures::exp;
use crate::parallel::Control as RunControl;

/// The plant and its closed form are the control-variate tests' own (two trains of `k`
/// exponential blocks), so both methods are checked against the same reference.
fn trains(k: usize) -> Compiled {
    super::tests::trains(k, |_| exp(super::tests::LAM))
}

fn run(
    c: &Compiled,
    o: &AvailabilityOptions,
    start: u64,
    n: u64,
    threads: usize,
) -> AvailabilityAcc {
    run_reduced(
        c,
        o,
        Method::Antithetic,
        start,
        Precision::Replications(n),
        Some(threads),
        &RunControl::new(),
    )
    .unwrap()
}

#[test]
fn antithetic_runs_cover_the_closed_form_and_report_their_factor() {
    let (k, horizon) = (3, 500.0);
    let c = trains(k);
    let truth = exact(k, horizon);
    let a = run(&c, &options(horizon, 11), 0, 4000, 2);
    let s = a.summary();
    let vr = s.variance_reduction.as_ref().unwrap();
    assert_eq!(vr.method, "antithetic");
    assert_eq!(vr.pairs, Some(2000));
    assert_eq!(vr.degrees_of_freedom, Some(1999.0));
    let f = vr.factor.unwrap();
    let u = 1.0 - s.mean_availability;
    let half = (s.mean_availability_upper - s.mean_availability_lower) / 2.0;
    assert!((u - truth).abs() < half, "{u} vs {truth} ± {half}");
    // The factor is the plain per-replication variance over twice the pair means'.
    let per_rep = vr.plain_std_error.powi(2) * 4000.0;
    let pair_var = s.mean_availability_std_error.powi(2) * 2000.0;
    assert!((per_rep / (2.0 * pair_var) / f - 1.0).abs() < 1e-12);
    assert_eq!(vr.fallback.is_some(), f <= pairs::PAIR_CPU_COST);
    assert!((vr.efficiency.unwrap() - f / pairs::PAIR_CPU_COST).abs() < 1e-15);
    // Every replication is in a pair: the estimate is the run's plain mean.
    assert!((vr.plain_mean_availability - s.mean_availability).abs() < 1e-15);
    // Its own numbers: not a plain run's.
    let plain = run_with(
        &c,
        &options(horizon, 11),
        0,
        4000,
        Some(1),
        &RunControl::new(),
    )
    .unwrap();
    assert_ne!(plain.availability, a.availability);
}

#[test]
fn the_same_seed_gives_the_same_numbers_on_any_thread_count_and_any_split() {
    let c = trains(2);
    let o = options(300.0, 5);
    let one = run(&c, &o, 0, 500, 1);
    assert_eq!(one, run(&c, &o, 0, 500, 2));
    assert_eq!(
        one,
        run_reduced(
            &c,
            &o,
            Method::Antithetic,
            0,
            Precision::Replications(500),
            None,
            &RunControl::new()
        )
        .unwrap()
    );
    assert!(one.variance.as_ref().unwrap().ends.is_empty());
    // Split inside pairs (123 and 377 odd), merged in either order, through JSON.
    let a = run(&c, &o, 0, 123, 2);
    let b = run(&c, &o, 123, 254, 1);
    let d = run(&c, &o, 377, 123, 2);
    assert_eq!(a.variance.as_ref().unwrap().ends.len(), 1);
    assert_eq!(b.variance.as_ref().unwrap().ends.len(), 2);
    let json = |x: &AvailabilityAcc| -> AvailabilityAcc {
        serde_json::from_str(&serde_json::to_string(x).unwrap()).unwrap()
    };
    assert_eq!(json(&b), b);
    assert_eq!(a.merge(&json(&b)).unwrap().merge(&d).unwrap(), one);
    assert_eq!(d.merge(&b.merge(&a).unwrap()).unwrap(), one);
    // A plain run's state does not merge with an antithetic one's.
    let plain = run_with(&c, &o, 123, 254, Some(1), &RunControl::new()).unwrap();
    assert!(a.merge(&plain).is_err());
}

#[test]
fn a_replication_without_its_partner_is_left_out() {
    let c = trains(2);
    let o = options(300.0, 5);
    let odd = run(&c, &o, 0, 501, 2);
    let v = odd.variance.as_ref().unwrap();
    assert_eq!((v.pairs, v.n, v.ends.len()), (250, 501, 1));
    let even = run(&c, &o, 0, 500, 2);
    assert_eq!(odd.reduced().unwrap().0, even.reduced().unwrap().0);
}

#[test]
fn the_estimate_is_the_mean_of_pair_means_with_their_t_interval() {
    // By hand on 8 values: pair means, their sample variance, t(3) at 0.975 = 3.182446.
    let ys = [0.1, 0.3, 0.25, 0.05, 0.2, 0.22, 0.4, 0.0];
    let (v, plain) = booked(VarianceAcc::antithetic(), &ys, None);
    let (e, f) = v.estimate(&plain).unwrap();
    let means: Vec<f64> = ys.chunks(2).map(|p| (p[0] + p[1]) / 2.0).collect();
    let m = means.iter().sum::<f64>() / 4.0;
    let var = means.iter().map(|x| (x - m).powi(2)).sum::<f64>() / 3.0;
    assert!((e.unavailability - m).abs() < 1e-15);
    assert!((e.std_error - (var / 4.0).sqrt()).abs() < 1e-15);
    assert_eq!(e.degrees_of_freedom, 3.0);
    assert!((e.t - 3.182_446_305_284_263).abs() < 1e-9);
    let ybar = ys.iter().sum::<f64>() / 8.0;
    let per_rep = ys.iter().map(|y| (y - ybar).powi(2)).sum::<f64>() / 7.0;
    assert!((f - per_rep / (2.0 * var)).abs() < 1e-12);
    assert!(f > 1.0, "these pairs pull against each other: {f}");
    let s = v.summary(&plain);
    assert_eq!((s.method.as_str(), s.fallback), ("antithetic", None));
}

#[test]
fn pairs_that_do_not_help_keep_their_estimate_and_say_so() {
    // Members equal: pair means vary as much as replications, factor about 1/2.
    let mut rng = crate::rng::Stream::new(9, 0);
    let ys: Vec<f64> = (0..400)
        .map(|_| rng.uniform())
        .flat_map(|y| [y, y])
        .collect();
    let (v, plain) = booked(VarianceAcc::antithetic(), &ys, None);
    let (e, f) = v.estimate(&plain).unwrap();
    assert!(f < 0.6, "{f}");
    let s = v.summary(&plain);
    assert_eq!(s.method, "antithetic");
    assert!(s.fallback.unwrap().contains("did not pay"));
    // The interval is the pairs' (wider than the plain one, which would be wrong here).
    assert!(e.std_error > plain.std_error());
    // Too few pairs: no estimate, and the plain one stands.
    let (v, plain) = booked(VarianceAcc::antithetic(), &ys[..5], None);
    assert!(v.estimate(&plain).is_err());
    assert_eq!(v.summary(&plain).method, "none");
}
