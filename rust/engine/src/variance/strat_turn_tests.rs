//! Stratified runs to a target precision weigh their sets' efficiency after a pilot of
//! `PILOT_SETS` sets and turn to plain streams when the sets do not pay, by the pairs' own
//! mechanism (`turn_tests`): the turn's place, the joined estimate by hand and against the
//! closed form, thread counts, a cluster's chunks past the turn, and sets that pay keeping
//! their numbers.
use super::pairs::{PILOT_SETS, STRATIFIED_CPU_COST};
use super::tests::{exact, options};
use super::turn_tests::{booked, check_turned, fixed, target, trains};
use super::*;
use crate::rng::SET;

#[test]
fn sets_that_do_not_pay_turn_to_plain_streams_after_the_pilot() {
    // Over 5 mean lives the first lives decide little: the sets' factor is about 1, here
    // not above their CPU cost (efficiency 0.95 at the pilot's end).
    let (k, horizon) = (3, 500.0);
    let c = trains(k);
    let o = options(horizon, 11);
    let a = target(&c, &o, Method::Stratified, 0.01, 2);
    let s = a.summary();
    let vr = s.variance_reduction.as_ref().unwrap();
    let at = vr.plain_from.expect("the sets do not pay here");
    // The turn is at the end of the first batch with the pilot's sets in.
    assert!(at >= SET * PILOT_SETS && at < a.replication_count, "{at}");
    assert_eq!((vr.sets, vr.pairs), (Some(at / SET), None));
    assert_eq!(vr.method, "stratified+plain");
    assert!(vr.efficiency.unwrap() <= 1.0);
    assert!(vr.fallback.as_ref().unwrap().contains("plain streams"));
    let v = a.variance.as_ref().unwrap();
    assert_eq!(v.after.n, a.replication_count - at);
    // A set the turn cut short stays incomplete, left out of the estimate.
    assert_eq!(v.ends.len() as u64, at % SET);
    // Honest, at the precision asked, and the same on a thread, a cluster and plain streams.
    check_turned(
        &c,
        &o,
        Method::Stratified,
        (&a, at),
        exact(k, horizon),
        0.01,
    );
}

#[test]
fn sets_that_pay_keep_their_streams_and_their_numbers() {
    // 0.3 mean lives: the first failures are most of the downtime, and stratifying them
    // pays above the sets' CPU (efficiency 1.11). The run past its pilot keeps its sets:
    // the same numbers as a run of as many replications in sets (no turn, no plain part).
    let (k, horizon) = (3, 30.0);
    let c = trains(k);
    let o = options(horizon, 21);
    let a = target(&c, &o, Method::Stratified, 0.03, 2);
    assert!(
        a.replication_count >= 2 * SET * PILOT_SETS,
        "{}",
        a.replication_count
    );
    let s = a.summary();
    let vr = s.variance_reduction.as_ref().unwrap();
    assert_eq!((vr.method.as_str(), vr.plain_from), ("stratified", None));
    assert!(vr.efficiency.unwrap() > 1.0 && vr.fallback.is_none());
    assert_eq!(
        a,
        fixed(&c, &o, Method::Stratified, None, 0, a.replication_count)
    );
    let u = 1.0 - s.mean_availability;
    let half = (s.mean_availability_upper - s.mean_availability_lower) / 2.0;
    assert!((u - exact(k, horizon)).abs() < half);
}

#[test]
fn the_turn_weighs_the_sets_factor_against_their_cpu() {
    let mut rng = crate::rng::Stream::new(5, 0);
    let n = (SET * PILOT_SETS) as usize;
    // Sets whose members spread evenly around a common mean (strata of one uniform): their
    // means barely vary, so they pay.
    let good: Vec<f64> = (0..n)
        .map(|i| ((i % SET as usize) as f64 + rng.uniform()) / SET as f64)
        .collect();
    // Members sharing half their value with their set: the set means vary more than
    // independent members' would (factor about 1/8.5), far below the cost.
    let mut shared = 0.0;
    let poor: Vec<f64> = (0..n)
        .map(|i| {
            if i % SET as usize == 0 {
                shared = rng.uniform();
            }
            0.5 * shared + 0.5 * rng.uniform()
        })
        .collect();
    let (g, gp) = booked(VarianceAcc::stratified(6), &good, None);
    let (p, pp) = booked(VarianceAcc::stratified(6), &poor, None);
    assert_eq!(g.pairs, PILOT_SETS);
    assert!(g.set_efficiency(&gp).unwrap() > 1.0);
    assert_eq!(g.plain_switch(n as u64, &gp), None);
    let eff = p.set_efficiency(&pp).unwrap();
    assert!(eff <= 0.2 && eff > 0.05, "{eff}");
    // The efficiency is the sets' factor over their CPU cost.
    let e = p.pair_estimate().unwrap();
    assert_eq!(eff, p.pair_factor(&e, &pp) / STRATIFIED_CPU_COST);
    assert_eq!(p.plain_switch(n as u64, &pp), Some(n as u64));
    // Not before the pilot's sets are in (one short), and once only.
    let (short, sp) = booked(VarianceAcc::stratified(6), &poor[..n - 1], None);
    assert_eq!(short.plain_switch(n as u64 - 1, &sp), None);
    let (turned, tp) = booked(VarianceAcc::stratified(6), &poor, Some(n as u64));
    assert_eq!(turned.plain_switch(n as u64, &tp), None);
    // Past the turn a replication draws plain; before it, from its set.
    assert_eq!(turned.draws_at(n as u64), crate::rng::Draws::Plain);
    assert_eq!(
        turned.draws_at(n as u64 - 1),
        crate::rng::Draws::Stratified(6)
    );
}

#[test]
fn the_joined_estimate_weighs_set_means_and_plain_replications_by_count() {
    // By hand: 3 sets of 16, 5 members of a set the turn cut short (left out), then 4 plain
    // replications; weights 48/52 and 4/52.
    let mut rng = crate::rng::Stream::new(6, 0);
    let ys: Vec<f64> = (0..57).map(|_| rng.uniform() * 0.1).collect();
    let (v, plain) = booked(VarianceAcc::stratified(6), &ys, Some(53));
    assert_eq!((v.pairs, v.ends.len(), v.after.n), (3, 5, 4));
    let (e, f) = v.estimate(&plain).unwrap();
    let means: Vec<f64> = ys[..48]
        .chunks(16)
        .map(|s| s.iter().sum::<f64>() / 16.0)
        .collect();
    let mp = means.iter().sum::<f64>() / 3.0;
    let vp = means.iter().map(|x| (x - mp).powi(2)).sum::<f64>() / 2.0 / 3.0;
    let rest = &ys[53..];
    let mq = rest.iter().sum::<f64>() / 4.0;
    let vq = rest.iter().map(|x| (x - mq).powi(2)).sum::<f64>() / 3.0 / 4.0;
    let (w, wq) = (48.0 / 52.0, 4.0 / 52.0);
    let (a, b) = (w * w * vp, wq * wq * vq);
    assert!((e.unavailability - (w * mp + wq * mq)).abs() < 1e-15);
    assert!((e.std_error - (a + b).sqrt()).abs() < 1e-15);
    // Welch-Satterthwaite: (a + b)² / (a²/2 + b²/3).
    let df = (a + b).powi(2) / (a * a / 2.0 + b * b / 3.0);
    assert!((e.degrees_of_freedom - df).abs() < 1e-9 * df);
    // The factor: the plain per-replication variance (all 57) over the estimate's variance
    // times the replications it uses (52).
    let ybar = ys.iter().sum::<f64>() / 57.0;
    let per_rep = ys.iter().map(|y| (y - ybar).powi(2)).sum::<f64>() / 56.0;
    assert!((f - per_rep / ((a + b) * 52.0)).abs() < 1e-12 * f);
    let s = v.summary(&plain);
    assert_eq!((s.method.as_str(), s.sets), ("stratified+plain", Some(3)));
}
