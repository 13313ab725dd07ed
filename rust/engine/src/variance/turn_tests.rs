//! Antithetic runs to a target precision weigh their pairs' efficiency after a pilot and
//! turn to plain streams when the pairs do not pay: the turn's place, the joined estimate
//! by hand and against the closed form, thread counts, and a cluster's chunks past the turn.
use super::pairs::{PAIR_CPU_COST, PILOT_SETS};
use super::tests::{exact, options};
use super::*;
use crate::availability::{AvailabilityAcc, Precision, run_reduced, run_reduced_from, run_with};
use crate::fixtures::exp;
use crate::parallel::Control as RunControl;
use crate::stats::Moments;

pub(super) fn trains(k: usize) -> Compiled {
    super::tests::trains(k, |_| exp(super::tests::LAM))
}

/// A run of `method` to relative half-width `rel` on `threads` threads.
pub(super) fn target(
    c: &Compiled,
    o: &AvailabilityOptions,
    method: Method,
    rel: f64,
    threads: usize,
) -> AvailabilityAcc {
    let p = Precision::Target {
        relative_half_width: rel,
        max_replications: 1_000_000,
    };
    run_reduced(c, o, method, 0, p, Some(threads), &RunControl::new()).unwrap()
}

/// `n` replications of `method` from `start`, a cluster's chunk told the run turned at `turn`.
pub(super) fn fixed(
    c: &Compiled,
    o: &AvailabilityOptions,
    method: Method,
    turn: Option<u64>,
    start: u64,
    n: u64,
) -> AvailabilityAcc {
    let p = Precision::Replications(n);
    run_reduced_from(c, o, method, turn, start, p, Some(2), &RunControl::new()).unwrap()
}

/// What a run `a` of `method` to `rel` that turned plain at `at` must hold, pairs or sets:
/// its joined interval covers the closed form `truth` at the precision asked, the same
/// numbers on one thread and from a cluster's chunks merged in order, its plain part the
/// plain run's replications, and a piece drawn in sets past the turn refused at the merge.
pub(super) fn check_turned(
    c: &Compiled,
    o: &AvailabilityOptions,
    method: Method,
    (a, at): (&AvailabilityAcc, u64),
    truth: f64,
    rel: f64,
) {
    let s = a.summary();
    let u = 1.0 - s.mean_availability;
    let half = (s.mean_availability_upper - s.mean_availability_lower) / 2.0;
    assert!((u - truth).abs() < half, "{u} vs {truth} ± {half}");
    assert!(s.relative_half_width.unwrap() <= rel);
    assert_eq!(*a, target(c, o, method, rel, 1));
    let pilot = fixed(c, o, method, None, 0, at);
    assert_eq!(pilot.plain_from(), Some(at));
    let mid = (at + a.replication_count) / 2 + 1;
    let one = fixed(c, o, method, Some(at), at, mid - at);
    let two = fixed(c, o, method, Some(at), mid, a.replication_count - mid);
    assert_eq!(pilot.merge(&one).unwrap().merge(&two).unwrap(), *a);
    let plain = run_with(c, o, at, mid - at, Some(1), &RunControl::new()).unwrap();
    assert_eq!(plain.availability, one.availability);
    let late = fixed(c, o, method, None, at, 10);
    assert!(pilot.merge(&late).is_ok());
    let past = fixed(c, o, method, Some(at), at + 10, 4);
    assert!(pilot.merge(&late).unwrap().merge(&past).is_err());
}

/// Book `ys` as replications 0, 1, ... of plan `v` (pairs or sets) turned plain at `turn`,
/// and their availabilities as a plain run books them.
pub(super) fn booked(mut v: VarianceAcc, ys: &[f64], turn: Option<u64>) -> (VarianceAcc, Moments) {
    v.plain_from = turn;
    let mut plain = Moments::default();
    for (i, &y) in ys.iter().enumerate() {
        v.book(i as u64, y, None, |_| 0.0);
        plain.add(1.0 - y);
    }
    (v, plain)
}

#[test]
fn pairs_that_do_not_pay_turn_to_plain_streams_after_the_pilot() {
    // The trains' pairs barely help (factor about 1, below the pairs' CPU cost).
    let (k, horizon) = (3, 500.0);
    let c = trains(k);
    let o = options(horizon, 21);
    let a = target(&c, &o, Method::Antithetic, 0.02, 2);
    let s = a.summary();
    let vr = s.variance_reduction.as_ref().unwrap();
    let at = vr.plain_from.expect("the pairs do not pay here");
    // The turn is at the end of the first batch with the pilot's pairs in.
    assert!(at >= 2 * PILOT_SETS && at < a.replication_count, "{at}");
    assert_eq!(vr.pairs, Some(at / 2));
    assert_eq!(vr.method, "antithetic+plain");
    assert!(vr.efficiency.unwrap() <= 1.0);
    assert!(vr.fallback.as_ref().unwrap().contains("plain streams"));
    let v = a.variance.as_ref().unwrap();
    assert_eq!(v.after.n, a.replication_count - at);
    // Honest, at the precision asked, and the same on a thread, a cluster and plain streams.
    check_turned(
        &c,
        &o,
        Method::Antithetic,
        (&a, at),
        exact(k, horizon),
        0.02,
    );
    // Only an antithetic run turns.
    let p = Precision::Replications(10);
    let auto = run_reduced_from(
        &c,
        &o,
        Method::Auto,
        Some(4),
        0,
        p,
        None,
        &RunControl::new(),
    );
    assert!(auto.unwrap_err().to_string().contains("plain_from"));
}

#[test]
fn the_turn_weighs_the_factor_against_the_pairs_cpu() {
    let mut rng = crate::rng::Stream::new(3, 0);
    let n = 2 * PILOT_SETS as usize;
    // Pairs pulling hard against each other (y and 1 - y, partly): they pay.
    let good: Vec<f64> = (0..n / 2)
        .flat_map(|_| {
            let (u, e) = (rng.uniform(), 0.1 * rng.uniform());
            [u, 1.0 - u + e]
        })
        .collect();
    // Independent members: factor about 1, below the cost.
    let poor: Vec<f64> = (0..n).map(|_| rng.uniform()).collect();
    let (g, gp) = booked(VarianceAcc::antithetic(), &good, None);
    let (p, pp) = booked(VarianceAcc::antithetic(), &poor, None);
    assert!(g.set_efficiency(&gp).unwrap() > 1.0);
    assert_eq!(g.plain_switch(n as u64, &gp), None);
    let eff = p.set_efficiency(&pp).unwrap();
    assert!(eff <= 1.0 && eff > 0.5 / PAIR_CPU_COST, "{eff}");
    assert_eq!(p.plain_switch(n as u64, &pp), Some(n as u64));
    // Not before the pilot's pairs are in, and once only.
    let (short, sp) = booked(VarianceAcc::antithetic(), &poor[..n - 2], None);
    assert_eq!(short.plain_switch(n as u64 - 2, &sp), None);
    let (turned, tp) = booked(VarianceAcc::antithetic(), &poor, Some(n as u64));
    assert_eq!(turned.plain_switch(n as u64, &tp), None);
}

#[test]
fn the_joined_estimate_weighs_pair_means_and_plain_replications_by_count() {
    // By hand: 3 pairs then 4 plain replications; weights 6/10 and 4/10.
    let ys = [0.1, 0.3, 0.25, 0.05, 0.2, 0.22, 0.4, 0.0, 0.12, 0.3];
    let (v, plain) = booked(VarianceAcc::antithetic(), &ys, Some(6));
    assert_eq!((v.pairs, v.after.n), (3, 4));
    let (e, f) = v.estimate(&plain).unwrap();
    let means: Vec<f64> = ys[..6].chunks(2).map(|p| (p[0] + p[1]) / 2.0).collect();
    let mp = means.iter().sum::<f64>() / 3.0;
    let vp = means.iter().map(|x| (x - mp).powi(2)).sum::<f64>() / 2.0 / 3.0;
    let rest = &ys[6..];
    let mq = rest.iter().sum::<f64>() / 4.0;
    let vq = rest.iter().map(|x| (x - mq).powi(2)).sum::<f64>() / 3.0 / 4.0;
    let (a, b) = (0.6 * 0.6 * vp, 0.4 * 0.4 * vq);
    assert!((e.unavailability - (0.6 * mp + 0.4 * mq)).abs() < 1e-15);
    assert!((e.std_error - (a + b).sqrt()).abs() < 1e-15);
    // Welch-Satterthwaite: (a + b)² / (a²/2 + b²/3).
    let df = (a + b).powi(2) / (a * a / 2.0 + b * b / 3.0);
    assert!((e.degrees_of_freedom - df).abs() < 1e-9 * df);
    let ybar = ys.iter().sum::<f64>() / 10.0;
    let per_rep = ys.iter().map(|y| (y - ybar).powi(2)).sum::<f64>() / 9.0;
    assert!((f - per_rep / ((a + b) * 10.0)).abs() < 1e-12 * f);
    assert_eq!(v.summary(&plain).method, "antithetic+plain");
}
