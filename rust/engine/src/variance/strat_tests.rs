//! Stratified sets against the closed form, thread counts, merges at any split (inside
//! sets too), and the estimator by hand.
use super::tests::{exact, options};
use super::*;
use crate::availability::{AvailabilityAcc, Precision, run_reduced, run_with};
use crate::fixtures::exp;
use crate::parallel::Control as RunControl;
use crate::rng::SET;
use crate::stats::Moments;

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
    let p = Precision::Replications(n);
    run_reduced(
        c,
        o,
        Method::Stratified,
        start,
        p,
        Some(threads),
        &RunControl::new(),
    )
    .unwrap()
}

#[test]
fn stratified_runs_cover_the_closed_form_and_report_their_factor() {
    // A short horizon (1.5 mean lives), where the first failures decide much of the downtime.
    let (k, horizon) = (3, 150.0);
    let c = trains(k);
    let truth = exact(k, horizon);
    let a = run(&c, &options(horizon, 11), 0, 8000, 2);
    let s = a.summary();
    let vr = s.variance_reduction.as_ref().unwrap();
    assert_eq!(
        (vr.method.as_str(), vr.requested.as_str()),
        ("stratified", "stratified")
    );
    assert_eq!((vr.sets, vr.pairs), (Some(500), None));
    assert_eq!(vr.degrees_of_freedom, Some(499.0));
    let u = 1.0 - s.mean_availability;
    let half = (s.mean_availability_upper - s.mean_availability_lower) / 2.0;
    assert!((u - truth).abs() < half, "{u} vs {truth} ± {half}");
    // The factor is the plain per-replication variance over SET times the set means'.
    let f = vr.factor.unwrap();
    let per_rep = vr.plain_std_error.powi(2) * 8000.0;
    let set_var = s.mean_availability_std_error.powi(2) * 500.0;
    assert!((per_rep / (SET as f64 * set_var) / f - 1.0).abs() < 1e-12);
    assert_eq!(vr.fallback.is_some(), f <= 1.0);
    // Every replication is in a set: the estimate is the run's plain mean.
    assert!((vr.plain_mean_availability - s.mean_availability).abs() < 1e-15);
    // Its own numbers: not a plain run's.
    let plain = run_with(
        &c,
        &options(horizon, 11),
        0,
        8000,
        Some(1),
        &RunControl::new(),
    );
    assert_ne!(plain.unwrap().availability, a.availability);
}

#[test]
fn the_same_seed_gives_the_same_stratified_numbers_on_any_thread_count_and_any_split() {
    let c = trains(2);
    let o = options(300.0, 5);
    let one = run(&c, &o, 0, 480, 1);
    assert_eq!(one, run(&c, &o, 0, 480, 2));
    assert!(one.variance.as_ref().unwrap().ends.is_empty());
    // Split inside sets (123 and 377 are not multiples of 16), merged in either order,
    // through JSON.
    let a = run(&c, &o, 0, 123, 2);
    let b = run(&c, &o, 123, 254, 1);
    let d = run(&c, &o, 377, 103, 2);
    assert_eq!(a.variance.as_ref().unwrap().ends.len(), 123 % 16);
    let json = |x: &AvailabilityAcc| -> AvailabilityAcc {
        serde_json::from_str(&serde_json::to_string(x).unwrap()).unwrap()
    };
    assert_eq!(json(&b), b);
    assert_eq!(a.merge(&json(&b)).unwrap().merge(&d).unwrap(), one);
    assert_eq!(d.merge(&b.merge(&a).unwrap()).unwrap(), one);
    // Neither a plain nor an antithetic run's state merges with a stratified one's.
    let plain = run_with(&c, &o, 123, 254, Some(1), &RunControl::new()).unwrap();
    assert!(a.merge(&plain).is_err());
    let p = Precision::Replications(254);
    let anti = run_reduced(&c, &o, Method::Antithetic, 123, p, None, &RunControl::new());
    assert!(a.merge(&anti.unwrap()).is_err());
}

#[test]
fn the_estimate_is_the_mean_of_set_means_with_their_t_interval() {
    // By hand: 4 sets of 16 values and 5 more (an incomplete set, left out).
    let mut rng = crate::rng::Stream::new(4, 0);
    let ys: Vec<f64> = (0..69).map(|_| rng.uniform() * 0.1).collect();
    let mut v = VarianceAcc::stratified(6);
    let mut plain = Moments::default();
    for (i, &y) in ys.iter().enumerate().rev() {
        v.book(i as u64, y, None, |_| 0.0);
        plain.add(1.0 - y);
    }
    assert_eq!((v.pairs, v.ends.len()), (4, 5));
    let (e, f) = v.estimate(&plain).unwrap();
    let means: Vec<f64> = ys[..64]
        .chunks(16)
        .map(|s| s.iter().sum::<f64>() / 16.0)
        .collect();
    let m = means.iter().sum::<f64>() / 4.0;
    let var = means.iter().map(|x| (x - m).powi(2)).sum::<f64>() / 3.0;
    assert!((e.unavailability - m).abs() < 1e-15);
    assert!((e.std_error - (var / 4.0).sqrt()).abs() < 1e-15);
    assert_eq!(e.degrees_of_freedom, 3.0);
    // t(3) at 0.975.
    assert!((e.t - 3.182_446_305_284_263).abs() < 1e-9);
    let ybar = ys.iter().sum::<f64>() / 69.0;
    let per_rep = ys.iter().map(|y| (y - ybar).powi(2)).sum::<f64>() / 68.0;
    assert!((f - per_rep / (16.0 * var)).abs() < 1e-9 * f);
    assert_eq!(v.summary(&plain).sets, Some(4));
}
