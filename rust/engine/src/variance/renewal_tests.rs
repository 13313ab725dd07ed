//! The numeric renewal solution against references computed another way: the exponential
//! closed form, a Markov chain integrated by Runge-Kutta, and the renewal-reward limit.
use super::expo::tests::simpson;
use super::expo::unit_availability;
use super::renewal::{MAX_ERROR, Unit, solve, up_time};
use crate::dist::{Dist, Exponential, Gamma, Lifetime, LogNormal, Weibull};

fn exp(mean: f64) -> Dist {
    Dist::Exponential(Exponential::new(1.0 / mean, 0.0).unwrap())
}

/// Exponential life and repair: the alternating-renewal closed form `expo` integrates.
#[test]
fn exponential_unit_matches_the_closed_form() {
    let (mttf, mttr, t) = (200.0, 5.0, 2000.0);
    let (life, repair) = (exp(mttf), exp(mttr));
    let exact = unit_availability(1.0 / mttf, 1.0 / mttr)
        .complement()
        .unwrap()
        .integral(0.0, t)
        / t;
    let u = Unit {
        life: &life,
        repair: &repair,
        replace: None,
    };
    let s = solve(&u, t).unwrap();
    assert!((s.down - exact).abs() < 1e-9, "{} {exact}", s.down);
    assert!(s.error <= MAX_ERROR, "{}", s.error);
    // Age replacement taking no time renews a memoryless unit to where it was: the same.
    let u = Unit {
        life: &life,
        repair: &repair,
        replace: Some((150.0, 0.0)),
    };
    let s = solve(&u, t).unwrap();
    assert!((s.down - exact).abs() < 1e-9, "{} {exact}", s.down);
}

/// Erlang-2 life (two exponential phases), exponential repair: a three-state Markov chain
/// whose probabilities and accumulated up time RK4 integrates (step 0.05 h, rates ≤ 0.2/h).
#[test]
fn erlang_life_matches_a_markov_chain() {
    let (k, mu, t) = (0.01, 0.2, 2000.0);
    let life = Dist::Gamma(Gamma::new(2.0, 1.0 / k, 0.0).unwrap());
    let repair = exp(1.0 / mu);
    let f = |y: [f64; 4]| {
        [
            -k * y[0] + mu * y[2],
            k * y[0] - k * y[1],
            k * y[1] - mu * y[2],
            y[0] + y[1],
        ]
    };
    let (mut y, h): ([f64; 4], f64) = ([1.0, 0.0, 0.0, 0.0], 0.05);
    let add = |y: [f64; 4], d: [f64; 4], s: f64| std::array::from_fn(|i| y[i] + s * d[i]);
    for _ in 0..(t / h).round() as usize {
        let k1 = f(y);
        let k2 = f(add(y, k1, h / 2.0));
        let k3 = f(add(y, k2, h / 2.0));
        let k4 = f(add(y, k3, h));
        y = std::array::from_fn(|i| y[i] + h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]));
    }
    let exact = 1.0 - y[3] / t;
    let u = Unit {
        life: &life,
        repair: &repair,
        replace: None,
    };
    let s = solve(&u, t).unwrap();
    assert!((s.down - exact).abs() < 1e-9, "{} {exact}", s.down);
    assert!(s.error <= MAX_ERROR, "{}", s.error);
}

/// The long run: expected downtime D(T) T = D∞ T + b + o(1), so the slope between two
/// horizons is the renewal-reward limit E[down per cycle] / E[cycle] (with no replacement
/// MTTR / (MTTF + MTTR)); the transient b cancels.
#[test]
fn the_slope_of_downtime_is_the_renewal_reward_limit() {
    let life = Dist::Weibull(Weibull::new(500.0, 3.0, 0.0).unwrap());
    let repair = Dist::LogNormal(LogNormal::new(3.0, 0.5, 0.0).unwrap());
    let slope = |u: &Unit, t1: f64, t2: f64| {
        let (a, b) = (solve(u, t1).unwrap(), solve(u, t2).unwrap());
        (
            (b.down * t2 - a.down * t1) / (t2 - t1),
            a.error.max(b.error) * t2 / (t2 - t1),
        )
    };
    let mttr = repair.mean();
    // No replacement.
    let u = Unit {
        life: &life,
        repair: &repair,
        replace: None,
    };
    let (got, err) = slope(&u, 6_000.0, 8_000.0);
    let want = mttr / (life.mean() + mttr);
    assert!((got - want).abs() < 5e-8 + 3.0 * err, "{got} {want} {err}");
    // Age replacement at 500 h, 10 h off-line (at the scale: the fixed cycle is not the
    // most of them, so the renewal settles within the horizons).
    let (tau, d) = (500.0, 10.0);
    let u = Unit {
        life: &life,
        repair: &repair,
        replace: Some((tau, d)),
    };
    let (got, err) = slope(&u, 12_000.0, 16_000.0);
    let up = simpson(|x| life.sf(x), 0.0, tau);
    let down = life.cdf(tau) * mttr + life.sf(tau) * d;
    let want = down / (up + down);
    assert!((got - want).abs() < 5e-8 + 3.0 * err, "{got} {want} {err}");
}

/// The bench's block: its estimated error is within the bound the plan asks, and solving
/// on a grid twice as fine agrees within it.
#[test]
fn the_bench_block_is_solved_within_the_bound() {
    let life = Dist::Weibull(Weibull::new(2000.0, 3.0, 0.0).unwrap());
    let repair = exp(10.0);
    let u = Unit {
        life: &life,
        repair: &repair,
        replace: Some((800.0, 4.0)),
    };
    let s = solve(&u, 10_000.0).unwrap();
    assert!(s.error <= MAX_ERROR, "{}", s.error);
    // Up time at the start: V(t) = t before any failure is possible to speak of, and
    // never above t.
    let v = up_time(&u, 1.0, 100);
    assert!(v.iter().enumerate().all(|(i, &x)| x <= i as f64 + 1e-12));
}

/// A Weibull life (scale 300 h, shape 3) replaced at age 250 h, 2 h off-line.
fn weibull() -> crate::dist::DistSpec {
    crate::dist::DistSpec {
        distribution_id: "weibull".into(),
        params: [("alpha".to_string(), 300.0), ("beta".to_string(), 3.0)].into(),
        base_distribution_id: None,
        table: None,
        path: None,
    }
}

fn at_age(policy: &str) -> Option<crate::diagram::PreventiveSpec> {
    Some(crate::diagram::PreventiveSpec {
        policy: Some(policy.into()),
        interval: 250.0,
        duration: Some(2.0),
        ..Default::default()
    })
}

/// Two trains of three blocks, the first of each the Weibull block replaced (`policy`),
/// the others exponential (the bench's plant with PM, smaller).
fn pm_trains(policy: &str) -> crate::diagram::Compiled {
    super::tests::trains_planned(
        3,
        |i| {
            if i == 0 {
                weibull()
            } else {
                crate::fixtures::exp(super::tests::LAM)
            }
        },
        |i| if i == 0 { at_age(policy) } else { None },
    )
}

/// The run's sums with only the controls `keep` says: what the estimator would have had
/// without the others (the same replications).
fn only(
    v: &super::VarianceAcc,
    keep: impl Fn(&super::ControlVariate) -> bool,
) -> super::VarianceAcc {
    let k = v.controls.len();
    let kept: Vec<usize> = (0..k).filter(|&i| keep(&v.controls[i])).collect();
    let mut out = v.clone();
    out.controls = kept.iter().map(|&i| v.controls[i].clone()).collect();
    out.sum_x = kept.iter().map(|&i| v.sum_x[i]).collect();
    out.sum_xz = kept.iter().map(|&i| v.sum_xz[i]).collect();
    let at = |i: usize, j: usize| i * k - i * (i + 1) / 2 + j; // row i, column j >= i
    out.sum_xx = vec![];
    for (a, &i) in kept.iter().enumerate() {
        for &j in &kept[a..] {
            out.sum_xx.push(v.sum_xx[at(i, j)]);
        }
    }
    out
}

#[test]
fn blocks_replaced_at_age_are_controls_and_reduce_more_than_without() {
    use super::{Method, VarianceAcc};
    use crate::availability::{Precision, run_reduced, run_with};
    use crate::parallel::Control as RunControl;
    let c = pm_trains("age");
    let o = super::tests::options(1000.0, 7);
    let v = VarianceAcc::plan(&c, &o, Method::Auto).unwrap();
    let (life, repair) = (
        Dist::Weibull(Weibull::new(300.0, 3.0, 0.0).unwrap()),
        exp(5.0),
    );
    let want = solve(
        &Unit {
            life: &life,
            repair: &repair,
            replace: Some((250.0, 2.0)),
        },
        1000.0,
    )
    .unwrap();
    for id in ["a0", "b0"] {
        let ctl = v
            .controls
            .iter()
            .find(|x| x.name == format!("downtime of {id}"))
            .unwrap();
        assert_eq!(ctl.mean, want.down, "{id}");
    }
    // The system under independence is a control now every block's mean is known: its mean
    // is (1 - (1 - D0)(1 - D)^2)^2 at the Weibull block's D0 and the exponential blocks' D.
    let v = VarianceAcc::plan(&c, &o, Method::Control).unwrap();
    let d = v
        .controls
        .iter()
        .find(|x| x.name == "downtime of a1")
        .unwrap()
        .mean;
    let sys = v.controls.iter().find(|x| x.group.is_none()).unwrap();
    let train = (1.0 - want.down) * (1.0 - d).powi(2);
    assert!(
        (sys.mean - (1.0 - train).powi(2)).abs() < 1e-15,
        "{}",
        sys.mean
    );
    // Calendar (block) replacement is not a renewal of the unit: not a control, said why not.
    let v = VarianceAcc::plan(&pm_trains("block"), &o, Method::Control).unwrap();
    assert!(
        v.controls
            .iter()
            .all(|x| !x.name.ends_with("a0") && !x.name.ends_with("b0"))
    );
    let ctl = RunControl::new();
    let run = |m: Method, from: u64, n: u64, threads: Option<usize>| {
        run_reduced(&c, &o, m, from, Precision::Replications(n), threads, &ctl).unwrap()
    };
    let (n, a) = (4000, run(Method::Auto, 0, 4000, Some(2)));
    let s = a.summary();
    let vr = s.variance_reduction.as_ref().unwrap();
    let plain = run_with(&c, &o, 0, n, Some(2), &ctl).unwrap().summary();
    assert_eq!(vr.plain_mean_availability, plain.mean_availability);
    // The reduced estimate and the plain one agree within their joint error.
    let joint =
        (s.mean_availability_std_error.powi(2) + plain.mean_availability_std_error.powi(2)).sqrt();
    let gap = (s.mean_availability - plain.mean_availability).abs();
    assert!(gap < 1.96 * joint, "{gap} vs {joint}");
    // The same replications with only the controls the plant had before (the exponential
    // blocks': no Weibull block, no system) reduce less.
    let acc = a.variance.as_ref().unwrap();
    let new = |x: &super::ControlVariate| {
        x.group.is_none() || x.name.ends_with("a0") || x.name.ends_with("b0")
    };
    let before = only(acc, |x| !new(x));
    assert_eq!(before.controls.len() + 3, acc.controls.len());
    let f_before = before.summary(&a.availability).factor.unwrap();
    let f = vr.factor.unwrap();
    assert!(f > f_before, "{f} vs {f_before}");
    // Same seed, same numbers: one or two threads, and a run merged from two ranges.
    let one = run(Method::Auto, 0, 500, Some(1));
    assert_eq!(one, run(Method::Auto, 0, 500, Some(2)));
    let (x, y) = (
        run(Method::Auto, 0, 123, Some(2)),
        run(Method::Auto, 123, 377, Some(1)),
    );
    assert_eq!(y.merge(&x).unwrap(), one);
}
