use super::*;
use crate::diagram::{DiagramSpec, NodeSpec};
use crate::dist::Lifetime;
use crate::fixtures::{edges, exp, node};

fn pair() -> Compiled {
    let mut nodes = vec![node("in", "input"), node("out", "output")];
    for id in ["A", "B"] {
        nodes.push(NodeSpec {
            model: Some(exp(0.01)),
            repair: Some(exp(0.1)),
            ..node(id, "component")
        });
    }
    Compiled::new(&DiagramSpec {
        nodes,
        edges: edges(&[("in", "A"), ("A", "out"), ("in", "B"), ("B", "out")]),
        ..Default::default()
    })
    .unwrap()
}

#[test]
fn chunks_merge_to_the_whole_run_on_any_thread_count() {
    let c = pair();
    let o = AvailabilityOptions {
        horizon: 1000.0,
        grid: 11,
        crews: 1,
        seed: 3,
    };
    let whole = run(&c, &o, 0, 300, Some(1)).unwrap();
    let two = run(&c, &o, 0, 300, Some(2)).unwrap();
    assert_eq!(whole, two);
    let a = run(&c, &o, 0, 97, Some(2)).unwrap();
    let b = run(&c, &o, 97, 203, Some(1)).unwrap();
    assert_eq!(b.merge(&a).unwrap(), whole);
    assert!(a.merge(&run(&c, &o, 98, 5, None).unwrap()).is_err());
}

fn one_standby(n: NodeSpec) -> Compiled {
    Compiled::new(&DiagramSpec {
        nodes: vec![node("in", "input"), n, node("out", "output")],
        edges: edges(&[("in", "S"), ("S", "out")]),
        ..Default::default()
    })
    .unwrap()
}

#[test]
fn identical_standby_units_draw_as_the_spares_form() {
    let spares = NodeSpec {
        model: Some(exp(0.02)),
        repair: Some(exp(0.1)),
        spares: Some(2),
        cold: Some(true),
        ..node("S", "standby")
    };
    let unit = crate::diagram::UnitSpec {
        model: exp(0.02),
        repair: Some(exp(0.1)),
        dormancy: None,
        capacity: None,
    };
    let units = NodeSpec {
        units: Some(vec![unit.clone(), unit.clone(), unit]),
        cold: Some(true),
        ..node("S", "standby")
    };
    let o = AvailabilityOptions {
        horizon: 500.0,
        grid: 5,
        crews: 1,
        seed: 9,
    };
    let a = run(&one_standby(spares), &o, 0, 200, Some(1)).unwrap();
    let b = run(&one_standby(units), &o, 0, 200, Some(1)).unwrap();
    assert_eq!(a, b);
}

#[test]
fn non_identical_standby_units_keep_their_own_models() {
    let unit = |rate: f64, dormancy: Option<f64>| crate::diagram::UnitSpec {
        model: exp(rate),
        repair: Some(exp(1.0)),
        dormancy,
        capacity: None,
    };
    let n = NodeSpec {
        units: Some(vec![unit(0.01, None), unit(0.05, Some(0.5))]),
        cold: Some(true),
        ..node("S", "standby")
    };
    let c = one_standby(n.clone());
    assert_eq!(c.unit_dormancy, vec![0.0, 0.5]);
    let rates: Vec<f64> = c
        .unit_life
        .iter()
        .map(|&d| 1.0 / c.dists[d as usize].mean())
        .collect();
    assert!((rates[0] - 0.01).abs() < 1e-12 && (rates[1] - 0.05).abs() < 1e-12);
    let with_model = NodeSpec {
        model: Some(exp(0.01)),
        ..n
    };
    assert!(
        Compiled::new(&DiagramSpec {
            nodes: vec![node("in", "input"), with_model, node("out", "output")],
            edges: edges(&[("in", "S"), ("S", "out")]),
            ..Default::default()
        })
        .is_err()
    );
}

#[test]
fn value_stability() {
    const PINNED_EVENTS: u64 = 7177;
    const PINNED_AVAILABILITY: f64 = 0.992_050_317_949_201_6;
    // Pinned figures for a fixed seed: a change here changes every published result
    // and must be deliberate (new sampling, new event order).
    let c = pair();
    let o = AvailabilityOptions {
        horizon: 1000.0,
        grid: 0,
        crews: 0,
        seed: 1,
    };
    let s = run(&c, &o, 0, 200, Some(1)).unwrap().summary();
    assert_eq!((s.events, s.replications), (PINNED_EVENTS, 200));
    assert_eq!(
        s.mean_availability.to_bits(),
        PINNED_AVAILABILITY.to_bits(),
        "{}",
        s.mean_availability
    );
}

fn cold_pair(switch: Option<crate::diagram::SwitchSpec>, repair: bool) -> Compiled {
    one_standby(NodeSpec {
        model: Some(exp(0.001)),
        repair: repair.then(|| exp(0.05)),
        spares: Some(1),
        cold: Some(true),
        switch,
        ..node("S", "standby")
    })
}

fn switch(p_fail: f64, switchover: Option<f64>) -> Option<crate::diagram::SwitchSpec> {
    Some(crate::diagram::SwitchSpec {
        p_fail: Some(p_fail),
        life: None,
        switchover,
    })
}

#[test]
fn a_switch_failing_on_demand_gives_the_closed_form() {
    // Cold pair, rate λ, switch success p: R(t) = e^{-λt} (1 + pλt); each grid point within
    // its own binomial 99.9% interval.
    let (lam, p) = (0.001, 0.8);
    let c = cold_pair(switch(1.0 - p, None), false);
    let o = crate::mission::MissionOptions {
        mission_time: 3000.0,
        grid: 7,
        seed: 41,
    };
    let s = crate::mission::run(&c, &o, 0, 40_000, None)
        .unwrap()
        .summary();
    for (&t, &r) in s.t.iter().zip(&s.reliability) {
        let exact = (-lam * t).exp() * (1.0 + p * lam * t);
        let se = (exact * (1.0 - exact) / 40_000.0).sqrt();
        assert!(
            (r - exact).abs() <= 3.29 * se + 1e-4,
            "t {t}: {r} vs {exact}"
        );
    }
}

#[test]
fn a_perfect_instant_switch_draws_nothing() {
    let o = AvailabilityOptions {
        horizon: 5000.0,
        grid: 11,
        crews: 0,
        seed: 8,
    };
    let plain = run(&cold_pair(None, true), &o, 0, 200, None).unwrap();
    for sw in [switch(0.0, None), switch(0.0, Some(0.0))] {
        assert_eq!(run(&cold_pair(sw, true), &o, 0, 200, None).unwrap(), plain);
    }
    // and the switch changes the numbers once it can fail or takes time
    assert_ne!(
        run(&cold_pair(switch(0.3, None), true), &o, 0, 200, None).unwrap(),
        plain
    );
    assert_ne!(
        run(&cold_pair(switch(0.0, Some(5.0)), true), &o, 0, 200, None).unwrap(),
        plain
    );
}

#[test]
fn a_switch_probability_outside_zero_one_names_its_field() {
    for p in [-0.1, 1.5, f64::NAN] {
        let spec = DiagramSpec {
            nodes: vec![
                node("in", "input"),
                NodeSpec {
                    model: Some(exp(0.001)),
                    spares: Some(1),
                    switch: switch(p, None),
                    ..node("S", "standby")
                },
                node("out", "output"),
            ],
            edges: edges(&[("in", "S"), ("S", "out")]),
            ..Default::default()
        };
        let e = Compiled::new(&spec).unwrap_err();
        assert_eq!(
            e.path.last().map(|k| k.to_string()).as_deref(),
            Some("switch.p_fail"),
            "{e:?}"
        );
    }
}

/// Interval means of A(t) average, weighted by the intervals' lengths, to the mean
/// availability: per replication they split the same outages (fixed-point rounding apart).
fn time_average(s: &AvailabilitySummary) -> f64 {
    let h = s.t[s.t.len() - 1] - s.t[0];
    s.interval_availability
        .iter()
        .zip(s.t.windows(2))
        .map(|(a, w)| a * (w[1] - w[0]) / h)
        .sum()
}

#[test]
fn interval_means_average_to_the_mean_availability() {
    // the plain fast path (an exponential pair) and the event simulator (block PM, 4 h
    // every 100 h, on a grid whose points fall on the PM instants: the point curve reads
    // the left limit there and never sees a PM window; the interval means do)
    let plain = run(
        &pair(),
        &AvailabilityOptions {
            horizon: 1000.0,
            grid: 11,
            crews: 0,
            seed: 3,
        },
        0,
        400,
        Some(1),
    )
    .unwrap()
    .summary();
    assert_eq!(plain.interval_availability.len(), 10);
    assert!((time_average(&plain) - plain.mean_availability).abs() < 1e-12);
    let pm = NodeSpec {
        model: Some(exp(0.001)),
        repair: Some(exp(0.05)),
        preventive: Some(crate::diagram::PreventiveSpec {
            policy: Some("block".into()),
            interval: 100.0,
            duration: Some(4.0),
            ..Default::default()
        }),
        ..node("S", "component")
    };
    let o = AvailabilityOptions {
        horizon: 1000.0,
        grid: 11,
        crews: 0,
        seed: 5,
    };
    let s = run(&one_standby(pm), &o, 0, 400, Some(1))
        .unwrap()
        .summary();
    assert!((time_average(&s) - s.mean_availability).abs() < 1e-12);
    // each 100 h interval holds one 4 h PM window: at most 0.96 there, while the points
    // read just before each PM start are above it
    assert!(
        s.interval_availability[1..]
            .iter()
            .all(|&a| a <= 0.96 + 1e-12)
    );
    assert!(s.availability[1..10].iter().all(|&a| a > 0.96));
    for k in 0..10 {
        assert!(s.interval_lower[k] <= s.interval_availability[k]);
        assert!(s.interval_availability[k] <= s.interval_upper[k]);
    }
}

#[test]
fn intervals_no_outage_touches_book_what_adding_one_books() {
    // The booking's shortcut for an interval up throughout (the integers of
    // `Moments::add(1.0)`) against adding every interval's availability as a value: the same
    // sums, for outages inside, across, touching the ends of, and of zero length in intervals.
    let c = pair();
    let o = AvailabilityOptions {
        horizon: 100.0,
        grid: 11,
        crews: 0,
        seed: 1,
    };
    let grid = sample_times(o.horizon, o.grid, &[]);
    let mut acc = AvailabilityAcc::empty(&c, &o, &c.block_ids(), 0);
    let mut reference = acc.interval_up.clone();
    let replications: [&[(f64, f64)]; 5] = [
        &[],
        &[(15.0, 17.5)],
        &[(5.0, 35.0), (40.0, 40.0), (60.0, 70.0)],
        &[(0.0, 10.0), (90.0, 100.0)],
        &[(33.3, 33.3), (99.0, 100.0)],
    ];
    for outages in replications {
        acc.book_intervals(&grid, outages);
        for (k, m) in reference.iter_mut().enumerate() {
            let (a, b) = (grid[k], grid[k + 1]);
            let down: f64 = outages
                .iter()
                .filter(|&&(s, e)| s < b && e > a)
                .map(|&(s, e)| e.min(b) - s.max(a))
                .sum();
            m.add((1.0 - down / (b - a)).clamp(0.0, 1.0));
        }
    }
    assert_eq!(acc.interval_up, reference);
    assert_eq!(acc.interval_up[0].n, 5);
    // The first interval (0 to 10): up throughout 3 times, half up once, down once.
    assert_eq!(acc.interval_up[0].sum, 3 * fx(1.0) + fx(0.5));
}
