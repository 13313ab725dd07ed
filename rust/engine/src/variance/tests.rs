//! Variance reduction against closed forms (independent references: Simpson's rule on the
//! textbook point availability), thread counts and merges.
use super::*;
use crate::availability::{AvailabilityAcc, Precision, run_reduced, run_to_precision, run_with};
use crate::diagram::{DiagramSpec, NodeSpec};
use crate::dist::DistSpec;
use crate::fixtures::{edges, exp, node};
use crate::parallel::Control as RunControl;

pub(super) const LAM: f64 = 1e-2;
const MU: f64 = 0.2;

/// Two parallel trains of `k` exponential blocks in series (the benchmark plant's shape).
pub(super) fn trains(k: usize, life: impl Fn(usize) -> DistSpec) -> Compiled {
    trains_planned(k, life, |_| None)
}

/// `trains` with block i of each train replaced as `pm(i)` says.
pub(super) fn trains_planned(
    k: usize,
    life: impl Fn(usize) -> DistSpec,
    pm: impl Fn(usize) -> Option<crate::diagram::PreventiveSpec>,
) -> Compiled {
    let mut nodes = vec![node("in", "input"), node("out", "output")];
    let mut pairs: Vec<(String, String)> = vec![];
    for t in ["a", "b"] {
        let mut prev = "in".to_string();
        for i in 0..k {
            let id = format!("{t}{i}");
            nodes.push(NodeSpec {
                model: Some(life(i)),
                repair: Some(exp(MU)),
                preventive: pm(i),
                ..node(&id, "component")
            });
            pairs.push((prev, id.clone()));
            prev = id;
        }
        pairs.push((prev, "out".into()));
    }
    let pairs: Vec<(&str, &str)> = pairs
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    Compiled::new(&DiagramSpec {
        nodes,
        edges: edges(&pairs),
        ..Default::default()
    })
    .unwrap()
}

/// Mean unavailability of `trains(k, exp(LAM))` over [0, T]: Simpson on the point form
/// (1 - a(t)^k)^2, a(t) = μ/(λ+μ) + λ/(λ+μ) e^{-(λ+μ)t}.
pub(super) fn exact(k: usize, horizon: f64) -> f64 {
    let s = LAM + MU;
    let u = |t: f64| {
        let a = MU / s + LAM / s * (-s * t).exp();
        (1.0 - a.powi(k as i32)).powi(2)
    };
    let n = 1 << 16;
    let h = horizon / n as f64;
    let mut acc = u(0.0) + u(horizon);
    for i in 1..n {
        acc += u(i as f64 * h) * if i % 2 == 1 { 4.0 } else { 2.0 };
    }
    acc * h / 3.0 / horizon
}

pub(super) fn options(horizon: f64, seed: u64) -> AvailabilityOptions {
    AvailabilityOptions {
        horizon,
        grid: 5,
        crews: 0,
        seed,
    }
}

fn reduced(
    c: &Compiled,
    o: &AvailabilityOptions,
    m: Method,
    n: u64,
    threads: Option<usize>,
) -> AvailabilityAcc {
    run_reduced(
        c,
        o,
        m,
        0,
        Precision::Replications(n),
        threads,
        &RunControl::new(),
    )
    .unwrap()
}

#[test]
fn the_plan_conditions_on_a_train_with_its_closed_form_and_known_block_means() {
    let c = trains(3, |_| exp(LAM));
    let o = options(500.0, 1);
    let v = VarianceAcc::plan(&c, &o, Method::Auto).unwrap();
    let k = v.condition.as_ref().expect("a train is integrated out");
    assert_eq!(k.blocks.len(), 3);
    // P(train down at t) = 1 - a(t)^3, at a few times.
    let s = LAM + MU;
    for t in [0.0, 2.0, 40.0, 400.0] {
        let a = MU / s + LAM / s * (-s * t).exp();
        assert!((k.down.at(t) - (1.0 - a.powi(3))).abs() < 1e-14, "{t}");
    }
    // The other train's blocks are controls with the alternating-renewal mean, and the
    // system under independence is one with mean (1 - (1 - D)^3)^2 at the blocks' means.
    let d = LAM / s * (1.0 - (1.0 - (-s * o.horizon).exp()) / (s * o.horizon));
    let blocks: Vec<&ControlVariate> = v.controls.iter().filter(|c| c.group.is_some()).collect();
    assert_eq!(blocks.len(), 3);
    for b in blocks {
        assert!((b.mean / d - 1.0).abs() < 1e-12, "{}", b.name);
    }
    let sys = v.controls.iter().find(|c| c.group.is_none()).unwrap();
    let want = (1.0 - (1.0 - d).powi(3)).powi(2);
    assert!((sys.mean / want - 1.0).abs() < 1e-12);
    // `control` alone: every block a control, nothing conditioned on.
    let v = VarianceAcc::plan(&c, &o, Method::Control).unwrap();
    assert!(v.condition.is_none());
    assert_eq!(v.controls.len(), 7);
    assert!(VarianceAcc::plan(&c, &o, Method::None).is_none());
}

#[test]
fn reduced_runs_cover_the_closed_form_and_reduce_the_variance() {
    let (k, horizon) = (3, 500.0);
    let c = trains(k, |_| exp(LAM));
    let truth = exact(k, horizon);
    for (m, at_least) in [(Method::Auto, 5.0), (Method::Control, 1.0)] {
        let a = reduced(&c, &options(horizon, 11), m, 4000, Some(2));
        let s = a.summary();
        let vr = s.variance_reduction.as_ref().unwrap();
        let f = vr.factor.unwrap();
        assert!(f > at_least, "{m:?}: factor {f}");
        let u = 1.0 - s.mean_availability;
        let half = (s.mean_availability_upper - s.mean_availability_lower) / 2.0;
        assert!((u - truth).abs() < half, "{m:?}: {u} vs {truth} ± {half}");
        // The interval is the reduced one: narrower than the plain run's by about √factor.
        assert!((vr.plain_std_error / s.mean_availability_std_error).powi(2) / f - 1.0 < 1e-9);
        assert_eq!(vr.plain_mean_availability, a.availability.mean());
    }
}

#[test]
fn the_same_seed_gives_the_same_numbers_on_any_thread_count_and_merge() {
    let c = trains(2, |_| exp(LAM));
    let o = options(300.0, 5);
    let one = reduced(&c, &o, Method::Auto, 500, Some(1));
    let two = reduced(&c, &o, Method::Auto, 500, Some(2));
    assert_eq!(one, two);
    assert_eq!(one, reduced(&c, &o, Method::Auto, 500, None));
    let ctl = RunControl::new();
    let plan = VarianceAcc::plan(&c, &o, Method::Auto);
    assert!(plan.is_some());
    let a = run_reduced(
        &c,
        &o,
        Method::Auto,
        0,
        Precision::Replications(123),
        Some(2),
        &ctl,
    )
    .unwrap();
    let b = run_reduced(
        &c,
        &o,
        Method::Auto,
        123,
        Precision::Replications(377),
        Some(1),
        &ctl,
    )
    .unwrap();
    assert_eq!(b.merge(&a).unwrap(), one);
    // A plain run's state does not merge with a reduced one's.
    let plain = run_with(&c, &o, 123, 377, Some(1), &ctl).unwrap();
    assert!(a.merge(&plain).is_err());
    // The plain figures are the plain run's, draw for draw: reduction only adds.
    let whole = run_with(&c, &o, 0, 500, Some(1), &ctl).unwrap();
    assert_eq!(one.availability, whole.availability);
    assert_eq!(one.point_up, whole.point_up);
    assert_eq!(one.block_downtime, whole.block_downtime);
    // `none` is the plain run itself.
    let none = reduced(&c, &o, Method::None, 500, Some(2));
    assert_eq!(none, whole);
    assert!(none.summary().variance_reduction.is_none());
}

#[test]
fn a_target_precision_is_reached_on_the_reduced_estimator_with_fewer_replications() {
    let c = trains(3, |_| exp(LAM));
    let o = options(500.0, 2);
    let p = Precision::Target {
        relative_half_width: 0.05,
        max_replications: 1_000_000,
    };
    let plain = run_to_precision(&c, &o, 0, p, Some(2)).unwrap();
    let red = run_reduced(&c, &o, Method::Auto, 0, p, Some(2), &RunControl::new()).unwrap();
    assert!(red.relative_half_width() <= 0.05);
    assert!(plain.relative_half_width() <= 0.05);
    assert!(
        red.replication_count * 4 < plain.replication_count,
        "{} vs {}",
        red.replication_count,
        plain.replication_count
    );
}

#[test]
fn blocks_of_unknown_mean_are_not_controls_and_a_useless_control_falls_back() {
    // Weibull lives replaced on the calendar (block policy: whatever the unit's age, so no
    // renewal at the replacements): no block's mean is known, nothing to reduce with.
    // (Weibull lives alone now have numeric renewal means: `renewal_tests`.)
    let w = DistSpec {
        distribution_id: "weibull".into(),
        params: [("alpha".to_string(), 80.0), ("beta".to_string(), 2.0)].into(),
        base_distribution_id: None,
        table: None,
        path: None,
    };
    let block = |_| {
        Some(crate::diagram::PreventiveSpec {
            policy: Some("block".into()),
            interval: 100.0,
            duration: Some(1.0),
            ..Default::default()
        })
    };
    let c = trains_planned(2, |_| w.clone(), block);
    let o = options(300.0, 3);
    let a = reduced(&c, &o, Method::Auto, 300, Some(1));
    let s = a.summary();
    let vr = s.variance_reduction.unwrap();
    assert_eq!(vr.method, "none");
    assert!(vr.fallback.is_some() && vr.controls.is_empty() && vr.conditioned_on.is_empty());
    assert_eq!(s.mean_availability, a.availability.mean());
    // One exponential block per train (the first): one train's is integrated out (alone:
    // its Weibull neighbour is not), the other's is the one control; no system control.
    let c = trains_planned(
        2,
        |i| if i == 0 { exp(LAM) } else { w.clone() },
        |i| if i == 0 { None } else { block(i) },
    );
    let v = VarianceAcc::plan(&c, &o, Method::Control).unwrap();
    assert!(v.condition.is_none());
    assert_eq!(v.controls.len(), 2);
    let v = VarianceAcc::plan(&c, &o, Method::Auto).unwrap();
    let k = v.condition.as_ref().unwrap();
    assert!(k.blocks == ["a0"] || k.blocks == ["b0"], "{:?}", k.blocks);
    assert_eq!(k.local.len(), 1);
    assert_eq!(v.controls.len(), 1);
    assert!(v.system.is_none());
    // Shared crews couple the blocks: no mean is known.
    let c = trains(2, |_| exp(LAM));
    let o1 = AvailabilityOptions {
        crews: 1,
        ..o.clone()
    };
    let v = VarianceAcc::plan(&c, &o1, Method::Auto).unwrap();
    assert!(v.controls.is_empty() && v.condition.is_none());
    // A control that explains nothing: the plain estimator stands, said on the record.
    let mut v = VarianceAcc::plan(&c, &o, Method::Control).unwrap();
    let mut plain = crate::stats::Moments::default();
    let mut rng = crate::rng::Stream::new(9, 0);
    for i in 0..400 {
        let (y, x) = (rng.uniform(), rng.uniform());
        plain.add(1.0 - y);
        v.book(i, y, None, |_| x);
    }
    let s = v.summary(&plain);
    assert_eq!(s.method, "none");
    assert!(s.fallback.unwrap().contains("do not help"));
}

#[test]
fn the_regression_matches_ordinary_least_squares_by_hand() {
    // y = 2 + 3 x1 - x2 + noise with known control means: the adjusted mean is the OLS
    // intercept at x = μ, its standard error the textbook one (normal equations solved
    // directly here, an independent path from the Cholesky in `estimate`).
    let c = trains(1, |_| exp(LAM));
    let mut v = VarianceAcc::plan(&c, &options(100.0, 1), Method::Control).unwrap();
    v.controls = vec![
        ControlVariate {
            name: "x1".into(),
            group: Some(0),
            mean: 0.5,
        },
        ControlVariate {
            name: "x2".into(),
            group: Some(1),
            mean: 0.25,
        },
    ];
    v.system = None;
    v.sum_x = vec![0; 2];
    v.sum_xz = vec![0; 2];
    v.sum_xx = vec![0; 3];
    let mut rng = crate::rng::Stream::new(4, 0);
    let mut rows = vec![];
    for i in 0..50 {
        let (x1, x2, e) = (rng.uniform(), rng.uniform() * 0.5, rng.uniform() - 0.5);
        let y = 0.02 + 0.03 * x1 - 0.01 * x2 + 0.01 * e;
        v.book(i, y, None, |g| if g == 0 { x1 } else { x2 });
        rows.push((x1, x2, y));
    }
    // Normal equations on centred data, by Cramer's rule.
    let n = rows.len() as f64;
    let m = |f: &dyn Fn(&(f64, f64, f64)) -> f64| rows.iter().map(f).sum::<f64>() / n;
    let (m1, m2, my) = (m(&|r| r.0), m(&|r| r.1), m(&|r| r.2));
    let s = |f: &dyn Fn(&(f64, f64, f64)) -> f64| rows.iter().map(f).sum::<f64>();
    let s11 = s(&|r| (r.0 - m1).powi(2));
    let s22 = s(&|r| (r.1 - m2).powi(2));
    let s12 = s(&|r| (r.0 - m1) * (r.1 - m2));
    let s1y = s(&|r| (r.0 - m1) * (r.2 - my));
    let s2y = s(&|r| (r.1 - m2) * (r.2 - my));
    let det = s11 * s22 - s12 * s12;
    let (b1, b2) = ((s1y * s22 - s2y * s12) / det, (s2y * s11 - s1y * s12) / det);
    let want = my - b1 * (m1 - 0.5) - b2 * (m2 - 0.25);
    let sse = s(&|r| (r.2 - my - b1 * (r.0 - m1) - b2 * (r.1 - m2)).powi(2));
    let (d1, d2) = (m1 - 0.5, m2 - 0.25);
    let quad = (d1 * d1 * s22 - 2.0 * d1 * d2 * s12 + d2 * d2 * s11) / det;
    let se = (sse / (n - 3.0) * (1.0 / n + quad)).sqrt();
    let mut plain = crate::stats::Moments::default();
    rows.iter().for_each(|r| plain.add(1.0 - r.2));
    let (e, _) = v.estimate(&plain).unwrap();
    assert!(
        (e.unavailability - want).abs() < 1e-12,
        "{} {want}",
        e.unavailability
    );
    assert!(
        (e.std_error / se - 1.0).abs() < 1e-8,
        "{} {se}",
        e.std_error
    );
    assert_eq!(e.degrees_of_freedom, 47.0);
    // t(0.975, 47) = 2.011741 (R: qt(0.975, 47)).
    assert!((e.t - 2.011_741).abs() < 1e-6);
}

#[test]
fn a_state_crosses_json_exactly_and_still_merges() {
    // The plan's means travel as bits: a state read back (a cluster chunk's) equals the
    // one written, so merges with it compare plans exactly.
    let c = trains(3, |_| exp(LAM));
    let o = options(500.0, 1);
    let a = reduced(&c, &o, Method::Auto, 200, Some(1));
    let back: AvailabilityAcc = serde_json::from_str(&serde_json::to_string(&a).unwrap()).unwrap();
    assert_eq!(back, a);
    let b = run_reduced(
        &c,
        &o,
        Method::Auto,
        200,
        Precision::Replications(100),
        Some(1),
        &RunControl::new(),
    )
    .unwrap();
    assert_eq!(
        back.merge(&b).unwrap(),
        reduced(&c, &o, Method::Auto, 300, Some(2))
    );
}

#[test]
fn a_train_with_one_unknown_block_is_conditioned_on_its_known_blocks() {
    // Each train's first block carries a downtime cost: its law is the same exponential
    // alternating renewal, but a block with costs is not a control (its mean is not taken as
    // known), so the closed form of the whole plant still holds while only the other blocks
    // of a train are integrated out, on `Sim`'s path (costs leave the core path).
    let (k, horizon) = (3, 500.0);
    let mut spec: serde_json::Value = serde_json::json!({"nodes": [], "edges": []});
    let mut nodes = vec![
        serde_json::json!({"id": "in", "type": "input"}),
        serde_json::json!({"id": "out", "type": "output"}),
    ];
    let mut edges = vec![];
    let exp = |r: f64| serde_json::json!({"distribution_id": "exponential", "params": {"failure_rate": r}});
    for t in ["a", "b"] {
        let mut prev = "in".to_string();
        for i in 0..k {
            let id = format!("{t}{i}");
            let mut n = serde_json::json!({"id": id, "type": "component", "model": exp(LAM), "repair": exp(MU)});
            if i == 0 {
                n["costs"] = serde_json::json!({"downtime": 1.0});
            }
            nodes.push(n);
            edges.push(serde_json::json!({"source": prev, "target": id}));
            prev = id;
        }
        edges.push(serde_json::json!({"source": prev, "target": "out"}));
    }
    spec["nodes"] = serde_json::Value::Array(nodes);
    spec["edges"] = serde_json::Value::Array(edges);
    let c = Compiled::new(&serde_json::from_value::<DiagramSpec>(spec).unwrap()).unwrap();
    let o = options(horizon, 17);
    let v = VarianceAcc::plan(&c, &o, Method::Auto).unwrap();
    let cond = v
        .condition
        .as_ref()
        .expect("a train's known blocks are integrated out");
    assert_eq!(cond.local.len(), 2);
    assert!(
        cond.blocks == ["a1", "a2"] || cond.blocks == ["b1", "b2"],
        "{:?}",
        cond.blocks
    );
    let truth = exact(k, horizon);
    let a = reduced(&c, &o, Method::Auto, 4000, Some(2));
    let s = a.summary();
    let vr = s.variance_reduction.unwrap();
    assert_eq!(vr.method, "conditional+control");
    assert!(vr.factor.unwrap() > 2.0, "{:?}", vr.factor);
    let u = 1.0 - s.mean_availability;
    let half = (s.mean_availability_upper - s.mean_availability_lower) / 2.0;
    assert!((u - truth).abs() < half, "{u} vs {truth} ± {half}");
    // Same numbers on one thread as on two.
    assert_eq!(a, reduced(&c, &o, Method::Auto, 4000, Some(1)));
}

#[test]
fn the_per_replication_structure_is_the_general_one() {
    // A 2-of-3 vote of a train, a block and a parallel pair (a 1-of-2 knode), evaluated at
    // random block probabilities both ways (the allocation-free path and the generic one).
    let mut nodes = vec![node("in", "input"), node("out", "output")];
    for id in ["a", "b", "c", "d", "e"] {
        nodes.push(NodeSpec {
            model: Some(exp(LAM)),
            repair: Some(exp(MU)),
            ..node(id, "component")
        });
    }
    for (id, k) in [("v", 2), ("j", 1)] {
        nodes.push(NodeSpec {
            n: Some(k),
            ..node(id, "knode")
        });
    }
    let c = Compiled::new(&DiagramSpec {
        nodes,
        edges: edges(&[
            ("in", "a"),
            ("a", "b"),
            ("b", "v"),
            ("in", "c"),
            ("c", "v"),
            ("in", "d"),
            ("in", "e"),
            ("d", "j"),
            ("e", "j"),
            ("j", "v"),
            ("v", "out"),
        ]),
        ..Default::default()
    });
    let c = c.unwrap();
    let tree = Tree::new(&c, c.output, None).expect("a tree");
    let n = c.threshold.len();
    let mut rng = crate::rng::Stream::new(3, 0);
    for _ in 0..100 {
        let p: Vec<f64> = (0..c.groups.len()).map(|_| rng.uniform()).collect();
        let fast = tree.works_now(|g| p[g as usize]);
        let slow = tree.works(|g| Some(p[g as usize]), n).unwrap();
        assert!((fast - slow).abs() < 1e-15, "{fast} {slow}");
        // By hand: (a b), c, (d or e) 2-of-3.
        let (x, y, z) = (p[0] * p[1], p[2], 1.0 - (1.0 - p[3]) * (1.0 - p[4]));
        let want = x * y + x * z + y * z - 2.0 * x * y * z;
        assert!((fast - want).abs() < 1e-15, "{fast} {want}");
    }
}
